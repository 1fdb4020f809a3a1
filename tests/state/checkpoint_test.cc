#include "state/checkpoint.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>

#include "base/json.h"
#include "state/commands.h"
#include "state/engine.h"
#include "state/replay.h"
#include "checkpoint_util.h"
#include "engine_util.h"
#include "test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace checkpoint_test {

using namespace limbic;
using namespace limbic::state;
using namespace limbic::testing;
namespace fs = std::filesystem;

TEST_CASE("time travel from checkpoints gives the digest of a replay from seq 1", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildCheckpointedState(state, 400, 60);
  REQUIRE(taken.size() >= 5);
  const uint64_t last = taken.back() + 10;
  std::vector<uint64_t> seqs = {1, 2, taken.front() - 1};
  for (uint64_t c : taken) {
    seqs.push_back(c);      // exactly on a checkpoint
    seqs.push_back(c + 1);  // just after one
  }
  std::mt19937_64 rng(44);
  for (int i = 0; i < 10; ++i) seqs.push_back(1 + rng() % last);
  for (uint64_t seq : seqs) {
    INFO("seq " << seq);
    auto tt = TimeTravel::Open(state, seq, nullptr, true);
    INFO(tt.status().ToString());
    REQUIRE(tt.ok());
    CHECK((*tt)->replay().last_seq == seq);
    CHECK((*tt)->projection().applied_seq() == seq);
    CHECK((*tt)->replay().digest == FullDigest(state, seq));
    CHECK((*tt)->replay().warnings.empty());
    // The indexes too (not in the digest): written over the checkpoint's.
    Status indexes = (*tt)->projection().CheckIndexes();
    INFO(indexes.ToString());
    CHECK(indexes.ok());
    // Started from the nearest checkpoint at or before seq.
    uint64_t nearest = 0;
    for (uint64_t c : taken)
      if (c <= seq) nearest = c;
    CHECK((*tt)->replay().from_checkpoint == nearest);
  }
}

TEST_CASE("time travel onto a checkpoint keeps that event's time as now", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildCheckpointedState(state, 120, 50);
  REQUIRE(!taken.empty());
  auto with = TimeTravel::Open(state, taken[0], nullptr, true);
  REQUIRE(with.ok());
  fs::remove_all(CheckpointsDirPath(state));  // the log stays the truth
  auto without = TimeTravel::Open(state, taken[0], nullptr, true);
  REQUIRE(without.ok());
  CHECK((*without)->replay().from_checkpoint == 0);
  CHECK((*with)->replay().last_ts == (*without)->replay().last_ts);
  CHECK((*with)->replay().digest == (*without)->replay().digest);
  CHECK((*with)->replay().events == (*without)->replay().events);
}

TEST_CASE("checkpoints of another log are never applied to this one", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live", other = dir / "other";
  auto taken = BuildCheckpointedState(state, 200, 60);
  REQUIRE(taken.size() >= 2);
  // Another state of the same length: the same seqs, other events (its
  // percepts' texts differ from the first one on).
  {
    EngineOptions o;
    o.state_dir = other;
    auto opened = Engine::Open(o);
    REQUIRE(opened.ok());
    Engine& e = **opened;
    while (e.applied_seq() < taken.back() + 10)
      MustCommit(e, BuildPerceptAdd({{"source", "other"}, {"type", "msg"}, {"text", "elsewhere"}},
                                    e.next_seq()));
  }
  // Its dir given this state's checkpoints (a restore gone wrong).
  fs::copy(CheckpointsDirPath(state), CheckpointsDirPath(other), fs::copy_options::recursive);
  const uint64_t seq = taken.back() + 3;
  auto tt = TimeTravel::Open(other, seq, nullptr, true);
  INFO(tt.status().ToString());
  REQUIRE(tt.ok());
  CHECK((*tt)->replay().from_checkpoint == 0);
  CHECK((*tt)->replay().digest == FullDigest(other, seq));
  REQUIRE((*tt)->replay().warnings.size() == taken.size());
  CHECK_THAT((*tt)->replay().warnings[0], Catch::Contains("is not the one it was taken after"));
  auto f = Fsck(other);
  REQUIRE(f.ok());
  CHECK(f->checkpoints == 0);
  // A fork and an engine whose db/ is gone do not use them either.
  ReplayOptions fork;
  fork.from = EventsDirPath(other);
  fork.into = dir / "fork";
  fork.until_seq = seq;
  fork.checkpoints_of = other;
  auto forked = Replay(fork);
  REQUIRE(forked.ok());
  CHECK(forked->from_checkpoint == 0);
  CHECK(forked->digest == (*tt)->replay().digest);
  fs::remove_all(DbDirPath(other));
  EngineOptions o;
  o.state_dir = other;
  EngineRecovery r;
  auto reopened = Engine::Open(o, &r);
  REQUIRE(reopened.ok());
  CHECK(r.from_checkpoint == 0);
  CHECK(*(*reopened)->projection().Digest() == FullDigest(other, (*reopened)->applied_seq()));
}

