// `limbic run` for the node tests: the config written to DIR/limbic.json,
// port 0, and the API's base URL read from the start line.
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Starts `limbic run --config DIR/limbic.json --state config.state_dir --port PORT`
 * (`port` 0 by default: any free one; a restart passes the port it had).
 * Resolves to {proc, api, log} (its output so far, and on) once it serves; rejects with `fail(message)` (an
 * Error by default) when it exits first or does not serve within `waitMs`.
 * `onSpawn(proc)` runs at once, so a caller can kill it whatever happens.
 */
export async function runLimbic({limbic, dir, config, waitMs, port = 0,
                                 fail = (m) => new Error(m), onSpawn = () => {}}) {
  fs.writeFileSync(path.join(dir, 'limbic.json'), JSON.stringify(config, null, 2));
  const proc = spawn(limbic, ['run', '--config', path.join(dir, 'limbic.json'), '--state', config.state_dir,
                              '--port', String(port)], {stdio: ['ignore', 'pipe', 'pipe']});
  onSpawn(proc);
  const log = [];
  const api = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(fail(`limbic did not start within ${waitMs} ms:\n${log.join('')}`)), waitMs);
    const onData = (d) => {
      log.push(String(d));
      const m = /running: .*api (http:\/\/[\d.:]+)/.exec(log.join(''));
      if (m) { clearTimeout(timer); resolve(m[1]); }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => { clearTimeout(timer); reject(fail(`limbic exited (${code}) before serving:\n${log.join('')}`)); });
  });
  return {proc, api, log};
}
