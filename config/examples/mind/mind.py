#!/usr/bin/env python3
"""A limbic mind of the exec kind: answers each message it is woken for.

    mind.py          (run by limbic, never by hand: see docs/mind.md)

The exec protocol (docs/mind.md, "The exec kind"): limbic starts this
program when the mind wakes, with the wake as one JSON object on stdin

    {session, mind, reason, trigger, thread_id, percept_ids, percepts,
     budget, context: <the GET /v1/context bundle>}

and in the environment LIMBIC_URL (the API), LIMBIC_ACTOR ("mind:<name>"),
LIMBIC_MIND_SESSION ("m-<seq>") and LIMBIC_API_TOKEN (when api.token is
set). It acts through the HTTP API like any client, naming itself and its
session on every request, so each event it causes says who and why. Each
line it prints that is a JSON object {text, tokens_in, tokens_out, model}
becomes a mind_step event; anything else on stdout, and all of stderr, goes
to limbic's log. Exit 0: the session ends "exited"; anything else: "error".

This mind stands in for a model and is deterministic: for each percept it
was woken for (or the focused thread's unanswered ones) it takes the
percept's thread, or creates one, enqueues a reply to the `reply` effector,
marks the percept processed and completes the thread. Its "tokens" are made
up the same way every time: a quarter of the bytes it read and wrote.

Everything it does may be done twice without harm: a session that was
killed is never resumed, and the next one may find half of its work done.
The reply's action id is made from the percept's ("reply-<percept id>"), so
a second reply to one percept is refused (409) and taken as done.
Standard library only.
"""

import json
import os
import sys
import urllib.error
import urllib.request

MODEL = "mind.py"
EFFECTOR = "reply"  # the config's effector that carries replies


def log(message):
    print(f"mind.py: {message}", file=sys.stderr, flush=True)


def tokens(n_bytes):
    """The made-up token count of n_bytes of text: bytes / 4, as limbic counts."""
    return n_bytes // 4


def step(text, read, written):
    """Prints one step: limbic records it as a mind_step event."""
    line = {"text": text, "tokens_in": tokens(read), "tokens_out": tokens(written), "model": MODEL}
    sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.flush()  # a pipe is block-buffered: each step goes out as it happens


class Api:
    """The limbic HTTP API, as this session: every request names its actor and reason."""

    def __init__(self):
        self.base = os.environ["LIMBIC_URL"].rstrip("/")
        self.session = os.environ["LIMBIC_MIND_SESSION"]
        self.headers = {
            "Content-Type": "application/json",
            "X-Limbic-Actor": os.environ["LIMBIC_ACTOR"],
            "X-Limbic-Reason": f"session {self.session}",
        }
        token = os.environ.get("LIMBIC_API_TOKEN", "")
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.read = 0     # bytes of answers
        self.written = 0  # bytes of request bodies

    def call(self, method, path, body=None):
        """(status, answer as JSON) of one request; raises only when limbic cannot be reached."""
        data = None if body is None else json.dumps(body).encode()
        headers = self.headers if data is not None else {
            k: v for k, v in self.headers.items() if k != "Content-Type"}
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        self.written += len(data or b"")
        try:
            with urllib.request.urlopen(request, timeout=20) as answer:
                status, text = answer.status, answer.read()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read()
        self.read += len(text)
        try:
            return status, json.loads(text or b"{}")
        except ValueError:
            return status, {"error": {"code": "not_json", "message": text[:200].decode(errors="replace")}}

    def must(self, method, path, body=None, allow=()):
        """The answer of a request that must succeed (or end in a status of `allow`)."""
        status, answer = self.call(method, path, body)
        if status >= 300 and status not in allow:
            raise RuntimeError(f"{method} {path}: {status} {json.dumps(answer)}")
        return status, answer


