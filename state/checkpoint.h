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
//                          "digest": "<hex sha-256, Projection::Digest at N>",
//                          "schema": "<the pools' layout, kSchema>",
//                          "limbic": "<the version that took it>",
//                          "taken_at": <ms since the epoch>}
//   temp               := "tmp-" PID "-" N "/" ... -- a checkpoint being
//                         written; renamed to SEQ when whole (manifest
//                         synced first), removed at the next start
//                         (RemoveCheckpointTemps), never read.
//
// The log stays the truth: checkpoints are derived, deleting the directory
// loses nothing but speed. A checkpoint is used only when its manifest
// parses, names this format and this schema, and its db/ opens with the
// applied_seq the manifest names; anything else is skipped with a warning
// (an older schema silently: it is stale, not damaged) and removed by
// retention. The digest is checked by `limbic fsck` (not by every reader:
// it reads every record).
//
// Thread-safety: free functions; TakeCheckpoint runs on any thread while
// the live projection commits. One writer of checkpoints per state dir
// (the runtime holding its lock); readers may run at the same time (a
// checkpoint appears by rename, and retention removes whole directories).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "state/projection.h"

namespace limbic::state {

//! The manifest's "format": the layout of a checkpoint directory.
inline constexpr int kCheckpointFormat = 1;

//! What manifest.json records.
struct CheckpointManifest {
  uint64_t seq = 0;      //!< the applied_seq inside db/
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
//! its applied_seq and digest read back from the copy, manifest written
//! and synced, the dir renamed to its seq and the parent synced. When a
//! checkpoint of that seq exists already it is kept and returned. Slow
//! (it reads every record for the digest): never on the io thread.
Result<CheckpointEntry> TakeCheckpoint(const Projection& live, const std::string& state_dir,
                                       TimeMs now);

//! Parses <dir>/manifest.json; Corruption names the file and what is wrong.
Result<CheckpointManifest> ReadCheckpointManifest(const std::string& dir);

//! The checkpoints of `state_dir`, oldest first.
struct CheckpointList {
  std::vector<CheckpointEntry> usable;  //!< this format and schema, manifest whole
  std::vector<std::string> stale;       //!< dirs of another format or schema
  std::vector<std::string> damaged;     //!< dirs whose manifest is missing or bad
  std::vector<std::string> warnings;    //!< one per damaged dir, naming why
};
CheckpointList ListCheckpoints(const std::string& state_dir);

//! Opens the checkpoint read-only and checks that its applied_seq is the
//! manifest's seq; with `deep`, that its digest is the manifest's too.
//! Corruption names the dir and the difference.
Status CheckCheckpoint(const CheckpointEntry& checkpoint, bool deep);

//! Makes `db_dir` (which must not exist) a writable copy of the
//! checkpoint's db/: table files hard-linked (copied across file systems),
//! the rest copied. RocksDB never changes a table file, so the copy's
//! writes never reach the checkpoint.
Status CopyCheckpointDb(const CheckpointEntry& checkpoint, const std::string& db_dir);

//! The newest checkpoint at or before `seq` that opens with the seq its
//! manifest names, as a copy in `db_dir` (see CopyCheckpointDb); damaged
//! ones are skipped with a line in *warnings. nullopt when there is none
//! (then db_dir does not exist).
Result<std::optional<CheckpointManifest>> RestoreNearestCheckpoint(
    const std::string& state_dir, uint64_t seq, const std::string& db_dir,
    std::vector<std::string>* warnings);

//! How many checkpoints are kept.
//! The newest `dense` are always kept (at `every`-event spacing, the
//! recent past is cheap to reach); of the older ones, while more than
//! `keep` exist in all, the one whose removal leaves the smallest gap
//! between its neighbours goes (ties: the older), so the old ones thin out
//! to an even spacing of about seq/keep events. The oldest is kept. Stale
//! and damaged checkpoints always go.
struct RetentionPolicy {
  size_t keep = 32;
  size_t dense = 4;
};

//! The seqs among `seqs` (ascending) that `policy` keeps.
std::vector<uint64_t> SeqsToKeep(const std::vector<uint64_t>& seqs, const RetentionPolicy& policy);

//! Removes the checkpoints `policy` does not keep, and the stale and
//! damaged ones; the dirs removed go to *removed (when given).
Status ApplyRetention(const std::string& state_dir, const RetentionPolicy& policy,
                      std::vector<std::string>* removed = nullptr);

//! Removes temp dirs a crash left in <state>/checkpoints (only the one
//! writer of checkpoints may call it: it holds the state dir's lock).
Status RemoveCheckpointTemps(const std::string& state_dir);

}  // namespace limbic::state
