// Why: the causal chain of a percept, thread or action (GET /v1/why/{id})
// drawn as a small timeline: one lane per kind (percept, reflex, thread,
// action, delivery), one row per event in log order, each node a link to
// its event in the Events view, with seq, time, actor and reason beside it.

import {api} from '../api.js';
import {h, put, svg, fmtTime, errorBox, idLink} from '../util.js';

const LANES = ['percept', 'reflex', 'thread', 'action', 'delivery', 'other'];
const ROW_H = 64;     // px; equals .why-steps li's height in style.css
const LANE_W = 26;

export function laneOf(type) {
  if (type.startsWith('percept_')) return 'percept';
  if (type.startsWith('reflex')) return 'reflex';
  if (type.startsWith('thread_')) return 'thread';
  if (['action_sent', 'action_complete', 'action_failed', 'action_dead', 'action_retried'].includes(type)) return 'delivery';
  if (type.startsWith('action')) return 'action';
  return 'other';
}

function timeline(chain) {
  const W = LANES.length * LANE_W + 8, H = chain.length * ROW_H;
  const s = svg('svg', {class: 'why-svg', id: 'why-timeline', width: W, height: H + 24, viewBox: `0 0 ${W} ${H + 24}`,
                        role: 'img', 'aria-label': `causal chain of ${chain.length} events`});
  LANES.forEach((lane, k) => {
    const x = 4 + k * LANE_W + LANE_W / 2;
    s.append(svg('line', {x1: x, y1: 22, x2: x, y2: H + 24, class: `lane lane-${lane}`}),
             svg('text', {x, y: 12, class: 'lane-label', 'text-anchor': 'middle'}, lane.slice(0, 4)),
             svg('title', {}, lane));
  });
  const pts = chain.map((step, i) => [4 + LANES.indexOf(laneOf(step.type)) * LANE_W + LANE_W / 2, 24 + i * ROW_H + ROW_H / 2]);
  if (pts.length > 1) s.append(svg('polyline', {points: pts.map((p) => p.join(',')).join(' '), class: 'why-path'}));
  chain.forEach((step, i) => {
    const [x, y] = pts[i];
    const lane = laneOf(step.type);
    s.append(svg('a', {href: `#/events?seq=${step.seq}`, class: 'why-node', 'aria-label': `event ${step.seq} ${step.type}`},
      svg('circle', {cx: x, cy: y, r: 8, class: `node node-${lane}`}),
      svg('title', {}, `#${step.seq} ${step.type}`)));
  });
  return s;
}

function stepItem(step) {
  const e = step.event || {};
  return h('li', {testid: `why-step-${step.seq}`, data: {type: step.type, lane: laneOf(step.type)}},
    h('p', {class: 'step-head'},
      h('a', {href: `#/events?seq=${step.seq}`, class: 'seq', title: 'open this event'}, `#${step.seq}`), ' ',
      h('strong', {class: `t-${laneOf(step.type)}`}, step.type), ' ',
      h('time', {datetime: step.ts, title: step.ts}, fmtTime(step.ts)), ' ',
      step.actor ? h('span', {class: 'actor'}, step.actor) : null),
    h('p', {class: 'step-what', title: step.what}, step.what,
      step.reason || e.reason ? h('em', {class: 'reason'}, ` — ${step.reason || e.reason}`) : null));
}

export function mount(root, {route, app}) {
  const input = h('input', {id: 'why-id', value: route.arg, placeholder: 'p-5, t-7, a-9 …', autocomplete: 'off', required: true});
  const out = h('div', {id: 'why-result', 'aria-live': 'polite'});
  const form = h('form', {class: 'inline-form', id: 'why-form'},
    h('label', {for: 'why-id'}, 'Percept, thread or action id'), input, h('button', {type: 'submit', id: 'why-go'}, 'Show why'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const id = input.value.trim();
    if (id) app.navigate(`#/why/${encodeURIComponent(id)}`);
  });
  root.append(h('section', {class: 'card'}, h('h2', {}, 'Why'), form), out);
  if (!route.arg) {
    out.append(h('p', {class: 'muted'}, 'Enter an id, or follow an id link anywhere in the inspector.'));
    root.dataset.ready = '1';
    input.focus();
    return {};
  }
  let alive = true;
  out.append(h('p', {class: 'muted', role: 'status'}, h('span', {class: 'spinner', 'aria-hidden': 'true'}), ' reading the log…'));
  (async () => {
    try {
      const r = await api(`/v1/why/${encodeURIComponent(route.arg)}`);
      if (!alive) return;
      const ids = new Set();
      for (const st of r.chain) for (const k of ['percept_id', 'thread_id', 'action_id']) if (st.event && st.event[k]) ids.add(st.event[k]);
      ids.delete(r.id);
      put(out, h('section', {class: 'card', id: 'why-chain', data: {kind: r.kind}},
        h('h2', {}, `${r.kind} ${r.id}: ${r.chain.length} events`),
        r.truncated ? h('p', {class: 'notice'}, 'The chain is truncated.') : null,
        ids.size ? h('p', {class: 'muted'}, 'Related: ', [...ids].map((id) => [idLink(id), ' '])) : null,
        h('div', {class: 'why-grid'}, timeline(r.chain), h('ol', {class: 'why-steps'}, r.chain.map(stepItem)))));
      root.dataset.ready = '1';
    } catch (e) {
      if (alive) put(out, errorBox(e, {id: 'why-error'}));
    }
  })();
  return {unmount() { alive = false; }};
}

