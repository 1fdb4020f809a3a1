// The mind's sessions pool: what mind_woken, mind_step and mind_slept do to
// it, what they are refused, how sessions are listed, and why's chain
// through a session.
#include <catch2/catch.hpp>

#include "engine_fixture.h"
#include "state/replay.h"
#include "state/provenance.h"
#include "state/why.h"

// This file's own namespace: test programs compile in unity batches.
namespace mind_sessions_test {

using namespace limbic;
using namespace limbic::state;

namespace {

struct Mind : limbic::testing::EngineFixture {
  // mind_woken for session "m-<next seq>"; returns the id.
  std::string Woken(const std::string& trigger, json extra = json::object()) {
    const std::string id = "m-" + std::to_string(engine->next_seq());
    json f = {{"session", id}, {"mind", "main"}, {"reason", "why not"}, {"trigger", trigger}};
    f.update(extra);
    Raw(EventType::kMindWoken, f);
    return id;
  }
  void Step(const std::string& id, uint64_t step, uint64_t in, uint64_t out, json calls = json::array()) {
    Raw(EventType::kMindStep, {{"session", id}, {"step", step}, {"model", "m"}, {"tokens_in", in},
                               {"tokens_out", out}, {"latency_ms", 5u}, {"tool_calls", calls}});
  }
  void Slept(const std::string& id, const std::string& outcome) {
    Raw(EventType::kMindSlept,
        {{"session", id}, {"outcome", outcome}, {"steps", 1u}, {"tokens", 3u}, {"duration_ms", 120u}});
  }
  Status Try(EventType type, json fields) {
    Event e;
    e.type = type;
    e.fields = std::move(fields);
    return engine->Commit({e});
  }
  json Session(const std::string& id) {
    auto r = engine->projection().Get(Pool::kSessions, id);
    REQUIRE(r.ok());
    REQUIRE(r->has_value());
    return **r;
  }
};

}  // namespace

TEST_CASE("a session is woken, takes steps and sleeps, its tokens summed", "[mind]") {
  Mind m;
  const std::string id = m.Woken("percept", {{"percept_ids", {"p-9"}}, {"actor", "executive"}});
  CHECK(id == "m-1");
  json s = m.Session(id);
  CHECK(s["status"] == "awake");
  CHECK(s["trigger"] == "percept");
  CHECK(s["percept_ids"] == json::array({"p-9"}));
  CHECK(s["actor"] == "executive");
  CHECK(s["seq"] == 1);
  m.clock.Advance(1000);
  m.Step(id, 1, 100, 10, json::array({{{"name", "create_thread"}, {"ok", true}, {"caused", {7}}}}));
  m.Step(id, 2, 120, 5);
  s = m.Session(id);
  CHECK(s["steps"].size() == 2);
  CHECK(s["steps"][0]["tool_calls"][0]["name"] == "create_thread");
  CHECK(s["steps"][1]["ts"] == "2026-11-01T09:00:01.000Z");
  CHECK(s["tokens_in"] == 220);
  CHECK(s["tokens_out"] == 15);
  CHECK(s["tokens"] == 235);
  auto awake = m.engine->projection().AwakeSessions();
  REQUIRE(awake.ok());
  REQUIRE(awake->size() == 1);
  CHECK((*awake)[0]["id"] == id);
  m.Slept(id, "answered");
  CHECK(m.engine->projection().AwakeSessions()->empty());
  s = m.Session(id);
  CHECK(s["status"] == "asleep");
  CHECK(s["outcome"] == "answered");
  CHECK(s["duration_ms"] == 120);
  CHECK(m.engine->projection().CheckIndexes().ok());
}

TEST_CASE("the reducer refuses what a session cannot take, naming it", "[mind]") {
  Mind m;
  const std::string id = m.Woken("explicit");
  // The same session twice.
  Status again = m.Try(EventType::kMindWoken, {{"session", id}, {"mind", "main"}, {"reason", "r"}, {"trigger", "explicit"}});
  CHECK(again.IsAlreadyExists());
  // Steps go forward only.
  m.Step(id, 1, 1, 1);
  Status back = m.Try(EventType::kMindStep, {{"session", id}, {"step", 1u}, {"tokens_in", 1u}, {"tokens_out", 1u}});
  CHECK(back.IsFailedPrecondition());
  CHECK_THAT(back.message(), Catch::Contains("has step 1 already"));
  // An unknown session, a malformed one.
  CHECK(m.Try(EventType::kMindStep, {{"session", "m-99"}, {"step", 1u}, {"tokens_in", 1u}, {"tokens_out", 1u}}).IsNotFound());
  CHECK(m.Try(EventType::kMindStep, {{"session", id}, {"step", 2u}, {"tokens_in", -1}, {"tokens_out", 1u}}).IsInvalidArgument());
  CHECK(m.Try(EventType::kMindStep, {{"session", id}, {"step", 2u}, {"tokens_in", 1u}, {"tokens_out", 1u},
                                     {"tool_calls", "create_thread"}})
            .IsInvalidArgument());
  // Nothing happens to a session that sleeps.
  m.Slept(id, "slept");
  CHECK(m.Try(EventType::kMindStep, {{"session", id}, {"step", 2u}, {"tokens_in", 1u}, {"tokens_out", 1u}}).IsFailedPrecondition());
  CHECK(m.Try(EventType::kMindSlept, {{"session", id}, {"outcome", "slept"}, {"steps", 1u}, {"tokens", 2u},
                                      {"duration_ms", 1u}})
            .IsFailedPrecondition());
}

TEST_CASE("sessions are listed newest first, from a time on", "[mind]") {
  Mind m;
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(m.Woken(i % 2 ? "percept" : "explicit"));
    m.Slept(ids.back(), "answered");
    m.clock.Advance(i == 2 ? 3600000 : 1000);
  }
  auto all = m.engine->projection().ListSessions(0, 0);
  REQUIRE(all.ok());
  REQUIRE(all->size() == 5);
  for (size_t i = 0; i < 5; ++i) CHECK((*all)[i]["id"] == ids[4 - i]);
  auto two = m.engine->projection().ListSessions(0, 2);
  REQUIRE(two.ok());
  CHECK(two->size() == 2);
  // Since the hour's jump: the last two.
  auto recent = m.engine->projection().ListSessions(*ParseTime("2026-11-01T09:30:00Z"), 0);
  REQUIRE(recent.ok());
  CHECK(recent->size() == 2);
  CHECK(m.Count(Pool::kSessions) == 5);
  // A replay of the log makes the same pool.
  auto verify = Verify(m.dir / "state");
  INFO(verify.status().ToString());
  REQUIRE(verify.ok());
  CHECK(verify->match);
}

