"""Client: limbic's HTTP API as Python methods (docs/api.md, docs/openapi.json).

    import limbic
    client = limbic.Client()                       # LIMBIC_URL, or the state dir's api.json
    receipt = client.add_percept(source="chat", type="message", text="hello")
    for event in client.events(types=["percept_arrived"]):
        ...

The methods, one per operation of the document, are generated into _operations.py
(generate.py); this file is their transport:

- **Where.** `url`, else $LIMBIC_URL, else the `url` of <state>/api.json, which a running
  `limbic run` writes (state: the `state` argument, else $LIMBIC_STATE, else ./limbic-data,
  as the command line finds it); a file whose pid is gone is not trusted. A URL found in
  api.json is looked up again after a connection fails, so a client follows a runtime that
  restarted on another port. Nothing found: http://127.0.0.1:7077, the default api.port.
- **Token.** `token`, else $LIMBIC_API_TOKEN, else api.json's `token` if it holds one; sent
  as `Authorization: Bearer`.
- **Timeouts.** Every request has one: `timeout` seconds if given, else 30, or longer where
  the document says the operation may take longer (x-limbic-mcp's timeout_ms: ingest,
  recall); plus the long-poll's `wait`.
- **Retries** (`retries`, default 3, with exponential backoff and Retry-After) only where
  a second attempt cannot do a thing twice: reads (GET), and writes that carry an `id` or an
  `idempotency_key` (a batch: every percept with an `id`) -- after no answer, a 429, a 503
  or a 502/504. Any request is sent again when nothing of it was sent (connection refused),
  on a 429, and on a 503 that says nothing was done (all but "outcome unknown:"). A 4xx is
  never retried otherwise.
- **Errors.** Every non-2xx answer raises LimbicError (errors.py), also no answer at all
  (TransportError, status 0, code "unavailable").

One kept-alive connection per thread; a Client may be shared by threads. Each `events()`
iterator holds a connection of its own.
"""

import http.client
import json
import os
import random
import socket
import threading
import time
import urllib.parse
from typing import Any, Dict, Iterable, Iterator, Optional, Tuple, Union

from . import errors
from ._operations import DETAILS, OPERATIONS, Event, Operations
from .errors import LimbicError, TransportError

__all__ = ["Client", "DEFAULT_URL", "find_api"]

#: Where `limbic run` listens by default (api.address:api.port).
DEFAULT_URL = "http://127.0.0.1:7077"
#: Seconds to wait for an answer unless the Client says otherwise.
DEFAULT_TIMEOUT = 30.0
VERSION = "0.1.0"
_USER_AGENT = "limbic-python/" + VERSION
# A kept-alive connection idle longer than this is not reused: the server closes idle
# ones after api.idle_timeout (60 s by default).
_MAX_IDLE_S = 30.0
_NO_BODY = object()


