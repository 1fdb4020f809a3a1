// The options and shapes the generated methods and the Client share.

/** One event of the log, as GET /v1/events and the event stream carry it (docs/events.md). */
export interface LimbicEvent {
  /** its place in the log: 1, 2, 3, ... with no gaps */
  seq: number;
  /** when it was written (RFC 3339) */
  ts: string;
  /** what happened, e.g. percept_arrived */
  type: string;
  [key: string]: unknown;
}

/** How the Client reaches the runtime. Every field has a default. */
export interface ClientOptions {
  /** the API's base URL; default LIMBIC_URL when the environment has it, else http://127.0.0.1:7077 */
  url?: string;
  /** api.token, sent as `Authorization: Bearer TOKEN`; default LIMBIC_API_TOKEN when the environment has it */
  token?: string;
  /** milliseconds a request may take (a long-poll's `wait` comes on top); default: the operation's own limit in the document (x-limbic-mcp timeout_ms: 120 s for recall, 600 s for ingest, ...), else 30000 */
  timeout?: number;
  /** how many times a request that is safe to repeat is tried again after a failure; default 2 */
  retries?: number;
  /** milliseconds before the first retry, doubled each time (with jitter, at most 5000); default 200 */
  retryDelay?: number;
  /** the X-Limbic-Actor header of every request: who is writing (docs/api.md, "Who and why") */
  actor?: string;
  /** milliseconds an event stream may stay silent before it is reopened; default 45000 (api.sse_keepalive is 15 s) */
  idleTimeout?: number;
  /** a fetch to use instead of the global one */
  fetch?: typeof fetch;
}

/** Per call: what the Client's options say, for one request. */
export interface RequestOptions {
  /** aborts the request (and its retries, or the event stream) */
  signal?: AbortSignal;
  /** milliseconds for this request, a long-poll's wait included */
  timeout?: number;
  /** retries for this request (still only when it is safe to repeat); for an event stream, the failed connections in a row it bears before it throws (default: no end) */
  retries?: number;
  /** the X-Limbic-Actor header */
  actor?: string;
  /** the X-Limbic-Reason header: the reason of every event the request writes that has none of its own */
  reason?: string;
  /** more headers */
  headers?: Record<string, string>;
  /** the request body as is, instead of the fields that are not parameters (e.g. a webhook's JSON that has a `name`) */
  body?: unknown;
}

/** What Client.events takes. */
export interface EventsOptions {
  /** the events after this seq (default 0: the whole log, then live ones) */
  after?: number;
  /** only these event types */
  types?: string | readonly string[];
  /** ends the iteration */
  signal?: AbortSignal;
  /** failed connections in a row before the iteration throws the last error (default: it never gives up) */
  retries?: number;
}
