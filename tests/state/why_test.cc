// Why: the causal chain of a percept, thread or action from the log, and
// what it leaves out.
#include "state/why.h"

#include <catch2/catch.hpp>

#include "engine_fixture.h"

// This file's own namespace: test programs compile in unity batches.
namespace why_test {

using namespace limbic;
using namespace limbic::state;
using limbic::testing::ScratchDir;

namespace {

struct Log : limbic::testing::EngineFixture {
  std::vector<std::string> Types(const std::string& id) {
    auto why = Why(dir / "state/events", id);
    INFO(why.status().ToString());
    REQUIRE(why.ok());
    std::vector<std::string> out;
    for (const json& s : (*why)["chain"]) out.push_back(s["type"]);
    return out;
  }
};

}  // namespace

TEST_CASE("why follows a percept through the reflex that fired to each delivery", "[why]") {
  Log l;
  l.Commit(BuildPerceptAdd({{"id", "p-1"}, {"source", "chat"}, {"type", "msg"}, {"text", "deploy failed"}}, 1));
  // As a reflex writes it: the firing first, then what it caused.
  l.Raw(EventType::kReflexFired, {{"reflex_id", "triage"}, {"percept_id", "p-1"}, {"caused", {3, 4, 5}}});
  l.Commit(BuildThreadCreate({{"goal", "triage"}, {"from_percept", "p-1"}}, 3));  // t-3 + assign (4)
  l.Commit(BuildActionEnqueue({{"effector", "hook"}, {"type", "alert"}, {"thread_id", "t-3"}, {"percept_id", "p-1"}}, 5));
  l.Commit(BuildPerceptAdd({{"id", "p-other"}, {"source", "chat"}, {"type", "msg"}}, 6));  // unrelated
  l.Raw(EventType::kActionSent, {{"action_id", "a-5"}, {"attempt", 1}});
  l.Raw(EventType::kActionFailed, {{"action_id", "a-5"}, {"attempt", 1}, {"error", "connection refused"}});
  l.Raw(EventType::kActionSent, {{"action_id", "a-5"}, {"attempt", 2}});
  l.Raw(EventType::kActionComplete, {{"action_id", "a-5"}, {"attempt", 2}});

  const std::vector<std::string> whole = {"percept_arrived", "reflex_fired",    "thread_created",
                                          "percept_assigned", "action_enqueued", "action_sent",
                                          "action_failed",    "action_sent",     "action_complete"};
  CHECK(l.Types("p-1") == whole);
  // From the action: the firing that caused it, its percept and thread.
  CHECK(l.Types("a-5") == whole);
  auto why = Why(l.dir / "state/events", "t-3");
  REQUIRE(why.ok());
  CHECK((*why)["kind"] == "thread");
  CHECK((*why)["chain"][0]["what"] == "p-1 from chat/msg: \"deploy failed\"");
  CHECK((*why)["chain"][1]["what"] == "reflex triage on p-1 caused seqs [3,4,5]");
  CHECK((*why)["chain"][6]["what"] == "a-5 attempt 1 failed: \"connection refused\"");
  CHECK((*why)["chain"][6]["seq"] == 8);
  CHECK((*why)["truncated"] == false);
  CHECK(WhyText(*why).find("  seq 8 ") != std::string::npos);

  CHECK(l.Types("p-other") == std::vector<std::string>{"percept_arrived"});
  CHECK(Why(l.dir / "state/events", "p-nope").status().IsNotFound());
  CHECK(Why(l.dir / "state/events", "a b").status().IsInvalidArgument());
}

TEST_CASE("why shows the reason a change gave", "[why]") {
  Log l;
  l.Commit(BuildPerceptAdd({{"id", "p-1"}, {"source", "timer"}, {"type", "heartbeat"}}, 1));
  l.Commit(BuildPerceptDrop("p-1", {{"reason", "expired"}}));
  auto why = Why(l.dir / "state/events", "p-1");
  REQUIRE(why.ok());
  REQUIRE((*why)["chain"].size() == 2);
  CHECK((*why)["chain"][1]["reason"] == "expired");
  CHECK(WhyText(*why).find("(expired)") != std::string::npos);
}

}  // namespace why_test
