// The mind's operations (docs/mind.md, runtime/executive.h): its status and
// budget, waking it and putting it to sleep, its sessions. Handlers in mind.cc.
#include "runtime/api/operation_schemas.h"

namespace limbic::runtime {

using namespace schema;  // NOLINT: the table's vocabulary

std::vector<Operation> MindOperations() {
  using B = Operation::Body;
  const json session = Object({{"id", T("string")},
                               {"mind", T("string")},
                               {"trigger", T("string")},
                               {"reason", T("string")},
                               {"woken_at", T("string")},
                               {"status", Enum("awake or asleep", {"awake", "asleep"})},
                               {"outcome", T("string")},
                               {"steps", T("array")},
                               {"tokens", T("integer")}},
                              {"id", "status"});
  const json summary = Object({{"id", T("string")},
                               {"trigger", T("string")},
                               {"reason", T("string")},
                               {"woken_at", T("string")},
                               {"status", Enum("awake or asleep", {"awake", "asleep"})},
                               {"outcome", T("string")},
                               {"steps", T("integer")},
                               {"tokens", T("integer")},
                               {"duration_ms", T("integer")}},
                              {"id", "status", "steps"});
  std::vector<Operation> ops;
  ops.push_back(
      {.name = "get_mind",
       .method = "GET",
       .path = "/v1/mind",
       .tag = "mind",
       .summary = "The mind: its status, its budget used and left, the session running",
       .description = "The agent's mind (its model): off, asleep or awake; the thinking budget "
                      "of the day (tokens and minutes used and left, min_interval, the next "
                      "autonomous wake), the session running, and the last refusal to wake.",
       .result = Object({{"enabled", T("boolean")},
                         {"name", T("string")},
                         {"kind", T("string")},
                         {"status", Enum("off, asleep or awake", {"off", "asleep", "awake"})},
                         {"session", {{"type", {"object", "null"}}}},
                         {"budget", T("object")},
                         {"last_refusal", {{"type", {"object", "null"}}}},
                         {"last_session", {{"type", {"object", "null"}}}},
                         {"sessions_today", T("integer")}},
                        {"enabled", "status", "budget"}),
       .mcp = Tool("mind_status", ReadOnly()),
       .cli = true});
  ops.push_back(
      {.name = "wake_mind",
       .method = "POST",
       .path = "/v1/mind/wake",
       .tag = "mind",
       .summary = "Wake the mind now (skips min_interval, not the daily budget)",
       .description = "Wake the agent's mind with a reason. Refused (409) while a session runs "
                      "(code busy), when the daily budget is spent (code budget) or the mind "
                      "is off (code off).",
       .params = {Field("reason", Str("why it is woken (kept in mind_woken)")),
                  Field("thread_id", Str("a thread to think about"))},
       .body = B::kOptional,
       .statuses = {202},
       .result = Object({{"session", T("string")}, {"seq", T("integer")}}, {"session", "seq"}),
       .mcp = Tool("wake_mind", Writes(false, false)),
       .cli = true});
  ops.push_back({.name = "sleep_mind",
                 .method = "POST",
                 .path = "/v1/mind/sleep",
                 .tag = "mind",
                 .summary = "End the running session (outcome slept)",
                 .description = "Put the mind to sleep now: the model call in flight is cancelled, "
                                "an exec mind's program gets SIGTERM (SIGKILL after 2 s), and the "
                                "session ends with outcome slept. Refused (409) when no session runs.",
                 .result = Object({{"session", T("string")}, {"outcome", T("string")}},
                                  {"session", "outcome"}),
                 .mcp = Tool("sleep_mind", Writes(false, false)),
                 .cli = true});
  ops.push_back(
      {.name = "list_mind_sessions",
       .method = "GET",
       .path = "/v1/mind/sessions",
       .tag = "mind",
       .summary = "The mind's sessions, newest first (steps as a count)",
       .description = "The mind's sessions, newest first: each one's wake (trigger, reason), its "
                      "status and outcome, tokens and duration, with its steps as a count (one "
                      "session's record has them).",
       .params = {Query("limit", QueryKind::kCount, Int("at most this many (default 20)", 1, 1000))},
       .result = Object({{"sessions", ArrayOf(summary)}}, {"sessions"}),
       .mcp = Tool("mind_sessions", ReadOnly()),
       .cli = true});
  ops.push_back({.name = "get_mind_session",
                 .method = "GET",
                 .path = "/v1/mind/sessions/{id}",
                 .tag = "mind",
                 .summary = "One session: its wake, each step (tokens, tool calls, text), its end",
                 .description = "One session of the mind: its wake (trigger, reason, actor, the "
                                "percepts or thread it was woken on, the budget then), each step "
                                "(model, tokens, latency, its tool calls with the seqs they wrote, "
                                "the text kept) and how it ended (outcome, error).",
                 .params = {Path("id", Str("the session id, m-<seq>"))},
                 .result = session,
                 .mcp = Tool("mind_session", ReadOnly()),
                 .cli = true});
  return ops;
}

}  // namespace limbic::runtime
