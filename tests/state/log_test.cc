// The events log: round trips, rotation, group commit, durability modes,
// failed syncs, following a growing log; the state dir lock and the fault
// env. Recovery is in log_recovery_test.cc.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "log_test_util.h"
#include "state/event_log.h"
#include "base/fault_env.h"
#include "state/segment.h"
#include "test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace log_test {

using namespace limbic;
using namespace limbic::state;
using namespace limbic::testing;

TEST_CASE("events written are read back in order, and the log reopens where it ended", "[log]") {
  ScratchDir dir;
  Harness h;
  {
    LogRecovery rec;
    auto log = EventLog::Open(h.Options(dir.path()), &rec);
    REQUIRE(log.ok());
    CHECK(rec.last_seq == 0);
    Write(**log, 1, 10);
    CHECK((*log)->last_written_seq() == 10);
  }
  CHECK(h.acked.size() == 10);
  auto events = ReadAll(dir.path());
  REQUIRE(events.size() == 10);
  CHECK(events[3].seq == 4);
  CHECK(events[3].Str("text") == "hello");
  LogRecovery rec;
  auto log = EventLog::Open(h.Options(dir.path()), &rec);
  REQUIRE(log.ok());
  CHECK(rec.first_seq == 1);
  CHECK(rec.last_seq == 10);
  CHECK(rec.truncated_bytes == 0);
  Write(**log, 11, 12);
  CHECK(ReadAll(dir.path()).size() == 12);
}

TEST_CASE("segments rotate at the configured size and the reader crosses them", "[log]") {
  ScratchDir dir;
  Harness h;
  auto o = h.Options(dir.path());
  o.segment_bytes = 1000;
  {
    auto log = EventLog::Open(o, nullptr);
    REQUIRE(log.ok());
    Write(**log, 1, 50);
  }
  std::vector<std::string> names = SegmentPaths(dir.path());
  REQUIRE(names.size() > 3);
  CHECK(names[0] == SegmentFileName(dir.path(), 1));
  for (auto& n : names) CHECK(FileSize(n) < 1000 + 400);
  CHECK(ReadAll(dir.path()).size() == 50);
  // Every segment is sealed: the closed ones when the writer moved on, the
  // open one at the clean close, as it was then.
  for (const auto& n : names) {
    auto seal = ReadSeal(Env::Default(), n);
    REQUIRE(seal.ok());
    CHECK(seal->bytes == FileSize(n));
  }

  // from_seq starts inside the right segment.
  LogReader::Options ro;
  ro.from_seq = 37;
  auto reader = LogReader::Open(dir.path(), ro);
  REQUIRE(reader.ok());
  Event e;
  REQUIRE(*(*reader)->Next(&e));
  CHECK(e.seq == 37);

  // Reopening continues the last segment; the whole log still scans.
  LogRecovery rec;
  auto log = EventLog::Open(o, &rec);
  REQUIRE(log.ok());
  CHECK(rec.segments == names.size());
  CHECK(rec.last_seq == 50);
}

TEST_CASE("group commit: concurrent batches share fsyncs, each acked once in order", "[log]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  Harness h;
  auto log = EventLog::Open(h.Options(dir.path(), &env), nullptr);
  REQUIRE(log.ok());
  std::mutex seq_mu;
  uint64_t next = 1;
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&] {
      for (int i = 0; i < 250; ++i) {
        std::lock_guard<std::mutex> lock(seq_mu);  // seqs are assigned in submit order
        (*log)->Submit(LogBatch{{MakeEvent(next)}, next});
        ++next;
      }
    });
  }
  for (auto& w : writers) w.join();
  REQUIRE((*log)->Flush().ok());
  REQUIRE(h.acked.size() == 1000);
  for (size_t i = 0; i < h.acked.size(); ++i) CHECK(h.acked[i] == i + 1);
  CHECK(env.sync_calls() < 1000);  // groups, not batches, were synced
  CHECK(h.group_sizes.size() == static_cast<size_t>(env.sync_calls()));  // one fdatasync per group
}

