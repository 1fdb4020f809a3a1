#!/usr/bin/env node
// The inspector (/ui/) on a long log, in headless Chromium: first paint,
// first contentful paint, time to the Now view shown, then the Events view
// scrolled through the whole log (steps, jumps to the middle and the end,
// random jumps) with every frame timed by requestAnimationFrame.
//
//   cd tests/browser && npm ci          # puppeteer-core, once
//   node bench/inspector/inspector_bench.mjs --limbic build/limbic [--events 1000000]
//        [--ui-dir runtime/api/ui] [--chromium /usr/bin/chromium] [--keep DIR]
//
// Without --ui-dir the page is the copy built into the binary. --keep DIR
// keeps the state dir there and reuses it on the next run.
//
// The log is made quickly: N events are written as an events.jsonl (the
// seed format, docs/events.md) and `limbic replay --from FILE --into DIR`
// builds the state dir (a few seconds per million events), then `limbic run`
// serves it. Prints one JSON object; timings in ms.

import {spawn, execFile} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {createRequire} from 'node:module';
import {fileURLToPath} from 'node:url';
import {setTimeout as sleep} from 'node:timers/promises';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../../tests/browser/package.json'));
let puppeteer;
try {
  puppeteer = (await import(require.resolve('puppeteer-core'))).default;
} catch {
  console.error('inspector_bench: puppeteer-core is missing: run `cd tests/browser && npm ci` first');
  process.exit(2);
}

const a = {limbic: 'build/limbic', events: 1000000, uiDir: '', chromium: '/usr/bin/chromium', keep: '', proxy: ''};
for (let i = 2; i < process.argv.length; i++) {
  const k = process.argv[i], v = process.argv[++i];
  if (k === '--limbic') a.limbic = v;
  else if (k === '--events') a.events = Number(v);
  else if (k === '--ui-dir') a.uiDir = v;
  else if (k === '--chromium') a.chromium = v;
  else if (k === '--keep') a.keep = v;
  else if (k === '--proxy') a.proxy = v;   // development: a limbic that does not serve /ui/
  else { console.error(`inspector_bench: unknown argument ${k}`); process.exit(2); }
}
a.limbic = path.resolve(a.limbic);
if (a.uiDir) a.uiDir = path.resolve(a.uiDir);
const N = Math.max(10, Math.floor(a.events));
const children = new Set();
process.on('exit', () => { for (const c of children) try { c.kill('SIGKILL'); } catch { /* gone */ } });
const log = (...m) => console.error('[bench]', ...m);

const dir = a.keep ? path.resolve(a.keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'limbic-ui-bench-'));
fs.mkdirSync(dir, {recursive: true});
const out = {events: N, machine: {cpus: os.cpus().length, model: os.cpus()[0] && os.cpus()[0].model}};

// ---- 1. the log --------------------------------------------------------------

function line(seq, ts, type, fields) {
  const keys = Object.keys(fields).sort();
  let s = `{"v":1,"seq":${seq},"ts":"${ts}","type":"${type}"`;
  for (const k of keys) s += `,${JSON.stringify(k)}:${JSON.stringify(fields[k])}`;
  return `${s}}\n`;
}

async function writeLog(file) {
  const t0 = Date.now();
  const start = Date.now() - N * 10 - 60000;   // one event every 10 ms, ending a minute ago
  const fd = fs.openSync(file, 'w');
  let buf = '';
  const sources = ['github', 'chat', 'timer', 'mail'];
  let thread = '';
  for (let seq = 1; seq <= N; seq++) {
    const ts = new Date(start + seq * 10).toISOString();
    const k = seq % 10;
    const src = sources[seq % 4];
    if (k === 1 || k === 5) {
      buf += line(seq, ts, 'percept_arrived', {percept_id: `p-${seq}`, source: src, percept_type: 'message', intensity: ((seq * 7919) % 100) / 100,
                                               text: `bench percept ${seq} from ${src}`, data: {n: seq}, actor: `sensor:${src}`});
    } else if (k === 2 || k === 6) {
      // Most percepts leave the pool again; those of the last 1,000 events stay.
      if (seq < N - 1000) buf += line(seq, ts, 'percept_removed', {percept_id: `p-${seq - 1}`, actor: 'http', reason: 'bench'});
      else buf += line(seq, ts, 'arousal_set', {level: 0.3, actor: 'http'});
    } else if (k === 3) {
      buf += line(seq, ts, 'arousal_set', {level: ((seq * 31) % 100) / 100, actor: 'http'});
    } else if (k === 4) {
      buf += line(seq, ts, 'arousal_factor_set', {factor: 'recent_errors', value: seq % 5, actor: 'http'});
    } else if (k === 7) {
      if (thread) buf += line(seq, ts, 'thread_deleted', {thread_id: thread, unassign_percepts: true, actor: 'http'});
      else buf += line(seq, ts, 'arousal_set', {level: 0.5, actor: 'http'});
      thread = '';
    } else if (k === 8) {
      thread = `t-${seq}`;
      buf += line(seq, ts, 'thread_created', {thread_id: thread, goal: `bench thread ${seq}`, salience: 0.5, actor: 'http'});
    } else if (k === 9) {
      buf += line(seq, ts, 'thread_updated', {thread_id: thread, state: {phase: 'working', next_step: `step ${seq}`}, actor: 'http'});
    } else {
      buf += line(seq, ts, 'arousal_set', {level: 0.4, actor: 'http', reason: `tick ${seq}`});
    }
    if (buf.length > 1 << 20) { fs.writeSync(fd, buf); buf = ''; }
  }
  fs.writeSync(fd, buf);
  fs.closeSync(fd);
  return Date.now() - t0;
}

