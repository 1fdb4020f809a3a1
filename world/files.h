// File helpers of the world model's stores (internal to world/).
//
// The world model's files are derived data (entity_store.h): they are
// replaced through a temp file and rename(2) so a reader never sees half a
// file, but nothing is fsynced.
//
// Thread-safety: free functions; an ExclusiveLock belongs to one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace limbic::world {

// A blocking, exclusive flock(2) on `path` (created if missing), held
// until destruction. flock locks belong to the open file, so two locks
// taken by two threads of one process exclude each other too.
class ExclusiveLock {
 public:
  static Result<std::unique_ptr<ExclusiveLock>> Acquire(const std::string& path);
  ~ExclusiveLock();
  ExclusiveLock(const ExclusiveLock&) = delete;
  ExclusiveLock& operator=(const ExclusiveLock&) = delete;
  int fd() const { return fd_; }

 private:
  explicit ExclusiveLock(int fd) : fd_(fd) {}
  int fd_;
};

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

// Replaces `path` with `data` through `<dir>/.<name>.tmp` and rename(2);
// no fsync. The caller serialises writers of one path (a lock).
Status WriteFileByRename(const std::string& path, std::string_view data);

// Appends lines (each without '\n') to `path` under an exclusive flock,
// creating it; a torn last line (no '\n') left by a crash is ended first.
Status AppendLines(const std::string& path, const std::vector<std::string>& lines);

// flock(LOCK_EX) on an open file, retried when interrupted; errors name
// `path`. The lock goes with the descriptor's close.
Status LockExclusive(int fd, const std::string& path);
// Writes all of `data` at the descriptor's offset (O_APPEND: the end),
// retrying short and interrupted writes; errors name `path`.
Status WriteAll(int fd, std::string_view data, const std::string& path);

// The names in `dir` (no "." or ".."); only regular files when `files_only`.
Result<std::vector<std::string>> ListDir(const std::string& dir, bool files_only);

// IOError "<what>: <strerror>".
Status ErrnoStatus(const std::string& what, int err);

}  // namespace limbic::world
