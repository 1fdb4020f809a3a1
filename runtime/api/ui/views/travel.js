// Time travel: the pools as they were right after seq N (GET
// /v1/state/at, rebuilt by replay; its digest equals `limbic state digest
// --at-seq N`), and "fork here" (POST /v1/fork) with the command to run it.

import {api} from '../api.js';
import {h, put, errorBox, timeEl, idLink, fmtNum, jsonPre, localToIso} from '../util.js';

const COLUMNS = {
  percepts: [['id', idLink], ['status'], ['source'], ['type'], ['intensity'], ['effective_intensity', (v) => fmtNum(v, 3)], ['ts', (v) => timeEl(v, true)], ['text']],
  threads: [['id', idLink], ['status'], ['salience'], ['effective_salience', (v) => fmtNum(v, 3)], ['goal']],
  actions: [['id', idLink], ['status'], ['effector'], ['type'], ['attempts'], ['updated_at', (v) => timeEl(v, true)], ['last_error']],
  reflexes: [['id'], ['enabled'], ['fired_count'], ['last_fired_at', (v) => (v ? timeEl(v, true) : '—')]],
  memories: [['id'], ['kind'], ['text'], ['strength'], ['created_at', (v) => timeEl(v, true)]],
};

const poolRank = (name) => { const i = Object.keys(COLUMNS).indexOf(name); return i < 0 ? 99 : i; };

