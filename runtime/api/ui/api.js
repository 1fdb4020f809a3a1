// The HTTP API client: bearer token (sessionStorage), actor header on every
// write, errors as ApiError with the API's message, the SSE event stream
// read through fetch() (EventSource cannot send Authorization), and the
// Prometheus text parser.

const TOKEN_KEY = 'limbic.token';
let token = '';
try { token = sessionStorage.getItem(TOKEN_KEY) || ''; } catch { /* storage off */ }

let authHandler = null;   // (message) => Promise<token>, set by the app
let authPending = null;   // one prompt at a time for every call waiting

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function setToken(t) {
  token = t || '';
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch { /* storage off */ }
}

export const hasToken = () => !!token;
export function onAuthNeeded(fn) { authHandler = fn; }

async function needToken(message) {
  if (!authHandler) throw new ApiError(401, 'unauthorized', message);
  if (!authPending) {
    authPending = authHandler(message).then((t) => { setToken(t); }).finally(() => { authPending = null; });
  }
  return authPending;
}

function headers(method, extra) {
  const hd = {Accept: 'application/json', ...extra};
  if (token) hd.Authorization = `Bearer ${token}`;
  if (method !== 'GET' && method !== 'HEAD') {
    hd['Content-Type'] = 'application/json';
    hd['X-Limbic-Actor'] = 'ui';
  }
  return hd;
}

function withQuery(path, query) {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '') continue;
    q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}${path.includes('?') ? '&' : '?'}${s}` : path;
}

async function errorFrom(res) {
  let code = `http_${res.status}`, message = `${res.status} ${res.statusText}`;
  try {
    const j = await res.json();
    if (j && j.error) { code = j.error.code || code; message = j.error.message || message; }
  } catch { /* not JSON */ }
  return new ApiError(res.status, code, message);
}

/**
 * api('/v1/attention') -> parsed JSON. Writes (any method but GET) send
 * a JSON body (at least {}), Content-Type: application/json and
 * X-Limbic-Actor: ui. On 401 the token form is shown and the call retried.
 */
export async function api(path, {method = 'GET', body, query, signal, text = false} = {}) {
  const url = withQuery(path, query);
  for (;;) {
    const init = {method, headers: headers(method), signal, cache: 'no-store', credentials: 'same-origin'};
    if (method !== 'GET' && method !== 'HEAD') init.body = JSON.stringify(body ?? {});
    const res = await fetch(url, init);
    if (res.status === 401) {
      const err = await errorFrom(res);
      await needToken(err.message);
      continue;
    }
    if (!res.ok) throw await errorFrom(res);
    return text ? res.text() : res.json();
  }
}

/** Parses Prometheus text into {name: [{labels, value}]}. */
export function parseMetrics(text) {
  const out = {};
  for (const line of text.split('\n')) {
    if (!line || line[0] === '#') continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    if (m[3]) for (const p of m[3].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[p[1]] = p[2];
    (out[m[1]] ||= []).push({labels, value: Number(m[4])});
  }
  return out;
}

export function metricSum(metrics, name, filter) {
  let s = 0;
  for (const x of metrics[name] || []) if (!filter || filter(x.labels)) s += x.value;
  return s;
}

export function metricBy(metrics, name, label) {
  const out = {};
  for (const x of metrics[name] || []) out[x.labels[label]] = x.value;
  return out;
}

export async function fetchMetrics() {
  return parseMetrics(await api('/metrics', {text: true}));
}

/**
 * The live event stream: GET /v1/events/stream?after=SEQ read with fetch()
 * and parsed by hand; reconnects after a drop with ?after=<last seq seen>,
 * backing off 0.5 s, 1 s, 2 s ... up to 15 s. onEvents gets batches (one
 * per animation frame at most), onStatus 'connecting' | 'live' | 'retrying'.
 */
export class EventStream {
  constructor({after = 0, onEvents, onStatus}) {
    this.after = after;
    this.onEvents = onEvents;
    this.onStatus = onStatus || (() => {});
    this.stopped = false;
    this.backoff = 500;
    this.queue = [];
    this.flushScheduled = false;
  }

  start() { this.loop(); return this; }

  stop() {
    this.stopped = true;
    if (this.ctrl) this.ctrl.abort();
  }

  push(ev) {
    this.queue.push(ev);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    const flush = () => {
      this.flushScheduled = false;
      const batch = this.queue;
      this.queue = [];
      if (batch.length) this.onEvents(batch);
    };
    // requestAnimationFrame does not run in a hidden tab: fall back to a timer.
    if (document.hidden) setTimeout(flush, 100); else requestAnimationFrame(flush);
  }

  async loop() {
    while (!this.stopped) {
      this.onStatus('connecting');
      try {
        await this.once();
      } catch (e) {
        if (this.stopped) return;
        if (e instanceof ApiError && e.status === 401) {
          try { await needToken(e.message); continue; } catch { /* fall through to backoff */ }
        }
      }
      if (this.stopped) return;
      this.onStatus('retrying');
      await new Promise((r) => setTimeout(r, this.backoff));
      this.backoff = Math.min(this.backoff * 2, 15000);
    }
  }

  async once() {
    this.ctrl = new AbortController();
    const res = await fetch(`/v1/events/stream?after=${this.after}`,
                            {headers: {...headers('GET'), Accept: 'text/event-stream'},
                             signal: this.ctrl.signal, cache: 'no-store'});
    if (!res.ok) throw await errorFrom(res);
    this.onStatus('live');
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '', id = '', type = '', data = [];
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buf += dec.decode(value, {stream: true});
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        let line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') {
          if (data.length) this.dispatch(id, type, data.join('\n'));
          id = ''; type = ''; data = [];
          continue;
        }
        if (line[0] === ':') continue;   // keep-alive comment
        const c = line.indexOf(':');
        const field = c < 0 ? line : line.slice(0, c);
        let val = c < 0 ? '' : line.slice(c + 1);
        if (val[0] === ' ') val = val.slice(1);
        if (field === 'id') id = val;
        else if (field === 'event') type = val;
        else if (field === 'data') data.push(val);
      }
    }
  }

  dispatch(id, type, data) {
    let ev;
    try { ev = JSON.parse(data); } catch { return; }
    const seq = Number(id) || ev.seq || 0;
    if (seq && seq <= this.after) return;   // never deliver one twice
    if (seq) this.after = seq;
    this.backoff = 500;
    this.push(ev);
  }
}
