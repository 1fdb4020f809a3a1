#!/usr/bin/env node
// The API's contract, checked against the real binary (issue 39): one
// `limbic run` on port 0 with a fresh state dir, a call of every operation
// of its OpenAPI document (GET /v1/openapi.json), and each answer's body
// validated against the schema the document declares for its status --
// the operation's result, or the Error schema for a failure -- with ajv
// (JSON Schema 2020-12, as OpenAPI 3.1 has it). Requests are made from the
// document too: method and path come from the operationId.
//
//   node tests/browser/api_contract.test.mjs --limbic build/limbic
//
// Fails when an operation of the document is not called, when an answer's
// status is not the one expected, or when a body breaks its schema.

import fs from 'node:fs';
import nodeHttp from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';

import {runLimbic} from './run_limbic.mjs';

const argv = process.argv.slice(2);
const limbic = path.resolve(argv[argv.indexOf('--limbic') + 1] || 'build/limbic');
const TOKEN = 'contract-token';
const WAIT = 20000;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'limbic-contract-'));
let proc = null;
function cleanup() {
  if (proc) proc.kill('SIGKILL');
  fs.rmSync(dir, {recursive: true, force: true});
}
process.on('exit', cleanup);

function fail(message) {
  console.error(`FAIL: ${message}`);
  process.exit(1);
}

// ---- the runtime -------------------------------------------------------------

async function start() {
  const docs = path.join(dir, 'docs');
  fs.mkdirSync(docs);
  fs.writeFileSync(path.join(docs, 'notes.md'), '# Notes\n\nThe deploy runbook lives with ops.\n');
  fs.writeFileSync(path.join(dir, 'reflexes.json'), JSON.stringify({reflexes: []}));
  // A mind that takes one step and stays awake until it is put to sleep.
  fs.writeFileSync(path.join(dir, 'mind.py'),
                   'import json, sys, time\nsys.stdin.read()\n' +
                   'print(json.dumps({"text": "thinking", "tokens_in": 4, "tokens_out": 2}), flush=True)\n' +
                   'time.sleep(60)\n');
  const config = {
    state_dir: path.join(dir, 'state'),
    reflexes: path.join(dir, 'reflexes.json'),
    api: {token: TOKEN},
    memory: {ingest_roots: [docs]},
    sensors: {hooks: {kind: 'webhook', source: '/app', type: 'alert', text: '/msg', intensity: 0.7, data: ''}},
    effectors: {out: {kind: 'file', path: path.join(dir, 'out.jsonl')}},
    mind: {enabled: true, kind: 'exec', command: ['/usr/bin/python3', path.join(dir, 'mind.py')],
           wake: {threshold: 1, focused_thread: false}, budget: {max_session: '60s'}},
  };
  const started = await runLimbic({limbic, dir, config, waitMs: WAIT, onSpawn: (p) => { proc = p; }});
  return {docs, api: started.api};
}

async function http(api, method, target, {body, token = TOKEN, headers = {}} = {}) {
  const h = {...headers};
  if (token) h.Authorization = `Bearer ${token}`;
  if (body !== undefined) h['Content-Type'] = 'application/json';
  const res = await fetch(`${api}${target}`, {method, headers: h, redirect: 'manual',
                                               body: body === undefined ? undefined : JSON.stringify(body)});
  return res;
}

// ---- the contract ------------------------------------------------------------

const {docs, api} = await start().catch((e) => fail(e.message));

// The document needs no token (the Host rule still applies).
const served = await http(api, 'GET', '/v1/openapi.json', {token: ''});
if (served.status !== 200) fail(`GET /v1/openapi.json without a token: ${served.status}`);
const doc = await served.json();
const refused = await http(api, 'GET', '/v1/percepts', {token: ''});
if (refused.status !== 401) fail(`GET /v1/percepts without a token: ${refused.status}, want 401`);
// (fetch sends its own Host: node:http lets the test choose one.)
const rebound = await new Promise((resolve, reject) => {
  const u = new URL(api);
  nodeHttp.get({host: u.hostname, port: u.port, path: '/v1/openapi.json', headers: {Host: 'evil.example'}},
               (res) => { res.resume(); resolve({status: res.statusCode}); }).on('error', reject);
});
if (rebound.status !== 421) fail(`GET /v1/openapi.json with Host evil.example: ${rebound.status}, want 421`);

const ajv = new Ajv2020({strict: false, allErrors: true});
// The document's schemas refer to its components by $ref: inlined here.
function inline(schema) {
  if (Array.isArray(schema)) return schema.map(inline);
  if (!schema || typeof schema !== 'object') return schema;
  const ref = schema.$ref;
  if (typeof ref === 'string') {
    const name = ref.replace('#/components/schemas/', '');
    if (!(name in doc.components.schemas)) fail(`a $ref to no component: ${ref}`);
    return inline(doc.components.schemas[name]);
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, inline(v)]));
}
const errorSchema = inline(doc.components.schemas.Error);
const ops = new Map();  // operationId -> {method, path, op}
for (const [p, methods] of Object.entries(doc.paths))
  for (const [m, op] of Object.entries(methods)) ops.set(op.operationId, {method: m.toUpperCase(), path: p, op});

