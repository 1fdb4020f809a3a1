// The dedup window (state/dedup.h): the reducer remembers supplied percept
// ids that leave the pool, the engine refuses them for the window, a prune
// event forgets them, and a replay rebuilds all of it.
#include "state/dedup.h"

#include <catch2/catch.hpp>

#include "pools_test_util.h"
#include "state/commands.h"
#include "state/engine.h"
#include "state/replay.h"
#include "test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace dedup_test {

using namespace limbic;
using namespace limbic::state;
using limbic::testing::kT0;
using limbic::testing::Log;
using limbic::testing::Rec;
using limbic::testing::ReduceAll;
using limbic::testing::ScratchDir;

namespace {

bool Remembered(const RecordReader& r, const std::string& id) {
  auto got = r.Contains(Pool::kDedup, id);
  REQUIRE(got.ok());
  return *got;
}

std::unique_ptr<Engine> OpenEngine(const std::string& dir, const Clock* clock, TimeMs window) {
  EngineOptions o;
  o.state_dir = dir;
  o.clock = clock;
  o.dedup_window = window;
  auto e = Engine::Open(o);
  INFO(e.status().ToString());
  REQUIRE(e.ok());
  return std::move(e).value();
}

Events Add(const Engine& e, const std::string& id) {
  auto ev = BuildPerceptAdd({{"id", id}, {"source", "chat"}, {"type", "message"}}, e.next_seq());
  REQUIRE(ev.ok());
  return *ev;
}

Events Remove(const std::string& id) {
  auto ev = BuildPerceptRemove(id, json::object());
  REQUIRE(ev.ok());
  return *ev;
}

void MustCommit(Engine& e, Events events) {
  Status s = e.Commit(std::move(events));
  INFO(s.ToString());
  REQUIRE(s.ok());
}

}  // namespace

TEST_CASE("generated percept ids are p- and the seq of their arrival, nothing else", "[dedup]") {
  CHECK(IsGeneratedPerceptId("p-12", 12));
  CHECK(IsGeneratedPerceptId("p-18446744073709551615", UINT64_MAX));
  CHECK_FALSE(IsGeneratedPerceptId("p-12", 13));
  CHECK_FALSE(IsGeneratedPerceptId("p-012", 12));
  CHECK_FALSE(IsGeneratedPerceptId("p-12x", 12));
  CHECK_FALSE(IsGeneratedPerceptId("p-", 0));
  CHECK_FALSE(IsGeneratedPerceptId("q-12", 12));
  CHECK_FALSE(IsGeneratedPerceptId("p-99999999999999999999", 0));
}

TEST_CASE("a supplied id that leaves the pool is remembered, a generated one is not", "[dedup]") {
  Log l;
  l.Percept("chat-5", "chat");                                      // seq 1
  l.Percept("p-2");                                                 // 2: generated
  l.Percept("p-9");                                                 // 3: supplied
  l.Percept("chat-7", "chat");                                      // 4
  l.Add(EventType::kPerceptProcessed, {{"percept_id", "chat-7"}});  // 5
  l.Add(EventType::kPerceptRemoved, {{"percept_id", "chat-5"}});    // 6
  l.Add(EventType::kPerceptRemoved, {{"percept_id", "p-2"}});       // 7
  l.Add(EventType::kPerceptRemoved, {{"percept_id", "p-9"}});       // 8
  l.Add(EventType::kEntryStaged,                                    // 9: consolidated
        {{"date", FormatDate(kT0)},
         {"entry", MakeStagedEntry(kT0, "digest", json::object())},
         {"consolidates", {{"percept_ids", {"chat-7"}}}}});
  Overlay o(nullptr);
  REQUIRE(ReduceAll(l.events, &o).ok());
  CHECK(Rec(o, Pool::kDedup, "chat-5") == json{{"id", "chat-5"},
                                               {"source", "chat"},
                                               {"arrived_at", FormatTime(kT0 + 1000)},
                                               {"left_at", FormatTime(kT0 + 6000)}});
  CHECK(Rec(o, Pool::kDedup, "chat-7")["left_at"] == FormatTime(kT0 + 9000));
  CHECK(Remembered(o, "p-9"));
  CHECK_FALSE(Remembered(o, "p-2"));

  // The reducer never refuses an arrival for it (that is the command's
  // check): the id is back in the pool, and forgotten here.
  l.Percept("chat-5", "chat");
  REQUIRE(Reduce(l.events.back(), &o).ok());
  CHECK_FALSE(Remembered(o, "chat-5"));
  CHECK(Rec(o, Pool::kPercepts, "chat-5")["seq"] == l.seq);

  l.Add(EventType::kDedupPruned, {{"percept_ids", {"chat-7", "p-9"}}});
  REQUIRE(Reduce(l.events.back(), &o).ok());
  CHECK_FALSE(Remembered(o, "chat-7"));
  CHECK_FALSE(Remembered(o, "p-9"));
}

