// Checkpoints of the pools: copies of the projections at a seq, so that a
// look into the past (time travel, a fork, a verify) replays the log from
// the nearest checkpoint at or before its seq instead of from seq 1.
//
// On disk, beside the log and db/:
//
//   checkpoints/       := { checkpoint | temp }
//   checkpoint         := SEQ "/" ( "db/" "manifest.json" )
//                         SEQ: the seq it holds, 20 decimal digits (sorts by name)
//   db/                := a RocksDB checkpoint of <state>/db (rocksdb::Checkpoint:
//                         table files hard-linked with db/'s when taken, so
//                         they share disk until compaction rewrites db/'s)
//   manifest.json      := one JSON object and "\n":
//                         {"format": kCheckpointFormat, "seq": N,
//                          "ts": <event N's ts, ms since the epoch>,
//                          "event_sha256": "<hex sha-256 of event N's line
//                                           as logged, without its newline>",
//                          "digest": "<hex sha-256, Projection::Digest at N>",
//                          "schema": "<the pools' layout, kSchema>",
//                          "limbic": "<the version that took it>",
//                          "taken_at": <ms since the epoch>}
//   temp               := "tmp-" PID "-" N "/" ... -- a checkpoint being
//                         written; renamed to SEQ when whole (manifest
//                         synced first), removed at the next start
//                         (RemoveCheckpointTemps), never read.
//                       | "tmp-removed-" SEQ "/" ... -- one retention is
//                         removing: renamed out of the list at once, so a
//                         reader that meets it half removed sees it gone.
//
// The log stays the truth: checkpoints are derived, deleting the directory
// loses nothing but speed. A checkpoint is used only when its manifest
// parses, names this format and this schema, its db/ opens with the
// applied_seq the manifest names, and the log it stands in for holds, at
// that seq, the very event it was taken after (ts and event_sha256: a
// checkpoint of another log, or of this log before a segment changed, is
// never applied to it). Anything else is skipped with a warning (an older
// format or schema silently: it is stale, not damaged) and removed by
// retention. The digest is checked by `limbic fsck --deep` (not by every
// reader: it reads every record).
//
// Thread-safety: free functions; TakeCheckpoint runs on any thread while
// the live projection commits. One writer of checkpoints per state dir
// (the runtime holding its lock); readers may run at the same time (a
// checkpoint appears by rename, and retention removes whole directories).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "base/time.h"
#include "state/event_log.h"
#include "state/projection.h"

