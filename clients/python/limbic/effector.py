"""Helpers for an exec effector (docs/adapters.md, "Exec effector protocol").

limbic runs an exec effector once per delivery attempt of an outbox action: the action's
payload on stdin (one JSON object and a newline), the action in the environment
(LIMBIC_IDEMPOTENCY_KEY, LIMBIC_ACTION_ID, LIMBIC_ACTION_TYPE, LIMBIC_ATTEMPT,
LIMBIC_THREAD_ID), and the exit status as the outcome: 0 complete (stdout becomes the
action's result), 75 retry later, anything else dead.

    from limbic import effector

    def send(action):
        post_to_chat(action.payload["text"], dedup_key=action.key)
        return {"sent": True}                  # printed as JSON: the action's result

    effector.run(send)

A handler answers by returning (complete; a dict or list is printed as JSON, a string as
is), or by raising `effector.Retry` (exit 75) or `effector.Fail` (permanent). Any other
exception is a retry, its message on stderr: a bug or an outage should not lose the action.
Delivery is at least once: make the effect idempotent on `action.key`.
"""

import json
import os
import sys
from typing import Any, Callable, Dict, Optional

__all__ = ["Action", "Retry", "Fail", "run", "read_action",
           "EX_OK", "EX_USAGE", "EX_DATAERR", "EX_TEMPFAIL"]

EX_OK = 0
EX_USAGE = 64      # misconfigured: permanent
EX_DATAERR = 65    # the payload is not what the effector takes: permanent
EX_TEMPFAIL = 75   # try again after the outbox backoff


class Retry(Exception):
    """Not now: limbic tries again after its backoff (exit 75), dead after max_attempts."""


class Fail(Exception):
    """Never: the action goes dead at once (exit `status`, 65 by default)."""

    def __init__(self, message: str, status: int = EX_DATAERR):
        super().__init__(message)
        self.status = status


class Action:
    """One delivery attempt: the payload and what the environment says of the action."""

    def __init__(self, payload: Dict[str, Any], env: Optional[Dict[str, str]] = None):
        env = os.environ if env is None else env
        self.payload = payload
        #: the same on every attempt of this action, across restarts of limbic
        self.key = env.get("LIMBIC_IDEMPOTENCY_KEY", "")
        self.id = env.get("LIMBIC_ACTION_ID", "")
        self.type = env.get("LIMBIC_ACTION_TYPE", "")
        self.attempt = int(env.get("LIMBIC_ATTEMPT", "1") or 1)
        self.thread_id = env.get("LIMBIC_THREAD_ID") or None

    def __repr__(self) -> str:
        return f"Action(id={self.id!r}, type={self.type!r}, attempt={self.attempt})"


def read_action(stdin=None, env: Optional[Dict[str, str]] = None) -> Action:
    """The action of this attempt; Fail when the payload is not a JSON object, or when the
    program was not started by limbic (no LIMBIC_IDEMPOTENCY_KEY)."""
    env = os.environ if env is None else env
    if not env.get("LIMBIC_IDEMPOTENCY_KEY"):
        raise Fail("LIMBIC_IDEMPOTENCY_KEY is not set (run me as a limbic exec effector)",
                   EX_USAGE)
    text = (stdin or sys.stdin).read()
    try:
        payload = json.loads(text) if text.strip() else {}
    except ValueError as e:
        raise Fail(f"the payload is not JSON: {e}")
    if not isinstance(payload, dict):
        raise Fail("the payload is not a JSON object")
    return Action(payload, env)


def run(handler: Callable[[Action], Any], *, name: Optional[str] = None) -> None:
    """Reads the action, calls `handler(action)`, and exits with the outcome's status."""
    sys.exit(_outcome(handler, name or os.path.basename(sys.argv[0] or "effector")))


def _outcome(handler: Callable[[Action], Any], name: str) -> int:
    try:
        action = read_action()
        result = handler(action)
    except Retry as e:
        return _say(name, EX_TEMPFAIL, f"retry: {e}")
    except Fail as e:
        return _say(name, e.status, str(e))
    except Exception as e:  # noqa: BLE001 -- an unexpected failure is retried, not lost
        return _say(name, EX_TEMPFAIL, f"{type(e).__name__}: {e}")
    if result is not None:
        print(result if isinstance(result, str) else json.dumps(result), flush=True)
    return EX_OK


def _say(name: str, status: int, message: str) -> int:
    print(f"{name}: {message}", file=sys.stderr, flush=True)
    return status
