// The mind's limits (docs/mind.md) through the real binary: the thinking
// budget (min_interval, daily_tokens across a restart, max_steps,
// max_session), a model server that fails (429 waited out, 500, no
// answer, an answer nested too deep or too large) and the bounds on what
// one answer may carry (tool results cut, tool calls per answer).
#include "mind_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace mind_limits_test {

using namespace mind_util;

TEST_CASE("mind: a 429 with Retry-After is waited out, then the session goes on",
          "[runtime][mind]") {
  TempDir dir;
  Model model(Answers({
      HttpAnswer(429, R"({"error": {"message": "slow down"}})",
                 "Content-Type: application/json\r\nRetry-After: 1\r\n"),
      ChatAnswer("fine now"),
  }));
  RunningLimbic l(dir, MindConfig(dir, model.url()));
  REQUIRE(l.port() != 0);
  const std::string id = Wake(l.port(), "busy model");
  json s = WaitAsleep(l.port(), id);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "answered");
  REQUIRE(s["steps"].size() == 1);  // the 429 is not a step
  CHECK(s["steps"][0]["text"] == "fine now");
  auto raw = model.raw();
  REQUIRE(raw.size() == 2);
  double waited = std::chrono::duration<double>(raw[1].at - raw[0].at).count();
  INFO("asked again after " << waited << " s (Retry-After: 1)");
  CHECK(waited >= 0.9);
  CHECK(waited < 10);
}

TEST_CASE("mind: a 500 of the model server ends the session in error, the message in mind_slept",
          "[runtime][mind]") {
  TempDir dir;
  Model model(Answers({HttpAnswer(500, R"({"error": "the model fell over"})")}));
  RunningLimbic l(dir, MindConfig(dir, model.url()));
  REQUIRE(l.port() != 0);
  const std::string id = Wake(l.port(), "broken model");
  json s = WaitAsleep(l.port(), id);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "error");
  CHECK(s["steps"].empty());
  CHECK_THAT(s["error"].get<std::string>(), Catch::Contains("500"));
  CHECK_THAT(s["error"].get<std::string>(), Catch::Contains("the model fell over"));
  auto slept = EventsOf(AllEvents(l.port()), "mind_slept");
  REQUIRE(slept.size() == 1);
  CHECK(slept[0]["outcome"] == "error");
  CHECK(slept[0]["error"] == s["error"]);
  CHECK(model.count() == 1);  // a 500 is not asked again
  CHECK(Http(l.port(), "GET", "/v1/mind").Json()["status"] == "asleep");
}

TEST_CASE("mind: a model server that never answers ends the session in error at mind.timeout",
          "[runtime][mind]") {
  TempDir dir;
  Model model(Answers({std::nullopt}));
  RunningLimbic l(dir, MindConfig(dir, model.url(), {{"timeout", "300ms"}}));
  REQUIRE(l.port() != 0);
  auto t0 = Steady::now();
  const std::string id = Wake(l.port(), "hung model");
  json s = WaitAsleep(l.port(), id);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "error");
  CHECK_THAT(s["error"].get<std::string>(), Catch::Contains("timed out after 300 ms"));
  CHECK(s["steps"].empty());
  CHECK(std::chrono::duration<double>(Steady::now() - t0).count() < 30);  // not max_session's 60 s
  CHECK(s["duration_ms"].get<int64_t>() >= 250);
}

TEST_CASE("mind: an answer nested 100,000 deep ends the session in error, the runtime lives on",
          "[runtime][mind]") {
  TempDir dir;
  std::string deep = R"({"choices": [{"message": {"role": "assistant", "content": )" +
                     std::string(100000, '[') + std::string(100000, ']') + "}}]}";
  Model model(Answers({HttpAnswer(200, deep)}));
  RunningLimbic l(dir, MindConfig(dir, model.url()));
  REQUIRE(l.port() != 0);
  const std::string id = Wake(l.port(), "deep answer");
  json s = WaitAsleep(l.port(), id);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "error");
  CHECK_THAT(s["error"].get<std::string>(), Catch::Contains("the answer is"));
  CHECK_THAT(s["error"].get<std::string>(),
             Catch::Contains("deep") || Catch::Contains("depth") || Catch::Contains("nest"));
  CHECK(Http(l.port(), "GET", "/healthz").status == 200);
  CHECK(Http(l.port(), "GET", "/v1/mind").Json()["status"] == "asleep");
}

