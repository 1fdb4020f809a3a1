// The query parameters of every route (runtime/http/query.h), in one table:
// the router checks each request against it before its handler runs, and
// the MCP tools' GET arguments are checked with the same rules
// (mcp_tools.cc). docs/api.md lists them route by route.
#include "runtime/api/api.h"

namespace limbic::runtime {

namespace {

constexpr QueryKind kText = QueryKind::kText;
constexpr QueryKind kName = QueryKind::kName;
constexpr QueryKind kNames = QueryKind::kNames;
constexpr QueryKind kCount = QueryKind::kCount;
constexpr QueryKind kDuration = QueryKind::kDuration;
constexpr QueryKind kTime = QueryKind::kTime;
constexpr QueryKind kDate = QueryKind::kDate;
constexpr QueryKind kBool = QueryKind::kBool;

}  // namespace

const std::vector<RouteQueries>& ApiQueries() {
  static const std::vector<RouteQueries> kQueries = {
      {"GET",
       "/v1/percepts",
       {{"thread_id", kName},
        {"source", kName},
        {"type", kName},
        {"status", kName},
        {"min_age", kDuration},
        {"max_age", kDuration},
        {"limit", kCount}}},
      {"GET", "/v1/threads", {{"status", kName}, {"limit", kCount}}},
      {"GET", "/v1/actions", {{"status", kName}}},
      {"GET",
       "/v1/events",
       {{"after", kCount},
        {"limit", kCount},
        {"wait", kCount},
        {"type", kNames},
        {"actor", kName},
        {"id", kName},
        {"since", kTime},
        {"until", kTime}}},
      {"GET", "/v1/events/stream", {{"after", kCount}, {"type", kNames}}},
      {"PUT", "/v1/reflexes/{id}", {{"dry_run", kBool}}},
      {"GET", "/v1/archive/search", {{"q", kText}, {"k", kCount}}},
      {"GET", "/v1/archive/recall", {{"k", kCount}}},
      {"GET", "/v1/archive/days/{date}/walk", {{"depth", kCount}, {"direction", kName}}},
      {"GET", "/v1/memory/related", {{"entity", kName}, {"depth", kCount}}},
      {"GET", "/v1/context", {{"query", kText}, {"budget_tokens", kCount}}},
      {"GET", "/v1/state/at", {{"seq", kCount}, {"limit", kCount}}},
      {"GET", "/v1/world/entities", {{"type", kName}, {"stale", kBool}}},
      {"GET", "/v1/world/entity", {{"name", kName}}},
      {"GET", "/v1/world/graph/neighbors", {{"name", kName}, {"hops", kCount}}},
      {"GET", "/v1/world/graph/path", {{"from", kName}, {"to", kName}}},
      {"GET", "/v1/world/surprise", {{"date", kDate}}},
  };
  return kQueries;
}

}  // namespace limbic::runtime
