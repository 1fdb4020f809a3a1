// The mind (issue 41, docs/mind.md) through the real binary: a scripted
// OpenAI-compatible server on loopback plays the model and calls tools
// (and gets their errors), and the config refuses what it must, the API
// key goes nowhere but the model server, a guarded effector waits for a
// human. What wakes it and ends it from outside is in mind_wake_test.cc;
// its budget and the model server's failures in mind_limits_test.cc; the
// exec kind in mind_exec_test.cc; a SIGKILL mid-session, `mind rerun` and
// `why` of a session's work in mind_history_test.cc.
#include "mind_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace mind_test {

using namespace mind_util;

TEST_CASE(
    "mind: a percept wakes an openai mind whose tool calls create a thread and enqueue a delivered "
    "action",
    "[runtime][mind]") {
  TempDir dir;
  ScriptedServer hook({201});
  Model model(Answers({
      ChatAnswer("",
                 {Call("call_1", "create_thread",
                       {{"goal", "answer hello"},
                        {"id", "t-mind"},
                        {"percepts", json::array({"p-hello"})}})},
                 120, 30),
      ChatAnswer("replying",
                 {Call("call_2", "enqueue_action",
                       {{"effector", "hook"},
                        {"type", "reply"},
                        {"payload", {{"text", "hi there"}}},
                        {"thread_id", "t-mind"},
                        {"percept_id", "p-hello"}})},
                 200, 40),
      ChatAnswer("done: replied to p-hello", {}, 300, 10),
  }));
  json effectors = {
      {"hook",
       {{"kind", "http"}, {"url", "http://127.0.0.1:" + std::to_string(hook.port()) + "/in"}}}};
  // Attention wakes it: threshold 0.7; never again within the hour.
  RunningLimbic l(dir, MindConfig(dir, model.url(),
                                  {{"wake", {{"threshold", 0.7}}},
                                   {"budget", {{"min_interval", "1h"}}},
                                   {"context_tokens", 3000}},
                                  effectors));
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  CHECK(Http(port, "GET", "/v1/mind").Json()["status"] == "asleep");
  auto p = HttpJson(port, "POST", "/v1/percepts",
                    {{"id", "p-hello"},
                     {"source", "chat"},
                     {"type", "msg"},
                     {"text", "hello?"},
                     {"intensity", 0.9}});
  REQUIRE(p.status == 201);

  json list = WaitJson(port, "/v1/mind/sessions", [](const json& j) {
    return j["sessions"].size() == 1 && j["sessions"][0]["status"] == "asleep";
  });
  const std::string id = list["sessions"][0]["id"];
  CHECK(list["sessions"][0]["steps"] == 3);  // the list counts them
  json s = Http(port, "GET", "/v1/mind/sessions/" + id).Json();
  INFO(s.dump(1));
  CHECK(s["outcome"] == "answered");
  CHECK(s["trigger"] == "percept");
  CHECK(s["mind"] == "scout");
  CHECK(s["percept_ids"] == json::array({"p-hello"}));
  CHECK_THAT(s["reason"].get<std::string>(), Catch::Contains("percept p-hello from chat/msg"));
  CHECK(s["tokens_in"] == 620);
  CHECK(s["tokens_out"] == 80);
  CHECK(s["tokens"] == 700);
  REQUIRE(s["steps"].size() == 3);
  CHECK(s["steps"][0]["step"] == 1);
  CHECK(s["steps"][0]["model"] == "test-model");
  CHECK(s["steps"][0]["tokens_in"] == 120);
  CHECK(s["steps"][0]["finish_reason"] == "tool_calls");
  REQUIRE(s["steps"][0]["tool_calls"].size() == 1);
  CHECK(s["steps"][0]["tool_calls"][0]["name"] == "create_thread");
  CHECK(s["steps"][0]["tool_calls"][0]["ok"] == true);
  CHECK(s["steps"][1]["text"] == "replying");
  REQUIRE(s["steps"][1]["tool_calls"].size() == 1);
  CHECK(s["steps"][1]["tool_calls"][0]["name"] == "enqueue_action");
  CHECK(s["steps"][1]["tool_calls"][0]["ok"] == true);
  CHECK(s["steps"][2]["text"] == "done: replied to p-hello");
  CHECK(s["steps"][2]["tool_calls"].empty());
  CHECK(s["steps"][2]["finish_reason"] == "stop");
  CHECK(Http(port, "GET", "/v1/mind/sessions/m-999999").status == 404);

  // The thread and the action are the mind's, with the session as their reason.
  json thread = Http(port, "GET", "/v1/threads/t-mind").Json();
  CHECK(thread["goal"] == "answer hello");
  CHECK(Http(port, "GET", "/v1/percepts/p-hello").Json()["thread_id"] == "t-mind");
  json actions = WaitJson(port, "/v1/actions?status=complete",
                          [](const json& j) { return j["actions"].size() == 1; });
  const std::string action = actions["actions"][0]["id"];
  CHECK(actions["actions"][0]["thread_id"] == "t-mind");
  json events = AllEvents(port);
  auto woken = EventsOf(events, "mind_woken");
  REQUIRE(woken.size() == 1);
  CHECK(woken[0]["actor"] == "executive");
  CHECK(woken[0]["session"] == id);
  CHECK(woken[0]["budget"].contains("tokens_used"));
  auto created = EventsOf(events, "thread_created");
  REQUIRE(created.size() == 1);
  CHECK(created[0]["actor"] == "mind:scout");
  CHECK(created[0]["reason"] == "session " + id + " step 1 call 0");
  auto enqueued = EventsOf(events, "action_enqueued");
  REQUIRE(enqueued.size() == 1);
  CHECK(enqueued[0]["actor"] == "mind:scout");
  CHECK(enqueued[0]["reason"] == "session " + id + " step 2 call 0");
  const std::string key = "mind:" + id + ":2:0";
  CHECK(enqueued[0]["idempotency_key"] == key);
  // What each call wrote is in its step.
  CHECK(s["steps"][1]["tool_calls"][0]["caused"] == json::array({enqueued[0]["seq"]}));
  auto slept = EventsOf(events, "mind_slept");
  REQUIRE(slept.size() == 1);
  CHECK(slept[0]["outcome"] == "answered");
  CHECK(slept[0]["steps"] == 3);
  CHECK(slept[0]["tokens"] == 700);

  // Delivered, with the call's idempotency key.
  REQUIRE(hook.requests().size() == 1);
  CHECK(hook.requests()[0].headers["idempotency-key"] == key);
  CHECK(json::parse(hook.requests()[0].body)["text"] == "hi there");

  // What the model server got: the tools of mind.tools with their schemas,
  // the wake and the context bundle, then each call's result.
  auto bodies = model.bodies();
  REQUIRE(bodies.size() == 3);
  for (const json& b : bodies) {
    CHECK(b["model"] == "test-model");
    std::vector<std::string> names;
    for (const json& t : b["tools"]) {
      CHECK(t["type"] == "function");
      CHECK(t["function"]["parameters"]["type"] == "object");
      CHECK(t["function"]["description"].is_string());
      names.push_back(t["function"]["name"]);
    }
    CHECK(names == std::vector<std::string>{"create_thread", "enqueue_action", "attention"});
  }
  CHECK(bodies[0]["tools"][0]["function"]["parameters"]["properties"].contains("goal"));
  CHECK(bodies[0]["tools"][1]["function"]["parameters"]["properties"].contains("effector"));
  auto system = MessagesOf(bodies[0], "system");
  REQUIRE(system.size() == 1);
  CHECK_THAT(system[0]["content"].get<std::string>(), Catch::Contains("limbic"));
  auto user = MessagesOf(bodies[0], "user");
  REQUIRE(user.size() == 1);
  const std::string prompt = user[0]["content"];
  CHECK_THAT(prompt, Catch::StartsWith("You were woken: percept p-hello"));
  auto at = prompt.find("\n\n");
  REQUIRE(at != std::string::npos);
  json bundle = json::parse(prompt.substr(at + 2), nullptr, false);
  REQUIRE(bundle.is_object());
  CHECK(bundle["wake"]["session"] == id);
  CHECK(bundle["wake"]["trigger"] == "percept");
  CHECK(bundle["wake"]["percept_ids"] == json::array({"p-hello"}));
  REQUIRE(bundle["context"].is_object());
  CHECK_FALSE(bundle["context"].contains("error"));
  // GET /v1/context's bundle, within mind.context_tokens.
  CHECK(bundle["context"]["budget_tokens"] == 3000);
  CHECK(bundle["context"].contains("arousal"));
  CHECK(bundle["context"].contains("memories"));
  // The second request: the assistant's call, then its result.
  auto assistant = MessagesOf(bodies[1], "assistant");
  REQUIRE(assistant.size() == 1);
  CHECK(assistant[0]["tool_calls"][0]["id"] == "call_1");
  CHECK(assistant[0]["tool_calls"][0]["function"]["name"] == "create_thread");
  auto tool = MessagesOf(bodies[1], "tool");
  REQUIRE(tool.size() == 1);
  CHECK(tool[0]["tool_call_id"] == "call_1");
  CHECK(json::parse(tool[0]["content"].get<std::string>())["id"] == "t-mind");
  CHECK(MessagesOf(bodies[2], "tool").size() == 2);

  // why: the percept, the wake, the step, the action and its delivery, in order.
  json why = Http(port, "GET", "/v1/why/" + action).Json();
  std::vector<std::string> types;
  for (const json& st : why["chain"]) types.push_back(st["type"]);
  INFO(why.dump(1));
  auto pos = [&](const std::string& type) {
    return std::find(types.begin(), types.end(), type) - types.begin();
  };
  for (const char* type : {"percept_arrived", "mind_woken", "mind_step", "action_enqueued",
                           "action_sent", "action_complete"})
    REQUIRE(pos(type) < static_cast<long>(types.size()));
  CHECK(pos("percept_arrived") < pos("mind_woken"));
  CHECK(pos("mind_woken") < pos("mind_step"));
  CHECK(pos("mind_step") < pos("action_enqueued"));
  CHECK(pos("action_enqueued") < pos("action_sent"));
  CHECK(pos("action_sent") < pos("action_complete"));
  CHECK(why["chain"][pos("mind_step")]["event"]["step"] == 2);
  // The command line says the same.
  RunResult text = Limbic({"--state", dir / "state", "why", action});
  INFO(text.out << text.err);
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("mind scout woken as " + id + " (percept)"));
  CHECK_THAT(text.out,
             Catch::Contains(id + " step 2 (test-model, 200+40 tokens): called enqueue_action"));
  CHECK_THAT(text.out, Catch::Contains("[by mind:scout]"));
  // limbic mind status|sessions|show.
  RunResult status = Limbic({"--state", dir / "state", "mind", "status"});
  INFO(status.out << status.err);
  CHECK(status.exit_code == 0);
  CHECK_THAT(status.out, Catch::Contains("mind scout (openai, test-model): asleep"));
  RunResult sessions = Limbic({"--state", dir / "state", "mind", "sessions", "--json"});
  REQUIRE(sessions.exit_code == 0);
  CHECK(json::parse(sessions.out)["sessions"][0]["id"] == id);
  RunResult show = Limbic({"--state", dir / "state", "mind", "show", id});
  INFO(show.out << show.err);
  CHECK(show.exit_code == 0);
  CHECK_THAT(show.out, Catch::Contains("ok   create_thread"));
  CHECK_THAT(show.out, Catch::Contains("ok   enqueue_action"));
  CHECK_THAT(show.out, Catch::Contains("answered, 3 steps, 700 tokens"));
  // And the metrics.
  std::string metrics = Http(port, "GET", "/metrics").body;
  CHECK_THAT(metrics, Catch::Contains("limbic_mind_wakes_total{trigger=\"percept\"} 1"));
  CHECK_THAT(metrics, Catch::Contains("limbic_mind_steps_total 3"));
  CHECK_THAT(metrics, Catch::Contains("limbic_mind_tokens_total{direction=\"in\"} 620"));
}

