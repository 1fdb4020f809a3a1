#include "state/replay.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "state/commands.h"
#include "state/engine.h"
#include "base/fault_env.h"
#include "engine_util.h"
#include "test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace replay_test {

using namespace limbic;
using namespace limbic::state;
using limbic::testing::BuildState;
using limbic::testing::MustCommit;
using limbic::testing::ScratchDir;

namespace {

void ExportTo(const std::string& events_dir, const std::string& file) {
  auto reader = LogReader::Open(events_dir, {});
  REQUIRE(reader.ok());
  std::ofstream out(file);
  Event ev;
  while (*(*reader)->Next(&ev)) out << (*reader)->raw_line() << "\n";
}

}  // namespace

TEST_CASE("replay of a log rebuilds a state with the live digest", "[replay]") {
  ScratchDir dir;
  std::string live = BuildState(dir / "live");
  ReplayOptions o;
  o.from = EventsDirPath(dir / "live");
  o.into = dir / "copy";
  o.batch = 7;  // many small groups must give the same result as few big ones
  o.flush_records = 5;  // records written part way and changed again later
  auto r = Replay(o);
  REQUIRE(r.ok());
  CHECK(r->digest == live);
  CHECK(r->events == r->last_seq);

  // The rebuilt dir is a complete state dir with its own log.
  EngineOptions eo;
  eo.state_dir = dir / "copy";
  auto e = Engine::Open(eo);
  REQUIRE(e.ok());
  CHECK(*(*e)->projection().Digest() == live);

  // An exported single file replays the same.
  ExportTo(EventsDirPath(dir / "live"), dir / "events.jsonl");
  o.from = dir / "events.jsonl";
  o.into = dir / "copy2";
  o.batch = ReplayOptions().batch;  // and one flush at the end
  o.flush_records = ReplayOptions().flush_records;
  auto r2 = Replay(o);
  REQUIRE(r2.ok());
  CHECK(r2->digest == live);
}

TEST_CASE("a replay reports how far it is: through the log's bytes, or toward until_seq", "[replay]") {
  ScratchDir dir;
  BuildState(dir / "live");
  ExportTo(EventsDirPath(dir / "live"), dir / "events.jsonl");
  int n = 0;
  for (const std::string& from : {EventsDirPath(dir / "live"), dir / "events.jsonl"}) {
    for (std::optional<uint64_t> until : {std::optional<uint64_t>(), std::optional<uint64_t>(20)}) {
      INFO(from << " until " << until.value_or(0));
      std::vector<ApplyProgress> seen;
      ReplayOptions o;
      o.from = from;
      o.into = dir / ("copy-" + std::to_string(n++));
      o.batch = 3;
      o.until_seq = until;
      o.progress = [&](const ApplyProgress& p) { seen.push_back(p); };
      auto r = Replay(o);
      REQUIRE(r.ok());
      REQUIRE(seen.size() >= 5);
      // Once a chunk, each further on; the last at the end.
      for (size_t i = 1; i < seen.size(); ++i) {
        CHECK(seen[i].events > seen[i - 1].events);
        CHECK(seen[i].last_seq == seen[i].events);
        CHECK(seen[i].fraction >= seen[i - 1].fraction);
      }
      CHECK(seen.back().events == r->events);
      CHECK(seen.back().fraction == 1.0);
      // Part way it says how far: by seq toward until_seq, else by bytes,
      // which for lines of about one size is near the share of events.
      const ApplyProgress& mid = seen[seen.size() / 2];
      const double share = static_cast<double>(mid.events) / static_cast<double>(r->events);
      if (until) CHECK(mid.fraction == Approx(share));
      else CHECK(mid.fraction == Approx(share).margin(0.2));
      CHECK(mid.fraction < 1.0);
    }
  }
}

