"""LimbicError: every failure of a call, with limbic's error code, message and HTTP status.

A non-2xx answer carries `{"error": {"code", "message"}}` (docs/api.md, "Errors"); the
exception is the subclass for its status, so `except limbic.NotFound` reads as prose. A
request that got no answer at all (refused, reset, timed out) is a `TransportError`: status
0, code "unavailable", and a subclass of `Unavailable`, as a 503 is.
"""

from typing import Dict, Optional, Type


class LimbicError(Exception):
    """A failed call: `code` (stable: invalid_argument, not_found, ...), `message`, `status`.

    `attempts` is how many times the request was sent; a `Conflict` (409 already_exists)
    after more than one attempt of a write with an `id` means the first attempt had landed.
    `retry_after` is the answer's Retry-After in seconds, when it had one.
    """

    def __init__(self, code: str, message: str, status: int = 0, *,
                 attempts: int = 1, retry_after: Optional[float] = None):
        super().__init__(f"{status} {code}: {message}" if status else f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.attempts = attempts
        self.retry_after = retry_after


class BadRequest(LimbicError):
    """400: a malformed body or parameter (invalid_argument, json_too_deep)."""


class Unauthorized(LimbicError):
    """401: a missing or wrong token (api.token)."""


class Forbidden(LimbicError):
    """403: forbidden_origin, or a path outside memory.ingest_roots."""


class NotFound(LimbicError):
    """404: an unknown path or id."""


class MethodNotAllowed(LimbicError):
    """405: a known path, another method (an older runtime without the route)."""


class Conflict(LimbicError):
    """409: already_exists, failed_precondition, or the mind's busy/budget/off."""


class PayloadTooLarge(LimbicError):
    """413: a body over api.body_limit, or a batch over api.batch_limit."""


class UnsupportedMediaType(LimbicError):
    """415: a body that is not JSON."""


class TooManyRequests(LimbicError):
    """429: this client holds its share of connections or streams (Retry-After)."""


class ServerError(LimbicError):
    """500 and other 5xx: the runtime's fault; its log says more."""


class Unavailable(LimbicError):
    """503: the runtime cannot take it now (shutting down, full queue, a refused disk write)."""


class TransportError(Unavailable):
    """No answer: the connection was refused, reset or timed out (status 0)."""

    def __init__(self, message: str, **kwargs):
        super().__init__("unavailable", message, 0, **kwargs)


_BY_STATUS: Dict[int, Type[LimbicError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 405: MethodNotAllowed,
    409: Conflict, 413: PayloadTooLarge, 415: UnsupportedMediaType, 429: TooManyRequests,
    503: Unavailable,
}


def error_for(status: int, code: str, message: str, **kwargs) -> LimbicError:
    """The exception of an answer's status."""
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else LimbicError)
    return cls(code, message, status, **kwargs)
