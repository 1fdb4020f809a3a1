// Sandboxes: time travel you can run (`limbic fork`).
//
// A fork replays a state dir's events log up to a seq (or a time) into a new
// state dir -- the same replay as `limbic replay --into`, so its digest is
// the original's at that seq -- and marks it a sandbox with
// <dir>/sandbox.json: {forked_from, at_seq, at_time, forked_at, digest}.
// `limbic run` on a sandbox (runtime.h):
//   - replaces every effector with a dry run: what it would have sent is
//     appended to <dir>/dry-run.jsonl (one JSON line per delivery: the
//     effector, its kind, the action) and the action completes with result
//     {"dry_run": true};
//   - does not sync the reflexes file into the rules (the rules are those of
//     the log at the fork) unless run with --sync-rules;
//   - says so in its start-up line, and in GET /healthz ("sandbox").
// Nothing else differs: the sandbox is an ordinary state dir with its own
// log, so a user can change a rule, post percepts and watch what the agent
// would have done. Archive days and world pages are not copied: they are
// files beside the log, not events (the archive's staging follows the log).
//
// Thread-safety: plain functions over files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "base/time.h"

namespace limbic::runtime {

struct SandboxInfo {
  std::string forked_from;  // the source state dir (absolute)
  uint64_t at_seq = 0;      // the last event replayed
  std::string at_time;      // its time
  std::string forked_at;    // when the fork was made
  std::string digest;       // of the pools at at_seq

  nlohmann::json ToJson() const;
};

std::string SandboxFilePath(const std::string& state_dir);
std::string DryRunFilePath(const std::string& state_dir);

// nullopt when `state_dir` is not a sandbox; Corruption naming the file
// when its sandbox.json is not what Fork writes.
Result<std::optional<SandboxInfo>> ReadSandbox(const std::string& state_dir);

struct ForkOptions {
  std::string from_state;             // the state dir whose log is forked
  std::string into;                   // the new state dir: must not exist or be empty
  std::optional<uint64_t> at_seq;     // the last event to keep ...
  std::optional<TimeMs> at_time;      // ... or the last one at or before this time
  TimeMs now = 0;                     // forked_at
  // at_seq 0 makes an empty sandbox (the state before the first event):
  // `limbic mind rerun` of a session woken first thing. Else refused.
  bool allow_empty = false;
};

// Forks over the API (POST /v1/fork) go only under one root directory,
// api.fork_root, as `name`s of one path segment; `limbic fork --into` may
// name any path outside every state dir (state::EnclosingStateDir).

//! The longest fork name over the API, in bytes.
inline constexpr size_t kMaxForkNameBytes = 128;

//! api.fork_root made absolute: `configured`, or when it is empty
//! "<state dir>-forks" beside the state dir. InvalidArgument naming
//! api.fork_root when it is (inside) a state dir, or exists and is not a
//! directory. It is created when the first fork needs it.
Result<std::string> ResolveForkRoot(const std::string& configured, const std::string& state_dir);

//! Whether `name` may name a fork under the root: a name (base/name.h: no
//! control or bidi-control characters) of at most kMaxForkNameBytes bytes
//! and one path segment (no '/', not "." or ".."). InvalidArgument naming
//! the rule broken.
Status CheckForkName(std::string_view name);

//! The directory `root`/`name` for a fork, new and empty: `root` is created
//! when missing (it must be a real directory, not a symlink), `name` is
//! made with mkdir, never through a symlink. An empty directory already
//! there is taken; anything else by that name (a symlink, even a dangling
//! one, a file, a directory with files) is InvalidArgument.
Result<std::string> MakeForkDir(const std::string& root, const std::string& name);

// Replays and marks. InvalidArgument when neither or both of at_seq and
// at_time are given, or at_seq is past the log's end (naming its last
// seq); the replay's errors otherwise (a partly built `into` is removed).
// The checkpoint it starts from has every table file's checksums checked
// first (a fork keeps them). Checkpoints skipped as damaged, and why, go
// to *warnings (when given). A fork that fails leaves `into` as it was
// (removed when the fork made it).
Result<SandboxInfo> Fork(const ForkOptions& options, std::vector<std::string>* warnings = nullptr);

}  // namespace limbic::runtime
