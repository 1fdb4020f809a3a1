#include "state/engine.h"

#include <rocksdb/db.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "log_test_util.h"
#include "state/commands.h"
#include "state/replay.h"
#include "test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace engine_test {

using namespace limbic;
using namespace limbic::state;
using limbic::testing::ReadAll;
using limbic::testing::ScratchDir;

namespace {

std::unique_ptr<Engine> OpenEngine(const std::string& dir, const Clock* clock = nullptr) {
  EngineOptions o;
  o.state_dir = dir;
  o.clock = clock;
  auto e = Engine::Open(o);
  INFO(e.status().ToString());
  REQUIRE(e.ok());
  return std::move(e).value();
}

Events AddPercept(Engine& e, const std::string& source = "s") {
  auto ev = BuildPerceptAdd({{"source", source}, {"type", "t"}, {"intensity", 0.6}}, e.next_seq());
  REQUIRE(ev.ok());
  return *ev;
}

}  // namespace

TEST_CASE("commit assigns seqs and ts, is durable, applied and readable", "[engine]") {
  ScratchDir dir;
  ManualClock clock(1795356309000);
  auto e = OpenEngine(dir.path(), &clock);
  std::vector<Event> done;
  REQUIRE(e->Commit(AddPercept(*e), &done).ok());
  REQUIRE(done.size() == 1);
  CHECK(done[0].seq == 1);
  CHECK(done[0].ts == 1795356309000);
  CHECK(e->applied_seq() == 1);
  auto p = e->projection().Get(Pool::kPercepts, "p-1");
  REQUIRE(p.ok());
  REQUIRE(p->has_value());
  CHECK((**p)["status"] == "new");
  clock.Set(1);  // the clock going backwards never makes ts go backwards
  REQUIRE(e->Commit(AddPercept(*e), &done).ok());
  CHECK(done[0].ts == 1795356309000);
}

TEST_CASE("a rejected command writes nothing and consumes no seq", "[engine]") {
  ScratchDir dir;
  auto e = OpenEngine(dir.path());
  auto bad = BuildPerceptAssign("p-404", {{"thread_id", "t-1"}});
  REQUIRE(bad.ok());
  Status s = e->Commit(*bad);
  CHECK(s.IsNotFound());
  CHECK_THAT(s.message(), Catch::Contains("p-404"));
  CHECK(e->next_seq() == 1);
  REQUIRE(e->Commit(AddPercept(*e)).ok());
  CHECK(e->applied_seq() == 1);
}

TEST_CASE("commands see state that is submitted but not yet applied", "[engine]") {
  ScratchDir dir;
  auto e = OpenEngine(dir.path());
  std::vector<Status> results;
  auto record = [&](const Status& s, std::span<const Event>) { results.push_back(s); };
  auto t = BuildThreadCreate({{"goal", "g"}, {"id", "t-1"}}, e->next_seq());
  REQUIRE(e->Submit(*t, record).ok());
  auto p = AddPercept(*e);
  REQUIRE(e->Submit(p, record).ok());
  // Neither is applied yet, but the reducer sees both through the overlay.
  auto assign = BuildPerceptAssign("p-2", {{"thread_id", "t-1"}});
  REQUIRE(e->Submit(*assign, record).ok());
  // And it rejects what conflicts with them.
  CHECK(e->Submit(*BuildThreadCreate({{"goal", "g"}, {"id", "t-1"}}, 0), record).IsAlreadyExists());
  REQUIRE(e->WaitIdle().ok());
  CHECK(results.size() == 3);
  for (const Status& s : results) CHECK(s.ok());
  auto percept = e->projection().Get(Pool::kPercepts, "p-2");
  CHECK((**percept)["thread_id"] == "t-1");
}

TEST_CASE("listeners receive each applied group in seq order", "[engine]") {
  ScratchDir dir;
  auto e = OpenEngine(dir.path());
  std::vector<uint64_t> seen;
  e->AddListener([&](std::span<const Event> events) {
    for (const Event& ev : events) seen.push_back(ev.seq);
  });
  for (int i = 0; i < 50; ++i) REQUIRE(e->Submit(AddPercept(*e), nullptr).ok());
  REQUIRE(e->WaitIdle().ok());
  REQUIRE(seen.size() == 50);
  for (size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == i + 1);
}

TEST_CASE("state persists across reopen and seqs continue", "[engine]") {
  ScratchDir dir;
  std::string digest;
  {
    auto e = OpenEngine(dir.path());
    REQUIRE(e->Commit(AddPercept(*e)).ok());
    REQUIRE(e->Commit(*BuildThreadCreate({{"goal", "g"}}, e->next_seq())).ok());
    digest = *e->projection().Digest();
  }
  auto e = OpenEngine(dir.path());
  CHECK(e->applied_seq() == 2);
  CHECK(e->next_seq() == 3);
  CHECK(*e->projection().Digest() == digest);
}

