// Client.events across restarts of the runtime (issue 43): the iterator
// reconnects on its own and goes on after the last seq it yielded, so what
// it yields is the log itself, every seq once, in order -- across a clean
// stop (SIGTERM) and a crash (SIGKILL), with api.token set. And the SSE
// reader on its own: line endings split anywhere, comments, multi-line data.
//
//   LIMBIC_BINARY=build/limbic node --test tests/clients/typescript/events.test.mjs
import assert from 'node:assert/strict';
import {after, test} from 'node:test';

import {importClient, startLimbic, tempDir} from './harness.mjs';

const {Client, readSse} = await importClient();
const TOKEN = 'ts-events-token';

/** Resolves once `check()` is true; fails after `ms`. */
async function until(what, check, ms = 15000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Every event of the log, read page by page with GET /v1/events. */
async function wholeLog(c) {
  const events = [];
  for (let at = 0; ;) {
    const page = await c.eventsSince({after: at, limit: 1000});
    events.push(...page.events);
    if (page.scanned_to >= page.last_seq) return events;
    at = page.scanned_to;
  }
}

const dir = tempDir('limbic-ts-events-');
let runtime;
after(() => runtime?.stop());

test('the stream across a stop and a crash of the runtime: no gap, no repeat', async () => {
  const config = {api: {token: TOKEN}};
  runtime = await startLimbic(dir, config);
  const port = Number(new URL(runtime.api).port);
  const c = new Client({url: runtime.api, token: TOKEN, retryDelay: 50});
  const add = (text) => c.addPercept({source: 'chat', type: 'message', text, id: `m-${text}`});

  const stop = new AbortController();
  const all = [], percepts = [];
  const reading = (async () => {
    for await (const e of c.events({after: 0, signal: stop.signal})) all.push(e);
  })();
  const filtered = (async () => {
    for await (const e of c.events({types: ['percept_arrived'], signal: stop.signal})) percepts.push(e);
  })();
  const seen = (list, seq) => list.some((e) => e.seq >= seq);

  let last = 0;
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 5; i++) last = (await add(`${round}-${i}`)).seq;
    await until(`event ${last} before restart ${round}`, () => seen(all, last) && seen(percepts, last));
    if (round === 2) break;
    // Round 0: a clean stop; round 1: a crash. The same state dir and port.
    if (round === 0) await runtime.stop();
    else { runtime.proc.kill('SIGKILL'); await new Promise((r) => runtime.proc.once('exit', r)); }
    runtime = await startLimbic(dir, config, {port});
  }
  const written = (await wholeLog(c)).at(-1).seq;
  await until('the whole log', () => seen(all, written));
  stop.abort();
  await Promise.all([reading, filtered]);
  // The runtime writes on its own too (reflexes_evaluated): the log as far as the stream went.
  const log = (await wholeLog(c)).filter((e) => e.seq <= all.at(-1).seq);

  assert.deepEqual(all.map((e) => e.seq), log.map((e) => e.seq), 'the stream is the log: every seq once, in order');
  assert.deepEqual(all.map((e) => e.type), log.map((e) => e.type));
  const arrived = log.filter((e) => e.type === 'percept_arrived');
  assert.equal(arrived.length, 15);
  assert.deepEqual(percepts.map((e) => e.seq), arrived.map((e) => e.seq), 'a filtered stream: its events once, in order');
});

test('the SSE reader: any split of the bytes, CRLF and CR, comments, multi-line data', async () => {
  const text = ': keepalive\r\nid: 1\r\nevent: a\r\ndata: {"seq":1}\r\n\r\n' +
               'id: 2\rdata: line one\rdata: line two\r\r' +
               'id: 3\nevent: c\ndata:{"seq":3}\n\n' +
               'id: 4\ndata: cut off by the end\n';
  const want = [{id: '1', event: 'a', data: '{"seq":1}'},
                {id: '2', event: undefined, data: 'line one\nline two'},
                {id: '3', event: 'c', data: '{"seq":3}'}];
  const bytes = new TextEncoder().encode(text);
  for (let cut = 1; cut < bytes.length; cut++) {
    const body = new ReadableStream({start(ctl) {
      ctl.enqueue(bytes.slice(0, cut));
      ctl.enqueue(bytes.slice(cut));
      ctl.close();
    }});
    const got = [];
    for await (const m of readSse(body)) got.push(m);
    assert.deepEqual(got, want, `split at byte ${cut}`);
  }
});
