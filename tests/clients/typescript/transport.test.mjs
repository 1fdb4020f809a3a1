// The client's request path against a scripted server on loopback (no
// runtime): which failures are tried again (only where repeating is safe),
// Retry-After, timeouts, the caller's signal, error bodies that are not
// limbic's, and what goes on the wire (path, query, body, headers).
//
//   node --test tests/clients/typescript/transport.test.mjs
import assert from 'node:assert/strict';
import http from 'node:http';
import {after, before, beforeEach, test} from 'node:test';

import {closedPort, importClient} from './harness.mjs';

const {Client, LimbicError} = await importClient();

// Each request is answered by the next of `script` (the last one repeats):
// {status, body?, headers?, type?, hold?} or 'hang' (never answered) or 'reset' (the
// connection is destroyed).
let script = [], seen = [];
const server = http.createServer((req, res) => {
  let text = '';
  req.on('data', (d) => { text += d; });
  req.on('end', () => {
    seen.push({method: req.method, url: req.url, headers: req.headers, body: text});
    const step = script[Math.min(seen.length - 1, script.length - 1)];
    if (step === 'hang') return;
    if (step === 'reset') return req.socket.destroy();
    const body = typeof step.body === 'string' ? step.body : JSON.stringify(step.body ?? {});
    res.writeHead(step.status, {'Content-Type': step.type ?? 'application/json', ...step.headers});
    if (step.hold) res.write(body);  // and then silence, the connection open
    else res.end(body);
  });
});
let url;
before(() => new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
  url = `http://127.0.0.1:${server.address().port}`;
  resolve();
})));
after(() => { server.closeAllConnections(); server.close(); });
beforeEach(() => { script = []; seen = []; });

const unavailable = {status: 503, body: {error: {code: 'unavailable', message: 'outcome unknown: sync failed'}}};
const ok = {status: 201, body: {id: 'p-1', seq: 1, events: []}};

async function refused(fn) {
  try { await fn(); } catch (e) { assert.ok(e instanceof LimbicError, String(e)); return e; }
  assert.fail('no error');
}

test('what goes on the wire: path, query, body, headers', async () => {
  script = [{status: 200, body: {percepts: []}}];
  const c = new Client({url: `${url}/`, token: 'tok', actor: 'me'});
  await c.listPercepts({status: 'new', limit: 5, thread_id: undefined});
  await c.eventsSince({type: ['a', 'b'], after: 3});
  await c.updateThread({id: 'a b/c', salience: 0.5}, {reason: 'why not', headers: {'X-Extra': '1'}});
  await c.processPercept({id: 'p-1'});
  await c.sensorWebhook({name: 'hooks'}, {body: {name: 'theirs'}});
  assert.deepEqual(seen.map((s) => [s.method, s.url, s.body]), [
    ['GET', '/v1/percepts?status=new&limit=5', ''],
    ['GET', '/v1/events?after=3&type=a%2Cb', ''],
    ['PATCH', '/v1/threads/a%20b%2Fc', '{"salience":0.5}'],
    ['POST', '/v1/percepts/p-1/process', ''],
    ['POST', '/v1/sensors/hooks', '{"name":"theirs"}'],
  ]);
  assert.equal(seen[0].headers.authorization, 'Bearer tok');
  assert.equal(seen[0].headers['x-limbic-actor'], 'me');
  assert.equal(seen[0].headers['content-type'], undefined);
  assert.equal(seen[2].headers['content-type'], 'application/json');
  assert.equal(seen[2].headers['x-limbic-reason'], 'why not');
  assert.equal(seen[2].headers['x-extra'], '1');
  const e = await refused(() => c.health({verbose: true}));
  assert.match(e.message, /unknown field verbose/);
  assert.equal(seen.length, 5, 'nothing sent');
});

test('a write without id or idempotency_key is not sent twice', async () => {
  script = [unavailable, ok];
  const c = new Client({url, retryDelay: 1});
  const e = await refused(() => c.addPercept({source: 's', type: 't'}));
  assert.deepEqual([e.status, e.code, seen.length], [503, 'unavailable', 1]);
  script = ['reset', ok]; seen = [];
  assert.equal((await refused(() => c.createThread({goal: 'g'}))).code, 'transport');
  assert.equal(seen.length, 1);
});

test('a write that names itself, a batch with ids, a GET: tried again', async () => {
  const c = new Client({url, retryDelay: 1});
  script = [unavailable, 'reset', ok];
  assert.equal((await c.addPercept({source: 's', type: 't', id: 'mine'})).id, 'p-1');
  assert.equal(seen.length, 3);
  seen = [];
  script = [{status: 502, body: 'bad gateway', type: 'text/plain'}, ok];
  await c.enqueueAction({effector: 'e', type: 't', idempotency_key: 'k'});
  assert.equal(seen.length, 2);
  seen = [];
  script = [unavailable, ok];
  await c.addPercepts({percepts: [{source: 's', type: 't', id: 'a'}, {source: 's', type: 't', id: 'b'}]});
  assert.equal(seen.length, 2);
  seen = []; script = [unavailable, ok];
  await refused(() => c.addPercepts({percepts: [{source: 's', type: 't', id: 'a'}, {source: 's', type: 't'}]}));
  assert.equal(seen.length, 1, 'one percept without an id: not again');
  seen = []; script = [unavailable];
  const e = await refused(() => c.attention());
  assert.equal(seen.length, 3, 'retries: 2');
  assert.equal(e.status, 503);
  seen = []; script = [{status: 404, body: {error: {code: 'not_found', message: 'no'}}}];
  await refused(() => c.getPercept({id: 'x'}));
  assert.equal(seen.length, 1, 'a 404 is an answer');
});

