// The MCP tool table: arguments checked against each tool's schema, and the
// one HTTP request each tool makes (the memory routes are checked here, as
// their integration tests need the memory API).
#include "runtime/mcp/tools.h"

#include <catch2/catch.hpp>

#include "runtime/api/api.h"

namespace limbic::runtime {
namespace {

using nlohmann::json;

ApiRequest Build(const std::string& tool, const json& arguments) {
  const McpTool* t = FindMcpTool(tool);
  REQUIRE(t != nullptr);
  std::string argument;
  Status s = CheckToolArguments(*t, arguments, &argument);
  INFO(s.message());
  REQUIRE(s.ok());
  return BuildApiRequest(*t, arguments);
}

// The message, and the argument named, of a rejection.
std::pair<std::string, std::string> Reject(const std::string& tool, const json& arguments) {
  std::string argument;
  Status s = CheckToolArguments(*FindMcpTool(tool), arguments, &argument);
  REQUIRE(s.IsInvalidArgument());
  return {s.message(), argument};
}

}  // namespace

TEST_CASE("mcp tools: memory tools map to their routes") {
  ApiRequest fact = Build("remember_fact", {{"subject", "ana"},
                                            {"relation", "likes"},
                                            {"object", "tea"},
                                            {"tags", {"food"}},
                                            {"importance", 0.8}});
  CHECK(fact.method == "POST");
  CHECK(fact.target == "/v1/memory/facts");
  CHECK(json::parse(fact.body) == json{{"subject", "ana"},
                                       {"relation", "likes"},
                                       {"object", "tea"},
                                       {"tags", {"food"}},
                                       {"importance", 0.8}});
  CHECK(Build("remember_episode", {{"text", "met ana"}}).target == "/v1/memory/episodes");
  ApiRequest recall = Build("recall", {{"query", "tea"}, {"k", 3}, {"explain", true}});
  CHECK(recall.target == "/v1/memory/recall");
  CHECK(json::parse(recall.body)["k"] == 3);
  CHECK(Build("relate", {{"entity_a", "a"}, {"relation", "r"}, {"entity_b", "b"}}).target ==
        "/v1/memory/associations");
  ApiRequest related = Build("related", {{"entity", "ana smith/&?"}, {"depth", 2}});
  CHECK(related.method == "GET");
  CHECK(related.target == "/v1/memory/related?depth=2&entity=ana%20smith%2F%26%3F");
  CHECK(related.body.empty());
  ApiRequest forget = Build("forget", {{"older_than", "30d"}});
  CHECK(forget.target == "/v1/memory/forget");
  CHECK(json::parse(forget.body) == json{{"older_than", "30d"}});
  CHECK(json::parse(Build("decay", json::object()).body) == json::object());
  CHECK(Build("memory_stats", json::object()).target == "/v1/memory/stats");
  ApiRequest ingest = Build("ingest", {{"path", "/srv/docs"}});
  CHECK(ingest.target == "/v1/memory/ingest");
  CHECK(ingest.timeout_ms > 60000);
  CHECK(Build("context", {{"query", "what now"}, {"budget_tokens", 500}}).target ==
        "/v1/context?budget_tokens=500&query=what%20now");
  CHECK(Build("context", json::object()).target == "/v1/context");
}

TEST_CASE("mcp tools: runtime tools map to their routes") {
  ApiRequest update =
      Build("update_thread", {{"id", "t-3"}, {"status", "paused"}, {"reason", "wait"}});
  CHECK(update.method == "PATCH");
  CHECK(update.target == "/v1/threads/t-3");
  CHECK(json::parse(update.body) == json{{"status", "paused"}, {"reason", "wait"}});
  CHECK(Build("list_percepts", {{"status", "new"}, {"max_age", "10m"}, {"thread_id", nullptr}})
            .target == "/v1/percepts?max_age=10m&status=new");
  ApiRequest events = Build(
      "events_since", {{"after", 5}, {"type", "percept_arrived,thread_created"}, {"wait", 20}});
  CHECK(events.target == "/v1/events?after=5&type=percept_arrived%2Cthread_created&wait=20");
  CHECK(events.timeout_ms == 30000 + 20000);
  CHECK(Build("set_arousal", {{"level", 1}}).method == "PATCH");
  CHECK(Build("enqueue_action", {{"effector", "log"}, {"type", "t"}, {"payload", "any JSON"}})
            .target == "/v1/actions");
}

TEST_CASE("mcp tools: arguments are checked against the schema, naming the argument") {
  CHECK(Reject("add_percept", {{"type", "x"}}) ==
        std::pair<std::string, std::string>{"missing required argument \"source\"", "source"});
  CHECK(Reject("add_percept", {{"source", nullptr}, {"type", "x"}}).second == "source");
  CHECK(Reject("add_percept", {{"source", "s"}, {"type", "t"}, {"intensity", 1.7}}) ==
        std::pair<std::string, std::string>{
            "argument \"intensity\": must be a number in [0, 1], got 1.7", "intensity"});
  CHECK(Reject("add_percept", {{"source", "s"}, {"type", "t"}, {"intensity", true}}).second ==
        "intensity");
  CHECK(Reject("related", {{"entity", "a"}, {"depth", 4}}).first ==
        "argument \"depth\": must be an integer in [1, 3], got 4");
  CHECK(Reject("related", {{"entity", "a"}, {"depth", 1.5}}).second == "depth");
  CHECK(Reject("recall", {{"query", "q"}, {"k", 0}}).first ==
        "argument \"k\": must be an integer in [1, 1000], got 0");
  CHECK(Reject("recall", {{"query", "q"}, {"k", 1001}}).second == "k");
  // Bounds the API has, and values that could not be sent as they are.
  CHECK(Reject("events_since", {{"after", 1e19}}).first ==
        "argument \"after\": must be an integer in [0, 9007199254740992], got 1e+19");
  CHECK(Reject("events_since", {{"wait", 51}}).second == "wait");
  CHECK(Reject("list_percepts", {{"limit", 10001}}).second == "limit");
  CHECK(Reject("context", {{"budget_tokens", 1000001}}).second == "budget_tokens");
  CHECK(Reject("forget", {{"older_than", "1d"}, {"force", "yes"}}).second == "force");
  CHECK(Build("get_memory", {{"id", "m-4"}}).target == "/v1/memory/m-4");
  CHECK(Build("events_since", {{"after", 9007199254740992.0}}).target ==
        "/v1/events?after=9007199254740992");
  CHECK(Reject("create_thread", {{"goal", "g"}, {"percepts", {"p-1", 2}}}).second == "percepts");
  CHECK(Reject("create_thread", {{"goal", "g"}, {"status", "done"}}).first ==
        "argument \"status\": must be one of active, paused, frozen, complete, got \"done\"");
  CHECK(Reject("create_thread", {{"goal", "g"}, {"state", "x"}}).second == "state");
  CHECK(Reject("attention", {{"x", 1}}).first == "unknown argument \"x\" (this tool takes none)");
  CHECK(Reject("decay", {{"forced", true}}).first == "unknown argument \"forced\" (known: force)");
  CHECK(Reject("forget", json::object()).first ==
        "give exactly one of id, subject, older_than (got 0)");
  CHECK(Reject("forget", {{"id", "m-1"}, {"subject", "s"}}).second.empty());
  CHECK(Reject("attention", json::array()).first.find("must be an object") != std::string::npos);
  // 2.0 is an integer in JSON Schema.
  CHECK(Build("related", {{"entity", "a"}, {"depth", 2.0}}).target ==
        "/v1/memory/related?depth=2&entity=a");
}

TEST_CASE("mcp tools: UrlEncode keeps only unreserved characters") {
  CHECK(UrlEncode("a-b_c.d~e") == "a-b_c.d~e");
  CHECK(UrlEncode("a b+c/é") == "a%20b%2Bc%2F%C3%A9");
}

// Issue 38 item 2: a GET tool's arguments become its route's query string,
// so each is a parameter the route declares (with its operation,
// runtime/api/operations.h) and is checked by the same rules before anything
// is sent.
TEST_CASE("mcp tools: GET arguments are declared query parameters, checked by their rules") {
  for (const McpTool& tool : McpTools()) {
    if (tool.method != "GET") continue;
    const std::vector<QueryParam>* params = nullptr;
    for (const RouteQueries& q : ApiQueries())
      if (q.method == tool.method && q.pattern == tool.path) params = &q.params;
    for (auto it = tool.input_schema["properties"].begin();
         it != tool.input_schema["properties"].end(); ++it) {
      if (tool.path.find("{" + it.key() + "}") != std::string::npos) continue;
      INFO(tool.name << " argument " << it.key());
      REQUIRE(params != nullptr);
      CHECK(std::any_of(params->begin(), params->end(),
                        [&](const QueryParam& p) { return p.name == it.key(); }));
    }
  }
  const std::string name =
      "must be a name (1-256 bytes of UTF-8, no control or bidi-control characters); ";
  CHECK(Reject("events_since", {{"type", "a\x01"}}) ==
        std::pair<std::string, std::string>{
            "argument \"type\": " + name + "U+0001 (a control character) at byte 1", "type"});
  CHECK(Reject("archive_search", {{"q", std::string(10240, 'a')}}).first ==
        "argument \"q\": 10240 bytes, more than the 2048 text may have");
  CHECK(Reject("get_percept", {{"id", "p\xe2\x80\xae"}}).first ==
        "argument \"id\": " + name + "U+202E (a bidi control) at byte 1");
  CHECK(Reject("world_surprise", {{"date", "2026-02-30"}}).first.rfind("argument \"date\": ", 0) == 0);
}

}  // namespace limbic::runtime