TEST_CASE("dedup_pruned refuses an id the dedup pool does not hold", "[dedup]") {
  Log l;
  l.Percept("chat-5", "chat");
  l.Add(EventType::kPerceptRemoved, {{"percept_id", "chat-5"}});
  l.Percept("chat-6", "chat");  // in the percept pool, not in the dedup pool
  Overlay o(nullptr);
  REQUIRE(ReduceAll(l.events, &o).ok());
  for (const char* id : {"chat-6", "chat-404"}) {
    INFO(id);
    Overlay child(&o);
    l.Add(EventType::kDedupPruned, {{"percept_ids", {"chat-5", id}}});
    Status s = Reduce(l.events.back(), &child);
    CHECK(s.IsNotFound());
    CHECK_THAT(s.message(), Catch::Contains(std::string("dedup_pruned seq ")));
    CHECK_THAT(s.message(), Catch::Contains(id));
  }
  CHECK(Remembered(o, "chat-5"));
}

TEST_CASE("the engine refuses a remembered id within the window and accepts it after",
          "[dedup][engine]") {
  ScratchDir dir;
  ManualClock clock(kT0);
  auto e = OpenEngine(dir.path(), &clock, 60000);
  MustCommit(*e, Add(*e, "chat-5"));
  MustCommit(*e, Remove("chat-5"));
  const uint64_t next = e->next_seq();

  clock.Advance(59999);
  Status s = e->Commit(Add(*e, "chat-5"));
  CHECK(s.IsAlreadyExists());
  CHECK_THAT(s.message(), Catch::Contains("percept chat-5 already exists"));
  CHECK_THAT(s.message(), Catch::Contains("left the pool at " + FormatTime(kT0)));
  CHECK_THAT(s.message(), Catch::Contains("taken until " + FormatTime(kT0 + 60000)));
  CHECK_THAT(s.message(), Catch::Contains("percepts.dedup_window"));
  CHECK(e->next_seq() == next);  // nothing written

  // A command that removes and re-adds in one batch is refused as well.
  MustCommit(*e, Add(*e, "chat-6"));
  Events again = Remove("chat-6");
  for (Event& ev : Add(*e, "chat-6")) again.push_back(ev);
  CHECK(e->Commit(again).IsAlreadyExists());
  CHECK(e->projection().Contains(Pool::kPercepts, "chat-6").value());

  // A generated id is never checked, whatever the dedup pool holds.
  const std::string generated = "p-" + std::to_string(e->next_seq() + 2);
  MustCommit(*e, Add(*e, generated));
  MustCommit(*e, Remove(generated));
  auto plain = BuildPerceptAdd({{"source", "s"}, {"type", "t"}}, e->next_seq());
  REQUIRE(plain.ok());
  REQUIRE((*plain)[0].Str("percept_id") == generated);
  MustCommit(*e, *plain);

  clock.Advance(1);  // exactly the window after it left: free again
  MustCommit(*e, Add(*e, "chat-5"));
  CHECK_FALSE(Remembered(e->projection(), "chat-5"));
  CHECK(e->Commit(Add(*e, "chat-5")).IsAlreadyExists());  // in the pool: as before
}

