// Events: the log as a virtualised list (a fixed pool of row elements over
// a spacer; pages of events fetched as they come into view), a live tail,
// filters (type, id, actor, time), each event expandable as JSON.
//
// Unfiltered, row i is seq i+1 (seqs are contiguous), so any seq can be
// reached at once. A spacer taller than browsers allow (Firefox stops near
// 17.9 million px) is capped at MAX_PX and scroll positions are scaled.
// Filtered, the matches are paged forward with ?after= as the list nears
// its end (the API pages forward only).

import {api} from '../api.js';
import {h, put, clear, fmtTime, eventSummary, jsonPre, errorBox, localToIso, isoToLocalInput, idLink} from '../util.js';

const ROW = 26;            // px; equals .row's height in style.css
const PAGE = 200;
const MAX_PX = 8e6;
const OVERSCAN = 8;
const MAX_PAGES = 300;     // cache bound: 60,000 events

export const EVENT_TYPES = [
  'percept_arrived', 'percept_assigned', 'percept_processed', 'percept_dropped', 'percept_removed', 'dedup_pruned',
  'thread_created', 'thread_updated', 'thread_paused', 'thread_completed', 'thread_deleted',
  'arousal_set', 'arousal_factor_set',
  'action_enqueued', 'action_approved', 'action_rejected', 'action_sent', 'action_complete', 'action_failed',
  'action_dead', 'action_retried', 'actions_pruned',
  'reflex_put', 'reflex_deleted', 'reflex_enabled', 'reflex_fired', 'reflexes_evaluated',
  'segments_accepted', 'primary_promoted', 'entry_staged',
  'memory_stored', 'memory_superseded', 'memory_touched', 'memory_forgotten', 'memory_embedded',
  'association_added', 'document_ingested',
  'mind_woken', 'mind_step', 'mind_slept',
];

/** Unfiltered: the whole log, row i = seq i+1, pages fetched on demand. */
class SeqSource {
  constructor(view) { this.view = view; this.pages = new Map(); this.inflight = new Map(); this.count = 0; }
  get(i) {
    const p = this.pages.get(Math.floor(i / PAGE));
    return p ? p[i % PAGE] : undefined;
  }
  indexOfSeq(seq) { return seq - 1; }
  want(first, last) {
    const need = new Set();
    for (let p = Math.floor(first / PAGE); p <= Math.floor(Math.max(first, last) / PAGE); p++) {
      const page = this.pages.get(p);
      const end = Math.min(this.count, (p + 1) * PAGE);
      if (!page || page.length < end - p * PAGE) need.add(p);
    }
    for (const [p, ctrl] of this.inflight) if (!need.has(p)) { ctrl.abort(); this.inflight.delete(p); }
    for (const p of need) if (!this.inflight.has(p) && this.inflight.size < 3) this.fetch(p);
  }
  async fetch(p) {
    const ctrl = new AbortController();
    this.inflight.set(p, ctrl);
    try {
      const r = await api('/v1/events', {query: {after: p * PAGE, limit: PAGE}, signal: ctrl.signal});
      const page = r.events.filter((e) => e.seq > p * PAGE && e.seq <= (p + 1) * PAGE);
      this.pages.delete(p);
      this.pages.set(p, page);
      if (this.pages.size > MAX_PAGES) this.pages.delete(this.pages.keys().next().value);
      if (r.last_seq > this.count) this.view.setCount(r.last_seq);
    } catch (e) {
      if (e.name !== 'AbortError') this.view.showError(e);
    } finally {
      if (this.inflight.get(p) === ctrl) this.inflight.delete(p);
      this.view.schedule();
    }
  }
  live(batch) {
    for (const e of batch) {
      const p = Math.floor((e.seq - 1) / PAGE);
      const page = this.pages.get(p);
      if (page && page.length === (e.seq - 1) % PAGE) page.push(e);
      else if (!page && (e.seq - 1) % PAGE === 0) this.pages.set(p, [e]);
    }
    const last = batch[batch.length - 1].seq;
    if (last > this.count) this.view.setCount(last);
  }
}