TEST_CASE("a scratch dir is removed with its claim, and one a killed process left by the next",
          "[replay]") {
  ScratchDir dir;
  const std::string tmp = dir / "tmp";
  std::filesystem::create_directories(tmp);
  struct Tmpdir {  // the temp dir the claims are made in, for this test
    std::string old = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "";
    explicit Tmpdir(const std::string& to) { ::setenv("TMPDIR", to.c_str(), 1); }
    ~Tmpdir() { old.empty() ? ::unsetenv("TMPDIR") : ::setenv("TMPDIR", old.c_str(), 1); }
  } tmpdir(tmp);
  auto filled = [](const std::string& path) {
    std::filesystem::create_directories(path + "/db");
    std::ofstream(path + "/db/CURRENT") << "x";
  };
  // Left by a killed process: its lock file, held by nobody, and its dir.
  const std::string abandoned = tmp + "/limbic-at-seq-999999-0";
  filled(abandoned);
  std::ofstream(abandoned + ".lock") << "999999";
  // A live claim (another process's, in any pid namespace, looks the same).
  const std::string live = tmp + "/limbic-verify-999998-0";
  filled(live);
  auto held = Env::Default()->LockFile(live + ".lock", LockWait::kNo);
  REQUIRE(held.ok());
  // Not ours at all.
  filled(tmp + "/limbic-notes");
  {
    auto claim = ScratchStateDir::Make("at-seq");
    REQUIRE(claim.ok());
    CHECK(claim->path().starts_with(tmp + "/limbic-at-seq-"));
    CHECK_FALSE(std::filesystem::exists(claim->path()));
    CHECK(std::filesystem::exists(claim->path() + ".lock"));
    CHECK_FALSE(std::filesystem::exists(abandoned));
    CHECK_FALSE(std::filesystem::exists(abandoned + ".lock"));
    CHECK(std::filesystem::exists(live + "/db/CURRENT"));
    CHECK(std::filesystem::exists(tmp + "/limbic-notes/db/CURRENT"));
    filled(claim->path());
    // Moved, the claim still ends once.
    ScratchStateDir moved = std::move(claim).value();
    CHECK(std::filesystem::exists(moved.path()));
  }
  // Its end removed it and its lock file: only the live claim and ours remain.
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(tmp)) left.push_back(e.path().filename());
  std::sort(left.begin(), left.end());
  CHECK(left == std::vector<std::string>{"limbic-notes", "limbic-verify-999998-0",
                                         "limbic-verify-999998-0.lock"});
}

TEST_CASE("a dir a replay left unfinished is never opened as a state, until finished", "[replay]") {
  ScratchDir dir;
  std::string live = BuildState(dir / "live");
  ReplayOptions o;
  o.from = EventsDirPath(dir / "live");
  o.into = dir / "whole";
  REQUIRE(Replay(o).ok());
  CHECK_FALSE(std::filesystem::exists(ReplayingFilePath(o.into)));  // a replay ends it
  // As a replay killed part way leaves it (or a fork before its
  // sandbox.json): marked.
  o.into = dir / "cut";
  o.leave_unfinished = true;
  auto r = Replay(o);
  REQUIRE(r.ok());
  CHECK(std::filesystem::exists(ReplayingFilePath(o.into)));
  EngineOptions eo;
  eo.state_dir = o.into;
  auto refused = Engine::Open(eo);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("cut short"));
  CHECK_THAT(refused.status().message(), Catch::Contains(ReplayingFilePath(o.into)));
  auto f = Fsck(o.into);
  REQUIRE(f.ok());
  CHECK_FALSE(f->ok);
  // Reads refuse it too: its log is part of one.
  auto verified = Verify(o.into);
  REQUIRE_FALSE(verified.ok());
  CHECK_THAT(verified.status().message(), Catch::Contains("cut short"));
  auto looked = TimeTravel::Open(o.into, 3);
  REQUIRE_FALSE(looked.ok());
  CHECK_THAT(looked.status().message(), Catch::Contains("cut short"));
  REQUIRE(FinishReplay(o.into).ok());
  CHECK(Verify(o.into).ok());
  auto opened = Engine::Open(eo);
  REQUIRE(opened.ok());
  CHECK(*(*opened)->projection().Digest() == live);
  // "" is no dir: <dir>/events would be the file system root's.
  o.into = "";
  auto empty = Replay(o);
  REQUIRE_FALSE(empty.ok());
  CHECK_THAT(empty.status().message(), Catch::Contains("empty"));
}