TEST_CASE("durability modes decide when data is synced", "[log]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  Harness h;
  auto o = h.Options(dir.path(), &env);
  SECTION("fsync syncs every group before acking") {
    auto log = EventLog::Open(o, nullptr);
    REQUIRE(log.ok());
    (*log)->Submit(LogBatch{{MakeEvent(1)}, 1});
    REQUIRE((*log)->Flush().ok());
    CHECK(env.sync_calls() >= 1);
    REQUIRE(env.SimulateCrash().ok());
    CHECK(ReadAll(dir.path()).size() == 1);
  }
  SECTION("none acks after write; a crash loses only unsynced events") {
    o.durability = Durability::kNone;
    auto log = EventLog::Open(o, nullptr);
    REQUIRE(log.ok());
    Write(**log, 1, 3);  // Flush syncs
    int syncs = env.sync_calls();
    for (uint64_t s = 4; s <= 6; ++s) (*log)->Submit(LogBatch{{MakeEvent(s)}, s});
    while ((*log)->last_written_seq() < 6) std::this_thread::yield();
    CHECK(env.sync_calls() == syncs);  // written, acked, not synced
    CHECK(h.acked.size() == 6);
    REQUIRE(env.SimulateCrash().ok());
    CHECK(ReadAll(dir.path()).size() == 3);
  }
  SECTION("interval acks after write and syncs within the interval, with no further writes") {
    o.durability = Durability::kInterval;
    o.interval_ms = 50;
    auto log = EventLog::Open(o, nullptr);
    REQUIRE(log.ok());
    for (uint64_t s = 1; s <= 3; ++s) (*log)->Submit(LogBatch{{MakeEvent(s)}, s});
    while ((*log)->last_written_seq() < 3) std::this_thread::yield();
    CHECK(h.acked.size() == 3);
    // The writer syncs on its own once the interval has passed.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (env.unsynced_bytes() > 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK(env.unsynced_bytes() == 0);
    REQUIRE(env.SimulateCrash().ok());
    CHECK(ReadAll(dir.path()).size() == 3);
  }
}

TEST_CASE("a failed sync fails its group, and the log writes nothing more until resumed", "[log]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  Harness h;
  auto log = EventLog::Open(h.Options(dir.path(), &env), nullptr);
  REQUIRE(log.ok());
  Write(**log, 1, 1);
  env.SetSyncError(true);
  (*log)->Submit(LogBatch{{MakeEvent(2)}, 2});
  CHECK((*log)->Flush().ok());
  CHECK(h.last_status.IsUnavailable());
  env.SetSyncError(false);
  (*log)->Submit(LogBatch{{MakeEvent(3)}, 3});
  CHECK((*log)->Flush().ok());
  CHECK_THAT(h.last_status.message(), Catch::StartsWith("not written"));
  CHECK(h.acked == std::vector<uint64_t>{1});
  CHECK(ReadAll(dir.path()).size() == 1);
}

TEST_CASE("a seq that does not continue the log is refused, not written", "[log]") {
  ScratchDir dir;
  Harness h;
  auto log = EventLog::Open(h.Options(dir.path()), nullptr);
  REQUIRE(log.ok());
  (*log)->Submit(LogBatch{{MakeEvent(5)}, 1});
  CHECK_FALSE((*log)->Flush().ok());
  CHECK(h.last_status.code() == Status::Code::kInternal);
  CHECK(ReadAll(dir.path()).empty());
}