/** Filtered: matches loaded in order with ?after=, more as the list nears its end. */
class FilterSource {
  constructor(view, filters, startAfter) {
    this.view = view; this.filters = filters; this.items = []; this.after = startAfter || 0;
    this.done = false; this.loading = null; this.count = 1;
  }
  get(i) { return this.items[i]; }
  indexOfSeq(seq) { return this.items.findIndex((e) => e.seq === seq); }
  matches(e) {
    // The server filters; this checks again so the list is right whatever it did.
    const f = this.filters;
    if (f.type && !f.type.split(',').map((s) => s.trim()).includes(e.type)) return false;
    if (f.actor && e.actor !== f.actor) return false;
    if (f.id && !JSON.stringify(e).includes(`"${f.id}"`)) return false;
    if (f.since && e.ts < new Date(f.since).toISOString()) return false;
    if (f.until && e.ts > new Date(f.until).toISOString()) return false;
    return true;
  }
  want(first, last) {
    if (!this.done && !this.loading && last >= this.items.length - 20) this.fetch();
  }
  async fetch() {
    const ctrl = new AbortController();
    this.loading = ctrl;
    try {
      const r = await api('/v1/events', {signal: ctrl.signal, query: {after: this.after, limit: 1000, ...this.filters}});
      for (const e of r.events) if (this.matches(e)) this.items.push(e);
      // scanned_to: every event up to it was looked at (a filtered answer scans a bounded stretch).
      const lastSeen = r.events.length ? r.events[r.events.length - 1].seq : this.after;
      this.after = Math.max(this.after, r.scanned_to ?? lastSeen);
      if (this.after >= r.last_seq || (r.scanned_to === undefined && r.events.length < 1000)) this.done = true;
      this.view.setCount(this.items.length + (this.done ? 0 : 1));
    } catch (e) {
      if (e.name !== 'AbortError') { this.done = true; this.view.showError(e); }
    } finally {
      if (this.loading === ctrl) this.loading = null;
      this.view.schedule();
    }
  }
  live(batch) {
    if (!this.done) return;   // they come when paging reaches them
    const before = this.items.length;
    for (const e of batch) if (e.seq > this.after && this.matches(e)) this.items.push(e);
    this.after = Math.max(this.after, batch[batch.length - 1].seq);
    if (this.items.length !== before) this.view.setCount(this.items.length);
  }
  abort() { if (this.loading) this.loading.abort(); }
}

