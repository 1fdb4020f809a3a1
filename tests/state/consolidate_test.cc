#include "state/consolidate.h"

#include <catch2/catch.hpp>

#include "engine_fixture.h"
#include "state/engine.h"
#include "state/replay.h"
#include "test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace consolidate_test {

using namespace limbic;
using namespace limbic::state;
using limbic::testing::ScratchDir;

namespace {

constexpr TimeMs kDay = 86400000;

struct Fixture : limbic::testing::EngineFixture {
  Fixture() : EngineFixture("live") {}
  // A whole pass at `now`, each step committed before the next is planned,
  // as the runtime and `limbic consolidate` run it: its events, in order.
  ConsolidationPlan Pass(const ConsolidationPolicy& policy, TimeMs now,
                         std::vector<size_t>* step_items = nullptr) {
    ConsolidationPass pass(engine->projection(), policy, now);
    ConsolidationPlan all;
    while (!pass.done()) {
      auto step = pass.Next();
      INFO(step.status().ToString());
      REQUIRE(step.ok());
      if (step->events.empty()) continue;
      const ConsolidationCounts& c = step->counts;
      if (step_items) step_items->push_back(c.expired + c.threads + c.percepts + c.actions);
      Status s = engine->Commit(step->events);
      INFO(s.ToString());
      REQUIRE(s.ok());
      all.counts.Add(step->events);
      for (Event& e : step->events) all.events.push_back(std::move(e));
    }
    return all;
  }
  // The digest of the log replayed into a new state dir.
  std::string ReplayedDigest() {
    ReplayOptions ro;
    ro.from = EventsDirPath(dir / "live");
    ro.into = dir / "copy";
    auto r = Replay(ro);
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    return r->digest;
  }
};

}  // namespace

TEST_CASE("consolidation stages an episode per finished thread and a digest per day", "[consolidate]") {
  Fixture f;
  f.Commit(BuildThreadCreate({{"id", "t-1"}, {"goal", "fix the login bug"}}, f.engine->next_seq()));
  f.Commit(BuildThreadCreate({{"id", "t-2"}, {"goal", "still going"}}, f.engine->next_seq()));
  f.Commit(BuildPerceptAdd({{"id", "p-1"}, {"source", "github"}, {"type", "issues.opened"},
                            {"text", "login fails with 500"}, {"thread_id", "t-1"}},
                           f.engine->next_seq()));
  f.Commit(BuildPerceptAdd({{"id", "p-2"}, {"source", "chat"}, {"type", "msg"}, {"text", "hello there"}},
                           f.engine->next_seq()));
  f.Commit(BuildPerceptAdd({{"id", "p-3"}, {"source", "chat"}, {"type", "msg"}, {"thread_id", "t-2"}},
                           f.engine->next_seq()));
  f.Commit(BuildPerceptAdd({{"id", "p-4"}, {"source", "chat"}, {"type", "msg"}, {"text", "new one"}},
                           f.engine->next_seq()));
  f.Commit(BuildPerceptProcess("p-2"));
  f.Commit(BuildPerceptProcess("p-3"));
  f.Commit(BuildActionEnqueue({{"id", "a-1"}, {"effector", "log"}, {"type", "reply"}, {"thread_id", "t-1"}},
                              f.engine->next_seq()));
  f.Raw(EventType::kActionSent, {{"action_id", "a-1"}, {"attempt", 1}});
  f.Raw(EventType::kActionComplete, {{"action_id", "a-1"}, {"result", "posted"}});
  f.Commit(BuildThreadUpdate("t-1", {{"status", "complete"}, {"outcome", "fixed in v2"}}));

  ConsolidationPolicy policy;
  policy.threads_after = 2 * kDay;
  policy.percepts_after = 1 * kDay;
  policy.actions_after = 1 * kDay;
  policy.expire_after = 0;  // expiry has a test of its own

  // Too early: nothing is old enough.
  CHECK(f.Pass(policy, f.clock.Now() + kDay / 2).events.empty());

  TimeMs later = f.clock.Now() + 3 * kDay;
  auto plan = f.Pass(policy, later);
  REQUIRE(plan.events.size() == 2);  // t-1's episode, the digest of 2026-11-01 (p-2)
  CHECK(plan.counts.threads == 1);
  CHECK(plan.counts.percepts == 2);
  CHECK(plan.counts.actions == 1);
  CHECK(plan.counts.entries == 2);
  const json& episode = plan.events[0].fields;
  CHECK(episode["date"] == "2026-11-01");
  std::string text = episode["entry"]["text"];
  CHECK(text.find("[episode] fix the login bug") == 0);
  CHECK(text.find("login fails with 500") != std::string::npos);
  CHECK(text.find("outcome: fixed in v2") != std::string::npos);
  CHECK(text.find("log/reply -> complete: posted") != std::string::npos);
  CHECK(episode["entry"]["byte_size"] == text.size());
  CHECK(episode["consolidates"]["thread_ids"] == json::array({"t-1"}));
  CHECK(episode["consolidates"]["percept_ids"] == json::array({"p-1"}));
  CHECK(episode["consolidates"]["action_ids"] == json::array({"a-1"}));
  const json& digest = plan.events[1].fields;
  CHECK(digest["entry"]["metadata"]["kind"] == "digest");
  // p-3 waits for its live thread t-2; p-4 is not processed.
  CHECK(digest["consolidates"]["percept_ids"] == json::array({"p-2"}));

  CHECK(f.Count(Pool::kThreads) == 1);
  CHECK(f.Count(Pool::kPercepts) == 2);
  CHECK(f.Count(Pool::kActions) == 0);
  CHECK(f.engine->projection().CheckIndexes().ok());

  // Nothing left to do.
  CHECK(f.Pass(policy, later).events.empty());

  // Replay reproduces the consolidated state.
  CHECK(f.ReplayedDigest() == *f.engine->projection().Digest());
}

