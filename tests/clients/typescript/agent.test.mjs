// clients/typescript/examples/agent.mjs against a real `limbic run` and a
// scripted OpenAI-compatible model on loopback: it waits for a percept, reads
// the context, asks the model, and acts through the client (a thread, an
// action with the model's text, the percept processed).
//
//   LIMBIC_BINARY=build/limbic node --test tests/clients/typescript/agent.test.mjs
import assert from 'node:assert/strict';
import {spawn} from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import {after, test} from 'node:test';

import {importClient, packageDir, startLimbic, tempDir} from './harness.mjs';

const {Client} = await importClient();
const AGENT = path.join(packageDir, 'examples/agent.mjs');
const REPLY = 'The report goes out on Friday.';
const TOKEN = 'agent-token';

/** POST /v1/chat/completions answers REPLY; the requests are kept. */
async function scriptedModel() {
  const requests = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d) => { text += d; });
    req.on('end', () => {
      const body = JSON.parse(text);
      requests.push({path: req.url, headers: req.headers, body});
      res.writeHead(200, {'Content-Type': 'application/json'});
      res.end(JSON.stringify({id: 'c-1', object: 'chat.completion', model: body.model,
                              choices: [{index: 0, finish_reason: 'stop', message: {role: 'assistant', content: REPLY}}],
                              usage: {prompt_tokens: 10, completion_tokens: 7}}));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {requests, url: `http://127.0.0.1:${server.address().port}/v1`, close: () => server.close()};
}

const dir = tempDir('limbic-ts-agent-');
const cleanups = [];
after(() => Promise.all(cleanups.map((f) => f())));

test('the example agent answers a percept through the model', async () => {
  const runtime = await startLimbic(dir, {api: {token: TOKEN},
                                          effectors: {reply: {kind: 'file', path: path.join(dir, 'replies.jsonl')}}});
  cleanups.push(() => runtime.stop());
  const model = await scriptedModel();
  cleanups.push(model.close);
  const agent = spawn(process.execPath, [AGENT, '--once'], {
    env: {...process.env, LIMBIC_URL: runtime.api, LIMBIC_API_TOKEN: TOKEN, OPENAI_BASE_URL: model.url,
          OPENAI_MODEL: 'scripted'},
    stdio: ['ignore', 'pipe', 'pipe']});
  cleanups.push(() => agent.exitCode === null && agent.kill());
  let stderr = '';
  agent.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => agent.on('exit', resolve));
  const lines = readline.createInterface({input: agent.stdout})[Symbol.asyncIterator]();

  // The agent is waiting (a long-poll) when the percept arrives.
  assert.match((await lines.next()).value ?? stderr, /^waiting for percepts/);
  const c = new Client({url: runtime.api, token: TOKEN});
  const pid = (await c.addPercept({source: 'chat', type: 'message', intensity: 0.9,
                                   text: 'When does the quarterly report go out?'})).id;
  assert.match((await lines.next()).value ?? stderr, /^acted on thread/);
  assert.equal(await exited, 0, stderr);

  assert.equal(model.requests.length, 1);
  const [{path: p, headers, body}] = model.requests;
  assert.equal(p, '/v1/chat/completions');
  assert.equal(headers['content-type'], 'application/json');
  assert.equal(body.model, 'scripted');
  assert.match(body.messages[1].content, /quarterly report/);  // the context
  const [thread] = (await c.listThreads()).threads;
  assert.match(thread.goal, /quarterly report/);
  const [action] = (await c.listActions()).actions;
  assert.deepEqual([action.effector, action.type, action.payload, action.thread_id],
                   ['reply', 'reply', {text: REPLY}, thread.id]);
  const enqueued = (await c.eventsSince({type: 'action_enqueued'})).events;
  assert.deepEqual(enqueued.map((e) => e.actor), ['agent:example']);  // the client's actor option
  const percept = await c.getPercept({id: pid});
  assert.deepEqual([percept.status, percept.thread_id], ['processed', thread.id]);
  // The action is delivered: wait on the log for it.
  const done = await c.eventsSince({after: 0, type: 'action_complete', wait: 20});
  assert.equal(done.events[0]?.action_id, action.id);
});