TEST_CASE("replay's copy of the log is whole and synced, or the replay fails", "[replay]") {
  ScratchDir dir;
  std::string live = BuildState(dir / "live");
  FaultInjectionEnv env(Env::Default());
  ReplayOptions o;
  o.from = EventsDirPath(dir / "live");
  o.into = dir / "copy";
  o.env = &env;
  o.batch = 5;
  o.segment_bytes = 1024;  // a segment every chunk or two, each synced when the next starts
  auto r = Replay(o);
  REQUIRE(r.ok());
  CHECK(r->digest == live);
  // Every byte written is synced, in several segments holding every event.
  CHECK(env.unsynced_bytes() == 0);
  auto segments = env.GetChildren(EventsDirPath(dir / "copy"));
  REQUIRE(segments.ok());
  CHECK(segments->size() > 3);
  auto copied = LogReader::Open(EventsDirPath(dir / "copy"), {});
  REQUIRE(copied.ok());
  uint64_t events = 0;
  Event ev;
  while (*(*copied)->Next(&ev)) ++events;
  CHECK(events == r->last_seq);

  // A sync that fails (a full segment's or the last one's) fails the
  // replay, and the new dir is removed.
  for (uint64_t segment_bytes : {uint64_t{1024}, kDefaultSegmentBytes}) {
    env.SetSyncError(true);
    o.into = dir / ("failed-" + std::to_string(segment_bytes));
    o.segment_bytes = segment_bytes;
    auto failed = Replay(o);
    env.SetSyncError(false);
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.status().IsIOError());
    CHECK_FALSE(std::filesystem::exists(o.into));
  }
}

TEST_CASE("time travel shows the state right after a seq", "[replay]") {
  ScratchDir dir;
  uint64_t created = 0;
  BuildState(dir / "live", &created);
  auto tt = TimeTravel::Open(dir / "live", created);
  REQUIRE(tt.ok());
  auto t = (*tt)->projection().Get(Pool::kThreads, "t-1");
  REQUIRE(t.ok());
  CHECK((**t)["status"] == "active");
  CHECK(*(*tt)->projection().Count(Pool::kPercepts) == 0);
  CHECK_FALSE(TimeTravel::Open(dir / "live", 100000).ok());

  // Replaying up to a seq twice, from different sources, agrees.
  ReplayOptions o;
  o.from = EventsDirPath(dir / "live");
  o.into = dir / "upto";
  o.until_seq = 10;
  auto a = Replay(o);
  REQUIRE(a.ok());
  CHECK(a->last_seq == 10);
  CHECK(a->digest == *(*TimeTravel::Open(dir / "live", 10))->projection().Digest());
}

TEST_CASE("a replay until a time before the log's first event is refused, nothing left", "[replay]") {
  ScratchDir dir;
  BuildState(dir / "live");
  auto reader = LogReader::Open(EventsDirPath(dir / "live"), {});
  REQUIRE(reader.ok());
  Event first;
  REQUIRE(*(*reader)->Next(&first));
  ReplayOptions o;
  o.from = EventsDirPath(dir / "live");
  o.into = dir / "before";
  o.until_time = first.ts - 1;
  auto r = Replay(o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsInvalidArgument());
  CHECK_THAT(r.status().message(), Catch::Contains("no event at or before it"));
  CHECK_FALSE(std::filesystem::exists(dir / "before"));
  // The neighbouring case: at the first event's own time, that event (and
  // any of the same millisecond) is a state.
  o.until_time = first.ts;
  r = Replay(o);
  REQUIRE(r.ok());
  CHECK(r->events >= 1);
  CHECK(r->last_ts == first.ts);
}

TEST_CASE("replay refuses a non-empty target and a log that does not start at 1", "[replay]") {
  ScratchDir dir;
  BuildState(dir / "live");
  ReplayOptions o;
  o.from = EventsDirPath(dir / "live");
  o.into = dir / "live";
  auto r = Replay(o);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("is a state dir already"));
  std::filesystem::create_directories(dir / "full/x");
  o.into = dir / "full";
  r = Replay(o);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("not empty"));
  // Inside a state dir, and through a symlink: refused, nothing made.
  o.into = dir / "live/db/inner";
  r = Replay(o);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("inside the state dir"));
  CHECK_FALSE(std::filesystem::exists(dir / "live/db/inner"));
  std::filesystem::create_symlink(dir / "nowhere", dir / "dangling");
  o.into = dir / "dangling";
  r = Replay(o);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("is a symlink"));
  CHECK_FALSE(std::filesystem::exists(dir / "nowhere"));

  std::ofstream(dir / "late.jsonl")
      << R"({"v":1,"seq":5,"ts":"2026-01-01T00:00:00.000Z","type":"arousal_set","level":0.5})"
      << "\n";
  o.from = dir / "late.jsonl";
  o.into = dir / "late";
  r = Replay(o);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("seq 5") && Catch::Contains("offset 0"));
  CHECK_FALSE(std::filesystem::exists(dir / "late"));
}

