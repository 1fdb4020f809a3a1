// The operations of the world model (docs/api.md "World", docs/world.md);
// handlers in world.cc.
#include "runtime/api/operation_schemas.h"

namespace limbic::runtime {

using namespace schema;  // NOLINT: the table's vocabulary

std::vector<Operation> WorldOperations() {
  using B = Operation::Body;
  std::vector<Operation> ops;
  ops.push_back({.name = "world_memory",
                 .method = "GET",
                 .path = "/v1/world/memory",
                 .tag = "world",
                 .summary = "MEMORY.md",
                 .description = "MEMORY.md: the long-term summary of what surprised the agent, by "
                                "section (People, Companies, Projects, Tools, Concepts, Events). "
                                "Read it whole.",
                 .result = AnyObject(),
                 .mcp = Tool("world_memory", ReadOnly())});
  ops.push_back(
      {.name = "world_entities",
       .method = "GET",
       .path = "/v1/world/entities",
       .tag = "world",
       .summary = "The entities of the world model",
       .description = "The entities of the world model: people, companies, projects, tools, "
                      "concepts, with when each was last referenced.",
       .params = {Query("type", QueryKind::kName,
                        Enum("only this type", {"person", "company", "project", "tool", "concept"})),
                  Query("stale", QueryKind::kBool,
                        Bool("only those not referenced for world.decay_days"))},
       .result = AnyObject(),
       .mcp = Tool("world_entities", ReadOnly())});
  ops.push_back(
      {.name = "world_entity",
       .method = "GET",
       .path = "/v1/world/entity",
       .tag = "world",
       .summary = "One entity's page",
       .description = "One entity's wiki page (Markdown): type, facts, dated timeline, relations.",
       // In the query: entity names hold '/' (owner/repo).
       .params = {Query("name", QueryKind::kName, Str("the entity's name"), true)},
       .result = AnyObject(),
       .mcp = Tool("world_entity", ReadOnly())});
  ops.push_back(
      {.name = "world_neighbors",
       .method = "GET",
       .path = "/v1/world/graph/neighbors",
       .tag = "world",
       .summary = "Related entities",
       .description = "Entities related to one entity in the relation graph, breadth first.",
       .params = {Query("name", QueryKind::kName, Str("the entity"), true),
                  Query("hops", QueryKind::kCount, Int("how far (default 1)", 1, 5))},
       .result = AnyObject(),
       .mcp = Tool("world_neighbors", ReadOnly())});
  ops.push_back({.name = "world_path",
                 .method = "GET",
                 .path = "/v1/world/graph/path",
                 .tag = "world",
                 .summary = "A shortest chain of relations",
                 .description = "A shortest chain of relations between two entities.",
                 .params = {Query("from", QueryKind::kName, Str("one entity"), true),
                            Query("to", QueryKind::kName, Str("the other"), true)},
                 .result = AnyObject(),
                 .mcp = Tool("world_path", ReadOnly())});
  ops.push_back({.name = "world_surprise",
                 .method = "GET",
                 .path = "/v1/world/surprise",
                 .tag = "world",
                 .summary = "Surprise scores",
                 .description = "Surprise scores of events (how badly the world model predicted "
                                "them), highest first.",
                 .params = {Query("date", QueryKind::kDate, Str("only this day, YYYY-MM-DD"))},
                 .result = AnyObject(),
                 .mcp = Tool("world_surprise", ReadOnly())});
  ops.push_back(
      {.name = "world_extract",
       .method = "POST",
       .path = "/v1/world/extract",
       .tag = "world",
       .summary = "Feed the world model",
       .description =
           "Feed the world model: a daily log in Markdown (text and date), or, without text, a "
           "day of limbic's own events and archive (default today). Writes entity pages, "
           "relations and surprise scores; an input already extracted is skipped unless force.",
       .params = {Field("text", Str("a daily log in Markdown")),
                  Field("date", Str("the day, YYYY-MM-DD (required with text)")),
                  Field("source", Str("a name for the log (with text)")),
                  Field("force", Bool("extract again even if already done"))},
       .body = B::kOptional,
       .result = AnyObject(),
       // An input already extracted is skipped.
       .mcp = Tool("world_extract", Writes(false, true), 300000)});
  ops.push_back({.name = "world_consolidate",
                 .method = "POST",
                 .path = "/v1/world/consolidate",
                 .tag = "world",
                 .summary = "Consolidate the world model",
                 .description = "Add surprising events to MEMORY.md and archive entities not "
                                "referenced lately.",
                 .body = B::kOptional,
                 .body_schema = {{"type", "object"}, {"maxProperties", 0}},
                 .result = AnyObject(),
                 .mcp = Tool("world_consolidate", Writes(true, false))});
  return ops;
}

}  // namespace limbic::runtime