def find_api(state: Optional[str] = None) -> Dict[str, Any]:
    """The contents of <state>/api.json when a live runtime wrote it, else {}.

    `state` defaults to $LIMBIC_STATE, else ./limbic-data. The file is
    {"pid", "url", "body_limit"}; one whose pid is not running is stale (left by a crash).
    """
    state = state or os.environ.get("LIMBIC_STATE") or "./limbic-data"
    try:
        with open(os.path.join(state, "api.json"), encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or not isinstance(doc.get("url"), str):
        return {}
    pid = doc.get("pid")
    if isinstance(pid, int) and pid > 0:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return {}
        except PermissionError:
            pass  # alive, someone else's
    return doc


class _Refused(Exception):
    """Nothing of the request was sent (connect failed): any request may be sent again."""


class _NoAnswer(Exception):
    """The request went (or may have gone) out and no answer came back."""


class Client(Operations):
    """limbic's HTTP API. See the module's docstring for where, token, timeouts, retries."""

    def __init__(self, url: Optional[str] = None, token: Optional[str] = None,
                 timeout: Optional[float] = None, retries: int = 3, *, state: Optional[str] = None,
                 actor: Optional[str] = None, backoff: float = 0.25, max_backoff: float = 5.0):
        """
        Args:
            url: the API's base URL, e.g. http://127.0.0.1:7077 (see the module docstring).
            token: api.token, sent as `Authorization: Bearer`.
            timeout: seconds for a request's answer (connect, send, each read); by default
                30, or longer for an operation the document says may take longer.
            retries: attempts after the first, where a retry is safe.
            state: the state dir whose api.json names the URL (default $LIMBIC_STATE).
            actor: sent as X-Limbic-Actor: who the events written are recorded as.
            backoff, max_backoff: the first wait between attempts, doubled up to this.
        """
        self._state = state
        self._from_api_file = False
        api = {}
        if url:
            self._url_source = "the url argument"
        elif os.environ.get("LIMBIC_URL"):
            url, self._url_source = os.environ["LIMBIC_URL"], "$LIMBIC_URL"
        else:
            api = find_api(state)
            if api:
                url, self._from_api_file = api["url"], True
                self._url_source = "api.json"
            else:
                url, self._url_source = DEFAULT_URL, "the default (no LIMBIC_URL, no api.json)"
        self._set_url(url)
        if token is None:
            token = os.environ.get("LIMBIC_API_TOKEN") or api.get("token") or None
        self.token = token
        #: None: DEFAULT_TIMEOUT, or an operation's own when longer
        self.timeout = None if timeout is None else float(timeout)
        self.retries = max(0, int(retries))
        self.actor = actor
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._local = threading.local()
        self._open = set()  # every thread's kept-alive connection, for close()
        self._lock = threading.Lock()

    # ---- where -----------------------------------------------------------------------

    def _set_url(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"limbic: not an http(s) URL: {url!r} (from {self._url_source})")
        self.url = url.rstrip("/")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._prefix = parts.path.rstrip("/")

    def _refresh_url(self) -> None:
        """After a failed connection: api.json again, when that is where the URL came from."""
        if self._from_api_file:
            api = find_api(self._state)
            if api and api["url"].rstrip("/") != self.url:
                self._set_url(api["url"])

    def __repr__(self) -> str:
        return f"limbic.Client({self.url!r})"

    def close(self) -> None:
        """Closes the kept-alive connections (a later call opens a new one)."""
        with self._lock:
            conns, self._open = self._open, set()
        for conn in conns:
            conn.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 -- at interpreter exit anything may be gone
            pass

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- one operation ---------------------------------------------------------------

    def _call(self, op: str, path: Optional[Dict[str, str]] = None,
              query: Optional[Dict[str, Any]] = None, body: Any = _NO_BODY,
              body_required: bool = False) -> Any:
        """Sends operation `op` of OPERATIONS and reads its answer as DETAILS says."""
        method, template = OPERATIONS[op]
        kind, hint, result_statuses = DETAILS[op]
        target = self._target(template, path, query)
        payload = None
        if body is not _NO_BODY and (body_required or body not in (None, {})):
            payload = {} if body is None else body
        timeout = max(DEFAULT_TIMEOUT, hint) if self.timeout is None else self.timeout
        if query and isinstance(query.get("wait"), (int, float)):
            timeout += query["wait"]  # a long-poll answers at its deadline
        status, headers, data, attempts = self._send(method, target, payload, timeout,
                                                     _safe(method, payload))
        if status in (301, 302, 307, 308) and method == "GET" and \
                headers.get("location", "").startswith("/"):
            target = headers["location"]  # the inspector's /ui -> /ui/
            status, headers, data, attempts = self._send(method, target, None, timeout, True)
        if not 200 <= status < 300 and status not in result_statuses:
            raise _error(status, headers, data, attempts)
        if kind == "text":
            return data.decode("utf-8", "replace")
        if kind == "bytes":
            return data
        if not data:
            return {}
        try:
            return json.loads(data)
        except ValueError:
            raise LimbicError("invalid_answer", f"{method} {target}: the answer is not JSON: "
                              f"{data[:200]!r}", status)

    def _target(self, template: str, path: Optional[Dict[str, str]],
                query: Optional[Dict[str, Any]]) -> str:
        target = template
        for name, value in (path or {}).items():
            target = target.replace("{" + name + "}", urllib.parse.quote(str(value), safe=""))
        pairs = [(k, _query_value(v)) for k, v in (query or {}).items() if v is not None]
        if pairs:
            target += "?" + urllib.parse.urlencode(pairs)
        return self._prefix + target

    def _headers(self, payload: Optional[bytes]) -> Dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": _USER_AGENT}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        if self.actor:
            headers["X-Limbic-Actor"] = self.actor
        if payload is not None:
            headers["Content-Type"] = "application/json"
        return headers

    def _send(self, method: str, target: str, body: Any, timeout: float,
              safe: bool) -> Tuple[int, Dict[str, str], bytes, int]:
        """One request with the retries it allows: (status, headers, body, attempts)."""
        payload = None if body is None else \
            json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        attempt = 0
        while True:
            attempt += 1
            retry_after = None
            try:
                status, headers, data = self._exchange(method, target, payload, timeout)
            except _Refused as e:
                retryable, failure = True, TransportError(self._why(e), attempts=attempt)
                self._refresh_url()
            except _NoAnswer as e:
                retryable, failure = safe, TransportError(self._why(e), attempts=attempt)
                self._refresh_url()
            else:
                if status < 400:
                    return status, headers, data, attempt
                failure = _error(status, headers, data, attempt)
                retry_after = failure.retry_after
                retryable = status == 429 or (status == 503 and (
                    safe or not failure.message.startswith("outcome unknown"))) or (
                    safe and status in (502, 504))
                if not retryable or attempt > self.retries:
                    return status, headers, data, attempt
            if not retryable or attempt > self.retries:
                raise failure
            time.sleep(self._pause(attempt, retry_after))

    def _pause(self, attempt: int, retry_after: Optional[float]) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), max(self.max_backoff, 1.0))
        wait = min(self.backoff * 2 ** (attempt - 1), self.max_backoff)
        return wait * random.uniform(0.75, 1.25)

    def _why(self, e: BaseException) -> str:
        cause = e.__cause__ or e
        text = f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
        return f"{self.url} (from {self._url_source}): {text}"

    # ---- the wire --------------------------------------------------------------------

    def _connect(self, timeout: float) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
        conn = cls(self._host, self._port, timeout=timeout)
        try:
            conn.connect()
        except OSError as e:
            conn.close()
            raise _Refused() from e
        return conn

    def _exchange(self, method: str, target: str, payload: Optional[bytes],
                  timeout: float) -> Tuple[int, Dict[str, str], bytes]:
        """One request on this thread's kept-alive connection (a fresh one when it went stale)."""
        local = self._local
        conn = getattr(local, "conn", None)
        key = (self._scheme, self._host, self._port)
        if conn is not None and (local.key != key or time.monotonic() - local.used > _MAX_IDLE_S
                                 or conn not in self._open):  # closed by close()
            self._forget(conn)
            conn = None
        reused = conn is not None
        if conn is None:
            conn = self._connect(timeout)
            with self._lock:
                self._open.add(conn)
        local.conn, local.key = None, key
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        try:
            status, headers, data, keep = _roundtrip(conn, method, target, payload,
                                                     self._headers(payload))
        except _NoAnswer as e:
            self._forget(conn)
            # The server closes a connection idle too long, or one it needs for another,
            # before reading a request on it: with no byte of an answer, send it again once.
            if reused and isinstance(e.__cause__, (http.client.RemoteDisconnected,
                                                   ConnectionResetError, BrokenPipeError)):
                return self._exchange(method, target, payload, timeout)
            raise
        if keep:
            local.conn, local.used = conn, time.monotonic()
        else:
            self._forget(conn)
        return status, headers, data

    def _forget(self, conn: http.client.HTTPConnection) -> None:
        conn.close()
        with self._lock:
            self._open.discard(conn)

    # ---- the event stream ------------------------------------------------------------

    def events(self, after: Union[int, str, None] = None,
               types: Union[str, Iterable[str], None] = None,
               *, reconnect: bool = True, give_up_after: Optional[float] = None,
               read_timeout: Optional[float] = None) -> Iterator[Event]:
        """The events after `after` (default: all), then live ones, from GET /v1/events/stream.

        Each item is an event as docs/events.md describes it (`seq`, `type`, `ts`, ...).
        When the connection drops or the runtime restarts, the iterator connects again and
        resumes after the last seq it yielded: no gap and no repeat. It waits as long as it
        takes unless `give_up_after` seconds pass without a connection (then it raises the
        last TransportError or Unavailable); `reconnect=False` ends it at the first drop.
        A 4xx (a bad `types`, a wrong token) raises at once.

        Args:
            after: a seq; events after it. None: from the start of the log; "now": only
                events written from now on (after the log's last seq at the call).
            types: only these event types (a list, or comma-separated).
            read_timeout: seconds without a byte (not even the server's keep-alive, every
                api.sse_keepalive) before the stream counts as dropped; default
                max(timeout, 45).
        """
        if types is not None and not isinstance(types, str):
            types = ",".join(types)  # once: every reconnection sends the same
        if after == "now":  # at the call, not at the first next()
            after = self.events_since(limit=1)["last_seq"]
        return self._events(after, types, reconnect, give_up_after,
                            read_timeout or max(self.timeout or DEFAULT_TIMEOUT, 45.0))

    def _events(self, last: Optional[int], types: Union[str, Iterable[str], None],
                reconnect: bool, give_up_after: Optional[float],
                read_timeout: float) -> Iterator[Event]:
        failures, down_since = 0, None
        while True:
            query = {"after": last, "type": types}
            target = self._target(OPERATIONS["event_stream"][1], None, query)
            conn = None
            try:
                conn, resp = self._open_stream(target, last, read_timeout)
            except LimbicError as e:
                retryable = e.status in (0, 429, 502, 503, 504)
                now = time.monotonic()
                down_since = down_since or now
                if not (reconnect and retryable) or (
                        give_up_after is not None and now - down_since > give_up_after):
                    raise
                failures += 1
                time.sleep(self._pause(failures, e.retry_after))
                self._refresh_url()
                continue
            failures, down_since = 0, None
            try:
                for seq, event in _read_sse(resp):
                    if last is not None and seq <= last:
                        continue  # never again what was yielded
                    last = seq
                    yield event
            except (OSError, http.client.HTTPException, _NoAnswer):
                pass  # dropped: connect again below
            finally:
                conn.close()
            if not reconnect:
                return

    def _open_stream(self, target: str, last: Optional[int],
                     read_timeout: float) -> Tuple[http.client.HTTPConnection, Any]:
        try:
            conn = self._connect(self.timeout or DEFAULT_TIMEOUT)
        except _Refused as e:
            raise TransportError(self._why(e)) from e
        headers = self._headers(None)
        headers["Accept"] = "text/event-stream"
        if last is not None:
            headers["Last-Event-ID"] = str(last)
        try:
            conn.request("GET", target, headers=headers)
            resp = conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise TransportError(self._why(e)) from e
        if resp.status != 200:
            try:
                data = resp.read()
            except (OSError, http.client.HTTPException):
                data = b""
            conn.close()
            raise _error(resp.status, _lower(resp.getheaders()), data, 1)
        if conn.sock is not None:
            conn.sock.settimeout(read_timeout)
        return conn, resp


