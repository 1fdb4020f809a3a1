// The operations of consolidation and the archive (docs/api.md "Archive",
// docs/archive.md); handlers in archive.cc.
#include "runtime/api/operation_schemas.h"

namespace limbic::runtime {

using namespace schema;  // NOLINT: the table's vocabulary

std::vector<Operation> ArchiveOperations() {
  using B = Operation::Body;
  std::vector<Operation> ops;
  ops.push_back({.name = "consolidate",
                 .method = "POST",
                 .path = "/v1/consolidate",
                 .tag = "archive",
                 .summary = "One consolidation pass",
                 .description = "One consolidation pass: expire untouched percepts, stage finished "
                                "threads and old percepts and actions into the archive and remove "
                                "them from the pools.",
                 .body = B::kOptional,
                 .result = AnyObject(),
                 .mcp = Tool("consolidate", Writes(true, false)),
                 .cli = true});
  ops.push_back({.name = "archive_rollup",
                 .method = "POST",
                 .path = "/v1/archive/rollup",
                 .tag = "archive",
                 .summary = "Roll staged days up into the archive (one date, else every day before today)",
                 .params = {Field("date", Str("the day, YYYY-MM-DD (default: every day before today)"))},
                 .body = B::kOptional,
                 .result = AnyObject(),
                 .cli = true});
  ops.push_back({.name = "archive_verify",
                 .method = "GET",
                 .path = "/v1/archive/verify",
                 .tag = "archive",
                 .summary = "Check the archive's hash chain",
                 .result = AnyObject()});
  ops.push_back(
      {.name = "archive_search",
       .method = "GET",
       .path = "/v1/archive/search",
       .tag = "archive",
       .summary = "Search the archive",
       .description = "BM25 search over archived days and staged entries, best first.",
       .params = {Query("q", QueryKind::kText, Str("the query"), true),
                  Query("k", QueryKind::kCount, Int("how many (default 5)", 1, 1000))},
       .result = AnyObject(),
       .mcp = Tool("archive_search", ReadOnly())});
  ops.push_back({.name = "archive_stats",
                 .method = "GET",
                 .path = "/v1/archive/stats",
                 .tag = "archive",
                 .summary = "Counts of archived days and staged entries",
                 .result = AnyObject()});
  ops.push_back(
      {.name = "archive_recall",
       .method = "GET",
       .path = "/v1/archive/recall",
       .tag = "archive",
       .summary = "The most recent context",
       .description = "The most recent context: the newest staged entries, then archived days.",
       .params = {Query("k", QueryKind::kCount, Int("how many (default 5)", 1, 1000))},
       .result = AnyObject(),
       .mcp = Tool("archive_recall", ReadOnly())});
  ops.push_back({.name = "archive_day",
                 .method = "GET",
                 .path = "/v1/archive/days/{date}",
                 .tag = "archive",
                 .summary = "One archived day",
                 .description = "One archived day's document (hash-chained).",
                 .params = {Path("date", Str("YYYY-MM-DD"))},
                 .result = AnyObject(),
                 .mcp = Tool("archive_day", ReadOnly())});
  ops.push_back(
      {.name = "archive_walk",
       .method = "GET",
       .path = "/v1/archive/days/{date}/walk",
       .tag = "archive",
       .summary = "Walk an archived day's links",
       .params = {Path("date", Str("YYYY-MM-DD")),
                  Query("depth", QueryKind::kCount, Int("how far (default 1)", 0, 1000)),
                  Query("direction", QueryKind::kName,
                        Str("temporal (default), semantic or social"))},
       .result = AnyObject()});
  ops.push_back({.name = "archive_blink",
                 .method = "POST",
                 .path = "/v1/archive/blink",
                 .tag = "archive",
                 .summary = "Stage a text in the archive now",
                 .description = "Stage a text in the archive now, to find it again later (e.g. "
                                "before a restart).",
                 .params = {Field("text", Str("what to keep"), true),
                            Field("metadata", Obj("stored with the entry"))},
                 .body = B::kRequired,
                 .statuses = {201},
                 .result = Receipt(),
                 .mcp = Tool("archive_blink", Writes(false, false)),
                 .cli = true});
  return ops;
}

}  // namespace limbic::runtime
