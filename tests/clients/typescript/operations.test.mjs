// The TypeScript client against a real `limbic run` (issue 43): every
// operation of docs/openapi.json called once through its method, and an
// error of each class (400, 404, 409, 413, 503) as LimbicError. With
// LIMBIC_TEST_TOKEN=1 the runtime has api.token set and the client sends it.
//
//   LIMBIC_BINARY=build/limbic [LIMBIC_TEST_TOKEN=1] node --test tests/clients/typescript/operations.test.mjs
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import {after, before, test} from 'node:test';

import {closedPort, importClient, startLimbic, tempDir} from './harness.mjs';

const {Client, LimbicError, OPERATIONS} = await importClient();
const TOKEN = process.env.LIMBIC_TEST_TOKEN ? 'ts-client-token' : undefined;

const dir = tempDir('limbic-ts-ops-');
let runtime, api;

before(async () => {
  const docs = path.join(dir, 'docs');
  fs.mkdirSync(docs);
  fs.writeFileSync(path.join(docs, 'notes.md'), '# Notes\n\nThe deploy runbook lives with ops.\n');
  fs.writeFileSync(path.join(dir, 'reflexes.json'), JSON.stringify({reflexes: []}));
  // A mind that takes one step and stays awake until it is put to sleep.
  fs.writeFileSync(path.join(dir, 'mind.py'),
                   'import json, sys, time\nsys.stdin.read()\n' +
                   'print(json.dumps({"text": "thinking", "tokens_in": 4, "tokens_out": 2}), flush=True)\n' +
                   'time.sleep(60)\n');
  runtime = await startLimbic(dir, {
    reflexes: path.join(dir, 'reflexes.json'),
    // One event stream at a time: a second one is the 503 below.
    api: {...(TOKEN ? {token: TOKEN} : {}), max_sse_streams: 1, max_sse_streams_per_client: 1},
    memory: {ingest_roots: [docs]},
    sensors: {hooks: {kind: 'webhook', source: '/app', type: 'alert', text: '/msg', intensity: 0.7, data: ''}},
    effectors: {out: {kind: 'file', path: path.join(dir, 'out.jsonl')}},
    mind: {enabled: true, kind: 'exec', command: ['/usr/bin/python3', path.join(dir, 'mind.py')],
           wake: {threshold: 1, focused_thread: false}, budget: {max_session: '60s'}},
  });
  api = runtime.api;
});
after(() => runtime?.stop());

/** A Client that notes the operationId of every call its methods make. */
function recordingClient(called, options = {}) {
  class Recording extends Client {
    call(spec, fields, opts) { called.add(spec.operationId); return super.call(spec, fields, opts); }
    stream(spec, fields, opts) { called.add(spec.operationId); return super.stream(spec, fields, opts); }
  }
  return new Recording({url: api, token: TOKEN, ...options});
}

/** Runs `fn` and returns the LimbicError it throws (fails when it throws none or another). */
async function refused(fn) {
  try {
    await fn();
  } catch (e) {
    assert.ok(e instanceof LimbicError, `not a LimbicError: ${e?.stack ?? e}`);
    return e;
  }
  assert.fail('no error');
}

