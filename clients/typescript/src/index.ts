// @limbic/client: a client of limbic's HTTP API (docs/api.md, docs/clients.md).
export {Client} from './client.js';
export {LimbicError} from './errors.js';
export {readSse, type SseMessage} from './sse.js';
export * from './operations.js';
export type {ClientOptions, EventsOptions, LimbicEvent, RequestOptions} from './types.js';
