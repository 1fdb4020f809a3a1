// `limbic mcp`: a client speaking MCP (JSON-RPC 2.0, one message per line)
// over pipes to the real binary: the protocol, the tool list and schemas,
// and the runtime it uses -- in-process, or a `limbic run` found through
// <state>/api.json. The tools themselves: mcp_tools_test.cc.
#include <signal.h>

#include <set>
#include <thread>

#include "mcp_client.h"

namespace limbic::testing {

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
                                       "add_percepts",
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
                                       "approve_action",
                                       "reject_action",
                                       "retry_action",
                                       "prune_actions",
                                       "consolidate",
                                       "archive_blink",
                                       "archive_search",
                                       "archive_recall",
                                       "archive_day",
                                       "why",
                                       "mind_status",
                                       "wake_mind",
                                       "sleep_mind",
                                       "mind_sessions",
                                       "mind_session"});
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