// ---- tool calls the model got wrong ----------------------------------------

TEST_CASE(
    "mind: malformed arguments, an unknown tool and a tool outside mind.tools come back as the "
    "tool's error",
    "[runtime][mind]") {
  TempDir dir;
  Model model(Answers({
      ChatAnswer("", {RawCall("c1", "create_thread", "{not json"),
                      Call("c2", "create_thread", {{"goal", 5}}),
                      Call("c3", "no_such_tool", json::object()),
                      Call("c4", "delete_thread", {{"id", "t-fine"}}),
                      Call("c5", "create_thread", {{"goal", "fine"}, {"id", "t-fine"}})}),
      ChatAnswer("sorry about that"),
  }));
  // A system prompt of its own, relative to the config's directory.
  std::filesystem::create_directories(dir / "mind");
  std::ofstream(dir / "mind/system.md") << "You are the test mind. Use the tools.";
  RunningLimbic l(dir, MindConfig(dir, model.url(), {{"system_prompt", "mind/system.md"}}));
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  const std::string id = Wake(port, "try some tools");
  json s = WaitAsleep(port, id);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "answered");
  REQUIRE(s["steps"].size() == 2);
  const json& calls = s["steps"][0]["tool_calls"];
  REQUIRE(calls.size() == 5);
  for (int i = 0; i < 4; ++i) {
    CHECK(calls[i]["ok"] == false);
    CHECK(calls[i]["error"].is_string());
  }
  CHECK(calls[0]["name"] == "create_thread");
  CHECK_THAT(calls[0]["error"].get<std::string>(), Catch::Contains("arguments"));
  CHECK_THAT(calls[1]["error"].get<std::string>(), Catch::Contains("goal"));
  CHECK(calls[2]["name"] == "no_such_tool");
  CHECK_THAT(calls[2]["error"].get<std::string>(), Catch::Contains("unknown tool"));
  CHECK(calls[3]["name"] == "delete_thread");
  CHECK_THAT(calls[3]["error"].get<std::string>(), Catch::Contains("not allowed"));
  CHECK(calls[4]["ok"] == true);  // the calls after the bad ones still ran
  CHECK(Http(port, "GET", "/v1/threads/t-fine").status == 200);

  // The model was told, call by call.
  REQUIRE(model.WaitFor(2));
  CHECK(MessagesOf(model.bodies()[0], "system").at(0)["content"] ==
        "You are the test mind. Use the tools.");
  auto tool = MessagesOf(model.bodies()[1], "tool");
  REQUIRE(tool.size() == 5);
  for (int i = 0; i < 5; ++i) CHECK(tool[i]["tool_call_id"] == "c" + std::to_string(i + 1));
  for (int i = 0; i < 4; ++i) {
    json content = json::parse(tool[i]["content"].get<std::string>(), nullptr, false);
    INFO(tool[i].dump());
    REQUIRE(content.is_object());
    CHECK(content["error"] == calls[i]["error"]);
  }
  CHECK(json::parse(tool[4]["content"].get<std::string>())["id"] == "t-fine");
  // Only the good call wrote anything.
  json events = AllEvents(port);
  CHECK(EventsOf(events, "thread_created").size() == 1);
  CHECK(EventsOf(events, "thread_deleted").empty());

  // The runtime goes on: the command line wakes it again.
  CHECK(Http(port, "GET", "/healthz").status == 200);
  RunResult woke =
      Limbic({"--state", dir / "state", "mind", "wake", "--reason", "once more", "--json"});
  INFO(woke.out << woke.err);
  REQUIRE(woke.exit_code == 0);
  const std::string again = json::parse(woke.out)["session"];
  json s2 = WaitAsleep(port, again);
  CHECK(s2["outcome"] == "answered");
  CHECK(s2["actor"] == "cli");
  CHECK(s2["trigger"] == "explicit");
  CHECK(s2["reason"] == "once more");
}

