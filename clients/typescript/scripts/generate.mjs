#!/usr/bin/env node
// Writes src/operations.ts from limbic's OpenAPI document (docs/openapi.json,
// made from runtime/api/operations.h): the table OPERATIONS (one entry per
// operation: method, path, parameters, body, timeout), a type for each
// operation's fields and answer, the records of components/schemas, and the
// class Operations with one method per operation, named after its
// operationId in camelCase (add_percept -> addPercept). Nothing in it is
// written by hand: after the document changes, run
//
//   npm run generate            (or: node scripts/generate.mjs [--doc PATH] [--check])
//
// and commit src/operations.ts. --check writes nothing and fails when the
// file is not what the document gives (a test runs it).
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const flag = (name) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : undefined; };
const docPath = path.resolve(flag('--doc') ?? path.join(here, '../../../docs/openapi.json'));
const outPath = path.join(here, '../src/operations.ts');
const check = argv.includes('--check');

const doc = JSON.parse(fs.readFileSync(docPath, 'utf8'));
const schemas = {...(doc.components?.schemas ?? {})};

const camel = (s) => s.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
const pascal = (s) => camel(s).replace(/^./, (c) => c.toUpperCase());
const ident = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const key = (k) => (ident.test(k) ? k : JSON.stringify(k));
const comment = (text, pad) => (text ? `${pad}/** ${String(text).replace(/\*\//g, '*\\/').replace(/\s+/g, ' ')} */\n` : '');

// A JSON Schema (the subset the document uses) as a TypeScript type. `open`:
// objects take other keys too (answers may carry more than the document
// names). Depth is bounded: the document is data from outside.
function tsType(s, pad = '', open = true, depth = 0) {
  if (depth > 32) throw new Error('schema nested deeper than 32');
  if (s === undefined || s === true || s === null || typeof s !== 'object') return 'unknown';
  if (s.$ref) return s.$ref.replace('#/components/schemas/', '');
  const alts = s.oneOf ?? s.anyOf;
  if (alts) return alts.map((a) => tsType(a, pad, open, depth + 1)).join(' | ');
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (Array.isArray(s.type)) return s.type.map((t) => tsType({...s, type: t}, pad, open, depth + 1)).join(' | ');
  switch (s.type) {
    case 'string': return 'string';
    case 'integer': case 'number': return 'number';
    case 'boolean': return 'boolean';
    case 'null': return 'null';
    case 'array': {
      const item = tsType(s.items, pad, open, depth + 1);
      return /[|&]/.test(item) ? `Array<${item}>` : `${item}[]`;
    }
    case 'object': return objectType(s, pad, open, depth + 1);
    default: return 'unknown';
  }
}

function objectType(s, pad, open, depth) {
  const props = Object.entries(s.properties ?? {});
  if (!props.length) return s.maxProperties === 0 ? 'Record<string, never>' : 'Record<string, unknown>';
  const required = new Set(s.required ?? []);
  const inner = pad + '  ';
  let out = '{\n';
  for (const [name, p] of props)
    out += comment(p.description, inner) + `${inner}${key(name)}${required.has(name) ? '' : '?'}: ${tsType(p, inner, open, depth)};\n`;
  if (open) out += `${inner}[key: string]: unknown;\n`;
  return out + `${pad}}`;
}

// The fields a method takes: path and query parameters and the body's own.
function fieldsType(entry) {
  const {op} = entry;
  const props = {}, required = [];
  for (const p of op.parameters ?? []) {
    // A list parameter ("comma-separated") also takes an array.
    props[p.name] = p.in === 'query' && /comma-separated/.test(p.description ?? '')
      ? {oneOf: [p.schema, {type: 'array', items: {type: 'string'}}], description: p.description}
      : {...p.schema, description: p.description};
    if (p.required) required.push(p.name);
  }
  const body = entry.body?.schema;
  const bodyProps = body?.properties;
  for (const [name, p] of Object.entries(bodyProps ?? {})) {
    if (name in props && name !== 'id') throw new Error(`${entry.operationId}: body field ${name} is also a parameter`);
    if (!(name in props)) props[name] = p;
  }
  if (bodyProps && entry.body.required) required.push(...(body.required ?? []));
  const named = Object.keys(props).length
    ? objectType({properties: props, required}, '', false, 1) : null;
  // An opaque body (a reflex rule, a webhook's JSON, an export): its keys are
  // the fields beside the parameters.
  const opaque = body && !bodyProps && body.maxProperties !== 0;
  const text = named && opaque ? `${named} & Record<string, unknown>`
             : opaque ? 'Record<string, unknown>' : named ?? 'Record<string, never>';
  return {text, optional: required.length === 0};
}

function answerType(entry) {
  const types = [];
  for (const [status, r] of Object.entries(entry.op.responses ?? {})) {
    if (!/^2\d\d$/.test(status)) continue;
    const content = r.content ?? {};
    const json = content['application/json'];
    const t = json ? tsType(json.schema) : Object.keys(content).length ? 'string' : 'unknown';
    if (!types.includes(t)) types.push(t);
  }
  return types.length ? types.join(' | ') : 'unknown';
}

// ---- the operations, in the document's order of paths -----------------------

const entries = [];
const seen = new Set();
for (const [p, methods] of Object.entries(doc.paths)) {
  for (const [m, op] of Object.entries(methods)) {
    if (!['get', 'put', 'post', 'patch', 'delete'].includes(m)) continue;
    if (!op.operationId) throw new Error(`${m.toUpperCase()} ${p} has no operationId`);
    entries.push({operationId: op.operationId, method: m, path: p, op});
    seen.add(op.operationId);
  }
}
for (const e of entries) {
  const json = e.op.requestBody?.content?.['application/json'];
  e.body = json ? {schema: json.schema, required: Boolean(e.op.requestBody.required)} : null;
  e.name = camel(e.operationId);
  e.type = pascal(e.operationId);
  e.stream = Boolean(e.op.responses?.['200']?.content?.['text/event-stream']);
}
const names = new Set();
for (const e of entries) {
  if (names.has(e.name)) throw new Error(`two operations are named ${e.name}`);
  names.add(e.name);
}

