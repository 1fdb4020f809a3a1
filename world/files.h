// File helpers of the world model's stores (internal to world/).
//
// The world model's files are derived data (entity_store.h). Every change
// to them goes through an Env (so FaultInjectionEnv reaches them): a
// shared file is changed holding Env::LockFile(..., LockWait::kYes), and
// replaced with Env::WriteFileAtomic(..., FileDurability::kDerived), so a
// reader never sees half a file, but nothing is fsynced. Reads are plain
// POSIX reads (these helpers).
//
// Thread-safety: free functions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"

namespace limbic::world {

struct FileText {
  std::string text;   // at most the `max_bytes` asked for
  bool whole = true;  // false: the file is longer than `text`
  int64_t mtime_ms = 0;
};
// Reads up to `max_bytes` of `path`; NotFound when it does not exist.
Result<FileText> ReadFilePrefix(const std::string& path, size_t max_bytes);

// A whole file, "" when it does not exist; FailedPrecondition naming it
// when it is over `max_bytes`, IOError when it cannot be read.
Result<std::string> ReadWholeFile(const std::string& path, size_t max_bytes = 256 << 20);

// env->LockFile(path, LockWait::kYes) on the file `path` names when the lock
// is held: a file renamed over it meanwhile (a rebuild) is locked afresh.
Result<std::unique_ptr<FileLock>> LockNamedFile(Env* env, const std::string& path);

// Appends lines (each without '\n') to `path` through `env`, holding
// LockNamedFile(path), creating it; a torn last line (no '\n') left by a
// crash is ended first.
Status AppendLines(Env* env, const std::string& path, const std::vector<std::string>& lines);

// The names in `dir` (no "." or ".."); only regular files when `files_only`.
Result<std::vector<std::string>> ListDir(const std::string& dir, bool files_only);

// IOError "<what>: <strerror>".
Status ErrnoStatus(const std::string& what, int err);

}  // namespace limbic::world
