// The operations of long-term memory and the context bundle (docs/api.md
// "Memory", "Context"); handlers in memory.cc.
#include "runtime/api/operation_schemas.h"

namespace limbic::runtime {

using namespace schema;  // NOLINT: the table's vocabulary

namespace {

const char* kNamespace = "memory namespace (default \"default\")";
const char* kImportance =
    "how much this matters, 0..1 (default 0.5); stored and exported with the memory, not (yet) "
    "used by recall ranking or decay";
const char* kTags = "labels to filter recall by";

// A memory plan's answer: its own fields, and "seq" and "events_written"
// when it wrote events.
json Plan(std::vector<std::pair<std::string, json>> props, std::vector<std::string> required) {
  props.emplace_back("seq", T("integer"));
  props.emplace_back("events_written", T("integer"));
  return Object(std::move(props), std::move(required));
}

}  // namespace

std::vector<Operation> MemoryOperations() {
  using B = Operation::Body;
  std::vector<Operation> ops;
  ops.push_back(
      {.name = "remember_fact",
       .method = "POST",
       .path = "/v1/memory/facts",
       .tag = "memory",
       .summary = "Store a fact",
       .description =
           "Store a fact as subject-relation-object (e.g. alice / works_at / acme). A newer fact "
           "with the same namespace, subject and relation supersedes the current one.",
       .params = {Field("subject", Str("what the fact is about"), true),
                  Field("relation", Str("e.g. works_at, prefers"), true),
                  Field("object", Str("the value"), true),
                  Field("importance", Unit(kImportance)),
                  Field("tags", StrList(kTags)),
                  Field("namespace", Str(kNamespace))},
       .body = B::kOptional,
       .statuses = {201, 200},
       .result = Plan({{"id", T("string")}, {"reinforced", T("boolean")},
                       {"superseded", ArrayOf(T("string"))}},
                      {"id", "reinforced"}),
       .mcp = Tool("remember_fact", Writes(false, false)),  // the same fact again reinforces it
       .cli = true});
  ops.push_back(
      {.name = "remember_episode",
       .method = "POST",
       .path = "/v1/memory/episodes",
       .tag = "memory",
       .summary = "Store an episode",
       .description =
           "Store something that happened, in free text. A near-duplicate of an existing episode "
           "reinforces that one instead (the answer says reinforced: true).",
       .params = {Field("text", Str("what happened"), true),
                  Field("importance", Unit(kImportance)),
                  Field("tags", StrList(kTags)),
                  Field("namespace", Str(kNamespace)),
                  Field("episode_id", Str("groups memories of one episode or conversation"))},
       .body = B::kOptional,
       .statuses = {201, 200},
       .result = Plan({{"id", T("string")}, {"reinforced", T("boolean")}}, {"id", "reinforced"}),
       // A near-duplicate reinforces; may embed through a remote model.
       .mcp = Tool("remember_episode", Writes(false, false), 120000),
       .cli = true});
  ops.push_back(
      {.name = "recall",
       .method = "POST",
       .path = "/v1/memory/recall",
       .tag = "memory",
       .summary = "Search long-term memory",
       .description =
           "Search long-term memory (facts, episodes, ingested documents, the archive); best "
           "matches first. Ranks by keywords (BM25) fused with vector similarity from the "
           "configured embedder: the default embedder is lexical (shared words and word pieces, "
           "not meaning: \"car\" does not find \"automobile\"); memory_stats names the embedder. "
           "Also returns the memories associated (relate) with the best matches, at 0.8 of their "
           "score, with `via` naming the match. Strengthens what it returns unless reinforce is "
           "false.",
       .params = {Field("query", Str("what to look for"), true),
                  Field("k", Int("how many results (default 5)", 1, 1000)),
                  Field("kind", Enum("only this kind", {"fact", "episode", "chunk", "archive", "staged"})),
                  Field("tag", Str("only memories with this tag")),
                  Field("namespace", Str(kNamespace)),
                  Field("episode_id", Str("only this episode's memories")),
                  Field("explain", Bool("include how each score was made (default false)")),
                  Field("reinforce", Bool("strengthen what is recalled (default true)")),
                  Field("include_superseded",
                        Bool("also facts a newer fact has replaced (default false)"))},
       .body = B::kOptional,
       .result = Plan({{"query", T("string")}, {"results", ArrayOf(AnyObject())},
                       {"reinforced", T("boolean")}},
                      {"query", "results"}),
       // Reinforces what it returns (reinforce).
       .mcp = Tool("recall", Writes(false, false), 120000)});
  ops.push_back({.name = "relate",
                 .method = "POST",
                 .path = "/v1/memory/associations",
                 .tag = "memory",
                 .summary = "Relate two entities",
                 .description = "Record that two entities are related (e.g. alice / manages / bob).",
                 .params = {Field("entity_a", Str("one entity"), true),
                            Field("relation", Str("how they relate"), true),
                            Field("entity_b", Str("the other entity"), true)},
                 .body = B::kOptional,
                 .statuses = {201, 200},
                 .result = Plan({{"id", T("string")}, {"created", T("boolean")}}, {"id", "created"}),
                 .mcp = Tool("relate", Writes(false, true)),
                 .cli = true});
  ops.push_back(
      {.name = "related",
       .method = "GET",
       .path = "/v1/memory/related",
       .tag = "memory",
       .summary = "Entities associated with an entity",
       .description =
           "Entities associated with an entity, following associations up to `depth` hops.",
       .params = {Query("entity", QueryKind::kName, Str("the entity to start from"), true),
                  Query("depth", QueryKind::kCount, Int("hops (default 1)", 1, 3))},
       .result = AnyObject(),
       .mcp = Tool("related", ReadOnly())});
  Operation forget{
      .name = "forget",
      .method = "POST",
      .path = "/v1/memory/forget",
      .tag = "memory",
      .summary = "Delete memories",
      .description =
          "Delete memories: give exactly one of id (one memory), subject (every fact about it) or "
          "older_than (every memory, of every namespace, created longer ago than that, e.g. "
          "\"30d\", however recently it was used). older_than refuses to delete more than half "
          "of all memories unless force is true.",
      .params = {Field("id", Str("a memory id")),
                 Field("subject", Str("a fact subject")),
                 Field("older_than", Str("a duration since creation: 250ms, 30s, 5m, 2h, 7d, 2w")),
                 Field("force", Bool("with older_than: delete even when more than half would go "
                                     "(default false)"))},
      .body = B::kOptional,
      .result = Plan({{"forgotten", T("integer")}, {"ids", ArrayOf(T("string"))}}, {"forgotten"}),
      .mcp = Tool("forget", Writes(true, true)),
      .cli = true};
  forget.mcp.exactly_one_of = {"id", "subject", "older_than"};
  ops.push_back(std::move(forget));
  ops.push_back(
      {.name = "decay",
       .method = "POST",
       .path = "/v1/memory/decay",
       .tag = "memory",
       .summary = "Run a decay pass",
       .description =
           "Run a decay pass now: delete the memories whose strength has faded below "
           "memory.min_strength (strength halves every memory.half_life without access; it is "
           "computed on read, so nothing else changes). Refuses to delete more than half of all "
           "memories unless force is true.",
       .params = {Field("force", Bool("delete even when more than half would go (default false)"))},
       .body = B::kOptional,
       .result = Plan({{"decayed", T("integer")}, {"deleted", T("integer")},
                       {"remaining", T("integer")}},
                      {"deleted", "remaining"}),
       .mcp = Tool("decay", Writes(true, true)),
       .cli = true});
  ops.push_back(
      {.name = "memory_stats",
       .method = "GET",
       .path = "/v1/memory/stats",
       .tag = "memory",
       .summary = "Memory counts",
       .description = "Counts of memories by kind, associations, documents, the embedder and "
                      "average strength.",
       .result = Object({{"memories", T("integer")}, {"embedder", AnyValue("the embedder")}},
                        {"memories"}),
       .mcp = Tool("memory_stats", ReadOnly())});
  ops.push_back({.name = "embed",
                 .method = "POST",
                 .path = "/v1/memory/embed",
                 .tag = "memory",
                 .summary = "Embed memories that lack the current embedder's vector",
                 .params = {Field("all", Bool("embed every memory again (default false)"))},
                 .body = B::kOptional,
                 .result = Plan({{"embedded", T("integer")}, {"embedder", T("string")}},
                                {"embedded", "embedder"}),
                 .cli = true});
  ops.push_back({.name = "export_memory",
                 .method = "GET",
                 .path = "/v1/memory/export",
                 .tag = "memory",
                 .summary = "Every memory and association, as one document POST /v1/memory/import takes",
                 .result = AnyObject()});
  ops.push_back({.name = "import_memory",
                 .method = "POST",
                 .path = "/v1/memory/import",
                 .tag = "memory",
                 .summary = "Import a document GET /v1/memory/export made",
                 .body = B::kOptional,
                 .body_schema = Obj("what GET /v1/memory/export answers"),
                 .statuses = {201, 200},
                 .result = Plan({{"imported", T("integer")}, {"skipped", T("integer")}},
                                {"imported", "skipped"}),
                 .cli = true});
  ops.push_back(
      {.name = "ingest",
       .method = "POST",
       .path = "/v1/memory/ingest",
       .tag = "memory",
       .summary = "Ingest a file or folder into memory",
       .description =
           "Read a file or folder (text, markdown, PDF) on the runtime's machine into memory as "
           "searchable chunks; files already ingested are skipped. Only under the directories "
           "the runtime's memory.ingest_roots allows (none by default: refused), and files up to "
           "memory.ingest_max_bytes.",
       .params = {Field("path",
                        Str("a file or folder path on the runtime's machine, under "
                            "memory.ingest_roots"),
                        true),
                  Field("episode_id", Str("attach the chunks to this episode"))},
       .body = B::kOptional,
       .statuses = {201, 200},
       .result = Plan({{"files", T("array")}, {"skipped", T("array")}, {"errors", T("array")}},
                      {"files", "skipped", "errors"}),
       // A file already ingested is a duplicate.
       .mcp = Tool("ingest", Writes(false, true), 600000),
       .cli = true});
  ops.push_back({.name = "get_memory",
                 .method = "GET",
                 .path = "/v1/memory/{id}",
                 .tag = "memory",
                 .summary = "One memory",
                 .description = "One memory by id (as recall returns it), with its effective "
                                "strength now; does not reinforce it.",
                 .params = {Path("id", Str("a memory id, e.g. m-42"))},
                 .result = Object({{"id", T("string")}, {"kind", T("string")}}, {"id", "kind"}),
                 .mcp = Tool("get_memory", ReadOnly())});
  ops.push_back(
      {.name = "context",
       .method = "GET",
       .path = "/v1/context",
       .tag = "memory",
       .summary = "A token-budgeted context bundle",
       .description =
           "A token-budgeted bundle for your prompt: arousal, the current thread and its "
           "percepts, the world-model pages of the entities named in `query` or the thread, the "
           "MEMORY.md sections relevant to `query`, and the memories most relevant to it; each "
           "item says its source.",
       .params = {Query("query", QueryKind::kText, Str("what the memories should be relevant to")),
                  Query("budget_tokens", QueryKind::kCount,
                        Int("token budget (default 2000)", 1, 1000000))},
       .result = AnyObject(),
       .mcp = Tool("context", ReadOnly(), 120000)});  // never reinforces
  return ops;
}

}  // namespace limbic::runtime
