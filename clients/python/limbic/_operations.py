"""The operations of limbic's HTTP API: generated from docs/openapi.json.

Do not edit: run `python3 clients/python/generate.py` after the document changes.
"""
# fmt: off
# flake8: noqa

from typing import Any, Dict, Iterator, List, Literal, Optional, Tuple, TypedDict, Union

#: The document's version (info.version) these methods were made from.
API_VERSION = "0.1.0"

#: operationId -> (HTTP method, path template): one entry per operation.
OPERATIONS: Dict[str, Tuple[str, str]] = {
    "health": ("GET", "/healthz"),
    "metrics": ("GET", "/metrics"),
    "ui": ("GET", "/ui"),
    "ui_file_1": ("GET", "/ui/{p1}"),
    "ui_file_2": ("GET", "/ui/{p1}/{p2}"),
    "ui_file_3": ("GET", "/ui/{p1}/{p2}/{p3}"),
    "ui_file_4": ("GET", "/ui/{p1}/{p2}/{p3}/{p4}"),
    "list_actions": ("GET", "/v1/actions"),
    "enqueue_action": ("POST", "/v1/actions"),
    "prune_actions": ("POST", "/v1/actions/prune"),
    "get_action": ("GET", "/v1/actions/{id}"),
    "approve_action": ("POST", "/v1/actions/{id}/approve"),
    "reject_action": ("POST", "/v1/actions/{id}/reject"),
    "retry_action": ("POST", "/v1/actions/{id}/retry"),
    "archive_blink": ("POST", "/v1/archive/blink"),
    "archive_day": ("GET", "/v1/archive/days/{date}"),
    "archive_walk": ("GET", "/v1/archive/days/{date}/walk"),
    "archive_recall": ("GET", "/v1/archive/recall"),
    "archive_rollup": ("POST", "/v1/archive/rollup"),
    "archive_search": ("GET", "/v1/archive/search"),
    "archive_stats": ("GET", "/v1/archive/stats"),
    "archive_verify": ("GET", "/v1/archive/verify"),
    "get_arousal": ("GET", "/v1/arousal"),
    "put_arousal": ("PUT", "/v1/arousal"),
    "set_arousal": ("PATCH", "/v1/arousal"),
    "attention": ("GET", "/v1/attention"),
    "consolidate": ("POST", "/v1/consolidate"),
    "context": ("GET", "/v1/context"),
    "events_since": ("GET", "/v1/events"),
    "event_stream": ("GET", "/v1/events/stream"),
    "fork": ("POST", "/v1/fork"),
    "relate": ("POST", "/v1/memory/associations"),
    "decay": ("POST", "/v1/memory/decay"),
    "embed": ("POST", "/v1/memory/embed"),
    "remember_episode": ("POST", "/v1/memory/episodes"),
    "export_memory": ("GET", "/v1/memory/export"),
    "remember_fact": ("POST", "/v1/memory/facts"),
    "forget": ("POST", "/v1/memory/forget"),
    "import_memory": ("POST", "/v1/memory/import"),
    "ingest": ("POST", "/v1/memory/ingest"),
    "recall": ("POST", "/v1/memory/recall"),
    "related": ("GET", "/v1/memory/related"),
    "memory_stats": ("GET", "/v1/memory/stats"),
    "get_memory": ("GET", "/v1/memory/{id}"),
    "get_mind": ("GET", "/v1/mind"),
    "list_mind_sessions": ("GET", "/v1/mind/sessions"),
    "get_mind_session": ("GET", "/v1/mind/sessions/{id}"),
    "sleep_mind": ("POST", "/v1/mind/sleep"),
    "wake_mind": ("POST", "/v1/mind/wake"),
    "openapi": ("GET", "/v1/openapi.json"),
    "list_percepts": ("GET", "/v1/percepts"),
    "add_percept": ("POST", "/v1/percepts"),
    "add_percepts": ("POST", "/v1/percepts/batch"),
    "get_percept": ("GET", "/v1/percepts/{id}"),
    "remove_percept": ("DELETE", "/v1/percepts/{id}"),
    "assign_percept": ("POST", "/v1/percepts/{id}/assign"),
    "drop_percept": ("POST", "/v1/percepts/{id}/drop"),
    "process_percept": ("POST", "/v1/percepts/{id}/process"),
    "promote": ("POST", "/v1/promote"),
    "list_reflexes": ("GET", "/v1/reflexes"),
    "get_reflex": ("GET", "/v1/reflexes/{id}"),
    "put_reflex": ("PUT", "/v1/reflexes/{id}"),
    "delete_reflex": ("DELETE", "/v1/reflexes/{id}"),
    "disable_reflex": ("POST", "/v1/reflexes/{id}/disable"),
    "enable_reflex": ("POST", "/v1/reflexes/{id}/enable"),
    "sensor_webhook": ("POST", "/v1/sensors/{name}"),
    "state_at": ("GET", "/v1/state/at"),
    "state_digest": ("GET", "/v1/state/digest"),
    "list_threads": ("GET", "/v1/threads"),
    "create_thread": ("POST", "/v1/threads"),
    "get_thread": ("GET", "/v1/threads/{id}"),
    "update_thread": ("PATCH", "/v1/threads/{id}"),
    "delete_thread": ("DELETE", "/v1/threads/{id}"),
    "why": ("GET", "/v1/why/{id}"),
    "world_consolidate": ("POST", "/v1/world/consolidate"),
    "world_entities": ("GET", "/v1/world/entities"),
    "world_entity": ("GET", "/v1/world/entity"),
    "world_extract": ("POST", "/v1/world/extract"),
    "world_neighbors": ("GET", "/v1/world/graph/neighbors"),
    "world_path": ("GET", "/v1/world/graph/path"),
    "world_memory": ("GET", "/v1/world/memory"),
    "world_surprise": ("GET", "/v1/world/surprise"),
}

