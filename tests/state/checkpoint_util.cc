#include "checkpoint_util.h"

#include <rocksdb/options.h>
#include <rocksdb/sst_file_reader.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "state/checkpoint.h"
#include "state/commands.h"
#include "state/engine.h"
#include "state/replay.h"
#include "engine_util.h"

namespace limbic::testing {

using namespace limbic::state;
namespace fs = std::filesystem;
using json = nlohmann::json;

std::vector<uint64_t> BuildCheckpointedState(const std::string& dir, int n, int every) {
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

json ManifestOf(const std::string& state, uint64_t seq) {
  std::ifstream in(CheckpointDir(state, seq) + "/manifest.json");
  return json::parse(in);
}

}  // namespace limbic::testing
