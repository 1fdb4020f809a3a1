// Helpers for the checkpoint tests (checkpoint_test.cc,
// checkpoint_damage_test.cc): a state dir with checkpoints, digests by a
// replay from seq 1, and ways to damage a checkpoint.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/json.h"

namespace limbic::testing {

// A state dir of about `n` events of several kinds, with a checkpoint
// taken every `every` events while the engine runs; the checkpoints' seqs.
std::vector<uint64_t> BuildCheckpointedState(const std::string& dir, int n, int every);
// The digest at `seq` by a replay from seq 1 (no checkpoints).
std::string FullDigest(const std::string& state_dir, uint64_t seq);
// Truncates the first table file of a checkpoint's db/ to half its size.
void TruncateATableFile(const std::string& checkpoint_dir);
// Changes 16 bytes in the middle of the table files of column family `cf`
// (e.g. "percepts", "index") in a checkpoint's db/: their size, footer and
// index stay whole, so the checkpoint opens, and only a read of that block
// (or a check of every block) finds it.
void DamageABlock(const std::string& checkpoint_dir, const std::string& cf);
// <state>/checkpoints/<seq, 20 digits>
std::string CheckpointDir(const std::string& state_dir, uint64_t seq);
// The manifest of the checkpoint at `seq`, as written.
nlohmann::json ManifestOf(const std::string& state, uint64_t seq);

}  // namespace limbic::testing
