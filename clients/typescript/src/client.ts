// The Client: one request path (call) for every generated method, and the
// event stream (stream) that resumes where it left off.
import {LimbicError, errorFromResponse} from './errors.js';
import {Operations, type OperationSpec} from './operations.js';
import {readSse} from './sse.js';
import type {ClientOptions, EventsOptions, LimbicEvent, RequestOptions} from './types.js';

const DEFAULT_URL = 'http://127.0.0.1:7077';
const MAX_DELAY_MS = 5000;
const DEFAULT_TIMEOUT_MS = 30000;

/** The environment's variable `name` where there is one (Node), else undefined (a browser). */
function env(name: string): string | undefined {
  const proc = (globalThis as {process?: {env?: Record<string, string | undefined>}}).process;
  const value = proc?.env?.[name];
  return value ? value : undefined;
}

/** Resolves after `ms`, or rejects as soon as `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted(signal));
    const onAbort = () => { clearTimeout(timer); reject(aborted(signal!)); };
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    signal?.addEventListener('abort', onAbort, {once: true});
  });
}

function aborted(signal: AbortSignal): LimbicError {
  return new LimbicError('aborted', 'the request was aborted', 0, {cause: signal.reason});
}

/** A query value as text: arrays joined by commas (a list parameter), the rest as JSON has them. */
function queryValue(value: unknown): string {
  return Array.isArray(value) ? value.map(String).join(',') : String(value);
}

/** True when sending `body` twice cannot write twice: it names its record (`id`) or its delivery (`idempotency_key`). */
function namesItself(body: unknown): boolean {
  if (!body || typeof body !== 'object') return false;
  const b = body as Record<string, unknown>;
  if (b.id || b.idempotency_key) return true;
  // A batch: a retry with the same ids is safe (already_exists per item).
  return Array.isArray(b.percepts) && b.percepts.length > 0 &&
         b.percepts.every((p) => Boolean(p && typeof p === 'object' && (p as {id?: unknown}).id));
}

/** Statuses after which trying again may help. */
const TRANSIENT = new Set([429, 502, 503, 504]);

/**
 * A client of one limbic runtime's HTTP API (docs/api.md). Every operation of
 * docs/openapi.json is a method named after its operationId in camelCase,
 * taking one object of fields (path and query parameters and body fields):
 *
 *   const limbic = new Client({url: 'http://127.0.0.1:7077', token});
 *   const {id} = await limbic.addPercept({source: 'chat', type: 'message', text: 'hi'});
 *   for await (const event of limbic.events({after: 0})) console.log(event.seq, event.type);
 *
 * Failures throw LimbicError. A request is tried again (with backoff) after a
 * transport failure, a timeout or a 429/502/503/504 only when repeating it is
 * safe: a GET, or a write whose body carries `id` or `idempotency_key` (every
 * percept of a batch an `id`). Other writes are tried again only when the
 * runtime refused them before reading them (connection refused, 429, or a 503
 * with Retry-After). Safe to share between concurrent callers.
 */
export class Client extends Operations {
  /** the API's base URL, without a trailing slash */
  readonly url: string;
  readonly #token?: string;
  readonly #timeout?: number;
  readonly #retries: number;
  readonly #retryDelay: number;
  readonly #idleTimeout: number;
  readonly #actor?: string;
  readonly #fetch: typeof fetch;

  constructor(options: ClientOptions = {}) {
    super();
    this.url = (options.url ?? env('LIMBIC_URL') ?? DEFAULT_URL).replace(/\/+$/, '');
    this.#token = options.token ?? env('LIMBIC_API_TOKEN');
    this.#timeout = options.timeout;
    this.#retries = options.retries ?? 2;
    this.#retryDelay = options.retryDelay ?? 200;
    this.#idleTimeout = options.idleTimeout ?? 45000;
    this.#actor = options.actor;
    const f = options.fetch ?? globalThis.fetch;
    if (typeof f !== 'function') throw new LimbicError('unavailable', 'no fetch: Node >= 18 or a browser is needed', 0);
    this.#fetch = f.bind(globalThis);
  }

