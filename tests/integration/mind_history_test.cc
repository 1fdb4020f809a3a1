// The mind's sessions in the log, through the real binary: a session cut
// by SIGKILL is recorded as interrupted at the next start (never resumed,
// nothing done twice), `mind rerun` runs a session again in a forked
// sandbox with its effectors dry, and `why` of what a late session made
// finds the session past 10,000 mind events. See mind_test.cc for the
// openai kind's tools and config.
#include "mind_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace mind_history_test {

using namespace mind_util;

TEST_CASE(
    "mind: SIGKILL mid-session leaves it interrupted at the next start, never resumed, nothing "
    "doubled",
    "[runtime][mind][crash]") {
  TempDir dir;
  ScriptedServer hook({200});
  Model model(Answers(
      {ChatAnswer("", {Call("c1", "enqueue_action",
                            {{"effector", "hook"}, {"type", "note"}, {"payload", {{"n", 1}}}})}),
       std::nullopt}));  // then thinks forever
  json effectors = {
      {"hook",
       {{"kind", "http"}, {"url", "http://127.0.0.1:" + std::to_string(hook.port()) + "/in"}}}};
  json config = MindConfig(dir, model.url(), json::object(), effectors);
  std::string id;
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    id = Wake(l.port(), "act, then think");
    REQUIRE(model.WaitFor(2));  // step 1 is recorded before step 2 is asked
    json s = Http(l.port(), "GET", "/v1/mind/sessions/" + id).Json();
    CHECK(s["status"] == "awake");
    CHECK(s["steps"].size() == 1);
    CHECK(Http(l.port(), "GET", "/v1/mind").Json()["status"] == "awake");
    CHECK(l.child().Kill(SIGKILL) == -SIGKILL);
  }
  RunningLimbic again(dir, config);
  REQUIRE(again.port() != 0);
  const uint16_t port = again.port();
  json s = WaitAsleep(port, id);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "interrupted");
  CHECK_THAT(s["error"].get<std::string>(), Catch::Contains("never resumed"));
  CHECK(s["steps"].size() == 1);
  CHECK(Http(port, "GET", "/v1/mind").Json()["status"] == "asleep");
  // The action was delivered once, by its key.
  json actions = WaitJson(port, "/v1/actions?status=complete",
                          [](const json& j) { return j["actions"].size() == 1; });
  json events = AllEvents(port);
  CHECK(EventsOf(events, "action_enqueued").size() == 1);
  auto slept = EventsOf(events, "mind_slept");
  REQUIRE(slept.size() == 1);
  CHECK(slept[0]["outcome"] == "interrupted");
  CHECK(EventsOf(events, "mind_woken").size() == 1);
  CHECK(EventsOf(events, "mind_step").size() == 1);
  // Not resumed: the model hears nothing more of it.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(model.count() == 2);
  REQUIRE(hook.requests().size() == 1);
  CHECK(hook.requests()[0].headers["idempotency-key"] == "mind:" + id + ":1:0");
}

