// Now: arousal (level, factors, effective over time), attention (focused
// thread, ranked threads, unassigned percepts), pool counts, outbox by
// status, live metrics, health and archive. Live from the event stream.

import {api, fetchMetrics, metricBy, metricSum} from '../api.js';
import {h, put, svg, bar, card, idLink, fmtNum, fmtAge, throttle, errorBox, emptyNote} from '../util.js';

// Effective arousal samples, kept across visits to the view (this tab only).
const samples = [];
const MAX_SAMPLES = 240;
let lastScrape = null;     // {t, applied, fsyncSum, fsyncCount}

function sparkline(points) {
  const W = 300, H = 60;
  const s = svg('svg', {viewBox: `0 0 ${W} ${H}`, class: 'spark', role: 'img', id: 'arousal-chart',
                        'aria-label': 'effective arousal over time'});
  s.append(svg('line', {x1: 0, y1: H - 1, x2: W, y2: H - 1, class: 'axis'}),
           svg('line', {x1: 0, y1: H / 2, x2: W, y2: H / 2, class: 'gridline'}));
  if (points.length < 2) {
    s.append(svg('text', {x: 4, y: H / 2 - 4, class: 'spark-note'}, 'collecting samples…'));
    return s;
  }
  const t0 = points[0].t, t1 = points[points.length - 1].t, span = Math.max(1, t1 - t0);
  const pts = points.map((p) => `${((p.t - t0) / span * W).toFixed(1)},${(H - 2 - p.v * (H - 4)).toFixed(1)}`);
  s.append(svg('polyline', {points: pts.join(' '), class: 'spark-line'}));
  s.append(svg('title', {}, `from ${new Date(t0).toLocaleTimeString()} to ${new Date(t1).toLocaleTimeString()}`));
  return s;
}

