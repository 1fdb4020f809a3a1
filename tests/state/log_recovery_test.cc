// Recovering the events log through a fault-injecting file layer: torn
// tails and torn writes, corruption named by file and offset, segment
// seals, timestamps that go backwards.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "log_test_util.h"
#include "state/event_log.h"
#include "state/fault_env.h"
#include "state/segment.h"
#include "test_util.h"

using namespace limbic;
using namespace limbic::state;
using namespace limbic::testing;

TEST_CASE("a torn final line is truncated on open, with the recovery reported", "[log]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  Harness h;
  auto o = h.Options(dir.path(), &env);
  o.durability = Durability::kNone;
  {
    auto log = EventLog::Open(o, nullptr);
    REQUIRE(log.ok());
    Write(**log, 1, 5);
    for (uint64_t s = 6; s <= 8; ++s) (*log)->Submit(LogBatch{{MakeEvent(s)}, s});
    while ((*log)->last_written_seq() < 8) std::this_thread::yield();
    REQUIRE(env.SimulateCrash(/*keep_unsynced_bytes=*/40).ok());  // half a line survives
  }
  std::string seg = SegmentFileName(dir.path(), 1);
  uint64_t torn_size = FileSize(seg);
  LogRecovery rec;
  auto log = EventLog::Open(h.Options(dir.path()), &rec);
  REQUIRE(log.ok());
  CHECK(rec.last_seq == 5);
  CHECK(rec.truncated_bytes == 40);
  CHECK(rec.truncated_file == seg);
  CHECK(rec.truncated_offset == torn_size - 40);
  CHECK(FileSize(seg) == torn_size - 40);
  Write(**log, 6, 6);  // and the log goes on from there
  CHECK(ReadAll(dir.path()).back().seq == 6);
}

TEST_CASE("a torn write during append is truncated too", "[log]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  Harness h;
  {
    auto log = EventLog::Open(h.Options(dir.path(), &env), nullptr);
    REQUIRE(log.ok());
    Write(**log, 1, 2);
    env.FailAppendAfter(30);
    (*log)->Submit(LogBatch{{MakeEvent(3)}, 3});
    CHECK_FALSE((*log)->Flush().ok());
    CHECK(h.last_status.IsIOError());
    CHECK(h.acked.size() == 2);  // the failed group was never acknowledged
  }
  LogRecovery rec;
  auto log = EventLog::Open(h.Options(dir.path()), &rec);
  REQUIRE(log.ok());
  CHECK(rec.last_seq == 2);
  CHECK(rec.truncated_bytes == 30);
}

TEST_CASE("corruption before the tail refuses to open, naming file and offset", "[log]") {
  ScratchDir dir;
  Harness h;
  auto o = h.Options(dir.path());
  o.segment_bytes = 600;
  {
    auto log = EventLog::Open(o, nullptr);
    REQUIRE(log.ok());
    Write(**log, 1, 20);
  }
  std::string first = SegmentFileName(dir.path(), 1);
  SECTION("garbage in an early segment") {
    Corrupt(first, 0, "XXXXXXXX");
    auto log = EventLog::Open(o, nullptr);
    REQUIRE_FALSE(log.ok());
    CHECK(log.status().IsCorruption());
    CHECK_THAT(log.status().message(), Catch::Contains(first + " offset 0"));
  }
  SECTION("a seq gap") {
    // Rewrite seq 2 as seq 9 (same width, so offsets stay put).
    std::ifstream in(first);
    std::string line1;
    std::getline(in, line1);
    Corrupt(first, line1.size() + 1, "{\"v\":1,\"seq\":9,");
    auto log = EventLog::Open(o, nullptr);
    REQUIRE_FALSE(log.ok());
    CHECK_THAT(log.status().message(),
               Catch::Contains("offset " + std::to_string(line1.size() + 1)) &&
                   Catch::Contains("seq 9 follows seq 1"));
  }
  SECTION("a torn line followed by good lines is not a torn tail") {
    std::string last = SegmentPaths(dir.path()).back();
    std::ifstream in(last);
    std::string line1;
    std::getline(in, line1);
    Corrupt(last, 5, "\n");  // cut the first line short; good lines follow
    auto log = EventLog::Open(o, nullptr);
    REQUIRE_FALSE(log.ok());
    CHECK_THAT(log.status().message(), Catch::Contains(last));
    CHECK_THAT(log.status().message(), Catch::Contains("followed by a valid one"));
  }
  SECTION("a missing middle segment") {
    std::vector<std::string> names = SegmentPaths(dir.path());
    REQUIRE(names.size() >= 3);
    std::filesystem::remove(names[1]);
    auto log = EventLog::Open(o, nullptr);
    REQUIRE_FALSE(log.ok());
    CHECK_THAT(log.status().message(), Catch::Contains("segment name says first seq"));
  }
}

