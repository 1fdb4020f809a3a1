// Memory: recall with explain (bars per component: BM25, context, vector,
// strength, recency), without reinforcing; the archive's days with verify
// status.

import {api} from '../api.js';
import {h, put, errorBox, bar, fmtNum} from '../util.js';

function explainBars(x, maxBm25) {
  const e = x.explain;
  if (!e) return null;
  if (e.association) {
    const a = e.association;
    return h('p', {class: 'muted'}, `via ${a.from} (${fmtNum(a.from_score, 4)}): ${a.entity_a} —${a.relation}→ ${a.entity_b}, × ${a.factor}`);
  }
  const rows = [
    ['BM25', e.bm25 ? e.bm25.score / (maxBm25 || 1) : 0, e.bm25 ? `rank ${e.bm25.rank}, score ${fmtNum(e.bm25.score, 3)}` : 'no match'],
    ['context', e.lexical ? Math.min(1, e.lexical.neighbours + e.lexical.episode) : 0,
      e.lexical ? `neighbours ${fmtNum(e.lexical.neighbours, 3)}, episode ${fmtNum(e.lexical.episode, 3)}` : 'none'],
    ['vector', e.vector ? Math.max(0, e.vector.cosine) : 0, e.vector ? `rank ${e.vector.rank}, cosine ${fmtNum(e.vector.cosine, 3)}` : 'no match'],
    ['strength', e.strength ?? 0, fmtNum(e.strength ?? 0, 3)],
    ['recency', e.recency ?? 0, fmtNum(e.recency ?? 0, 3)],
  ];
  if (e.archive) rows.push(['archive', 1 / e.archive.rank, `rank ${e.archive.rank}, score ${fmtNum(e.archive.score, 3)}`]);
  return h('dl', {class: 'explain'}, rows.map(([k, v, t]) => [h('dt', {}, k), h('dd', {title: t}, bar(v, `${k} of ${x.id}`, `bar-${k.toLowerCase()}`), h('small', {class: 'muted'}, t))]));
}

export function mount(root) {
  const q = h('input', {id: 'recall-query', type: 'search', placeholder: 'what do you want to remember?', required: true, autocomplete: 'off'});
  const k = h('input', {id: 'recall-k', type: 'number', min: 1, max: 100, value: 10});
  const out = h('div', {id: 'recall-results', 'aria-live': 'polite'});
  const form = h('form', {class: 'inline-form', id: 'recall-form'},
    h('label', {for: 'recall-query'}, 'Recall'), q, h('label', {for: 'recall-k'}, 'k'), k,
    h('button', {type: 'submit', id: 'recall-go'}, 'Recall'));
  const archive = h('div', {id: 'archive-body'});
  const day = h('div', {id: 'archive-day', 'aria-live': 'polite'});
  root.append(h('div', {class: 'grid'},
    h('section', {class: 'card wide'}, h('h2', {}, 'Recall (explained, not reinforced)'), form, out),
    h('section', {class: 'card'}, h('h2', {}, 'Archive'), archive),
    h('section', {class: 'card'}, h('h2', {}, 'Archived day'), day)));
  let alive = true;

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    put(out, h('p', {class: 'muted', role: 'status'}, h('span', {class: 'spinner', 'aria-hidden': 'true'}), ' recalling…'));
    try {
      const r = await api('/v1/memory/recall', {method: 'POST', body: {query: q.value, k: Number(k.value) || 10, explain: true, reinforce: false}});
      if (!alive) return;
      const maxBm25 = Math.max(0, ...r.results.map((x) => (x.explain && x.explain.bm25 ? x.explain.bm25.score : 0)));
      put(out, 
        r.vector && !r.vector.used ? h('p', {class: 'notice'}, r.vector.note || 'vectors not used') : null,
        r.results.length
          ? h('ol', {class: 'recall'}, r.results.map((x) => h('li', {testid: `recall-${x.id}`},
              h('p', {}, h('strong', {}, fmtNum(x.score, 4)), ' ', h('span', {class: 'pill'}, x.kind), ' ',
                x.kind === 'archive' || x.kind === 'staged' ? h('span', {}, x.date) : h('code', {}, x.id), ' ', x.text),
              explainBars(x, maxBm25))))
          : h('p', {class: 'muted'}, 'Nothing recalled.'));
    } catch (x) {
      put(out, errorBox(x, {id: 'recall-error'}));
    }
  });

  async function openDay(date, problems) {
    put(day, h('p', {class: 'muted'}, `reading ${date}…`));
    try {
      const d = await api(`/v1/archive/days/${date}`);
      put(day, h('h3', {}, d.date),
        problems.length ? h('ul', {class: 'error'}, problems.map((p) => h('li', {}, p.what))) : h('p', {class: 'ok'}, 'verified'),
        h('p', {class: 'muted'}, 'hash ', h('code', {class: 'digest'}, d.hash)),
        h('p', {class: 'muted'}, 'prev ', h('code', {class: 'digest'}, d.prev_hash || '—')),
        h('pre', {class: 'doc'}, typeof d.content === 'string' ? d.content : JSON.stringify(d.content, null, 2)));
    } catch (e) {
      put(day, errorBox(e));
    }
  }

  (async () => {
    try {
      const [stats, verify] = await Promise.all([api('/v1/archive/stats'), api('/v1/archive/verify')]);
      if (!alive) return;
      let days = [];
      if (stats.last) {
        const w = await api(`/v1/archive/days/${stats.last}/walk`, {query: {direction: 'temporal', depth: Math.min(1000, Math.max(1, stats.documents))}});
        days = [...new Set(w.visited.map((v) => v.date))].sort().reverse();
      }
      if (!alive) return;
      const byDate = {};
      for (const p of verify.problems) (byDate[p.date] ||= []).push(p);
      put(archive, 
        h('dl', {class: 'kv'},
          h('dt', {}, 'verify'), h('dd', {id: 'archive-verify', class: verify.ok ? 'ok' : 'warn'}, verify.ok ? `ok (${verify.documents} documents)` : `${verify.problems.length} problem(s)`),
          h('dt', {}, 'documents'), h('dd', {}, fmtNum(stats.documents)),
          h('dt', {}, 'content'), h('dd', {}, `${fmtNum(stats.content_bytes)} bytes, ~${fmtNum(stats.est_tokens)} tokens`),
          h('dt', {}, 'staged'), h('dd', {}, `${fmtNum(stats.staged_days)} day(s), ${fmtNum(stats.staged_pending)} pending`),
          h('dt', {}, 'indexed'), h('dd', {}, fmtNum(stats.indexed))),
        verify.problems.filter((p) => !p.date).map((p) => h('p', {class: 'error'}, p.what)),
        stats.unreadable.length ? h('ul', {class: 'error'}, stats.unreadable.map((u) => h('li', {}, `${u.date}: ${u.what}`))) : null,
        days.length
          ? h('ul', {class: 'days', id: 'archive-days'}, days.map((d) => h('li', {},
              h('button', {type: 'button', testid: `archive-day-${d}`, class: byDate[d] ? 'warn' : '', on: {click: () => openDay(d, byDate[d] || [])}},
                d, ' ', byDate[d] ? '⚠' : '✓'))))
          : h('p', {class: 'muted'}, 'No archived days yet.'));
      root.dataset.ready = '1';
    } catch (e) {
      if (alive) put(archive, errorBox(e));
    }
  })();
  return {unmount() { alive = false; }};
}