TEST_CASE("lost projections are rebuilt from the log on open", "[engine]") {
  ScratchDir dir;
  std::string digest;
  {
    auto e = OpenEngine(dir.path());
    for (int i = 0; i < 20; ++i) REQUIRE(e->Commit(AddPercept(*e)).ok());
    digest = *e->projection().Digest();
  }
  std::filesystem::remove_all(DbDirPath(dir.path()));
  EngineOptions o;
  o.state_dir = dir.path();
  o.bulk_rebuild_events = GENERATE(1, 1000);  // by the bulk load, and chunk by chunk
  EngineRecovery rec;
  auto e = Engine::Open(o, &rec);
  REQUIRE(e.ok());
  CHECK(rec.applied_seq_at_open == 0);
  CHECK(rec.reapplied == 20);
  CHECK(*(*e)->projection().Digest() == digest);
  // Built by the bulk load (no WAL): every record is on disk at the next
  // open, and nothing is re-applied.
  e->reset();
  EngineRecovery again;
  e = Engine::Open(o, &again);
  REQUIRE(e.ok());
  CHECK(again.applied_seq_at_open == 20);
  CHECK(again.reapplied == 0);
  CHECK(*(*e)->projection().Digest() == digest);
  CHECK((*e)->projection().CheckIndexes().ok());
}

TEST_CASE("projections built part way from the log are continued, never taken as whole",
          "[engine]") {
  // A build killed part way leaves what its last ingested write holds,
  // with that write's applied_seq (see bulk_load_test's "records and
  // applied_seq reach the disk together"): here a replay up to seq 30.
  ScratchDir dir;
  std::string digest;
  {
    auto e = OpenEngine(dir.path());
    REQUIRE(e->Commit(*BuildThreadCreate({{"goal", "g"}}, e->next_seq())).ok());
    for (int i = 0; i < 49; ++i) REQUIRE(e->Commit(AddPercept(*e)).ok());
    digest = *e->projection().Digest();
  }
  ScratchDir other;  // a replay builds outside every state dir
  ReplayOptions r;
  r.from = EventsDirPath(dir.path());
  r.into = other / "part";
  r.until_seq = 30;
  r.flush_records = 7;
  auto part = Replay(r);
  REQUIRE(part.ok());
  REQUIRE(part->last_seq == 30);
  std::filesystem::remove_all(DbDirPath(dir.path()));
  std::filesystem::rename(DbDirPath(r.into), DbDirPath(dir.path()));
  std::filesystem::remove_all(r.into);
  EngineOptions o;
  o.state_dir = dir.path();
  EngineRecovery rec;
  auto e = Engine::Open(o, &rec);
  REQUIRE(e.ok());
  CHECK(rec.applied_seq_at_open == 30);
  CHECK(rec.reapplied == 20);
  CHECK((*e)->applied_seq() == 50);
  CHECK(*(*e)->projection().Digest() == digest);
}

TEST_CASE("projections ahead of the log refuse to open", "[engine]") {
  ScratchDir dir;
  {
    auto e = OpenEngine(dir.path());
    for (int i = 0; i < 3; ++i) REQUIRE(e->Commit(AddPercept(*e)).ok());
  }
  std::filesystem::remove_all(EventsDirPath(dir.path()));
  EngineOptions o;
  o.state_dir = dir.path();
  auto e = Engine::Open(o);
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().IsCorruption());
  CHECK_THAT(e.status().message(), Catch::Contains("seq 3") && Catch::Contains("replay"));
}

TEST_CASE("a second writer gets Busy naming the holder, a reader opens read-only", "[engine]") {
  ScratchDir dir;
  auto e = OpenEngine(dir.path());
  REQUIRE(e->Commit(AddPercept(*e)).ok());
  EngineOptions o;
  o.state_dir = dir.path();
  auto second = Engine::Open(o);
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().IsBusy());
  CHECK_THAT(second.status().message(), Catch::Contains("pid " + std::to_string(getpid())));
  o.read_only = true;
  auto reader = Engine::Open(o);
  REQUIRE(reader.ok());
  CHECK((*reader)->applied_seq() == 1);
  CHECK((*reader)->Submit(AddPercept(**reader), nullptr).IsFailedPrecondition());
}