test('a refusal before reading (429, 503 with Retry-After) is tried again for any write, after Retry-After', async () => {
  const c = new Client({url, retryDelay: 1});
  script = [{status: 429, headers: {'Retry-After': '0'}, body: {error: {code: 'too_many_connections', message: 'x'}}}, ok];
  await c.addPercept({source: 's', type: 't'});
  assert.equal(seen.length, 2);
  seen = [];
  script = [{status: 503, headers: {'Retry-After': '1'}, body: {error: {code: 'unavailable', message: 'full'}}}, ok];
  const t0 = Date.now();
  await c.addPercept({source: 's', type: 't'});
  assert.equal(seen.length, 2);
  assert.ok(Date.now() - t0 >= 900, 'waited for Retry-After');
});

test('timeouts, the caller\'s signal, connection refused, answers that are not limbic\'s', async () => {
  const c = new Client({url, retryDelay: 1, timeout: 100});
  script = ['hang'];
  const slow = await refused(() => c.addPercept({source: 's', type: 't'}));
  assert.deepEqual([slow.code, slow.status, seen.length], ['timeout', 0, 1]);
  seen = [];
  await refused(() => c.attention());
  assert.equal(seen.length, 3, 'a GET that timed out: again');
  seen = [];
  const stop = new AbortController();
  setTimeout(() => stop.abort(), 50);
  const gone = await refused(() => c.attention({}, {signal: stop.signal, timeout: 5000}));
  assert.deepEqual([gone.code, seen.length], ['aborted', 1]);

  // A port nothing listens on: refused before anything was sent, so a write is tried again too.
  const port = await closedPort();
  let tries = 0;
  const counting = (...args) => { tries++; return fetch(...args); };
  const down = new Client({url: `http://127.0.0.1:${port}`, retryDelay: 1, retries: 1, fetch: counting});
  const e = await refused(() => down.addPercept({source: 's', type: 't'}));
  assert.match(e.message, /ECONNREFUSED/);
  assert.equal(tries, 2);

  script = [{status: 500, body: '<html>oops</html>', type: 'text/html'}];
  const odd = await refused(() => c.createThread({goal: 'g'}));
  assert.deepEqual([odd.status, odd.code, odd.message], [500, 'http_500', '<html>oops</html>']);
});

test('the event stream: resumes after the last seq, skips repeats, gives up only when told', async () => {
  const sse = (events) => ({status: 200, type: 'text/event-stream',
                            body: events.map((s) => `id: ${s}\nevent: e\ndata: {"seq":${s},"type":"e"}\n\n`).join('')});
  // The server "loses" nothing but repeats seq 2 after the reconnect: it is not yielded twice.
  script = [sse([1, 2]), sse([2, 3]), sse([4])];
  const c = new Client({url, retryDelay: 1});
  const got = [];
  for await (const e of c.events({after: 0, types: ['e']})) {
    got.push(e.seq);
    if (got.length === 4) break;
  }
  assert.deepEqual(got, [1, 2, 3, 4]);
  assert.deepEqual(seen.map((s) => s.url), ['/v1/events/stream?after=0&type=e', '/v1/events/stream?after=2&type=e',
                                            '/v1/events/stream?after=3&type=e']);
  assert.equal(seen[1].headers['last-event-id'], '2');
  assert.equal(seen[0].headers.accept, 'text/event-stream');

  // A stream gone silent (no keepalive either) is opened again after idleTimeout.
  seen = []; script = [{...sse([5]), hold: true}, sse([6])];
  const quiet = new Client({url, retryDelay: 1, idleTimeout: 200});
  const resumed = [];
  for await (const e of quiet.events({after: 4})) if (resumed.push(e.seq) === 2) break;
  assert.deepEqual(resumed, [5, 6]);
  assert.deepEqual(seen.map((s) => s.url), ['/v1/events/stream?after=4', '/v1/events/stream?after=5']);

  seen = []; script = [unavailable];
  const e = await refused(() => c.events({retries: 2}).next());
  assert.deepEqual([e.status, seen.length], [503, 3]);
  seen = []; script = [{status: 400, body: {error: {code: 'invalid_argument', message: 'query type: unknown'}}}];
  assert.equal((await refused(() => c.events().next())).code, 'invalid_argument');
  assert.equal(seen.length, 1, 'a 400 is not tried again');
});
