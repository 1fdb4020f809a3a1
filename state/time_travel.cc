// Rebuilds that are only read: `replay --verify` (Verify), a look into the
// past (TimeTravel), and the scratch dirs they build in (ScratchStateDir).
// Both replay (replay.cc) from the nearest usable checkpoint.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <string>

#include "state/checkpoint.h"
#include "state/engine.h"
#include "state/event_log.h"
#include "state/replay.h"

namespace limbic::state {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kLockSuffix = ".lock";

// Removes the scratch dirs in `base` whose lock no process holds.
void RemoveAbandonedScratchDirs(const fs::path& base, Env* env) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(base, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("limbic-") || !name.ends_with(kLockSuffix)) continue;
    // Held: its owner lives. Taken: its owner died, and the name is ours
    // until the lock file is gone (a new claim needs the file to be new).
    auto lock = env->LockFile(entry.path().string(), LockWait::kNo);
    if (!lock.ok()) continue;
    const std::string dir = entry.path().string();
    (void)RemoveTree(dir.substr(0, dir.size() - kLockSuffix.size()));
    (void)env->RemoveFile(dir);
  }
}

}  // namespace

Result<ScratchStateDir> ScratchStateDir::Make(const std::string& purpose, Env* env) {
  if (!env) env = Env::Default();
  static std::atomic<int> counter{0};
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  RemoveAbandonedScratchDirs(base, env);
  ScratchStateDir made;
  for (int tries = 0;; ++tries) {
    made.path_ = (base / ("limbic-" + purpose + "-" + std::to_string(::getpid()) + "-" +
                          std::to_string(counter++)))
                     .string();
    const std::string lock = made.path_ + std::string(kLockSuffix);
    // A name whose lock file exists is another claim's (or being swept).
    if (env->FileExists(lock) || env->FileExists(made.path_)) continue;
    auto held = env->LockFile(lock, LockWait::kNo);
    if (held.ok()) {
      made.lock_ = std::move(held).value();
      return made;
    }
    if (tries >= 100) return held.status().WithContext("claiming a scratch dir in " + base.string());
  }
}

ScratchStateDir::~ScratchStateDir() {
  if (!lock_) return;  // moved from
  (void)RemoveTree(path_);
  (void)Env::Default()->RemoveFile(path_ + std::string(kLockSuffix));
}

namespace {

// Loads a pool into memory for the (rare) mismatch report.
Result<std::map<std::string, std::string>> LoadPool(const Projection& p, Pool pool) {
  std::map<std::string, std::string> out;
  Status s = p.ForEach(pool, [&](std::string_view id, const json& rec) {
    out.emplace(std::string(id), rec.dump());
    return true;
  });
  if (!s.ok()) return s;
  return out;
}

Result<std::string> FirstDifference(const Projection& live, const Projection& replayed) {
  if (live.applied_seq() != replayed.applied_seq())
    return "applied_seq: live " + std::to_string(live.applied_seq()) + " replayed " +
           std::to_string(replayed.applied_seq());
  for (Pool pool : kAllPools) {
    auto a = LoadPool(live, pool);
    if (!a.ok()) return a.status();
    auto b = LoadPool(replayed, pool);
    if (!b.ok()) return b.status();
    std::string name(PoolName(pool));
    auto ia = a->begin();
    auto ib = b->begin();
    while (ia != a->end() || ib != b->end()) {
      if (ib == b->end() || (ia != a->end() && ia->first < ib->first))
        return name + "/" + ia->first + ": live " + ia->second + ", missing from the replay";
      if (ia == a->end() || ib->first < ia->first)
        return name + "/" + ib->first + ": missing from live state, replayed " + ib->second;
      if (ia->second != ib->second)
        return name + "/" + ia->first + ": live " + ia->second + ", replayed " + ib->second;
      ++ia;
      ++ib;
    }
  }
  return std::string("digests differ but no record does (index or meta difference)");
}

}  // namespace