TEST_CASE("batches in flight that change one record apply in order, indexes included", "[engine]") {
  ScratchDir dir;
  auto e = OpenEngine(dir.path());
  std::vector<Status> results;
  auto record = [&](const Status& s, std::span<const Event>) { results.push_back(s); };
  REQUIRE(e->Submit(*BuildThreadCreate({{"goal", "g"}, {"id", "t-1"}}, e->next_seq()), record).ok());
  for (int i = 0; i < 30; ++i) REQUIRE(e->Submit(AddPercept(*e, i % 2 ? "a" : "b"), record).ok());
  // Each percept is assigned, some processed, one dropped, all while earlier
  // batches may still be on their way through the log and RocksDB.
  for (int i = 0; i < 30; ++i) {
    std::string id = "p-" + std::to_string(i + 2);
    REQUIRE(e->Submit(*BuildPerceptAssign(id, {{"thread_id", "t-1"}}), record).ok());
    if (i % 3 == 0) REQUIRE(e->Submit(*BuildPerceptProcess(id), record).ok());
    // The pending view always shows the newest state of the record.
    auto seen = e->pending_view().Get(Pool::kPercepts, id);
    REQUIRE(seen.ok());
    CHECK((**seen)["status"] == (i % 3 == 0 ? "processed" : "assigned"));
    if (i % 4 == 1) (void)e->Poll(false);  // complete whatever is written
  }
  REQUIRE(e->Submit(*BuildPerceptDrop("p-3", {{"reason", "noise"}}), record).ok());
  REQUIRE(e->WaitIdle().ok());
  for (const Status& s : results) CHECK(s.ok());
  CHECK(e->applied_seq() == e->next_seq() - 1);
  REQUIRE(e->projection().CheckIndexes().ok());
  PerceptQuery q;
  q.status = "assigned";
  q.limit = 0;
  CHECK(e->projection().QueryPercepts(q, 0)->size() == 19);
  q.status = "processed";
  CHECK(e->projection().QueryPercepts(q, 0)->size() == 10);
  auto t = e->projection().Get(Pool::kThreads, "t-1");
  CHECK((**t)["percepts"].size() == 30);
  // The live projections equal a replay of the log.
  auto live = e->projection().Digest();
  REQUIRE(live.ok());
  ScratchDir elsewhere;  // never inside the state dir
  ReplayOptions ro;
  ro.from = EventsDirPath(dir.path());
  ro.into = elsewhere / "replayed";
  auto replayed = Replay(ro);
  REQUIRE(replayed.ok());
  CHECK(replayed->digest == *live);
}

TEST_CASE("a deleted thread's percepts are unassigned, in the indexes too, and a replay agrees",
          "[engine]") {
  ScratchDir dir;
  ManualClock clock(1795356309000);
  auto e = OpenEngine(dir / "live", &clock);
  auto commit = [&](Result<Events> ev) {
    REQUIRE(ev.ok());
    REQUIRE(e->Commit(*ev).ok());
  };
  commit(BuildThreadCreate({{"id", "t-1"}, {"goal", "g"}}, e->next_seq()));
  commit(BuildPerceptAdd({{"id", "p-1"}, {"source", "s"}, {"type", "t"}, {"thread_id", "t-1"}}, e->next_seq()));
  commit(BuildThreadDelete("t-1", json::object()));
  PerceptQuery q;
  q.status = "new";
  auto fresh = e->projection().QueryPercepts(q, clock.Now());
  REQUIRE(fresh.ok());
  REQUIRE(fresh->size() == 1);
  CHECK((*fresh)[0]["id"] == "p-1");
  q = PerceptQuery();
  q.thread_id = "t-1";
  CHECK(e->projection().QueryPercepts(q, clock.Now())->empty());
  CHECK(e->projection().CheckIndexes().ok());
  auto verified = Verify(dir / "live");
  INFO(verified.status().ToString());
  REQUIRE(verified.ok());
  CHECK(verified->match);
}