TEST_CASE("read-only open leaves a torn tail in place", "[log]") {
  ScratchDir dir;
  Harness h;
  {
    auto log = EventLog::Open(h.Options(dir.path()), nullptr);
    REQUIRE(log.ok());
    Write(**log, 1, 3);
  }
  std::string seg = SegmentFileName(dir.path(), 1);
  { std::ofstream(seg, std::ios::app) << "{\"v\":1,\"seq\":4,\"ts\""; }
  uint64_t size = FileSize(seg);
  LogOptions ro;
  ro.dir = dir.path();
  ro.read_only = true;
  LogRecovery rec;
  auto log = EventLog::Open(ro, &rec);
  REQUIRE(log.ok());
  CHECK(rec.last_seq == 3);
  CHECK(rec.truncated_bytes > 0);
  CHECK(FileSize(seg) == size);
}

TEST_CASE("closed segments are sealed: checked by hash, resealed when the seal is lost", "[log]") {
  ScratchDir dir;
  Harness h;
  auto o = h.Options(dir.path());
  o.segment_bytes = 600;
  {
    auto log = EventLog::Open(o, nullptr);
    REQUIRE(log.ok());
    Write(**log, 1, 20);
  }
  std::vector<std::string> segs = SegmentPaths(dir.path());
  REQUIRE(segs.size() >= 3);
  auto seal = ReadSeal(Env::Default(), segs[0]);
  REQUIRE(seal.ok());
  CHECK(seal->first_seq == 1);
  auto next = SegmentFileName(dir.path(), seal->last_seq + 1);
  CHECK(next == segs[1]);
  CHECK(seal->bytes == FileSize(segs[0]));

  SECTION("a lost seal is rebuilt from a full check") {
    std::filesystem::remove(SealFileName(segs[1]));
    LogRecovery rec;
    auto log = EventLog::Open(o, &rec);
    REQUIRE(log.ok());
    CHECK(rec.last_seq == 20);
    CHECK(std::filesystem::exists(SealFileName(segs[1])));
  }
  SECTION("a seal that does not match leads to a line-by-line check") {
    // An edit that keeps every line valid JSON with the right seqs.
    std::string text;
    {
      std::ifstream in(segs[1]);
      text.assign(std::istreambuf_iterator<char>(in), {});
    }
    auto at = text.find("hello");
    REQUIRE(at != std::string::npos);
    Corrupt(segs[1], at, "HELLO");
    LogRecovery rec;
    auto log = EventLog::Open(o, &rec);
    REQUIRE(log.ok());
    auto resealed = ReadSeal(Env::Default(), segs[1]);
    REQUIRE(resealed.ok());
    CHECK(resealed->sha256 != seal->sha256);
  }
  SECTION("a sealed segment whose bytes break is refused, naming the line") {
    std::ifstream in(segs[1]);
    std::string line1;
    std::getline(in, line1);
    Corrupt(segs[1], line1.size() + 1, "{\"v\":1,\"seq\":\"x");
    auto log = EventLog::Open(o, nullptr);
    REQUIRE_FALSE(log.ok());
    CHECK(log.status().IsCorruption());
    CHECK_THAT(log.status().message(),
               Catch::Contains(segs[1] + " offset " + std::to_string(line1.size() + 1)));
  }
}