TEST_CASE(
    "mind: rerun forks at the wake and runs the session again with another model, effectors dry",
    "[runtime][mind][fork]") {
  TempDir dir;
  ScriptedServer hook({200});
  // Acts once, then answers.
  Model model([](const json& body, size_t) -> std::optional<std::string> {
    if (!MessagesOf(body, "tool").empty())
      return ChatAnswer("done with " + body.value("model", ""));
    return ChatAnswer("", {Call("c1", "enqueue_action",
                                {{"effector", "hook"},
                                 {"type", "note"},
                                 {"payload", {{"by", body.value("model", "")}}}})});
  });
  json effectors = {
      {"hook",
       {{"kind", "http"}, {"url", "http://127.0.0.1:" + std::to_string(hook.port()) + "/in"}}}};
  RunningLimbic l(dir, MindConfig(dir, model.url(), json::object(), effectors));
  REQUIRE(l.port() != 0);
  // Something happened before the wake (a session woken at seq 1 has no
  // seq before it to fork at).
  REQUIRE(HttpJson(l.port(), "POST", "/v1/percepts",
                   {{"source", "chat"}, {"type", "msg"}, {"text", "hm"}})
              .status == 201);
  const std::string id = Wake(l.port(), "the original");
  CHECK(WaitAsleep(l.port(), id)["outcome"] == "answered");
  WaitJson(l.port(), "/v1/actions?status=complete",
           [](const json& j) { return j["actions"].size() == 1; });
  REQUIRE(hook.requests().size() == 1);
  REQUIRE(model.count() == 2);

  const std::string box = dir / "box";
  RunResult r = Limbic({"--state", dir / "state", "mind", "rerun", id, "--into", box, "--model",
                        "other", "--config", dir / "limbic.json", "--json"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  json out = json::parse(r.out);
  CHECK(out["original"]["id"] == id);
  const std::string rerun = out["rerun"]["id"];
  CHECK(out["rerun"]["outcome"] == "answered");
  CHECK(out["rerun"]["trigger"] == "explicit");
  CHECK_THAT(out["rerun"]["reason"].get<std::string>(), Catch::Contains("rerun of " + id));
  CHECK(out["rerun"]["steps"][0]["model"] == "other");

  // The new session is in the sandbox.
  RunResult show = Limbic({"--state", box, "mind", "show", rerun, "--json"});
  INFO(show.out << show.err);
  REQUIRE(show.exit_code == 0);
  json s = json::parse(show.out);
  CHECK(s["status"] == "asleep");
  CHECK(s["outcome"] == "answered");
  REQUIRE(s["steps"].size() == 2);
  CHECK(s["steps"][1]["text"] == "done with other");
  // The model server saw the other model.
  auto bodies = model.bodies();
  REQUIRE(bodies.size() == 4);
  CHECK(bodies[2]["model"] == "other");
  CHECK(bodies[3]["model"] == "other");
  // Nothing was really sent: the delivery is in the sandbox's dry-run file.
  CHECK(hook.requests().size() == 1);
  std::ifstream dry(box + "/dry-run.jsonl");
  std::string line;
  std::vector<json> lines;
  while (std::getline(dry, line))
    if (!line.empty()) lines.push_back(json::parse(line));
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]["effector"] == "hook");
  CHECK_THAT(lines[0].dump(), Catch::Contains("\"by\":\"other\""));
  // And the original is untouched.
  CHECK(Http(l.port(), "GET", "/v1/mind/sessions?limit=10").Json()["sessions"].size() == 1);

  // --prompt: another system prompt, in another sandbox.
  std::ofstream(dir / "prompt.md") << "You are a careful test mind.";
  RunResult p = Limbic({"--state", dir / "state", "mind", "rerun", id, "--into", dir / "box2",
                        "--prompt", dir / "prompt.md", "--config", dir / "limbic.json", "--json"});
  INFO(p.out << p.err);
  REQUIRE(p.exit_code == 0);
  bodies = model.bodies();
  REQUIRE(bodies.size() == 6);
  CHECK(bodies[4]["model"] == "test-model");
  CHECK(MessagesOf(bodies[4], "system").at(0)["content"] == "You are a careful test mind.");
  CHECK(MessagesOf(bodies[0], "system").at(0)["content"] != "You are a careful test mind.");
  CHECK(hook.requests().size() == 1);
}

TEST_CASE("mind: why of what a late session made still shows the session, past 10,000 mind events",
          "[runtime][mind][why]") {
  TempDir dir;
  // First a long life: 10 sessions of 1000 steps each (an exec mind that
  // says so quickly), 10,020 mind events.
  const std::string chatty = R"PY(import sys
sys.stdin.read()
for i in range(1000):
    sys.stdout.write('{"text": "s%d"}\n' % i)
)PY";
  {
    RunningLimbic l(dir, ExecConfig(dir, chatty, {{"budget", {{"max_steps", 1000}}}}));
    REQUIRE(l.port() != 0);
    for (int i = 0; i < 10; ++i)
      CHECK(WaitAsleep(l.port(), Wake(l.port(), "talk"), 60000)["steps"].size() == 1000);
    CHECK(l.child().Kill(SIGTERM) == 0);
  }
  // Then a model that makes a thread.
  Model model(
      Answers({ChatAnswer("", {Call("c1", "create_thread", {{"goal", "late"}, {"id", "t-late"}})}),
               ChatAnswer("made it")}));
  json config = MindConfig(dir, model.url());
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  const std::string id = Wake(l.port(), "make");
  CHECK(WaitAsleep(l.port(), id)["outcome"] == "answered");
  json why = Http(l.port(), "GET", "/v1/why/t-late").Json();
  std::vector<std::string> types;
  for (const json& st : why["chain"]) types.push_back(st["type"]);
  INFO(why.dump().substr(0, 3000));
  CHECK(types == std::vector<std::string>{"mind_woken", "mind_step", "thread_created"});
  CHECK(why["chain"][0]["event"]["session"] == id);
  CHECK(why["truncated"] == false);
}

}  // namespace mind_history_test
