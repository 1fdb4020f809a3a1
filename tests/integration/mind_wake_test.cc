// What wakes the mind and what ends its session from outside, through the
// real binary (docs/mind.md): a reflex's wake_mind step, the focused thread
// with unprocessed percepts, MCP's wake_mind, POST /v1/mind/sleep, the
// mind's own sleep_mind, SIGTERM; and the refusals (off, busy).
#include "mind_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace mind_wake_test {

using namespace mind_util;

TEST_CASE("mind: a reflex's wake_mind step wakes the mind, attributed to the reflex",
          "[runtime][mind][reflexes]") {
  TempDir dir;
  Model model(Answers({ChatAnswer("seen it")}));
  json config = MindConfig(dir, model.url());
  std::ofstream(dir / "reflexes.json")
      << json{{"reflexes",
               {{{"id", "chat-wakes"},
                 {"when", {{"source", "chat"}}},
                 {"then", {{{"wake_mind", {{"reason", "a chat message: {{percept.text}}"}}}}}}}}}}
             .dump();
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  auto p = HttpJson(port, "POST", "/v1/percepts",
                    {{"source", "chat"}, {"type", "msg"}, {"text", "ping"}});
  REQUIRE(p.status == 201);
  const std::string pid = p.Json()["id"];
  json list = WaitJson(port, "/v1/mind/sessions", [](const json& j) {
    return j["sessions"].size() == 1 && j["sessions"][0]["status"] == "asleep";
  });
  const std::string id = list["sessions"][0]["id"];
  json s = Http(port, "GET", "/v1/mind/sessions/" + id).Json();
  INFO(s.dump(1));
  CHECK(s["trigger"] == "reflex");
  CHECK(s["actor"] == "reflex:chat-wakes");
  CHECK(s["reason"] == "a chat message: ping");
  CHECK(s["percept_ids"] == json::array({pid}));
  CHECK(s["outcome"] == "answered");
  json events = AllEvents(port);
  auto fired = EventsOf(events, "reflex_fired");
  REQUIRE(fired.size() == 1);
  CHECK(fired[0]["wake_mind"]["reason"] == "a chat message: ping");
  auto woken = EventsOf(events, "mind_woken");
  REQUIRE(woken.size() == 1);
  CHECK(woken[0]["actor"] == "reflex:chat-wakes");
  CHECK(woken[0]["seq"].get<uint64_t>() > fired[0]["seq"].get<uint64_t>());
  // why of the percept shows the wake it caused.
  json why = Http(port, "GET", "/v1/why/" + pid).Json();
  bool saw = false;
  for (const json& st : why["chain"]) saw = saw || st["type"] == "mind_woken";
  CHECK(saw);
}

// ---- beyond the list ---------------------------------------------------------------

TEST_CASE("mind: the focused thread with unprocessed percepts wakes the mind (trigger thread)",
          "[runtime][mind]") {
  TempDir dir;
  Model model(Answers({ChatAnswer("looked at the thread")}));
  RunningLimbic l(dir, MindConfig(dir, model.url(),
                                  {{"wake", {{"focused_thread", true}}},
                                   {"budget", {{"min_interval", "1h"}}}}));
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  json ids = json::array();
  for (int i = 0; i < 3; ++i) {
    auto p = HttpJson(port, "POST", "/v1/percepts",
                      {{"source", "chat"}, {"type", "msg"}, {"text", "m" + std::to_string(i)}});
    REQUIRE(p.status == 201);
    ids.push_back(p.Json()["id"]);
  }
  CHECK(Http(port, "GET", "/v1/mind/sessions").Json()["sessions"].empty());  // below the threshold
  auto t = HttpJson(port, "POST", "/v1/threads",
                    {{"goal", "the chat"}, {"id", "t-chat"}, {"percepts", ids}});
  REQUIRE(t.status == 201);
  json list = WaitJson(port, "/v1/mind/sessions", [](const json& j) {
    return j["sessions"].size() == 1 && j["sessions"][0]["status"] == "asleep";
  });
  json s =
      Http(port, "GET", "/v1/mind/sessions/" + list["sessions"][0]["id"].get<std::string>()).Json();
  INFO(s.dump(1));
  CHECK(s["trigger"] == "thread");
  CHECK(s["thread_id"] == "t-chat");
  CHECK(s["actor"] == "executive");
  CHECK(s["reason"] == "focused thread t-chat has 3 unprocessed percepts");
  json woken_on = s["percept_ids"];
  std::sort(woken_on.begin(), woken_on.end());
  json expected = ids;
  std::sort(expected.begin(), expected.end());
  CHECK(woken_on == expected);
  auto user = MessagesOf(model.bodies().at(0), "user");
  REQUIRE(user.size() == 1);
  CHECK_THAT(user[0]["content"].get<std::string>(), Catch::Contains("\"thread_id\":\"t-chat\""));
}

