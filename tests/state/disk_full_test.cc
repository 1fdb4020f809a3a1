// A full disk, through the fault-injecting Env: a write or fdatasync of the
// events log that fails, and a RocksDB write that fails. What is answered
// must be true (nothing durable reported failed, nothing failed durable),
// and writes go on by themselves once the fault is gone.
#include <catch2/catch.hpp>
#include <filesystem>

#include "log_test_util.h"
#include "state/commands.h"
#include "state/engine.h"
#include "base/fault_env.h"
#include "state/segment.h"
#include "test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace disk_full_test {

using namespace limbic;
using namespace limbic::state;
using namespace limbic::testing;

namespace {

std::vector<uint64_t> Seqs(const std::vector<Event>& events) {
  std::vector<uint64_t> out;
  for (const Event& e : events) out.push_back(e.seq);
  return out;
}

// What an engine's batches were answered, in the order they came back.
struct Answers {
  std::vector<std::pair<Status, std::vector<uint64_t>>> got;
  Engine::Done Recorder() {
    return [this](const Status& s, std::span<const Event> events) {
      std::vector<uint64_t> seqs;
      for (const Event& e : events) seqs.push_back(e.seq);
      got.emplace_back(s, seqs);
    };
  }
};

EngineOptions FaultOptions(const std::string& dir, FaultInjectionEnv* env) {
  EngineOptions o;
  o.state_dir = dir;
  o.env = env;
  o.rocks_env = env->rocks_env();
  return o;
}

std::unique_ptr<Engine> Open(const EngineOptions& o) {
  auto e = Engine::Open(o);
  INFO(e.status().ToString());
  REQUIRE(e.ok());
  return std::move(e).value();
}

// A percept with the caller's id, so an answer can be checked against the
// state after a restart.
Events Percept(const std::string& id) {
  auto ev = BuildPerceptAdd({{"id", id}, {"source", "s"}, {"type", "t"}}, 0);
  REQUIRE(ev.ok());
  return *ev;
}

bool HasPercept(const Engine& e, const std::string& id) {
  auto p = e.projection().Get(Pool::kPercepts, id);
  REQUIRE(p.ok());
  return p->has_value();
}

}  // namespace

TEST_CASE("a group whose write fails is cut back out of the log and reported not written",
          "[log][diskfull]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  Harness h;
  auto log = EventLog::Open(h.Options(dir.path(), &env), nullptr);
  REQUIRE(log.ok());
  Write(**log, 1, 1);
  const std::string seg = SegmentFileName(dir.path(), 1);
  const uint64_t before = FileSize(seg);
  env.FailAppendAfter(30);  // seq 2 is torn: 30 of its bytes reach the file
  (*log)->Submit(LogBatch{{MakeEvent(2)}, 2});
  (*log)->Submit(LogBatch{{MakeEvent(3)}, 3});
  CHECK((*log)->Flush().ok());  // nothing acknowledged is left unsynced
  CHECK(h.last_status.IsUnavailable());
  CHECK_THAT(h.last_status.message(), Catch::StartsWith("not written"));
  CHECK(h.acked == std::vector<uint64_t>{1});
  CHECK(FileSize(seg) == before);  // the torn bytes are gone already
  CHECK(env.unsynced_bytes() == 0);

  // Until resumed, the log writes nothing, even with the disk back.
  env.FailAppendAfter(uint64_t{1} << 40);
  (*log)->Submit(LogBatch{{MakeEvent(4)}, 4});
  CHECK((*log)->Flush().ok());
  CHECK_THAT(h.last_status.message(), Catch::StartsWith("not written"));
  CHECK(FileSize(seg) == before);
  // Resuming anywhere but where the log ends is refused.
  CHECK((*log)->Resume(3).code() == Status::Code::kInternal);
  REQUIRE((*log)->Resume(1).ok());
  (*log)->Submit(LogBatch{{MakeEvent(2, "again")}, 5});
  REQUIRE((*log)->Flush().ok());
  CHECK(h.acked == std::vector<uint64_t>{1, 2});
  auto events = ReadAll(dir.path());
  CHECK(Seqs(events) == std::vector<uint64_t>{1, 2});
  CHECK(events[1].Str("text") == "again");
}