TEST_CASE("the reader follows a growing log and waits for partial lines", "[log]") {
  ScratchDir dir;
  Harness h;
  auto o = h.Options(dir.path());
  o.segment_bytes = 500;
  auto log = EventLog::Open(o, nullptr);
  REQUIRE(log.ok());
  Write(**log, 1, 2);
  auto reader = LogReader::Open(dir.path(), {});
  REQUIRE(reader.ok());
  Event e;
  REQUIRE(*(*reader)->Next(&e));
  REQUIRE(*(*reader)->Next(&e));
  CHECK_FALSE(*(*reader)->Next(&e));
  Write(**log, 3, 12);  // crosses segment boundaries
  for (uint64_t want = 3; want <= 12; ++want) {
    auto more = (*reader)->Next(&e);
    REQUIRE(more.ok());
    REQUIRE(*more);
    CHECK(e.seq == want);
  }
  CHECK_FALSE(*(*reader)->Next(&e));

  // A half-written line is not returned until it is complete.
  ScratchDir other;
  std::string file = other / "events.jsonl";
  std::string line = EncodeEvent(MakeEvent(1));
  { std::ofstream(file) << line.substr(0, 20); }
  auto partial = LogReader::Open(file, {});
  REQUIRE(partial.ok());
  CHECK_FALSE(*(*partial)->Next(&e));
  { std::ofstream(file, std::ios::app) << line.substr(20) << "\n"; }
  REQUIRE(*(*partial)->Next(&e));
  CHECK(e.seq == 1);
  CHECK((*partial)->raw_line() == line);

  LogReader::Options strict;
  strict.tolerate_partial_tail = false;
  { std::ofstream(file, std::ios::app) << "{\"v\":1"; }
  auto s = LogReader::Open(file, strict);
  REQUIRE((*s)->Next(&e).ok());
  auto bad = (*s)->Next(&e);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("incomplete final line"));
}

TEST_CASE("FindLastEvent finds the last event of a type, across segments, not text in data",
          "[log]") {
  ScratchDir dir;
  Harness h;
  auto o = h.Options(dir.path());
  o.segment_bytes = 600;
  auto cursor = [](uint64_t seq, uint64_t through) {
    Event e;
    e.seq = seq;
    e.ts = MakeEvent(seq).ts;
    e.type = EventType::kReflexesEvaluated;
    e.fields = {{"through_seq", through}};
    return e;
  };
  {
    auto log = EventLog::Open(o, nullptr);
    REQUIRE(log.ok());
    CHECK_FALSE(FindLastEvent(nullptr, dir.path(), EventType::kReflexesEvaluated)->has_value());
    Write(**log, 1, 3);
    (*log)->Submit(LogBatch{{cursor(4, 3)}, 4});
    REQUIRE((*log)->Flush().ok());
    Write(**log, 5, 20);  // later segments hold none
    // A percept whose data looks like the envelope of the type sought.
    Event decoy = MakeEvent(21);
    decoy.fields["data"] = {{"a", 1}, {"type", "reflexes_evaluated"}};
    (*log)->Submit(LogBatch{{decoy}, 21});
    REQUIRE((*log)->Flush().ok());
  }
  REQUIRE(SegmentPaths(dir.path()).size() >= 3);
  uint64_t read = 0;
  auto found = FindLastEvent(nullptr, dir.path(), EventType::kReflexesEvaluated, &read);
  REQUIRE(found.ok());
  REQUIRE(found->has_value());
  CHECK((*found)->seq == 4);
  CHECK((*found)->fields["through_seq"] == 3);
  CHECK(read > 0);
  CHECK_FALSE(FindLastEvent(nullptr, dir.path(), EventType::kSegmentsAccepted)->has_value());
}

TEST_CASE("a reader that does not decode gives each seq and its raw line, across segments",
          "[log]") {
  ScratchDir dir;
  Harness h;
  auto o = h.Options(dir.path());
  o.segment_bytes = 1000;
  {
    auto log = EventLog::Open(o, nullptr);
    REQUIRE(log.ok());
    Write(**log, 1, 30);
  }
  LogReader::Options ro;
  ro.from_seq = 7;
  ro.decode = false;
  auto reader = LogReader::Open(dir.path(), ro);
  REQUIRE(reader.ok());
  Event e;
  uint64_t expected = 7;
  for (;;) {
    auto more = (*reader)->Next(&e);
    REQUIRE(more.ok());
    if (!*more) break;
    CHECK(e.seq == expected);
    CHECK((*reader)->raw_line() == EncodeEvent(MakeEvent(expected)));
    ++expected;
  }
  CHECK(expected == 31);
}

}  // namespace log_test