  /**
   * The events after `after` (default 0), then live ones, as they are
   * written; only `types` when given. After a dropped connection, a runtime
   * restart or a silent stream it reconnects (with backoff, for as long as it
   * takes) and goes on after the last seq it yielded: no gap, no repeat.
   * Ends when `signal` aborts or the loop breaks; throws LimbicError on an
   * answer that retrying cannot mend (400, 401, 404, ...).
   */
  events(options: EventsOptions = {}): AsyncIterableIterator<LimbicEvent> {
    const fields: Record<string, unknown> = {};
    if (options.after !== undefined) fields.after = options.after;
    if (options.types !== undefined && options.types.length) fields.type = options.types;
    return this.eventStream(fields, {signal: options.signal, retries: options.retries});
  }

  // ---- one request -------------------------------------------------------------

  protected override async call(spec: OperationSpec, fields: object | undefined,
                                options: RequestOptions = {}): Promise<unknown> {
    const {target, body} = this.#request(spec, fields, options);
    const safe = spec.method === 'GET' || namesItself(body);
    const retries = options.retries ?? this.#retries;
    // A long-poll (?wait=SECONDS) holds the request that much longer; a call's own timeout is the whole.
    const wait = Number((fields as {wait?: unknown} | undefined)?.wait ?? 0) * 1000;
    const timeout = options.timeout ?? (this.#timeout ?? spec.timeoutMs ?? DEFAULT_TIMEOUT_MS) + (wait > 0 ? wait : 0);
    for (let attempt = 0; ; attempt++) {
      let error: LimbicError;
      let again: boolean;
      try {
        const res = await this.#send(spec.method, target, body, options, timeout, 'application/json');
        if (res.ok) return await this.#parse(res);
        error = await errorFromResponse(res);
        again = TRANSIENT.has(res.status) &&
                (safe || res.status === 429 || (res.status === 503 && error.retryAfter !== undefined));
      } catch (e) {
        error = e as LimbicError;
        const refused = (error.cause as {cause?: {code?: string}} | undefined)?.cause?.code === 'ECONNREFUSED';
        again = error.code !== 'aborted' && (safe || refused);
      }
      if (!again || attempt >= retries) throw error;
      await sleep(this.#delay(attempt, error.retryAfter), options.signal);
    }
  }

  /** The URL (path and query from the fields) and the body (the other fields) of one call. */
  #request(spec: OperationSpec, fields: object | undefined, options: RequestOptions) {
    const rest: Record<string, unknown> = {...(fields ?? {})};
    const path = spec.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = rest[name];
      delete rest[name];
      if (value === undefined || value === null || value === '')
        throw new LimbicError('invalid_argument', `${spec.operationId}: field ${name} is required (it is in the path)`, 0);
      return encodeURIComponent(String(value));
    });
    const query = new URLSearchParams();
    for (const name of spec.queryParams) {
      const value = rest[name];
      delete rest[name];
      if (value !== undefined && value !== null) query.set(name, queryValue(value));
    }
    let body: unknown;
    if (options.body !== undefined) {
      body = options.body;
    } else if (spec.body === 'none') {
      const unknown = Object.keys(rest).filter((k) => rest[k] !== undefined);
      if (unknown.length)
        throw new LimbicError('invalid_argument', `${spec.operationId}: unknown field ${unknown.join(', ')}; it takes ` +
                              ([...spec.pathParams, ...spec.queryParams].join(', ') || 'none'), 0);
    } else if (Object.keys(rest).length || spec.bodyRequired) {
      body = rest;
    }
    const qs = query.toString();
    return {target: `${this.url}${path}${qs ? `?${qs}` : ''}`, body};
  }

  /** One fetch, bounded by `timeout` ms and `options.signal`; a failure to get an answer is a LimbicError. */
  async #send(method: string, target: string, body: unknown, options: RequestOptions, timeout: number,
              accept: string, headers: Record<string, string> = {}, controller = new AbortController()):
      Promise<Response> {
    const h: Record<string, string> = {Accept: accept, ...headers, ...options.headers};
    if (this.#token) h.Authorization = `Bearer ${this.#token}`;
    const actor = options.actor ?? this.#actor;
    if (actor) h['X-Limbic-Actor'] = actor;
    if (options.reason) h['X-Limbic-Reason'] = options.reason;
    if (body !== undefined) h['Content-Type'] = 'application/json';
    const signal = options.signal;
    if (signal?.aborted) throw aborted(signal);
    const onAbort = () => controller.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, {once: true});
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; controller.abort(); }, timeout);
    try {
      return await this.#fetch(target, {method, headers: h, signal: controller.signal, redirect: 'follow',
                                        body: body === undefined ? undefined : JSON.stringify(body)});
    } catch (e) {
      if (timedOut) throw new LimbicError('timeout', `${method} ${target}: no answer within ${timeout} ms`, 0, {cause: e});
      if (signal?.aborted) throw aborted(signal);
      const why = (e as {cause?: {code?: string; message?: string}}).cause;
      throw new LimbicError('transport', `${method} ${target}: ${why?.code ?? why?.message ?? (e as Error).message}`, 0,
                            {cause: e});
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** A success's body: JSON parsed, other types as text, nothing as undefined. */
  async #parse(res: Response): Promise<unknown> {
    const text = await res.text();
    if (!/\bjson\b/.test(res.headers.get('content-type') ?? '')) return text;
    if (!text) return undefined;
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new LimbicError('internal', `the answer is not JSON: ${text.slice(0, 200)}`, res.status, {cause: e});
    }
  }

  /** Milliseconds to wait before try `attempt + 1`: the runtime's Retry-After, else doubling with jitter. */
  #delay(attempt: number, retryAfter?: number): number {
    if (retryAfter !== undefined) return Math.min(retryAfter * 1000, MAX_DELAY_MS);
    const ms = Math.min(this.#retryDelay * 2 ** attempt, MAX_DELAY_MS);
    return ms / 2 + Math.random() * (ms / 2);
  }

  // ---- the event stream -------------------------------------------------------

  protected override async *stream(spec: OperationSpec, fields: object | undefined,
                                   options: RequestOptions = {}): AsyncIterableIterator<LimbicEvent> {
    const f = {...(fields ?? {})} as Record<string, unknown>;
    let last = Number(f.after ?? 0);
    if (!Number.isInteger(last) || last < 0)
      throw new LimbicError('invalid_argument', `${spec.operationId}: after must be a seq (an integer >= 0)`, 0);
    const signal = options.signal;
    // Connections that fail in a row before the stream gives up (default: never).
    const retries = options.retries ?? Infinity;
    let error: LimbicError | undefined;
    for (let failures = 0; ; failures++) {
      if (signal?.aborted) return;
      if (error && failures > retries) throw error;
      if (failures > 0) {
        try {
          await sleep(this.#delay(Math.min(failures - 1, 5), error?.retryAfter), signal);
        } catch {
          return;
        }
      }
      // Each connection has its own controller: a silent one is aborted and opened again.
      const connection = new AbortController();
      const {target} = this.#request(spec, {...f, after: last}, options);
      let res: Response;
      try {
        res = await this.#send('GET', target, undefined, options, options.timeout ?? this.#timeout ?? DEFAULT_TIMEOUT_MS,
                               'text/event-stream',
                               last > 0 ? {'Last-Event-ID': String(last)} : {}, connection);
      } catch (e) {
        error = e as LimbicError;
        if (error.code === 'aborted') return;
        continue;  // the runtime is down or restarting: again, after a while
      }
      if (!res.ok) {
        error = await errorFromResponse(res);
        if (TRANSIENT.has(res.status)) continue;
        throw error;
      }
      if (!res.body) throw new LimbicError('internal', 'the event stream has no body', res.status);
      error = new LimbicError('transport', `${target}: the event stream ended`, 0);
      failures = 0;
      // The connection ends when the caller aborts, or when it has been silent too long.
      const onAbort = () => connection.abort();
      signal?.addEventListener('abort', onAbort, {once: true});
      let idle: ReturnType<typeof setTimeout> | undefined;
      const alive = () => {
        clearTimeout(idle);
        idle = setTimeout(() => connection.abort(), this.#idleTimeout);
      };
      alive();
      try {
        for await (const message of readSse(res.body, alive)) {
          let event: LimbicEvent;
          try {
            event = JSON.parse(message.data) as LimbicEvent;
          } catch {
            continue;  // not an event (the runtime sends none such)
          }
          const seq = Number(message.id ?? event.seq);
          if (!(seq > last)) continue;  // never twice
          last = seq;
          // While the caller holds the event the stream is not read: its silence is not the runtime's.
          clearTimeout(idle);
          yield event;
          alive();
        }
      } catch {
        // dropped, or silent for too long: reconnect below
      } finally {
        clearTimeout(idle);
        signal?.removeEventListener('abort', onAbort);
        connection.abort();
      }
      if (signal?.aborted) return;
    }
  }
}