TEST_CASE("why runs from a percept through the mind's wake and step to a delivery", "[mind][why]") {
  Mind m;
  m.Commit(BuildPerceptAdd({{"id", "p-1"}, {"source", "chat"}, {"type", "msg"}, {"text", "ping"}}, 1));
  const std::string id = m.Woken("percept", {{"percept_ids", {"p-1"}}});  // seq 2
  // The tool call's action (seq 3), then the step that records it (seq 4).
  m.Commit(BuildActionEnqueue({{"effector", "hook"}, {"type", "reply"}, {"percept_id", "p-1"}}, 3));
  m.Step(id, 1, 10, 2, json::array({{{"name", "enqueue_action"}, {"ok", true}, {"caused", {3}}}}));
  m.Step(id, 2, 12, 1);
  m.Slept(id, "answered");
  m.Raw(EventType::kActionSent, {{"action_id", "a-3"}, {"attempt", 1}});
  m.Raw(EventType::kActionComplete, {{"action_id", "a-3"}, {"attempt", 1}});
  m.Commit(BuildPerceptAdd({{"id", "p-2"}, {"source", "chat"}, {"type", "msg"}}, 10));  // unrelated

  auto types = [&](const std::string& of) {
    auto why = Why(m.dir / "state/events", of);
    INFO(why.status().ToString());
    REQUIRE(why.ok());
    std::vector<std::string> out;
    for (const json& s : (*why)["chain"]) out.push_back(s["type"]);
    return out;
  };
  // The action: the percept, the wake, the step whose call made it (before
  // what it wrote, though logged after), the action, its delivery.
  CHECK(types("a-3") == std::vector<std::string>{"percept_arrived", "mind_woken", "mind_step",
                                                  "action_enqueued", "action_sent", "action_complete"});
  // The percept that woke the mind: the whole session.
  CHECK(types("p-1") == std::vector<std::string>{"percept_arrived", "mind_woken", "mind_step",
                                                  "action_enqueued", "mind_step", "mind_slept",
                                                  "action_sent", "action_complete"});
  CHECK(types("p-2") == std::vector<std::string>{"percept_arrived"});

  // An exec mind's request names its session in its reason: that links it.
  const std::string exec = m.Woken("explicit", {{"percept_ids", {"p-2"}}});
  auto reply = BuildActionEnqueue({{"effector", "hook"}, {"type", "reply"}}, m.engine->next_seq());
  REQUIRE(reply.ok());
  Attribute(*reply, "mind:main", "session " + exec);
  m.Commit(std::move(reply));
  m.Slept(exec, "exited");
  const std::string action = "a-" + std::to_string(m.engine->next_seq() - 2);
  CHECK(types(action) == std::vector<std::string>{"percept_arrived", "mind_woken", "action_enqueued"});
  // And why of the session itself: what it was woken for, and what its
  // requests wrote.
  CHECK(types(exec) == std::vector<std::string>{"percept_arrived", "mind_woken", "action_enqueued", "mind_slept"});
}

}  // namespace mind_sessions_test