export function mount(root, {route, app}) {
  const q = route.params;
  const filters = {};
  for (const k of ['type', 'id', 'actor', 'since', 'until']) if (q.get(k)) filters[k] = q.get(k);
  const filtered = Object.keys(filters).length > 0;
  const gotoSeq = Number(q.get('seq')) || 0;

  // ---- filter form ----
  const fType = h('input', {id: 'filter-type', list: 'event-types', value: filters.type || '', placeholder: 'any', autocomplete: 'off'});
  const fId = h('input', {id: 'filter-id', value: filters.id || '', placeholder: 'p-5, t-7, a-9 …', autocomplete: 'off'});
  const fActor = h('input', {id: 'filter-actor', value: filters.actor || '', placeholder: 'ui, http, reflex:… ', autocomplete: 'off'});
  const fSince = h('input', {id: 'filter-since', type: 'datetime-local', step: 1, value: isoToLocalInput(filters.since)});
  const fUntil = h('input', {id: 'filter-until', type: 'datetime-local', step: 1, value: isoToLocalInput(filters.until)});
  const form = h('form', {class: 'filters', id: 'events-filters', 'aria-label': 'Filter events'},
    h('datalist', {id: 'event-types'}, EVENT_TYPES.map((t) => h('option', {value: t}))),
    h('label', {}, 'Type', fType), h('label', {}, 'Id', fId), h('label', {}, 'Actor', fActor),
    h('label', {}, 'Since', fSince), h('label', {}, 'Until', fUntil),
    h('span', {class: 'buttons'},
      h('button', {type: 'submit', id: 'filter-apply'}, 'Apply'),
      h('button', {type: 'button', id: 'filter-clear', on: {click: () => app.navigate('#/events')}}, 'Clear')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const p = new URLSearchParams();
    if (fType.value.trim()) p.set('type', fType.value.trim());
    if (fId.value.trim()) p.set('id', fId.value.trim());
    if (fActor.value.trim()) p.set('actor', fActor.value.trim());
    if (localToIso(fSince.value)) p.set('since', localToIso(fSince.value));
    if (localToIso(fUntil.value)) p.set('until', localToIso(fUntil.value));
    app.navigate(`#/events${p.toString() ? `?${p}` : ''}`);
  });

  // ---- toolbar ----
  const follow = h('input', {type: 'checkbox', id: 'events-follow'});
  follow.checked = !gotoSeq;
  const countEl = h('span', {id: 'events-count', class: 'muted', 'aria-live': 'polite'});
  const gotoInput = h('input', {id: 'events-goto', type: 'number', min: 1, placeholder: 'seq', 'aria-label': 'Go to seq'});
  const tools = h('div', {class: 'toolbar'},
    h('label', {class: 'check'}, follow, ' Live tail'),
    h('form', {class: 'inline', id: 'events-goto-form', on: {submit: (e) => { e.preventDefault(); const s = Number(gotoInput.value); if (s > 0) jumpToSeq(s, true); }}},
      gotoInput, h('button', {type: 'submit'}, 'Go')),
    h('button', {type: 'button', id: 'events-top', on: {click: () => jumpIndex(0)}}, 'Start'),
    h('button', {type: 'button', id: 'events-middle', on: {click: () => jumpIndex(Math.floor(src.count / 2))}}, 'Middle'),
    h('button', {type: 'button', id: 'events-end', on: {click: () => { follow.checked = true; toEnd(); }}}, 'End'),
    countEl);

  // ---- list + detail ----
  const spacer = h('div', {class: 'spacer'});
  const scroller = h('div', {id: 'events-scroller', class: 'scroller', tabindex: 0, role: 'listbox',
                             'aria-label': 'Events, oldest first', 'aria-activedescendant': ''}, spacer);
  const detail = h('aside', {id: 'event-detail', class: 'detail', 'aria-live': 'polite'},
                   h('p', {class: 'muted'}, 'Select an event (click, or arrows and Enter) to see it as JSON.'));
  const errorSlot = h('div', {});
  // Filters folded away on a narrow screen unless some are set.
  const box = h('details', {class: 'filters-box', id: 'events-filters-box'}, h('summary', {}, filtered ? `Filters (${Object.keys(filters).join(', ')})` : 'Filters'), form);
  box.open = filtered || matchMedia('(min-width: 761px)').matches;
  root.append(h('div', {class: 'events-view'}, box, tools, errorSlot, h('div', {class: 'split'}, scroller, detail)));

  const view = {
    schedule, showError: (e) => put(errorSlot, errorBox(e)),
    setCount(n) {
      src.count = n;
      layout();
      if (pendingJump && n >= pendingJump) { const seq = pendingJump; pendingJump = 0; jumpIndex(src.indexOfSeq(seq)); }
      schedule();
    },
  };
  let pendingJump = 0;         // a seq asked for before the log's length was known
  const src = filtered ? new FilterSource(view, filters, gotoSeq ? gotoSeq - 1 : 0) : new SeqSource(view);
  if (!filtered) src.count = app.lastSeq;

  const rows = [];
  let selected = 0;            // seq of the selected event
  let spacerH = 0, total = 0, programmatic = false, scheduled = false, alive = true;

  function layout() {
    total = src.count * ROW;
    spacerH = Math.min(total, MAX_PX);
    spacer.style.height = `${spacerH}px`;
    countEl.textContent = filtered
      ? `${(src.items.length).toLocaleString('en-US')} matching${src.done ? '' : ' so far'}`
      : `${src.count.toLocaleString('en-US')} events`;
    if (follow.checked) toEnd();
  }

  function virtualTop() {
    const vh = scroller.clientHeight, s = scroller.scrollTop;
    if (spacerH <= vh) return s;
    return s * (total - vh) / (spacerH - vh);
  }

  function setVirtualTop(v) {
    const vh = scroller.clientHeight;
    v = Math.max(0, Math.min(v, total - vh));
    programmatic = true;
    scroller.scrollTop = spacerH <= vh ? 0 : v * (spacerH - vh) / (total - vh);
    schedule();
  }

  function toEnd() { programmatic = true; scroller.scrollTop = scroller.scrollHeight; schedule(); }

  function jumpIndex(i, select) {
    follow.checked = false;
    setVirtualTop(i * ROW - scroller.clientHeight / 3);
    if (select) { const e = src.get(i); if (e) choose(e); }
  }

  function jumpToSeq(seq, select) {
    if (filtered) { app.navigate(`#/events?seq=${seq}`); return; }
    selected = seq;
    if (seq > src.count) pendingJump = seq;
    jumpIndex(src.indexOfSeq(seq));
    if (select) pendingSelect = seq;
  }
  let pendingSelect = 0;

  function schedule() {
    if (scheduled || !alive) return;
    scheduled = true;
    requestAnimationFrame(render);
  }

  function makeRow() {
    const r = h('div', {class: 'row', role: 'option'},
      h('span', {class: 'c-seq'}), h('span', {class: 'c-ts'}), h('span', {class: 'c-type'}),
      h('span', {class: 'c-actor'}), h('span', {class: 'c-what'}));
    r.addEventListener('click', () => { const e = r._event; if (e) choose(e); });
    scroller.append(r);
    return r;
  }

  function render() {
    scheduled = false;
    if (!alive) return;
    const vh = scroller.clientHeight, s = scroller.scrollTop, v = virtualTop();
    const first = Math.max(0, Math.floor(v / ROW) - OVERSCAN);
    const n = Math.min(src.count - first, Math.ceil(vh / ROW) + 2 * OVERSCAN);
    while (rows.length < Math.max(0, n)) rows.push(makeRow());
    for (let k = 0; k < rows.length; k++) {
      const r = rows[k], i = first + k;
      if (k >= n) { if (!r.hidden) r.hidden = true; continue; }
      r.hidden = false;
      r.style.transform = `translateY(${(s + i * ROW - v).toFixed(0)}px)`;
      const e = src.get(i);
      fill(r, e, i);
    }
    src.want(first, first + Math.max(0, n - 1));
    if (pendingSelect) {
      const e = src.get(src.indexOfSeq(pendingSelect));
      if (e) { pendingSelect = 0; choose(e); }
    }
    if (filtered && src.done && !src.items.length) countEl.textContent = 'no matching events';
    const loaded = filtered ? src.done || src.items.length > 0 : src.count === 0 ? !!app.health : n > 0 && !!src.get(first + n - 1);
    if (!root.dataset.ready && loaded) root.dataset.ready = '1';
  }

  function fill(r, e, i) {
    const key = e ? e.seq : `…${i}`;
    if (r._key === key) { r.setAttribute('aria-selected', e && e.seq === selected ? 'true' : 'false'); return; }
    r._key = key;
    r._event = e;
    const [cSeq, cTs, cType, cActor, cWhat] = r.children;
    if (e) {
      r.id = `ev-${e.seq}`;
      r.dataset.seq = e.seq;
      r.dataset.testid = `event-row-${e.seq}`;
      r.dataset.type = e.type;
      cSeq.textContent = e.seq;
      cTs.textContent = fmtTime(e.ts);
      cTs.title = e.ts;
      cType.textContent = e.type;
      cActor.textContent = e.actor || '';
      cWhat.textContent = eventSummary(e);
      r.classList.remove('placeholder');
    } else {
      r.removeAttribute('id');
      delete r.dataset.seq; delete r.dataset.testid; delete r.dataset.type;
      cSeq.textContent = filtered ? '' : i + 1;
      cTs.textContent = ''; cTs.title = '';
      cType.textContent = filtered ? 'loading more…' : '…';
      cActor.textContent = ''; cWhat.textContent = '';
      r.classList.add('placeholder');
    }
    r.setAttribute('aria-selected', e && e.seq === selected ? 'true' : 'false');
  }

  function choose(e) {
    selected = e.seq;
    for (const r of rows) r.setAttribute('aria-selected', r._event && r._event.seq === selected ? 'true' : 'false');
    scroller.setAttribute('aria-activedescendant', `ev-${e.seq}`);
    const ids = ['percept_id', 'thread_id', 'action_id'].filter((k) => e[k]).map((k) => e[k]);
    put(detail, 
      h('h2', {}, `#${e.seq} ${e.type}`),
      h('p', {}, h('time', {datetime: e.ts, title: e.ts}, fmtTime(e.ts, true)), e.actor ? ` · ${e.actor}` : ''),
      ids.length ? h('p', {}, 'Why: ', ids.map((id) => [idLink(id), ' '])) : null,
      jsonPre(e, {id: 'event-json', testid: `event-json-${e.seq}`}),
      h('button', {type: 'button', on: {click: () => clear(detail)}}, 'Collapse'));
  }

  function moveSelection(delta) {
    let i = selected ? src.indexOfSeq(selected) : Math.floor(virtualTop() / ROW);
    if (i < 0) i = 0;
    i = Math.max(0, Math.min(src.count - 1, i + delta));
    const e = src.get(i);
    follow.checked = false;
    const v = virtualTop(), vh = scroller.clientHeight;
    if (i * ROW < v || (i + 1) * ROW > v + vh) setVirtualTop(delta < 0 ? i * ROW : (i + 1) * ROW - vh);
    if (e) choose(e); else { pendingSelect = filtered ? 0 : i + 1; selected = pendingSelect; }
    schedule();
  }

  scroller.addEventListener('keydown', (ev) => {
    const page = Math.max(1, Math.floor(scroller.clientHeight / ROW) - 1);
    const keys = {ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page};
    if (ev.key in keys) { ev.preventDefault(); moveSelection(keys[ev.key]); }
    else if (ev.key === 'Home') { ev.preventDefault(); jumpIndex(0); }
    else if (ev.key === 'End') { ev.preventDefault(); follow.checked = true; toEnd(); }
    else if (ev.key === 'Escape') clear(detail);
    else if (ev.key === 'Enter' && selected) { const e = src.get(src.indexOfSeq(selected)); if (e) choose(e); }
  });
  scroller.addEventListener('scroll', () => {
    if (!programmatic && scroller.scrollTop + scroller.clientHeight < scroller.scrollHeight - ROW) follow.checked = false;
    programmatic = false;
    schedule();
  }, {passive: true});
  follow.addEventListener('change', () => { if (follow.checked) toEnd(); });
  const ro = new ResizeObserver(schedule);
  ro.observe(scroller);

  const offSeq = app.on('seq', (seq) => { if (!filtered && seq > src.count) view.setCount(seq); });
  layout();
  if (gotoSeq && !filtered) jumpToSeq(gotoSeq, true);
  else if (follow.checked) toEnd();
  schedule();

  return {
    onEvents(batch) { src.live(batch); schedule(); },
    unmount() { alive = false; offSeq(); ro.disconnect(); if (src.abort) src.abort(); for (const c of (src.inflight || new Map()).values()) c.abort(); },
  };
}