namespace {

// A log where records change again and again: percepts moving between
// threads, processed, dropped, removed; threads updated and completed;
// actions through their life. Returns the live state's events dir.
std::string BuildBusyState(const std::string& dir) {
  EngineOptions o;
  o.state_dir = dir;
  o.segment_bytes = 4096;
  auto opened = Engine::Open(o);
  REQUIRE(opened.ok());
  Engine& e = **opened;
  auto commit = [&](Result<Events> ev) { MustCommit(e, std::move(ev)); };
  for (int t = 1; t <= 4; ++t)
    commit(BuildThreadCreate({{"goal", "goal " + std::to_string(t)}, {"id", "t-" + std::to_string(t)},
                              {"salience", 0.1 * t}},
                             e.next_seq()));
  std::vector<std::string> percepts;
  for (int i = 0; i < 60; ++i) {
    commit(BuildPerceptAdd({{"source", i % 3 ? "github" : "discord"}, {"type", "msg"},
                            {"text", "message " + std::to_string(i)},
                            {"data", {{"n", i}, {"tags", {"a", "b"}}, {"u", "\u00e9"}}}},
                           e.next_seq()));
    percepts.push_back("p-" + std::to_string(e.applied_seq()));
  }
  for (size_t i = 0; i < percepts.size(); ++i) {
    const std::string& p = percepts[i];
    commit(BuildPerceptAssign(p, {{"thread_id", "t-" + std::to_string(1 + i % 4)}}));
    if (i % 5 == 0) commit(BuildPerceptAssign(p, {{"thread_id", "t-" + std::to_string(1 + (i + 1) % 4)}}));
    if (i % 3 == 0) commit(BuildPerceptProcess(p));
    else if (i % 7 == 0) commit(BuildPerceptDrop(p, {{"reason", "noise"}}));
    else if (i % 11 == 0) commit(BuildPerceptRemove(p, json::object()));
    if (i % 4 == 0)
      commit(BuildThreadUpdate("t-" + std::to_string(1 + i % 4),
                               {{"salience", 0.01 * static_cast<double>(i)},
                                {"state", {{"phase", "step " + std::to_string(i)}}}}));
    if (i % 6 == 0) commit(BuildActionEnqueue({{"effector", "log"}, {"type", "ack"}}, e.next_seq()));
    if (i % 9 == 0) commit(BuildArousalSet({{"level", 0.01 * static_cast<double>(i)}}));
  }
  commit(BuildThreadUpdate("t-2", {{"status", "complete"}}));
  commit(BuildThreadDelete("t-3", json::object()));
  return EventsDirPath(dir);
}

// Every key and value of every column family, as stored.
std::map<std::string, std::string> AllBytes(const std::string& db_dir) {
  rocksdb::Options options;
  std::vector<std::string> names;
  REQUIRE(rocksdb::DB::ListColumnFamilies(options, db_dir, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  REQUIRE(rocksdb::DB::OpenForReadOnly(options, db_dir, cfs, &handles, &db).ok());
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < handles.size(); ++i) {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), handles[i]));
    for (it->SeekToFirst(); it->Valid(); it->Next())
      out[names[i] + "/" + it->key().ToString()] = it->value().ToString();
  }
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  delete db;
  return out;
}

// The general path: each chunk reduced and committed in one WriteBatch, as
// recovery does, into a fresh DB up to `until`.
std::map<std::string, std::string> GeneralApply(const std::string& events_dir,
                                                const std::string& db_dir, uint64_t until) {
  ProjectionOptions po;
  po.path = db_dir;
  {
    auto p = Projection::Open(po);
    REQUIRE(p.ok());
    auto reader = LogReader::Open(events_dir, {});
    REQUIRE(reader.ok());
    ApplyLimits limits;
    limits.until_seq = until;
    limits.batch = 5;
    auto applied = ApplyLog(**reader, **p, limits);
    INFO(applied.status().ToString());
    REQUIRE(applied.ok());
    REQUIRE((*p)->Flush().ok());
  }
  return AllBytes(db_dir);
}

}  // namespace