function run(cmd, argv) {
  return new Promise((resolve, reject) => execFile(cmd, argv, {maxBuffer: 1 << 24}, (err, stdout, stderr) =>
    (err ? reject(new Error(`${cmd} ${argv.join(' ')}: ${stderr || err.message}`)) : resolve(stdout))));
}

const state = path.join(dir, 'state');
if (!fs.existsSync(path.join(state, 'events'))) {
  const file = path.join(dir, 'events.jsonl');
  out.write_log_ms = await writeLog(file);
  log(`wrote ${N} events in ${out.write_log_ms} ms; replaying`);
  const t0 = Date.now();
  await run(a.limbic, ['replay', '--from', file, '--into', state]);
  out.replay_ms = Date.now() - t0;
  fs.rmSync(file);
  log(`replayed in ${out.replay_ms} ms`);
}

// ---- 2. limbic run -------------------------------------------------------------

fs.writeFileSync(path.join(dir, 'reflexes.json'), '{"reflexes": []}');
const config = {state_dir: state, reflexes: path.join(dir, 'reflexes.json'), sensors: {}, effectors: {log: {kind: 'log'}},
                api: a.uiDir && !a.proxy ? {ui_dir: a.uiDir} : {}};
fs.writeFileSync(path.join(dir, 'limbic.json'), JSON.stringify(config));
const t0run = Date.now();
const proc = spawn(a.limbic, ['run', '--config', path.join(dir, 'limbic.json'), '--port', '0'], {stdio: ['ignore', 'pipe', 'pipe']});
children.add(proc);
const api = await new Promise((resolve, reject) => {
  let text = '';
  const on = (d) => { text += d; const m = /running: .*api (http:\/\/[\d.:]+)/.exec(text); if (m) resolve(m[1]); };
  proc.stdout.on('data', on);
  proc.stderr.on('data', on);
  proc.on('exit', (c) => reject(new Error(`limbic exited ${c}: ${text}`)));
});
out.limbic_start_ms = Date.now() - t0run;
let ui = `${api}/ui/`;
if (a.proxy) {
  const px = spawn(process.execPath, [a.proxy, a.uiDir, api, '0'], {stdio: ['ignore', 'pipe', 'inherit']});
  children.add(px);
  ui = await new Promise((resolve) => px.stdout.once('data', (d) => resolve(String(d).trim())));
}

// ---- 3. the browser ------------------------------------------------------------

