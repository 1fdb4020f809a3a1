// The events log: round trips, rotation, group commit, durability modes, and
// every recovery case through a fault-injecting file layer.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "state/event_log.h"
#include "state/fault_env.h"
#include "state/segment.h"
#include "test_util.h"

using namespace limbic;
using namespace limbic::state;
using limbic::testing::ScratchDir;

namespace {

Event MakeEvent(uint64_t seq, std::string text = "hello") {
  Event e;
  e.seq = seq;
  e.ts = 1795356309000 + static_cast<TimeMs>(seq);
  e.type = EventType::kPerceptArrived;
  e.fields = {{"percept_id", "p-" + std::to_string(seq)},
              {"source", "test"},
              {"percept_type", "t"},
              {"intensity", 0.5},
              {"text", std::move(text)}};
  return e;
}

// A log plus what its writer hands back.
struct Harness {
  std::mutex mu;
  std::vector<uint64_t> acked;  // seqs, in callback order
  std::vector<size_t> group_sizes;
  Status last_status;

  LogOptions Options(const std::string& dir, Env* env = nullptr) {
    LogOptions o;
    o.dir = dir;
    o.env = env;
    o.on_group = [this](const Status& s, std::vector<LogBatch>&& group) {
      std::lock_guard<std::mutex> lock(mu);
      last_status = s;
      size_t n = 0;
      for (auto& b : group)
        for (auto& e : b.events) {
          if (s.ok()) acked.push_back(e.seq);
          ++n;
        }
      group_sizes.push_back(n);
    };
    return o;
  }
};

// The segment files of a log dir, in order (seals and other files left out).
std::vector<std::string> SegmentPaths(const std::string& dir) {
  std::vector<std::string> out;
  for (auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".jsonl") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Event> ReadAll(const std::string& dir, Env* env = nullptr) {
  LogReader::Options o;
  o.env = env;
  auto reader = LogReader::Open(dir, o);
  REQUIRE(reader.ok());
  std::vector<Event> out;
  Event e;
  for (;;) {
    auto more = (*reader)->Next(&e);
    INFO(more.status().ToString());
    REQUIRE(more.ok());
    if (!*more) break;
    out.push_back(e);
  }
  return out;
}

void Write(EventLog& log, uint64_t from, uint64_t to) {
  for (uint64_t s = from; s <= to; ++s) log.Submit(LogBatch{{MakeEvent(s)}, s});
  REQUIRE(log.Flush().ok());
}

void Corrupt(const std::string& file, uint64_t offset, std::string_view bytes) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

uint64_t FileSize(const std::string& f) { return std::filesystem::file_size(f); }

}  // namespace

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

TEST_CASE("a failed sync breaks the log for good", "[log]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  Harness h;
  auto log = EventLog::Open(h.Options(dir.path(), &env), nullptr);
  REQUIRE(log.ok());
  Write(**log, 1, 1);
  env.SetSyncError(true);
  (*log)->Submit(LogBatch{{MakeEvent(2)}, 2});
  CHECK((*log)->Flush().IsIOError());
  env.SetSyncError(false);
  (*log)->Submit(LogBatch{{MakeEvent(3)}, 3});
  CHECK_FALSE((*log)->Flush().ok());
  CHECK(h.last_status.IsIOError());
  CHECK(h.acked == std::vector<uint64_t>{1});
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

TEST_CASE("the state dir lock names the holder's pid", "[env]") {
  ScratchDir dir;
  auto first = Env::Default()->LockFile(dir / "limbic.lock");
  REQUIRE(first.ok());
  auto second = Env::Default()->LockFile(dir / "limbic.lock");
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().IsBusy());
  CHECK_THAT(second.status().message(), Catch::Contains("pid " + std::to_string(getpid())));
  first->reset();
  CHECK(Env::Default()->LockFile(dir / "limbic.lock").ok());
}

TEST_CASE("the fault env loses exactly the unsynced bytes", "[env]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  auto f = env.NewAppendableFile(dir / "f");
  REQUIRE(f.ok());
  REQUIRE((*f)->Append("durable.").ok());
  REQUIRE((*f)->Sync().ok());
  REQUIRE((*f)->Append("volatile").ok());
  REQUIRE(env.SimulateCrash(3).ok());
  CHECK(*Env::Default()->ReadFileToString(dir / "f") == "durable.vol");
  env.SetWriteError(true);
  CHECK((*f)->Append("x").IsIOError());
  CHECK(env.append_calls() == 3);
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