// ---- the config, the key and a guarded effector ---------------------------------------------

TEST_CASE("mind: limbic run refuses a mind config that breaks the rules, naming the key",
          "[runtime][mind][config]") {
  struct Case {
    const char* what;
    json mind;
    std::vector<std::string> says;
  };
  const json openai = {{"enabled", true},
                       {"kind", "openai"},
                       {"url", "http://127.0.0.1:9"},
                       {"model", "m"},
                       {"api_key_env", ""}};
  auto with = [&](json patch) {
    json m = openai;
    m.merge_patch(patch);
    return m;
  };
  const std::vector<Case> cases = {
      {"an unknown tool",
       with({{"tools", {"attention", "no_such_tool"}}}),
       {"mind.tools[1]", "unknown tool", "no_such_tool"}},
      {"approve_action",
       with({{"tools", {"attention", "approve_action"}}}),
       {"mind.tools[1]", "a mind may not decide approvals"}},
      {"exec without a command",
       {{"enabled", true}, {"kind", "exec"}},
       {"mind.command", "required"}},
      {"a relative argv[0]",
       {{"enabled", true}, {"kind", "exec"}, {"command", {"python3", "mind.py"}}},
       {"mind.command", "absolute"}},
      {"the key in the file",
       with({{"api_key", "sk-secret-in-the-file"}}),
       {"mind.api_key", "api_key_env"}},
  };
  for (const Case& c : cases) {
    SECTION(c.what) {
      TempDir dir;
      json config = BaseConfig(dir);
      config["mind"] = c.mind;
      std::ofstream(dir / "limbic.json") << config.dump(2);
      RunResult r =
          Run({LimbicBinary(), "--state", dir / "state", "run", "--config", dir / "limbic.json"},
              "", 30000);
      INFO(r.out << r.err);
      CHECK(r.exit_code != 0);
      CHECK(r.exit_code != -1);  // it refused; it was not killed at the timeout
      for (const std::string& s : c.says) CHECK_THAT(r.out + r.err, Catch::Contains(s));
      CHECK_THAT(r.out + r.err, !Catch::Contains("sk-secret-in-the-file"));
    }
  }
}

