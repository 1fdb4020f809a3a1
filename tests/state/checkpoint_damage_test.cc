// Damaged, stale and hostile checkpoints: never trusted, skipped with a
// warning, and the answer stays the log's.
#include "state/checkpoint.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "base/json.h"
#include "state/commands.h"
#include "state/engine.h"
#include "state/replay.h"
#include "state/segment.h"
#include "checkpoint_util.h"
#include "engine_util.h"
#include "test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace checkpoint_damage_test {

using namespace limbic;
using namespace limbic::state;
using namespace limbic::testing;
namespace fs = std::filesystem;

TEST_CASE("a damaged checkpoint is skipped with a warning and reported by fsck", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildCheckpointedState(state, 300, 60);
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
  SECTION("db/ a symlink (to a whole copy of its own db/, elsewhere)") {
    fs::copy(CheckpointDir(state, newest) + "/db", dir / "elsewhere");
    fs::remove_all(CheckpointDir(state, newest) + "/db");
    fs::create_directory_symlink(dir / "elsewhere", CheckpointDir(state, newest) + "/db");
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

TEST_CASE("fsck --deep finds a checkpoint whose digest is not its manifest's", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildCheckpointedState(state, 150, 60);
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
  // Said as what reads it: a look reading part of it does not check this.
  bool said = false;
  for (const std::string& w : deep->warnings)
    said = said || w.find("may still start from it") != std::string::npos;
  CHECK(said);
}

TEST_CASE("a damaged block is found before a checkpoint is trusted, or when a replay reads it",
          "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildCheckpointedState(state, 300, 60);
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
  auto taken = BuildCheckpointedState(state, 200, 60);
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
  auto taken = BuildCheckpointedState(state, 200, 60);
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
  // In its place, files that are never read: one that never ends, one that
  // blocks its reader forever.
  bool replaced = false;
  SECTION("a symlink to /dev/zero") {
    fs::remove(path);
    fs::create_symlink("/dev/zero", path);
    replaced = true;
    why = "a character device, not a regular file";
  }
  SECTION("a FIFO with no writer") {
    fs::remove(path);
    REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
    replaced = true;
    why = "a FIFO, not a regular file";
  }
  SECTION("a FIFO in its db/, as CURRENT") {
    // The manifest is whole: the check is the copy's, at the look.
    const std::string current = CheckpointDir(state, newest) + "/db/CURRENT";
    fs::remove(current);
    REQUIRE(::mkfifo(current.c_str(), 0644) == 0);
    std::vector<std::string> warnings;
    CheckpointTarget target;
    target.seq = newest;
    auto r = RestoreNearestCheckpoint(state, target, dir / "copy", &warnings);
    REQUIRE(r.ok());
    REQUIRE(r->has_value());
    CHECK((*r)->seq == taken[taken.size() - 2]);
    REQUIRE(warnings.size() == 1);
    CHECK_THAT(warnings[0], Catch::Contains(current + ": not a regular file"));
    // fsck names it too, and goes on.
    auto f = Fsck(state);
    REQUIRE(f.ok());
    bool named = false;
    for (const std::string& w : f->warnings)
      if (w.find(current + ": not a regular file") != std::string::npos) named = true;
    CHECK(named);
    return;
  }
  if (!replaced) std::ofstream(path, std::ios::trunc) << text;
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

TEST_CASE("a checkpoint taken where another's copy lies by its name replaces it", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildCheckpointedState(state, 130, 60);
  REQUIRE(taken.size() >= 2);
  EngineOptions o;
  o.state_dir = state;
  auto opened = Engine::Open(o);
  REQUIRE(opened.ok());
  Engine& e = **opened;
  MustCommit(e, BuildArousalSet({{"level", 0.25}}));
  const uint64_t seq = e.applied_seq();
  // An older checkpoint copied under the name this one takes.
  fs::copy(CheckpointDir(state, taken.front()), CheckpointDir(state, seq),
           fs::copy_options::recursive);
  auto c = TakeCheckpoint(e.projection(), state, 5000);
  REQUIRE(c.ok());
  CHECK(c->manifest.seq == seq);
  CHECK(ManifestOf(state, seq)["seq"] == seq);
  CHECK(ManifestOf(state, seq)["digest"] == *e.projection().Digest());
  // The neighbouring case: taken again with nothing new, the one there
  // (of this seq and this log) stands, the very dir.
  auto inode = [&] {
    struct stat st;
    REQUIRE(::stat(CheckpointDir(state, seq).c_str(), &st) == 0);
    return st.st_ino;
  };
  const auto before = inode();
  auto again = TakeCheckpoint(e.projection(), state, 9000);
  REQUIRE(again.ok());
  CHECK(inode() == before);
  CHECK(ListCheckpoints(state).usable.back().manifest.seq == seq);
}

TEST_CASE("a temp dir a crash left is never read and is removed", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildCheckpointedState(state, 130, 60);
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

TEST_CASE("a checkpoint retention removes during a look is passed over without a warning",
          "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildCheckpointedState(state, 300, 60);
  REQUIRE(taken.size() >= 3);
  const uint64_t newest = taken.back(), before = taken[taken.size() - 2];
  CheckpointTarget target;
  target.seq = newest;
  target.check = CheckpointTarget::Check::kChecksums;
  std::vector<std::string> warnings;
  SECTION("removed between the listing and the copy") {
    // The look has listed it; retention (keep one less) takes it away
    // right before its files are linked.
    bool removed = false;
    target.matches_log = [&](const CheckpointManifest& m) -> Status {
      if (m.seq == newest && !removed) {
        removed = true;
        fs::rename(CheckpointDir(state, newest), CheckpointsDirPath(state) + "/tmp-removed-x");
      }
      return Status::OK();
    };
    auto r = RestoreNearestCheckpoint(state, target, dir / "copy", &warnings);
    REQUIRE(r.ok());
    REQUIRE(r->has_value());
    CHECK((*r)->seq == before);
    CHECK(warnings.empty());
  }
  SECTION("the neighbouring case: present, and damaged, it is warned about") {
    DamageABlock(CheckpointDir(state, newest), "percepts");
    auto r = RestoreNearestCheckpoint(state, target, dir / "copy", &warnings);
    REQUIRE(r.ok());
    REQUIRE(r->has_value());
    CHECK((*r)->seq == before);
    REQUIRE(warnings.size() == 1);
    CHECK_THAT(warnings[0], Catch::Contains(CheckpointDir(state, newest)));
  }
  SECTION("retention renames a checkpoint out of the list before removing it") {
    RetentionPolicy keep_two;
    keep_two.keep = 2;
    keep_two.dense = 1;
    std::vector<std::string> removed;
    REQUIRE(ApplyRetention(state, keep_two, &removed).ok());
    CHECK(removed.size() == taken.size() - 2);
    CheckpointList list = ListCheckpoints(state);
    CHECK(list.usable.size() == 2);
    CHECK(list.warnings.empty());
    for (const auto& entry : fs::directory_iterator(CheckpointsDirPath(state)))
      CHECK_FALSE(entry.path().filename().string().starts_with("tmp-"));
  }
}

TEST_CASE("a look warns only of the damaged checkpoints it could have used", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildCheckpointedState(state, 300, 60);
  REQUIRE(taken.size() >= 3);
  const uint64_t newest = taken.back(), before = taken[taken.size() - 2];
  std::ofstream(CheckpointDir(state, newest) + "/manifest.json") << "{\"format\": 1, \"se";
  CheckpointTarget target;
  std::vector<std::string> warnings;
  SECTION("a look before the damaged one: it would not have been used, so no word of it") {
    target.seq = newest - 1;
    auto r = RestoreNearestCheckpoint(state, target, dir / "copy", &warnings);
    REQUIRE(r.ok());
    REQUIRE(r->has_value());
    CHECK((*r)->seq == before);
    CHECK(warnings.empty());
  }
  SECTION("the neighbouring case: a look at its seq is warned that it was skipped") {
    target.seq = newest;
    auto r = RestoreNearestCheckpoint(state, target, dir / "copy", &warnings);
    REQUIRE(r.ok());
    REQUIRE(r->has_value());
    CHECK((*r)->seq == before);
    REQUIRE(warnings.size() == 1);
    CHECK_THAT(warnings[0], Catch::Contains(CheckpointDir(state, newest)));
  }
  // fsck still names it, whatever the seq.
  auto f = Fsck(state);
  REQUIRE(f.ok());
  CHECK(f->ok);
  CHECK_FALSE(f->warnings.empty());
}

TEST_CASE("verify from a checkpoint finds an event changed before it, in a sealed segment",
          "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildCheckpointedState(state, 300, 60);
  REQUIRE(!taken.empty());
  auto whole = Verify(state);
  REQUIRE(whole.ok());
  CHECK(whole->match);  // as built: nothing to find
  // The first segment (sealed: others follow it), changed in place, its
  // seal not: "answer" becomes "answeR", the line still decodes.
  const std::string first = SegmentFileName(EventsDirPath(state), 1);
  std::string bytes;
  {
    std::ifstream in(first, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t at = bytes.find("\"answer\"");
  REQUIRE(at != std::string::npos);
  bytes[at + 6] = 'R';
  std::ofstream(first, std::ios::binary | std::ios::trunc) << bytes;

  auto v = Verify(state);
  REQUIRE(v.ok());
  CHECK(v->from_checkpoint == taken.back());
  CHECK_FALSE(v->match);
  CHECK_THAT(v->first_difference, Catch::Contains(first));
  CHECK_THAT(v->first_difference, Catch::Contains("changed after it was sealed"));
  // From seq 1 the log as it now is differs from the state.
  auto full = Verify(state, nullptr, true);
  REQUIRE(full.ok());
  CHECK_FALSE(full->match);
}

TEST_CASE("fsck of a log unreadable part way says its later checkpoints were not checked",
          "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  auto taken = BuildCheckpointedState(state, 300, 60);
  REQUIRE(taken.size() >= 2);
  // A complete line of the first segment no longer decodes: reading stops
  // there, before every checkpoint.
  const std::string first = SegmentFileName(EventsDirPath(state), 1);
  std::string bytes;
  {
    std::ifstream in(first, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t line = bytes.find('\n') + 1;
  REQUIRE(bytes[line] == '{');
  bytes[line] = 'X';
  std::ofstream(first, std::ios::binary | std::ios::trunc) << bytes;
  auto f = Fsck(state);
  REQUIRE(f.ok());
  CHECK_FALSE(f->ok);
  CHECK(f->checkpoints == 0);
  size_t not_checked = 0;
  for (const std::string& w : f->warnings) {
    INFO(w);
    CHECK(w.find("beyond the log") == std::string::npos);
    if (w.find("not checked: the log could not be read past seq 1") != std::string::npos)
      ++not_checked;
  }
  CHECK(not_checked == taken.size());
}

}  // namespace checkpoint_damage_test

namespace checkpoint_damage_test {

TEST_CASE("fsck warns of a checkpoints/ that is not a directory", "[checkpoint]") {
  ScratchDir dir;
  const std::string state = dir / "live";
  BuildCheckpointedState(state, 100, 60);
  fs::remove_all(CheckpointsDirPath(state));
  std::ofstream(CheckpointsDirPath(state)) << "not a dir";
  auto f = Fsck(state);
  REQUIRE(f.ok());
  CHECK(f->ok);  // the log is whole: a warning
  bool named = false;
  for (const std::string& w : f->warnings)
    named = named || w.find(CheckpointsDirPath(state) + ": not a directory") != std::string::npos;
  CHECK(named);
}

}  // namespace checkpoint_damage_test
