// Replay: rebuild state from an events log, compare it, check it.
//
// Replay reads a log (a directory of segments or one exported .jsonl file),
// reduces every event with the same reducer the live engine uses, and writes
// a complete new state dir: its own copy of the events (up to the stopping
// point) and the RocksDB projections. Nothing is re-executed: reflexes and
// deliveries already left their effects in the log as events. Because the
// projections are a function of the events alone, the digest of a replayed
// state equals the digest of the live state at the same seq.
//
// Thread-safety: each function is self-contained; run one per state dir.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/env.h"
#include "state/checkpoint.h"
#include "state/event_log.h"
#include "base/input_json.h"
#include "state/projection.h"
#include "base/status.h"
#include "base/time.h"

namespace limbic::state {

// How far a replay (or ApplyLog) is, reported about once a chunk on the
// thread applying the events: `fraction` (0..1) is by seq toward until_seq
// when one is given and the log reaches it, else by bytes through the log
// (LogReader::Progress).
struct ApplyProgress {
  uint64_t events = 0;    // applied so far by this call (after its checkpoint, if any)
  uint64_t last_seq = 0;  // the last one's seq
  double fraction = 0;
};
using ProgressFn = std::function<void(const ApplyProgress&)>;

struct ReplayOptions {
  std::string from;                   // events dir or .jsonl file
  std::string into;                   // new state dir: must not exist or be empty
  std::optional<uint64_t> until_seq;  // stop after this seq
  std::optional<TimeMs> until_time;   // stop before the first event after this time;
                                      // InvalidArgument when that leaves no event
  Env* env = nullptr;                 // nullptr = Env::Default()
  size_t batch = 4096;                // events per chunk read and reduced
  // Changed records held in memory between writes: fewer, larger writes
  // rewrite less (a record changed again before its write is written
  // once) at the cost of memory (two writes' records are held).
  size_t flush_records = 200000;
  // Records already written kept in memory as stored, up to this many
  // bytes, so reading one back needs no RocksDB read (ResidentRecords).
  size_t resident_bytes = size_t{256} << 20;
  // The copy of the log in the new dir starts a segment once one holds
  // this many bytes (at a chunk's end), like a live log.
  uint64_t segment_bytes = kDefaultSegmentBytes;
  // A state dir whose checkpoints (state/checkpoint.h) may stand in for
  // the log's first events: with until_seq (and no until_time), the
  // newest usable checkpoint at or before it is copied in and only the
  // events after it are applied. Empty = replay from seq 1.
  std::string checkpoints_of;
  // false: the new dir gets no copy of the events (a scratch rebuild that
  // is only read: time travel, verify).
  bool copy_events = true;
  // false: ReplayResult::digest is left empty (it reads every record).
  bool digest = true;
  ProgressFn progress;  // nullptr = none
  // What is checked of that checkpoint before it is used (checkpoint.h).
  // Whatever it is, a damaged block found while replaying over it or
  // reading the digest sends the replay back to an older checkpoint (or
  // seq 1), with a warning.
  CheckpointTarget::Check checkpoint_check = CheckpointTarget::Check::kOpened;
  // The new dir holds `replaying` (ReplayingFilePath) from before its first
  // file until the replay is whole, so an engine never opens one a killed
  // replay left half built. true: it stays when Replay returns, for a
  // caller that adds files of its own (a fork's sandbox.json), then calls
  // FinishReplay.
  bool leave_unfinished = false;
};

struct ReplayResult {
  uint64_t events = 0;    // events applied
  uint64_t last_seq = 0;  // seq of the last one (0 = none)
  TimeMs last_ts = 0;     // its timestamp: "now" for recency at that point
  std::string digest;
  double seconds = 0;
  uint64_t from_checkpoint = 0;       // the checkpoint's seq it started from (0 = seq 1)
  std::vector<std::string> warnings;  // checkpoints skipped, and why
};

// Where ApplyLog starts and stops.
struct ApplyLimits {
  uint64_t first_seq = 1;             // the first event read must have this seq
  std::optional<uint64_t> until_seq;  // stop after this seq
  std::optional<TimeMs> until_time;   // stop before the first event after this time
  size_t batch = 4096;                // events per chunk (one WriteBatch each)
  ProgressFn progress;                // after each chunk applied; nullptr = none
};
struct ApplyStats {
  uint64_t events = 0;
  uint64_t last_seq = 0;
  TimeMs last_ts = 0;
};
// Sees each applied chunk: its events and their lines as read.
using ChunkSink = std::function<Status(const std::vector<Event>& events, std::string_view lines)>;

// Applies what `reader` yields to `projection`: a second thread reads and
// decodes while this one reduces and writes, a chunk at a time. Used
// by replay and by recovery. Errors name the file and byte offset of the
// offending event; what was applied before it stays applied.
Result<ApplyStats> ApplyLog(LogReader& reader, Projection& projection, const ApplyLimits& limits,
                            const ChunkSink& on_chunk = nullptr);

// Removes the `replaying` mark of a dir Replay built with leave_unfinished.
Status FinishReplay(const std::string& into, Env* env = nullptr);

// Errors name the file and byte offset of the offending event (malformed,
// out of sequence, or not applicable to the state, e.g. an unknown thread);
// on error the partly built `into` dir is removed.
Result<ReplayResult> Replay(const ReplayOptions& options);

// The outcome of comparing a live state with its log.
struct VerifyResult {
  bool match = false;
  uint64_t applied_seq = 0;
  std::string live_digest;
  std::string replay_digest;
  std::string first_difference;  // "threads/t-3: live {...} replayed {...}" when !match
  uint64_t from_checkpoint = 0;  // the seq the rebuild started from (0 = seq 1)
  std::vector<std::string> warnings;
};

// Rebuilds <state_dir>/events up to the live applied_seq in a temporary dir
// next to it and compares digests; on mismatch finds the first differing
// record. Works while another process holds the state dir (read-only).
// Unless `full`, the rebuild starts from the newest usable checkpoint at or
// before applied_seq (it then checks the events after it, and that
// checkpoint); `full` replays from seq 1.
Result<VerifyResult> Verify(const std::string& state_dir, Env* env = nullptr, bool full = false,
                            const ProgressFn& progress = nullptr);

// A new path in the temp dir (TMPDIR, else /tmp) for a scratch rebuild,
// "limbic-PURPOSE-PID-N" (never inside a state dir, as Replay requires),
// claimed by a lock file beside it ("<path>.lock", flock held while this
// object lives). It does not exist yet; the object's end removes it and
// then the lock file. Making one first removes every scratch dir whose
// lock no process holds: one a killed process left (SIGTERM, SIGKILL).
// A dir of a live process is never touched, whatever its pid namespace.
class ScratchStateDir {
 public:
  static Result<ScratchStateDir> Make(const std::string& purpose, Env* env = nullptr);
  ScratchStateDir(ScratchStateDir&&) = default;
  ScratchStateDir& operator=(ScratchStateDir&&) = default;
  ~ScratchStateDir();
  const std::string& path() const { return path_; }

