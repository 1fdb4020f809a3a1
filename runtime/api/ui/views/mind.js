// Mind: the agent's LLM as the runtime wakes it (docs/mind.md). Its status
// (GET /v1/mind), the day's budget, the session running now, the sessions
// recorded (GET /v1/mind/sessions) and one of them step by step (GET
// /v1/mind/sessions/{id}): tokens, latency, tool calls and text. Wake and
// Sleep are events with actor ui. Live from mind_woken, mind_step and
// mind_slept, and polled for the budget's clock.

import {api} from '../api.js';
import {h, put, bar, card, idLink, timeEl, fmtNum, fmtAge, throttle, errorBox, emptyNote, changed} from '../util.js';

const LIST_LIMIT = 50;

function kv(rows, attrs) {
  return h('dl', {class: 'kv', ...attrs}, rows.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

const stepCount = (s) => (Array.isArray(s.steps) ? s.steps.length : s.steps ?? 0);
const tokensOf = (s) => s.tokens ?? (s.tokens_in ?? 0) + (s.tokens_out ?? 0);
const ms = (x) => (x === null || x === undefined ? '—' : x < 1000 ? `${fmtNum(x)} ms` : `${fmtNum(x / 1000, 1)} s`);
/** A configured length of time: "30 s", "2 min", "1.5 h". */
function dur(x) {
  if (x === null || x === undefined) return '—';
  if (x < 60000) return ms(x);
  const trim = (v) => String(Number(v.toFixed(1)));
  return x < 3600000 ? `${trim(x / 60000)} min` : `${trim(x / 3600000)} h`;
}

/** "used of limit" with a bar of the fraction used (no limit: no bar); ids for the tests. */
function usage(name, u, unit, digits) {
  if (!u) return '—';
  const n = (x) => fmtNum(Number(x ?? 0), digits);
  const used = h('span', {id: `mind-${name}-used`}, n(u.used));
  if (u.limit === null || u.limit === undefined || u.limit === 0)
    return h('div', {class: 'mind-usage', testid: `mind-${name}`}, h('small', {}, used, ` ${unit} used · no daily limit`));
  const f = u.used / u.limit;
  return h('div', {class: 'mind-usage', testid: `mind-${name}`},
    bar(f, `${name} used today`, f >= 1 ? 'bar-over' : ''),
    h('small', {}, used, ` of ${n(u.limit)} ${unit} used · `, h('span', {id: `mind-${name}-left`}, n(u.left)), ' left'));
}

/** Minutes to a tenth from used_ms when the answer has it (its used and left are whole minutes). */
function minutesOf(u) {
  if (!u || u.used_ms === undefined) return u;
  const used = u.used_ms / 60000;
  return {...u, used, left: u.limit ? Math.max(0, u.limit - used) : u.left};
}

function outcomeEl(s, attrs) {
  if (s.status === 'awake' && !s.outcome) return h('span', {class: 'pill mind-awake', ...attrs, data: {outcome: ''}}, 'awake');
  const bad = ['error', 'budget', 'max_session', 'interrupted'].includes(s.outcome);
  return h('span', {class: `pill${bad ? ' warn' : ''}`, ...attrs, data: {outcome: s.outcome || ''}}, s.outcome || '—');
}

function toolCall(c) {
  return h('li', {class: c.ok ? 'ok' : 'err', data: {ok: String(!!c.ok)}},
    h('code', {}, c.name), c.ok ? ' ✓' : ' ✗', c.status ? h('small', {class: 'muted'}, ` ${c.status}`) : null,
    c.ok ? null : ` ${c.error || 'failed'}`,
    (c.caused || []).length ? [' → ', c.caused.map((seq) => [h('a', {href: `#/events?seq=${seq}`, class: 'seq'}, `#${seq}`), ' '])] : null);
}

function stepItem(st) {
  const calls = st.tool_calls || [];
  return h('li', {class: 'mind-step', testid: `mind-step-${st.step}`},
    h('p', {class: 'step-head'},
      h('strong', {}, `step ${st.step}`), ' ',
      st.ts ? timeEl(st.ts) : null, ' ',
      st.model ? h('span', {class: 'actor'}, st.model) : null, ' ',
      h('span', {class: 'mind-tokens', testid: `mind-step-tokens-${st.step}`},
        `${fmtNum(st.tokens_in ?? 0)} in / ${fmtNum(st.tokens_out ?? 0)} out tokens`),
      st.latency_ms !== undefined ? h('span', {title: 'latency of the model call'}, ` · ${ms(st.latency_ms)}`) : null,
      st.finish_reason ? h('span', {class: 'muted'}, ` · ${st.finish_reason}`) : null),
    calls.length ? h('ul', {class: 'mind-tools', 'aria-label': `tool calls of step ${st.step}`}, calls.map(toolCall)) : null,
    st.text ? h('pre', {class: 'doc mind-text', testid: `mind-step-text-${st.step}`}, st.text)
      : h('p', {class: 'muted'}, st.text === undefined ? 'no text recorded' : 'no text'));
}

function sessionDetail(s) {
  const steps = Array.isArray(s.steps) ? s.steps : [];
  return [
    h('h2', {}, `Session ${s.id} `, outcomeEl(s, {id: 'mind-outcome'})),
    kv([
      ['reason', s.reason || '—'],
      ['trigger', s.trigger || '—'],
      s.actor ? ['woken by', h('span', {class: 'actor'}, s.actor)] : null,
      ['thread', s.thread_id ? idLink(s.thread_id) : '—'],
      (s.percept_ids || []).length ? ['percepts', s.percept_ids.map((id) => [idLink(id), ' '])] : null,
      ['woken', s.woken_at ? timeEl(s.woken_at, true) : '—'],
      s.slept_at ? ['slept', timeEl(s.slept_at, true)] : null,
      ['duration', s.duration_ms !== undefined && s.duration_ms !== null ? ms(s.duration_ms)
        : s.woken_at ? `${fmtAge(Date.now() - Date.parse(s.woken_at))} so far` : '—'],
      ['tokens', h('span', {id: 'mind-session-tokens'},
        `${fmtNum(tokensOf(s))} (${fmtNum(s.tokens_in ?? 0)} in, ${fmtNum(s.tokens_out ?? 0)} out)`)],
      s.error ? ['error', h('span', {class: 'err', id: 'mind-session-error'}, s.error)] : null,
      ['events', h('a', {href: `#/events?id=${encodeURIComponent(s.id)}`}, `the events naming ${s.id}`)],
    ]),
    h('h3', {}, `Steps (${steps.length})`),
    steps.length ? h('ol', {class: 'mind-steps', id: 'mind-steps'}, steps.map(stepItem))
      : emptyNote(s.status === 'awake' ? 'No step yet.' : 'No steps.'),
  ];
}

export function mount(root, {route}) {
  const reason = h('input', {id: 'mind-reason', placeholder: 'why wake it (kept in the event)', autocomplete: 'off'});
  const thread = h('input', {id: 'mind-thread', placeholder: 't-7', autocomplete: 'off'});
  const wake = h('button', {type: 'submit', id: 'mind-wake', class: 'primary'}, 'Wake');
  const sleep = h('button', {type: 'button', id: 'mind-sleep', class: 'danger'}, 'Sleep');
  const msg = h('p', {id: 'mind-message', role: 'status', 'aria-live': 'polite'});
  const form = h('form', {class: 'mind-form', id: 'mind-form'},
    h('label', {for: 'mind-reason'}, 'Reason'), reason,
    h('label', {for: 'mind-thread'}, 'Thread (optional)'), thread,
    h('p', {class: 'buttons'}, wake, ' ', sleep));
  const el = {
    status: h('div', {id: 'mind-status-body'}),
    budget: h('div', {id: 'mind-budget-body'}),
    current: h('div', {id: 'mind-current-body'}),
    list: h('div', {id: 'mind-sessions-body'}),
    detail: h('section', {class: 'card', id: 'mind-session', 'aria-live': 'polite'}),
  };
  el.detail.hidden = true;
  root.append(h('div', {class: 'grid', id: 'mind'},
    card('Mind', {id: 'mind-status-card'}, el.status, form, msg),
    card('Budget today', {id: 'mind-budget'}, el.budget),
    card('Current session', {id: 'mind-current'}, el.current),
    card('Sessions', {id: 'mind-sessions', class: 'card wide'}, el.list)), el.detail);

  let alive = true, mind = null, selected = route.arg || '';
  const sig = {status: {}, list: {}, detail: {}};

  function say(text, isError) {
    msg.className = isError ? 'error' : '';
    msg.textContent = text;
  }

  function renderStatus(m) {
    const st = m.enabled === false ? 'off' : m.status || 'off';
    wake.disabled = st !== 'asleep';
    sleep.disabled = st !== 'awake';
    form.hidden = st === 'off';
    if (!changed(sig.status, m)) return;
    const pill = h('span', {class: `pill mind-${st}`, id: 'mind-status', data: {status: st}}, st);
    if (st === 'off') {
      put(el.status, h('p', {class: 'big'}, pill),
        h('p', {id: 'mind-off'}, 'The mind is off: ', h('code', {}, 'mind.enabled'), ' is false in the config. ',
          'Turn it on in the ', h('code', {}, 'mind'), ' section (docs/config.md, docs/mind.md: the model, its tools and its budget) ',
          'and restart the runtime.'));
      put(el.budget, emptyNote('No budget while the mind is off.'));
      put(el.current, emptyNote('Asleep for good: the mind is off.'));
      return;
    }
    const last = m.last_session;
    put(el.status, h('p', {class: 'big'}, pill, h('small', {}, ` ${m.name || ''}`)),
      kv([['actor', h('span', {class: 'actor'}, `mind:${m.name}`)], ['kind', m.kind || '—'], ['model', m.model || '—'],
          Array.isArray(m.command) ? ['command', h('code', {}, m.command.join(' '))] : null,
          Array.isArray(m.tools) ? ['tools', m.tools.length
            ? h('ul', {class: 'chips', 'aria-label': 'tools offered'}, m.tools.map((x) => h('li', {class: 'chip'}, x))) : 'none'] : null,
          m.wakes !== undefined ? ['wakes', fmtNum(m.wakes)] : null,
          m.sessions_today !== undefined ? ['sessions today', fmtNum(m.sessions_today)]
            : m.sessions !== undefined ? ['sessions', fmtNum(m.sessions)] : null,
          last ? ['last session', [h('button', {type: 'button', class: 'link id', on: {click: () => select(last.id)}}, last.id),
                                   ' ', last.outcome || '', last.at ? [' · ', timeEl(last.at)] : '']] : null]));
    const b = m.budget || {};
    const r = m.last_refusal;
    put(el.budget,
      kv([
        ['day', [b.day || '—', b.resets_at ? [' · resets ', timeEl(b.resets_at, true)] : '']],
        ['tokens', usage('tokens', b.tokens, 'tokens', 0)],
        ['minutes', usage('minutes', minutesOf(b.minutes), 'min', 1)],
        ['pressure', h('span', {id: 'mind-pressure', class: b.pressure ? 'chip on' : 'chip', data: {pressure: String(!!b.pressure)}},
          typeof b.pressure === 'number' ? fmtNum(b.pressure, 2) : b.pressure ? 'yes: waking is saved for what matters' : 'no')],
        ['session at most', `${dur(b.max_session_ms)}, ${fmtNum(b.max_steps)} steps`],
        ['min interval', dur(b.min_interval_ms)],
        ['next wake', h('span', {id: 'mind-next-wake'}, b.next_wake_at ? timeEl(b.next_wake_at, true) : 'any time')],
        ['last refusal', r ? h('span', {id: 'mind-refusal', class: 'warn'}, timeEl(r.at), ` ${r.trigger}: ${r.reason}`)
          : h('span', {id: 'mind-refusal', class: 'muted'}, 'none')],
      ]));
    const s = m.session;
    put(el.current, s
      ? [h('p', {}, h('button', {type: 'button', class: 'link id', testid: `mind-current-${s.id}`, on: {click: () => select(s.id)}}, s.id),
           ' ', outcomeEl(s), ' ', s.reason ? h('span', {class: 'reason'}, s.reason) : null),
         kv([['trigger', s.trigger || '—'], ['woken', timeEl(s.woken_at)], ['steps', fmtNum(stepCount(s))],
             ['tokens', fmtNum(tokensOf(s))], s.thread_id ? ['thread', idLink(s.thread_id)] : null])]
      : emptyNote('Asleep: no session runs.'));
  }

  function renderList(sessions) {
    if (!changed(sig.list, sessions)) return markSelected();
    put(el.list, sessions.length
      ? h('div', {class: 'table-wrap'}, h('table', {id: 'mind-session-table'},
          h('thead', {}, h('tr', {}, ['session', 'woken', 'trigger', 'reason', 'outcome', 'steps', 'tokens', 'duration']
            .map((c) => h('th', {scope: 'col'}, c)))),
          h('tbody', {}, sessions.map((s) => h('tr', {testid: `mind-session-${s.id}`, data: {status: s.status || '', outcome: s.outcome || ''}},
            h('th', {scope: 'row'}, h('button', {type: 'button', class: 'link id', testid: `mind-open-${s.id}`,
                                                'aria-label': `show session ${s.id}`, on: {click: () => select(s.id)}}, s.id)),
            h('td', {}, s.woken_at ? timeEl(s.woken_at) : '—'),
            h('td', {}, s.trigger || ''),
            h('td', {class: 'clip', title: s.reason || ''}, s.reason || ''),
            h('td', {}, outcomeEl(s)),
            h('td', {class: 'num'}, fmtNum(stepCount(s))),
            h('td', {class: 'num'}, fmtNum(tokensOf(s))),
            h('td', {class: 'num'}, s.duration_ms !== undefined && s.duration_ms !== null ? ms(s.duration_ms) : '…'))))))
      : emptyNote(mind && mind.status === 'off' ? 'No sessions recorded.' : 'No sessions yet: wake it, or wait for something that matters.'));
    markSelected();
  }

  function markSelected() {
    for (const tr of el.list.querySelectorAll('tr[data-testid^="mind-session-"]')) {
      const on = tr.dataset.testid === `mind-session-${selected}`;
      tr.classList.toggle('selected', on);
      const b = tr.querySelector('button');
      if (on) b.setAttribute('aria-current', 'true'); else b.removeAttribute('aria-current');
    }
  }

  async function refreshDetail() {
    if (!selected) return;
    const id = selected;
    try {
      const s = await api(`/v1/mind/sessions/${encodeURIComponent(id)}`);
      if (!alive || id !== selected) return;
      el.detail.hidden = false;
      if (changed(sig.detail, s)) put(el.detail, sessionDetail(s));
      el.detail.dataset.session = s.id;
    } catch (e) {
      if (alive && id === selected) { el.detail.hidden = false; sig.detail = {}; put(el.detail, errorBox(e, {id: 'mind-session-error'})); }
    }
  }

  function select(id) {
    selected = id;
    sig.detail = {};
    // The address names the session (a link shows it) without remounting the view.
    history.replaceState(null, '', `#/mind/${encodeURIComponent(id)}`);
    markSelected();
    put(el.detail, h('p', {class: 'muted', role: 'status'}, h('span', {class: 'spinner', 'aria-hidden': 'true'}), ` reading ${id}…`));
    el.detail.hidden = false;
    refreshDetail().then(() => { if (alive && !el.detail.hidden) el.detail.scrollIntoView({block: 'nearest'}); });
  }

  let busy = false, again = false;
  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const m = await api('/v1/mind');
      if (!alive) return;
      mind = m;
      renderStatus(m);
      // Off and never on: there is nothing to list (and no need to ask).
      if (m.enabled !== false || m.sessions || m.sessions_today || m.last_session) {
        const r = await api('/v1/mind/sessions', {query: {limit: LIST_LIMIT}});
        if (!alive) return;
        renderList(r.sessions || []);
      } else renderList([]);
      await refreshDetail();
      root.dataset.ready = '1';
    } catch (e) {
      if (alive) { sig.status = {}; put(el.status, errorBox(e)); }
    } finally {
      busy = false;
      if (again && alive) { again = false; refresh(); }
    }
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    wake.disabled = true;
    const body = {};
    if (reason.value.trim()) body.reason = reason.value.trim();
    if (thread.value.trim()) body.thread_id = thread.value.trim();
    say('waking…');
    try {
      const r = await api('/v1/mind/wake', {method: 'POST', body});
      say(`Woke: session ${r.session} (seq ${r.seq}).`);
      select(r.session);
    } catch (x) {
      say(`Not woken: ${x.code && x.code !== `http_${x.status}` ? `${x.code}: ` : ''}${x.message}`, true);
    }
    refresh();
  });

  sleep.addEventListener('click', async () => {
    sleep.disabled = true;
    say('putting it to sleep…');
    try {
      const r = await api('/v1/mind/sleep', {method: 'POST', body: {}});
      say(`${r.session}: ${r.outcome || 'slept'}.`);
    } catch (x) {
      say(`Not put to sleep: ${x.message}`, true);
    }
    refresh();
  });

  const soon = throttle(refresh, 250);
  // The budget's minutes and the next wake move with the clock, not with events.
  const timer = setInterval(refresh, 5000);
  refresh();
  return {
    onEvents(batch) { if (batch.some((e) => e.type.startsWith('mind_'))) soon(); },
    unmount() { alive = false; soon.cancel(); clearInterval(timer); },
  };
}