def percepts_to_answer(wake, api):
    """The ids of the percepts this session is for, in the order it answers them."""
    if wake.get("percept_ids"):
        return list(wake["percept_ids"])  # woken by them (or given them)
    context = wake.get("context") or {}
    unprocessed = [p["id"] for p in context.get("thread_percepts") or [] if p.get("id")]
    if unprocessed:
        return unprocessed  # the focused thread's unprocessed percepts
    # An explicit wake or a reflex's may name neither: take what attention offers.
    _, attention = api.must("GET", "/v1/attention")
    return [p["id"] for p in (attention.get("unassigned") or [])[:1]]


def answer(pid, wake, api):
    """Replies to one percept: (the step's text, its thread or None)."""
    # The wake's `percepts` are as they were at the wake; read it now, since
    # an earlier session (or a human) may have dealt with it since.
    status, percept = api.call("GET", f"/v1/percepts/{pid}")
    if status == 404:
        return f"{pid} is gone: nothing to answer", None
    if status >= 300:
        raise RuntimeError(f"GET /v1/percepts/{pid}: {status} {json.dumps(percept)}")
    if percept.get("status") in ("processed", "dropped"):
        return f"{pid} is {percept['status']} already", None
    text = percept.get("text") or f"a {percept.get('type', 'percept')}"

    # The percept's own thread, else the focused thread woken for, else a new one.
    thread_id = percept.get("thread_id")
    how = f"on its thread {thread_id}"
    if not thread_id and wake.get("trigger") == "thread" and wake.get("thread_id"):
        thread_id = wake["thread_id"]
        api.must("POST", f"/v1/percepts/{pid}/assign", {"thread_id": thread_id})
        how = f"on the focused thread {thread_id}"
    if not thread_id:
        _, made = api.must("POST", "/v1/threads", {
            "goal": f"answer {percept.get('source', 'someone')}: {text[:200]}",
            "salience": 0.6, "from_percept": pid})
        thread_id = made["id"]
        how = f"on a new thread {thread_id}"

    reply = {"text": f"Received: {text[:500]}", "to": percept.get("source"), "percept": pid}
    status, _ = api.must("POST", "/v1/actions", {
        "id": f"reply-{pid}", "effector": EFFECTOR, "type": "reply", "payload": reply,
        "idempotency_key": f"reply-{pid}", "thread_id": thread_id, "percept_id": pid},
        allow=(409,))
    sent = "enqueued" if status < 300 else "enqueued by an earlier session"
    api.must("POST", f"/v1/percepts/{pid}/process", {})
    return f"answered {pid} {how}: reply-{pid} {sent}, the percept processed", thread_id


def complete(thread_id, answered, api):
    """Completes a thread whose percepts are answered; the step's text."""
    status, _ = api.must("PATCH", f"/v1/threads/{thread_id}",
                         {"status": "complete", "outcome": "replied to " + ", ".join(answered)},
                         allow=(404, 409))
    if status >= 300:
        return f"thread {thread_id} was complete or gone already"
    return f"completed thread {thread_id}"


def main():
    raw = sys.stdin.read()
    try:
        wake = json.loads(raw)
    except ValueError as e:
        log(f"the wake on stdin is not JSON: {e}")
        return 1
    api = Api()
    ids = percepts_to_answer(wake, api)
    step(f"woken ({wake.get('trigger')}: {wake.get('reason')}); "
         f"{len(ids)} percept(s) to answer: {', '.join(ids) or 'none'}",
         len(raw) + api.read, api.written)
    threads = {}  # thread id -> the percepts answered on it, in order
    for pid in ids:
        read, written = api.read, api.written
        text, thread_id = answer(pid, wake, api)
        if thread_id:
            threads.setdefault(thread_id, []).append(pid)
        step(text, api.read - read, api.written - written)
    for thread_id, answered in threads.items():
        read, written = api.read, api.written
        text = complete(thread_id, answered, api)
        step(text, api.read - read, api.written - written)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, OSError, KeyError) as e:
        log(str(e))  # the session ends "error" with this in limbic's log
        sys.exit(1)