function poolTable(name, pool) {
  const cols = COLUMNS[name] || [['id']];
  const items = pool.items || [];
  return h('section', {class: 'card', testid: `travel-pool-${name}`},
    h('h3', {}, `${name} `, h('span', {class: 'muted', testid: `travel-count-${name}`}, `${fmtNum(pool.count)} record(s)`),
      items.length < pool.count ? h('small', {class: 'muted'}, ` (first ${items.length} shown)`) : null),
    items.length
      ? h('div', {class: 'table-wrap'}, h('table', {},
          h('thead', {}, h('tr', {}, cols.map(([c]) => h('th', {scope: 'col'}, c)))),
          h('tbody', {}, items.map((it) => h('tr', {}, cols.map(([c, f]) => {
            const v = it[c];
            return h('td', {}, f ? f(v) : v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
          }))))))
      : h('p', {class: 'muted'}, 'empty'));
}

export function mount(root, {route, app}) {
  const initial = Number(route.params.get('seq')) || 0;
  const last = Math.max(1, app.lastSeq || 1, initial);
  const slider = h('input', {type: 'range', id: 'travel-slider', min: 1, max: last, value: initial || last, 'aria-label': 'seq'});
  const seqIn = h('input', {type: 'number', id: 'travel-seq', min: 1, max: last, value: initial || last});
  const form = h('form', {class: 'travel-form', id: 'travel-form'},
    h('label', {for: 'travel-slider'}, 'Seq'), slider,
    h('label', {class: 'sr-only', for: 'travel-seq'}, 'Seq number'), seqIn,
    h('button', {type: 'submit', id: 'travel-go'}, 'Show the pools'),
    h('span', {class: 'muted', id: 'travel-last'}, `of ${fmtNum(last)}`));
  const timeIn = h('input', {type: 'datetime-local', id: 'travel-time', step: 0.001});  // events' times are in ms
  const timeMsg = h('span', {class: 'muted', id: 'travel-time-msg', 'aria-live': 'polite'});
  const timeForm = h('form', {class: 'travel-form', id: 'travel-time-form'},
    h('label', {for: 'travel-time'}, 'or at a time'), timeIn, h('button', {type: 'submit', id: 'travel-time-go'}, 'Find the seq'), timeMsg);
  const out = h('div', {id: 'travel-result', 'aria-live': 'polite'});
  root.append(h('section', {class: 'card'}, h('h2', {}, 'Time travel'),
    h('p', {class: 'muted'}, 'The pools as they were right after a seq, rebuilt by replaying the log.'), form, timeForm), out);

  // A time becomes the last seq at or before it (as `limbic fork --at-time`): the one before
  // the first event after it (a millisecond later: times are in ms), else the last.
  timeForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const iso = localToIso(timeIn.value);
    if (!iso) return;
    const later = new Date(Date.parse(iso) + 1).toISOString();
    timeMsg.textContent = 'looking…';
    try {
      let after = 0, r;
      for (;;) {   // a filtered answer scans a bounded stretch: go on from scanned_to
        r = await api('/v1/events', {query: {since: later, limit: 1, after}});
        if (r.events.length || r.scanned_to === undefined || r.scanned_to >= r.last_seq || r.scanned_to <= after) break;
        after = r.scanned_to;
      }
      const ev = r.events[0];
      const n = ev ? ev.seq - 1 : r.last_seq;
      if (n < 1) { timeMsg.textContent = 'the log starts after that time'; return; }
      timeMsg.textContent = '';
      app.navigate(`#/travel?seq=${n}`);
    } catch (x) {
      timeMsg.textContent = x.message;
    }
  });

  slider.addEventListener('input', () => { seqIn.value = slider.value; });
  seqIn.addEventListener('input', () => { slider.value = seqIn.value; });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const n = Number(seqIn.value);
    if (n > 0) app.navigate(`#/travel?seq=${n}`);
  });
  const offSeq = app.on('seq', (s) => {
    if (s < initial) return;
    slider.max = s; seqIn.max = s;
    form.querySelector('#travel-last').textContent = `of ${fmtNum(s)}`;
    if (!initial) { slider.value = s; seqIn.value = s; }
  });

  let alive = true, ctrl = null;
  async function load(n) {
    ctrl = new AbortController();
    const t0 = performance.now();
    const spin = h('p', {class: 'muted', role: 'status', id: 'travel-loading'},
      h('span', {class: 'spinner', 'aria-hidden': 'true'}), ` replaying the log to seq ${fmtNum(n)}… `, h('span', {}, ''));
    const tick = setInterval(() => { spin.lastChild.textContent = `${((performance.now() - t0) / 1000).toFixed(1)} s`; }, 250);
    put(out, spin);
    try {
      const r = await api('/v1/state/at', {query: {seq: n, limit: 100, digest: true}, signal: ctrl.signal});
      if (!alive) return;
      const forkOut = h('div', {id: 'fork-result', 'aria-live': 'polite'});
      const forkBtn = h('button', {type: 'button', id: 'fork-button'}, `Fork here (seq ${fmtNum(r.seq)})`);
      forkBtn.addEventListener('click', () => fork(r.seq, forkBtn, forkOut));
      put(out, 
        h('section', {class: 'card', id: 'travel-summary'},
          h('h2', {}, `State at seq ${fmtNum(r.seq)}`),
          h('dl', {class: 'kv'},
            h('dt', {}, 'seq'), h('dd', {id: 'travel-at-seq'}, String(r.seq)),
            h('dt', {}, 'time'), h('dd', {}, timeEl(r.ts, true)),
            h('dt', {}, 'digest'), h('dd', {}, h('code', {id: 'travel-digest', class: 'digest'}, r.digest)),
            h('dt', {}, 'arousal'), h('dd', {}, r.arousal ? [`level ${r.arousal.level}`,
              r.arousal.effective !== undefined ? ` · effective ${fmtNum(r.arousal.effective, 2)}` : '',
              ` · ${JSON.stringify(r.arousal.factors || {})}`] : '—'),
            h('dt', {}, 'replay'), h('dd', {class: 'muted'}, r.seconds !== undefined
              ? `${fmtNum(r.events ?? r.seq)} events replayed from ${r.from_checkpoint ? `the checkpoint at seq ${fmtNum(r.from_checkpoint)}` : 'seq 1'} in ${fmtNum(r.seconds, 2)} s on the server, ${((performance.now() - t0) / 1000).toFixed(2)} s here`
              : `${((performance.now() - t0) / 1000).toFixed(2)} s`)),
          h('p', {class: 'muted'}, 'Equals ', h('code', {}, `limbic state digest --at-seq ${r.seq}`), '.'),
          forkBtn, forkOut),
        h('div', {class: 'pools'}, Object.entries(r.pools || {})
          .sort(([x], [y]) => poolRank(x) - poolRank(y)).map(([name, pool]) => poolTable(name, pool))));
      root.dataset.ready = '1';
    } catch (e) {
      if (alive && e.name !== 'AbortError') put(out, errorBox(e, {id: 'travel-error'}));
    } finally {
      clearInterval(tick);
    }
  }

  async function fork(seq, btn, box) {
    btn.disabled = true;
    put(box, h('p', {class: 'muted', role: 'status'}, h('span', {class: 'spinner', 'aria-hidden': 'true'}), ' forking…'));
    try {
      const r = await api('/v1/fork', {method: 'POST', body: {at_seq: seq}});
      const cmd = h('code', {id: 'fork-command'}, r.command);
      const copy = h('button', {type: 'button', id: 'fork-copy'}, 'Copy');
      copy.addEventListener('click', async () => {
        try { await navigator.clipboard.writeText(r.command); copy.textContent = 'Copied'; } catch {
          const range = document.createRange(); range.selectNodeContents(cmd);
          getSelection().removeAllRanges(); getSelection().addRange(range); copy.textContent = 'Selected: press Ctrl+C';
        }
      });
      put(box, h('div', {class: 'fork-done'},
        h('p', {}, 'A sandbox state dir was made at ', h('code', {id: 'fork-into'}, r.into), ` (seq ${r.at_seq}, digest `,
          h('code', {class: 'digest'}, r.digest), '). Its effectors only record what they would send. Run it with:'),
        h('p', {class: 'cmd'}, cmd, ' ', copy),
        h('details', {}, h('summary', {}, 'answer'), jsonPre(r))));
    } catch (e) {
      put(box, errorBox(e, {id: 'fork-error'}));
    } finally {
      btn.disabled = false;
    }
  }

  if (initial) load(initial); else root.dataset.ready = '1';
  return {unmount() { alive = false; offSeq(); if (ctrl) ctrl.abort(); }};
}