TEST_CASE("with a window of 0 an id is taken only while it is in the pool", "[dedup][engine]") {
  ScratchDir dir;
  ManualClock clock(kT0);
  auto e = OpenEngine(dir.path(), &clock, 0);
  MustCommit(*e, Add(*e, "chat-5"));
  MustCommit(*e, Remove("chat-5"));
  CHECK(Remembered(e->projection(), "chat-5"));
  MustCommit(*e, Add(*e, "chat-5"));
}

TEST_CASE("a prune lists the records older than the window that are still there",
          "[dedup][engine]") {
  ScratchDir dir;
  ManualClock clock(kT0);
  auto e = OpenEngine(dir.path(), &clock, 1000);
  for (const char* id : {"a", "b", "c"}) {
    if (std::string(id) == "c") clock.Advance(500);
    MustCommit(*e, Add(*e, id));
    MustCommit(*e, Remove(id));
  }
  clock.Advance(500);  // a and b left 1000 ms ago, c 500 ms ago
  const TimeMs now = clock.Now();
  auto none = BuildDedupPrune(e->projection(), e->pending_view(), 1001, now);
  REQUIRE(none.ok());
  CHECK(none->empty());
  auto first = BuildDedupPrune(e->projection(), e->pending_view(), 1000, now, 1);
  REQUIRE(first.ok());
  REQUIRE(first->size() == 1);
  CHECK((*first)[0].type == EventType::kDedupPruned);
  CHECK((*first)[0].fields["percept_ids"] == json{"a"});
  MustCommit(*e, *first);
  CHECK_FALSE(Remembered(e->projection(), "a"));

  // b arrives again (submitted, maybe not yet applied): not pruned.
  REQUIRE(e->Submit(Add(*e, "b"), nullptr).ok());
  auto rest = BuildDedupPrune(e->projection(), e->pending_view(), 1000, now);
  REQUIRE(rest.ok());
  CHECK(rest->empty());
  REQUIRE(e->WaitIdle().ok());
  CHECK(Remembered(e->projection(), "c"));
}

TEST_CASE("replay rebuilds the dedup pool and applies what the writer's window accepted",
          "[dedup][replay]") {
  ScratchDir dir;
  ManualClock clock(kT0);
  {
    // A writer with a window of 0 re-adds an id at once; a later reader
    // with a longer window must still apply its log.
    auto e = OpenEngine(dir / "live", &clock, 0);
    MustCommit(*e, Add(*e, "chat-5"));
    MustCommit(*e, Remove("chat-5"));
    MustCommit(*e, Add(*e, "chat-5"));
    MustCommit(*e, Add(*e, "chat-7"));
    MustCommit(*e, Add(*e, "chat-8"));
    MustCommit(*e, *BuildPerceptProcess("chat-7"));
    MustCommit(*e, Remove("chat-7"));
    MustCommit(*e, Remove("chat-8"));
    clock.Advance(10);
    auto prune = BuildDedupPrune(e->projection(), e->pending_view(), 5, clock.Now());
    REQUIRE(prune.ok());
    REQUIRE(prune->size() == 1);
    MustCommit(*e, Add(*e, "chat-9"));
    MustCommit(*e, Remove("chat-9"));
    MustCommit(*e, *prune);  // chat-7 and chat-8; chat-9 stays
  }
  auto v = Verify(dir / "live");
  REQUIRE(v.ok());
  CHECK(v->match);
  ReplayOptions o;
  o.from = EventsDirPath(dir / "live");
  o.into = dir / "copy";
  o.batch = 3;
  o.flush_records = 2;
  auto r = Replay(o);
  REQUIRE(r.ok());
  CHECK(r->digest == v->live_digest);

  // The rebuilt state serves the check: chat-9 is taken for the default window.
  auto copy = OpenEngine(dir / "copy", &clock, kDefaultDedupWindow);
  CHECK(Remembered(copy->projection(), "chat-9"));
  CHECK_FALSE(Remembered(copy->projection(), "chat-7"));
  CHECK_FALSE(Remembered(copy->projection(), "chat-5"));
  CHECK(copy->Commit(Add(*copy, "chat-9")).IsAlreadyExists());
  MustCommit(*copy, Add(*copy, "chat-7"));
}

}  // namespace dedup_test
