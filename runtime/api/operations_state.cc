// The operations of the runtime itself (health, metrics, promotion, this
// API's description), time travel and forks, and the inspector's files
// (docs/api.md); handlers in api.cc, state.cc and ui.cc.
#include "runtime/api/operation_schemas.h"

namespace limbic::runtime {

using namespace schema;  // NOLINT: the table's vocabulary

std::vector<Operation> SystemOperations() {
  std::vector<Operation> ops;
  ops.push_back(
      {.name = "health",
       .method = "GET",
       .path = "/healthz",
       .tag = "runtime",
       .summary = "Health: 200 while writes get through, 503 (same body) while they fail",
       .statuses = {200, 503},
       .result = Object({{"status", Enum("ok, or degraded with a reason", {"ok", "degraded"})},
                         {"applied_seq", T("integer")},
                         {"version", T("string")},
                         {"archive", Object({{"status", T("string")}}, {"status"})},
                         {"embedder", T("string")},
                         {"reason", T("string")},
                         {"replication", T("object")},
                         {"sandbox", T("object")}},
                        {"status", "applied_seq", "version", "archive"})});
  ops.push_back({.name = "promote",
                 .method = "POST",
                 .path = "/v1/promote",
                 .tag = "runtime",
                 .summary = "Promote this standby to primary",
                 .result = Object({{"seq", T("integer")}, {"stream_seq", T("integer")}}),
                 .cli = true});
  ops.push_back({.name = "metrics",
                 .method = "GET",
                 .path = "/metrics",
                 .tag = "runtime",
                 .summary = "Prometheus metrics",
                 .media = Media::kText});
  ops.push_back({.name = "openapi",
                 .method = "GET",
                 .path = "/v1/openapi.json",
                 .tag = "runtime",
                 .summary = "This document: the API as OpenAPI 3.1 (no token needed)",
                 .result = Object({{"openapi", T("string")}, {"paths", T("object")}},
                                  {"openapi", "paths"}),
                 .access = Access::kPublic});
  return ops;
}

std::vector<Operation> StateOperations() {
  using B = Operation::Body;
  std::vector<Operation> ops;
  ops.push_back(
      {.name = "state_at",
       .method = "GET",
       .path = "/v1/state/at",
       .tag = "state",
       .summary = "The pools as they were at a seq (replays the log from the nearest checkpoint on a worker)",
       .params = {Query("seq", QueryKind::kCount, Int("the seq (1 or more)", 1), true),
                  Query("limit", QueryKind::kCount,
                        Int("at most this many items per pool (default 100)", 1, 1000)),
                  Query("digest", QueryKind::kBool,
                        Bool("also the digest of the pools then (reads every record: slower)"))},
       .result = Object({{"seq", T("integer")}, {"ts", T("string")}, {"digest", T("string")},
                         {"events", T("integer")}, {"seconds", T("number")},
                         {"from_checkpoint", T("integer")},
                         {"arousal", T("object")}, {"pools", T("object")}},
                        {"seq", "pools"})});
  ops.push_back(
      {.name = "fork",
       .method = "POST",
       .path = "/v1/fork",
       .tag = "state",
       .summary = "Make a sandbox from a point of the log, under api.fork_root",
       .params = {Field("at_seq", Int("fork at this seq (1 or more)", 1)),
                  Field("at_time", Str("fork at this time: RFC 3339, or a duration before now (10m)")),
                  Field("into", Str("a name under api.fork_root (default fork-<seq>)"))},
       .body = B::kRequired,
       .statuses = {201},
       .result = Object({{"into", T("string")}, {"command", T("string")}}, {"into", "command"})});
  // The inspector (only when api.ui is on). The router matches whole
  // segments ("/ui" and "/ui/" alike): one pattern per depth.
  std::string path = "/ui";
  std::vector<OpParam> params;
  for (int depth = 0; depth <= 4; ++depth) {
    if (depth > 0) {
      const std::string p = "p" + std::to_string(depth);
      path += "/{" + p + "}";
      params.push_back(Path(p, Str("a segment of the file's path")));
    }
    ops.push_back({.name = depth == 0 ? "ui" : "ui_file_" + std::to_string(depth),
                   .method = "GET",
                   .path = path,
                   .tag = "ui",
                   .summary = depth == 0 ? "The inspector (/ui redirects to /ui/)"
                                         : "A file of the inspector",
                   .params = params,
                   .statuses = {200, 304, 308},
                   .media = Media::kFile,
                   .access = Access::kPublic});
  }
  return ops;
}

}  // namespace limbic::runtime