TEST_CASE("new percepts out of attention for good expire, and a later pass digests them",
          "[consolidate]") {
  Fixture f;
  f.Commit(BuildThreadCreate({{"id", "t-1"}, {"goal", "watch"}}, f.engine->next_seq()));
  auto add = [&](const char* id, double intensity, json extra = json::object()) {
    json p = {{"id", id}, {"source", "timer"}, {"type", "heartbeat"}, {"intensity", intensity}};
    p.update(extra);
    f.Commit(BuildPerceptAdd(p, f.engine->next_seq()));
  };
  add("p-old-1", 0.05);
  add("p-old-2", 0.9);                           // strong once: decayed below the threshold since
  add("p-assigned", 0.05, {{"thread_id", "t-1"}});  // taken up: never expires
  add("p-done", 0.05);
  f.Commit(BuildPerceptProcess("p-done"));  // processed: digested, not expired
  f.clock.Advance(kDay / 2);
  add("p-young", 0.05);  // half a day old at the pass: too young

  ConsolidationPolicy policy;
  policy.expire_after = kDay;
  policy.expire_below = 0.2;
  policy.percepts_after = 2 * kDay;  // no digest in the first pass
  const TimeMs now = f.clock.Now() + kDay / 2 + 1;  // the first four are a day old
  // Expiry alone, as the first step plans it.
  auto expiries = [&](const ConsolidationPolicy& p, TimeMs at) {
    ConsolidationPass pass(f.engine->projection(), p, at);
    auto step = pass.Next();
    REQUIRE(step.ok());
    return step->counts.expired;
  };
  // Nothing is below a threshold of 0, and 0 turns expiry off.
  ConsolidationPolicy never = policy;
  never.expire_below = 0;
  CHECK(expiries(never, now + kDay) == 0);
  never = policy;
  never.expire_after = 0;
  CHECK(expiries(never, now + kDay) == 0);

  auto plan = f.Pass(policy, now);
  CHECK(plan.counts.expired == 2);
  CHECK(plan.counts.entries == 0);
  REQUIRE(plan.events.size() == 2);
  for (const Event& e : plan.events) {
    CHECK(e.type == EventType::kPerceptDropped);
    CHECK(e.fields["reason"] == "expired");
  }
  CHECK(plan.events[0].fields["percept_id"] == "p-old-1");  // the earliest due first
  CHECK(plan.events[1].fields["percept_id"] == "p-old-2");
  CHECK((*f.engine->projection().Get(Pool::kPercepts, "p-old-1"))->at("status") == "dropped");
  CHECK((*f.engine->projection().Get(Pool::kPercepts, "p-young"))->at("status") == "new");
  CHECK((*f.engine->projection().Get(Pool::kPercepts, "p-assigned"))->at("status") == "assigned");

  // Two days on: p-young expires, and in the same pass the expired ones,
  // p-young too, and p-done are digested (expiry is the pass's first step).
  auto later = f.Pass(policy, now + 2 * kDay);
  CHECK(later.counts.expired == 1);
  CHECK(later.events[0].fields["percept_id"] == "p-young");
  CHECK(later.counts.percepts == 4);
  CHECK(f.Count(Pool::kPercepts) == 1);  // p-assigned
  CHECK(f.engine->projection().CheckIndexes().ok());
}

