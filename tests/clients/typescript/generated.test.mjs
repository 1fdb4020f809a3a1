// The client follows docs/openapi.json (issue 43): every operation of the
// document has a method, named after its operationId in camelCase, that
// calls the document's method and path; the client calls no path the
// document does not list; and src/operations.ts is what the generator makes of the
// document now.
//
//   node --test tests/clients/typescript/generated.test.mjs
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {test} from 'node:test';

import {docPath, importClient, packageDir} from './harness.mjs';

const {Client, OPERATIONS} = await importClient();
const doc = JSON.parse(fs.readFileSync(docPath, 'utf8'));
const documented = new Map();  // operationId -> {method, path}
for (const [p, methods] of Object.entries(doc.paths))
  for (const [m, op] of Object.entries(methods)) documented.set(op.operationId, {method: m.toUpperCase(), path: p});
const camel = (s) => s.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

test('every operation of the document has its method, calling its method and path', () => {
  for (const [id, {method, path: p}] of documented) {
    const name = camel(id);
    assert.equal(typeof Client.prototype[name], 'function', `${id}: no method ${name}`);
    assert.deepEqual(OPERATIONS[name] && [OPERATIONS[name].method, OPERATIONS[name].path],
                     [method, p], `${name} does not call ${method} ${p}`);
  }
});

test('the client calls no path the document does not list', () => {
  for (const [name, spec] of Object.entries(OPERATIONS)) {
    assert.equal(name, camel(spec.operationId));
    const listed = documented.get(spec.operationId);
    assert.deepEqual(listed && [listed.method, listed.path], [spec.method, spec.path],
                     `${name}: ${spec.method} ${spec.path} is not in the document`);
  }
});

test('src/operations.ts is what scripts/generate.mjs makes of the document', () => {
  execFileSync(process.execPath, [path.join(packageDir, 'scripts/generate.mjs'), '--check', '--doc', docPath],
               {stdio: 'pipe'});
});
