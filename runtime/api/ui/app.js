// The inspector's shell: hash routing, the tabs, the token form, the one
// live event stream shared by the views, and the health line.

import {api, EventStream, onAuthNeeded, setToken} from './api.js';
import {clear, parseHash, errorBox} from './util.js';
import * as now from './views/now.js';
import * as events from './views/events.js';
import * as why from './views/why.js';
import * as travel from './views/travel.js';
import * as outbox from './views/outbox.js';
import * as reflexes from './views/reflexes.js';
import * as memory from './views/memory.js';
import * as world from './views/world.js';
import * as mind from './views/mind.js';

const VIEWS = {now, events, why, travel, outbox, reflexes, memory, world, mind};

/** Shared state: the last seq seen and the health answer; views listen. */
export const app = {
  lastSeq: 0,
  health: null,
  bus: new EventTarget(),
  emit(name, detail) { this.bus.dispatchEvent(new CustomEvent(name, {detail})); },
  on(name, fn) {
    const l = (e) => fn(e.detail);
    this.bus.addEventListener(name, l);
    return () => this.bus.removeEventListener(name, l);
  },
  navigate(hash) { if (location.hash !== hash) location.hash = hash; else route(); },
};

const $ = (id) => document.getElementById(id);
let current = null;       // {name, instance}
let stream = null;

// ---- token: #token=... in the fragment, else the form on a 401 ----------

function takeTokenFromHash() {
  const m = /^#token=([^&]*)/.exec(location.hash);
  if (!m) return;
  setToken(decodeURIComponent(m[1]));
  history.replaceState(null, '', `${location.pathname}${location.search}#/now`);
}

onAuthNeeded((message) => new Promise((resolve) => {
  const dlg = $('token-dialog'), form = $('token-form'), input = $('token-input');
  $('token-message').textContent =
    `${message || 'unauthorized'}. Enter the API's bearer token (api.token); it is kept in this tab only.`;
  dlg.hidden = false;
  input.value = '';
  input.focus();
  const submit = (e) => {
    e.preventDefault();
    if (!input.value) return;
    form.removeEventListener('submit', submit);
    dlg.hidden = true;
    resolve(input.value.trim());
  };
  form.addEventListener('submit', submit);
}));

// ---- routing ----------------------------------------------------------------

function markTab(name) {
  for (const a of document.querySelectorAll('#tabs a')) {
    if (a.dataset.view === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function route() {
  const r = parseHash(location.hash);
  const name = VIEWS[r.name] ? r.name : 'now';
  if (current && current.instance && current.instance.unmount) current.instance.unmount();
  current = null;
  const main = $('view');
  clear(main);
  main.dataset.view = name;
  delete main.dataset.ready;   // each view sets it once its data is shown (the tests wait for it)
  markTab(name);
  document.title = `limbic · ${name}`;
  try {
    current = {name, instance: VIEWS[name].mount(main, {route: r, app}) || {}};
  } catch (e) {
    main.append(errorBox(e));
  }
}

// Arrow keys move between the tabs (Tab reaches them in order too).
function tabKeys(e) {
  const links = [...document.querySelectorAll('#tabs a')];
  const i = links.indexOf(document.activeElement);
  if (i < 0) return;
  let j = -1;
  if (e.key === 'ArrowRight') j = (i + 1) % links.length;
  else if (e.key === 'ArrowLeft') j = (i - 1 + links.length) % links.length;
  else if (e.key === 'Home') j = 0;
  else if (e.key === 'End') j = links.length - 1;
  if (j < 0) return;
  e.preventDefault();
  links[j].focus();
}

// ---- health and the live stream ---------------------------------------------

function showSeq(seq) {
  $('last-seq').textContent = seq ? seq.toLocaleString('en-US') : '0';
}

async function refreshHealth() {
  const el = $('health-status');
  try {
    const hz = await api('/healthz');
    app.health = hz;
    el.dataset.state = hz.status === 'ok' ? 'ok' : 'bad';
    el.textContent = hz.sandbox ? `sandbox · ${hz.status}` : hz.status;
    el.title = hz.reason || `version ${hz.version}`;
    if (hz.applied_seq > app.lastSeq) { app.lastSeq = hz.applied_seq; showSeq(app.lastSeq); app.emit('seq', app.lastSeq); }
    app.emit('health', hz);
  } catch (e) {
    // 503 comes with a body too; anything else: unknown.
    app.health = null;
    el.dataset.state = 'bad';
    el.textContent = e.status === 503 ? 'degraded' : 'unreachable';
    el.title = e.message;
  }
}

function startStream() {
  const conn = $('conn-status');
  stream = new EventStream({
    after: app.lastSeq,
    onStatus: (s) => { conn.dataset.state = s; conn.textContent = s === 'live' ? 'live' : s; },
    onEvents: (batch) => {
      const last = batch[batch.length - 1].seq;
      if (last > app.lastSeq) { app.lastSeq = last; showSeq(last); }
      app.emit('events', batch);
      if (current && current.instance.onEvents) current.instance.onEvents(batch);
    },
  }).start();
}

async function start() {
  takeTokenFromHash();
  document.getElementById('tabs').addEventListener('keydown', tabKeys);
  window.addEventListener('hashchange', route);
  route();
  // The stream starts at the log's end (the views read history themselves):
  // learn it first, from /healthz or, when that fails (a degraded runtime
  // answers 503), from the events endpoint; retry until one answers.
  for (let wait = 1000; ; wait = Math.min(wait * 2, 15000)) {
    await refreshHealth();
    if (!app.health) {
      try {
        const r = await api('/v1/events', {query: {after: 0, limit: 1}});
        if (r.last_seq > app.lastSeq) { app.lastSeq = r.last_seq; showSeq(app.lastSeq); app.emit('seq', app.lastSeq); }
        if (r.last_seq !== undefined) break;
      } catch { /* not yet */ }
      await new Promise((res) => setTimeout(res, wait));
      continue;
    }
    break;
  }
  startStream();
  setInterval(refreshHealth, 10000);
}

start();