TEST_CASE("an engine whose db/ is gone starts from its newest checkpoint", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildCheckpointedState(state, 300, 60);
  REQUIRE(taken.size() >= 2);
  uint64_t last = 0;
  std::string digest;
  {
    EngineOptions o;
    o.state_dir = state;
    auto e = Engine::Open(o);
    REQUIRE(e.ok());
    last = (*e)->applied_seq();
    digest = *(*e)->projection().Digest();
  }
  fs::remove_all(DbDirPath(state));
  SECTION("the newest one whole") {}
  SECTION("the newest one damaged: the one before") {
    TruncateATableFile(CheckpointDir(state, taken.back()));
    taken.pop_back();
  }
  SECTION("a block of the newest one's index damaged: the one before") {
    DamageABlock(CheckpointDir(state, taken.back()), "index");
    taken.pop_back();
  }
  SECTION("a copy a crash cut short is left beside db/") {
    fs::create_directories(state + "/db-restoring");
    std::ofstream(state + "/db-restoring/CURRENT") << "MANIFEST-000";
  }
  for (uint64_t bulk : {uint64_t{50000}, uint64_t{1}}) {  // chunk by chunk, then in bulk
    DYNAMIC_SECTION("bulk from " << bulk) {
      EngineOptions o;
      o.state_dir = state;
      o.bulk_rebuild_events = bulk;
      EngineRecovery r;
      auto e = Engine::Open(o, &r);
      INFO(e.status().ToString());
      REQUIRE(e.ok());
      CHECK(r.from_checkpoint == taken.back());
      CHECK(r.reapplied == last - taken.back());
      CHECK((*e)->applied_seq() == last);
      CHECK(*(*e)->projection().Digest() == digest);
      CHECK_FALSE(fs::exists(state + "/db-restoring"));
    }
  }
}

TEST_CASE("a fork at a time starts from the newest checkpoint at or before it", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildCheckpointedState(state, 300, 60);
  REQUIRE(taken.size() >= 3);
  const TimeMs at_checkpoint = ManifestOf(state, taken[1])["ts"];
  int n = 0;
  for (auto [time, from] : {std::pair{at_checkpoint, taken[1]},
                            std::pair{at_checkpoint + 1500, taken[1]},
                            std::pair{at_checkpoint - 1, taken[0]},
                            std::pair{TimeMs{1'790'000'000'500}, uint64_t{0}}}) {
    INFO("until " << FormatTime(time));
    ReplayOptions o;
    o.from = EventsDirPath(state);
    o.into = dir / ("fork-" + std::to_string(n));
    o.until_time = time;
    o.checkpoints_of = state;
    auto fork = Replay(o);
    INFO(fork.status().ToString());
    REQUIRE(fork.ok());
    CHECK(fork->from_checkpoint == from);
    ReplayOptions full = o;
    full.into = dir / ("full-" + std::to_string(n++));
    full.checkpoints_of.clear();
    auto whole = Replay(full);
    REQUIRE(whole.ok());
    CHECK(fork->last_seq == whole->last_seq);
    CHECK(fork->last_ts == whole->last_ts);
    CHECK(fork->digest == whole->digest);
  }
}

