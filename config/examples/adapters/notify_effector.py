#!/usr/bin/env python3
"""A limbic exec effector: appends each action to a JSON-lines file, once.

    notify_effector.py FILE

Written on the Python client's effector helper (clients/python, limbic.effector), which
speaks the adapter protocol (docs/adapters.md): limbic runs this program once per
delivery attempt with the action's payload (one JSON object and a newline) on stdin and
the action in the environment (LIMBIC_IDEMPOTENCY_KEY, the same on every attempt of one
action; LIMBIC_ACTION_ID, LIMBIC_ACTION_TYPE, LIMBIC_ATTEMPT, LIMBIC_THREAD_ID), and the
exit status is the outcome. The handler returns the result (printed as JSON: the action's
result), raises effector.Retry (exit 75: limbic tries again with backoff) or
effector.Fail (a permanent failure: the action goes dead): 64 when misconfigured, 65
when the payload is not a JSON object. Delivery is at-least-once, so a key already in
FILE is not appended again and the attempt still succeeds.
"""

import datetime
import fcntl
import json
import os
import sys

# The repository's client beside this example, else an installed `limbic` package.
_CLIENT = os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..",
                       "clients", "python")
if os.path.isdir(os.path.join(_CLIENT, "limbic")):
    sys.path.insert(0, _CLIENT)
from limbic import effector  # noqa: E402


def notify(action):
    if len(sys.argv) != 2:
        raise effector.Fail("usage: notify_effector.py FILE", effector.EX_USAGE)
    path = sys.argv[1]
    record = {
        "key": action.key,
        "action": action.id,
        "type": action.type,
        "attempt": action.attempt,
        "at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds"),
        "payload": action.payload,
    }
    try:
        with open(path, "a+", encoding="utf-8") as f:
            # Deliveries run concurrently (the effector's "concurrency"): one at a time here.
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0)
            for line in f:
                try:
                    if json.loads(line).get("key") == action.key:
                        return {"duplicate": True}
                except (ValueError, AttributeError):
                    continue  # a line someone else wrote
            f.write(json.dumps(record, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        raise effector.Retry(f"cannot append to {path}: {e.strerror}")
    return {"appended": True}


if __name__ == "__main__":
    effector.run(notify, name="notify")