const called = new Set();
let checked = 0;

function schemaFor(op, status) {
  const r = op.responses[String(status)];
  if (!r) return {schema: errorSchema, what: 'Error'};
  const json = r.content && r.content['application/json'];
  return {schema: json ? inline(json.schema) : null, what: `${status}`};
}

// Calls operation `id` and checks the answer; returns its parsed body.
async function call(id, {params = {}, query = {}, body, expect = null, raw = false} = {}) {
  const entry = ops.get(id);
  if (!entry) fail(`the document has no operation ${id}`);
  called.add(id);
  let target = entry.path.replace(/\{(\w+)\}/g, (_, k) => encodeURIComponent(params[k] ?? ''));
  const qs = new URLSearchParams(query).toString();
  if (qs) target += `?${qs}`;
  const res = await http(api, entry.method, target, {body});
  // By default, any success status the document lists.
  const want = expect ?? Object.keys(entry.op.responses).filter((s) => s !== 'default').map(Number);
  const wants = Array.isArray(want) ? want : [want];
  if (raw) {
    if (!wants.includes(res.status)) fail(`${id} (${entry.method} ${target}): status ${res.status}, want ${wants}`);
    return res;
  }
  const text = await res.text();
  if (!wants.includes(res.status)) fail(`${id} (${entry.method} ${target}): status ${res.status}, want ${wants}: ${text.slice(0, 400)}`);
  const {schema, what} = schemaFor(entry.op, res.status);
  if (!schema) return text;
  let value;
  try { value = JSON.parse(text); } catch { fail(`${id}: the answer is not JSON: ${text.slice(0, 200)}`); }
  const validate = ajv.compile(schema);
  if (!validate(value))
    fail(`${id} (${entry.method} ${target}) ${res.status} breaks its ${what} schema: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 600)}`);
  checked++;
  return value;
}

// The runtime.
await call('health');
await call('metrics');
await call('openapi');
await call('promote', {expect: 409});  // a primary is not a standby

// Percepts and threads.
const p1 = (await call('add_percept', {body: {source: 'chat', type: 'message', text: 'deploy the runbook'}})).id;
const p2 = (await call('add_percept', {body: {source: 'chat', type: 'message', text: 'noise'}})).id;
const p3 = (await call('add_percept', {body: {source: 'chat', type: 'message', text: 'more noise'}})).id;
const batch = await call('add_percepts', {body: {percepts: [
  {source: 'chat', type: 'message', text: 'one of many', id: 'batch-1'},
  {source: 'chat'},  // refused alone: no type
  {source: 'chat', type: 'message', id: p1},  // refused alone: exists
]}});
if (batch.accepted !== 1 || batch.refused !== 2 || batch.results[0].id !== 'batch-1' ||
    batch.results[1].status !== 400 || batch.results[2].status !== 409)
  fail(`add_percepts: ${JSON.stringify(batch)}`);
await call('list_percepts', {query: {limit: 10}});
await call('get_percept', {params: {id: p1}});
const t1 = (await call('create_thread', {body: {goal: 'ship the release'}})).id;
await call('assign_percept', {params: {id: p1}, body: {thread_id: t1}});
await call('process_percept', {params: {id: p1}, body: {reason: 'read'}});
await call('drop_percept', {params: {id: p2}, body: {}});
await call('remove_percept', {params: {id: p3}, body: {}});
await call('list_threads', {query: {status: 'all'}});
await call('get_thread', {params: {id: t1}});
await call('update_thread', {params: {id: t1}, body: {salience: 0.9}});
await call('attention');
await call('get_arousal');
await call('set_arousal', {body: {level: 0.4}});
await call('put_arousal', {body: {level: 0.5}});

// The outbox.
const a1 = (await call('enqueue_action', {body: {effector: 'out', type: 'note', payload: {x: 1}}})).id;
const a2 = (await call('enqueue_action', {body: {effector: 'out', type: 'note', require_approval: true}})).id;
const a3 = (await call('enqueue_action', {body: {effector: 'out', type: 'note', require_approval: true}})).id;
await call('approve_action', {params: {id: a2}, body: {}});
await call('reject_action', {params: {id: a3}, body: {reason: 'no'}});
await call('retry_action', {params: {id: a1}, body: {}, expect: [200, 409]});  // only a dead action
await call('list_actions');
await call('get_action', {params: {id: a1}});
await call('prune_actions', {body: {older_than: '1d'}});
await call('state_digest');

