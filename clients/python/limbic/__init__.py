"""limbic: the Python client of limbic's HTTP API, and helpers for exec adapters.

    import limbic
    client = limbic.Client()                 # $LIMBIC_URL, or the state dir's api.json
    client.add_percept(source="chat", type="message", text="hello")

- `Client`: one method per operation of docs/openapi.json (client.py, _operations.py),
  `events()` over the event stream, resuming with no gap or repeat.
- `LimbicError` and its subclasses (errors.py): every failure.
- `limbic.sensor`, `limbic.effector`: exec sensors and effectors (docs/adapters.md).

Standard library only; Python 3.9 or later.
"""

from . import effector, sensor
from ._operations import API_VERSION, OPERATIONS
from ._operations import Action, Arousal, Event, Percept, Receipt, Reflex, Thread
from .client import DEFAULT_URL, VERSION, Client, find_api
from .errors import (BadRequest, Conflict, Forbidden, LimbicError, MethodNotAllowed, NotFound,
                     PayloadTooLarge, ServerError, TooManyRequests, TransportError,
                     Unauthorized, Unavailable, UnsupportedMediaType)

__version__ = VERSION

__all__ = [
    "Client", "find_api", "DEFAULT_URL", "OPERATIONS", "API_VERSION",
    "LimbicError", "BadRequest", "Unauthorized", "Forbidden", "NotFound", "MethodNotAllowed",
    "Conflict", "PayloadTooLarge", "UnsupportedMediaType", "TooManyRequests", "ServerError",
    "Unavailable", "TransportError",
    "Action", "Arousal", "Event", "Percept", "Receipt", "Reflex", "Thread",
    "sensor", "effector",
]