// ---- the thinking budget --------------------------------------------------------

TEST_CASE(
    "mind: min_interval refuses an autonomous wake right after a session, an explicit wake skips "
    "it",
    "[runtime][mind][budget]") {
  TempDir dir;
  Model model(Answers({ChatAnswer("noted")}));
  RunningLimbic l(
      dir, MindConfig(dir, model.url(),
                      {{"wake", {{"threshold", 0.7}}}, {"budget", {{"min_interval", "2s"}}}}));
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  REQUIRE(HttpJson(port, "POST", "/v1/percepts",
                   {{"id", "p-first"}, {"source", "chat"}, {"type", "msg"}, {"intensity", 0.8}})
              .status == 201);
  json list = WaitJson(port, "/v1/mind/sessions", [](const json& j) {
    return j["sessions"].size() == 1 && j["sessions"][0]["status"] == "asleep";
  });
  const std::string first = list["sessions"][0]["id"];
  json s1 = Http(port, "GET", "/v1/mind/sessions/" + first).Json();
  CHECK(s1["trigger"] == "percept");
  CHECK(s1["percept_ids"] == json::array({"p-first"}));

  // A second percept right after: refused, the reason kept.
  REQUIRE(HttpJson(port, "POST", "/v1/percepts",
                   {{"id", "p-second"}, {"source", "chat"}, {"type", "msg"}, {"intensity", 0.9}})
              .status == 201);
  json mind =
      WaitJson(port, "/v1/mind", [](const json& m) { return m["last_refusal"].is_object(); });
  INFO(mind.dump(1));
  CHECK(mind["last_refusal"]["trigger"] == "percept");
  CHECK_THAT(mind["last_refusal"]["reason"].get<std::string>(), Catch::Contains("min_interval"));
  CHECK(mind["budget"]["min_interval_ms"] == 2000);

  // An explicit wake skips min_interval.
  const std::string explicit_id = Wake(port, "asked");
  CHECK(WaitAsleep(port, explicit_id)["outcome"] == "answered");

  // Once the interval has passed, attention wakes it on the best percept.
  json later = WaitJson(port, "/v1/mind/sessions", [&](const json& j) {
    for (const json& s : j["sessions"])
      if (s["trigger"] == "percept" && s["id"] != first) return true;
    return false;
  });
  std::string second;
  for (const json& s : later["sessions"])
    if (s["trigger"] == "percept" && s["id"] != first) second = s["id"];
  json s2 = Http(port, "GET", "/v1/mind/sessions/" + second).Json();
  INFO(s2.dump(1));
  CHECK(s2["percept_ids"] == json::array({"p-second"}));
  CHECK(Ms(s2["woken_at"]) - Ms(s1["woken_at"]) >= 2000);
  std::string metrics = Http(port, "GET", "/metrics").body;
  CHECK_THAT(metrics, Catch::Contains("limbic_mind_refusals_total{reason=\"min_interval\"}"));
  CHECK_THAT(metrics, Catch::Contains("limbic_mind_wakes_total{trigger=\"explicit\"} 1"));
}

