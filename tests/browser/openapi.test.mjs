#!/usr/bin/env node
// docs/openapi.json is a valid OpenAPI 3.1 document, by a maintained
// validator of the OpenAPI schemas (@seriousme/openapi-schema-validator,
// pinned by package-lock.json) -- and the validator is not a rubber stamp:
// copies of the document broken in three ways must each fail.
//
//   node tests/browser/openapi.test.mjs --doc docs/openapi.json

import fs from 'node:fs';
import path from 'node:path';
import {Validator} from '@seriousme/openapi-schema-validator';

const argv = process.argv.slice(2);
const file = path.resolve(argv[argv.indexOf('--doc') + 1] || 'docs/openapi.json');
const doc = JSON.parse(fs.readFileSync(file, 'utf8'));

async function check(spec) {
  const v = new Validator();
  return v.validate(structuredClone(spec));
}

const res = await check(doc);
if (!res.valid) {
  console.error(`FAIL: ${file} is not valid OpenAPI:\n${JSON.stringify(res.errors, null, 2).slice(0, 4000)}`);
  process.exit(1);
}
if (!String(doc.openapi).startsWith('3.1')) {
  console.error(`FAIL: ${file} says openapi ${doc.openapi}, want 3.1.x`);
  process.exit(1);
}

const broken = {
  'no info': (d) => { delete d.info; },
  'a response without a description': (d) => { delete d.paths['/v1/percepts'].get.responses['200'].description; },
  'a parameter in nowhere': (d) => { d.paths['/v1/percepts'].get.parameters[0].in = 'nowhere'; },
};
for (const [what, breakIt] of Object.entries(broken)) {
  const copy = structuredClone(doc);
  breakIt(copy);
  if ((await check(copy)).valid) {
    console.error(`FAIL: the validator accepts a document with ${what}`);
    process.exit(1);
  }
}
console.log(`ok: ${file} is valid OpenAPI ${doc.openapi}; ${Object.keys(broken).length} broken copies refused`);