namespace limbic::state {

//! The manifest's "format": the layout of a checkpoint directory. 2 added
//! ts and event_sha256; a checkpoint of format 1 is stale.
inline constexpr int kCheckpointFormat = 2;

//! What manifest.json records.
struct CheckpointManifest {
  uint64_t seq = 0;      //!< the applied_seq inside db/
  TimeMs ts = 0;         //!< event seq's ts
  std::string event_sha256;  //!< of event seq's line as logged
  std::string digest;    //!< Projection::Digest at seq
  std::string schema;    //!< the pools' layout (kSchema) it was written with
  std::string limbic;    //!< the limbic version that took it
  TimeMs taken_at = 0;
  int format = kCheckpointFormat;
};

//! A checkpoint found on disk.
struct CheckpointEntry {
  std::string dir;  //!< <state>/checkpoints/<seq>
  CheckpointManifest manifest;
};

//! "<state_dir>/checkpoints"
std::string CheckpointsDirPath(const std::string& state_dir);

//! Takes a checkpoint of `live` (the projections of `state_dir`) at
//! whatever group it has committed: RocksDB checkpoint into a temp dir,
//! its applied_seq and digest read back from the copy, event seq read
//! from the log, manifest written and synced, the dir renamed to its seq
//! and the parent synced. When a checkpoint of that seq exists already it
//! is kept and returned. Nothing applied yet (seq 0) is InvalidArgument.
//! Slow (it reads every record for the digest): never on the io thread.
Result<CheckpointEntry> TakeCheckpoint(const Projection& live, const std::string& state_dir,
                                       TimeMs now);

//! What ties a checkpoint to its log: the event at its seq, as logged.
struct LogAnchor {
  TimeMs ts = 0;
  std::string sha256;  //!< of the line, without its newline
};
//! A reader of the log at `log` (an events dir or a .jsonl file), opened
//! with `options` at `seq`, that has read event `seq`: it goes on after
//! it. NotFound when the log has no such event.
struct LogAt {
  std::unique_ptr<LogReader> reader;
  LogAnchor anchor;  //!< of event seq
};
Result<LogAt> OpenLogAt(const std::string& log, uint64_t seq, LogReader::Options options);
//! Event `seq`'s anchor in the log at `log` (a live log's torn last line
//! is not an event yet). NotFound when the log has no such event.
Result<LogAnchor> ReadLogAnchor(const std::string& log, uint64_t seq, Env* env = nullptr);
//! OK when `anchor` (event seq as a log holds it) is the event `manifest`
//! was taken after; else Corruption naming the difference.
Status MatchAnchor(const CheckpointManifest& manifest, const LogAnchor& anchor);
//! ReadLogAnchor then MatchAnchor: OK when the log at `log` holds the
//! event `manifest` was taken after.
Status MatchLog(const CheckpointManifest& manifest, const std::string& log, Env* env = nullptr);

//! Parses <dir>/manifest.json; Corruption names the file and what is wrong.
Result<CheckpointManifest> ReadCheckpointManifest(const std::string& dir);

//! The checkpoints of `state_dir`, oldest first.
struct CheckpointList {
  std::vector<CheckpointEntry> usable;  //!< this format and schema, manifest whole
  std::vector<std::string> stale;       //!< dirs of another format or schema
  std::vector<std::string> damaged;     //!< dirs whose manifest is missing or bad
  std::vector<std::string> warnings;    //!< why damaged[i] is damaged, for each i
};
CheckpointList ListCheckpoints(const std::string& state_dir);

//! Opens the checkpoint read-only and checks that its applied_seq is the
//! manifest's seq and that the log `log` holds its event; with `deep`,
//! every table file's checksums and that its digest is the manifest's
//! too. Corruption names the dir and the difference; *only_deep (when
//! given) says it was found by the deep check alone (what a look that
//! reads part of the checkpoint does not check).
Status CheckCheckpoint(const CheckpointEntry& checkpoint, const std::string& log, bool deep,
                       bool* only_deep = nullptr);

//! Makes `db_dir` (which must not exist) a writable copy of the
//! checkpoint's db/: table files hard-linked (copied across file systems),
//! the rest copied. RocksDB never changes a table file, so the copy's
//! writes never reach the checkpoint.
Status CopyCheckpointDb(const CheckpointEntry& checkpoint, const std::string& db_dir);

//! Which checkpoints may stand in for the start of a replay: at or before
//! `seq`, at or before `time` (event seq's ts: the log's ts never go
//! backwards, so every event up to it is at or before `time` too), and
//! accepted by `matches_log` (given the manifest: OK when the log to be
//! replayed holds its event; see ReadLogAnchor, MatchAnchor).
struct CheckpointTarget {
  uint64_t seq = UINT64_MAX;
  std::optional<TimeMs> time;
  std::function<Status(const CheckpointManifest&)> matches_log;
  //! What is checked of a checkpoint before it is used, beyond its
  //! manifest, its event in the log and that its db/ opens with its seq:
  //!   kOpened     no more. For a look that reads only part of it (time
  //!               travel): RocksDB checks each block it reads, and Replay
  //!               goes back to an older checkpoint when one is damaged.
  //!   kChecksums  every block of every table file (Projection::
  //!               VerifyChecksums): for a copy trusted whole, a fork's or
  //!               a restore's at start.
  //!   kDigest     that too, and its digest against the manifest's
  //!               (`replay --verify`: it checks the checkpoint it starts from).
  enum class Check { kOpened, kChecksums, kDigest };
  Check check = Check::kOpened;
};

//! The newest checkpoint `target` allows that opens with the seq its
//! manifest names, as a copy in `db_dir` (see CopyCheckpointDb); damaged
//! ones, and ones the log refuses, are skipped with a line in *warnings
//! (a damaged one past target.seq, which would not have been used, gets
//! none); one that retention removed meanwhile is skipped without one.
//! nullopt when there is none (then db_dir does not exist).
Result<std::optional<CheckpointManifest>> RestoreNearestCheckpoint(
    const std::string& state_dir, const CheckpointTarget& target, const std::string& db_dir,
    std::vector<std::string>* warnings);

//! How many checkpoints are kept.
//! The newest `dense` are always kept (at `every`-event spacing, the
//! recent past is cheap to reach); of the older ones, while more than
//! `keep` exist in all, the one whose removal leaves the smallest gap
//! between its neighbours goes (ties: the older), so the old ones thin out
//! to an even spacing of about seq/keep events. Seq 0 counts as a
//! neighbour that never goes (a look before the oldest replays from seq
//! 1), so the oldest may go too. Stale and damaged checkpoints always go.
struct RetentionPolicy {
  size_t keep = 128;
  size_t dense = 4;
};

//! The seqs among `seqs` (ascending) that `policy` keeps.
std::vector<uint64_t> SeqsToKeep(const std::vector<uint64_t>& seqs, const RetentionPolicy& policy);

//! Removes the checkpoints `policy` does not keep, and the stale and
//! damaged ones (each renamed to a temp dir first); the dirs removed go to
//! *removed (when given).
Status ApplyRetention(const std::string& state_dir, const RetentionPolicy& policy,
                      std::vector<std::string>* removed = nullptr);

//! Removes one checkpoint dir (renamed to a temp dir first, as retention
//! does).
Status RemoveCheckpoint(const std::string& dir);

//! Removes temp dirs a crash left in <state>/checkpoints (only the one
//! writer of checkpoints may call it: it holds the state dir's lock).
Status RemoveCheckpointTemps(const std::string& state_dir);

}  // namespace limbic::state