#: operationId -> (how a 2xx answer is read: json|text|bytes|stream,
#: seconds the server may take: x-limbic-mcp's timeout_ms, 0 when not given,
#: other statuses answered with a result rather than an error).
DETAILS: Dict[str, Tuple[str, float, Tuple[int, ...]]] = {
    "health": ("json", 0, (503,)),
    "metrics": ("text", 0, ()),
    "ui": ("bytes", 0, ()),
    "ui_file_1": ("bytes", 0, ()),
    "ui_file_2": ("bytes", 0, ()),
    "ui_file_3": ("bytes", 0, ()),
    "ui_file_4": ("bytes", 0, ()),
    "list_actions": ("json", 30, ()),
    "enqueue_action": ("json", 30, ()),
    "prune_actions": ("json", 30, ()),
    "get_action": ("json", 30, ()),
    "approve_action": ("json", 30, ()),
    "reject_action": ("json", 30, ()),
    "retry_action": ("json", 30, ()),
    "archive_blink": ("json", 30, ()),
    "archive_day": ("json", 30, ()),
    "archive_walk": ("json", 0, ()),
    "archive_recall": ("json", 30, ()),
    "archive_rollup": ("json", 0, ()),
    "archive_search": ("json", 30, ()),
    "archive_stats": ("json", 0, ()),
    "archive_verify": ("json", 0, ()),
    "get_arousal": ("json", 30, ()),
    "put_arousal": ("json", 0, ()),
    "set_arousal": ("json", 30, ()),
    "attention": ("json", 30, ()),
    "consolidate": ("json", 30, ()),
    "context": ("json", 120, ()),
    "events_since": ("json", 30, ()),
    "event_stream": ("stream", 0, ()),
    "fork": ("json", 0, ()),
    "relate": ("json", 30, ()),
    "decay": ("json", 30, ()),
    "embed": ("json", 0, ()),
    "remember_episode": ("json", 120, ()),
    "export_memory": ("json", 0, ()),
    "remember_fact": ("json", 30, ()),
    "forget": ("json", 30, ()),
    "import_memory": ("json", 0, ()),
    "ingest": ("json", 600, ()),
    "recall": ("json", 120, ()),
    "related": ("json", 30, ()),
    "memory_stats": ("json", 30, ()),
    "get_memory": ("json", 30, ()),
    "get_mind": ("json", 30, ()),
    "list_mind_sessions": ("json", 30, ()),
    "get_mind_session": ("json", 30, ()),
    "sleep_mind": ("json", 30, ()),
    "wake_mind": ("json", 30, ()),
    "openapi": ("json", 0, ()),
    "list_percepts": ("json", 30, ()),
    "add_percept": ("json", 30, ()),
    "add_percepts": ("json", 30, ()),
    "get_percept": ("json", 30, ()),
    "remove_percept": ("json", 30, ()),
    "assign_percept": ("json", 30, ()),
    "drop_percept": ("json", 30, ()),
    "process_percept": ("json", 30, ()),
    "promote": ("json", 0, ()),
    "list_reflexes": ("json", 0, ()),
    "get_reflex": ("json", 0, ()),
    "put_reflex": ("json", 0, ()),
    "delete_reflex": ("json", 0, ()),
    "disable_reflex": ("json", 0, ()),
    "enable_reflex": ("json", 0, ()),
    "sensor_webhook": ("json", 0, ()),
    "state_at": ("json", 0, ()),
    "state_digest": ("json", 0, ()),
    "list_threads": ("json", 30, ()),
    "create_thread": ("json", 30, ()),
    "get_thread": ("json", 30, ()),
    "update_thread": ("json", 30, ()),
    "delete_thread": ("json", 30, ()),
    "why": ("json", 30, ()),
    "world_consolidate": ("json", 30, ()),
    "world_entities": ("json", 30, ()),
    "world_entity": ("json", 30, ()),
    "world_extract": ("json", 300, ()),
    "world_neighbors": ("json", 30, ()),
    "world_path": ("json", 30, ()),
    "world_memory": ("json", 30, ()),
    "world_surprise": ("json", 30, ()),
}


class _ActionRequired(TypedDict):
    effector: str
    id: str
    status: str
    type: str


class Action(_ActionRequired, total=False):
    """A Action record (components/schemas/Action)."""
    attempts: int


class _ArousalRequired(TypedDict):
    effective: float
    level: float


class Arousal(_ArousalRequired, total=False):
    """A Arousal record (components/schemas/Arousal)."""
    factors: Dict[str, Any]


class Error(TypedDict):
    """A Error record (components/schemas/Error)."""
    error: Dict[str, Any]


class Event(TypedDict):
    """A Event record (components/schemas/Event)."""
    seq: int
    ts: str
    type: str


class _PerceptRequired(TypedDict):
    id: str
    source: str
    status: str
    ts: str
    type: str


class Percept(_PerceptRequired, total=False):
    """A Percept record (components/schemas/Percept)."""
    intensity: float
    thread_id: Optional[str]


class _ReceiptRequired(TypedDict):
    events: List[Event]


class Receipt(_ReceiptRequired, total=False):
    """A Receipt record (components/schemas/Receipt)."""
    id: str
    seq: int


class _ReflexRequired(TypedDict):
    id: str


class Reflex(_ReflexRequired, total=False):
    """A Reflex record (components/schemas/Reflex)."""
    enabled: bool


class _ThreadRequired(TypedDict):
    goal: str
    id: str
    status: str


class Thread(_ThreadRequired, total=False):
    """A Thread record (components/schemas/Thread)."""
    percepts: List[str]
    salience: float


class _EnqueueActionBodyRequired(TypedDict):
    effector: str
    type: str


class EnqueueActionBody(_EnqueueActionBodyRequired, total=False):
    """The body of enqueue_action."""
    id: str
    idempotency_key: str
    payload: Any
    percept_id: str
    reason: str
    require_approval: bool
    thread_id: str


class PruneActionsBody(TypedDict, total=False):
    """The body of prune_actions."""
    older_than: str


class ApproveActionBody(TypedDict, total=False):
    """The body of approve_action."""
    reason: str


class RejectActionBody(TypedDict, total=False):
    """The body of reject_action."""
    reason: str


class RetryActionBody(TypedDict, total=False):
    """The body of retry_action."""
    reason: str


class _ArchiveBlinkBodyRequired(TypedDict):
    text: str


class ArchiveBlinkBody(_ArchiveBlinkBodyRequired, total=False):
    """The body of archive_blink."""
    metadata: Dict[str, Any]


class ArchiveRollupBody(TypedDict, total=False):
    """The body of archive_rollup."""
    date: str


class PutArousalBody(TypedDict, total=False):
    """The body of put_arousal."""
    factors: Dict[str, Any]
    level: float
    reason: str


class SetArousalBody(TypedDict, total=False):
    """The body of set_arousal."""
    factors: Dict[str, Any]
    level: float
    reason: str


class ForkBody(TypedDict, total=False):
    """The body of fork."""
    at_seq: int
    at_time: str
    into: str


class RelateBody(TypedDict):
    """The body of relate."""
    entity_a: str
    entity_b: str
    relation: str


class DecayBody(TypedDict, total=False):
    """The body of decay."""
    force: bool


class EmbedBody(TypedDict, total=False):
    """The body of embed."""
    all: bool


class _RememberEpisodeBodyRequired(TypedDict):
    text: str


class RememberEpisodeBody(_RememberEpisodeBodyRequired, total=False):
    """The body of remember_episode."""
    episode_id: str
    importance: float
    namespace: str
    tags: List[str]


class _RememberFactBodyRequired(TypedDict):
    object: str
    relation: str
    subject: str


class RememberFactBody(_RememberFactBodyRequired, total=False):
    """The body of remember_fact."""
    importance: float
    namespace: str
    tags: List[str]


class ForgetBody(TypedDict, total=False):
    """The body of forget."""
    force: bool
    id: str
    older_than: str
    subject: str


class _IngestBodyRequired(TypedDict):
    path: str