TEST_CASE("a group whose fdatasync fails has an unknown outcome until the log is cut back",
          "[log][diskfull]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  Harness h;
  auto log = EventLog::Open(h.Options(dir.path(), &env), nullptr);
  REQUIRE(log.ok());
  Write(**log, 1, 1);
  const uint64_t before = FileSize(SegmentFileName(dir.path(), 1));
  env.SetSyncError(true);
  (*log)->Submit(LogBatch{{MakeEvent(2)}, 2});
  CHECK((*log)->Flush().ok());
  // Truncating worked, but the sync that would prove it did not.
  CHECK(h.last_status.IsUnavailable());
  CHECK_THAT(h.last_status.message(), Catch::StartsWith("outcome unknown"));
  CHECK_THAT(h.last_status.message(), Catch::Contains("retry with the same id"));
  Status still = (*log)->Resume(1);
  CHECK(still.IsUnavailable());
  CHECK_THAT(still.message(), Catch::StartsWith("outcome unknown"));

  env.SetSyncError(false);
  REQUIRE((*log)->Resume(1).ok());
  // Cut back and synced: even a power loss now leaves seq 1 alone.
  REQUIRE(env.SimulateCrash().ok());
  CHECK(FileSize(SegmentFileName(dir.path(), 1)) == before);
  (*log)->Submit(LogBatch{{MakeEvent(2, "again")}, 3});
  REQUIRE((*log)->Flush().ok());
  CHECK(h.acked == std::vector<uint64_t>{1, 2});
  CHECK(ReadAll(dir.path()).back().Str("text") == "again");
}

TEST_CASE("a failed group that started a new segment is undone across the rotation",
          "[log][diskfull]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  Harness h;
  auto o = h.Options(dir.path(), &env);
  o.segment_bytes = 600;
  auto log = EventLog::Open(o, nullptr);
  REQUIRE(log.ok());
  Write(**log, 1, 2);
  REQUIRE(SegmentPaths(dir.path()).size() == 1);
  const uint64_t before = FileSize(SegmentFileName(dir.path(), 1));
  // Seqs 3..12 fill the first segment (synced and sealed at the rotation)
  // and start others; the write after the rotation fails.
  env.FailAppendAfter(1200);
  LogBatch big;
  for (uint64_t s = 3; s <= 12; ++s) big.events.push_back(MakeEvent(s));
  big.tag = 3;
  (*log)->Submit(std::move(big));
  CHECK((*log)->Flush().ok());
  CHECK_THAT(h.last_status.message(), Catch::StartsWith("not written"));
  CHECK(SegmentPaths(dir.path()) == std::vector<std::string>{SegmentFileName(dir.path(), 1)});
  CHECK(FileSize(SegmentFileName(dir.path(), 1)) == before);
  CHECK_FALSE(std::filesystem::exists(SealFileName(SegmentFileName(dir.path(), 1))));
  env.FailAppendAfter(uint64_t{1} << 40);
  REQUIRE((*log)->Resume(2).ok());
  Write(**log, 3, 12);
  log->reset();
  // Reopened, the log checks out, seals included.
  LogRecovery rec;
  auto again = EventLog::Open(h.Options(dir.path()), &rec);
  REQUIRE(again.ok());
  CHECK(rec.last_seq == 12);
  CHECK(rec.truncated_bytes == 0);
}

TEST_CASE("ENOSPC at write: the batch and those after it are not written, writes resume after",
          "[engine][diskfull]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  auto o = FaultOptions(dir.path(), &env);
  {
    auto e = Open(o);
    REQUIRE(e->Commit(Percept("kept-1")).ok());
    env.SetWriteError(true);
    Answers a;
    REQUIRE(e->Submit(Percept("lost-1"), a.Recorder()).ok());
    REQUIRE(e->Submit(Percept("lost-2"), a.Recorder()).ok());
    REQUIRE(e->WaitIdle().ok());
    REQUIRE(a.got.size() == 2);
    for (const auto& [status, seqs] : a.got) {
      CHECK(status.IsUnavailable());
      CHECK_THAT(status.message(), Catch::StartsWith("not written"));
    }
    CHECK_FALSE(e->health().ok());
    CHECK_THAT(e->health().message(), Catch::Contains("injected write error"));
    CHECK(e->next_seq() == 2);  // their seqs are given out again
    CHECK(e->durable_seq() == 1);  // cut back out of the log: not counted
    // Still failing: the next one is tried, and not written either.
    Status again = e->Commit(Percept("lost-3"));
    CHECK_THAT(again.message(), Catch::StartsWith("not written"));

    env.SetWriteError(false);
    std::vector<Event> done;
    REQUIRE(e->Commit(Percept("kept-2"), &done).ok());
    CHECK(done[0].seq == 2);
    CHECK(e->health().ok());
    CHECK(HasPercept(*e, "kept-2"));
    CHECK_FALSE(HasPercept(*e, "lost-1"));
  }
  auto e = Open(o);
  CHECK(e->applied_seq() == 2);
  CHECK(HasPercept(*e, "kept-1"));
  CHECK(HasPercept(*e, "kept-2"));
  for (const char* id : {"lost-1", "lost-2", "lost-3"}) CHECK_FALSE(HasPercept(*e, id));
}