TEST_CASE("replay's bulk load stores the same bytes as applying event by event", "[replay]") {
  ScratchDir dir;
  const std::string events = BuildBusyState(dir / "live");
  auto fsck = Fsck(dir / "live");
  REQUIRE(fsck.ok());
  const uint64_t last = fsck->last_seq;
  REQUIRE(last > 150);
  int n = 0;
  // Time travel too: stopping part way (replay --until-seq) agrees.
  for (uint64_t until : {uint64_t{65}, last}) {
    const std::string tag = std::to_string(n++);
    auto general = GeneralApply(events, dir / ("general-" + tag), until);
    REQUIRE(general.count("default/applied_seq") == 1);
    CHECK(general["default/applied_seq"] == std::to_string(until));
    // Flushes every record, every few records (each written on its own
    // thread while later events are reduced over it), or once at the end;
    // with the records written read back from memory (all of them, or the
    // newest few that 4 KiB hold beside the table, the others let go and
    // asked of RocksDB) or from RocksDB.
    for (size_t flush : {size_t{1}, size_t{7}, size_t{1000000}}) {
      for (size_t batch : {size_t{1}, size_t{64}}) {
        for (size_t resident : {ReplayOptions().resident_bytes,
                                ResidentRecords::kMinTableBytes + (4 << 10), size_t{0}}) {
          ReplayOptions o;
          o.from = events;
          o.into = dir / ("bulk-" + tag + "-" + std::to_string(flush) + "-" + std::to_string(batch) +
                          "-" + std::to_string(resident));
          o.until_seq = until;
          o.flush_records = flush;
          o.batch = batch;
          o.resident_bytes = resident;
          auto r = Replay(o);
          INFO("until " << until << " flush " << flush << " batch " << batch << " resident "
                        << resident);
          REQUIRE(r.ok());
          CHECK(r->last_seq == until);
          CHECK(AllBytes(DbDirPath(o.into)) == general);
        }
      }
    }
  }
  // And the whole log's replay has the live digest.
  auto v = Verify(dir / "live");
  REQUIRE(v.ok());
  CHECK(v->match);
}

// Found by the events fuzz target (fuzz/regressions/events/
// association-triple-twice): a log may hold one association triple twice
// (two relates planned before either was applied, an older limbic). The
// index keyed by the triple held whichever was applied last, and a check
// of the indexes from the records (first by id) called it stale. Each now
// has its own entry, and the lookup answers the first id in byte order,
// whatever order they came in; a replay agrees.
TEST_CASE("one association triple twice: both indexed, one answer, replay agrees", "[replay]") {
  for (const std::vector<const char*>& order :
       {std::vector<const char*>{"as-12", "as-13"}, std::vector<const char*>{"as-13", "as-12"}}) {
    INFO(order[0] << " first");
    ScratchDir dir;
    EngineOptions eo;
    eo.state_dir = dir / "state";
    auto e = Engine::Open(eo);
    REQUIRE(e.ok());
    for (const char* id : order)
      MustCommit(**e, Events{Event{0, 0, EventType::kAssociationAdded,
                                   {{"association_id", id},
                                    {"entity_a", "ana"},
                                    {"relation", "works_on"},
                                    {"entity_b", "limbic"}}}});
    const Projection& p = (*e)->projection();
    Status indexes = p.CheckIndexes();
    INFO(indexes.ToString());
    CHECK(indexes.ok());
    auto found = p.FindAssociation("ana", "works_on", "limbic");
    REQUIRE(found.ok());
    CHECK(*found == std::optional<std::string>("as-12"));
    CHECK(*p.FindAssociation("ana", "works_on", "limbi") == std::nullopt);
    CHECK(p.AssociationsOf("ana")->size() == 2);
    auto live = p.Digest();
    REQUIRE(live.ok());
    ReplayOptions o;
    o.from = (*e)->events_dir();
    o.into = dir / "replayed";
    auto replayed = Replay(o);
    REQUIRE(replayed.ok());
    CHECK(replayed->digest == *live);
  }
}

}  // namespace replay_test
