#include "state/checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "base/env.h"
#include "base/input_json.h"
#include "base/json.h"
#include "base/sha256.h"
#include "state/engine.h"
#include "state/event_log.h"
#include "state/pool_layout.h"

#ifndef LIMBIC_VERSION
#define LIMBIC_VERSION "unknown"
#endif

namespace limbic::state {
namespace fs = std::filesystem;
namespace {

constexpr const char* kManifestName = "manifest.json";
constexpr uintmax_t kMaxManifestBytes = 64 << 10;  // one is a few hundred bytes
constexpr const char* kTempPrefix = "tmp-";

std::string SeqName(uint64_t seq) {
  char name[32];
  std::snprintf(name, sizeof name, "%020llu", static_cast<unsigned long long>(seq));
  return name;
}

// After a checkpoint failed to read: whether it is gone from its place,
// as retention removes one (ApplyRetention renames it away first), and so
// was not damaged.
bool RemovedMeanwhile(const std::string& dir) {
  std::error_code ec;
  return !fs::exists(dir, ec) && !ec;
}

// RocksDB's Checkpoint writes regular files only: anything else in a
// checkpoint's db/ (a FIFO would block the open forever, a symlink may
// lead anywhere) is damage, never opened.
Status OnlyRegularFiles(const std::string& db_dir) {
  std::error_code ec;
  // The dir itself too: a symlink would take the checkpoint's files from
  // wherever it points.
  if (!fs::is_directory(fs::symlink_status(db_dir, ec)))
    return Status::Corruption(db_dir + ": not a directory (a symlink, or missing)");
  for (const auto& entry : fs::directory_iterator(db_dir, ec)) {
    std::error_code st;
    if (!fs::is_regular_file(fs::symlink_status(entry.path(), st)))
      return Status::Corruption(entry.path().string() + ": not a regular file");
  }
  return Status::OK();
}

// A checkpoint dir's name: 20 digits.
std::optional<uint64_t> ParseSeqName(const std::string& name) {
  if (name.size() != 20 || !std::all_of(name.begin(), name.end(), ::isdigit)) return std::nullopt;
  return std::stoull(name);
}

json ManifestJson(const CheckpointManifest& m) {
  return json{{"format", m.format},   {"seq", m.seq},       {"ts", m.ts},
              {"event_sha256", m.event_sha256},             {"digest", m.digest},
              {"schema", m.schema}, {"limbic", m.limbic}, {"taken_at", m.taken_at}};
}

// To check (its seq, digest): no thread table.
Result<std::unique_ptr<Projection>> OpenReadOnly(const std::string& db_dir) {
  ProjectionOptions o;
  o.path = db_dir;
  o.read_only = true;
  o.create_if_missing = false;
  o.thread_table = false;
  return Projection::Open(o);
}

// A test's hook (tests/integration/checkpoint_test.cc): the checkpoint
// waits this long between its RocksDB copy and its manifest, so a test can
// SIGKILL the process with a temp dir half made.
void TestPause() {
  static const char* ms = std::getenv("LIMBIC_TEST_CHECKPOINT_PAUSE_MS");
  if (ms) std::this_thread::sleep_for(std::chrono::milliseconds(std::atoll(ms)));
}

// Every table file's checksums, and with `digest` the digest against the
// manifest's.
Status CheckWhole(const Projection& p, const CheckpointManifest& m, bool digest) {
  LIMBIC_RETURN_IF_ERROR(p.VerifyChecksums());
  if (!digest) return Status::OK();
  auto d = p.Digest();
  if (!d.ok()) return d.status();
  if (*d != m.digest) return Status::Corruption("digest " + *d + " is not its manifest's " + m.digest);
  return Status::OK();
}

}  // namespace

std::string CheckpointsDirPath(const std::string& state_dir) {
  return (fs::path(state_dir) / "checkpoints").string();
}

Result<CheckpointEntry> TakeCheckpoint(const Projection& live, const std::string& state_dir,
                                       TimeMs now) {
  static std::atomic<int> counter{0};
  Env* env = Env::Default();
  const std::string root = CheckpointsDirPath(state_dir);
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return Status::IOError("creating " + root + ": " + ec.message());
  const std::string temp = root + "/" + kTempPrefix + std::to_string(::getpid()) + "-" +
                           std::to_string(counter++);
  fs::create_directories(temp, ec);
  if (ec) return Status::IOError("creating " + temp + ": " + ec.message());
  auto fail = [&](Status s) -> Result<CheckpointEntry> {
    fs::remove_all(temp, ec);
    return s;
  };
  Status s = live.CreateCheckpoint(temp + "/db");
  if (!s.ok()) return fail(s);
  TestPause();
  CheckpointManifest m;
  {
    auto copy = OpenReadOnly(temp + "/db");
    if (!copy.ok()) return fail(copy.status());
    m.seq = (*copy)->applied_seq();
    if (m.seq == 0) return fail(Status::InvalidArgument("no checkpoint of " + state_dir + ": nothing applied yet"));
    auto digest = (*copy)->Digest();
    if (!digest.ok()) return fail(digest.status());
    m.digest = *digest;
  }
  // Applied, so logged: the event it is taken after.
  auto anchor = ReadLogAnchor(EventsDirPath(state_dir), m.seq, env);
  if (!anchor.ok()) return fail(anchor.status());
  m.ts = anchor->ts;
  m.event_sha256 = anchor->sha256;
  m.schema = std::string(kSchema);
  m.limbic = LIMBIC_VERSION;
  // `now` was read before the copy, which may hold an event stamped after it.
  m.taken_at = std::max(now, m.ts);
  s = env->WriteFileAtomic(temp + "/" + kManifestName, ManifestJson(m).dump() + "\n",
                           FileDurability::kSynced);
  if (s.ok()) s = env->SyncDir(temp);
  if (!s.ok()) return fail(s);
  CheckpointEntry entry{root + "/" + SeqName(m.seq), m};
  if (fs::exists(fs::symlink_status(entry.dir, ec))) {
    // Nothing committed since the last one: that one stands, if it is one
    // of this seq and this log. Anything else by its name (a copy of
    // another, damage) makes way for this one.
    auto existing = ReadCheckpointManifest(entry.dir);
    if (existing.ok() && existing->seq == m.seq && existing->event_sha256 == m.event_sha256 &&
        existing->format == m.format && existing->schema == m.schema) {
      fs::remove_all(temp, ec);
      entry.manifest = *existing;
      return entry;
    }
    Status removed = RemoveCheckpoint(entry.dir);
    if (!removed.ok()) return fail(removed);
  }
  fs::rename(temp, entry.dir, ec);
  if (ec) return fail(Status::IOError("renaming " + temp + " to " + entry.dir + ": " + ec.message()));
  LIMBIC_RETURN_IF_ERROR(env->SyncDir(root));
  return entry;
}

Result<CheckpointManifest> ReadCheckpointManifest(const std::string& dir) {
  const std::string path = dir + "/" + kManifestName;
  auto bad = [&](const std::string& why) { return Status::Corruption(path + ": " + why); };
  // A manifest is a flat object of a few hundred bytes in a regular file:
  // anything else in its place (a device, a FIFO, a huge file) is damage,
  // refused before it is read whole or parsed deep.
  auto text = ReadSmallFile(path, kMaxManifestBytes);  // its errors name the path
  if (!text.ok()) return Status::Corruption(text.status().message());
  auto parsed = ParseInputJson(*text, 2);
  if (!parsed.ok())
    return bad(IsJsonTooDeep(parsed.status()) ? "nested deeper than a manifest (a flat object)"
                                              : parsed.status().message());
  const json& j = *parsed;
  if (!j.is_object()) return bad("not a JSON object");
  // Whole numbers that fit: nlohmann keeps a larger one as a double, and
  // get<> of another type throws.
  auto whole = [&j](const char* key, uint64_t max) -> std::optional<uint64_t> {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
    const uint64_t v = it->get<uint64_t>();
    return v <= max ? std::optional<uint64_t>(v) : std::nullopt;
  };
  // Milliseconds since 1970, which an event before then has negative.
  auto millis = [&j](const char* key) -> std::optional<TimeMs> {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return std::nullopt;
    if (it->is_number_unsigned() && it->get<uint64_t>() > uint64_t{INT64_MAX}) return std::nullopt;
    return it->get<TimeMs>();
  };
  CheckpointManifest m;
  const auto format = whole("format", 1 << 30);
  if (!format) return bad("no format (a whole number)");
  m.format = static_cast<int>(*format);
  if (m.format != kCheckpointFormat) {
    m.seq = whole("seq", UINT64_MAX).value_or(0);
    return m;  // another format: the caller sees it is stale
  }
  const auto seq = whole("seq", UINT64_MAX);
  if (!seq) return bad("no seq (a whole number)");
  const auto ts = millis("ts");
  if (!ts) return bad("no ts (whole milliseconds)");
  for (const char* key : {"event_sha256", "digest", "schema", "limbic"})
    if (!j.contains(key) || !j[key].is_string()) return bad(std::string("no ") + key);
  m.seq = *seq;
  m.ts = *ts;
  m.event_sha256 = j["event_sha256"].get<std::string>();
  m.digest = j["digest"].get<std::string>();
  m.schema = j["schema"].get<std::string>();
  m.limbic = j["limbic"].get<std::string>();
  if (j.contains("taken_at")) {
    const auto taken_at = millis("taken_at");
    if (!taken_at) return bad("taken_at is not whole milliseconds");
    m.taken_at = *taken_at;
  }
  return m;
}

CheckpointList ListCheckpoints(const std::string& state_dir) {
  CheckpointList list;
  std::error_code ec;
  std::vector<std::pair<uint64_t, std::string>> dirs;
  for (const auto& entry : fs::directory_iterator(CheckpointsDirPath(state_dir), ec)) {
    const std::string name = entry.path().filename().string();
    if (auto seq = ParseSeqName(name)) dirs.emplace_back(*seq, entry.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const auto& [seq, dir] : dirs) {
    auto m = ReadCheckpointManifest(dir);
    if (!m.ok() && RemovedMeanwhile(dir)) continue;
    if (!m.ok()) {
      list.damaged.push_back(dir);
      list.warnings.push_back("checkpoint " + dir + " skipped: " + m.status().message());
    } else if (m->format != kCheckpointFormat || m->schema != kSchema) {
      list.stale.push_back(dir);
    } else if (m->seq != seq) {
      list.damaged.push_back(dir);
      list.warnings.push_back("checkpoint " + dir + " skipped: its manifest names seq " +
                              std::to_string(m->seq));
    } else {
      list.usable.push_back({dir, *m});
    }
  }
  return list;
}

Result<LogAt> OpenLogAt(const std::string& log, uint64_t seq, LogReader::Options options) {
  options.from_seq = seq;
  auto reader = LogReader::Open(log, options);
  if (!reader.ok()) return reader.status();
  Event e;
  auto more = (*reader)->Next(&e);
  if (!more.ok()) return more.status();
  if (!*more || e.seq != seq)
    return Status::NotFound(log + ": no event of seq " + std::to_string(seq));
  LogAnchor anchor{e.ts, Sha256::Hex((*reader)->raw_line())};
  return LogAt{std::move(reader).value(), std::move(anchor)};
}

Result<LogAnchor> ReadLogAnchor(const std::string& log, uint64_t seq, Env* env) {
  LogReader::Options ropts;
  ropts.env = env;
  // A live log may end in a line being written: not an event yet.
  ropts.tolerate_partial_tail = true;
  auto at = OpenLogAt(log, seq, ropts);
  if (!at.ok()) return at.status();
  return std::move(at->anchor);
}

Status MatchAnchor(const CheckpointManifest& m, const LogAnchor& anchor) {
  if (anchor.sha256 != m.event_sha256)
    return Status::Corruption("the log's event of seq " + std::to_string(m.seq) + " (sha-256 " +
                              anchor.sha256 + ") is not the one it was taken after (" +
                              m.event_sha256 + ")");
  if (anchor.ts != m.ts)
    return Status::Corruption("the log's event of seq " + std::to_string(m.seq) + " has ts " +
                              std::to_string(anchor.ts) + " (ms), its manifest's " +
                              std::to_string(m.ts));
  return Status::OK();
}

Status MatchLog(const CheckpointManifest& m, const std::string& log, Env* env) {
  auto anchor = ReadLogAnchor(log, m.seq, env);
  return anchor.ok() ? MatchAnchor(m, *anchor) : anchor.status();
}

Status CheckCheckpoint(const CheckpointEntry& c, const std::string& log, bool deep,
                       bool* only_deep) {
  if (only_deep) *only_deep = false;
  Status regular = OnlyRegularFiles(c.dir + "/db");
  if (!regular.ok()) return Status::Corruption("checkpoint " + c.dir + ": " + regular.message());
  auto p = OpenReadOnly(c.dir + "/db");
  if (!p.ok()) return Status::Corruption("checkpoint " + c.dir + ": " + p.status().message());
  if ((*p)->applied_seq() != c.manifest.seq)
    return Status::Corruption("checkpoint " + c.dir + ": db/ holds seq " +
                              std::to_string((*p)->applied_seq()) + ", its manifest seq " +
                              std::to_string(c.manifest.seq));
  Status matched = MatchLog(c.manifest, log);
  if (!matched.ok()) return Status::Corruption("checkpoint " + c.dir + ": " + matched.message());
  if (!deep) return Status::OK();
  Status whole = CheckWhole(**p, c.manifest, true);
  if (whole.ok()) return Status::OK();
  if (only_deep) *only_deep = true;
  return Status::Corruption("checkpoint " + c.dir + ": " + whole.message());
  return Status::OK();
}

Status CopyCheckpointDb(const CheckpointEntry& c, const std::string& db_dir) {
  std::error_code ec;
  if (fs::exists(db_dir, ec)) return Status::InvalidArgument(db_dir + " exists");
  fs::create_directories(db_dir, ec);
  if (ec) return Status::IOError("creating " + db_dir + ": " + ec.message());
  LIMBIC_RETURN_IF_ERROR(OnlyRegularFiles(c.dir + "/db"));
  for (const auto& entry : fs::directory_iterator(c.dir + "/db", ec)) {
    const fs::path to = fs::path(db_dir) / entry.path().filename();
    ec.clear();
    // Table files are never changed once written: a link is a copy.
    if (entry.path().extension() == ".sst") fs::create_hard_link(entry.path(), to, ec);
    if (entry.path().extension() != ".sst" || ec) {
      ec.clear();
      fs::copy_file(entry.path(), to, ec);
    }
    if (ec) return Status::IOError("copying " + entry.path().string() + ": " + ec.message());
  }
  if (ec) return Status::IOError("reading " + c.dir + "/db: " + ec.message());
  return Status::OK();
}

Result<std::optional<CheckpointManifest>> RestoreNearestCheckpoint(
    const std::string& state_dir, const CheckpointTarget& target, const std::string& db_dir,
    std::vector<std::string>* warnings) {
  CheckpointList list = ListCheckpoints(state_dir);
  // Warned about: the damaged ones this look could have used. One named
  // past target.seq would have been passed over, damaged or not.
  for (size_t i = 0; warnings && i < list.damaged.size(); ++i) {
    const auto seq = ParseSeqName(fs::path(list.damaged[i]).filename().string());
    if (seq && *seq <= target.seq) warnings->push_back(list.warnings[i]);
  }
  for (auto it = list.usable.rbegin(); it != list.usable.rend(); ++it) {
    if (it->manifest.seq > target.seq) continue;
    if (target.time && it->manifest.ts > *target.time) continue;
    std::error_code ec;
    fs::remove_all(db_dir, ec);
    Status s = target.matches_log ? target.matches_log(it->manifest) : Status::OK();
    if (s.ok()) s = CopyCheckpointDb(*it, db_dir);
    if (s.ok()) {
      // Opened (read-only: every table file's footer and index read, no
      // file written), so a damaged table file or a wrong seq is found
      // here, not halfway through a replay.
      auto p = OpenReadOnly(db_dir);
      if (!p.ok()) s = p.status();
      else if ((*p)->applied_seq() != it->manifest.seq || !(*p)->outdated().empty())
        s = Status::Corruption("db/ holds seq " + std::to_string((*p)->applied_seq()));
      else if (target.check != CheckpointTarget::Check::kOpened)
        s = CheckWhole(**p, it->manifest, target.check == CheckpointTarget::Check::kDigest);
    }
    if (s.ok()) return std::optional<CheckpointManifest>(it->manifest);
    fs::remove_all(db_dir, ec);
    if (RemovedMeanwhile(it->dir)) continue;  // not damaged: the next older one, without a word
    // Named as the checkpoint's files, not the copy's (removed by now).
    std::string why = s.message();
    for (size_t at = why.find(db_dir + "/"); at != std::string::npos; at = why.find(db_dir + "/", at))
      why.replace(at, db_dir.size(), it->dir + "/db");
    if (warnings) warnings->push_back("checkpoint " + it->dir + " skipped: " + why);
  }
  return std::optional<CheckpointManifest>();
}

std::vector<uint64_t> SeqsToKeep(const std::vector<uint64_t>& seqs, const RetentionPolicy& policy) {
  std::vector<uint64_t> kept = seqs;
  const size_t keep = std::max<size_t>(policy.keep, 1);
  const size_t dense = std::max<size_t>(policy.dense, 1);  // the newest always stays
  while (kept.size() > keep) {
    // Candidates: all but the newest `dense`. A look before the oldest
    // replays from seq 1, so seq 0 stands as one more checkpoint that is
    // never removed: the oldest goes too when it lies closest to it.
    const size_t last = kept.size() > dense ? kept.size() - dense : 0;
    size_t best = 0;
    uint64_t best_gap = UINT64_MAX;
    for (size_t i = 0; i < last; ++i) {
      const uint64_t before = i > 0 ? kept[i - 1] : 0;
      const uint64_t gap = kept[i + 1] - before;  // i + 1 exists: i < last <= size - 1
      if (gap < best_gap) {
        best_gap = gap;
        best = i;
      }
    }
    kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(best));
  }
  return kept;
}

Status ApplyRetention(const std::string& state_dir, const RetentionPolicy& policy,
                      std::vector<std::string>* removed) {
  CheckpointList list = ListCheckpoints(state_dir);
  std::vector<std::string> doomed = list.stale;
  doomed.insert(doomed.end(), list.damaged.begin(), list.damaged.end());
  std::vector<uint64_t> seqs;
  for (const CheckpointEntry& c : list.usable) seqs.push_back(c.manifest.seq);
  std::vector<uint64_t> kept = SeqsToKeep(seqs, policy);
  for (const CheckpointEntry& c : list.usable)
    if (!std::binary_search(kept.begin(), kept.end(), c.manifest.seq)) doomed.push_back(c.dir);
  for (const std::string& dir : doomed) {
    LIMBIC_RETURN_IF_ERROR(RemoveCheckpoint(dir));
    if (removed) removed->push_back(dir);
  }
  return Status::OK();
}

Status RemoveCheckpoint(const std::string& dir) {
  // Renamed out of the list first, at once: a look that meets it half
  // removed then sees it gone, not damaged (RemovedMeanwhile). A crash
  // leaves a temp dir, removed at the next start.
  const std::string doomed = fs::path(dir).parent_path().string() + "/" + kTempPrefix +
                             "removed-" + fs::path(dir).filename().string();
  std::error_code ec;
  fs::remove_all(doomed, ec);
  fs::rename(dir, doomed, ec);
  if (ec) return Status::IOError("removing " + dir + ": " + ec.message());
  fs::remove_all(doomed, ec);
  if (ec) return Status::IOError("removing " + doomed + ": " + ec.message());
  return Status::OK();
}

Status RemoveCheckpointTemps(const std::string& state_dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(CheckpointsDirPath(state_dir), ec)) {
    if (!entry.path().filename().string().starts_with(kTempPrefix)) continue;
    std::error_code rm;
    fs::remove_all(entry.path(), rm);
    if (rm) return Status::IOError("removing " + entry.path().string() + ": " + rm.message());
  }
  return Status::OK();
}

}  // namespace limbic::state