TEST_CASE("mind: the API key goes to the model server and nowhere else",
          "[runtime][mind][security]") {
  const std::string key = "sk-limbic-test-5ecret-9f3a";
  setenv("LIMBIC_TEST_MIND_KEY", key.c_str(), 1);
  TempDir dir;
  // The second session's server refuses the key, echoing it as some do.
  Model model([&](const json& body, size_t index) -> std::optional<std::string> {
    if (index >= 2)
      return HttpAnswer(401,
                        R"({"error": {"message": "Incorrect API key provided: )" + key + "\"}}");
    if (!MessagesOf(body, "tool").empty()) return ChatAnswer("done");
    return ChatAnswer("", {Call("c1", "attention", json::object())});
  });
  RunningLimbic l(dir, MindConfig(dir, model.url(), {{"api_key_env", "LIMBIC_TEST_MIND_KEY"}}));
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  const std::string first = Wake(port, "with a key");
  CHECK(WaitAsleep(port, first)["outcome"] == "answered");
  const std::string second = Wake(port, "refused key");
  json refused = WaitAsleep(port, second);
  CHECK(refused["outcome"] == "error");
  CHECK_THAT(refused["error"].get<std::string>(), Catch::Contains("401"));
  CHECK_THAT(refused["error"].get<std::string>(),
             Catch::Contains("Incorrect API key provided: [api key]"));
  REQUIRE(l.WaitForLog(second + " asleep"));
  for (const TestRequest& r : model.raw()) CHECK(r.headers.at("authorization") == "Bearer " + key);
  // Not in an answer ...
  for (const std::string& path :
       std::vector<std::string>{"/v1/mind", "/v1/mind/sessions", "/v1/mind/sessions/" + first,
                                "/v1/mind/sessions/" + second, "/v1/events?after=0&limit=10000",
                                "/metrics", "/v1/context", "/healthz"}) {
    INFO(path);
    CHECK_THAT(Http(port, "GET", path).body, !Catch::Contains(key) && !Catch::Contains("5ecret"));
  }
  // ... nor a log line ...
  for (const std::string& line : l.log()) {
    INFO(line);
    CHECK_THAT(line, !Catch::Contains("5ecret"));
  }
  // ... nor any file of the state dir (the log, the projections).
  CHECK(Http(port, "POST", "/v1/mind/sleep").status == 409);
  CHECK(l.child().Kill(SIGTERM) == 0);
  RunResult grep = Run({"/bin/grep", "-rl", "5ecret", dir / "state"});
  INFO(grep.out);
  CHECK(grep.out.empty());
}