TEST_CASE(
    "mind: daily_tokens spent refuses the next wakes, across a restart, and sets budget_pressure",
    "[runtime][mind][budget]") {
  TempDir dir;
  Model model(Answers({ChatAnswer("", {Call("c1", "attention", json::object())}, 60, 50),
                       ChatAnswer("more", {}, 10, 10)}));
  json config = MindConfig(
      dir, model.url(),
      {{"wake", {{"threshold", 0.7}}}, {"budget", {{"daily_tokens", 100}, {"pressure_at", 0.5}}}});
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    const uint16_t port = l.port();
    CHECK(Http(port, "GET", "/v1/arousal").Json()["factors"].value("budget_pressure", false) ==
          false);
    const std::string id = Wake(port, "spend it");
    json s = WaitAsleep(port, id);
    INFO(s.dump(1));
    CHECK(s["outcome"] == "budget");  // the step spent the day's tokens: no second call
    CHECK(s["error"] == "daily_tokens used");
    CHECK(s["tokens"] == 110);
    CHECK(model.count() == 1);

    json mind = Http(port, "GET", "/v1/mind").Json();
    INFO(mind.dump(1));
    CHECK(mind["budget"]["tokens"]["limit"] == 100);
    CHECK(mind["budget"]["tokens"]["used"] == 110);
    CHECK(mind["budget"]["tokens"]["left"] == 0);
    WaitJson(port, "/v1/arousal",
             [](const json& a) { return a["factors"].value("budget_pressure", false) == true; });
    CHECK(Http(port, "GET", "/v1/mind").Json()["budget"]["pressure"] == true);

    // A percept that would wake it: refused, naming daily_tokens.
    REQUIRE(HttpJson(port, "POST", "/v1/percepts",
                     {{"source", "chat"}, {"type", "msg"}, {"intensity", 0.9}})
                .status == 201);
    mind = WaitJson(port, "/v1/mind", [](const json& m) { return m["last_refusal"].is_object(); });
    CHECK(mind["last_refusal"]["trigger"] == "percept");
    CHECK_THAT(mind["last_refusal"]["reason"].get<std::string>(), Catch::Contains("daily_tokens"));
    // An explicit wake too: 409 budget.
    auto r = HttpJson(port, "POST", "/v1/mind/wake", {{"reason", "please"}});
    INFO(r.body);
    CHECK(r.status == 409);
    CHECK(r.Json()["error"]["code"] == "budget");
    CHECK_THAT(r.Json()["error"]["message"].get<std::string>(), Catch::Contains("daily_tokens"));
    CHECK(EventsOf(AllEvents(port), "mind_woken").size() == 1);
    CHECK(l.child().Kill(SIGTERM) == 0);
  }
  // With no runtime, the command line reads the sessions from the state dir.
  RunResult offline = Limbic({"--state", dir / "state", "mind", "sessions", "--json"});
  INFO(offline.out << offline.err);
  REQUIRE(offline.exit_code == 0);
  json listed = json::parse(offline.out)["sessions"];
  REQUIRE(listed.size() == 1);
  CHECK(listed[0]["outcome"] == "budget");
  CHECK(listed[0]["steps"] == 1);
  const std::string spent = listed[0]["id"];
  RunResult shown = Limbic({"--state", dir / "state", "mind", "show", spent});
  INFO(shown.out << shown.err);
  CHECK(shown.exit_code == 0);
  CHECK_THAT(shown.out, Catch::Contains("budget, 1 steps, 110 tokens"));
  CHECK_THAT(shown.out, Catch::Contains("daily_tokens used"));
  CHECK(Limbic({"--state", dir / "state", "mind", "wake"}).exit_code != 0);  // nothing runs
  // The budget is counted from the log: a restart does not reset it.
  RunningLimbic again(dir, config);
  REQUIRE(again.port() != 0);
  auto r = HttpJson(again.port(), "POST", "/v1/mind/wake", {{"reason", "after a restart"}});
  INFO(r.body);
  CHECK(r.status == 409);
  CHECK(r.Json()["error"]["code"] == "budget");
  CHECK(Http(again.port(), "GET", "/v1/mind").Json()["budget"]["tokens"]["used"] == 110);
  CHECK(Http(again.port(), "GET", "/v1/arousal").Json()["factors"]["budget_pressure"] == true);
  CHECK(model.count() == 1);
}

TEST_CASE("mind: a model that always calls a tool ends at max_steps after exactly max_steps steps",
          "[runtime][mind][budget]") {
  TempDir dir;
  Model model(Answers({ChatAnswer("", {Call("c", "attention", json::object())})}));
  RunningLimbic l(dir, MindConfig(dir, model.url(), {{"budget", {{"max_steps", 3}}}}));
  REQUIRE(l.port() != 0);
  const std::string id = Wake(l.port(), "loop");
  json s = WaitAsleep(l.port(), id);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "max_steps");
  REQUIRE(s["steps"].size() == 3);
  for (const json& st : s["steps"]) CHECK(st["tool_calls"][0]["ok"] == true);
  CHECK(model.count() == 3);
  auto slept = EventsOf(AllEvents(l.port()), "mind_slept");
  REQUIRE(slept.size() == 1);
  CHECK(slept[0]["steps"] == 3);
  CHECK(Http(l.port(), "GET", "/v1/mind").Json()["budget"]["max_steps"] == 3);
}