const udd = fs.mkdtempSync(path.join(os.tmpdir(), 'limbic-ui-bench-chromium-'));
const browser = await puppeteer.launch({
  executablePath: a.chromium, headless: false, userDataDir: udd, protocolTimeout: 300000,
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', '--window-size=1280,800'],
});
try {
  const page = await browser.newPage();
  await page.setViewport({width: 1280, height: 800});
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warn') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  // Paint entries and the moment each view says it is ready, from the page's own clock.
  const instrument = (pg) => pg.evaluateOnNewDocument(() => {
    window.__bench = {paint: {}, ready: {}};
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__bench.paint[e.name] = e.startTime; })
      .observe({type: 'paint', buffered: true});
    new MutationObserver(() => {
      const m = document.querySelector('main#view[data-ready="1"]');
      if (m && !(m.dataset.view in window.__bench.ready)) window.__bench.ready[m.dataset.view] = performance.now();
    }).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-ready']});
  });
  await instrument(page);
  // A warm-up load (caches, first compile), then the measured one in a new page.
  await page.goto(`${ui}#/now`, {waitUntil: 'load'});
  await page.waitForSelector('main#view[data-view="now"][data-ready="1"]', {timeout: 120000});
  const cold = await page.evaluate(() => ({...window.__bench.paint, now_ready: window.__bench.ready.now}));
  const page2 = await browser.newPage();
  await page2.setViewport({width: 1280, height: 800});
  page2.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warn') errors.push(m.text()); });
  page2.on('pageerror', (e) => errors.push(e.message));
  await instrument(page2);
  await page.close();
  const t0 = Date.now();
  await page2.goto(`${ui}#/now`, {waitUntil: 'load'});
  await page2.waitForSelector('main#view[data-view="now"][data-ready="1"]', {timeout: 120000});
  const warm = await page2.evaluate(() => ({...window.__bench.paint, now_ready: window.__bench.ready.now,
                                             dom_content_loaded: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd}));
  out.first_load = {first_paint: cold['first-paint'], first_contentful_paint: cold['first-contentful-paint'], now_view_ready: cold.now_ready};
  out.second_load = {first_paint: warm['first-paint'], first_contentful_paint: warm['first-contentful-paint'],
                     dom_content_loaded: warm.dom_content_loaded, now_view_ready: warm.now_ready, wall_ms: Date.now() - t0};

  // Events: open, then scroll through the log while timing every frame.
  const tEv = await page2.evaluate(async () => {
    const t = performance.now();
    location.hash = '#/events';
    while (!document.querySelector('main#view[data-view="events"][data-ready="1"]')) await new Promise((r) => setTimeout(r, 5));
    return performance.now() - t;
  });
  out.events_view_ready_ms = tEv;
  const scroll = await page2.evaluate(async () => {
    const sc = document.getElementById('events-scroller');
    document.getElementById('events-follow').checked = false;
    const frames = [];
    let last = performance.now(), running = true, maxNodes = 0;
    const tick = (t) => { frames.push(t - last); last = t; if (running) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
    const frame = () => new Promise((r) => requestAnimationFrame(r));
    const inView = () => {
      const top = sc.getBoundingClientRect().top, bottom = top + sc.clientHeight;
      return [...sc.querySelectorAll('.row:not([hidden])')]
        .map((r) => [r, r.getBoundingClientRect().top]).filter(([, y]) => y >= top - 13 && y < bottom).sort((x, y) => x[1] - y[1]).map(([r]) => r);
    };
    const firstRowSeq = () => { const r = inView()[0]; return r && r.dataset.seq ? Number(r.dataset.seq) : 0; };
    async function filled(timeout = 10000) {   // time from the scroll until the rows in view show events
      const t = performance.now();
      await frame(); await frame();            // the list renders on the frame after the scroll
      while (performance.now() - t < timeout) {
        const rows = inView();
        if (rows.length && rows.every((r) => r.dataset.seq)) return performance.now() - t;
        await frame();
      }
      return null;
    }
    const jumps = [];
    async function jump(name, top) {
      sc.scrollTop = top;
      const ms = await filled();
      jumps.push({to: name, seq: firstRowSeq(), fill_ms: ms === null ? null : Math.round(ms)});
      maxNodes = Math.max(maxNodes, document.getElementsByTagName('*').length);
    }
    const H = () => sc.scrollHeight - sc.clientHeight;
    await jump('start', 0);
    // 1. steady scrolling: 240 frames, 60 px per frame (a fast wheel), from the start.
    const t1 = performance.now();
    for (let i = 0; i < 240; i++) { sc.scrollBy(0, 60); await frame(); }
    const stepMs = performance.now() - t1;
    await filled();
    // 2. a fling through the whole log: 120 frames spanning it (pages are never all fetched).
    for (let i = 1; i <= 120; i++) { sc.scrollTop = H() * i / 120; await frame(); }
    maxNodes = Math.max(maxNodes, document.getElementsByTagName('*').length);
    await filled();
    // 3. jumps: middle, end, start, then random ones.
    await jump('middle', H() / 2);
    await jump('end', H());
    await jump('start', 0);
    let seed = 7;
    for (let i = 0; i < 10; i++) { seed = (seed * 48271) % 2147483647; await jump(`random ${i}`, H() * (seed / 2147483647)); }
    // 4. keyboard: PageDown 50 times from the middle.
    await jump('middle', H() / 2);
    sc.focus();
    for (let i = 0; i < 50; i++) { sc.dispatchEvent(new KeyboardEvent('keydown', {key: 'PageDown', bubbles: true})); await frame(); }
    running = false;
    const f = frames.slice(1).sort((x, y) => x - y);
    const q = (p) => f[Math.min(f.length - 1, Math.floor(p * f.length))];
    return {frames: f.length, p50_frame_ms: +q(0.5).toFixed(1), p99_frame_ms: +q(0.99).toFixed(1), max_frame_ms: +f[f.length - 1].toFixed(1),
            frames_over_50ms: f.filter((x) => x > 50).length, step_scroll_240_frames_ms: Math.round(stepMs),
            dom_nodes_end: document.getElementsByTagName('*').length, dom_nodes_max: maxNodes,
            rows_in_dom: sc.querySelectorAll('.row').length, scroller_height_px: sc.scrollHeight, jumps};
  });
  out.events_scroll = scroll;
  out.console_errors = errors;
} finally {
  await browser.close();
  fs.rmSync(udd, {recursive: true, force: true});
  proc.kill('SIGKILL');
  if (!a.keep) fs.rmSync(dir, {recursive: true, force: true});
}
console.log(JSON.stringify(out, null, 2));
process.exit(0);