// Events, reflexes, sensors.
await call('why', {params: {id: p1}});
await call('events_since', {query: {after: 0, limit: 5}});
const stream = await call('event_stream', {query: {after: 0}, raw: true});
if (!String(stream.headers.get('content-type')).startsWith('text/event-stream'))
  fail(`event_stream: content type ${stream.headers.get('content-type')}`);
await stream.body.cancel();
await call('list_reflexes');
const rule = {when: {source: 'chat', pattern: '(?i)urgent'}, then: [{escalate: {arousal: 0.9}}]};
await call('put_reflex', {params: {id: 'r1'}, query: {dry_run: 'true'}, body: rule});
await call('put_reflex', {params: {id: 'r1'}, body: rule});
await call('get_reflex', {params: {id: 'r1'}});
await call('disable_reflex', {params: {id: 'r1'}, body: {}});
await call('enable_reflex', {params: {id: 'r1'}, body: {}});
await call('delete_reflex', {params: {id: 'r1'}, body: {}});
await call('sensor_webhook', {params: {name: 'hooks'}, body: {app: 'grafana', msg: 'disk full'}});

// Memory.
const fact = await call('remember_fact', {body: {subject: 'alice', relation: 'works_at', object: 'acme'}});
await call('remember_episode', {body: {text: 'met alice at the conference'}});
await call('recall', {body: {query: 'alice'}});
await call('relate', {body: {entity_a: 'alice', relation: 'manages', entity_b: 'bob'}});
await call('related', {query: {entity: 'alice'}});
await call('memory_stats');
await call('get_memory', {params: {id: fact.id}});
await call('embed', {body: {}});
const exported = await call('export_memory');
await call('import_memory', {body: exported, expect: [200, 201]});
await call('ingest', {body: {path: docs}, expect: [200, 201]});
await call('context', {query: {query: 'alice', budget_tokens: 500}});
await call('forget', {body: {id: fact.id}});
await call('decay', {body: {force: true}});

// The world model.
const today = new Date().toISOString().slice(0, 10);
await call('world_extract', {body: {date: today, text: '# Log\n\nAlice from Acme met Bob about Project Apollo.\n'}});
await call('world_memory');
const entities = await call('world_entities');
const names = JSON.stringify(entities).match(/"name":"([^"]+)"/g)?.map((s) => s.slice(8, -1)) ?? [];
await call('world_entity', {query: {name: names[0] ?? 'Alice'}, expect: [200, 404]});
await call('world_neighbors', {query: {name: names[0] ?? 'Alice'}, expect: [200, 404]});
await call('world_path', {query: {from: names[0] ?? 'Alice', to: names[1] ?? 'Bob'}, expect: [200, 404]});
await call('world_surprise');
await call('world_consolidate', {body: {}});

// The archive.
await call('archive_blink', {body: {text: 'remember the runbook'}});
await call('consolidate', {body: {}});
await call('archive_rollup', {body: {}});
await call('archive_verify');
await call('archive_search', {query: {q: 'runbook'}});
await call('archive_stats');
await call('archive_recall', {query: {k: 3}});
await call('archive_day', {params: {date: today}, expect: [200, 404]});  // today is still staged
await call('archive_walk', {params: {date: today}, expect: [200, 404]});

// The mind.
await call('get_mind');
const session = (await call('wake_mind', {body: {reason: 'the contract'}})).session;
await call('wake_mind', {body: {}, expect: 409});  // one session at a time
for (let i = 0; i < 100; i++) {  // its step line
  const s = await (await http(api, 'GET', `/v1/mind/sessions/${session}`)).json();
  if (s.steps && s.steps.length) break;
  await new Promise((r) => setTimeout(r, 50));
}
await call('get_mind');
await call('list_mind_sessions', {query: {limit: 5}});
await call('get_mind_session', {params: {id: session}});
await call('sleep_mind');
await call('sleep_mind', {expect: 409});  // asleep
await call('get_mind_session', {params: {id: 'm-0'}, expect: 404});

// Time travel, forks, the inspector.
await call('state_at', {query: {seq: 1, limit: 5}});
await call('fork', {body: {at_seq: 1, into: 'contract-fork'}});
await call('ui', {raw: true, expect: 308});
await call('ui_file_1', {params: {p1: 'app.js'}, raw: true});
await call('ui_file_2', {params: {p1: 'views', p2: 'now.js'}, raw: true});
await call('ui_file_3', {params: {p1: 'a', p2: 'b', p3: 'c'}, expect: 404});
await call('ui_file_4', {params: {p1: 'a', p2: 'b', p3: 'c', p4: 'd'}, expect: 404});
await call('delete_thread', {params: {id: t1}, body: {}});

const missing = [...ops.keys()].filter((id) => !called.has(id));
if (missing.length) fail(`operations of the document not called: ${missing.join(', ')}`);
console.log(`ok: ${called.size} operations called, ${checked} answers valid against their schemas`);
process.exit(0);
