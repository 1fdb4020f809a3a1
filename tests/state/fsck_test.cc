// Checking a state: fsck (the log, the pools, beside a running writer)
// and replay --verify (a rebuild compared with the live digest).
#include <rocksdb/db.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "state/commands.h"
#include "state/engine.h"
#include "state/replay.h"
#include "engine_util.h"
#include "test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace fsck_test {

using namespace limbic;
using namespace limbic::state;
using limbic::testing::BuildState;
using limbic::testing::MustCommit;
using limbic::testing::ScratchDir;

TEST_CASE("fsck beside a writer never calls db/ ahead of the log it read", "[replay]") {
  ScratchDir dir;
  BuildState(dir / "live");
  EngineOptions o;
  o.state_dir = dir / "live";
  o.durability = Durability::kNone;  // as many commits as can be, between fsck's reads
  auto opened = Engine::Open(o);
  REQUIRE(opened.ok());
  Engine& e = **opened;
  std::atomic<bool> stop{false};
  std::atomic<int> committed{0};
  std::thread writer([&] {
    // Paced (a log that grows without end would keep each fsck reading).
    for (int i = 0; !stop && i < 20000; ++i) {
      auto ev = BuildPerceptAdd({{"source", "s"}, {"type", "t"}, {"text", std::to_string(i)}},
                                e.next_seq());
      if (!ev.ok() || !e.Commit(*ev).ok()) break;
      ++committed;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  std::vector<std::string> problems;
  for (int round = 0; round < 20; ++round) {
    auto f = Fsck(dir / "live");
    if (!f.ok()) problems.push_back(f.status().ToString());
    else if (!f->ok) problems.insert(problems.end(), f->problems.begin(), f->problems.end());
    CHECK((!f.ok() || f->applied_seq <= f->last_seq));
  }
  stop = true;
  writer.join();
  INFO(committed.load() << " events committed meanwhile");
  CHECK(committed > 30);
  CHECK(problems == std::vector<std::string>{});
}

TEST_CASE("fsck of a db/ a start left without a database warns that the next start builds it",
          "[replay]") {
  ScratchDir dir;
  BuildState(dir / "live");
  std::filesystem::remove_all(DbDirPath(dir / "live"));
  std::filesystem::create_directories(DbDirPath(dir / "live"));
  std::filesystem::create_directories(dir / "live/db-restoring");
  auto f = Fsck(dir / "live");
  REQUIRE(f.ok());
  CHECK(f->ok);
  INFO(nlohmann::json(f->warnings).dump());
  bool named = false;
  for (const std::string& w : f->warnings)
    named = named || w.find("a restore from a checkpoint was cut short") != std::string::npos;
  CHECK(named);
  // The neighbouring case: a db/ with a database that will not open is a problem.
  std::ofstream(DbDirPath(dir / "live") + "/CURRENT") << "MANIFEST-999999\n";
  auto g = Fsck(dir / "live");
  REQUIRE(g.ok());
  CHECK_FALSE(g->ok);
}

TEST_CASE("verify matches a healthy state and names the first difference", "[replay]") {
  ScratchDir dir;
  BuildState(dir / "live");
  auto v = Verify(dir / "live");
  REQUIRE(v.ok());
  CHECK(v->match);
  CHECK(v->live_digest == v->replay_digest);
  auto f = Fsck(dir / "live");
  REQUIRE(f.ok());
  CHECK(f->ok);
  CHECK(f->events == f->last_seq);
  CHECK(f->applied_seq == f->last_seq);

  // Change one record behind the log's back: verify names it.
  {
    rocksdb::Options options;
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    std::vector<std::string> names;
    REQUIRE(rocksdb::DB::ListColumnFamilies(options, DbDirPath(dir / "live"), &names).ok());
    for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    REQUIRE(rocksdb::DB::Open(options, DbDirPath(dir / "live"), cfs, &handles, &db).ok());
    size_t percepts = std::find(names.begin(), names.end(), "percepts") - names.begin();
    std::string value;
    REQUIRE(db->Get(rocksdb::ReadOptions(), handles[percepts], "p-3", &value).ok());
    const std::string was = "\"text\":\"message 1\"";
    auto at = value.find(was);
    REQUIRE(at != std::string::npos);
    value.replace(at, was.size(), "\"text\":\"message X\"");
    REQUIRE(db->Put(rocksdb::WriteOptions(), handles[percepts], "p-3", value).ok());
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    delete db;
  }
  v = Verify(dir / "live");
  INFO(v.status().ToString());
  REQUIRE(v.ok());
  CHECK_FALSE(v->match);
  CHECK(v->live_digest != v->replay_digest);
  CHECK_THAT(v->first_difference, Catch::StartsWith("percepts/p-3") &&
                                      Catch::Contains("message X") && Catch::Contains("message 1"));
}

TEST_CASE("fsck warns of each event nested deeper than the limit and stays ok", "[replay]") {
  ScratchDir dir;
  {
    EngineOptions o;
    o.state_dir = dir / "live";
    auto opened = Engine::Open(o);
    REQUIRE(opened.ok());
    Engine& e = **opened;
    // The engine takes any depth (stored records must always read back);
    // only outside input is held to the limit.
    json deep = 1;
    for (int i = 0; i < 200; ++i) deep = json::array({std::move(deep)});
    MustCommit(e, BuildActionEnqueue({{"effector", "log"}, {"type", "t"}, {"id", "a-deep"},
                                      {"payload", deep}},
                                     e.next_seq()));
    MustCommit(e, BuildPerceptAdd({{"source", "s"}, {"type", "t"}, {"id", "p-flat"}}, e.next_seq()));
  }
  auto f = Fsck(dir / "live");
  REQUIRE(f.ok());
  CHECK(f->ok);
  REQUIRE(f->warnings.size() == 1);
  CHECK_THAT(f->warnings[0],
             Catch::EndsWith("00000000000000000001.jsonl offset 0: seq 1 (action_enqueued a-deep) "
                             "nests 201 deep, beyond api.max_json_depth 128: readable, replayed "
                             "and acted on as stored; the API would refuse it now"));
  // At a limit it fits, nothing to say.
  auto roomy = Fsck(dir / "live", nullptr, 201);
  REQUIRE(roomy.ok());
  CHECK(roomy->warnings.empty());
}

}  // namespace fsck_test