TEST_CASE("projections of another layout are rebuilt from the log", "[engine]") {
  ScratchDir dir;
  std::string digest;
  {
    auto e = OpenEngine(dir.path());
    for (int i = 0; i < 20; ++i) REQUIRE(e->Commit(AddPercept(*e)).ok());
    digest = *e->projection().Digest();
  }
  {  // What an older limbic left: no (or another) schema.
    rocksdb::Options options;
    std::vector<std::string> names;
    REQUIRE(rocksdb::DB::ListColumnFamilies(options, DbDirPath(dir.path()), &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    REQUIRE(rocksdb::DB::Open(options, DbDirPath(dir.path()), cfs, &handles, &db).ok());
    REQUIRE(db->Put(rocksdb::WriteOptions(), handles[0], "schema", "1").ok());
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    delete db;
  }
  EngineOptions ro;
  ro.state_dir = dir.path();
  ro.read_only = true;
  auto reader = Engine::Open(ro);
  REQUIRE_FALSE(reader.ok());
  CHECK_THAT(reader.status().message(), Catch::Contains("layout") && Catch::Contains("rebuilds"));
  EngineRecovery rec;
  EngineOptions o;
  o.state_dir = dir.path();
  auto e = Engine::Open(o, &rec);
  REQUIRE(e.ok());
  CHECK(rec.reapplied == 20);
  CHECK(*(*e)->projection().Digest() == digest);
  CHECK((*e)->projection().CheckIndexes().ok());
}

// Replication (runtime/replication/replicator.h): a standby applies its primary's
// events as they are; a primary's write gate and held acknowledgements.
TEST_CASE("SubmitReplicated applies events with their own seq and ts, line for line",
          "[engine][replication]") {
  ScratchDir primary_dir, standby_dir;
  ManualClock clock(1795356309000);
  auto primary = OpenEngine(primary_dir.path(), &clock);
  std::vector<Event> a, b;
  REQUIRE(primary->Commit(AddPercept(*primary, "x"), &a).ok());
  clock.Set(1795356310000);
  REQUIRE(primary->Commit(AddPercept(*primary, "y"), &b).ok());

  ManualClock later(1895356309000);  // the standby's own clock is not used
  auto standby = OpenEngine(standby_dir.path(), &later);
  std::vector<Event> events = {a[0], b[0]};
  Status result = Status::Internal("not called");
  REQUIRE(
      standby
          ->SubmitReplicated(events, [&](const Status& s, std::span<const Event>) { result = s; })
          .ok());
  REQUIRE(standby->WaitIdle().ok());
  CHECK(result.ok());
  CHECK(standby->applied_seq() == 2);
  std::vector<Event> copied = ReadAll(standby_dir.path() + "/events");
  REQUIRE(copied.size() == 2);
  CHECK(EncodeEvent(copied[0]) == EncodeEvent(a[0]));
  CHECK(EncodeEvent(copied[1]) == EncodeEvent(b[0]));
  CHECK(copied[1].ts == 1795356310000);

  SECTION("a gap or a step back in time is refused, and nothing is written") {
    Event gap = b[0];
    gap.seq = 5;
    Status s = standby->SubmitReplicated({gap}, nullptr);
    CHECK(s.IsFailedPrecondition());
    CHECK_THAT(s.message(), Catch::Contains("next seq 3"));
    Event back = b[0];
    back.seq = 3;
    back.ts = 1795356300000;
    back.fields["percept_id"] = "p-3";
    CHECK(standby->SubmitReplicated({back}, nullptr).IsFailedPrecondition());
    CHECK(standby->next_seq() == 3);
  }
  SECTION("the write gate refuses new commands, not replicated events") {
    standby->set_write_gate(Status::Unavailable("a standby"));
    Status s = standby->Submit(AddPercept(*standby), nullptr);
    CHECK(s.IsUnavailable());
    CHECK(s.message() == "a standby");
    Event next = b[0];
    next.seq = 3;
    next.fields["percept_id"] = "p-3";
    REQUIRE(standby->SubmitReplicated({next}, nullptr).ok());
    REQUIRE(standby->WaitIdle().ok());
    CHECK(standby->applied_seq() == 3);
  }
}

TEST_CASE("held acknowledgements wait for ReleaseHeld, or fail with FailHeld",
          "[engine][replication]") {
  ScratchDir dir;
  auto e = OpenEngine(dir.path());
  uint64_t durable = 0;
  e->set_hold_acks(true);
  std::vector<std::pair<uint64_t, Status>> answered;
  auto done = [&](const Status& s, std::span<const Event> events) {
    answered.emplace_back(events.back().seq, s);
  };
  REQUIRE(e->Submit(AddPercept(*e), done).ok());
  REQUIRE(e->Submit(AddPercept(*e), done).ok());
  REQUIRE(e->WaitIdle().ok());
  durable = e->applied_seq();
  CHECK(durable == 2);
  CHECK(answered.empty());  // durable and applied, not acknowledged
  CHECK(e->held_acks() == 2);
  e->ReleaseHeld(1);
  REQUIRE(answered.size() == 1);
  CHECK(answered[0].first == 1);
  CHECK(answered[0].second.ok());
  e->FailHeld(Status::Unavailable("outcome unknown"));
  REQUIRE(answered.size() == 2);
  CHECK(answered[1].first == 2);
  CHECK(answered[1].second.IsUnavailable());
  CHECK(e->held_acks() == 0);
}

}  // namespace engine_test