TEST_CASE("an entry_staged event cannot consolidate unfinished work", "[consolidate]") {
  Fixture f;
  f.Commit(BuildThreadCreate({{"id", "t-1"}, {"goal", "open"}}, f.engine->next_seq()));
  f.Commit(BuildPerceptAdd({{"id", "p-1"}, {"source", "chat"}, {"type", "msg"}}, f.engine->next_seq()));
  auto try_commit = [&](json consolidates) {
    Event e;
    e.type = EventType::kEntryStaged;
    e.fields = {{"date", "2026-11-01"},
                {"entry", MakeStagedEntry(f.clock.Now(), "x", json::object())},
                {"consolidates", std::move(consolidates)}};
    return f.engine->Commit(Events{e});
  };
  Status s = try_commit({{"thread_ids", {"t-1"}}});
  CHECK(s.code() == Status::Code::kFailedPrecondition);
  CHECK(s.message().find("thread t-1 is active, not complete") != std::string::npos);
  s = try_commit({{"percept_ids", {"p-1"}}});
  CHECK(s.message().find("percept p-1 is new, not processed or dropped") != std::string::npos);
  s = try_commit({{"action_ids", {"a-9"}}});
  CHECK(s.code() == Status::Code::kNotFound);
  CHECK(f.Count(Pool::kThreads) == 1);
  CHECK(f.Count(Pool::kPercepts) == 1);
}

TEST_CASE("entry_staged fields are checked", "[consolidate]") {
  json entry = MakeStagedEntry(0, "four", json::object());
  CHECK(ValidateEventFields(EventType::kEntryStaged, {{"date", "2026-11-01"}, {"entry", entry}}).ok());
  CHECK_FALSE(ValidateEventFields(EventType::kEntryStaged, {{"date", "2026-02-30"}, {"entry", entry}}).ok());
  json wrong = entry;
  wrong["byte_size"] = 3;
  Status s = ValidateEventFields(EventType::kEntryStaged, {{"date", "2026-11-01"}, {"entry", wrong}});
  CHECK(s.message().find("entry_staged.entry") != std::string::npos);
  CHECK_FALSE(ValidateEventFields(EventType::kEntryStaged,
                                  {{"date", "2026-11-01"}, {"entry", entry}, {"consolidates", {{"x", 1}}}})
                   .ok());
  auto blink = BuildBlink({{"text", "remember the deploy"}}, *ParseTime("2026-11-02T10:00:00Z"));
  REQUIRE(blink.ok());
  CHECK((*blink)[0].fields["date"] == "2026-11-02");
  CHECK((*blink)[0].fields["entry"]["metadata"]["kind"] == "blink");
  CHECK_FALSE(BuildBlink({{"text", ""}}, 0).ok());
  CHECK_FALSE(BuildBlink({{"txt", "a"}}, 0).ok());
}

