// The one error type of the client.

/**
 * Every failure: an error answer of the runtime (`{"error": {code, message}}`
 * with its HTTP status), and a failure to get one (status 0, code
 * `transport`, `timeout` or `aborted`; `cause` holds what fetch threw).
 */
export class LimbicError extends Error {
  /** limbic's stable code (docs/api.md, "Errors"): invalid_argument, not_found, already_exists, ... */
  readonly code: string;
  /** the HTTP status; 0 when no answer came */
  readonly status: number;
  /** seconds the runtime asked to wait (Retry-After), if it did */
  readonly retryAfter?: number;

  constructor(code: string, message: string, status: number, options: {cause?: unknown; retryAfter?: number} = {}) {
    super(message, options.cause === undefined ? undefined : {cause: options.cause});
    this.name = 'LimbicError';
    this.code = code;
    this.status = status;
    if (options.retryAfter !== undefined) this.retryAfter = options.retryAfter;
  }
}

/** The LimbicError an error answer stands for; a body that is not limbic's JSON error becomes `http_<status>`. */
export async function errorFromResponse(res: Response): Promise<LimbicError> {
  const text = await res.text().catch(() => '');
  const header = res.headers.get('retry-after');
  const retryAfter = header !== null && /^\d+$/.test(header.trim()) ? Number(header) : undefined;
  try {
    const error = (JSON.parse(text) as {error?: {code?: unknown; message?: unknown}}).error;
    if (error && typeof error.code === 'string')
      return new LimbicError(error.code, String(error.message ?? ''), res.status, {retryAfter});
  } catch {
    // not JSON: below
  }
  return new LimbicError(`http_${res.status}`, text.slice(0, 1000) || res.statusText, res.status, {retryAfter});
}