function kv(rows, attrs) {
  return h('dl', {class: 'kv', ...attrs}, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}


export function mount(root, {app}) {
  const el = {
    arousal: h('div', {id: 'now-arousal-body'}),
    attention: h('div', {id: 'now-attention-body'}),
    pools: h('div', {id: 'now-pools'}),
    outbox: h('div', {id: 'now-outbox'}),
    metrics: h('div', {id: 'now-metrics'}),
    health: h('div', {id: 'now-health'}),
  };
  root.append(h('div', {class: 'grid', id: 'now'},
    card('Arousal', {id: 'now-arousal'}, el.arousal),
    card('Attention', {id: 'now-attention', class: 'card wide'}, el.attention),
    card('Live metrics', {id: 'now-metrics-card'}, el.metrics),
    card('Pools', {id: 'now-pools-card'}, el.pools),
    card('Outbox', {id: 'now-outbox-card'}, el.outbox),
    card('Health and archive', {id: 'now-health-card'}, el.health)));

  let alive = true, busy = false, again = false;

  async function refreshAttention() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const [att, th] = await Promise.all([api('/v1/attention'), api('/v1/threads', {query: {status: 'active', limit: 20}})]);
      if (!alive) return;
      samples.push({t: Date.now(), v: att.arousal.effective});
      if (samples.length > MAX_SAMPLES) samples.splice(0, samples.length - MAX_SAMPLES);
      renderArousal(att.arousal);
      renderAttention(att, th.threads);
      root.dataset.ready = '1';
    } catch (e) {
      if (alive) put(el.attention, errorBox(e));
    } finally {
      busy = false;
      if (again && alive) { again = false; refreshAttention(); }
    }
  }

  function renderArousal(a) {
    put(el.arousal, 
      h('p', {class: 'big'}, h('span', {id: 'arousal-effective', title: 'effective arousal'}, fmtNum(a.effective, 2)),
        h('small', {}, ` effective · level ${fmtNum(a.level, 2)}`)),
      bar(a.effective, 'effective arousal'),
      h('ul', {class: 'chips', 'aria-label': 'arousal factors'},
        Object.entries(a.factors || {}).map(([k, v]) =>
          h('li', {class: v === true || (typeof v === 'number' && v !== 0) ? 'chip on' : 'chip'}, `${k}: ${JSON.stringify(v)}`))),
      sparkline(samples));
  }

  function renderAttention(att, threads) {
    const t = att.thread;
    const focused = t
      ? h('div', {class: 'focus', id: 'now-focused', testid: `now-focused-${t.id}`},
          h('p', {}, h('strong', {}, t.goal), ' ', idLink(t.id)),
          bar(t.effective_salience, 'effective salience'),
          h('p', {class: 'muted'}, `${t.unprocessed} unprocessed · idle ${fmtAge(t.idle_ms)}`),
          att.thread_percepts.length
            ? h('ul', {class: 'list'}, att.thread_percepts.map((p) => h('li', {}, idLink(p.id), ' ', p.text || p.type)))
            : null)
      : h('p', {class: 'muted', id: 'now-focused'}, 'No active thread.');
    const ranked = threads.length
      ? h('ol', {class: 'rank', id: 'now-threads'}, threads.map((x) =>
          h('li', {testid: `now-thread-${x.id}`},
            h('span', {class: 'rank-main'}, idLink(x.id), ' ', h('span', {class: 'goal', title: x.goal}, x.goal)),
            bar(x.effective_salience, `effective salience of ${x.id}`))))
      : emptyNote('No active threads.');
    const percepts = att.unassigned.length
      ? h('ol', {class: 'rank', id: 'now-percepts'}, att.unassigned.map((p) =>
          h('li', {testid: `now-percept-${p.id}`},
            h('span', {class: 'rank-main'}, idLink(p.id), ' ', h('span', {class: 'muted'}, `${p.source}/${p.type}`), ' ',
              h('span', {class: 'goal', title: p.text || ''}, p.text || ''), ' ', h('small', {class: 'muted'}, fmtAge(p.age_ms))),
            bar(p.effective_intensity, `effective intensity of ${p.id}`))))
      : h('p', {class: 'muted', id: 'now-percepts'}, 'No unassigned percepts above the threshold.');
    const pend = att.pending_approval.length
      ? h('p', {class: 'notice'}, h('a', {href: '#/outbox'}, `${att.pending_approval.length} action(s) wait for approval`))
      : null;
    put(el.attention, pend,
      h('h3', {}, 'Focused thread'), focused,
      h('div', {class: 'cols'},
        h('div', {}, h('h3', {}, 'Threads by effective salience'), ranked),
        h('div', {}, h('h3', {}, 'Unassigned percepts by effective intensity'), percepts)));
  }

  async function refreshMetrics() {
    try {
      const m = await fetchMetrics();
      if (!alive) return;
      const snap = {t: performance.now(), applied: metricSum(m, 'limbic_events_applied_total'),
                    fsyncSum: metricSum(m, 'limbic_fsync_seconds_sum'), fsyncCount: metricSum(m, 'limbic_fsync_seconds_count')};
      let rate = null, fsync = null;
      if (lastScrape && snap.t > lastScrape.t) {
        rate = Math.max(0, (snap.applied - lastScrape.applied) / ((snap.t - lastScrape.t) / 1000));
        const dc = snap.fsyncCount - lastScrape.fsyncCount;
        fsync = dc > 0 ? (snap.fsyncSum - lastScrape.fsyncSum) / dc : null;
      }
      lastScrape = snap;
      const overall = snap.fsyncCount ? snap.fsyncSum / snap.fsyncCount : null;
      put(el.metrics, kv([
        ['events/s', h('span', {id: 'metric-rate'}, rate === null ? 'measuring…' : fmtNum(rate, 1))],
        ['fsync latency', h('span', {id: 'metric-fsync', title: 'mean over the last interval (all-time mean when no fsync happened)'},
          fsync !== null ? `${fmtNum(fsync * 1000, 2)} ms` : overall !== null ? `${fmtNum(overall * 1000, 2)} ms (all-time)` : '—')],
        ['delivery failures', h('span', {id: 'metric-failures'}, fmtNum(metricSum(m, 'limbic_delivery_failures_total')))],
        ['deliveries completed', fmtNum(metricSum(m, 'limbic_deliveries_completed_total'))],
        ['reflex rules', fmtNum(metricSum(m, 'limbic_reflex_rules'))],
        ['applied seq', fmtNum(metricSum(m, 'limbic_applied_seq'))],
      ]));
      const pools = metricBy(m, 'limbic_pool_records', 'pool');
      put(el.pools, kv(Object.entries(pools).map(([k, v]) => [k, h('span', {testid: `pool-${k}`}, fmtNum(v))])));
      const ob = metricBy(m, 'limbic_outbox_actions', 'status');
      put(el.outbox, kv(Object.entries(ob).map(([k, v]) =>
        [k, h('a', {href: '#/outbox', testid: `outbox-count-${k}`, class: v && (k === 'dead' || k === 'failed') ? 'warn' : ''}, fmtNum(v))])));
    } catch (e) {
      if (alive) put(el.metrics, errorBox(e));
    }
  }

  let archive = null;
  async function refreshArchive() {
    try { archive = await api('/v1/archive/stats'); } catch (e) { archive = {error: e.message}; }
    if (alive) renderHealth(app.health);
  }

  function renderHealth(hz) {
    const rows = [];
    if (hz) {
      rows.push(['status', h('span', {id: 'health-now', class: hz.status === 'ok' ? 'ok' : 'warn'}, hz.status)]);
      if (hz.reason) rows.push(['reason', hz.reason]);
      rows.push(['version', hz.version], ['applied seq', fmtNum(hz.applied_seq)]);
      const ar = hz.archive || {};
      rows.push(['archive', h('span', {class: ar.status === 'ok' ? 'ok' : 'warn'}, ar.status || '—')]);
      for (const u of ar.unreadable || []) rows.push([u.date, u.what]);
      if (hz.sandbox) rows.push(['sandbox', `forked from ${hz.sandbox.forked_from} at seq ${hz.sandbox.at_seq}`]);
    } else {
      rows.push(['status', 'unknown']);
    }
    if (archive && !archive.error) {
      rows.push(['archived days', h('a', {href: '#/memory'}, fmtNum(archive.documents))],
                ['staged days', `${fmtNum(archive.staged_days)} (${fmtNum(archive.staged_pending)} pending)`],
                ['last day', archive.last || '—']);
    } else if (archive && archive.error) rows.push(['archive stats', archive.error]);
    put(el.health, kv(rows));
  }

  const onEventsThrottled = throttle(refreshAttention, 200);
  const offHealth = app.on('health', renderHealth);
  const timer = setInterval(() => { refreshAttention(); refreshMetrics(); }, 3000);
  const archiveTimer = setInterval(refreshArchive, 30000);
  refreshAttention();
  refreshMetrics();
  refreshArchive();
  renderHealth(app.health);

  return {
    onEvents() { onEventsThrottled(); },
    unmount() { alive = false; onEventsThrottled.cancel(); offHealth(); clearInterval(timer); clearInterval(archiveTimer); },
  };
}