TEST_CASE("mind: POST /v1/mind/sleep ends an openai session waiting on its model",
          "[runtime][mind]") {
  TempDir dir;
  Model model(Answers({std::nullopt}));
  RunningLimbic l(dir, MindConfig(dir, model.url()));
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  REQUIRE(HttpJson(port, "POST", "/v1/threads", {{"goal", "think about this"}, {"id", "t-think"}})
              .status == 201);
  CHECK(HttpJson(port, "POST", "/v1/mind/wake", {{"thread_id", "t-nope"}}).status == 404);
  CHECK(HttpJson(port, "POST", "/v1/mind/wake", {{"why", "x"}}).status == 400);
  auto w = HttpJson(port, "POST", "/v1/mind/wake", {{"thread_id", "t-think"}});
  REQUIRE(w.status == 202);
  const std::string id = w.Json()["session"];
  REQUIRE(model.WaitFor(1));
  json awake = Http(port, "GET", "/v1/mind").Json();
  CHECK(awake["status"] == "awake");
  CHECK(awake["session"]["id"] == id);
  auto r = HttpJson(port, "POST", "/v1/mind/sleep", json::object());
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(r.Json() == json({{"session", id}, {"outcome", "slept"}}));
  json s = WaitAsleep(port, id);
  CHECK(s["outcome"] == "slept");
  CHECK(s["thread_id"] == "t-think");
  CHECK(s["reason"] == "woken by http");
  auto bundle = MessagesOf(model.bodies().at(0), "user").at(0)["content"].get<std::string>();
  CHECK_THAT(bundle, Catch::Contains("\"thread_id\":\"t-think\""));
  CHECK(model.count() == 1);
}

TEST_CASE("mind: MCP's wake_mind and mind tools reach the running mind, attributed to the client",
          "[runtime][mind][mcp]") {
  TempDir dir;
  Model model(Answers({ChatAnswer("woken over MCP")}));
  RunningLimbic l(dir, MindConfig(dir, model.url()));
  REQUIRE(l.port() != 0);
  McpClient mcp(dir, {});
  mcp.Initialize();  // clientInfo.name "test"
  json woke = mcp.Ok("wake_mind", {{"reason", "from an MCP client"}});
  const std::string id = woke["session"];
  json s = WaitAsleep(l.port(), id);
  CHECK(s["actor"] == "mcp:test");
  CHECK(s["trigger"] == "explicit");
  CHECK(s["reason"] == "from an MCP client");
  CHECK(mcp.Ok("mind_status")["status"] == "asleep");
  CHECK(mcp.Ok("mind_session", {{"id", id}})["outcome"] == "answered");
  CHECK(mcp.Ok("mind_sessions")["sessions"][0]["id"] == id);
  CHECK(mcp.Finish() == 0);
}

