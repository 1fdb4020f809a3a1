#!/usr/bin/env node
// A small agent on limbic: wait for attention, read the context, ask a model, act.
//
//   OPENAI_BASE_URL=http://127.0.0.1:8000/v1 node examples/agent.mjs [--once]
//
// limbic: LIMBIC_URL (default http://127.0.0.1:7077), LIMBIC_API_TOKEN. The model: any
// OpenAI-compatible chat completions server at OPENAI_BASE_URL, OPENAI_API_KEY if it
// wants one, OPENAI_MODEL (default "gpt-4o-mini"). The answer goes out as an action for
// the effector AGENT_EFFECTOR (default "reply"), which the runtime's config must have.
// --once: exit after the first batch handled. Run it from clients/typescript after
// `npm ci && npm run build`, or anywhere @limbic/client is installed.
import {Client} from '@limbic/client';

const env = process.env;

/** One chat completion: the assistant's text. */
async function askModel(system, user) {
  const answer = await fetch(`${env.OPENAI_BASE_URL.replace(/\/+$/, '')}/chat/completions`, {
    method: 'POST',
    headers: {'Content-Type': 'application/json', Authorization: `Bearer ${env.OPENAI_API_KEY ?? 'none'}`},
    body: JSON.stringify({model: env.OPENAI_MODEL ?? 'gpt-4o-mini',
                          messages: [{role: 'system', content: system}, {role: 'user', content: user}]}),
    signal: AbortSignal.timeout(120000),
  });
  if (!answer.ok) throw new Error(`the model answered ${answer.status}: ${await answer.text()}`);
  return (await answer.json()).choices[0].message.content;
}

/** Works on the focused thread's percepts, else on the new ones in a thread of their own. */
async function handle(limbic, attention) {
  let {thread, thread_percepts: percepts} = attention;
  if (!percepts.length) {
    percepts = attention.unassigned;
    const goal = `answer: ${(percepts[0].text || percepts[0].type).slice(0, 100)}`;
    thread = await limbic.createThread({goal, percepts: percepts.map((p) => p.id), reason: 'new percepts'});
  }
  const context = await limbic.context({query: percepts.map((p) => p.text ?? '').join(' '), budget_tokens: 2000});
  const reply = await askModel('You are an agent. Given the context as JSON, write the reply to send.',
                               JSON.stringify(context));
  await limbic.enqueueAction({effector: env.AGENT_EFFECTOR ?? 'reply', type: 'reply', payload: {text: reply},
                              thread_id: thread.id, idempotency_key: `reply-${percepts.map((p) => p.id).join('-')}`});
  for (const p of percepts) await limbic.processPercept({id: p.id, reason: 'answered'});
  return thread.id;
}

const limbic = new Client({actor: 'agent:example'});
let last = (await limbic.eventsSince({limit: 1})).last_seq;
for (;;) {
  const attention = await limbic.attention();
  if (attention.thread_percepts.length || attention.unassigned.length) {
    console.log('acted on thread', await handle(limbic, attention));
    if (process.argv.includes('--once')) break;
    continue;
  }
  // Nothing to do: sleep until a percept arrives (a long-poll of 30 s at most).
  console.log('waiting for percepts after seq', last);
  last = (await limbic.eventsSince({after: last, type: 'percept_arrived', wait: 30})).scanned_to;
}
