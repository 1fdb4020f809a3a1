#include "runtime/mcp/tools.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

#include "base/json.h"
#include "runtime/api/api.h"

namespace limbic::runtime {
namespace {

using nlohmann::json;
using Props = std::vector<std::pair<std::string, json>>;

// Property schemas. Bounds and enums mirror what the API validates, so a
// client learns them up front; the API stays the judge of everything else.
json Str(const char* description) { return {{"type", "string"}, {"description", description}}; }
json Unit(const char* description) {
  return {{"type", "number"}, {"minimum", 0}, {"maximum", 1}, {"description", description}};
}
json Int(const char* description, int64_t minimum, std::optional<int64_t> maximum = std::nullopt) {
  json s = {{"type", "integer"}, {"minimum", minimum}, {"description", description}};
  if (maximum) s["maximum"] = *maximum;
  return s;
}
// 2^53: the largest integer every JSON reader holds exactly.
constexpr int64_t kMaxSafeInteger = int64_t{1} << 53;
json Bool(const char* description) { return {{"type", "boolean"}, {"description", description}}; }
json Obj(const char* description) { return {{"type", "object"}, {"description", description}}; }
json StrList(const char* description) {
  return {{"type", "array"}, {"items", {{"type", "string"}}}, {"description", description}};
}
json Enum(const char* description, std::vector<std::string> values) {
  return {{"type", "string"}, {"enum", std::move(values)}, {"description", description}};
}

McpTool Tool(std::string name, std::string method, std::string path, std::string description,
             Props props, std::vector<std::string> required = {}) {
  McpTool t;
  t.name = std::move(name);
  t.method = std::move(method);
  t.path = std::move(path);
  t.description = std::move(description);
  json properties = json::object();
  for (auto& [key, schema] : props) properties[key] = std::move(schema);
  t.input_schema = {
      {"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
  if (!required.empty()) t.input_schema["required"] = std::move(required);
  return t;
}

// What a tool does to limbic's state, as MCP annotations. Every tool acts on
// limbic's own state (openWorldHint false) except enqueue_action, whose
// effectors act on the world.
json ReadOnly() { return {{"readOnlyHint", true}, {"openWorldHint", false}}; }
json Writes(bool destructive, bool idempotent) {
  return {{"readOnlyHint", false},
          {"destructiveHint", destructive},
          {"idempotentHint", idempotent},
          {"openWorldHint", false}};
}

const char* kNamespace = "memory namespace (default \"default\")";
const char* kImportance =
    "how much this matters, 0..1 (default 0.5); stored and exported with the memory, not (yet) "
    "used by recall ranking or decay";
const char* kTags = "labels to filter recall by";
const char* kThreadStatus = "active, paused, frozen or complete";

std::vector<McpTool> MakeTools() {
  std::vector<McpTool> tools;
  // Long-term memory (docs/api.md, Memory and Context).
  tools.push_back(Tool(
      "remember_fact", "POST", "/v1/memory/facts",
      "Store a fact as subject-relation-object (e.g. alice / works_at / acme). A newer fact with "
      "the same namespace, subject and relation supersedes the current one.",
      {{"subject", Str("what the fact is about")},
       {"relation", Str("e.g. works_at, prefers")},
       {"object", Str("the value")},
       {"importance", Unit(kImportance)},
       {"tags", StrList(kTags)},
       {"namespace", Str(kNamespace)}},
      {"subject", "relation", "object"}));
  tools.push_back(
      Tool("remember_episode", "POST", "/v1/memory/episodes",
           "Store something that happened, in free text. A near-duplicate of an existing episode "
           "reinforces that one instead (the answer says reinforced: true).",
           {{"text", Str("what happened")},
            {"importance", Unit(kImportance)},
            {"tags", StrList(kTags)},
            {"namespace", Str(kNamespace)},
            {"episode_id", Str("groups memories of one episode or conversation")}},
           {"text"}));
  tools.back().timeout_ms = 120000;  // may embed through a remote model
  tools.push_back(
      Tool("recall", "POST", "/v1/memory/recall",
           "Search long-term memory (facts, episodes, ingested documents, the archive); best "
           "matches first. Ranks by keywords (BM25) fused with vector similarity from the "
           "configured embedder: the default embedder is lexical (shared words and word pieces, "
           "not meaning: \"car\" does not find \"automobile\"); memory_stats names the embedder. "
           "Also returns the memories associated (relate) with the best matches, at 0.8 of their "
           "score, with `via` naming the match. Strengthens what it returns unless reinforce is "
           "false.",
           {{"query", Str("what to look for")},
            {"k", Int("how many results (default 5)", 1, 1000)},
            {"kind", Enum("only this kind", {"fact", "episode", "chunk", "archive", "staged"})},
            {"tag", Str("only memories with this tag")},
            {"namespace", Str(kNamespace)},
            {"episode_id", Str("only this episode's memories")},
            {"explain", Bool("include how each score was made (default false)")},
            {"reinforce", Bool("strengthen what is recalled (default true)")},
            {"include_superseded", Bool("also facts a newer fact has replaced (default false)")}},
           {"query"}));
  tools.back().timeout_ms = 120000;
  tools.push_back(Tool("get_memory", "GET", "/v1/memory/{id}",
                       "One memory by id (as recall returns it), with its effective strength now; "
                       "does not reinforce it.",
                       {{"id", Str("a memory id, e.g. m-42")}}, {"id"}));
  tools.push_back(Tool("relate", "POST", "/v1/memory/associations",
                       "Record that two entities are related (e.g. alice / manages / bob).",
                       {{"entity_a", Str("one entity")},
                        {"relation", Str("how they relate")},
                        {"entity_b", Str("the other entity")}},
                       {"entity_a", "relation", "entity_b"}));
  tools.push_back(
      Tool("related", "GET", "/v1/memory/related",
           "Entities associated with an entity, following associations up to `depth` hops.",
           {{"entity", Str("the entity to start from")}, {"depth", Int("hops (default 1)", 1, 3)}},
           {"entity"}));
  tools.push_back(
      Tool("forget", "POST", "/v1/memory/forget",
           "Delete memories: give exactly one of id (one memory), subject (every fact about it) or "
           "older_than (every memory, of every namespace, created longer ago than that, e.g. "
           "\"30d\", however recently it was used). older_than refuses to delete more than half "
           "of all memories unless force is true.",
           {{"id", Str("a memory id")},
            {"subject", Str("a fact subject")},
            {"older_than", Str("a duration since creation: 250ms, 30s, 5m, 2h, 7d, 2w")},
            {"force",
             Bool("with older_than: delete even when more than half would go (default false)")}}));
  tools.back().exactly_one_of = {"id", "subject", "older_than"};
  tools.push_back(Tool(
      "decay", "POST", "/v1/memory/decay",
      "Run a decay pass now: delete the memories whose strength has faded below "
      "memory.min_strength (strength halves every memory.half_life without access; it is "
      "computed on read, so nothing else changes). Refuses to delete more than half of all "
      "memories unless force is true.",
      {{"force", Bool("delete even when more than half would go (default false)")}}));
  tools.push_back(Tool(
      "memory_stats", "GET", "/v1/memory/stats",
      "Counts of memories by kind, associations, documents, the embedder and average strength.",
      {}));
  tools.push_back(
      Tool("ingest", "POST", "/v1/memory/ingest",
           "Read a file or folder (text, markdown, PDF) on the runtime's machine into memory as "
           "searchable chunks; files already ingested are skipped. Only under the directories "
           "the runtime's memory.ingest_roots allows (none by default: refused), and files up to "
           "memory.ingest_max_bytes.",
           {{"path", Str("a file or folder path on the runtime's machine, under memory.ingest_roots")},
            {"episode_id", Str("attach the chunks to this episode")}},
           {"path"}));
  tools.back().timeout_ms = 600000;
  tools.push_back(
      Tool("context", "GET", "/v1/context",
           "A token-budgeted bundle for your prompt: arousal, the current thread and its percepts, "
           "the world-model pages of the entities named in `query` or the thread, the MEMORY.md "
           "sections relevant to `query`, and the memories most relevant to it; each item says "
           "its source.",
           {{"query", Str("what the memories should be relevant to")},
            {"budget_tokens", Int("token budget (default 2000)", 1, 1000000)}}));
  tools.back().timeout_ms = 120000;

  // The world model (docs/api.md, World; docs/world.md).
  tools.push_back(Tool("world_memory", "GET", "/v1/world/memory",
                       "MEMORY.md: the long-term summary of what surprised the agent, by section "
                       "(People, Companies, Projects, Tools, Concepts, Events). Read it whole.",
                       {}));
  tools.push_back(Tool("world_entities", "GET", "/v1/world/entities",
                       "The entities of the world model: people, companies, projects, tools, concepts, "
                       "with when each was last referenced.",
                       {{"type", Enum("only this type", {"person", "company", "project", "tool", "concept"})},
                        {"stale", Bool("only those not referenced for world.decay_days")}}));
  tools.push_back(Tool("world_entity", "GET", "/v1/world/entity",
                       "One entity's wiki page (Markdown): type, facts, dated timeline, relations.",
                       {{"name", Str("the entity's name")}}, {"name"}));
  tools.push_back(Tool("world_neighbors", "GET", "/v1/world/graph/neighbors",
                       "Entities related to one entity in the relation graph, breadth first.",
                       {{"name", Str("the entity")}, {"hops", Int("how far (default 1)", 1, 5)}}, {"name"}));
  tools.push_back(Tool("world_path", "GET", "/v1/world/graph/path",
                       "A shortest chain of relations between two entities.",
                       {{"from", Str("one entity")}, {"to", Str("the other")}}, {"from", "to"}));
  tools.push_back(Tool("world_surprise", "GET", "/v1/world/surprise",
                       "Surprise scores of events (how badly the world model predicted them), highest "
                       "first.",
                       {{"date", Str("only this day, YYYY-MM-DD")}}));
  tools.push_back(Tool("world_extract", "POST", "/v1/world/extract",
                       "Feed the world model: a daily log in Markdown (text and date), or, without text, "
                       "a day of limbic's own events and archive (default today). Writes entity pages, "
                       "relations and surprise scores; an input already extracted is skipped unless force.",
                       {{"text", Str("a daily log in Markdown")},
                        {"date", Str("the day, YYYY-MM-DD (required with text)")},
                        {"source", Str("a name for the log (with text)")},
                        {"force", Bool("extract again even if already done")}}));
  tools.back().timeout_ms = 300000;
  tools.push_back(Tool("world_consolidate", "POST", "/v1/world/consolidate",
                       "Add surprising events to MEMORY.md and archive entities not referenced lately.",
                       {}));

  // The runtime's pools (docs/api.md, Percepts .. Events).
  tools.push_back(
      Tool("add_percept", "POST", "/v1/percepts",
           "Record something perceived (a message, an observation, an alert) as a new percept.",
           {{"source", Str("where it came from, e.g. chat, github")},
            {"type", Str("what kind, e.g. message")},
            {"intensity", Unit("how strongly it should draw attention, 0..1 (default 0.5)")},
            {"text", Str("the content")},
            {"data", Obj("structured details")},
            {"thread_id", Str("assign it to this thread")},
            {"id", Str("a chosen id (default: generated)")}},
           {"source", "type"}));
  tools.push_back(
      Tool("list_percepts", "GET", "/v1/percepts",
           "List percepts, newest first, with their age and effective (decayed) intensity.",
           {{"thread_id", Str("only this thread's")},
            {"source", Str("only from this source")},
            {"type", Str("only of this type")},
            {"status", Enum("only with this status", {"new", "assigned", "processed", "dropped"})},
            {"min_age", Str("at least this old (duration, e.g. 5m)")},
            {"max_age", Str("at most this old (duration, e.g. 1h)")},
            {"limit", Int("at most this many (default 50)", 1, 10000)}}));
  tools.push_back(Tool("get_percept", "GET", "/v1/percepts/{id}",
                       "One percept with its age and effective (decayed) intensity.",
                       {{"id", Str("the percept id")}}, {"id"}));
  tools.push_back(Tool("assign_percept", "POST", "/v1/percepts/{id}/assign",
                       "Assign a percept to a thread (moving it from another thread).",
                       {{"id", Str("the percept id")},
                        {"thread_id", Str("the thread")},
                        {"reason", Str("why (kept in the event)")}},
                       {"id", "thread_id"}));
  tools.push_back(Tool("process_percept", "POST", "/v1/percepts/{id}/process",
                       "Mark a percept processed: it has been dealt with.",
                       {{"id", Str("the percept id")}, {"reason", Str("why (kept in the event)")}},
                       {"id"}));
  tools.push_back(
      Tool("drop_percept", "POST", "/v1/percepts/{id}/drop",
           "Drop a percept: ignored on purpose (it stays in the pool until consolidated).",
           {{"id", Str("the percept id")}, {"reason", Str("why")}}, {"id"}));
  tools.push_back(Tool("remove_percept", "DELETE", "/v1/percepts/{id}",
                       "Remove a percept from the pool (the events log keeps it).",
                       {{"id", Str("the percept id")}, {"reason", Str("why")}}, {"id"}));
  tools.push_back(Tool("list_threads", "GET", "/v1/threads",
                       "Threads by effective salience, highest first.",
                       {{"status", Enum("only with this status (default active)",
                                        {"active", "paused", "frozen", "complete", "all"})}}));
  tools.push_back(Tool("get_thread", "GET", "/v1/threads/{id}",
                       "One thread: goal, status, state, percepts, effective salience.",
                       {{"id", Str("the thread id")}}, {"id"}));
  tools.push_back(Tool("create_thread", "POST", "/v1/threads",
                       "Start a thread of work toward a goal, optionally taking percepts into it.",
                       {{"goal", Str("what the thread is for")},
                        {"salience", Unit("how much it matters now, 0..1 (default 0.5)")},
                        {"status", Enum(kThreadStatus, {"active", "paused", "frozen", "complete"})},
                        {"state", Obj("{phase, context, next_step}")},
                        {"from_percept", Str("the percept that started it")},
                        {"percepts", StrList("percept ids to assign to it")},
                        {"id", Str("a chosen id (default: generated)")},
                        {"reason", Str("why (kept in the event)")}},
                       {"goal"}));
  tools.push_back(
      Tool("update_thread", "PATCH", "/v1/threads/{id}",
           "Change a thread: status (pause, freeze, complete, reactivate), salience, state (a JSON "
           "merge patch into {phase, context, next_step}), or assign more percepts.",
           {{"id", Str("the thread id")},
            {"status", Enum(kThreadStatus, {"active", "paused", "frozen", "complete"})},
            {"salience", Unit("0..1")},
            {"state", Obj("merge patch into {phase, context, next_step}")},
            {"add_percepts", StrList("percept ids to assign")},
            {"reason", Str("why (kept in the events)")},
            {"outcome", Str("how it ended (with status complete)")}},
           {"id"}));
  tools.push_back(Tool("delete_thread", "DELETE", "/v1/threads/{id}",
                       "Delete a thread (the events log keeps its history); its percepts are "
                       "unassigned.",
                       {{"id", Str("the thread id")}, {"reason", Str("why")}}, {"id"}));
  tools.push_back(
      Tool("attention", "GET", "/v1/attention",
           "What to work on now: arousal, the most salient active thread with its unprocessed "
           "percepts, and new unassigned percepts by effective intensity.",
           {}));
  tools.push_back(
      Tool("enqueue_action", "POST", "/v1/actions",
           "Queue an action for a configured effector; it is delivered in the background "
           "(at least once, retried, deduplicated by idempotency_key).",
           {{"effector", Str("a configured effector's name")},
            {"type", Str("the action's type")},
            {"payload", {{"description", "the action's JSON payload"}}},
            {"idempotency_key", Str("deduplication key (default: the action id)")},
            {"thread_id", Str("the thread it serves")},
            {"percept_id", Str("the percept it answers")},
            {"id", Str("a chosen id (default: generated)")},
            {"require_approval",
             {{"type", "boolean"},
              {"description", "wait in pending_approval until a human approves it"}}},
            {"reason", Str("why (kept in the event)")}},
           {"effector", "type"}));
  for (bool approve : {true, false})
    tools.push_back(Tool(approve ? "approve_action" : "reject_action", "POST",
                         approve ? "/v1/actions/{id}/approve" : "/v1/actions/{id}/reject",
                         approve ? "Approve an action waiting in pending_approval: it is delivered."
                                 : "Reject an action waiting in pending_approval: it is never "
                                   "delivered.",
                         {{"id", Str("the action id")}, {"reason", Str("why (kept in the event)")}},
                         {"id"}));
  tools.push_back(Tool("retry_action", "POST", "/v1/actions/{id}/retry",
                       "Send a dead action again: it is pending, its attempts start over.",
                       {{"id", Str("the action id")}, {"reason", Str("why (kept in the event)")}},
                       {"id"}));
  tools.push_back(
      Tool("list_actions", "GET", "/v1/actions",
           "Outbox actions with a status, oldest first (attempts, last error, next "
           "attempt).",
           {{"status", Enum("which (default: all)", {"pending_approval", "pending", "inflight",
                                                     "failed", "complete", "dead", "rejected"})}}));
  tools.push_back(Tool("get_action", "GET", "/v1/actions/{id}",
                       "One outbox action: status, attempts, last_error, next_attempt_at.",
                       {{"id", Str("the action id")}}, {"id"}));
  tools.push_back(
      Tool("prune_actions", "POST", "/v1/actions/prune",
           "Remove complete and dead actions last updated longer ago than older_than.",
           {{"older_than", Str("a duration (default: the runtime's outbox.retention)")}}));
  tools.push_back(Tool("get_arousal", "GET", "/v1/arousal",
                       "The arousal level, its factors and the effective level now.", {}));
  tools.push_back(Tool("set_arousal", "PATCH", "/v1/arousal",
                       "Set the arousal level and/or named factors (e.g. user_waiting: true).",
                       {{"level", Unit("0..1")},
                        {"factors", Obj("{name: value}; a null value removes the factor")},
                        {"reason", Str("why")}}));
  tools.push_back(Tool(
      "events_since", "GET", "/v1/events",
      "Events (every change to the state) after a seq, oldest first, with last_seq to continue "
      "from; `wait` long-polls until one arrives.",
      {{"after", Int("events after this seq (default 0)", 0, kMaxSafeInteger)},
       {"limit", Int("at most this many (default 100)", 1, 10000)},
       {"type", Str("only these event types, comma-separated (e.g. percept_arrived)")},
       // 50, not the API's 60: MCP clients commonly time a request out at 60 s.
       {"wait", Int("seconds to wait for a first event (default 0, at most 50)", 0, 50)}}));
  tools.push_back(Tool("why", "GET", "/v1/why/{id}",
                       "Why something happened: the causal chain of a percept, thread or action "
                       "from the events log (arrival, the reflex that fired, what it created, each "
                       "delivery attempt and its outcome), with seqs and times.",
                       {{"id", Str("a percept, thread or action id")}}, {"id"}));

  // Consolidation and the archive (docs/api.md, Archive).
  tools.push_back(Tool("consolidate", "POST", "/v1/consolidate",
                       "One consolidation pass: expire untouched percepts, stage finished threads "
                       "and old percepts and actions into the archive and remove them from the "
                       "pools.",
                       {}));
  tools.push_back(Tool("archive_blink", "POST", "/v1/archive/blink",
                       "Stage a text in the archive now, to find it again later (e.g. before a "
                       "restart).",
                       {{"text", Str("what to keep")}, {"metadata", Obj("stored with the entry")}},
                       {"text"}));
  tools.push_back(Tool("archive_search", "GET", "/v1/archive/search",
                       "BM25 search over archived days and staged entries, best first.",
                       {{"q", Str("the query")}, {"k", Int("how many (default 5)", 1, 1000)}},
                       {"q"}));
  tools.push_back(Tool("archive_recall", "GET", "/v1/archive/recall",
                       "The most recent context: the newest staged entries, then archived days.",
                       {{"k", Int("how many (default 5)", 1, 1000)}}));
  tools.push_back(Tool("archive_day", "GET", "/v1/archive/days/{date}",
                       "One archived day's document (hash-chained).", {{"date", Str("YYYY-MM-DD")}},
                       {"date"}));

  // Annotations by tool: reads, then writes as (destructive, idempotent).
  const std::vector<std::pair<const char*, json>> notes = {
      {"remember_fact", Writes(false, false)},     // the same fact again reinforces it
      {"remember_episode", Writes(false, false)},  // a near-duplicate reinforces
      {"recall", Writes(false, false)},            // reinforces what it returns (reinforce)
      {"get_memory", ReadOnly()},
      {"relate", Writes(false, true)},
      {"related", ReadOnly()},
      {"forget", Writes(true, true)},
      {"decay", Writes(true, true)},
      {"memory_stats", ReadOnly()},
      {"ingest", Writes(false, true)},  // a file already ingested is a duplicate
      {"context", ReadOnly()},          // never reinforces
      {"world_memory", ReadOnly()},
      {"world_entities", ReadOnly()},
      {"world_entity", ReadOnly()},
      {"world_neighbors", ReadOnly()},
      {"world_path", ReadOnly()},
      {"world_surprise", ReadOnly()},
      {"world_extract", Writes(false, true)},  // an input already extracted is skipped
      {"world_consolidate", Writes(true, false)},
      {"add_percept", Writes(false, false)},
      {"list_percepts", ReadOnly()},
      {"create_thread", Writes(false, false)},
      {"update_thread", Writes(false, false)},
      {"attention", ReadOnly()},
      {"enqueue_action", Writes(false, false)},
      {"approve_action", Writes(false, true)},
      {"reject_action", Writes(true, true)},
      {"retry_action", Writes(false, true)},
      {"get_arousal", ReadOnly()},
      {"set_arousal", Writes(false, true)},
      {"events_since", ReadOnly()},
      {"get_percept", ReadOnly()},
      {"assign_percept", Writes(false, true)},
      {"process_percept", Writes(false, true)},
      {"drop_percept", Writes(false, true)},
      {"remove_percept", Writes(true, true)},
      {"list_threads", ReadOnly()},
      {"get_thread", ReadOnly()},
      {"delete_thread", Writes(true, true)},
      {"list_actions", ReadOnly()},
      {"get_action", ReadOnly()},
      {"prune_actions", Writes(true, true)},
      {"consolidate", Writes(true, false)},
      {"archive_blink", Writes(false, false)},
      {"archive_search", ReadOnly()},
      {"archive_recall", ReadOnly()},
      {"archive_day", ReadOnly()},
      {"why", ReadOnly()},
  };
  for (McpTool& t : tools)
    for (const auto& [name, a] : notes)
      if (t.name == name) t.annotations = a;
  for (McpTool& t : tools)
    if (t.name == "enqueue_action") t.annotations["openWorldHint"] = true;
  return tools;
}

std::string Shown(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 60) s.replace(57, std::string::npos, "...");
  return s;
}

std::string Bounds(const json& schema) {
  bool lo = schema.contains("minimum"), hi = schema.contains("maximum");
  if (lo && hi) return " in [" + schema["minimum"].dump() + ", " + schema["maximum"].dump() + "]";
  if (lo) return " >= " + schema["minimum"].dump();
  return "";
}

Status CheckValue(const std::string& key, const json& schema, const json& v) {
  const std::string type = schema.value("type", "");
  std::string want;
  if (type == "string" && !v.is_string()) want = "a string";
  if (type == "boolean" && !v.is_boolean()) want = "true or false";
  if (type == "object" && !v.is_object()) want = "an object";
  if (type == "array" && (!v.is_array() || !std::all_of(v.begin(), v.end(), [](const json& e) {
        return e.is_string();
      })))
    want = "an array of strings";
  if (type == "number" || type == "integer") {
    bool is = v.is_number() && !v.is_boolean();
    double d = is ? v.get<double>() : 0;
    if (type == "integer" && is && std::floor(d) != d) is = false;
    if (is && schema.contains("minimum") && d < schema["minimum"].get<double>()) is = false;
    if (is && schema.contains("maximum") && d > schema["maximum"].get<double>()) is = false;
    if (!is) want = (type == "integer" ? "an integer" : "a number") + Bounds(schema);
  }
  if (want.empty() && schema.contains("enum") &&
      std::find(schema["enum"].begin(), schema["enum"].end(), v) == schema["enum"].end()) {
    for (const json& e : schema["enum"])
      want += (want.empty() ? "one of " : ", ") + e.get<std::string>();
  }
  if (want.empty()) return Status::OK();
  return Status::InvalidArgument("argument \"" + key + "\": must be " + want + ", got " + Shown(v));
}

// The arguments that go into the path or, for GET, the query string pass
// the rules the API checks them by (runtime/http/query.h, ApiQueries), so a
// bad one is the tool's error naming the argument, before anything is sent.
// (Numbers and booleans the schema has checked.)
Status CheckRouteParameters(const McpTool& tool, const json& arguments, std::string* argument) {
  const std::vector<QueryParam>* params = nullptr;
  for (const RouteQueries& q : ApiQueries())
    if (q.method == tool.method && q.pattern == tool.path) params = &q.params;
  for (auto it = arguments.begin(); it != arguments.end(); ++it) {
    if (!it->is_string()) continue;
    *argument = it.key();
    const std::string& text = it->get_ref<const std::string&>();
    const std::string where = "argument \"" + it.key() + "\"";
    if (tool.path.find("{" + it.key() + "}") != std::string::npos) {
      LIMBIC_RETURN_IF_ERROR(CheckParamValue(where, QueryKind::kName, text));
      continue;
    }
    if (tool.method != "GET" || !params) continue;
    for (const QueryParam& p : *params)
      if (p.name == it.key())
        LIMBIC_RETURN_IF_ERROR(CheckParamValue(where, p.kind, text));
  }
  return Status::OK();
}

}  // namespace

const std::vector<McpTool>& McpTools() {
  static const std::vector<McpTool> tools = MakeTools();
  return tools;
}

const McpTool* FindMcpTool(std::string_view name) {
  for (const McpTool& t : McpTools())
    if (t.name == name) return &t;
  return nullptr;
}

Status CheckToolArguments(const McpTool& tool, const json& arguments, std::string* argument) {
  argument->clear();
  if (!arguments.is_object())
    return Status::InvalidArgument("arguments must be an object, got " + Shown(arguments));
  const json& properties = tool.input_schema["properties"];
  for (auto it = arguments.begin(); it != arguments.end(); ++it) {
    *argument = it.key();
    if (!properties.contains(it.key())) {
      std::string known;
      for (auto p = properties.begin(); p != properties.end(); ++p)
        known += (known.empty() ? "" : ", ") + p.key();
      return Status::InvalidArgument("unknown argument \"" + it.key() + "\" (" +
                                     (known.empty() ? "this tool takes none" : "known: " + known) +
                                     ")");
    }
    if (!it->is_null()) LIMBIC_RETURN_IF_ERROR(CheckValue(it.key(), properties[it.key()], *it));
  }
  auto given = [&](const std::string& key) {
    return arguments.contains(key) && !arguments[key].is_null();
  };
  for (const json& key : tool.input_schema.value("required", json::array())) {
    *argument = key.get<std::string>();
    if (!given(*argument))
      return Status::InvalidArgument("missing required argument \"" + *argument + "\"");
  }
  LIMBIC_RETURN_IF_ERROR(CheckRouteParameters(tool, arguments, argument));
  argument->clear();
  if (!tool.exactly_one_of.empty()) {
    size_t n = std::count_if(tool.exactly_one_of.begin(), tool.exactly_one_of.end(), given);
    std::string names;
    for (const std::string& k : tool.exactly_one_of) names += (names.empty() ? "" : ", ") + k;
    if (n != 1)
      return Status::InvalidArgument("give exactly one of " + names + " (got " + std::to_string(n) +
                                     ")");
  }
  return Status::OK();
}

ApiRequest BuildApiRequest(const McpTool& tool, const json& arguments) {
  ApiRequest r;
  r.method = tool.method;
  r.timeout_ms = tool.timeout_ms;
  std::string path = tool.path, query;
  json body = json::object();
  const json& properties = tool.input_schema["properties"];
  for (auto it = arguments.begin(); it != arguments.end(); ++it) {
    if (it->is_null()) continue;
    json value = *it;
    // 2.0 is an integer to JSON Schema, but not to the API's parsers.
    if (value.is_number_float() && properties[it.key()].value("type", "") == "integer")
      value = static_cast<int64_t>(value.get<double>());
    std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    std::string placeholder = "{" + it.key() + "}";
    if (size_t at = path.find(placeholder); at != std::string::npos) {
      path.replace(at, placeholder.size(), UrlEncode(text));
    } else if (tool.method == "GET") {
      query += (query.empty() ? "?" : "&") + UrlEncode(it.key()) + "=" + UrlEncode(text);
      if (it.key() == "wait") r.timeout_ms += 1000 * value.get<int>();
    } else {
      body[it.key()] = std::move(value);
    }
  }
  r.target = path + query;
  if (tool.method != "GET") r.body = CompactJson(body);
  return r;
}

std::string UrlEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace limbic::runtime
