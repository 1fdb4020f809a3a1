// Small DOM and formatting helpers shared by the views. No inline styles or
// handlers anywhere (the page runs under a strict CSP): elements are built
// with createElement and listeners added with addEventListener.

const SVG_NS = 'http://www.w3.org/2000/svg';

function apply(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') el.textContent = v;
    else if (k === 'class') el.setAttribute('class', v);
    else if (k === 'on') for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    else if (k === 'data') for (const [dk, dv] of Object.entries(v)) el.dataset[dk] = dv;
    else if (k === 'testid') el.dataset.testid = v;
    else if (k === 'value' && 'value' in el && !(el instanceof SVGElement)) el.value = v;
    else if (k === 'style') throw new Error('inline styles are refused by the CSP');
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** h('div', {class: 'x', on: {click}}, child, 'text', [more]) */
export function h(tag, attrs, ...children) {
  return append(apply(document.createElement(tag), attrs), children);
}

export function svg(tag, attrs, ...children) {
  return append(apply(document.createElementNS(SVG_NS, tag), attrs), children);
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

const pad = (n, w = 2) => String(n).padStart(w, '0');

/** Local time for display; the ISO string stays in the title. */
export function fmtTime(iso, withDate) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const t = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  const today = new Date();
  if (!withDate && d.toDateString() === today.toDateString()) return t;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${t}`;
}

export function timeEl(iso, withDate) {
  return h('time', {datetime: iso || '', title: iso || ''}, fmtTime(iso, withDate));
}

export function fmtNum(x, digits = 3) {
  if (x === null || x === undefined || Number.isNaN(x)) return '—';
  if (Number.isInteger(x)) return x.toLocaleString('en-US');
  return Number(x).toFixed(digits);
}

export function fmtAge(ms) {
  if (ms === null || ms === undefined) return '';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** A horizontal bar for a value in [0, 1]. */
export function bar(value, label, cls = '') {
  const v = Math.max(0, Math.min(1, Number(value) || 0));
  const fill = h('span', {class: 'bar-fill'});
  fill.style.width = `${(v * 100).toFixed(1)}%`;
  return h('span', {class: `bar ${cls}`, role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': 1,
                    'aria-valuenow': v.toFixed(3), 'aria-label': label || 'value', title: String(value)},
           fill, h('span', {class: 'bar-text'}, fmtNum(Number(value), 2)));
}

export function debounce(fn, ms) {
  let t = 0;
  const d = (...args) => { clearTimeout(t); t = setTimeout(() => fn(...args), ms); };
  d.cancel = () => clearTimeout(t);
  return d;
}

/** Calls fn at most once per `ms`, the last call always landing. */
export function throttle(fn, ms) {
  let last = 0, timer = 0;
  const t = () => {
    const wait = last + ms - Date.now();
    if (wait <= 0) { last = Date.now(); fn(); return; }
    if (!timer) timer = setTimeout(() => { timer = 0; last = Date.now(); fn(); }, wait);
  };
  t.cancel = () => { clearTimeout(timer); timer = 0; };
  return t;
}

export function idLink(id) {
  if (!id) return '—';
  return h('a', {href: `#/why/${encodeURIComponent(id)}`, class: 'id', title: `why ${id}`}, id);
}

export function jsonPre(value, attrs) {
  return h('pre', {class: 'json', ...attrs}, JSON.stringify(value, null, 2));
}

/** Shows an API error (or any error) in a box. */
export function errorBox(err, attrs) {
  return h('p', {class: 'error', role: 'alert', ...attrs}, errText(err));
}

export function errText(err) {
  if (!err) return '';
  return err.message || String(err);
}

export function card(title, attrs, ...children) {
  return h('section', {class: 'card', ...attrs}, h('h2', {}, title), ...children);
}

export function emptyNote(text) {
  return h('p', {class: 'muted'}, text);
}

/** Parses the hash route: '#/why/p-5?x=1' -> {name: 'why', arg: 'p-5', params}. */
export function parseHash(hash) {
  const raw = (hash || '').replace(/^#\/?/, '');
  const [path, query = ''] = raw.split('?');
  const [name, ...rest] = path.split('/');
  return {name: name || 'now', arg: rest.length ? decodeURIComponent(rest.join('/')) : '',
          params: new URLSearchParams(query)};
}

/** A datetime-local value (local time) as RFC 3339 UTC, or '' */
export function localToIso(v) {
  if (!v) return '';
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

export function isoToLocalInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** The ids an event names, for a one-line summary. */
export function eventSummary(e) {
  const parts = [];
  for (const k of ['session', 'percept_id', 'thread_id', 'action_id', 'reflex_id', 'memory_id']) if (e[k]) parts.push(e[k]);
  if (e.type === 'mind_woken' && e.trigger) parts.push(e.trigger);
  if (e.type === 'mind_step') parts.push(`step ${e.step}: ${e.tokens_in ?? 0} in, ${e.tokens_out ?? 0} out`);
  if (e.type === 'mind_slept') parts.push(e.outcome);
  if (e.text) parts.push(JSON.stringify(e.text).slice(0, 80));
  else if (e.goal) parts.push(JSON.stringify(e.goal).slice(0, 80));
  else if (e.error) parts.push(String(e.error).slice(0, 80));
  else if (e.factor) parts.push(`${e.factor}=${JSON.stringify(e.value)}`);
  else if (e.level !== undefined) parts.push(`level ${e.level}`);
  else if (e.enabled !== undefined) parts.push(e.enabled ? 'enabled' : 'disabled');
  else if (e.through_seq !== undefined) parts.push(`through ${e.through_seq}`);
  if (e.reason) parts.push(`(${e.reason})`);
  return parts.join(' ');
}

/**
 * Replaces el's children (arrays flattened, null skipped). When the focus
 * was inside, it goes to the new element with the same id, test id or link,
 * so a live refresh does not throw a keyboard user back to the top.
 */
export function put(el, ...children) {
  const a = document.activeElement;
  const key = a && a !== el && el.contains(a) ? focusKey(a) : null;
  append(clear(el), children);
  if (key) {
    const b = [...el.querySelectorAll('[id], [data-testid], a[href]')].find((x) => focusKey(x) === key);
    if (b) b.focus();
  }
  return el;
}

function focusKey(x) {
  if (x.id) return `#${x.id}`;
  if (x.dataset && x.dataset.testid) return `t:${x.dataset.testid}`;
  if (x.getAttribute('href')) return `a:${x.getAttribute('href')}:${x.textContent}`;
  return null;
}

/** True when value differs from the last one given under this key (a JSON signature). */
export function changed(holder, value) {
  const sig = JSON.stringify(value);
  if (holder.sig === sig) return false;
  holder.sig = sig;
  return true;
}