test('every operation of the document, once, through its method', async () => {
  const called = new Set();
  const c = recordingClient(called);
  const served = await c.openapi();
  const docs = path.join(dir, 'docs');

  // The runtime.
  assert.equal((await c.health()).status, 'ok');
  assert.match(await c.metrics(), /limbic_applied_seq/);
  assert.equal((await refused(() => c.promote())).status, 409);  // a primary is not a standby

  // Percepts and threads.
  const p1 = (await c.addPercept({source: 'chat', type: 'message', text: 'deploy the runbook'})).id;
  const p2 = (await c.addPercept({source: 'chat', type: 'message', text: 'noise'})).id;
  const p3 = (await c.addPercept({source: 'chat', type: 'message', text: 'more noise'})).id;
  assert.equal((await c.listPercepts({limit: 10, status: 'new'})).percepts.length, 3);
  assert.equal((await c.getPercept({id: p1})).text, 'deploy the runbook');
  const t1 = (await c.createThread({goal: 'ship the release'})).id;
  await c.assignPercept({id: p1, thread_id: t1});
  await c.processPercept({id: p1, reason: 'read'});
  await c.dropPercept({id: p2});
  await c.removePercept({id: p3});
  assert.ok((await c.listThreads({status: 'all'})).threads.some((t) => t.id === t1));
  assert.equal((await c.getThread({id: t1})).goal, 'ship the release');
  await c.updateThread({id: t1, salience: 0.9});
  assert.equal((await c.attention()).thread?.id, t1);
  await c.getArousal();
  await c.setArousal({level: 0.4});
  assert.equal((await c.putArousal({level: 0.5})).events.length > 0, true);

  // Bulk: POST /v1/percepts/batch.
  const batch = [{source: 'bulk', type: 'message', text: 'one', id: 'bulk-1'},
                 {source: 'bulk', type: 'message', text: 'two', id: 'bulk-2'}];
  const first = await c.addPercepts({percepts: batch});
  assert.deepEqual([first.accepted, first.refused], [2, 0]);
  assert.deepEqual(first.results.map((r) => r.id), ['bulk-1', 'bulk-2']);
  const again = await c.addPercepts({percepts: batch});  // the same ids: each refused, none written
  assert.deepEqual([again.accepted, again.refused], [0, 2]);
  assert.equal(again.results[0].status, 409);
  assert.equal(again.results[0].error.code, 'already_exists');

  // The outbox.
  const a1 = (await c.enqueueAction({effector: 'out', type: 'note', payload: {x: 1}})).id;
  const a2 = (await c.enqueueAction({effector: 'out', type: 'note', require_approval: true})).id;
  const a3 = (await c.enqueueAction({effector: 'out', type: 'note', require_approval: true})).id;
  await c.approveAction({id: a2});
  await c.rejectAction({id: a3, reason: 'no'});
  await c.retryAction({id: a1}).catch((e) => assert.equal(e.status, 409));  // only a dead action
  assert.ok((await c.listActions()).actions.length >= 3);
  assert.equal((await c.getAction({id: a1})).effector, 'out');
  await c.pruneActions({older_than: '1d'});
  assert.match((await c.stateDigest()).digest, /^[0-9a-f]{64}$/);

  // Events, reflexes, sensors.
  assert.ok((await c.why({id: p1})).chain.length > 0);
  const page = await c.eventsSince({after: 0, limit: 5, type: ['percept_arrived', 'thread_created']});
  assert.ok(page.events.every((e) => ['percept_arrived', 'thread_created'].includes(e.type)));
  const stream = c.eventStream({after: 0});
  assert.equal((await stream.next()).value.seq, 1);
  await stream.return();
  await c.listReflexes();
  const rule = {when: {source: 'chat', pattern: '(?i)urgent'}, then: [{escalate: {arousal: 0.9}}]};
  assert.equal((await c.putReflex({id: 'r1', dry_run: true, ...rule})).valid, true);
  await c.putReflex({id: 'r1', ...rule});
  assert.equal((await c.getReflex({id: 'r1'})).id, 'r1');
  await c.disableReflex({id: 'r1'});
  await c.enableReflex({id: 'r1'});
  await c.deleteReflex({id: 'r1'});
  // The webhook's JSON has a `name` of its own: the body goes as is.
  await c.sensorWebhook({name: 'hooks'}, {body: {app: 'grafana', msg: 'disk full', name: 'disk'}});

  // Memory.
  const fact = await c.rememberFact({subject: 'alice', relation: 'works_at', object: 'acme'});
  await c.rememberEpisode({text: 'met alice at the conference'});
  assert.ok((await c.recall({query: 'alice'})).results.length > 0);
  await c.relate({entity_a: 'alice', relation: 'manages', entity_b: 'bob'});
  await c.related({entity: 'alice'});
  assert.ok((await c.memoryStats()).memories >= 2);
  assert.equal((await c.getMemory({id: fact.id})).subject, 'alice');
  await c.embed({});
  const exported = await c.exportMemory();
  await c.importMemory(exported);
  await c.ingest({path: docs});
  await c.context({query: 'alice', budget_tokens: 500});
  await c.forget({id: fact.id});
  await c.decay({force: true});

  // The world model.
  const today = new Date().toISOString().slice(0, 10);
  await c.worldExtract({date: today, text: '# Log\n\nAlice from Acme met Bob about Project Apollo.\n'});
  await c.worldMemory();
  const names = (await c.worldEntities()).entities?.map((e) => e.name) ?? [];
  const maybe404 = (e) => assert.equal(e.status, 404);
  await c.worldEntity({name: names[0] ?? 'Alice'}).catch(maybe404);
  await c.worldNeighbors({name: names[0] ?? 'Alice'}).catch(maybe404);
  await c.worldPath({from: names[0] ?? 'Alice', to: names[1] ?? 'Bob'}).catch(maybe404);
  await c.worldSurprise();
  await c.worldConsolidate();

  // The archive.
  await c.archiveBlink({text: 'remember the runbook'});
  await c.consolidate();
  await c.archiveRollup({});
  assert.equal(typeof (await c.archiveVerify()).ok, 'boolean');
  await c.archiveSearch({q: 'runbook'});
  await c.archiveStats();
  await c.archiveRecall({k: 3});
  await c.archiveDay({date: today}).catch(maybe404);  // today is still staged
  await c.archiveWalk({date: today}).catch(maybe404);

  // The mind.
  await c.getMind();
  const session = (await c.wakeMind({reason: 'the TypeScript client'})).session;
  assert.equal((await refused(() => c.wakeMind({}))).code, 'busy');
  for (let i = 0; i < 100 && !(await c.getMindSession({id: session})).steps?.length; i++)
    await new Promise((r) => setTimeout(r, 50));
  await c.listMindSessions({limit: 5});
  await c.sleepMind();
  await c.getMindSession({id: 'm-0'}).catch(maybe404);

  // Time travel, forks, the inspector.
  assert.equal((await c.stateAt({seq: 1, limit: 5})).seq, 1);
  await c.fork({at_seq: 1, into: 'ts-client-fork'});
  assert.match(await c.ui(), /<html/i);  // 308 to /ui/, followed
  await c.uiFile1({p1: 'app.js'});
  await c.uiFile2({p1: 'views', p2: 'now.js'});
  await c.uiFile3({p1: 'a', p2: 'b', p3: 'c'}).catch(maybe404);
  await c.uiFile4({p1: 'a', p2: 'b', p3: 'c', p4: 'd'}).catch(maybe404);
  await c.deleteThread({id: t1});

  // Every operation of the document the runtime serves, and of the client's table.
  const documented = Object.values(served.paths).flatMap((m) => Object.values(m).map((o) => o.operationId));
  assert.deepEqual(documented.filter((id) => !called.has(id)), [], 'operations not called');
  assert.deepEqual(Object.values(OPERATIONS).map((s) => s.operationId).filter((id) => !called.has(id)), []);
});