class IngestBody(_IngestBodyRequired, total=False):
    """The body of ingest."""
    episode_id: str


class _RecallBodyRequired(TypedDict):
    query: str


class RecallBody(_RecallBodyRequired, total=False):
    """The body of recall."""
    episode_id: str
    explain: bool
    include_superseded: bool
    k: int
    kind: Literal["fact", "episode", "chunk", "archive", "staged"]
    namespace: str
    reinforce: bool
    tag: str


class WakeMindBody(TypedDict, total=False):
    """The body of wake_mind."""
    reason: str
    thread_id: str


class _AddPerceptBodyRequired(TypedDict):
    source: str
    type: str


class AddPerceptBody(_AddPerceptBodyRequired, total=False):
    """The body of add_percept."""
    data: Dict[str, Any]
    id: str
    intensity: float
    text: str
    thread_id: str


class AddPerceptsBody(TypedDict):
    """The body of add_percepts."""
    percepts: List[Dict[str, Any]]


class RemovePerceptBody(TypedDict, total=False):
    """The body of remove_percept."""
    reason: str


class _AssignPerceptBodyRequired(TypedDict):
    thread_id: str


class AssignPerceptBody(_AssignPerceptBodyRequired, total=False):
    """The body of assign_percept."""
    reason: str


class DropPerceptBody(TypedDict, total=False):
    """The body of drop_percept."""
    reason: str


class ProcessPerceptBody(TypedDict, total=False):
    """The body of process_percept."""
    reason: str


class _CreateThreadBodyRequired(TypedDict):
    goal: str


class CreateThreadBody(_CreateThreadBodyRequired, total=False):
    """The body of create_thread."""
    from_percept: str
    id: str
    percepts: List[str]
    reason: str
    salience: float
    state: Dict[str, Any]
    status: Literal["active", "paused", "frozen", "complete"]


class UpdateThreadBody(TypedDict, total=False):
    """The body of update_thread."""
    add_percepts: List[str]
    outcome: str
    reason: str
    salience: float
    state: Dict[str, Any]
    status: Literal["active", "paused", "frozen", "complete"]


class DeleteThreadBody(TypedDict, total=False):
    """The body of delete_thread."""
    reason: str


class WorldExtractBody(TypedDict, total=False):
    """The body of world_extract."""
    date: str
    force: bool
    source: str
    text: str


def _fields(fields: Dict[str, Any], extra: Dict[str, Any]) -> Dict[str, Any]:
    """The body: the fields given (None = not given), then extra ones as given."""
    body = {k: v for k, v in fields.items() if v is not None}
    body.update(extra)
    return body


