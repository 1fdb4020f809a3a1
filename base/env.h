// The file layer under the event log.
//
// Everything the log does to disk goes through an Env, so tests can swap in
// FaultInjectionEnv (env_fault.h) and turn crashes, torn writes and I/O
// errors into ordinary unit tests. PosixEnv is the real one.
//
// Thread-safety: an Env may be used from several threads at once; a single
// WritableFile or SequentialFile is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace limbic {

// A file opened for appending. Data is durable only after Sync() returns OK.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(std::string_view data) = 0;
  // fdatasync(2): data and the size needed to read it back.
  virtual Status Sync() = 0;
  virtual Status Close() = 0;
  // Bytes appended so far, including what existed when the file was opened.
  virtual uint64_t Size() const = 0;
};

// A file read front to back.
class SequentialFile {
 public:
  virtual ~SequentialFile() = default;
  // Reads up to n bytes into *out (replacing its contents); an empty *out
  // with OK means end of file.
  virtual Status Read(size_t n, std::string* out) = 0;
};

// An flock(2) held on a file: a process's ownership of a state dir, or one
// writer's turn at a shared file (the world model's). Released when
// destroyed, or when the process dies (the kernel drops the locks of a dead
// process).
class FileLock {
 public:
  virtual ~FileLock() = default;
  // Replaces the lock file's contents in place, without fsync: a lock file
  // may carry a small record (the owner's pid, a generation counter).
  // Renaming another file over a held lock file would split the lock in
  // two, so this is the one way to change it.
  virtual Status Rewrite(std::string_view contents) = 0;
  // Whether `path` still names the locked file: false once another file
  // was renamed over it (a rebuild), when a lock on the path no longer
  // guards what the path opens.
  virtual Result<bool> Names(const std::string& path) const = 0;
};

// What LockFile does when another holder has the lock.
enum class LockWait {
  kNo,   // fail at once with Busy naming the holder's pid, and write ours
         // into the file once held (a state dir's limbic.lock)
  kYes,  // wait until the holder lets go (interrupted waits resume); the
         // file's contents are left to the caller (a shared file's turn)
};

// How WriteFileAtomic leaves the new file. Either way a reader sees the old
// file or the new one, never half of one.
enum class FileDurability {
  kSynced,   // the file and its directory are fsynced before it returns
  kDerived,  // no fsync, for files rebuilt from others (the world model):
             // a crash may leave the old version or an empty file
};

class Env {
 public:
  virtual ~Env() = default;

  // The process-wide POSIX environment; lives forever.
  static Env* Default();

  // Opens `path` for appending, creating it when missing.
  virtual Result<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) = 0;
  virtual Result<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) = 0;

  virtual bool FileExists(const std::string& path) = 0;
  virtual Result<uint64_t> GetFileSize(const std::string& path) = 0;
  // Names (not paths) of the entries of `dir`, unsorted, without . and ..
  virtual Result<std::vector<std::string>> GetChildren(const std::string& dir) = 0;
  virtual Status CreateDirs(const std::string& dir) = 0;  // mkdir -p
  virtual Status RemoveFile(const std::string& path) = 0;
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  virtual Status TruncateFile(const std::string& path, uint64_t size) = 0;
  // fsync(2) on a directory, so a created or renamed entry survives a crash.
  virtual Status SyncDir(const std::string& dir) = 0;

  // Takes an exclusive flock on `path` (created if missing); `wait` says
  // what happens while another holder has it. flock locks belong to the
  // open file, so two locks on one path exclude each other in one process
  // too.
  virtual Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, LockWait wait) = 0;
  // Reads the whole file (for small files: lock files, configs).
  virtual Result<std::string> ReadFileToString(const std::string& path) = 0;
  // Replaces `path` with `data`: written to the hidden temp file
  // TempPathFor(path), then renamed over it. The caller serialises writers
  // of one path.
  virtual Status WriteFileAtomic(const std::string& path, std::string_view data,
                                 FileDurability durability) = 0;
};

// A small file limbic itself wrote into a state dir (a checkpoint's
// manifest, sandbox.json, standby.json), read whole, or an error naming the
// path: it must be a regular file (a symlink to one will do) of at most
// `max_bytes`. A device, a FIFO or a socket in its place is refused, never
// read (/dev/zero would never end, a FIFO would block the reader forever),
// and at most max_bytes + 1 bytes are read whatever its size says.
Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes);

// "<dir>/.<name>.tmp" for "<dir>/<name>": the temp file WriteFileAtomic
// writes. Hidden, so a walk of the directory for its real files skips it.
std::string TempPathFor(const std::string& path);

// The environment for a child process: this process's variables, except
// those that `overrides` ("NAME=value") sets, then `overrides`. (Appending
// instead would leave two entries of a name, and getenv(3) returns the first.)
std::vector<std::string> ChildEnvironment(const std::vector<std::string>& overrides);

}  // namespace limbic