TEST_CASE("a pass over many expired percepts goes in bounded steps and drains them all",
          "[consolidate]") {
  Fixture f;
  f.Commit(BuildThreadCreate({{"id", "t-live"}, {"goal", "still going"}}, f.engine->next_seq()));
  for (int i = 0; i < 3000; ++i) {
    json p = {{"id", "hb-" + std::to_string(i)}, {"source", "timer"}, {"type", "heartbeat"},
              {"intensity", 0.05}, {"text", "tick " + std::to_string(i)}};
    f.Commit(BuildPerceptAdd(p, f.engine->next_seq()));
    if (i % 100 == 0) f.clock.Advance(3600000);  // over several days
  }
  // Work of a live thread waits for it, however old.
  for (int i = 0; i < 50; ++i) {
    f.Commit(BuildPerceptAdd({{"id", "w-" + std::to_string(i)}, {"source", "chat"}, {"type", "msg"},
                              {"thread_id", "t-live"}},
                             f.engine->next_seq()));
    f.Commit(BuildPerceptProcess("w-" + std::to_string(i)));
  }
  ConsolidationPolicy policy;
  policy.expire_after = kDay;
  policy.percepts_after = kDay;
  policy.digest_items = 40;
  policy.step_items = 100;
  std::vector<size_t> steps;
  auto all = f.Pass(policy, f.clock.Now() + 3 * kDay, &steps);
  CHECK(all.counts.expired == 3000);
  CHECK(all.counts.percepts == 3000);  // each digested in the same pass
  CHECK(all.counts.entries >= 3000 / 40);
  for (size_t n : steps) CHECK(n <= policy.step_items + policy.digest_items);
  CHECK(steps.size() >= 2 * 3000 / (policy.step_items + policy.digest_items));
  CHECK(f.Count(Pool::kPercepts) == 50);  // t-live's
  CHECK(f.engine->projection().CheckIndexes().ok());
  for (const Event& e : all.events)
    if (e.type == EventType::kEntryStaged)
      CHECK(e.fields["consolidates"]["percept_ids"].size() <= policy.digest_items);

  CHECK(f.ReplayedDigest() == *f.engine->projection().Digest());
}

TEST_CASE("a pass's steps read a bounded number of percepts that wait for their thread",
          "[consolidate]") {
  Fixture f;
  f.Commit(BuildThreadCreate({{"id", "t-live"}, {"goal", "long"}}, f.engine->next_seq()));
  for (int i = 0; i < 2000; ++i) {
    f.Commit(BuildPerceptAdd({{"id", "w-" + std::to_string(i)}, {"source", "chat"}, {"type", "msg"},
                              {"thread_id", "t-live"}},
                             f.engine->next_seq()));
    f.Commit(BuildPerceptProcess("w-" + std::to_string(i)));
  }
  for (int i = 0; i < 5; ++i) {
    f.Commit(BuildPerceptAdd({{"id", "loose-" + std::to_string(i)}, {"source", "chat"}, {"type", "msg"}},
                             f.engine->next_seq()));
    f.Commit(BuildPerceptDrop("loose-" + std::to_string(i), json::object()));
  }
  ConsolidationPolicy policy;
  policy.percepts_after = kDay;
  policy.step_items = 10;  // a step reads at most 160 index entries
  ConsolidationPass pass(f.engine->projection(), policy, f.clock.Now() + 2 * kDay);
  size_t steps = 0, empty_steps = 0;
  ConsolidationCounts done;
  while (!pass.done()) {
    auto step = pass.Next();
    REQUIRE(step.ok());
    ++steps;
    if (step->events.empty()) {
      ++empty_steps;
      continue;
    }
    REQUIRE(f.engine->Commit(step->events).ok());
    done.Add(step->events);
  }
  CHECK(empty_steps >= 2000 / 160);
  CHECK(done.percepts == 5);
  CHECK(f.Count(Pool::kPercepts) == 2000);
}

TEST_CASE("expiries of percepts taken up since the step was planned are left out", "[consolidate]") {
  Fixture f;
  f.Commit(BuildThreadCreate({{"id", "t-1"}, {"goal", "watch"}}, f.engine->next_seq()));
  for (const char* id : {"p-1", "p-2", "p-3"})
    f.Commit(BuildPerceptAdd({{"id", id}, {"source", "s"}, {"type", "t"}, {"intensity", 0.05}},
                             f.engine->next_seq()));
  ConsolidationPolicy policy;
  policy.expire_after = kDay;
  ConsolidationPass pass(f.engine->projection(), policy, f.clock.Now() + 2 * kDay);
  auto step = pass.Next();
  REQUIRE(step.ok());
  REQUIRE(step->events.size() == 3);
  // Meanwhile p-2 is assigned and p-3 removed.
  f.Commit(BuildPerceptAssign("p-2", {{"thread_id", "t-1"}}));
  f.Commit(BuildPerceptRemove("p-3", json::object()));
  auto left_out = DropStale(f.engine->pending_view(), &step->events);
  REQUIRE(left_out.ok());
  CHECK(*left_out == 2);
  REQUIRE(step->events.size() == 1);
  CHECK(step->events[0].fields["percept_id"] == "p-1");
  REQUIRE(f.engine->Commit(step->events).ok());
  CHECK((*f.engine->projection().Get(Pool::kPercepts, "p-2"))->at("status") == "assigned");
}

}  // namespace consolidate_test
