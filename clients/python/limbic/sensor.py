"""Helpers for an exec sensor (docs/adapters.md, "Exec sensor protocol").

An exec sensor is a long-running program whose stdout lines are percepts: one JSON object
per line, flushed (a pipe is block-buffered), each what POST /v1/percepts accepts.
limbic stops it with SIGTERM and restarts it when it exits.

    from limbic import sensor

    def watch():
        while True:
            for item in poll():
                yield {"id": item.key, "source": "feed", "type": "item", "text": item.title}
            time.sleep(10)

    sensor.run(watch)            # or sensor.emit({...}) line by line

Diagnostics go to stderr (`sensor.log`), which limbic copies into its log.
"""

import json
import signal
import sys
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, TextIO

__all__ = ["emit", "log", "run", "PERCEPT_KEYS"]

#: The keys a line may hold (docs/adapters.md); any other makes limbic refuse the line.
PERCEPT_KEYS = frozenset({"id", "source", "type", "intensity", "text", "data", "thread_id"})


def emit(percept: Mapping[str, Any], out: Optional[TextIO] = None) -> None:
    """Writes one percept as one line of compact JSON and flushes it.

    Raises ValueError for a key limbic would refuse, so the mistake shows here and not as
    a skipped line in limbic's log.
    """
    unknown = set(percept) - PERCEPT_KEYS
    if unknown:
        raise ValueError(f"percept keys {sorted(unknown)} are not among {sorted(PERCEPT_KEYS)}")
    out = out or sys.stdout
    out.write(json.dumps(dict(percept), separators=(",", ":"), ensure_ascii=False) + "\n")
    out.flush()


def log(message: str, name: Optional[str] = None) -> None:
    """A diagnostic line on stderr (limbic logs it as `sensor NAME: <line>`)."""
    print(f"{name}: {message}" if name else message, file=sys.stderr, flush=True)


def run(percepts: Callable[[], Iterable[Dict[str, Any]]], *, out: Optional[TextIO] = None) -> None:
    """Emits every percept `percepts()` yields; exits quietly on SIGTERM and a closed stdout.

    Does not return: exits with status 0 when the iterable ends or limbic stops the sensor
    (limbic starts an exited sensor again after its restart_backoff).
    """
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        for percept in percepts():
            emit(percept, out)
    except BrokenPipeError:  # limbic went away: nobody is listening
        _quiet_stdout()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


def _quiet_stdout() -> None:
    # Python flushes stdout again at exit; a closed pipe would print a second error.
    try:
        sys.stdout = open("/dev/null", "w")
    except OSError:
        pass