class Operations:
    """One method per operation; the transport is the subclass's `_call`."""

    def health(self) -> Dict[str, Any]:
        """Health: 200 while writes get through, 503 (same body) while they fail

        GET /healthz
        """
        return self._call("health")

    def metrics(self) -> str:
        """Prometheus metrics

        GET /metrics
        """
        return self._call("metrics")

    def ui(self) -> bytes:
        """The inspector (/ui redirects to /ui/)

        GET /ui
        """
        return self._call("ui")

    def ui_file_1(self, p1: str) -> bytes:
        """A file of the inspector

        GET /ui/{p1}

        Args:
            p1 (path): a segment of the file's path
        """
        return self._call("ui_file_1", path={"p1": p1})

    def ui_file_2(self, p1: str, p2: str) -> bytes:
        """A file of the inspector

        GET /ui/{p1}/{p2}

        Args:
            p1 (path): a segment of the file's path
            p2 (path): a segment of the file's path
        """
        return self._call("ui_file_2", path={"p1": p1, "p2": p2})

    def ui_file_3(self, p1: str, p2: str, p3: str) -> bytes:
        """A file of the inspector

        GET /ui/{p1}/{p2}/{p3}

        Args:
            p1 (path): a segment of the file's path
            p2 (path): a segment of the file's path
            p3 (path): a segment of the file's path
        """
        return self._call("ui_file_3", path={"p1": p1, "p2": p2, "p3": p3})

    def ui_file_4(self, p1: str, p2: str, p3: str, p4: str) -> bytes:
        """A file of the inspector

        GET /ui/{p1}/{p2}/{p3}/{p4}

        Args:
            p1 (path): a segment of the file's path
            p2 (path): a segment of the file's path
            p3 (path): a segment of the file's path
            p4 (path): a segment of the file's path
        """
        return self._call("ui_file_4", path={"p1": p1, "p2": p2, "p3": p3, "p4": p4})

    def list_actions(
        self,
        *,
        status: Optional[Literal["pending_approval", "pending", "inflight", "failed", "complete", "dead", "rejected"]] = None,
    ) -> Dict[str, Any]:
        """List outbox actions

        Outbox actions with a status, oldest first (attempts, last error, next attempt).

        GET /v1/actions

        Args:
            status (query): which (default: all)
        """
        return self._call("list_actions", query={"status": status})

    def enqueue_action(
        self,
        *,
        effector: str,
        type: str,
        id: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        payload: Optional[Any] = None,
        percept_id: Optional[str] = None,
        reason: Optional[str] = None,
        require_approval: Optional[bool] = None,
        thread_id: Optional[str] = None,
        **extra: Any,
    ) -> Receipt:
        """Queue an action

        Queue an action for a configured effector; it is delivered in the background (at least once,
        retried, deduplicated by idempotency_key).

        POST /v1/actions

        Args:
            effector (body): a configured effector's name
            id (body): a chosen id (default: generated)
            idempotency_key (body): deduplication key (default: the action id)
            payload (body): the action's JSON payload
            percept_id (body): the percept it answers
            reason (body): why (kept in the event)
            require_approval (body): wait in pending_approval until a human approves it
            thread_id (body): the thread it serves
            type (body): the action's type
            **extra: further body fields, sent as given
        """
        return self._call(
            "enqueue_action",
            body=_fields({
                "effector": effector,
                "id": id,
                "idempotency_key": idempotency_key,
                "payload": payload,
                "percept_id": percept_id,
                "reason": reason,
                "require_approval": require_approval,
                "thread_id": thread_id,
                "type": type,
            }, extra),
            body_required=True,
        )

    def prune_actions(self, *, older_than: Optional[str] = None, **extra: Any) -> Receipt:
        """Remove old complete and dead actions

        Remove complete and dead actions last updated longer ago than older_than.

        POST /v1/actions/prune

        Args:
            older_than (body): a duration (default: the runtime's outbox.retention)
            **extra: further body fields, sent as given
        """
        return self._call(
            "prune_actions",
            body=_fields({"older_than": older_than}, extra),
            body_required=False,
        )

    def get_action(self, id: str) -> Action:
        """One outbox action

        One outbox action: status, attempts, last_error, next_attempt_at.

        GET /v1/actions/{id}

        Args:
            id (path): the action id
        """
        return self._call("get_action", path={"id": id})

    def approve_action(self, id: str, *, reason: Optional[str] = None, **extra: Any) -> Receipt:
        """Approve an action

        Approve an action waiting in pending_approval: it is delivered.

        POST /v1/actions/{id}/approve

        Args:
            id (path): the action id
            reason (body): why (kept in the event)
            **extra: further body fields, sent as given
        """
        return self._call(
            "approve_action",
            path={"id": id},
            body=_fields({"reason": reason}, extra),
            body_required=False,
        )

    def reject_action(self, id: str, *, reason: Optional[str] = None, **extra: Any) -> Receipt:
        """Reject an action

        Reject an action waiting in pending_approval: it is never delivered.

        POST /v1/actions/{id}/reject

        Args:
            id (path): the action id
            reason (body): why (kept in the event)
            **extra: further body fields, sent as given
        """
        return self._call(
            "reject_action",
            path={"id": id},
            body=_fields({"reason": reason}, extra),
            body_required=False,
        )

    def retry_action(self, id: str, *, reason: Optional[str] = None, **extra: Any) -> Receipt:
        """Send a dead action again

        Send a dead action again: it is pending, its attempts start over.

        POST /v1/actions/{id}/retry

        Args:
            id (path): the action id
            reason (body): why (kept in the event)
            **extra: further body fields, sent as given
        """
        return self._call(
            "retry_action",
            path={"id": id},
            body=_fields({"reason": reason}, extra),
            body_required=False,
        )

    def archive_blink(
        self,
        *,
        text: str,
        metadata: Optional[Dict[str, Any]] = None,
        **extra: Any,
    ) -> Receipt:
        """Stage a text in the archive now

        Stage a text in the archive now, to find it again later (e.g. before a restart).

        POST /v1/archive/blink

        Args:
            metadata (body): stored with the entry
            text (body): what to keep
            **extra: further body fields, sent as given
        """
        return self._call(
            "archive_blink",
            body=_fields({"metadata": metadata, "text": text}, extra),
            body_required=True,
        )

    def archive_day(self, date: str) -> Dict[str, Any]:
        """One archived day

        One archived day's document (hash-chained).

        GET /v1/archive/days/{date}

        Args:
            date (path): YYYY-MM-DD
        """
        return self._call("archive_day", path={"date": date})

    def archive_walk(
        self,
        date: str,
        *,
        depth: Optional[int] = None,
        direction: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Walk an archived day's links

        GET /v1/archive/days/{date}/walk

        Args:
            date (path): YYYY-MM-DD
            depth (query): how far (default 1)
            direction (query): temporal (default), semantic or social
        """
        return self._call(
            "archive_walk",
            path={"date": date},
            query={"depth": depth, "direction": direction},
        )

    def archive_recall(self, *, k: Optional[int] = None) -> Dict[str, Any]:
        """The most recent context

        The most recent context: the newest staged entries, then archived days.

        GET /v1/archive/recall

        Args:
            k (query): how many (default 5)
        """
        return self._call("archive_recall", query={"k": k})

    def archive_rollup(self, *, date: Optional[str] = None, **extra: Any) -> Dict[str, Any]:
        """Roll staged days up into the archive (one date, else every day before today)

        POST /v1/archive/rollup

        Args:
            date (body): the day, YYYY-MM-DD (default: every day before today)
            **extra: further body fields, sent as given
        """
        return self._call(
            "archive_rollup",
            body=_fields({"date": date}, extra),
            body_required=False,
        )

    def archive_search(self, *, q: str, k: Optional[int] = None) -> Dict[str, Any]:
        """Search the archive

        BM25 search over archived days and staged entries, best first.

        GET /v1/archive/search

        Args:
            q (query): the query
            k (query): how many (default 5)
        """
        return self._call("archive_search", query={"q": q, "k": k})

    def archive_stats(self) -> Dict[str, Any]:
        """Counts of archived days and staged entries

        GET /v1/archive/stats
        """
        return self._call("archive_stats")

    def archive_verify(self) -> Dict[str, Any]:
        """Check the archive's hash chain

        GET /v1/archive/verify
        """
        return self._call("archive_verify")

    def get_arousal(self) -> Arousal:
        """The arousal level

        The arousal level, its factors and the effective level now.

        GET /v1/arousal
        """
        return self._call("get_arousal")

    def put_arousal(
        self,
        *,
        factors: Optional[Dict[str, Any]] = None,
        level: Optional[float] = None,
        reason: Optional[str] = None,
        **extra: Any,
    ) -> Receipt:
        """Set arousal (as PATCH)

        PUT /v1/arousal

        Args:
            factors (body): {name: value}; a null value removes the factor
            level (body): 0..1
            reason (body): why
            **extra: further body fields, sent as given
        """
        return self._call(
            "put_arousal",
            body=_fields({"factors": factors, "level": level, "reason": reason}, extra),
            body_required=True,
        )

    def set_arousal(
        self,
        *,
        factors: Optional[Dict[str, Any]] = None,
        level: Optional[float] = None,
        reason: Optional[str] = None,
        **extra: Any,
    ) -> Receipt:
        """Set arousal

        Set the arousal level and/or named factors (e.g. user_waiting: true).

        PATCH /v1/arousal

        Args:
            factors (body): {name: value}; a null value removes the factor
            level (body): 0..1
            reason (body): why
            **extra: further body fields, sent as given
        """
        return self._call(
            "set_arousal",
            body=_fields({"factors": factors, "level": level, "reason": reason}, extra),
            body_required=True,
        )

    def attention(self) -> Dict[str, Any]:
        """What to work on now

        What to work on now: arousal, the most salient active thread with its unprocessed percepts,
        and new unassigned percepts by effective intensity.

        GET /v1/attention
        """
        return self._call("attention")

    def consolidate(self, **extra: Any) -> Dict[str, Any]:
        """One consolidation pass

        One consolidation pass: expire untouched percepts, stage finished threads and old percepts
        and actions into the archive and remove them from the pools.

        POST /v1/consolidate
        """
        return self._call("consolidate", body=_fields({}, extra), body_required=False)

    def context(
        self,
        *,
        query: Optional[str] = None,
        budget_tokens: Optional[int] = None,
    ) -> Dict[str, Any]:
        """A token-budgeted context bundle

        A token-budgeted bundle for your prompt: arousal, the current thread and its percepts, the
        world-model pages of the entities named in `query` or the thread, the MEMORY.md sections
        relevant to `query`, and the memories most relevant to it; each item says its source.

        GET /v1/context

        Args:
            query (query): what the memories should be relevant to
            budget_tokens (query): token budget (default 2000)
        """
        return self._call("context", query={"query": query, "budget_tokens": budget_tokens})

    def events_since(
        self,
        *,
        after: Optional[int] = None,
        limit: Optional[int] = None,
        wait: Optional[int] = None,
        type: Optional[Union[str, List[str]]] = None,
        actor: Optional[str] = None,
        id: Optional[str] = None,
        since: Optional[str] = None,
        until: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Events after a seq (long-poll)

        Events (every change to the state) after a seq, oldest first, with last_seq to continue
        from; `wait` long-polls until one arrives.

        GET /v1/events

        Args:
            after (query): events after this seq (default 0)
            limit (query): at most this many (default 100)
            wait (query): seconds to wait for a first event (default 0, at most 60)
            type (query): only these event types, comma-separated (e.g. percept_arrived)
            actor (query): only events by this actor
            id (query): only events naming this id
            since (query): only events at or after (RFC 3339)
            until (query): only events at or before (RFC 3339)
        """
        return self._call(
            "events_since",
            query={"after": after, "limit": limit, "wait": wait, "type": type, "actor": actor, "id": id, "since": since, "until": until},
        )

    def event_stream(
        self,
        *,
        after: Optional[int] = None,
        type: Optional[Union[str, List[str]]] = None,
    ) -> Iterator[Event]:
        """Events as Server-Sent Events, from ?after= or Last-Event-ID, then live

        GET /v1/events/stream

        Args:
            after (query): events after this seq (default 0)
            type (query): only these event types, comma-separated
        """
        return self.events(after=after, types=type)

    def fork(
        self,
        *,
        at_seq: Optional[int] = None,
        at_time: Optional[str] = None,
        into: Optional[str] = None,
        **extra: Any,
    ) -> Dict[str, Any]:
        """Make a sandbox from a point of the log, under api.fork_root

        POST /v1/fork

        Args:
            at_seq (body): fork at this seq (1 or more)
            at_time (body): fork at this time: RFC 3339, or a duration before now (10m)
            into (body): a name under api.fork_root (default fork-<seq>)
            **extra: further body fields, sent as given
        """
        return self._call(
            "fork",
            body=_fields({"at_seq": at_seq, "at_time": at_time, "into": into}, extra),
            body_required=True,
        )

    def relate(
        self,
        *,
        entity_a: str,
        entity_b: str,
        relation: str,
        **extra: Any,
    ) -> Dict[str, Any]:
        """Relate two entities

        Record that two entities are related (e.g. alice / manages / bob).

        POST /v1/memory/associations

        Args:
            entity_a (body): one entity
            entity_b (body): the other entity
            relation (body): how they relate
            **extra: further body fields, sent as given
        """
        return self._call(
            "relate",
            body=_fields({
                "entity_a": entity_a,
                "entity_b": entity_b,
                "relation": relation,
            }, extra),
            body_required=False,
        )

    def decay(self, *, force: Optional[bool] = None, **extra: Any) -> Dict[str, Any]:
        """Run a decay pass

        Run a decay pass now: delete the memories whose strength has faded below memory.min_strength
        (strength halves every memory.half_life without access; it is computed on read, so nothing
        else changes). Refuses to delete more than half of all memories unless force is true.

        POST /v1/memory/decay

        Args:
            force (body): delete even when more than half would go (default false)
            **extra: further body fields, sent as given
        """
        return self._call("decay", body=_fields({"force": force}, extra), body_required=False)

    def embed(self, *, all: Optional[bool] = None, **extra: Any) -> Dict[str, Any]:
        """Embed memories that lack the current embedder's vector

        POST /v1/memory/embed

        Args:
            all (body): embed every memory again (default false)
            **extra: further body fields, sent as given
        """
        return self._call("embed", body=_fields({"all": all}, extra), body_required=False)

    def remember_episode(
        self,
        *,
        text: str,
        episode_id: Optional[str] = None,
        importance: Optional[float] = None,
        namespace: Optional[str] = None,
        tags: Optional[List[str]] = None,
        **extra: Any,
    ) -> Dict[str, Any]:
        """Store an episode

        Store something that happened, in free text. A near-duplicate of an existing episode
        reinforces that one instead (the answer says reinforced: true).

        POST /v1/memory/episodes

        Args:
            episode_id (body): groups memories of one episode or conversation
            importance (body): how much this matters, 0..1 (default 0.5); stored and exported with
            the memory, not (yet) used by recall ranking or decay
            namespace (body): memory namespace (default "default")
            tags (body): labels to filter recall by
            text (body): what happened
            **extra: further body fields, sent as given
        """
        return self._call(
            "remember_episode",
            body=_fields({
                "episode_id": episode_id,
                "importance": importance,
                "namespace": namespace,
                "tags": tags,
                "text": text,
            }, extra),
            body_required=False,
        )

    def export_memory(self) -> Dict[str, Any]:
        """Every memory and association, as one document POST /v1/memory/import takes

        GET /v1/memory/export
        """
        return self._call("export_memory")

    def remember_fact(
        self,
        *,
        object: str,
        relation: str,
        subject: str,
        importance: Optional[float] = None,
        namespace: Optional[str] = None,
        tags: Optional[List[str]] = None,
        **extra: Any,
    ) -> Dict[str, Any]:
        """Store a fact

        Store a fact as subject-relation-object (e.g. alice / works_at / acme). A newer fact with
        the same namespace, subject and relation supersedes the current one.

        POST /v1/memory/facts

        Args:
            importance (body): how much this matters, 0..1 (default 0.5); stored and exported with
            the memory, not (yet) used by recall ranking or decay
            namespace (body): memory namespace (default "default")
            object (body): the value
            relation (body): e.g. works_at, prefers
            subject (body): what the fact is about
            tags (body): labels to filter recall by
            **extra: further body fields, sent as given
        """
        return self._call(
            "remember_fact",
            body=_fields({
                "importance": importance,
                "namespace": namespace,
                "object": object,
                "relation": relation,
                "subject": subject,
                "tags": tags,
            }, extra),
            body_required=False,
        )

    def forget(
        self,
        *,
        force: Optional[bool] = None,
        id: Optional[str] = None,
        older_than: Optional[str] = None,
        subject: Optional[str] = None,
        **extra: Any,
    ) -> Dict[str, Any]:
        """Delete memories

        Delete memories: give exactly one of id (one memory), subject (every fact about it) or
        older_than (every memory, of every namespace, created longer ago than that, e.g. "30d",
        however recently it was used). older_than refuses to delete more than half of all memories
        unless force is true.

        POST /v1/memory/forget

        Args:
            force (body): with older_than: delete even when more than half would go (default false)
            id (body): a memory id
            older_than (body): a duration since creation: 250ms, 30s, 5m, 2h, 7d, 2w
            subject (body): a fact subject
            **extra: further body fields, sent as given
        """
        return self._call(
            "forget",
            body=_fields({
                "force": force,
                "id": id,
                "older_than": older_than,
                "subject": subject,
            }, extra),
            body_required=False,
        )

    def import_memory(self, *, body: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """Import a document GET /v1/memory/export made

        POST /v1/memory/import

        Args:
            body (body): what GET /v1/memory/export answers
        """
        return self._call("import_memory", body=body, body_required=False)

    def ingest(
        self,
        *,
        path: str,
        episode_id: Optional[str] = None,
        **extra: Any,
    ) -> Dict[str, Any]:
        """Ingest a file or folder into memory

        Read a file or folder (text, markdown, PDF) on the runtime's machine into memory as
        searchable chunks; files already ingested are skipped. Only under the directories the
        runtime's memory.ingest_roots allows (none by default: refused), and files up to
        memory.ingest_max_bytes.

        POST /v1/memory/ingest

        Args:
            episode_id (body): attach the chunks to this episode
            path (body): a file or folder path on the runtime's machine, under memory.ingest_roots
            **extra: further body fields, sent as given
        """
        return self._call(
            "ingest",
            body=_fields({"episode_id": episode_id, "path": path}, extra),
            body_required=False,
        )

    def recall(
        self,
        *,
        query: str,
        episode_id: Optional[str] = None,
        explain: Optional[bool] = None,
        include_superseded: Optional[bool] = None,
        k: Optional[int] = None,
        kind: Optional[Literal["fact", "episode", "chunk", "archive", "staged"]] = None,
        namespace: Optional[str] = None,
        reinforce: Optional[bool] = None,
        tag: Optional[str] = None,
        **extra: Any,
    ) -> Dict[str, Any]:
        """Search long-term memory

        Search long-term memory (facts, episodes, ingested documents, the archive); best matches
        first. Ranks by keywords (BM25) fused with vector similarity from the configured embedder:
        the default embedder is lexical (shared words and word pieces, not meaning: "car" does not
        find "automobile"); memory_stats names the embedder. Also returns the memories associated
        (relate) with the best matches, at 0.8 of their score, with `via` naming the match.
        Strengthens what it returns unless reinforce is false.

        POST /v1/memory/recall

        Args:
            episode_id (body): only this episode's memories
            explain (body): include how each score was made (default false)
            include_superseded (body): also facts a newer fact has replaced (default false)
            k (body): how many results (default 5)
            kind (body): only this kind
            namespace (body): memory namespace (default "default")
            query (body): what to look for
            reinforce (body): strengthen what is recalled (default true)
            tag (body): only memories with this tag
            **extra: further body fields, sent as given
        """
        return self._call(
            "recall",
            body=_fields({
                "episode_id": episode_id,
                "explain": explain,
                "include_superseded": include_superseded,
                "k": k,
                "kind": kind,
                "namespace": namespace,
                "query": query,
                "reinforce": reinforce,
                "tag": tag,
            }, extra),
            body_required=False,
        )

    def related(self, *, entity: str, depth: Optional[int] = None) -> Dict[str, Any]:
        """Entities associated with an entity

        Entities associated with an entity, following associations up to `depth` hops.

        GET /v1/memory/related

        Args:
            entity (query): the entity to start from
            depth (query): hops (default 1)
        """
        return self._call("related", query={"entity": entity, "depth": depth})

    def memory_stats(self) -> Dict[str, Any]:
        """Memory counts

        Counts of memories by kind, associations, documents, the embedder and average strength.

        GET /v1/memory/stats
        """
        return self._call("memory_stats")

    def get_memory(self, id: str) -> Dict[str, Any]:
        """One memory

        One memory by id (as recall returns it), with its effective strength now; does not reinforce
        it.

        GET /v1/memory/{id}

        Args:
            id (path): a memory id, e.g. m-42
        """
        return self._call("get_memory", path={"id": id})

    def get_mind(self) -> Dict[str, Any]:
        """The mind: its status, its budget used and left, the session running

        The agent's mind (its model): off, asleep or awake; the thinking budget of the day (tokens
        and minutes used and left, min_interval, the next autonomous wake), the session running, and
        the last refusal to wake.

        GET /v1/mind
        """
        return self._call("get_mind")

    def list_mind_sessions(self, *, limit: Optional[int] = None) -> Dict[str, Any]:
        """The mind's sessions, newest first (steps as a count)

        The mind's sessions, newest first: when and why each was woken, its outcome, steps (a count)
        and tokens.

        GET /v1/mind/sessions

        Args:
            limit (query): at most this many (default 20)
        """
        return self._call("list_mind_sessions", query={"limit": limit})

    def get_mind_session(self, id: str) -> Dict[str, Any]:
        """One session: its wake, each step (tokens, tool calls, text), its end

        One session of the mind: why it was woken, each step with its tokens, tool calls (ok or the
        error, the seqs each wrote) and text, and how it ended.

        GET /v1/mind/sessions/{id}

        Args:
            id (path): the session id, m-<seq>
        """
        return self._call("get_mind_session", path={"id": id})

    def sleep_mind(self) -> Dict[str, Any]:
        """End the running session (outcome slept)

        End the mind's running session now (outcome slept; an exec mind gets SIGTERM, then SIGKILL).
        Refused (409, code asleep) when no session runs.

        POST /v1/mind/sleep
        """
        return self._call("sleep_mind")

    def wake_mind(
        self,
        *,
        reason: Optional[str] = None,
        thread_id: Optional[str] = None,
        **extra: Any,
    ) -> Dict[str, Any]:
        """Wake the mind now (skips min_interval, not the daily budget)

        Wake the agent's mind with a reason. Refused (409) while a session runs (code busy), when
        the daily budget is spent (code budget) or the mind is off (code off).

        POST /v1/mind/wake

        Args:
            reason (body): why it is woken (kept in mind_woken)
            thread_id (body): a thread to think about
            **extra: further body fields, sent as given
        """
        return self._call(
            "wake_mind",
            body=_fields({"reason": reason, "thread_id": thread_id}, extra),
            body_required=False,
        )

    def openapi(self) -> Dict[str, Any]:
        """This document: the API as OpenAPI 3.1 (no token needed)

        GET /v1/openapi.json
        """
        return self._call("openapi")

    def list_percepts(
        self,
        *,
        thread_id: Optional[str] = None,
        source: Optional[str] = None,
        type: Optional[str] = None,
        status: Optional[Literal["new", "assigned", "processed", "dropped"]] = None,
        min_age: Optional[str] = None,
        max_age: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> Dict[str, Any]:
        """List percepts

        List percepts, newest first, with their age and effective (decayed) intensity.

        GET /v1/percepts

        Args:
            thread_id (query): only this thread's
            source (query): only from this source
            type (query): only of this type
            status (query): only with this status
            min_age (query): at least this old (duration, e.g. 5m)
            max_age (query): at most this old (duration, e.g. 1h)
            limit (query): at most this many (default 50)
        """
        return self._call(
            "list_percepts",
            query={"thread_id": thread_id, "source": source, "type": type, "status": status, "min_age": min_age, "max_age": max_age, "limit": limit},
        )

    def add_percept(
        self,
        *,
        source: str,
        type: str,
        data: Optional[Dict[str, Any]] = None,
        id: Optional[str] = None,
        intensity: Optional[float] = None,
        text: Optional[str] = None,
        thread_id: Optional[str] = None,
        **extra: Any,
    ) -> Receipt:
        """Add a percept

        Record something perceived (a message, an observation, an alert) as a new percept.

        POST /v1/percepts

        Args:
            data (body): structured details
            id (body): a chosen id (default: generated)
            intensity (body): how strongly it should draw attention, 0..1 (default 0.5)
            source (body): where it came from, e.g. chat, github
            text (body): the content
            thread_id (body): assign it to this thread
            type (body): what kind, e.g. message
            **extra: further body fields, sent as given
        """
        return self._call(
            "add_percept",
            body=_fields({
                "data": data,
                "id": id,
                "intensity": intensity,
                "source": source,
                "text": text,
                "thread_id": thread_id,
                "type": type,
            }, extra),
            body_required=True,
        )

    def add_percepts(self, *, percepts: List[Dict[str, Any]], **extra: Any) -> Dict[str, Any]:
        """Add many percepts

        Add up to api.batch_limit percepts in one request, committed together (one write of the log
        for what is queued at once). Each is answered on its own, in order: {id, seq} or {error,
        status}; a refused one never blocks the others, and sending the same ids again adds nothing
        twice (each is refused with 409).

        POST /v1/percepts/batch

        Args:
            percepts (body): -
            **extra: further body fields, sent as given
        """
        return self._call(
            "add_percepts",
            body=_fields({"percepts": percepts}, extra),
            body_required=True,
        )

    def get_percept(self, id: str) -> Percept:
        """One percept

        One percept with its age and effective (decayed) intensity.

        GET /v1/percepts/{id}

        Args:
            id (path): the percept id
        """
        return self._call("get_percept", path={"id": id})

    def remove_percept(self, id: str, *, reason: Optional[str] = None, **extra: Any) -> Receipt:
        """Remove a percept

        Remove a percept from the pool (the events log keeps it).

        DELETE /v1/percepts/{id}

        Args:
            id (path): the percept id
            reason (body): why
            **extra: further body fields, sent as given
        """
        return self._call(
            "remove_percept",
            path={"id": id},
            body=_fields({"reason": reason}, extra),
            body_required=False,
        )

    def assign_percept(
        self,
        id: str,
        *,
        thread_id: str,
        reason: Optional[str] = None,
        **extra: Any,
    ) -> Receipt:
        """Assign a percept to a thread

        Assign a percept to a thread (moving it from another thread).

        POST /v1/percepts/{id}/assign

        Args:
            id (path): the percept id
            reason (body): why (kept in the event)
            thread_id (body): the thread
            **extra: further body fields, sent as given
        """
        return self._call(
            "assign_percept",
            path={"id": id},
            body=_fields({"reason": reason, "thread_id": thread_id}, extra),
            body_required=False,
        )

    def drop_percept(self, id: str, *, reason: Optional[str] = None, **extra: Any) -> Receipt:
        """Drop a percept

        Drop a percept: ignored on purpose (it stays in the pool until consolidated).

        POST /v1/percepts/{id}/drop

        Args:
            id (path): the percept id
            reason (body): why
            **extra: further body fields, sent as given
        """
        return self._call(
            "drop_percept",
            path={"id": id},
            body=_fields({"reason": reason}, extra),
            body_required=False,
        )

    def process_percept(self, id: str, *, reason: Optional[str] = None, **extra: Any) -> Receipt:
        """Mark a percept processed

        Mark a percept processed: it has been dealt with.

        POST /v1/percepts/{id}/process

        Args:
            id (path): the percept id
            reason (body): why (kept in the event)
            **extra: further body fields, sent as given
        """
        return self._call(
            "process_percept",
            path={"id": id},
            body=_fields({"reason": reason}, extra),
            body_required=False,
        )

    def promote(self) -> Dict[str, Any]:
        """Promote this standby to primary

        POST /v1/promote
        """
        return self._call("promote")

    def list_reflexes(self) -> Dict[str, Any]:
        """Every reflex rule

        GET /v1/reflexes
        """
        return self._call("list_reflexes")

    def get_reflex(self, id: str) -> Reflex:
        """One reflex rule

        GET /v1/reflexes/{id}

        Args:
            id (path): the rule id
        """
        return self._call("get_reflex", path={"id": id})

    def put_reflex(
        self,
        id: str,
        *,
        body: Dict[str, Any],
        dry_run: Optional[bool] = None,
    ) -> Dict[str, Any]:
        """Add or replace a reflex rule (?dry_run=true: check it only)

        PUT /v1/reflexes/{id}

        Args:
            id (path): the rule id
            dry_run (query): check the rule, save nothing
            body (body): the rule (docs/reflexes.md); its id, when given, is the path's
        """
        return self._call(
            "put_reflex",
            path={"id": id},
            query={"dry_run": dry_run},
            body=body,
            body_required=True,
        )

    def delete_reflex(self, id: str, **extra: Any) -> Receipt:
        """Delete a reflex rule

        DELETE /v1/reflexes/{id}

        Args:
            id (path): the rule id
            **extra: further body fields, sent as given
        """
        return self._call(
            "delete_reflex",
            path={"id": id},
            body=_fields({}, extra),
            body_required=False,
        )

    def disable_reflex(self, id: str, **extra: Any) -> Receipt:
        """Disable a reflex rule

        POST /v1/reflexes/{id}/disable

        Args:
            id (path): the rule id
            **extra: further body fields, sent as given
        """
        return self._call(
            "disable_reflex",
            path={"id": id},
            body=_fields({}, extra),
            body_required=False,
        )

    def enable_reflex(self, id: str, **extra: Any) -> Receipt:
        """Enable a reflex rule

        POST /v1/reflexes/{id}/enable

        Args:
            id (path): the rule id
            **extra: further body fields, sent as given
        """
        return self._call(
            "enable_reflex",
            path={"id": id},
            body=_fields({}, extra),
            body_required=False,
        )

    def sensor_webhook(self, name: str, *, body: Optional[Any] = None) -> Receipt:
        """A request for an http sensor; it becomes a percept (a github sensor checks its own signature
        instead of the token)

        POST /v1/sensors/{name}

        Args:
            name (path): the sensor's name
            body (body): what the sensor maps into a percept
        """
        return self._call("sensor_webhook", path={"name": name}, body=body, body_required=False)

    def state_at(
        self,
        *,
        seq: int,
        limit: Optional[int] = None,
        digest: Optional[bool] = None,
    ) -> Dict[str, Any]:
        """The pools as they were at a seq (replays the log from the nearest checkpoint on a worker)

        GET /v1/state/at

        Args:
            seq (query): the seq (1 or more)
            limit (query): at most this many items per pool (default 100)
            digest (query): also the digest of the pools then (reads every record: slower)
        """
        return self._call("state_at", query={"seq": seq, "limit": limit, "digest": digest})

    def state_digest(self) -> Dict[str, Any]:
        """The digest of the applied state (compare with `limbic replay --verify`)

        GET /v1/state/digest
        """
        return self._call("state_digest")

    def list_threads(
        self,
        *,
        status: Optional[Literal["active", "paused", "frozen", "complete", "all"]] = None,
        limit: Optional[int] = None,
    ) -> Dict[str, Any]:
        """List threads

        Threads by effective salience, highest first.

        GET /v1/threads

        Args:
            status (query): only with this status (default active)
            limit (query): at most this many (default: all)
        """
        return self._call("list_threads", query={"status": status, "limit": limit})

    def create_thread(
        self,
        *,
        goal: str,
        from_percept: Optional[str] = None,
        id: Optional[str] = None,
        percepts: Optional[List[str]] = None,
        reason: Optional[str] = None,
        salience: Optional[float] = None,
        state: Optional[Dict[str, Any]] = None,
        status: Optional[Literal["active", "paused", "frozen", "complete"]] = None,
        **extra: Any,
    ) -> Receipt:
        """Start a thread

        Start a thread of work toward a goal, optionally taking percepts into it.

        POST /v1/threads

        Args:
            from_percept (body): the percept that started it
            goal (body): what the thread is for
            id (body): a chosen id (default: generated)
            percepts (body): percept ids to assign to it
            reason (body): why (kept in the event)
            salience (body): how much it matters now, 0..1 (default 0.5)
            state (body): {phase, context, next_step}
            status (body): active, paused, frozen or complete
            **extra: further body fields, sent as given
        """
        return self._call(
            "create_thread",
            body=_fields({
                "from_percept": from_percept,
                "goal": goal,
                "id": id,
                "percepts": percepts,
                "reason": reason,
                "salience": salience,
                "state": state,
                "status": status,
            }, extra),
            body_required=True,
        )

    def get_thread(self, id: str) -> Thread:
        """One thread

        One thread: goal, status, state, percepts, effective salience.

        GET /v1/threads/{id}

        Args:
            id (path): the thread id
        """
        return self._call("get_thread", path={"id": id})

    def update_thread(
        self,
        id: str,
        *,
        add_percepts: Optional[List[str]] = None,
        outcome: Optional[str] = None,
        reason: Optional[str] = None,
        salience: Optional[float] = None,
        state: Optional[Dict[str, Any]] = None,
        status: Optional[Literal["active", "paused", "frozen", "complete"]] = None,
        **extra: Any,
    ) -> Receipt:
        """Change a thread

        Change a thread: status (pause, freeze, complete, reactivate), salience, state (a JSON merge
        patch into {phase, context, next_step}), or assign more percepts.

        PATCH /v1/threads/{id}

        Args:
            id (path): the thread id
            add_percepts (body): percept ids to assign
            outcome (body): how it ended (with status complete)
            reason (body): why (kept in the events)
            salience (body): 0..1
            state (body): merge patch into {phase, context, next_step}
            status (body): active, paused, frozen or complete
            **extra: further body fields, sent as given
        """
        return self._call(
            "update_thread",
            path={"id": id},
            body=_fields({
                "add_percepts": add_percepts,
                "outcome": outcome,
                "reason": reason,
                "salience": salience,
                "state": state,
                "status": status,
            }, extra),
            body_required=True,
        )

    def delete_thread(self, id: str, *, reason: Optional[str] = None, **extra: Any) -> Receipt:
        """Delete a thread

        Delete a thread (the events log keeps its history); its percepts are unassigned.

        DELETE /v1/threads/{id}

        Args:
            id (path): the thread id
            reason (body): why
            **extra: further body fields, sent as given
        """
        return self._call(
            "delete_thread",
            path={"id": id},
            body=_fields({"reason": reason}, extra),
            body_required=False,
        )

    def why(self, id: str) -> Dict[str, Any]:
        """Why something happened

        Why something happened: the causal chain of a percept, thread or action from the events log
        (arrival, the reflex that fired, what it created, each delivery attempt and its outcome),
        with seqs and times.

        GET /v1/why/{id}

        Args:
            id (path): a percept, thread or action id
        """
        return self._call("why", path={"id": id})

    def world_consolidate(self, *, body: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """Consolidate the world model

        Add surprising events to MEMORY.md and archive entities not referenced lately.

        POST /v1/world/consolidate

        Args:
            body (body): the request's body
        """
        return self._call("world_consolidate", body=body, body_required=False)

    def world_entities(
        self,
        *,
        type: Optional[Literal["person", "company", "project", "tool", "concept"]] = None,
        stale: Optional[bool] = None,
    ) -> Dict[str, Any]:
        """The entities of the world model

        The entities of the world model: people, companies, projects, tools, concepts, with when
        each was last referenced.

        GET /v1/world/entities

        Args:
            type (query): only this type
            stale (query): only those not referenced for world.decay_days
        """
        return self._call("world_entities", query={"type": type, "stale": stale})

    def world_entity(self, *, name: str) -> Dict[str, Any]:
        """One entity's page

        One entity's wiki page (Markdown): type, facts, dated timeline, relations.

        GET /v1/world/entity

        Args:
            name (query): the entity's name
        """
        return self._call("world_entity", query={"name": name})

    def world_extract(
        self,
        *,
        date: Optional[str] = None,
        force: Optional[bool] = None,
        source: Optional[str] = None,
        text: Optional[str] = None,
        **extra: Any,
    ) -> Dict[str, Any]:
        """Feed the world model

        Feed the world model: a daily log in Markdown (text and date), or, without text, a day of
        limbic's own events and archive (default today). Writes entity pages, relations and surprise
        scores; an input already extracted is skipped unless force.

        POST /v1/world/extract

        Args:
            date (body): the day, YYYY-MM-DD (required with text)
            force (body): extract again even if already done
            source (body): a name for the log (with text)
            text (body): a daily log in Markdown
            **extra: further body fields, sent as given
        """
        return self._call(
            "world_extract",
            body=_fields({"date": date, "force": force, "source": source, "text": text}, extra),
            body_required=False,
        )

    def world_neighbors(self, *, name: str, hops: Optional[int] = None) -> Dict[str, Any]:
        """Related entities

        Entities related to one entity in the relation graph, breadth first.

        GET /v1/world/graph/neighbors

        Args:
            name (query): the entity
            hops (query): how far (default 1)
        """
        return self._call("world_neighbors", query={"name": name, "hops": hops})

    def world_path(self, *, from_: str, to: str) -> Dict[str, Any]:
        """A shortest chain of relations

        A shortest chain of relations between two entities.

        GET /v1/world/graph/path

        Args:
            from_ (query): one entity
            to (query): the other
        """
        return self._call("world_path", query={"from": from_, "to": to})

    def world_memory(self) -> Dict[str, Any]:
        """MEMORY.md

        MEMORY.md: the long-term summary of what surprised the agent, by section (People, Companies,
        Projects, Tools, Concepts, Events). Read it whole.

        GET /v1/world/memory
        """
        return self._call("world_memory")

    def world_surprise(self, *, date: Optional[str] = None) -> Dict[str, Any]:
        """Surprise scores

        Surprise scores of events (how badly the world model predicted them), highest first.

        GET /v1/world/surprise

        Args:
            date (query): only this day, YYYY-MM-DD
        """
        return self._call("world_surprise", query={"date": date})
