// The operations of the events log (long-poll, SSE, why), reflex rules and
// webhook sensors (docs/api.md); handlers in events.cc.
#include "runtime/api/operation_schemas.h"

namespace limbic::runtime {

using namespace schema;  // NOLINT: the table's vocabulary

std::vector<Operation> EventOperations() {
  using B = Operation::Body;
  std::vector<Operation> ops;
  ops.push_back(
      {.name = "why",
       .method = "GET",
       .path = "/v1/why/{id}",
       .tag = "events",
       .summary = "Why something happened",
       .description =
           "Why something happened: the causal chain of a percept, thread or action from the "
           "events log (arrival, the reflex that fired, what it created, each delivery attempt "
           "and its outcome), with seqs and times.",
       .params = {Path("id", Str("a percept, thread or action id"))},
       .result = AnyObject(),
       .mcp = Tool("why", ReadOnly())});
  ops.push_back(
      {.name = "events_since",
       .method = "GET",
       .path = "/v1/events",
       .tag = "events",
       .summary = "Events after a seq (long-poll)",
       .description = "Events (every change to the state) after a seq, oldest first, with "
                      "last_seq to continue from; `wait` long-polls until one arrives.",
       .params =
           {Query("after", QueryKind::kCount,
                  Int("events after this seq (default 0)", 0, kMaxSafeInteger)),
            Query("limit", QueryKind::kCount, Int("at most this many (default 100)", 1, 10000)),
            // 50 for the tool, not the API's 60: MCP clients commonly time a request out at 60 s.
            ToolSchema(Query("wait", QueryKind::kCount,
                             Int("seconds to wait for a first event (default 0, at most 60)", 0)),
                       Int("seconds to wait for a first event (default 0, at most 50)", 0, 50)),
            Query("type", QueryKind::kNames,
                  Str("only these event types, comma-separated (e.g. percept_arrived)")),
            NotInTool(Query("actor", QueryKind::kName, Str("only events by this actor"))),
            NotInTool(Query("id", QueryKind::kName, Str("only events naming this id"))),
            NotInTool(Query("since", QueryKind::kTime, Str("only events at or after (RFC 3339)"))),
            NotInTool(Query("until", QueryKind::kTime, Str("only events at or before (RFC 3339)")))},
       .result = Object({{"events", ArrayOf(Ref("Event"))},
                         {"last_seq", T("integer")},
                         {"scanned_to", T("integer")}},
                        {"events", "last_seq", "scanned_to"}),
       .mcp = Tool("events_since", ReadOnly())});
  ops.push_back(
      {.name = "event_stream",
       .method = "GET",
       .path = "/v1/events/stream",
       .tag = "events",
       .summary = "Events as Server-Sent Events, from ?after= or Last-Event-ID, then live",
       .params = {Query("after", QueryKind::kCount, Int("events after this seq (default 0)", 0)),
                  Query("type", QueryKind::kNames, Str("only these event types, comma-separated"))},
       .media = Media::kSse});
  ops.push_back({.name = "list_reflexes",
                 .method = "GET",
                 .path = "/v1/reflexes",
                 .tag = "reflexes",
                 .summary = "Every reflex rule",
                 .result = Object({{"reflexes", ArrayOf(Ref("Reflex"))}}, {"reflexes"})});
  ops.push_back({.name = "get_reflex",
                 .method = "GET",
                 .path = "/v1/reflexes/{id}",
                 .tag = "reflexes",
                 .summary = "One reflex rule",
                 .params = {Path("id", Str("the rule id"))},
                 .result = Ref("Reflex")});
  ops.push_back(
      {.name = "put_reflex",
       .method = "PUT",
       .path = "/v1/reflexes/{id}",
       .tag = "reflexes",
       .summary = "Add or replace a reflex rule (?dry_run=true: check it only)",
       .params = {Path("id", Str("the rule id")),
                  Query("dry_run", QueryKind::kBool, Bool("check the rule, save nothing"))},
       .body = B::kRequired,
       .body_schema = Obj("the rule (docs/reflexes.md); its id, when given, is the path's"),
       .result = {{"oneOf",
                   {Receipt(), Object({{"valid", T("boolean")}, {"rule", T("object")}},
                                      {"valid", "rule"})}}}});
  ops.push_back({.name = "delete_reflex",
                 .method = "DELETE",
                 .path = "/v1/reflexes/{id}",
                 .tag = "reflexes",
                 .summary = "Delete a reflex rule",
                 .params = {Path("id", Str("the rule id"))},
                 .body = B::kOptional,
                 .result = Receipt()});
  ops.push_back({.name = "enable_reflex",
                 .method = "POST",
                 .path = "/v1/reflexes/{id}/enable",
                 .tag = "reflexes",
                 .summary = "Enable a reflex rule",
                 .params = {Path("id", Str("the rule id"))},
                 .body = B::kOptional,
                 .result = Receipt()});
  ops.push_back({.name = "disable_reflex",
                 .method = "POST",
                 .path = "/v1/reflexes/{id}/disable",
                 .tag = "reflexes",
                 .summary = "Disable a reflex rule",
                 .params = {Path("id", Str("the rule id"))},
                 .body = B::kOptional,
                 .result = Receipt()});
  ops.push_back(
      {.name = "sensor_webhook",
       .method = "POST",
       .path = "/v1/sensors/{name}",
       .tag = "sensors",
       .summary = "A request for an http sensor; it becomes a percept (a github sensor checks "
                  "its own signature instead of the token)",
       .params = {Path("name", Str("the sensor's name"))},
       .body = B::kOptional,
       .body_schema = AnyValue("what the sensor maps into a percept"),
       .statuses = {202},
       .result = Receipt(),
       .access = Access::kSignedOrToken});
  return ops;
}

}  // namespace limbic::runtime