TEST_CASE("ENOSPC at fdatasync: outcome unknown, and no write is accepted until it is known",
          "[engine][diskfull]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  auto o = FaultOptions(dir.path(), &env);
  {
    auto e = Open(o);
    REQUIRE(e->Commit(Percept("kept-1")).ok());
    env.SetSyncError(true);
    Status unknown = e->Commit(Percept("maybe"));
    CHECK(unknown.IsUnavailable());
    CHECK_THAT(unknown.message(), Catch::StartsWith("outcome unknown"));
    CHECK_THAT(e->health().message(), Catch::StartsWith("outcome unknown"));
    Status refused = e->Commit(Percept("refused"));
    CHECK(refused.IsUnavailable());
    CHECK_THAT(refused.message(), Catch::StartsWith("not written"));
    CHECK(e->durable_seq() == 1);  // an unknown outcome is not counted
    CHECK_THAT(refused.message(), Catch::Contains("unknown"));

    env.SetSyncError(false);
    std::vector<Event> done;
    REQUIRE(e->Commit(Percept("maybe"), &done).ok());  // the retry, same id
    CHECK(done[0].seq == 2);
    CHECK(e->health().ok());
  }
  auto e = Open(o);
  CHECK(e->applied_seq() == 2);
  CHECK(HasPercept(*e, "maybe"));
  CHECK_FALSE(HasPercept(*e, "refused"));
}

TEST_CASE("ENOSPC in the RocksDB apply: the durable batch is acknowledged, the pools catch up",
          "[engine][diskfull]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  auto o = FaultOptions(dir.path(), &env);
  std::vector<uint64_t> published;
  {
    auto e = Open(o);
    e->AddListener([&](std::span<const Event> events) {
      for (const Event& ev : events) published.push_back(ev.seq);
    });
    REQUIRE(e->Commit(Percept("kept-1")).ok());
    env.SetRocksWriteError(true);
    std::vector<Event> done;
    Status durable = e->Commit(Percept("kept-2"), &done);
    INFO(durable.ToString());
    CHECK(durable.ok());  // it is in the log: never "failed"
    CHECK(done[0].seq == 2);
    CHECK(e->applied_seq() == 1);
    CHECK(e->durable_seq() == 2);  // what the log holds: the stop line's figure
    CHECK(published == std::vector<uint64_t>{1});  // not before it is applied
    CHECK_THAT(e->health().message(), Catch::Contains("No space left on device"));
    Status refused = e->Commit(Percept("refused"));
    CHECK(refused.IsUnavailable());
    CHECK_THAT(refused.message(), Catch::StartsWith("not written"));
    CHECK(e->durable_seq() == 2);

    env.SetRocksWriteError(false);
    Status resumed = e->Commit(Percept("kept-3"), &done);
    INFO(resumed.ToString());
    REQUIRE(resumed.ok());
    CHECK(done[0].seq == 3);
    CHECK(e->applied_seq() == 3);
    CHECK(HasPercept(*e, "kept-2"));
    CHECK(published == std::vector<uint64_t>{1, 2, 3});
    CHECK(e->health().ok());
  }
  auto e = Open(o);
  CHECK(e->applied_seq() == 3);
  CHECK_FALSE(HasPercept(*e, "refused"));
}

TEST_CASE("an engine closed after a failed RocksDB write closes cleanly, and the log re-applies",
          "[engine][diskfull]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  auto o = FaultOptions(dir.path(), &env);
  {
    auto e = Open(o);
    REQUIRE(e->Commit(Percept("kept-1")).ok());
    env.SetRocksWriteError(true);
    REQUIRE(e->Commit(Percept("kept-2")).ok());
    env.SetRocksWriteError(false);  // the disk has room again by shutdown
  }
  EngineRecovery rec;
  auto e = Engine::Open(o, &rec);
  REQUIRE(e.ok());
  CHECK((*e)->applied_seq() == 2);
  CHECK(HasPercept(**e, "kept-2"));
}

}  // namespace disk_full_test