# ---- helpers ---------------------------------------------------------------------------


def _safe(method: str, body: Any) -> bool:
    """May this request be sent twice? Reads, and writes naming what they write."""
    if method in ("GET", "HEAD"):
        return True
    if not isinstance(body, dict):
        return False
    if body.get("id") or body.get("idempotency_key"):
        return True
    items = body.get("percepts")  # the batch: every item with an id
    return bool(items) and isinstance(items, list) and set(body) == {"percepts"} and all(
        isinstance(p, dict) and p.get("id") for p in items)


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, set, frozenset)):
        return ",".join(str(v) for v in value)
    return str(value)


def _lower(headers) -> Dict[str, str]:
    return {k.lower(): v for k, v in headers}


def _roundtrip(conn: http.client.HTTPConnection, method: str, target: str,
               payload: Optional[bytes], headers: Dict[str, str]):
    """Sends one request and reads its answer whole: (status, headers, body, keep-alive)."""
    try:
        conn.request(method, target, body=payload, headers=headers)
    except (OSError, http.client.HTTPException) as e:
        # The server may have answered and closed before reading all of a big body (413):
        # its answer is still there to read.
        try:
            resp = conn.getresponse()
        except (OSError, http.client.HTTPException):
            raise _NoAnswer() from e
    else:
        try:
            resp = conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            raise _NoAnswer() from e
    try:
        data = resp.read()
    except (OSError, http.client.HTTPException) as e:
        raise _NoAnswer() from e
    return resp.status, _lower(resp.getheaders()), data, not resp.will_close