// ---- the file ----------------------------------------------------------------

let out = `// Generated by scripts/generate.mjs from docs/openapi.json (OpenAPI ${doc.openapi}, ` +
          `limbic ${doc.info?.version}): do not edit. Run \`npm run generate\` after the document changes.\n\n`;
out += `import type {LimbicEvent, RequestOptions} from './types.js';\n\n`;

out += '// ---- records (components/schemas) ----\n\n';
for (const [name, s] of Object.entries(schemas)) {
  if (name === 'Error') continue;  // LimbicError carries it
  out += comment(s.description ?? `${name}: a record as the API answers it (docs/openapi.json, components/schemas).`, '');
  out += `export type ${name} = ${tsType(s, '', true)};\n\n`;
}

out += '// ---- each operation\'s fields and answer ----\n\n';
for (const e of entries) {
  out += `/** ${e.method.toUpperCase()} ${e.path}: the fields of ${e.name} (path and query parameters, body fields). */\n`;
  out += `export type ${e.type}Fields = ${fieldsType(e).text};\n`;
  if (!e.stream) out += `/** What ${e.name} answers. */\nexport type ${e.type}Result = ${answerType(e)};\n`;
  out += '\n';
}

out += `/** How to call one operation: the table every method goes through. */
export interface OperationSpec {
  /** the document's operationId (snake_case, as the MCP tool is named) */
  readonly operationId: string;
  readonly method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';
  /** the path template, e.g. /v1/percepts/{id} */
  readonly path: string;
  /** the fields that go in the path */
  readonly pathParams: readonly string[];
  /** the fields that go in the query string */
  readonly queryParams: readonly string[];
  /** 'none': no body; 'fields': the other fields; 'opaque': the other fields are the body whatever they are */
  readonly body: 'none' | 'fields' | 'opaque';
  /** a body is sent even without fields */
  readonly bodyRequired: boolean;
  /** the answer is text/event-stream */
  readonly stream: boolean;
  /** the runtime's own time limit for it (x-limbic-mcp timeout_ms), if any */
  readonly timeoutMs?: number;
}

/** Every operation, by method name. */
export const OPERATIONS = {\n`;
for (const e of entries) {
  const params = e.op.parameters ?? [];
  const spec = {
    operationId: e.operationId, method: e.method.toUpperCase(), path: e.path,
    pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
    queryParams: params.filter((p) => p.in === 'query').map((p) => p.name),
    body: !e.body ? 'none' : e.body.schema.properties || e.body.schema.maxProperties === 0 ? 'fields' : 'opaque',
    bodyRequired: Boolean(e.body?.required),
    stream: e.stream,
  };
  const timeout = e.op['x-limbic-mcp']?.timeout_ms;
  if (timeout) spec.timeoutMs = timeout;
  out += `  ${e.name}: ${JSON.stringify(spec).replace(/"(\w+)":/g, '$1: ').replace(/,(?=[a-zA-Z])/g, ', ')},\n`;
}
out += '} as const satisfies Record<string, OperationSpec>;\n\n';
out += '/** A method name of the client: a key of OPERATIONS. */\nexport type OperationName = keyof typeof OPERATIONS;\n\n';

out += `/**
 * One method per operation; each sends its fields through \`call\` with the
 * operation's entry in OPERATIONS. The Client implements \`call\` and \`stream\`.
 */
export abstract class Operations {
  /** Sends one request and answers its parsed body; throws LimbicError. */
  protected abstract call(spec: OperationSpec, fields: object | undefined, options?: RequestOptions): Promise<unknown>;
  /** Reads a text/event-stream operation as events, resuming after a dropped connection. */
  protected abstract stream(spec: OperationSpec, fields: object | undefined, options?: RequestOptions):
      AsyncIterableIterator<LimbicEvent>;
`;
for (const e of entries) {
  const {optional} = fieldsType(e);
  const summary = e.op.summary ?? e.op.description ?? e.operationId;
  out += `\n  /** ${summary.replace(/\*\//g, '*\\/')} (${e.method.toUpperCase()} ${e.path}) */\n`;
  const arg = `fields${optional ? '?' : ''}: ${e.type}Fields, options?: RequestOptions`;
  if (e.stream) {
    out += `  ${e.name}(${arg}): AsyncIterableIterator<LimbicEvent> {\n` +
           `    return this.stream(OPERATIONS.${e.name}, fields, options);\n  }\n`;
  } else {
    out += `  ${e.name}(${arg}): Promise<${e.type}Result> {\n` +
           `    return this.call(OPERATIONS.${e.name}, fields, options) as Promise<${e.type}Result>;\n  }\n`;
  }
}
out += '}\n';

if (check) {
  const now = fs.existsSync(outPath) ? fs.readFileSync(outPath, 'utf8') : '';
  if (now !== out) {
    console.error(`generate --check: ${path.relative(process.cwd(), outPath)} is not what ${docPath} gives: run npm run generate`);
    process.exit(1);
  }
  console.log(`generate --check: ${entries.length} operations, up to date`);
} else {
  fs.writeFileSync(outPath, out);
  console.log(`generate: ${entries.length} operations -> ${path.relative(process.cwd(), outPath)}`);
}