TEST_CASE("mind: an action the mind enqueues for a guarded effector waits for a human",
          "[runtime][mind][approval]") {
  TempDir dir;
  ScriptedServer hook({200});
  Model model(Answers(
      {ChatAnswer("", {Call("c1", "enqueue_action", {{"effector", "guarded"}, {"type", "pay"}})}),
       ChatAnswer("asked for it")}));
  json effectors = {{"guarded",
                     {{"kind", "http"},
                      {"url", "http://127.0.0.1:" + std::to_string(hook.port()) + "/in"},
                      {"require_approval", true}}}};
  RunningLimbic l(dir, MindConfig(dir, model.url(), json::object(), effectors));
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  const std::string id = Wake(port, "pay the bill");
  json s = WaitAsleep(port, id);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "answered");
  CHECK(s["steps"][0]["tool_calls"][0]["ok"] == true);
  json waiting = Http(port, "GET", "/v1/actions?status=pending_approval").Json();
  REQUIRE(waiting["actions"].size() == 1);
  const std::string action = waiting["actions"][0]["id"];
  CHECK(hook.requests().empty());
  // A human approves it: then it goes, with the call's key.
  auto ok = HttpJson(port, "POST", "/v1/actions/" + action + "/approve", json::object());
  INFO(ok.body);
  REQUIRE(ok.status == 200);
  WaitJson(port, "/v1/actions/" + action, [](const json& a) { return a["status"] == "complete"; });
  REQUIRE(hook.requests().size() == 1);
  CHECK(hook.requests()[0].headers["idempotency-key"] == "mind:" + id + ":1:0");
}

}  // namespace mind_test
