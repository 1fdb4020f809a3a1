// The package as a user gets it (issue 43): `npm pack` of clients/typescript,
// installed from the .tgz into a scratch folder offline (an empty npm cache:
// it has no dependencies), imported there by its name and used against a
// real `limbic run`; its type declarations checked by the pinned compiler
// with a program that uses them (and a call they must refuse).
//
//   LIMBIC_BINARY=build/limbic node --test tests/clients/typescript/package.test.mjs
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {after, test} from 'node:test';

import {packageDir, startLimbic, tempDir} from './harness.mjs';

const dir = tempDir('limbic-ts-package-');
let runtime;
after(() => runtime?.stop());

function npm(args, cwd) {
  return execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
    env: {...process.env, npm_config_cache: path.join(dir, 'npm-cache'), npm_config_update_notifier: 'false'}});
}

test('npm pack, npm install of the .tgz offline, import and use', async () => {
  // dist/ is built already (ctest's fixture, or npm run build): no prepack here.
  const packed = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir], packageDir));
  const files = packed[0].files.map((f) => f.path).sort();
  assert.ok(files.includes('dist/index.js') && files.includes('dist/index.d.ts'), files.join(' '));
  assert.deepEqual(files.filter((f) => !/^(dist\/|package\.json$|README\.md$)/.test(f)), [], 'only dist, README, package.json');
  const tgz = path.join(dir, packed[0].filename);

  const scratch = path.join(dir, 'scratch');
  fs.mkdirSync(scratch);
  fs.writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({name: 'scratch', private: true, type: 'module'}));
  npm(['install', '--offline', tgz], scratch);
  const installed = JSON.parse(fs.readFileSync(path.join(scratch, 'node_modules/@limbic/client/package.json'), 'utf8'));
  assert.equal(installed.name, '@limbic/client');
  assert.deepEqual(fs.readdirSync(path.join(scratch, 'node_modules')).sort(), ['.package-lock.json', '@limbic']);

  runtime = await startLimbic(path.join(dir), {api: {token: 'pack-token'}});
  fs.writeFileSync(path.join(scratch, 'use.mjs'), `
    import {Client, LimbicError, OPERATIONS} from '@limbic/client';
    const c = new Client({url: process.argv[2], token: 'pack-token'});
    const {id} = await c.addPercept({source: 'chat', type: 'message', text: 'from the package'});
    const p = await c.getPercept({id});
    let code = null;
    try { await c.getThread({id: 'none'}); } catch (e) { code = e instanceof LimbicError && e.code; }
    const it = c.events({after: 0});
    const first = (await it.next()).value;
    await it.return();
    console.log(JSON.stringify({text: p.text, code, first: first.type, ops: Object.keys(OPERATIONS).length}));
  `);
  const out = JSON.parse(execFileSync(process.execPath, ['use.mjs', runtime.api], {cwd: scratch, encoding: 'utf8'}));
  assert.deepEqual(out, {text: 'from the package', code: 'not_found', first: 'percept_arrived',
                         ops: out.ops});
  assert.ok(out.ops >= 81);

  // The declarations: a TypeScript program against the installed package.
  fs.writeFileSync(path.join(scratch, 'check.ts'), `
    import {Client, LimbicError, OPERATIONS, type LimbicEvent, type Percept} from '@limbic/client';
    declare const url: string;
    export async function main(): Promise<number> {
      const c = new Client({url, token: 't', timeout: 1000, retries: 1});
      const receipt = await c.addPercept({source: 'chat', type: 'message', intensity: 0.5});
      const id: string | undefined = receipt.id;
      const percepts: Percept[] = (await c.listPercepts({status: 'new', limit: 5})).percepts;
      const spec: {method: 'GET'; path: '/v1/attention'} = OPERATIONS.attention;
      // @ts-expect-error: add_percept needs a type
      await c.addPercept({source: 'chat'});
      // @ts-expect-error: not a status
      await c.listPercepts({status: 'lost'});
      for await (const e of c.events({after: 0, types: ['percept_arrived']})) {
        const seq: number = (e satisfies LimbicEvent).seq;
        return seq;
      }
      try { await c.health(); } catch (e) { if (e instanceof LimbicError) return e.status; }
      return percepts.length + (id ? 1 : 0) + spec.path.length;
    }
  `);
  const tsc = path.join(packageDir, 'node_modules/typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'ES2022', '--module', 'nodenext',
                                  '--moduleResolution', 'nodenext', '--lib', 'ES2022,DOM', '--types', '',
                                  'check.ts'], {cwd: scratch, encoding: 'utf8', stdio: 'pipe'});
});