test('an error of each class is a LimbicError with code, message and status', async () => {
  const c = new Client({url: api, token: TOKEN});
  const bad = await refused(() => c.addPercept({source: 'chat', type: 'message', intensity: 1.7}));
  assert.deepEqual([bad.status, bad.code], [400, 'invalid_argument']);
  assert.match(bad.message, /intensity/);

  const missing = await refused(() => c.getThread({id: 'no-such-thread'}));
  assert.deepEqual([missing.status, missing.code], [404, 'not_found']);

  await c.addPercept({source: 'chat', type: 'message', id: 'taken'});
  const taken = await refused(() => c.addPercept({source: 'chat', type: 'message', id: 'taken'}));
  assert.deepEqual([taken.status, taken.code], [409, 'already_exists']);

  const big = await refused(() => c.addPercept({source: 'chat', type: 'message', text: 'x'.repeat(1100000)}));
  assert.deepEqual([big.status, big.code], [413, 'payload_too_large']);
  // More percepts than api.batch_limit (1000).
  const percepts = Array.from({length: 1001}, (_, i) => ({source: 'bulk', type: 'message', id: `over-${i}`}));
  const over = await refused(() => c.addPercepts({percepts}));
  assert.deepEqual([over.status, over.code], [413, 'batch_too_large']);

  // 503: the runtime's one event stream is held (from 127.0.0.2, so that it is
  // the server-wide limit, not the per-client one, that refuses ours).
  const held = await new Promise((resolve, reject) => {
    const u = new URL(api);
    const req = http.get({host: u.hostname, port: u.port, path: '/v1/events/stream', localAddress: '127.0.0.2',
                          headers: TOKEN ? {Authorization: `Bearer ${TOKEN}`} : {}}, (res) => {
      assert.equal(res.statusCode, 200);
      resolve(req);
    });
    req.on('error', reject);
  });
  const full = await refused(() => c.events({retries: 0}).next());
  assert.deepEqual([full.status, full.code, full.retryAfter], [503, 'unavailable', 1]);
  // The iterator waits it out by default: the stream is let go within a second.
  setTimeout(() => held.destroy(), 300);
  const waiting = c.events({after: 0});
  assert.equal((await waiting.next()).value.seq, 1);
  await waiting.return();

  // Failures to get an answer: status 0.
  const port = await closedPort();
  const down = await refused(() => new Client({url: `http://127.0.0.1:${port}`, retries: 0}).health());
  assert.deepEqual([down.status, down.code], [0, 'transport']);
  assert.match(down.message, /ECONNREFUSED/);
  const slow = await refused(() => c.eventsSince({after: 1e9, wait: 5}, {timeout: 100}));
  assert.deepEqual([slow.status, slow.code], [0, 'timeout']);
  const local = await refused(() => c.getPercept({}));
  assert.deepEqual([local.status, local.code], [0, 'invalid_argument']);
});

test('the token: required when set, sent by the client', {skip: !TOKEN && 'no api.token in this run'}, async () => {
  const anonymous = new Client({url: api, token: ''});
  const e = await refused(() => anonymous.listPercepts());
  assert.deepEqual([e.status, e.code], [401, 'unauthorized']);
  assert.equal((await anonymous.openapi()).openapi, '3.1.0');  // public
  assert.ok(Array.isArray((await new Client({url: api, token: TOKEN}).listPercepts()).percepts));
});
