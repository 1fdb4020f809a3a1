#include "state/checkpoint.h"

#include <rocksdb/sst_file_reader.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>

#include "base/json.h"
#include "state/commands.h"
#include "state/engine.h"
#include "state/replay.h"
#include "engine_util.h"
#include "test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace checkpoint_test {

using namespace limbic;
using namespace limbic::state;
using limbic::testing::MustCommit;
using limbic::testing::ScratchDir;
namespace fs = std::filesystem;

namespace {

// A state dir of about `n` events of several kinds, with a checkpoint
// taken every `every` events while the engine runs; the checkpoints' seqs.
std::vector<uint64_t> BuildState(const std::string& dir, int n, int every) {
  ManualClock clock(1'790'000'000'000);  // a second between steps: forks at a time
  EngineOptions o;
  o.state_dir = dir;
  o.segment_bytes = 4096;  // several segments
  o.clock = &clock;
  auto opened = Engine::Open(o);
  REQUIRE(opened.ok());
  Engine& e = **opened;
  std::vector<uint64_t> taken;
  MustCommit(e, BuildThreadCreate({{"goal", "answer"}, {"id", "t-1"}}, e.next_seq()));
  uint64_t last_taken = 0;
  std::vector<std::string> assigned;
  for (int i = 0; e.applied_seq() < static_cast<uint64_t>(n); ++i) {
    clock.Advance(1000);
    const std::string percept = "p-" + std::to_string(e.next_seq());  // ids follow seqs
    MustCommit(e, BuildPerceptAdd({{"source", i % 2 ? "github" : "discord"},
                                   {"type", "msg"},
                                   {"text", "message " + std::to_string(i)}},
                                  e.next_seq()));
    if (i % 3 == 0) {
      MustCommit(e, BuildPerceptAssign(percept, {{"thread_id", "t-1"}}));
      assigned.push_back(percept);
    }
    // A percept assigned long before (often before a checkpoint) processed
    // now: its index entries in the checkpoint are replaced.
    if (i % 5 == 1 && assigned.size() > 10) {
      MustCommit(e, BuildPerceptProcess(assigned.front()));
      assigned.erase(assigned.begin());
    }
    if (i % 7 == 0)
      MustCommit(e, BuildThreadUpdate("t-1", {{"state", {{"step", i}}}}));
    if (i % 11 == 0) MustCommit(e, BuildArousalSet({{"level", (i % 10) / 10.0}}));
    if (e.applied_seq() - last_taken >= static_cast<uint64_t>(every)) {
      auto c = TakeCheckpoint(e.projection(), dir, 1000 + i);
      INFO(c.status().ToString());
      REQUIRE(c.ok());
      CHECK(c->manifest.seq == e.applied_seq());
      CHECK(c->manifest.digest == *e.projection().Digest());
      taken.push_back(c->manifest.seq);
      last_taken = c->manifest.seq;
    }
  }
  return taken;
}

// The digest at `seq` by a replay from seq 1 (no checkpoints).
std::string FullDigest(const std::string& state_dir, uint64_t seq) {
  auto scratch = ScratchStateDir::Make("full");
  REQUIRE(scratch.ok());
  ReplayOptions o;
  o.from = EventsDirPath(state_dir);
  o.into = scratch->path();
  o.until_seq = seq;
  o.copy_events = false;
  auto r = Replay(o);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  REQUIRE(r->from_checkpoint == 0);
  return r->digest;
}

// Truncates the first table file of a checkpoint's db/ to half its size.
void TruncateATableFile(const std::string& checkpoint_dir) {
  for (const auto& f : fs::directory_iterator(checkpoint_dir + "/db")) {
    if (f.path().extension() != ".sst") continue;
    // A hard link shares the live DB's file: break the link first.
    fs::path copy = f.path().string() + ".copy";
    fs::copy_file(f.path(), copy);
    fs::remove(f.path());
    fs::rename(copy, f.path());
    fs::resize_file(f.path(), fs::file_size(f.path()) / 2);
    return;
  }
  FAIL("no table file in " << checkpoint_dir);
}

// Changes 16 bytes in the middle of the table files of column family `cf`
// (e.g. "percepts", "index") in a checkpoint's db/: their size, footer and
// index stay whole, so the checkpoint opens, and only a read of that block
// (or a check of every block) finds it.
void DamageABlock(const std::string& checkpoint_dir, const std::string& cf) {
  int damaged = 0;
  for (const auto& f : fs::directory_iterator(checkpoint_dir + "/db")) {
    if (f.path().extension() != ".sst") continue;
    rocksdb::SstFileReader reader{rocksdb::Options()};
    REQUIRE(reader.Open(f.path().string()).ok());
    if (reader.GetTableProperties()->column_family_name != cf) continue;
    std::string bytes;
    {
      std::ifstream in(f.path(), std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    for (size_t i = bytes.size() / 4; i < bytes.size() / 4 + 16; ++i) bytes[i] ^= 0x5a;
    fs::remove(f.path());  // a hard link shares the live DB's file: a new file
    std::ofstream(f.path(), std::ios::binary) << bytes;
    ++damaged;
  }
  REQUIRE(damaged > 0);
}

std::string CheckpointDir(const std::string& state_dir, uint64_t seq) {
  char name[32];
  std::snprintf(name, sizeof name, "%020llu", static_cast<unsigned long long>(seq));
  return CheckpointsDirPath(state_dir) + "/" + name;
}

// The manifest of the checkpoint at `seq`, as written.
json ManifestOf(const std::string& state, uint64_t seq) {
  std::ifstream in(CheckpointDir(state, seq) + "/manifest.json");
  return json::parse(in);
}

}  // namespace

TEST_CASE("time travel from checkpoints gives the digest of a replay from seq 1", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildState(state, 400, 60);
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
  auto taken = BuildState(state, 120, 50);
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

TEST_CASE("a damaged checkpoint is skipped with a warning and reported by fsck", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildState(state, 300, 60);
  REQUIRE(taken.size() >= 3);
  const uint64_t newest = taken.back(), before = taken[taken.size() - 2];
  const uint64_t seq = newest;  // on the damaged one: the one before serves

  SECTION("a truncated table file") { TruncateATableFile(CheckpointDir(state, newest)); }
  SECTION("bytes changed inside a table file (it still opens)") {
    DamageABlock(CheckpointDir(state, newest), "percepts");
  }
  SECTION("bytes changed inside an index table file (not read by the look)") {
    DamageABlock(CheckpointDir(state, newest), "index");
  }
  SECTION("a manifest that does not parse") {
    std::ofstream(CheckpointDir(state, newest) + "/manifest.json") << "{\"format\": 1, \"se";
  }
  SECTION("a manifest naming another seq than its db holds") {
    // The newest dir and manifest, with the older checkpoint's db/.
    json j = ManifestOf(state, newest);
    fs::remove_all(CheckpointDir(state, newest));
    fs::create_directories(CheckpointDir(state, newest));
    fs::copy(CheckpointDir(state, before) + "/db", CheckpointDir(state, newest) + "/db");
    std::ofstream(CheckpointDir(state, newest) + "/manifest.json") << j.dump() << "\n";
  }
  SECTION("a manifest without the event it was taken after") {
    json j = ManifestOf(state, newest);
    j.erase("event_sha256");
    std::ofstream(CheckpointDir(state, newest) + "/manifest.json") << j.dump() << "\n";
  }
  SECTION("taken after another event than the log's of its seq") {
    json j = ManifestOf(state, newest);
    j["event_sha256"] = std::string(64, 'a');
    std::ofstream(CheckpointDir(state, newest) + "/manifest.json") << j.dump() << "\n";
  }

  auto tt = TimeTravel::Open(state, seq, nullptr, true);
  INFO(tt.status().ToString());
  REQUIRE(tt.ok());
  CHECK((*tt)->replay().from_checkpoint == before);
  CHECK_FALSE((*tt)->replay().warnings.empty());
  CHECK((*tt)->replay().digest == FullDigest(state, seq));

  // --deep: a changed block is found only by reading it.
  auto f = Fsck(state, nullptr, kDefaultMaxJsonDepth, true);
  REQUIRE(f.ok());
  CHECK(f->ok);  // a warning, not a problem: the log is whole
  CHECK(f->checkpoints == taken.size() - 1);
  bool named = false;
  for (const std::string& w : f->warnings)
    if (w.find(CheckpointDir(state, newest)) != std::string::npos) named = true;
  CHECK(named);
}

TEST_CASE("checkpoints of another log are never applied to this one", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live", other = dir / "other";
  auto taken = BuildState(state, 200, 60);
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
  auto taken = BuildState(state, 300, 60);
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
  auto taken = BuildState(state, 300, 60);
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

TEST_CASE("fsck --deep finds a checkpoint whose digest is not its manifest's", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildState(state, 150, 60);
  REQUIRE(!taken.empty());
  json j = ManifestOf(state, taken[0]);
  j["digest"] = "00ff";
  std::ofstream(CheckpointDir(state, taken[0]) + "/manifest.json") << j.dump() << "\n";
  auto shallow = Fsck(state);
  REQUIRE(shallow.ok());
  CHECK(shallow->checkpoints == taken.size());
  auto deep = Fsck(state, nullptr, kDefaultMaxJsonDepth, true);
  REQUIRE(deep.ok());
  CHECK(deep->ok);
  CHECK(deep->checkpoints == taken.size() - 1);
}

TEST_CASE("a damaged block is found before a checkpoint is trusted, or when a replay reads it",
          "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildState(state, 300, 60);
  REQUIRE(taken.size() >= 3);
  const uint64_t newest = taken.back(), before = taken[taken.size() - 2];
  const uint64_t seq = newest + 5;
  const std::string expected = FullDigest(state, seq);
  ReplayOptions o;
  o.from = EventsDirPath(state);
  o.until_seq = seq;
  o.checkpoints_of = state;
  o.copy_events = false;
  auto replay = [&](const std::string& into) {
    o.into = dir / into;
    auto r = Replay(o);
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    CHECK(r->digest == expected);
    return *r;
  };
  // Whole: used as it is, without a word.
  ReplayResult whole = replay("whole");
  CHECK(whole.from_checkpoint == newest);
  CHECK(whole.warnings.empty());

  SECTION("a block no look reads: checked whole, it is skipped, naming its file") {
    DamageABlock(CheckpointDir(state, newest), "index");
    o.checkpoint_check = CheckpointTarget::Check::kOpened;
    CHECK(replay("opened").from_checkpoint == newest);  // nothing it reads is damaged
    o.checkpoint_check = CheckpointTarget::Check::kChecksums;
    ReplayResult r = replay("checked");
    CHECK(r.from_checkpoint == before);
    REQUIRE(r.warnings.size() == 1);
    CHECK_THAT(r.warnings[0], Catch::Contains(CheckpointDir(state, newest) + "/db/"));
    CHECK_THAT(r.warnings[0], Catch::Contains("checksum mismatch"));
  }
  SECTION("a block the replay reads: it goes back to the checkpoint before") {
    DamageABlock(CheckpointDir(state, newest), "percepts");
    o.checkpoint_check = CheckpointTarget::Check::kOpened;
    ReplayResult r = replay("read");
    CHECK(r.from_checkpoint == before);
    REQUIRE(r.warnings.size() == 1);
    CHECK_THAT(r.warnings[0], Catch::Contains(CheckpointDir(state, newest) + "/db/"));
  }
  SECTION("verify checks the checkpoint's digest against its manifest") {
    json j = ManifestOf(state, newest);
    j["digest"] = std::string(64, '0');
    std::ofstream(CheckpointDir(state, newest) + "/manifest.json") << j.dump() << "\n";
    CHECK(replay("opened").from_checkpoint == newest);  // a look does not read the digest
    auto v = Verify(state);
    REQUIRE(v.ok());
    CHECK(v->match);
    CHECK(v->from_checkpoint == before);
    REQUIRE(v->warnings.size() == 1);
    CHECK_THAT(v->warnings[0], Catch::Contains("is not its manifest's"));
  }
}

TEST_CASE("a checkpoint of another format or pools' layout is never read", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildState(state, 200, 60);
  REQUIRE(taken.size() >= 2);
  const uint64_t newest = taken.back();
  json j = ManifestOf(state, newest);
  SECTION("an older pools' layout") {
    j["schema"] = "5";
    j["limbic"] = "0.0.9";
  }
  SECTION("the first checkpoint format (no ts, no event_sha256)") {
    j = {{"format", 1},          {"seq", newest},      {"digest", j["digest"]},
         {"schema", j["schema"]}, {"limbic", "0.4.0"}, {"taken_at", 0}};
  }
  SECTION("a later checkpoint format") {
    j = {{"format", kCheckpointFormat + 1}, {"seq", newest}};
  }
  std::ofstream(CheckpointDir(state, newest) + "/manifest.json") << j.dump() << "\n";
  CheckpointList list = ListCheckpoints(state);
  CHECK(list.stale.size() == 1);
  CHECK(list.usable.size() == taken.size() - 1);
  auto tt = TimeTravel::Open(state, newest, nullptr, true);
  REQUIRE(tt.ok());
  CHECK((*tt)->replay().from_checkpoint == taken[taken.size() - 2]);
  CHECK((*tt)->replay().digest == FullDigest(state, newest));
  // Retention removes it.
  std::vector<std::string> removed;
  REQUIRE(ApplyRetention(state, {}, &removed).ok());
  CHECK(removed == std::vector<std::string>{CheckpointDir(state, newest)});
}

TEST_CASE("a hostile manifest is skipped as damaged, with its path, and never crashes",
          "[checkpoint][hostile]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildState(state, 200, 60);
  REQUIRE(taken.size() >= 2);
  const uint64_t newest = taken.back();
  const std::string path = CheckpointDir(state, newest) + "/manifest.json";
  json j = ManifestOf(state, newest);
  std::string text;
  std::string why;
  SECTION("nested 30,000 deep, within the size bound") {
    text = std::string(30000, '[') + std::string(30000, ']');
    why = "nested deeper";
  }
  SECTION("larger than any manifest") {
    j["padding"] = std::string(2 << 20, 'x');
    text = j.dump();
    why = "bytes";
  }
  SECTION("taken_at of the wrong type") {
    j["taken_at"] = "yesterday";
    text = j.dump();
    why = "taken_at";
  }
  SECTION("seq past uint64") {
    text = j.dump();
    const std::string seq = "\"seq\":" + std::to_string(newest);
    text.replace(text.find(seq), seq.size(), "\"seq\":184467440737095516160");
    why = "seq";
  }
  SECTION("another format whose seq is a string") {
    text = json{{"format", 1}, {"seq", "many"}}.dump();
    why = "seq";
  }
  SECTION("a format that is not an int") {
    text = json{{"format", uint64_t{1} << 40}, {"seq", newest}}.dump();
    why = "format";
  }
  std::ofstream(path, std::ios::trunc) << text;
  CheckpointList list = ListCheckpoints(state);
  INFO(json(list.warnings).dump());
  CHECK(list.usable.size() == taken.size() - 1);
  REQUIRE(list.damaged.size() + list.stale.size() == 1);
  if (!list.damaged.empty()) {
    REQUIRE(list.warnings.size() == 1);
    CHECK(list.warnings[0].find(path) != std::string::npos);
    CHECK(list.warnings[0].find(why) != std::string::npos);
  }
  // The looks, fsck and a restart go on from the checkpoint before it.
  auto tt = TimeTravel::Open(state, newest, nullptr, true);
  REQUIRE(tt.ok());
  CHECK((*tt)->replay().from_checkpoint == taken[taken.size() - 2]);
  CHECK((*tt)->replay().digest == FullDigest(state, newest));
}

TEST_CASE("a temp dir a crash left is never read and is removed", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildState(state, 130, 60);
  REQUIRE(!taken.empty());
  // A half-made checkpoint: db/ copied, no manifest (the kill came first).
  const std::string temp = CheckpointsDirPath(state) + "/tmp-999999-0";
  fs::create_directories(temp);
  fs::copy(CheckpointDir(state, taken.back()) + "/db", temp + "/db");
  CheckpointList list = ListCheckpoints(state);
  CHECK(list.usable.size() == taken.size());
  CHECK(list.damaged.empty());
  CHECK(list.warnings.empty());
  REQUIRE(RemoveCheckpointTemps(state).ok());
  CHECK_FALSE(fs::exists(temp));
  CHECK(ListCheckpoints(state).usable.size() == taken.size());
}

TEST_CASE("verify starts from the newest checkpoint unless full", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildState(state, 200, 60);
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
  auto taken = BuildState(state, 250, 60);
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
  CHECK(kept.front() == 100);  // the oldest
  CHECK(std::vector<uint64_t>(kept.end() - 3, kept.end()) ==
        std::vector<uint64_t>{4800, 4900, 5000});  // the newest `dense`
  // The older ones evenly: no gap more than twice the average.
  const uint64_t average = (4800 - 100) / 7;
  for (size_t i = 1; i + 3 < kept.size(); ++i) CHECK(kept[i] - kept[i - 1] <= 2 * average);
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
  for (size_t i = 1; i + 3 < rolling.size(); ++i) CHECK(rolling[i] - rolling[i - 1] <= 2 * 700);
}

}  // namespace checkpoint_test
