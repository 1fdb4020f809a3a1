#!/usr/bin/env python3
"""A limbic exec effector: appends each action to a JSON-lines file, once.

    notify_effector.py FILE

The adapter protocol (docs/adapters.md): limbic runs this program once per
delivery attempt with the action's payload (one JSON object and a newline)
on stdin and the action in the environment:

    LIMBIC_IDEMPOTENCY_KEY  the same on every attempt of one action
    LIMBIC_ACTION_ID, LIMBIC_ACTION_TYPE, LIMBIC_ATTEMPT, LIMBIC_THREAD_ID

The exit code is the outcome: 0 delivered (stdout becomes the action's
result), 75 (EX_TEMPFAIL) try again with backoff, anything else a permanent
failure (the action goes dead). Delivery is at-least-once, so a key already
in FILE is not appended again and the attempt still succeeds.
Standard library only.
"""

import datetime
import fcntl
import json
import os
import sys

EX_OK = 0
EX_USAGE = 64     # misconfigured: permanent
EX_DATAERR = 65   # the payload is not a JSON object: permanent
EX_TEMPFAIL = 75  # the file cannot be written now: limbic retries


def fail(code, message):
    print(f"notify: {message}", file=sys.stderr)
    return code


def main():
    if len(sys.argv) != 2:
        return fail(EX_USAGE, "usage: notify_effector.py FILE")
    path = sys.argv[1]
    key = os.environ.get("LIMBIC_IDEMPOTENCY_KEY", "")
    if not key:
        return fail(EX_USAGE, "LIMBIC_IDEMPOTENCY_KEY is not set (run me as a limbic exec effector)")
    try:
        payload = json.loads(sys.stdin.read())
    except ValueError as e:
        return fail(EX_DATAERR, f"the payload is not JSON: {e}")
    if not isinstance(payload, dict):
        return fail(EX_DATAERR, "the payload is not a JSON object")

    record = {
        "key": key,
        "action": os.environ.get("LIMBIC_ACTION_ID", ""),
        "type": os.environ.get("LIMBIC_ACTION_TYPE", ""),
        "attempt": int(os.environ.get("LIMBIC_ATTEMPT", "1") or 1),
        "at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds"),
        "payload": payload,
    }
    try:
        with open(path, "a+", encoding="utf-8") as f:
            # Deliveries run concurrently (the effector's "concurrency"): one at a time here.
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0)
            for line in f:
                try:
                    if json.loads(line).get("key") == key:
                        print(json.dumps({"duplicate": True}))
                        return EX_OK
                except (ValueError, AttributeError):
                    continue  # a line someone else wrote
            f.write(json.dumps(record, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        return fail(EX_TEMPFAIL, f"cannot append to {path}: {e.strerror}")
    print(json.dumps({"appended": True}))
    return EX_OK


if __name__ == "__main__":
    sys.exit(main())