 private:
  ScratchStateDir() = default;
  std::string path_;
  std::unique_ptr<FileLock> lock_;
};

// A state dir as of `seq`: rebuilt into a temporary dir (removed when the
// returned object dies), from the nearest usable checkpoint at or before
// `seq` (state/checkpoint.h) else from seq 1; the same pools either way.
// For `state show --at-seq`, GET /v1/state/at. Its cost is the distance
// from that checkpoint, except `digest` (replay().digest), which reads
// every record: the length of history.
class TimeTravel {
 public:
  static Result<std::unique_ptr<TimeTravel>> Open(const std::string& state_dir, uint64_t seq,
                                                  Env* env = nullptr, bool digest = false);
  ~TimeTravel();
  const Projection& projection() const { return *projection_; }
  const ReplayResult& replay() const { return replay_; }

 private:
  TimeTravel() = default;
  std::optional<ScratchStateDir> dir_;
  ReplayResult replay_;
  std::unique_ptr<Projection> projection_;
};

// `limbic fsck`: checks without changing anything. The log: every line
// decodes, seqs are contiguous, segments are named right; the projections:
// applied_seq is not ahead of the log and the indexes match the records.
// Events whose line nests deeper than `max_json_depth` (api.max_json_depth:
// what the API refuses today, an older limbic stored) are warnings, one
// each: they read, replay and are acted on as stored.
struct FsckReport {
  bool ok = true;
  uint64_t events = 0;
  uint64_t last_seq = 0;
  uint64_t applied_seq = 0;
  size_t segments = 0;
  size_t checkpoints = 0;  // usable ones
  std::vector<std::string> problems;  // each names file/offset or pool/record
  std::vector<std::string> warnings;  // e.g. a torn tail that open would truncate
};
// Checkpoints (state/checkpoint.h) are checked too: each one's manifest
// parses and its db/ opens with the manifest's seq (with
// `deep_checkpoints`, its digest matches too). A damaged or stale one is
// a warning, never a problem: readers skip it and the log is the truth.
Result<FsckReport> Fsck(const std::string& state_dir, Env* env = nullptr,
                        size_t max_json_depth = kDefaultMaxJsonDepth,
                        bool deep_checkpoints = false);

// When the log line `raw` of event `e` (at `where`) nests deeper than
// `limit`: "<file> offset N: seq S (action_enqueued a-1) nests 60002 deep,
// beyond api.max_json_depth 128". nullopt otherwise. A byte scan, any depth.
std::optional<std::string> DeepEventNote(const Event& e, const EventLocation& where,
                                         std::string_view raw, size_t limit);


// Removes a directory tree (used for temporary replay dirs).
Status RemoveTree(const std::string& path);

}  // namespace limbic::state
