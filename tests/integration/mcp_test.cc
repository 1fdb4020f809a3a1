// `limbic mcp`: a client speaking MCP (JSON-RPC 2.0, one message per line)
// over pipes to the real binary, in both modes -- the runtime in-process,
// and a `limbic run` found through <state>/api.json.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "runtime_util.h"

namespace limbic::testing {
namespace {

// The client end. Every line the server writes must be a JSON-RPC message:
// stdout carries nothing else.
class McpClient {
 public:
  McpClient(const TempDir& dir, std::vector<std::string> args)
      : child_(Argv(dir, std::move(args)), StderrFile{dir / "mcp.log"}) {}

  // Sends a request and returns the answer with its id.
  json Request(const std::string& method, const json& params = json::object()) {
    int id = next_id_++;
    Send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
    json answer = Next();
    CHECK(answer["id"] == id);
    return answer;
  }
  void Notify(const std::string& method) { Send({{"jsonrpc", "2.0"}, {"method", method}}); }
  // A raw line; returns the next message.
  json Raw(const std::string& line) {
    REQUIRE(child_.Write(line + "\n"));
    return Next();
  }
  json Initialize(const std::string& version = "2025-06-18") {
    json answer = Request("initialize", {{"protocolVersion", version},
                                         {"capabilities", json::object()},
                                         {"clientInfo", {{"name", "test"}, {"version", "0"}}}});
    Notify("notifications/initialized");
    return answer;
  }
  // tools/call's result; REQUIREs that it is not a protocol error.
  json Call(const std::string& tool, const json& arguments) {
    json answer = Request("tools/call", {{"name", tool}, {"arguments", arguments}});
    INFO(answer.dump());
    REQUIRE(answer.contains("result"));
    return answer["result"];
  }
  // A successful call's JSON answer.
  json Ok(const std::string& tool, const json& arguments = json::object()) {
    json result = Call(tool, arguments);
    INFO(tool << ": " << result.dump());
    REQUIRE(result["isError"] == false);
    REQUIRE(result["content"][0]["type"] == "text");
    CHECK(json::parse(result["content"][0]["text"].get<std::string>()) ==
          result["structuredContent"]);
    return result["structuredContent"];
  }
  // Closes stdin; the exit code once it has exited.
  int Finish() {
    child_.CloseStdin();
    int code = -99;
    CHECK(child_.WaitFor(30000, &code));
    return code;
  }
  Child& child() { return child_; }