TEST_CASE("mind: a slow model ends at max_session", "[runtime][mind][budget]") {
  TempDir dir;
  Model model([](const json&, size_t) -> std::optional<std::string> {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    return ChatAnswer("", {Call("c", "attention", json::object())});
  });
  RunningLimbic l(
      dir, MindConfig(dir, model.url(), {{"budget", {{"max_session", "1s"}, {"max_steps", 100}}}}));
  REQUIRE(l.port() != 0);
  const std::string id = Wake(l.port(), "slow");
  json s = WaitAsleep(l.port(), id);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "max_session");
  CHECK(s["duration_ms"].get<int64_t>() >= 1000);
  CHECK(s["duration_ms"].get<int64_t>() < 10000);
  CHECK(s["steps"].size() < 4);
  CHECK(Http(l.port(), "GET", "/v1/mind").Json()["status"] == "asleep");
  // Asleep means asleep: the next explicit wake is a new session.
  CHECK(HttpJson(l.port(), "POST", "/v1/mind/sleep", json::object()).status == 409);
}

// ---- bounds on what one answer carries ------------------------------------------------

TEST_CASE("mind: a tool's result is cut at 16 KiB for the model, the step's text at max_text",
          "[runtime][mind]") {
  TempDir dir;
  Model model(
      Answers({ChatAnswer(std::string(5000, 'y'), {Call("c1", "get_thread", {{"id", "t-big"}})}),
               ChatAnswer("read it")}));
  json config = MindConfig(dir, model.url(), {{"tools", {"get_thread"}}, {"max_text", 100}});
  config["api"]["body_limit"] = 1 << 20;
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  REQUIRE(HttpJson(
              port, "POST", "/v1/threads",
              {{"goal", "big"}, {"id", "t-big"}, {"state", {{"context", std::string(40000, 'x')}}}})
              .status == 201);
  const std::string id = Wake(port, "read a big thread");
  json s = WaitAsleep(port, id);
  CHECK(s["outcome"] == "answered");
  REQUIRE(s["steps"].size() == 2);
  CHECK(s["steps"][0]["text"] == std::string(100, 'y'));
  CHECK(s["steps"][0]["tool_calls"][0]["ok"] == true);
  auto tool = MessagesOf(model.bodies().at(1), "tool");
  REQUIRE(tool.size() == 1);
  const std::string content = tool[0]["content"];
  CHECK(content.size() <= 16384 + 40);
  CHECK_THAT(content, Catch::EndsWith("[cut at 16384 bytes]"));
  CHECK_THAT(content, Catch::StartsWith("{"));
}

TEST_CASE("mind: an answer past the client's 64 MiB bound ends the session in error",
          "[runtime][mind]") {
  TempDir dir;
  const std::string huge = R"({"choices": [{"message": {"role": "assistant", "content": ")" +
                           std::string((64 << 20) + 1024, 'z') + "\"}}]}";
  Model model(Answers({HttpAnswer(200, huge)}));
  RunningLimbic l(dir, MindConfig(dir, model.url()));
  REQUIRE(l.port() != 0);
  const std::string id = Wake(l.port(), "a huge answer");
  json s = WaitAsleep(l.port(), id, 60000);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "error");
  CHECK(s["steps"].empty());
  CHECK_THAT(s["error"].get<std::string>(), Catch::Contains("longer than 67108864 bytes"));
  CHECK(Http(l.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("mind: an answer with more tool calls than the bound ends the session, running none",
          "[runtime][mind]") {
  TempDir dir;
  std::vector<json> calls;
  for (int i = 0; i < 1000; ++i)
    calls.push_back(Call("c" + std::to_string(i), "create_thread", {{"goal", "flood"}}));
  Model model(Answers({ChatAnswer("", calls)}));
  RunningLimbic l(dir, MindConfig(dir, model.url()));
  REQUIRE(l.port() != 0);
  const std::string id = Wake(l.port(), "a flood of calls");
  json s = WaitAsleep(l.port(), id);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "error");
  CHECK_THAT(s["error"].get<std::string>(), Catch::Contains("1000 tool calls in one answer (at most 64)"));
  REQUIRE(s["steps"].size() == 1);  // its tokens count
  CHECK(s["tokens"] == 120);
  CHECK(EventsOf(AllEvents(l.port()), "thread_created").empty());
}


// Found by a hostile review: a wake larger than a pipe's buffer, and a
// program whose child left its group holding stdin unread, kept the reader
// in write() for good: the session stayed awake past max_session and a
// SIGTERM could not stop limbic.

}  // namespace mind_limits_test
