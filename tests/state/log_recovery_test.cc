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
#include "base/fault_env.h"
#include "state/segment.h"
#include "test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace log_recovery_test {

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
    // The process died there: its closing sync and seal never happen.
    env.SetSyncError(true);
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

TEST_CASE("a torn write during append is cut back at once, so recovery finds none", "[log]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  Harness h;
  {
    auto log = EventLog::Open(h.Options(dir.path(), &env), nullptr);
    REQUIRE(log.ok());
    Write(**log, 1, 2);
    env.FailAppendAfter(30);
    (*log)->Submit(LogBatch{{MakeEvent(3)}, 3});
    CHECK((*log)->Flush().ok());
    CHECK(h.last_status.IsUnavailable());  // "not written"
    CHECK(h.acked.size() == 2);  // the failed group was never acknowledged
  }
  LogRecovery rec;
  auto log = EventLog::Open(h.Options(dir.path()), &rec);
  REQUIRE(log.ok());
  CHECK(rec.last_seq == 2);
  CHECK(rec.truncated_bytes == 0);
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
    CHECK_THAT(log.status().message(), Catch::Contains(last + " offset 0"));
    CHECK_THAT(log.status().message(), Catch::Contains("a damaged event"));
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
  SECTION("a seal that does not match refuses the log until an operator accepts the segment") {
    // An edit that keeps every line valid JSON with the right seqs.
    std::string text;
    {
      std::ifstream in(segs[1]);
      text.assign(std::istreambuf_iterator<char>(in), {});
    }
    auto at = text.find("hello");
    REQUIRE(at != std::string::npos);
    Corrupt(segs[1], at, "HELLO");
    auto before = ReadSeal(Env::Default(), segs[1]);
    REQUIRE(before.ok());
    auto log = EventLog::Open(o, nullptr);
    REQUIRE_FALSE(log.ok());
    CHECK(log.status().IsCorruption());
    CHECK_THAT(log.status().message(),
               Catch::Contains(segs[1] + " bytes 0-" + std::to_string(before->bytes)) &&
                   Catch::Contains("changed after it was sealed"));
    CHECK(ReadSeal(Env::Default(), segs[1])->sha256 == before->sha256);  // nothing changed

    LogOptions ro = o;  // fsck: reported, nothing resealed
    ro.read_only = true;
    ro.accept_changed_segments = true;
    LogRecovery seen;
    REQUIRE(EventLog::Open(ro, &seen).ok());
    REQUIRE(seen.changed_segments.size() == 1);
    CHECK(ReadSeal(Env::Default(), segs[1])->sha256 == before->sha256);

    auto accept = o;
    accept.accept_changed_segments = true;
    LogRecovery rec;
    {
      auto accepted = EventLog::Open(accept, &rec);
      REQUIRE(accepted.ok());
    }
    REQUIRE(rec.changed_segments.size() == 1);
    const ChangedSegment& c = rec.changed_segments[0];
    CHECK(c.file == segs[1]);
    CHECK(c.sealed_sha256 == before->sha256);
    CHECK(c.sha256 != before->sha256);
    CHECK(c.first_seq == before->first_seq);
    CHECK(c.last_seq == before->last_seq);
    auto resealed = ReadSeal(Env::Default(), segs[1]);
    REQUIRE(resealed.ok());
    CHECK(resealed->sha256 == c.sha256);
    LogRecovery after;
    CHECK(EventLog::Open(o, &after).ok());  // accepted once, opens from now on
    CHECK(after.changed_segments.empty());
  }
  SECTION("a seal that cannot be read is a change too") {
    { std::ofstream(SealFileName(segs[1])) << "{\"v\":1,"; }
    auto log = EventLog::Open(o, nullptr);
    REQUIRE_FALSE(log.ok());
    CHECK_THAT(log.status().message(), Catch::Contains(segs[1] + " bytes 0-0"));
  }
  SECTION("a sealed segment cut short is refused, not resealed") {
    std::filesystem::resize_file(segs[1], FileSize(segs[1]) - 10);
    auto log = EventLog::Open(o, nullptr);
    REQUIRE_FALSE(log.ok());
    CHECK_THAT(log.status().message(), Catch::Contains("shorter than the"));
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
  SECTION("a sealed prefix that no longer matches refuses the log, and changes nothing") {
    std::string text;
    {
      std::ifstream in(seg);
      text.assign(std::istreambuf_iterator<char>(in), {});
    }
    Corrupt(seg, text.find("hello"), "HELLO");
    const uint64_t size = FileSize(seg);
    auto log = EventLog::Open(o, nullptr);
    REQUIRE_FALSE(log.ok());
    CHECK_THAT(log.status().message(), Catch::Contains(seg + " bytes 0-"));
    CHECK(FileSize(seg) == size);
  }
}

// Only bytes after the last newline can be a torn write: the writer ends
// every event with '\n' in the same write(2), and acknowledges after it.
TEST_CASE("a complete final line that does not decode is damage, not a torn write", "[log]") {
  ScratchDir dir;
  Harness h;
  auto o = h.Options(dir.path());
  {
    auto log = EventLog::Open(o, nullptr);
    REQUIRE(log.ok());
    Write(**log, 1, 30);
  }
  const std::string seg = SegmentFileName(dir.path(), 1);
  std::string text;
  {
    std::ifstream in(seg);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  REQUIRE(text.back() == '\n');
  const uint64_t last_line = text.rfind('\n', text.size() - 2) + 1;

  SECTION("without a seal over it (written after the last clean close)") {
    std::filesystem::remove(SealFileName(seg));
    Corrupt(seg, text.size() - 2, "]");  // the closing '}' of the last event
    const uint64_t size = FileSize(seg);
    LogRecovery rec;
    auto log = EventLog::Open(o, &rec);
    REQUIRE_FALSE(log.ok());
    CHECK(log.status().IsCorruption());
    CHECK_THAT(log.status().message(),
               Catch::Contains(seg + " offset " + std::to_string(last_line)) &&
                   Catch::Contains("a damaged event"));
    CHECK(FileSize(seg) == size);  // the acknowledged event is still there

    LogOptions ro = o;  // fsck's view: the same refusal, no torn tail
    ro.read_only = true;
    LogRecovery seen;
    auto read = EventLog::Open(ro, &seen);
    REQUIRE_FALSE(read.ok());
    CHECK(seen.truncated_bytes == 0);
  }
  SECTION("two damaged lines at the end: both kept, the first named") {
    std::filesystem::remove(SealFileName(seg));
    const uint64_t before_last = text.rfind('\n', last_line - 2) + 1;
    Corrupt(seg, last_line - 2, "]");
    Corrupt(seg, text.size() - 2, "]");
    const uint64_t size = FileSize(seg);
    auto log = EventLog::Open(o, nullptr);
    REQUIRE_FALSE(log.ok());
    CHECK_THAT(log.status().message(),
               Catch::Contains(seg + " offset " + std::to_string(before_last)));
    CHECK(FileSize(seg) == size);
  }
  SECTION("under the seal of the last clean close") {
    Corrupt(seg, text.size() - 2, "]");
    auto log = EventLog::Open(o, nullptr);
    REQUIRE_FALSE(log.ok());
    CHECK_THAT(log.status().message(), Catch::Contains("changed after it was sealed") &&
                                           Catch::Contains("offset " + std::to_string(last_line)));
  }
  SECTION("the neighbour that is repaired: the same line without its newline") {
    std::filesystem::remove(SealFileName(seg));
    std::filesystem::resize_file(seg, text.size() - 1);
    LogRecovery rec;
    auto log = EventLog::Open(o, &rec);
    REQUIRE(log.ok());
    CHECK(rec.last_seq == 29);
    CHECK(rec.truncated_offset == last_line);
    CHECK(FileSize(seg) == last_line);
  }
}

}  // namespace log_recovery_test