 private:
  static std::vector<std::string> Argv(const TempDir& dir, std::vector<std::string> args) {
    std::vector<std::string> argv{LimbicBinary(), "--state", dir / "state", "mcp"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  void Send(const json& msg) { REQUIRE(child_.Write(msg.dump() + "\n")); }
  json Next() {
    std::string line;
    REQUIRE(child_.ReadLine(&line, 30000));
    json msg = json::parse(line, nullptr, false);
    INFO("stdout line: " << line);
    REQUIRE(msg.is_object());
    CHECK(msg["jsonrpc"] == "2.0");
    return msg;
  }

  Child child_;
  int next_id_ = 1;
};

// A config for the in-process runtime: BaseConfig with a sensor, which
// `limbic mcp` must leave out.
std::vector<std::string> WriteConfig(const TempDir& dir) {
  json config = BaseConfig(
      dir, json::object(),
      {{"tick", {{"kind", "timer"}, {"every", "1h"}, {"source", "timer"}, {"type", "tick"}}}});
  std::ofstream(dir / "limbic.json") << config.dump(2);
  return {"--config", dir / "limbic.json"};
}

bool Exists(const std::string& path) { return std::filesystem::exists(path); }

}  // namespace

TEST_CASE("mcp: initialize echoes a supported protocol version, else answers the newest") {
  TempDir dir;
  McpClient mcp(dir, WriteConfig(dir));
  json answer = mcp.Initialize("2025-03-26");
  CHECK(answer["result"]["protocolVersion"] == "2025-03-26");
  CHECK(answer["result"]["serverInfo"]["name"] == "limbic");
  CHECK(answer["result"]["serverInfo"]["version"].is_string());
  CHECK(answer["result"]["capabilities"]["tools"].is_object());
  // The initialized notification got no answer: the next line answers this ping.
  CHECK(mcp.Request("ping")["result"] == json::object());
  CHECK(mcp.Initialize("2024-11-05")["result"]["protocolVersion"] == "2024-11-05");
  CHECK(mcp.Initialize("2025-06-18")["result"]["protocolVersion"] == "2025-06-18");
  CHECK(mcp.Initialize("1999-01-01")["result"]["protocolVersion"] == "2025-06-18");
  CHECK(mcp.Request("initialize", json::object())["error"]["code"] == -32602);
  CHECK(mcp.Finish() == 0);
}

TEST_CASE("mcp: tools/list has every tool with a strict JSON Schema") {
  TempDir dir;
  McpClient mcp(dir, WriteConfig(dir));
  mcp.Initialize();
  json tools = mcp.Request("tools/list")["result"]["tools"];
  std::map<std::string, json> by_name;
  for (const json& t : tools) by_name[t["name"]] = t;
  std::set<std::string> names;
  for (const auto& [name, t] : by_name) names.insert(name);
  CHECK(names == std::set<std::string>{"remember_fact",
                                       "remember_episode",
                                       "recall",
                                       "get_memory",
                                       "relate",
                                       "related",
                                       "forget",
                                       "decay",
                                       "memory_stats",
                                       "ingest",
                                       "context",
                                       "add_percept",
                                       "list_percepts",
                                       "create_thread",
                                       "update_thread",
                                       "attention",
                                       "enqueue_action",
                                       "get_arousal",
                                       "set_arousal",
                                       "events_since",
                                       "world_memory",
                                       "world_entities",
                                       "world_entity",
                                       "world_neighbors",
                                       "world_path",
                                       "world_surprise",
                                       "world_extract",
                                       "world_consolidate",
                                       "get_percept",
                                       "assign_percept",
                                       "process_percept",
                                       "drop_percept",
                                       "remove_percept",
                                       "list_threads",
                                       "get_thread",
                                       "delete_thread",
                                       "list_actions",
                                       "get_action",
                                       "prune_actions",
                                       "consolidate",
                                       "archive_blink",
                                       "archive_search",
                                       "archive_recall",
                                       "archive_day",
                                       "why"});
  for (const auto& [name, t] : by_name) {
    INFO(name);
    CHECK(t["description"].is_string());
    CHECK(t["inputSchema"]["type"] == "object");
    CHECK(t["inputSchema"]["properties"].is_object());
    CHECK(t["inputSchema"]["additionalProperties"] == false);
  }
  auto required = [&](const std::string& tool) {
    return by_name[tool]["inputSchema"].value("required", json::array());
  };
  CHECK(required("remember_fact") == json{"subject", "relation", "object"});
  CHECK(required("remember_episode") == json{"text"});
  CHECK(required("recall") == json{"query"});
  CHECK(required("relate") == json{"entity_a", "relation", "entity_b"});
  CHECK(required("related") == json{"entity"});
  CHECK(required("ingest") == json{"path"});
  CHECK(required("forget") == json::array());  // exactly one of id, subject, older_than
  CHECK(required("add_percept") == json{"source", "type"});
  CHECK(required("create_thread") == json{"goal"});
  CHECK(required("update_thread") == json{"id"});
  CHECK(required("enqueue_action") == json{"effector", "type"});
  CHECK(required("memory_stats") == json::array());
  json fact = by_name["remember_fact"]["inputSchema"]["properties"];
  CHECK(fact["importance"] == json{{"type", "number"},
                                   {"minimum", 0},
                                   {"maximum", 1},
                                   {"description", fact["importance"]["description"]}});
  CHECK(fact["tags"]["type"] == "array");
  CHECK(fact["tags"]["items"]["type"] == "string");
  json recall = by_name["recall"]["inputSchema"]["properties"];
  for (const char* key : {"k", "kind", "tag", "namespace", "episode_id", "explain", "reinforce"})
    CHECK(recall.contains(key));
  CHECK(recall["explain"]["type"] == "boolean");
  CHECK(by_name["related"]["inputSchema"]["properties"]["depth"]["maximum"] == 3);
  CHECK(by_name["context"]["inputSchema"]["properties"]["budget_tokens"]["type"] == "integer");
  CHECK(by_name["decay"]["inputSchema"]["properties"]["force"]["type"] == "boolean");
  CHECK(by_name["events_since"]["inputSchema"]["properties"]["limit"]["maximum"] == 10000);
  CHECK(by_name["list_percepts"]["inputSchema"]["properties"]["status"]["enum"] ==
        json{"new", "assigned", "processed", "dropped"});
  CHECK(mcp.Finish() == 0);
}

TEST_CASE("mcp: runtime tools through the in-process runtime") {
  TempDir dir;
  McpClient mcp(dir, WriteConfig(dir));
  mcp.Initialize();

  json added = mcp.Ok("add_percept", {{"source", "chat"},
                                      {"type", "message"},
                                      {"intensity", 0.9},
                                      {"text", "hello & welcome?"},
                                      {"data", {{"from", "ana"}}}});
  std::string percept = added["id"];
  CHECK(added["seq"].is_number());
  mcp.Ok("add_percept", {{"source", "mail"}, {"type", "message"}});
  json listed = mcp.Ok("list_percepts", {{"source", "chat"}, {"status", "new"}, {"limit", 10}});
  REQUIRE(listed["percepts"].size() == 1);
  CHECK(listed["percepts"][0]["id"] == percept);
  CHECK(listed["percepts"][0]["text"] == "hello & welcome?");

  mcp.Ok("set_arousal",
         {{"level", 0.7}, {"factors", {{"user_waiting", true}}}, {"reason", "test"}});
  json arousal = mcp.Ok("get_arousal");
  CHECK(arousal["level"] == 0.7);
  CHECK(arousal["factors"]["user_waiting"] == true);

  std::string thread = mcp.Ok("create_thread", {{"goal", "answer ana"}, {"salience", 0.6}})["id"];
  mcp.Ok("update_thread", {{"id", thread},
                           {"salience", 0.9},
                           {"add_percepts", {percept}},
                           {"state", {{"phase", "reading"}}}});
  json attention = mcp.Ok("attention");
  CHECK(attention["thread"]["id"] == thread);
  CHECK(attention["thread"]["state"]["phase"] == "reading");
  REQUIRE(attention["thread_percepts"].size() == 1);
  CHECK(attention["thread_percepts"][0]["id"] == percept);

  std::string action = mcp.Ok("enqueue_action", {{"effector", "log"},
                                                 {"type", "reply"},
                                                 {"payload", {{"text", "hi"}}},
                                                 {"thread_id", thread}})["id"];
  CHECK(!action.empty());

  json events = mcp.Ok("events_since", {{"after", 0}, {"type", "percept_arrived,thread_created"}});
  std::vector<std::string> types;
  for (const json& e : events["events"]) types.push_back(e["type"]);
  CHECK(types == std::vector<std::string>{"percept_arrived", "percept_arrived", "thread_created"});
  CHECK(events["last_seq"].is_number());
  json later = mcp.Ok("events_since", {{"after", events["events"][1]["seq"]}, {"limit", 1}});
  CHECK(later["events"].size() == 1);

  // An API error is the tool's result, not a protocol error.
  json missing = mcp.Call("update_thread", {{"id", "t-nope"}, {"salience", 0.5}});
  CHECK(missing["isError"] == true);
  CHECK(missing["structuredContent"]["error"]["code"] == "not_found");
  json bad = mcp.Call("enqueue_action", {{"effector", "nowhere"}, {"type", "x"}});
  CHECK(bad["isError"] == true);
  CHECK(mcp.Finish() == 0);
  // The sensor was left out: no tick percepts in the log.
  CHECK(Limbic({"--state", dir / "state", "--json", "percept", "list", "--source", "timer"}).out ==
        "[]\n");
}

TEST_CASE("mcp: a mind closes the loop through MCP alone") {
  TempDir dir;
  McpClient mcp(dir, WriteConfig(dir));
  mcp.Initialize();
  std::string p1 = mcp.Ok(
      "add_percept", {{"source", "chat"}, {"type", "message"}, {"text", "deploy failed"}})["id"];
  std::string p2 =
      mcp.Ok("add_percept", {{"source", "chat"}, {"type", "message"}, {"text", "spam"}})["id"];
  std::string p3 =
      mcp.Ok("add_percept", {{"source", "chat"}, {"type", "message"}, {"text", "typo"}})["id"];
  CHECK(mcp.Ok("get_percept", {{"id", p1}})["status"] == "new");
  std::string t = mcp.Ok("create_thread", {{"goal", "fix the deploy"}, {"from_percept", p1}})["id"];
  CHECK(mcp.Ok("get_percept", {{"id", p1}})["thread_id"] == t);  // from_percept assigns
  std::string other = mcp.Ok("create_thread", {{"goal", "later"}})["id"];
  mcp.Ok("assign_percept", {{"id", p3}, {"thread_id", other}});
  mcp.Ok("process_percept", {{"id", p1}});
  mcp.Ok("drop_percept", {{"id", p2}, {"reason", "spam"}});
  CHECK(mcp.Ok("get_percept", {{"id", p2}})["status"] == "dropped");
  CHECK(mcp.Ok("list_threads", {{"status", "all"}})["threads"].size() == 2);
  CHECK(mcp.Ok("get_thread", {{"id", t}})["goal"] == "fix the deploy");
  mcp.Ok("delete_thread", {{"id", other}, {"reason", "not needed"}});
  CHECK(mcp.Ok("get_percept", {{"id", p3}})["status"] == "new");  // unassigned by the deletion
  mcp.Ok("remove_percept", {{"id", p3}});
  CHECK(mcp.Call("get_percept", {{"id", p3}})["isError"] == true);

  std::string a =
      mcp.Ok("enqueue_action", {{"effector", "log"}, {"type", "reply"}, {"thread_id", t}})["id"];
  json action;
  for (int i = 0; i < 100; ++i) {  // the log effector delivers at once
    action = mcp.Ok("get_action", {{"id", a}});
    if (action["status"] == "complete") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(action["status"] == "complete");
  CHECK(mcp.Ok("list_actions", {{"status", "complete"}})["actions"].size() == 1);
  CHECK(mcp.Ok("prune_actions", {{"older_than", "1h"}})["events"].empty());

  json why = mcp.Ok("why", {{"id", p1}});
  CHECK(why["kind"] == "percept");
  CHECK(why["chain"][0]["type"] == "percept_arrived");
  CHECK(mcp.Call("why", {{"id", "p-nope"}})["structuredContent"]["error"]["code"] == "not_found");

  CHECK(mcp.Ok("consolidate")["expired"] == 0);
  mcp.Ok("archive_blink", {{"text", "the deploy failed because the cache was cold"}});
  json found = mcp.Ok("archive_search", {{"q", "cache cold"}, {"k", 3}});
  REQUIRE(found["results"].size() == 1);
  CHECK(found["results"][0]["kind"] == "staged");
  CHECK(mcp.Ok("archive_recall", {{"k", 2}})["items"].size() == 1);
  json no_day = mcp.Call("archive_day", {{"date", "1999-01-01"}});
  CHECK(no_day["isError"] == true);
  CHECK(no_day["structuredContent"]["error"]["code"] == "not_found");
  CHECK(mcp.Finish() == 0);
}

TEST_CASE("mcp: JSON-RPC errors") {
  TempDir dir;
  McpClient mcp(dir, WriteConfig(dir));
  mcp.Initialize();
  json parse = mcp.Raw("{not json");
  CHECK(parse["error"]["code"] == -32700);
  CHECK(parse["id"].is_null());
  CHECK(mcp.Raw(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])")["error"]["code"] == -32600);
  CHECK(mcp.Raw(R"("ping")")["error"]["code"] == -32600);
  CHECK(
      mcp.Raw(R"({"jsonrpc":"1.0","id":7,"method":"ping"})") ==
      json{{"jsonrpc", "2.0"},
           {"id", 7},
           {"error", {{"code", -32600}, {"message", "invalid request: jsonrpc must be \"2.0\""}}}});
  CHECK(mcp.Raw(R"({"jsonrpc":"2.0","id":"s","method":42})")["error"]["code"] == -32600);
  // Notifications, even unknown or invalid ones, and blank lines get no answer.
  mcp.child().Write(
      "\n{\"jsonrpc\":\"2.0\",\"method\":\"nope/"
      "nothing\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\"}\n");
  json unknown = mcp.Request("resources/list");
  CHECK(unknown["error"]["code"] == -32601);

  json no_tool = mcp.Request("tools/call", {{"name", "fly"}, {"arguments", json::object()}});
  CHECK(no_tool["error"]["code"] == -32602);
  CHECK(no_tool["error"]["message"] == "unknown tool: fly");
  json no_source =
      mcp.Request("tools/call", {{"name", "add_percept"}, {"arguments", {{"type", "x"}}}});
  CHECK(no_source["error"]["code"] == -32602);
  CHECK(no_source["error"]["data"]["argument"] == "source");
  CHECK(no_source["error"]["message"].get<std::string>().find("\"source\"") != std::string::npos);
  json wrong_type = mcp.Request(
      "tools/call", {{"name", "add_percept"},
                     {"arguments", {{"source", "s"}, {"type", "t"}, {"intensity", "high"}}}});
  CHECK(wrong_type["error"]["data"]["argument"] == "intensity");
  json out_of_range =
      mcp.Request("tools/call", {{"name", "set_arousal"}, {"arguments", {{"level", 1.5}}}});
  CHECK(out_of_range["error"]["data"]["argument"] == "level");
  json extra = mcp.Request("tools/call", {{"name", "attention"}, {"arguments", {{"now", 1}}}});
  CHECK(extra["error"]["data"]["argument"] == "now");
  json bad_enum =
      mcp.Request("tools/call", {{"name", "list_percepts"}, {"arguments", {{"status", "old"}}}});
  CHECK(bad_enum["error"]["code"] == -32602);
  json two = mcp.Request("tools/call",
                         {{"name", "forget"}, {"arguments", {{"id", "m-1"}, {"subject", "x"}}}});
  CHECK(two["error"]["code"] == -32602);
  CHECK(mcp.Request("tools/call", {{"arguments", json::object()}})["error"]["code"] == -32602);
  CHECK(mcp.Request("tools/call", {{"name", "attention"}, {"arguments", "x"}})["error"]["code"] ==
        -32602);
  // Nothing of that reached the state.
  CHECK(mcp.Ok("list_percepts")["percepts"].empty());
  CHECK(mcp.Finish() == 0);
}

TEST_CASE("mcp: uses the limbic run that holds the state dir") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["api"]["token"] = "s3cret";
  RunningLimbic limbic(dir, config);
  REQUIRE(limbic.port() != 0);
  json api_file = json::parse(std::ifstream(dir / "state/api.json"));
  CHECK(api_file["pid"] == limbic.child().pid());
  CHECK(api_file["url"] == "http://127.0.0.1:" + std::to_string(limbic.port()));
  {
    // The token comes from the same config file.
    McpClient mcp(dir, {"--config", dir / "limbic.json"});
    mcp.Initialize();
    std::string id =
        mcp.Ok("add_percept", {{"source", "mcp"}, {"type", "note"}, {"text", "via mcp"}})["id"];
    HttpReply seen =
        Http(limbic.port(), "GET", "/v1/percepts/" + id, "", {{"Authorization", "Bearer s3cret"}});
    CHECK(seen.status == 200);
    CHECK(seen.Json()["text"] == "via mcp");
    CHECK(mcp.Finish() == 0);
  }
  {
    // Without the token the runtime says no, and the tool says so.
    McpClient mcp(dir, {});
    mcp.Initialize();
    json denied = mcp.Call("attention", json::object());
    CHECK(denied["isError"] == true);
    CHECK(denied["structuredContent"]["error"]["code"] == "unauthorized");
    CHECK(mcp.Finish() == 0);
  }
  CHECK(limbic.child().Kill(SIGTERM) == 0);
  CHECK(!Exists(dir / "state/api.json"));  // removed at a clean stop
}

TEST_CASE("mcp: stdin EOF stops the in-process runtime and releases the state dir") {
  TempDir dir;
  std::vector<std::string> args = WriteConfig(dir);
  std::string id;
  {
    McpClient first(dir, args);
    first.Initialize();
    id = first.Ok("add_percept", {{"source", "chat"}, {"type", "message"}})["id"];
    // A second mcp on the same state dir talks to the first one's runtime.
    REQUIRE(Exists(dir / "state/api.json"));
    {
      McpClient second(dir, args);
      second.Initialize();
      CHECK(second.Ok("list_percepts")["percepts"][0]["id"] == id);
      CHECK(second.Finish() == 0);
    }
    CHECK(first.Finish() == 0);
  }
  CHECK(!Exists(dir / "state/api.json"));
  // Released: the command line can take the lock, and the percept is durable.
  auto listed = Limbic({"--state", dir / "state", "--json", "percept", "list"});
  CHECK(listed.exit_code == 0);
  CHECK(json::parse(listed.out)[0]["id"] == id);
  McpClient again(dir, args);
  again.Initialize();
  CHECK(again.Ok("list_percepts")["percepts"].size() == 1);
  CHECK(again.Finish() == 0);
}

TEST_CASE("mcp: a stale api.json is not trusted and SIGTERM stops the in-process runtime cleanly") {
  TempDir dir;
  std::filesystem::create_directories(dir / "state");
  // Left by a crash: its pid is gone and nobody holds the lock.
  std::ofstream(dir / "state/api.json") << R"({"pid": 999999999, "url": "http://127.0.0.1:1"})";
  McpClient mcp(dir, WriteConfig(dir));
  mcp.Initialize();
  CHECK(mcp.Ok("add_percept", {{"source", "chat"}, {"type", "message"}})["id"].is_string());
  json api_file = json::parse(std::ifstream(dir / "state/api.json"));
  CHECK(api_file["pid"] == mcp.child().pid());
  kill(mcp.child().pid(), SIGTERM);
  int code = -99;
  CHECK(mcp.child().WaitFor(30000, &code));
  CHECK(code == 0);
  CHECK(!Exists(dir / "state/api.json"));
  CHECK(Limbic({"--state", dir / "state", "percept", "list"}).exit_code == 0);
}

TEST_CASE("mcp: an unreachable --url is a tool error") {
  TempDir dir;
  McpClient mcp(dir, {"--url", "http://127.0.0.1:1"});
  mcp.Initialize();
  json result = mcp.Call("attention", json::object());
  CHECK(result["isError"] == true);
  CHECK(result["content"][0]["text"].get<std::string>().find("unreachable") != std::string::npos);
  CHECK(mcp.Finish() == 0);
}


TEST_CASE("mcp: memory and world model tools through the in-process runtime") {
  TempDir dir;
  McpClient mcp(dir, WriteConfig(dir));
  mcp.Initialize();

  json fact = mcp.Ok("remember_fact", {{"subject", "alice"}, {"relation", "works_at"}, {"object", "Acme"}});
  CHECK(fact["id"].get<std::string>().rfind("m-", 0) == 0);
  mcp.Ok("remember_episode", {{"text", "The nightly backup failed because the disk was full."}});
  json recalled = mcp.Ok("recall", {{"query", "backup disk"}, {"k", 3}});
  REQUIRE(!recalled["results"].empty());
  CHECK_THAT(recalled["results"][0]["text"].get<std::string>(), Catch::Contains("backup"));
  CHECK(mcp.Ok("memory_stats")["memories"] == 2);

  json x = mcp.Ok("world_extract", {{"text", "- Alice Chen joined Acme Corp as CTO.\n"},
                                    {"date", "2026-11-02"},
                                    {"source", "notes"}});
  CHECK(x["source"] == "api:notes");
  CHECK(x["pages_created"].get<int>() >= 2);
  json page = mcp.Ok("world_entity", {{"name", "Alice Chen"}});
  CHECK_THAT(page["markdown"].get<std::string>(), Catch::Contains("**Type:** person"));
  json path = mcp.Ok("world_path", {{"from", "Alice Chen"}, {"to", "Acme Corp"}});
  CHECK(path["hops"] == 1);
  CHECK(mcp.Ok("world_consolidate")["added"] == 1);
  CHECK_THAT(mcp.Ok("world_memory")["markdown"].get<std::string>(),
             Catch::Contains("Alice Chen joined Acme Corp as CTO."));
  json missing = mcp.Call("world_entity", {{"name", "Nobody"}});
  CHECK(missing["isError"] == true);
  CHECK(missing["structuredContent"]["error"]["code"] == "not_found");
  CHECK(mcp.Finish() == 0);
}

TEST_CASE("mcp: schemas match the API, annotations follow the protocol version") {
  TempDir dir;
  McpClient mcp(dir, WriteConfig(dir));
  mcp.Initialize("2025-03-26");
  std::map<std::string, json> tools;
  json listed = mcp.Request("tools/list")["result"]["tools"];
  for (const json& t : listed) tools[t["name"]] = t;
  json recall = tools["recall"]["inputSchema"]["properties"];
  CHECK(recall["k"]["maximum"] == 1000);
  CHECK(recall["include_superseded"]["type"] == "boolean");
  CHECK_THAT(tools["recall"]["description"].get<std::string>(), Catch::Contains("lexical"));
  json events = tools["events_since"]["inputSchema"]["properties"];
  CHECK(events["wait"]["maximum"] == 50);
  CHECK(events["after"]["maximum"] == int64_t{1} << 53);
  CHECK_THAT(tools["forget"]["description"].get<std::string>(), Catch::Contains("created"));
  CHECK_THAT(tools["remember_fact"]["inputSchema"]["properties"]["importance"]["description"]
                 .get<std::string>(),
             !Catch::Contains("decays slower"));
  for (const char* name : {"forget", "decay", "world_consolidate"}) {
    INFO(name);
    CHECK(tools[name]["annotations"]["destructiveHint"] == true);
    CHECK(tools[name]["annotations"]["readOnlyHint"] == false);
  }
  for (const char* name : {"get_memory", "list_percepts", "attention", "context", "events_since"})
    CHECK(tools[name]["annotations"]["readOnlyHint"] == true);
  CHECK(tools["recall"]["annotations"]["readOnlyHint"] == false);  // it reinforces
  CHECK(tools["relate"]["annotations"]["idempotentHint"] == true);
  // An older client gets no annotations: they are not in its version.
  mcp.Initialize("2024-11-05");
  json old_list = mcp.Request("tools/list")["result"]["tools"];
  for (const json& t : old_list) CHECK(!t.contains("annotations"));

  // Arguments the API would refuse, or that cannot be sent, are refused by name.
  auto refused = [&](const std::string& tool, const json& args) {
    json a = mcp.Request("tools/call", {{"name", tool}, {"arguments", args}});
    INFO(a.dump());
    CHECK(a["error"]["code"] == -32602);
    return a["error"]["data"].value("argument", "");
  };
  CHECK(refused("events_since", {{"after", 1e19}}) == "after");
  CHECK(refused("events_since", {{"after", -1}}) == "after");
  CHECK(refused("events_since", {{"wait", 60}}) == "wait");
  CHECK(refused("recall", {{"query", "x"}, {"k", 1001}}) == "k");
  CHECK(refused("recall", {{"query", "x"}, {"kind", "thought"}}) == "kind");
  CHECK(mcp.Ok("events_since", {{"after", int64_t{1} << 53}})["events"].empty());
  CHECK(mcp.Finish() == 0);
}

TEST_CASE("mcp: get_memory, include_superseded, forget's guard and ingest's roots") {
  TempDir dir;
  McpClient mcp(dir, WriteConfig(dir));
  mcp.Initialize();
  std::string old_id =
      mcp.Ok("remember_fact", {{"subject", "alice"}, {"relation", "works_at"}, {"object", "Acme"}})["id"];
  mcp.Ok("remember_fact", {{"subject", "alice"}, {"relation", "works_at"}, {"object", "Initech"}});
  json got = mcp.Ok("get_memory", {{"id", old_id}});
  CHECK(got["object"] == "Acme");
  CHECK(got["superseded_by"].is_string());
  CHECK(mcp.Call("get_memory", {{"id", "m-999999"}})["isError"] == true);
  json current = mcp.Ok("recall", {{"query", "alice works_at"}, {"reinforce", false}});
  CHECK(current["results"].size() == 1);
  json all = mcp.Ok("recall",
                    {{"query", "alice works_at"}, {"reinforce", false}, {"include_superseded", true}});
  CHECK(all["results"].size() == 2);
  // older_than "0s" would delete everything: refused, then forced.
  json guarded = mcp.Call("forget", {{"older_than", "0s"}});
  CHECK(guarded["isError"] == true);
  CHECK_THAT(guarded["content"][0]["text"].get<std::string>(), Catch::Contains("more than half"));
  CHECK(mcp.Ok("memory_stats")["memories"] == 2);
  CHECK(mcp.Ok("forget", {{"older_than", "0s"}, {"force", true}})["forgotten"] == 2);
  // No memory.ingest_roots: ingest is refused, and the model reads why.
  std::ofstream(dir / "note.md") << "a note";
  json ingest = mcp.Call("ingest", {{"path", dir / "note.md"}});
  CHECK(ingest["isError"] == true);
  CHECK(ingest["structuredContent"]["error"]["code"] == "forbidden");
  CHECK_THAT(ingest["content"][0]["text"].get<std::string>(), Catch::Contains("memory.ingest_roots"));
  CHECK(mcp.Finish() == 0);
}

TEST_CASE("mcp: a body over the API's limit is reported as too large, not as unreachable") {
  TempDir dir;
  McpClient mcp(dir, WriteConfig(dir));  // api.body_limit 4096
  mcp.Initialize();
  json big = mcp.Call("remember_episode", {{"text", std::string(2 << 20, 'a')}});
  CHECK(big["isError"] == true);
  const std::string text = big["content"][0]["text"];
  CHECK_THAT(text, Catch::StartsWith("too large: "));
  CHECK_THAT(text, Catch::Contains("limit 4096 (api.body_limit)"));
  CHECK(mcp.Ok("memory_stats")["memories"] == 0);
  CHECK(mcp.Finish() == 0);

  // With --url the limit is unknown: the API's own 413 comes back.
  RunningLimbic limbic(dir, BaseConfig(dir));
  McpClient by_url(dir, {"--url", "http://127.0.0.1:" + std::to_string(limbic.port())});
  by_url.Initialize();
  json answer = by_url.Call("remember_episode", {{"text", std::string(2 << 20, 'a')}});
  INFO(answer.dump().substr(0, 400));
  CHECK(answer["isError"] == true);
  CHECK(answer["structuredContent"]["error"]["code"] == "payload_too_large");
  CHECK(by_url.Finish() == 0);
}

TEST_CASE("mcp: when the runtime it used goes away, the next call finds or starts another") {
  TempDir dir;
  std::vector<std::string> args = WriteConfig(dir);
  {
    McpClient first(dir, args);  // runs the runtime in-process
    first.Initialize();
    first.Ok("add_percept", {{"source", "chat"}, {"type", "one"}});
    McpClient other(dir, args);  // uses first's runtime, through api.json
    other.Initialize();
    CHECK(other.Ok("list_percepts")["percepts"].size() == 1);
    CHECK(first.Finish() == 0);  // its runtime stops; the state dir is free
    // Connection refused: other finds nobody and runs the runtime itself.
    CHECK(other.Ok("list_percepts")["percepts"].size() == 1);
    other.Ok("add_percept", {{"source", "chat"}, {"type", "two"}});
    CHECK(other.Finish() == 0);
  }

  // A `limbic run` that stops, and another that starts on a new port.
  json config = BaseConfig(dir);
  auto run = std::make_unique<RunningLimbic>(dir, config);
  McpClient mcp(dir, {"--config", dir / "limbic.json"});
  mcp.Initialize();
  CHECK(mcp.Ok("list_percepts")["percepts"].size() == 2);
  CHECK(run->child().Kill(SIGTERM) == 0);
  run = std::make_unique<RunningLimbic>(dir, config);
  CHECK(mcp.Ok("list_percepts")["percepts"].size() == 2);
  CHECK(mcp.Finish() == 0);
}

}  // namespace limbic::testing