TEST_CASE("a ts that goes backwards is corruption, and recovery reports the last ts", "[log]") {
  ScratchDir dir;
  Harness h;
  auto o = h.Options(dir.path());
  {
    auto log = EventLog::Open(o, nullptr);
    REQUIRE(log.ok());
    Write(**log, 1, 3);
  }
  LogRecovery rec;
  {
    auto log = EventLog::Open(o, &rec);
    REQUIRE(log.ok());
  }
  CHECK(rec.last_ts == MakeEvent(3).ts);
  // Rewrite the last line with an earlier ts.
  Event early = MakeEvent(4);
  early.ts = MakeEvent(1).ts - 1000;
  std::string line;
  AppendEncodedEvent(early, &line);
  {
    std::ofstream out(SegmentFileName(dir.path(), 1), std::ios::app);
    out << line;
  }
  Event good = MakeEvent(5);
  std::string line5;
  AppendEncodedEvent(good, &line5);
  {
    std::ofstream out(SegmentFileName(dir.path(), 1), std::ios::app);
    out << line5;
  }
  auto log = EventLog::Open(o, nullptr);
  REQUIRE_FALSE(log.ok());
  CHECK_THAT(log.status().message(), Catch::Contains("is before the previous event's"));
  // Readers (replay, tail) refuse it too.
  auto reader = LogReader::Open(dir.path(), LogReader::Options());
  REQUIRE(reader.ok());
  Event e;
  Result<bool> more = true;
  while (more.ok() && *more) more = (*reader)->Next(&e);
  CHECK(more.status().IsCorruption());
}

TEST_CASE("the open segment's seal covers what it held at a clean close", "[log]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  Harness h;
  auto o = h.Options(dir.path(), &env);
  {
    auto log = EventLog::Open(o, nullptr);
    REQUIRE(log.ok());
    Write(**log, 1, 10);
  }
  std::string seg = SegmentFileName(dir.path(), 1);
  auto seal = ReadSeal(Env::Default(), seg);
  REQUIRE(seal.ok());
  CHECK(seal->last_seq == 10);
  CHECK(seal->bytes == FileSize(seg));
  {  // More events after the seal, then a crash: no new seal.
    auto log = EventLog::Open(o, nullptr);
    REQUIRE(log.ok());
    Write(**log, 11, 15);
    REQUIRE(env.SimulateCrash().ok());
  }
  LogRecovery rec;
  {
    auto log = EventLog::Open(o, &rec);
    REQUIRE(log.ok());
    CHECK(rec.last_seq == 15);  // the prefix from the seal, the rest decoded
    CHECK(rec.last_ts == MakeEvent(15).ts);
    Write(**log, 16, 16);
  }
  CHECK(ReadAll(dir.path()).size() == 16);
  CHECK(ReadSeal(Env::Default(), seg)->last_seq == 16);

  SECTION("a broken line inside the sealed prefix is still found") {
    Corrupt(seg, 0, "XXXX");
    auto log = EventLog::Open(o, nullptr);
    REQUIRE_FALSE(log.ok());
    CHECK_THAT(log.status().message(), Catch::Contains(seg + " offset 0"));
  }
  SECTION("a sealed prefix that no longer matches is decoded and the log opens") {
    std::string text;
    {
      std::ifstream in(seg);
      text.assign(std::istreambuf_iterator<char>(in), {});
    }
    Corrupt(seg, text.find("hello"), "HELLO");
    LogRecovery again;
    auto log = EventLog::Open(o, &again);
    REQUIRE(log.ok());
    CHECK(again.last_seq == 16);
  }
}
