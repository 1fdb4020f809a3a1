// The operations of the pools: percepts, threads, attention, the outbox and
// arousal (docs/api.md); handlers in api.cc.
#include "runtime/api/operation_schemas.h"

namespace limbic::runtime {

using namespace schema;  // NOLINT: the table's vocabulary

namespace {

const char* kThreadStatus = "active, paused, frozen or complete";

// A write on one pool record: {id, reason?} with the id in the path.
std::vector<OpParam> IdAndReason(const char* id, const char* reason) {
  return {Path("id", Str(id)), Field("reason", Str(reason))};
}

// A new percept's fields: add_percept's body, and each item of add_percepts'.
std::vector<OpParam> PerceptFields() {
  return {Field("source", Str("where it came from, e.g. chat, github"), true),
          Field("type", Str("what kind, e.g. message"), true),
          Field("intensity", Unit("how strongly it should draw attention, 0..1 (default 0.5)")),
          Field("text", Str("the content")),
          Field("data", Obj("structured details")),
          Field("thread_id", Str("assign it to this thread")),
          Field("id", Str("a chosen id (default: generated)"))};
}

json PerceptObject() {
  json properties = json::object(), required = json::array();
  for (const OpParam& p : PerceptFields()) {
    properties[p.name] = p.schema;
    if (p.required) required.push_back(p.name);
  }
  return {{"type", "object"}, {"properties", properties}, {"required", required}};
}

std::vector<OpParam> ArousalFields() {
  return {Field("level", Unit("0..1")),
          Field("factors", Obj("{name: value}; a null value removes the factor")),
          Field("reason", Str("why"))};
}

}  // namespace

std::vector<Operation> PoolOperations() {
  using B = Operation::Body;
  const char* kWhy = "why (kept in the event)";
  std::vector<Operation> ops;
  // Percepts.
  ops.push_back(
      {.name = "add_percept",
       .method = "POST",
       .path = "/v1/percepts",
       .tag = "percepts",
       .summary = "Add a percept",
       .description =
           "Record something perceived (a message, an observation, an alert) as a new percept.",
       .params = PerceptFields(),
       .body = B::kRequired,
       .statuses = {201, 200},
       .result = Receipt(),
       .mcp = Tool("add_percept", Writes(false, false)),
       .cli = true});
  ops.push_back(
      {.name = "add_percepts",
       .method = "POST",
       .path = "/v1/percepts/batch",
       .tag = "percepts",
       .summary = "Add many percepts",
       .description =
           "Add up to api.batch_limit percepts in one request, committed together (one write "
           "of the log for what is queued at once). Each is answered on its own, in order: "
           "{id, seq} or {error, status}; a refused one never blocks the others, and sending "
           "the same ids again adds nothing twice (each is refused with 409).",
       .params = {Field("percepts", ArrayOf(PerceptObject()), true)},
       .body = B::kRequired,
       .result = Object(
           {{"results",
             ArrayOf(Object({{"id", T("string")},
                             {"seq", T("integer")},
                             {"error", Object({{"code", T("string")}, {"message", T("string")}})},
                             {"status", Int("the HTTP status the item alone would get", 200, 599)}}))},
            {"accepted", T("integer")},
            {"refused", T("integer")}},
           {"results", "accepted", "refused"}),
       .mcp = Tool("add_percepts", Writes(false, false))});
  ops.push_back(
      {.name = "list_percepts",
       .method = "GET",
       .path = "/v1/percepts",
       .tag = "percepts",
       .summary = "List percepts",
       .description =
           "List percepts, newest first, with their age and effective (decayed) intensity.",
       .params = {Query("thread_id", QueryKind::kName, Str("only this thread's")),
                  Query("source", QueryKind::kName, Str("only from this source")),
                  Query("type", QueryKind::kName, Str("only of this type")),
                  Query("status", QueryKind::kName,
                        Enum("only with this status", {"new", "assigned", "processed", "dropped"})),
                  Query("min_age", QueryKind::kDuration, Str("at least this old (duration, e.g. 5m)")),
                  Query("max_age", QueryKind::kDuration, Str("at most this old (duration, e.g. 1h)")),
                  Query("limit", QueryKind::kCount, Int("at most this many (default 50)", 1, 10000))},
       .result = Object({{"percepts", ArrayOf(Ref("Percept"))}}, {"percepts"}),
       .mcp = Tool("list_percepts", ReadOnly())});
  ops.push_back({.name = "get_percept",
                 .method = "GET",
                 .path = "/v1/percepts/{id}",
                 .tag = "percepts",
                 .summary = "One percept",
                 .description = "One percept with its age and effective (decayed) intensity.",
                 .params = {Path("id", Str("the percept id"))},
                 .result = Ref("Percept"),
                 .mcp = Tool("get_percept", ReadOnly())});
  ops.push_back({.name = "assign_percept",
                 .method = "POST",
                 .path = "/v1/percepts/{id}/assign",
                 .tag = "percepts",
                 .summary = "Assign a percept to a thread",
                 .description = "Assign a percept to a thread (moving it from another thread).",
                 .params = {Path("id", Str("the percept id")),
                            Field("thread_id", Str("the thread"), true),
                            Field("reason", Str(kWhy))},
                 .body = B::kOptional,
                 .result = Receipt(),
                 .mcp = Tool("assign_percept", Writes(false, true)),
                 .cli = true});
  ops.push_back({.name = "process_percept",
                 .method = "POST",
                 .path = "/v1/percepts/{id}/process",
                 .tag = "percepts",
                 .summary = "Mark a percept processed",
                 .description = "Mark a percept processed: it has been dealt with.",
                 .params = IdAndReason("the percept id", kWhy),
                 .body = B::kOptional,
                 .result = Receipt(),
                 .mcp = Tool("process_percept", Writes(false, true)),
                 .cli = true});
  ops.push_back(
      {.name = "drop_percept",
       .method = "POST",
       .path = "/v1/percepts/{id}/drop",
       .tag = "percepts",
       .summary = "Drop a percept",
       .description =
           "Drop a percept: ignored on purpose (it stays in the pool until consolidated).",
       .params = IdAndReason("the percept id", "why"),
       .body = B::kOptional,
       .result = Receipt(),
       .mcp = Tool("drop_percept", Writes(false, true)),
       .cli = true});
  ops.push_back({.name = "remove_percept",
                 .method = "DELETE",
                 .path = "/v1/percepts/{id}",
                 .tag = "percepts",
                 .summary = "Remove a percept",
                 .description = "Remove a percept from the pool (the events log keeps it).",
                 .params = IdAndReason("the percept id", "why"),
                 .body = B::kOptional,
                 .result = Receipt(),
                 .mcp = Tool("remove_percept", Writes(true, true)),
                 .cli = true});
  // Threads.
  ops.push_back(
      {.name = "create_thread",
       .method = "POST",
       .path = "/v1/threads",
       .tag = "threads",
       .summary = "Start a thread",
       .description = "Start a thread of work toward a goal, optionally taking percepts into it.",
       .params = {Field("goal", Str("what the thread is for"), true),
                  Field("salience", Unit("how much it matters now, 0..1 (default 0.5)")),
                  Field("status", Enum(kThreadStatus, {"active", "paused", "frozen", "complete"})),
                  Field("state", Obj("{phase, context, next_step}")),
                  Field("from_percept", Str("the percept that started it")),
                  Field("percepts", StrList("percept ids to assign to it")),
                  Field("id", Str("a chosen id (default: generated)")),
                  Field("reason", Str(kWhy))},
       .body = B::kRequired,
       .statuses = {201, 200},
       .result = Receipt(),
       .mcp = Tool("create_thread", Writes(false, false)),
       .cli = true});
  ops.push_back({.name = "list_threads",
                 .method = "GET",
                 .path = "/v1/threads",
                 .tag = "threads",
                 .summary = "List threads",
                 .description = "Threads by effective salience, highest first.",
                 .params = {Query("status", QueryKind::kName,
                                  Enum("only with this status (default active)",
                                       {"active", "paused", "frozen", "complete", "all"})),
                            NotInTool(Query("limit", QueryKind::kCount,
                                            Int("at most this many (default: all)", 0)))},
                 .result = Object({{"threads", ArrayOf(Ref("Thread"))}}, {"threads"}),
                 .mcp = Tool("list_threads", ReadOnly())});
  ops.push_back({.name = "get_thread",
                 .method = "GET",
                 .path = "/v1/threads/{id}",
                 .tag = "threads",
                 .summary = "One thread",
                 .description = "One thread: goal, status, state, percepts, effective salience.",
                 .params = {Path("id", Str("the thread id"))},
                 .result = Ref("Thread"),
                 .mcp = Tool("get_thread", ReadOnly())});
  ops.push_back(
      {.name = "update_thread",
       .method = "PATCH",
       .path = "/v1/threads/{id}",
       .tag = "threads",
       .summary = "Change a thread",
       .description =
           "Change a thread: status (pause, freeze, complete, reactivate), salience, state (a "
           "JSON merge patch into {phase, context, next_step}), or assign more percepts.",
       .params = {Path("id", Str("the thread id")),
                  Field("status", Enum(kThreadStatus, {"active", "paused", "frozen", "complete"})),
                  Field("salience", Unit("0..1")),
                  Field("state", Obj("merge patch into {phase, context, next_step}")),
                  Field("add_percepts", StrList("percept ids to assign")),
                  Field("reason", Str("why (kept in the events)")),
                  Field("outcome", Str("how it ended (with status complete)"))},
       .body = B::kRequired,
       .result = Receipt(),
       .mcp = Tool("update_thread", Writes(false, false)),
       .cli = true});
  ops.push_back({.name = "delete_thread",
                 .method = "DELETE",
                 .path = "/v1/threads/{id}",
                 .tag = "threads",
                 .summary = "Delete a thread",
                 .description = "Delete a thread (the events log keeps its history); its percepts "
                                "are unassigned.",
                 .params = IdAndReason("the thread id", "why"),
                 .body = B::kOptional,
                 .result = Receipt(),
                 .mcp = Tool("delete_thread", Writes(true, true)),
                 .cli = true});
  // Attention, arousal, the outbox.
  ops.push_back(
      {.name = "attention",
       .method = "GET",
       .path = "/v1/attention",
       .tag = "attention",
       .summary = "What to work on now",
       .description =
           "What to work on now: arousal, the most salient active thread with its unprocessed "
           "percepts, and new unassigned percepts by effective intensity.",
       .result = Object({{"arousal", AnyValue("arousal now")},
                         {"thread", AnyValue("the focused thread, or null")},
                         {"percepts", T("array")}}),
       .mcp = Tool("attention", ReadOnly())});
  ops.push_back({.name = "get_arousal",
                 .method = "GET",
                 .path = "/v1/arousal",
                 .tag = "arousal",
                 .summary = "The arousal level",
                 .description = "The arousal level, its factors and the effective level now.",
                 .result = Ref("Arousal"),
                 .mcp = Tool("get_arousal", ReadOnly())});
  ops.push_back({.name = "set_arousal",
                 .method = "PATCH",
                 .path = "/v1/arousal",
                 .tag = "arousal",
                 .summary = "Set arousal",
                 .description =
                     "Set the arousal level and/or named factors (e.g. user_waiting: true).",
                 .params = ArousalFields(),
                 .body = B::kRequired,
                 .result = Receipt(),
                 .mcp = Tool("set_arousal", Writes(false, true)),
                 .cli = true});
  ops.push_back({.name = "put_arousal",
                 .method = "PUT",
                 .path = "/v1/arousal",
                 .tag = "arousal",
                 .summary = "Set arousal (as PATCH)",
                 .params = ArousalFields(),
                 .body = B::kRequired,
                 .result = Receipt()});
  ops.push_back(
      {.name = "enqueue_action",
       .method = "POST",
       .path = "/v1/actions",
       .tag = "actions",
       .summary = "Queue an action",
       .description = "Queue an action for a configured effector; it is delivered in the "
                      "background (at least once, retried, deduplicated by idempotency_key).",
       .params = {Field("effector", Str("a configured effector's name"), true),
                  Field("type", Str("the action's type"), true),
                  Field("payload", AnyValue("the action's JSON payload")),
                  Field("idempotency_key", Str("deduplication key (default: the action id)")),
                  Field("thread_id", Str("the thread it serves")),
                  Field("percept_id", Str("the percept it answers")),
                  Field("id", Str("a chosen id (default: generated)")),
                  Field("require_approval",
                        {{"type", "boolean"},
                         {"description", "wait in pending_approval until a human approves it"}}),
                  Field("reason", Str(kWhy))},
       .body = B::kRequired,
       .statuses = {201, 200},
       .result = Receipt(),
       // Its effectors act on the world.
       .mcp = Tool("enqueue_action",
                   {{"readOnlyHint", false},
                    {"destructiveHint", false},
                    {"idempotentHint", false},
                    {"openWorldHint", true}}),
       .cli = true});
  // A pending_approval action goes on to delivery, or never goes.
  ops.push_back(
      {.name = "approve_action",
       .method = "POST",
       .path = "/v1/actions/{id}/approve",
       .tag = "actions",
       .summary = "Approve an action",
       .description = "Approve an action waiting in pending_approval: it is delivered.",
       .params = IdAndReason("the action id", kWhy),
       .body = B::kOptional,
       .result = Receipt(),
       .mcp = Tool("approve_action", Writes(false, true)),
       .cli = true});
  ops.push_back(
      {.name = "reject_action",
       .method = "POST",
       .path = "/v1/actions/{id}/reject",
       .tag = "actions",
       .summary = "Reject an action",
       .description = "Reject an action waiting in pending_approval: it is never delivered.",
       .params = IdAndReason("the action id", kWhy),
       .body = B::kOptional,
       .result = Receipt(),
       .mcp = Tool("reject_action", Writes(true, true)),
       .cli = true});
  // A dead action is sent again (a human decided its cause is mended).
  ops.push_back({.name = "retry_action",
                 .method = "POST",
                 .path = "/v1/actions/{id}/retry",
                 .tag = "actions",
                 .summary = "Send a dead action again",
                 .description = "Send a dead action again: it is pending, its attempts start over.",
                 .params = IdAndReason("the action id", kWhy),
                 .body = B::kOptional,
                 .result = Receipt(),
                 .mcp = Tool("retry_action", Writes(false, true)),
                 .cli = true});
  ops.push_back(
      {.name = "list_actions",
       .method = "GET",
       .path = "/v1/actions",
       .tag = "actions",
       .summary = "List outbox actions",
       .description = "Outbox actions with a status, oldest first (attempts, last error, next "
                      "attempt).",
       .params = {Query("status", QueryKind::kName,
                        Enum("which (default: all)", {"pending_approval", "pending", "inflight",
                                                      "failed", "complete", "dead", "rejected"}))},
       .result = Object({{"actions", ArrayOf(Ref("Action"))}}, {"actions"}),
       .mcp = Tool("list_actions", ReadOnly())});
  // {"older_than": "24h"}: complete and dead actions last updated before
  // now - older_than (default: outbox.retention) leave the pool.
  ops.push_back(
      {.name = "prune_actions",
       .method = "POST",
       .path = "/v1/actions/prune",
       .tag = "actions",
       .summary = "Remove old complete and dead actions",
       .description = "Remove complete and dead actions last updated longer ago than older_than.",
       .params = {Field("older_than", Str("a duration (default: the runtime's outbox.retention)"))},
       .body = B::kOptional,
       .result = Receipt(),
       .mcp = Tool("prune_actions", Writes(true, true)),
       .cli = true});
  ops.push_back({.name = "state_digest",
                 .method = "GET",
                 .path = "/v1/state/digest",
                 .tag = "state",
                 .summary = "The digest of the applied state (compare with `limbic replay --verify`)",
                 .result = Object({{"applied_seq", T("integer")}, {"digest", T("string")}},
                                  {"applied_seq", "digest"})});
  ops.push_back({.name = "get_action",
                 .method = "GET",
                 .path = "/v1/actions/{id}",
                 .tag = "actions",
                 .summary = "One outbox action",
                 .description = "One outbox action: status, attempts, last_error, next_attempt_at.",
                 .params = {Path("id", Str("the action id"))},
                 .result = Ref("Action"),
                 .mcp = Tool("get_action", ReadOnly())});
  return ops;
}

}  // namespace limbic::runtime