TEST_CASE("mind: off, it refuses to wake (409 off) and says so", "[runtime][mind]") {
  TempDir dir;
  RunningLimbic l(dir, BaseConfig(dir));
  REQUIRE(l.port() != 0);
  json mind = Http(l.port(), "GET", "/v1/mind").Json();
  CHECK(mind["enabled"] == false);
  CHECK(mind["status"] == "off");
  auto r = HttpJson(l.port(), "POST", "/v1/mind/wake", {{"reason", "hello?"}});
  INFO(r.body);
  CHECK(r.status == 409);
  CHECK(r.Json()["error"]["code"] == "off");
  CHECK(HttpJson(l.port(), "POST", "/v1/mind/sleep", json::object()).status == 409);
  CHECK(Http(l.port(), "GET", "/v1/mind/sessions").Json()["sessions"].empty());
}

TEST_CASE("mind: a reflex's wake while a session runs is refused busy, the reason kept",
          "[runtime][mind][reflexes]") {
  TempDir dir;
  Model model(Answers({std::nullopt}));  // thinks forever
  json config = MindConfig(dir, model.url());
  std::ofstream(dir / "reflexes.json") << json{{"reflexes",
                                                {{{"id", "chat-wakes"},
                                                  {"when", {{"source", "chat"}}},
                                                  {"then", {{{"wake_mind", json::object()}}}}}}}}
                                              .dump();
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  REQUIRE(HttpJson(port, "POST", "/v1/percepts", {{"source", "chat"}, {"type", "msg"}}).status ==
          201);
  json awake = WaitJson(port, "/v1/mind", [](const json& m) { return m["status"] == "awake"; });
  const std::string id = awake["session"]["id"];
  CHECK(awake["session"]["reason"] == "reflex chat-wakes fired");
  REQUIRE(model.WaitFor(1));
  REQUIRE(HttpJson(port, "POST", "/v1/percepts", {{"source", "chat"}, {"type", "msg"}}).status ==
          201);
  json mind =
      WaitJson(port, "/v1/mind", [](const json& m) { return m["last_refusal"].is_object(); });
  CHECK(mind["last_refusal"]["trigger"] == "reflex");
  CHECK_THAT(mind["last_refusal"]["reason"].get<std::string>(),
             Catch::StartsWith("busy: session " + id));
  CHECK_THAT(Http(port, "GET", "/metrics").body,
             Catch::Contains("limbic_mind_refusals_total{reason=\"busy\"} 1"));
  CHECK(Http(port, "GET", "/v1/mind/sessions").Json()["sessions"].size() == 1);
  CHECK(HttpJson(port, "POST", "/v1/mind/sleep", json::object()).status == 200);
  CHECK(WaitAsleep(port, id)["outcome"] == "slept");
}

TEST_CASE("mind: a mind that puts itself to sleep with sleep_mind ends slept", "[runtime][mind]") {
  TempDir dir;
  Model model(Answers(
      {ChatAnswer("", {Call("c1", "sleep_mind", json::object())}), ChatAnswer("still here")}));
  RunningLimbic l(dir, MindConfig(dir, model.url(), {{"tools", {"sleep_mind", "attention"}}}));
  REQUIRE(l.port() != 0);
  const std::string id = Wake(l.port(), "then sleep");
  json s = WaitAsleep(l.port(), id, 10000);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "slept");
  REQUIRE(s["steps"].size() == 1);
  CHECK(s["steps"][0]["tool_calls"][0]["name"] == "sleep_mind");
  CHECK(s["steps"][0]["tool_calls"][0]["ok"] == true);
  CHECK(model.count() == 1);  // not asked again
  CHECK(Http(l.port(), "GET", "/v1/mind").Json()["status"] == "asleep");
}

TEST_CASE("mind: SIGTERM while the model thinks records the session interrupted before exit",
          "[runtime][mind]") {
  TempDir dir;
  Model model(Answers({std::nullopt}));
  json config = MindConfig(dir, model.url());
  std::string id;
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    id = Wake(l.port(), "think");
    REQUIRE(model.WaitFor(1));
    CHECK(l.child().Kill(SIGTERM) == 0);
  }
  RunningLimbic again(dir, config);
  REQUIRE(again.port() != 0);
  CheckStoppedByLimbic(again.port(), id);
  CHECK(model.count() == 1);
}

}  // namespace mind_wake_test