TEST_CASE("verify starts from the newest checkpoint unless full", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildCheckpointedState(state, 200, 60);
  REQUIRE(!taken.empty());
  auto v = Verify(state);
  REQUIRE(v.ok());
  CHECK(v->match);
  CHECK(v->from_checkpoint == taken.back());
  auto full = Verify(state, nullptr, true);
  REQUIRE(full.ok());
  CHECK(full->match);
  CHECK(full->from_checkpoint == 0);
  CHECK(full->replay_digest == v->replay_digest);
}

TEST_CASE("a replay from a checkpoint still copies the whole log", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildCheckpointedState(state, 250, 60);
  REQUIRE(taken.size() >= 2);
  ReplayOptions o;
  o.from = EventsDirPath(state);
  o.into = dir / "fork";
  o.until_seq = taken[1] + 5;
  o.checkpoints_of = state;
  o.segment_bytes = 4096;
  auto r = Replay(o);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(r->from_checkpoint == taken[1]);
  CHECK(r->events == taken[1] + 5);
  CHECK(r->digest == FullDigest(state, taken[1] + 5));
  // The new dir is a state dir of its own: its log has every event.
  EngineOptions eo;
  eo.state_dir = dir / "fork";
  auto e = Engine::Open(eo);
  REQUIRE(e.ok());
  CHECK((*e)->applied_seq() == taken[1] + 5);
  CHECK(*(*e)->projection().Digest() == r->digest);
  auto reader = LogReader::Open(EventsDirPath(dir / "fork"), {});
  REQUIRE(reader.ok());
  uint64_t n = 0;
  Event ev;
  while (*(*reader)->Next(&ev)) ++n;
  CHECK(n == taken[1] + 5);
}

TEST_CASE("retention keeps the newest densely and thins the older evenly", "[checkpoint]") {
  std::vector<uint64_t> seqs;
  for (uint64_t s = 100; s <= 5000; s += 100) seqs.push_back(s);  // 50 of them
  RetentionPolicy p{10, 3};
  auto kept = SeqsToKeep(seqs, p);
  REQUIRE(kept.size() == 10);
  CHECK(std::vector<uint64_t>(kept.end() - 3, kept.end()) ==
        std::vector<uint64_t>{4800, 4900, 5000});  // the newest `dense`
  // The older ones evenly from seq 0 (a look before the oldest replays
  // from seq 1): no gap more than twice the average, the first included.
  const uint64_t average = 4800 / 8;
  CHECK(kept.front() > 100);  // the oldest is no exception
  CHECK(kept.front() <= 2 * average);
  for (size_t i = 1; i + 2 < kept.size(); ++i) CHECK(kept[i] - kept[i - 1] <= 2 * average);
  // Fewer than keep: all kept.
  CHECK(SeqsToKeep({1, 2, 3}, p) == std::vector<uint64_t>{1, 2, 3});
  // keep no more than dense: the newest.
  CHECK(SeqsToKeep(seqs, {2, 5}) == std::vector<uint64_t>{4900, 5000});
  // Taken one at a time, as the runtime does, the result is as even.
  std::vector<uint64_t> rolling;
  for (uint64_t s : seqs) {
    rolling.push_back(s);
    rolling = SeqsToKeep(rolling, p);
  }
  REQUIRE(rolling.size() == 10);
  CHECK(rolling.front() <= 2 * 700);
  for (size_t i = 1; i + 2 < rolling.size(); ++i) CHECK(rolling[i] - rolling[i - 1] <= 2 * 700);
  // keep 4, dense 2 (the smallest policies): the two older ones still
  // halve what is left, never anchored at the start.
  std::vector<uint64_t> small;
  for (uint64_t s = 50; s <= 100000; s += 50) {
    small.push_back(s);
    small = SeqsToKeep(small, {4, 2});
  }
  REQUIRE(small.size() == 4);
  CHECK(small[0] > 10000);
  CHECK(small[1] - small[0] <= 2 * 100000 / 2);
  // dense 0 keeps the newest all the same.
  CHECK(SeqsToKeep({100, 200, 300}, {2, 0}).back() == 300);
}

}  // namespace checkpoint_test