def _error(status: int, headers: Dict[str, str], data: bytes, attempts: int) -> LimbicError:
    code, message = f"http_{status}", data[:300].decode("utf-8", "replace")
    try:
        err = json.loads(data)["error"]
        code, message = str(err["code"]), str(err["message"])
    except (ValueError, KeyError, TypeError):
        pass
    retry_after = None
    try:
        retry_after = float(headers.get("retry-after", ""))
    except ValueError:
        pass
    return errors.error_for(status, code, message, attempts=attempts, retry_after=retry_after)


def _read_sse(resp) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """(seq, event) of each SSE message: `id: SEQ`, `event: TYPE`, `data: JSON`, a blank line.

    Comments (`: keepalive`) are skipped; a message whose data is not a JSON object with a
    seq is skipped too. Ends at the end of the stream; a read timeout raises OSError.
    """
    event_id, data = None, []
    while True:
        try:
            raw = resp.readline()
        except socket.timeout as e:
            raise OSError("no byte within the read timeout") from e
        if not raw:
            return
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if data:
                try:
                    event = json.loads("\n".join(data))
                    seq = int(event_id) if event_id is not None else int(event["seq"])
                except (ValueError, KeyError, TypeError):
                    event = None
                if isinstance(event, dict):
                    yield seq, event
            event_id, data = None, []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "id":
            event_id = value
        elif name == "data":
            data.append(value)
