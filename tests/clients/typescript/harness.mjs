// What the TypeScript client's tests share: the binary, a runtime in a
// temporary dir (started through tests/browser/run_limbic.mjs), its stop.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

import {runLimbic} from '../../browser/run_limbic.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
/** clients/typescript in this checkout. */
export const packageDir = path.resolve(here, '../../../clients/typescript');
/** docs/openapi.json in this checkout. */
export const docPath = path.resolve(here, '../../../docs/openapi.json');

/** The limbic binary: $LIMBIC_BINARY (ctest sets it), else build/limbic. */
export function limbicBinary() {
  return path.resolve(process.env.LIMBIC_BINARY || path.resolve(here, '../../../build/limbic'));
}

/** The built client (npm run build writes dist/; ctest's fixture does it first). */
export async function importClient() {
  const entry = path.join(packageDir, 'dist/index.js');
  if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: run npm ci && npm run build in ${packageDir}`);
  return import(entry);
}

/** A temporary dir, removed when the process exits. */
export function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  process.on('exit', () => fs.rmSync(dir, {recursive: true, force: true}));
  return dir;
}

/**
 * A `limbic run` on `dir` with `config` (state_dir defaults to DIR/state,
 * api.port to 0, or `port`): {proc, api, stop()}. Killed at the latest when
 * the test process exits.
 */
export async function startLimbic(dir, config = {}, {port = 0} = {}) {
  const full = {state_dir: path.join(dir, 'state'), ...config, api: {port: 0, ...(config.api ?? {})}};
  let proc = null;
  const kill = () => proc?.kill('SIGKILL');
  process.on('exit', kill);
  const started = await runLimbic({limbic: limbicBinary(), dir, config: full, waitMs: 20000, port,
                                   onSpawn: (p) => { proc = p; }});
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  return {
    proc, api: started.api, log: started.log,
    /** SIGTERM (a clean stop) and wait for its exit. */
    async stop() {
      proc.kill('SIGTERM');
      await exited;
      process.off('exit', kill);
    },
  };
}

/** A loopback port nothing listens on (it was free a moment ago). */
export async function closedPort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const {port} = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}