Result<VerifyResult> Verify(const std::string& state_dir, Env* env, bool full,
                            const ProgressFn& progress) {
  // Before the live digest is read (Replay would refuse it too, later).
  LIMBIC_RETURN_IF_ERROR(RefuseUnfinished(state_dir, env));
  ProjectionOptions popts;
  popts.path = DbDirPath(state_dir);
  popts.read_only = true;
  popts.create_if_missing = false;
  std::error_code ec;
  if (!fs::exists(popts.path, ec)) return Status::NotFound("no limbic state in " + state_dir);
  auto live = Projection::Open(popts);
  if (!live.ok()) return live.status();
  VerifyResult result;
  result.applied_seq = (*live)->applied_seq();
  auto live_digest = (*live)->Digest();
  if (!live_digest.ok()) return live_digest.status();
  result.live_digest = *live_digest;

  auto scratch = ScratchStateDir::Make("verify", env);
  if (!scratch.ok()) return scratch.status();
  ReplayOptions ropts;
  ropts.from = EventsDirPath(state_dir);
  ropts.into = scratch->path();
  ropts.until_seq = result.applied_seq;
  ropts.env = env;
  ropts.copy_events = false;
  ropts.progress = progress;
  // It checks the checkpoint it starts from too: every block, and its
  // digest against its manifest.
  ropts.checkpoint_check = CheckpointTarget::Check::kDigest;
  if (!full) ropts.checkpoints_of = state_dir;
  auto replayed = Replay(ropts);
  if (!replayed.ok()) return replayed.status();
  result.replay_digest = replayed->digest;
  result.from_checkpoint = replayed->from_checkpoint;
  result.warnings = replayed->warnings;
  result.match = result.live_digest == result.replay_digest;
  if (!result.match) {
    ProjectionOptions ro;
    ro.path = DbDirPath(ropts.into);
    ro.read_only = true;
    auto rebuilt = Projection::Open(ro);
    if (!rebuilt.ok()) return rebuilt.status();
    auto diff = FirstDifference(**live, **rebuilt);
    if (!diff.ok()) return diff.status();
    result.first_difference = *diff;
  }
  // From a checkpoint, the events before it were not replayed: the sealed
  // segments are checked against their seals instead, so that an event
  // changed there is not missed (the checkpoints were made before it).
  if (result.from_checkpoint > 0) {
    LogOptions lopts;
    lopts.env = env;
    lopts.dir = ropts.from;
    lopts.read_only = true;
    lopts.accept_changed_segments = true;  // reported below, not refused
    LogRecovery rec;
    auto log = EventLog::Open(std::move(lopts), &rec);
    if (!log.ok()) return log.status();
    if (!rec.changed_segments.empty()) {
      const ChangedSegment& c = rec.changed_segments.front();
      result.match = false;
      result.first_difference =
          c.file + " bytes 0-" + std::to_string(c.sealed_bytes) + ": changed after it was sealed (" +
          c.why + "); the state and its checkpoints were made from it as it was (`limbic fsck` "
          "names every such segment; `replay --verify --full` replays the log as it now is)";
    }
  }
  return result;
}

Result<std::unique_ptr<TimeTravel>> TimeTravel::Open(const std::string& state_dir, uint64_t seq,
                                                     Env* env, bool digest) {
  std::unique_ptr<TimeTravel> tt(new TimeTravel());
  auto scratch = ScratchStateDir::Make("at-seq", env);
  if (!scratch.ok()) return scratch.status();
  tt->dir_ = std::move(scratch).value();
  ReplayOptions ropts;
  ropts.from = EventsDirPath(state_dir);
  ropts.into = tt->dir_->path();
  ropts.until_seq = seq;
  ropts.env = env;
  ropts.checkpoints_of = state_dir;
  ropts.checkpoint_check = CheckpointTarget::Check::kChecksums;
  ropts.copy_events = false;
  ropts.digest = digest;
  auto replayed = Replay(ropts);
  if (!replayed.ok()) return replayed.status();
  tt->replay_ = *replayed;
  if (tt->replay_.last_seq < seq)
    return Status::NotFound("the log ends at seq " + std::to_string(tt->replay_.last_seq) +
                            ", before seq " + std::to_string(seq));
  // Only read: read-only, so the table files the bulk load left in level 0
  // are not compacted under the look.
  ProjectionOptions popts;
  popts.path = DbDirPath(tt->dir_->path());
  popts.read_only = true;
  popts.create_if_missing = false;
  auto projection = Projection::Open(popts);
  if (!projection.ok()) return projection.status();
  tt->projection_ = std::move(projection).value();
  return tt;
}

TimeTravel::~TimeTravel() {
  projection_.reset();  // before its dir goes
}

}  // namespace limbic::state
