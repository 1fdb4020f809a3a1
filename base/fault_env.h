// FaultInjectionEnv: an Env for tests that can lose unsynced data, tear
// writes and fail calls, so crash recovery is an ordinary unit test.
//
// It wraps a real Env (normally Env::Default() on a temporary dir) and, for
// every file written through it, remembers how many bytes were synced.
// SimulateCrash() then truncates each such file to what a power loss could
// leave: its synced bytes plus, optionally, part of the unsynced tail.
//
// Thread-safety: safe to use from several threads (one mutex).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "base/env.h"

namespace rocksdb {
class Env;
}

namespace limbic {

class FaultInjectionEnv final : public Env {
 public:
  explicit FaultInjectionEnv(Env* base);
  ~FaultInjectionEnv() override;

  // Truncates every file written through this Env to its synced size plus at
  // most `keep_unsynced_bytes` of its unsynced tail (a torn write).
  Status SimulateCrash(uint64_t keep_unsynced_bytes = 0);
  // Sync() fails with IOError while set.
  void SetSyncError(bool fail);
  // Append() fails with IOError while set.
  void SetWriteError(bool fail);
  // The Append that crosses `bytes` in total (over all files) writes only
  // what fits, then fails: a torn write. Later appends fail too.
  void FailAppendAfter(uint64_t bytes);
  // After `renames` more successful RenameFile calls, every one fails with
  // IOError and renames nothing: a crash between two steps of a
  // multi-file update.
  void FailRenameAfter(int renames);

  // RocksDB's file layer (RocksDB's default, wrapped), for
  // ProjectionOptions::rocks_env: while SetRocksWriteError is set, every
  // append to a file RocksDB writes (WAL, tables, MANIFEST) fails with
  // RocksDB's NoSpace error, as on a full disk. Lives as long as this Env.
  rocksdb::Env* rocks_env();
  void SetRocksWriteError(bool fail);

  int sync_calls() const;
  int append_calls() const;
  // Bytes written through this Env and not yet synced, over all files.
  uint64_t unsynced_bytes() const;

  // Env
  Result<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override;
  Result<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    return base_->NewSequentialFile(path);
  }
  bool FileExists(const std::string& path) override { return base_->FileExists(path); }
  Result<uint64_t> GetFileSize(const std::string& path) override { return base_->GetFileSize(path); }
  Result<std::vector<std::string>> GetChildren(const std::string& dir) override {
    return base_->GetChildren(dir);
  }
  Status CreateDirs(const std::string& dir) override { return base_->CreateDirs(dir); }
  Status RemoveFile(const std::string& path) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status TruncateFile(const std::string& path, uint64_t size) override;
  Status SyncDir(const std::string& dir) override { return base_->SyncDir(dir); }
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, LockWait wait) override {
    return base_->LockFile(path, wait);
  }
  Result<std::string> ReadFileToString(const std::string& path) override {
    return base_->ReadFileToString(path);
  }
  // The injected faults reach it as one step each: a write error, an
  // append budget it would cross, a sync error (kSynced), a failing rename
  // -- and then the file is unchanged. A crash keeps a kSynced file whole;
  // a kDerived one is cut like any unsynced file (SimulateCrash).
  Status WriteFileAtomic(const std::string& path, std::string_view data, FileDurability durability) override;

 private:
  friend class FaultWritableFile;
  struct FileState {
    uint64_t size = 0;    // bytes written
    uint64_t synced = 0;  // bytes durable
  };
  // Called by the files: decide how much of an append may land.
  Status BeforeAppend(size_t n, size_t* allowed);
  Status BeforeSync();
  void Wrote(const std::string& path, uint64_t n);
  void Synced(const std::string& path);

  Env* base_;
  mutable std::mutex mu_;
  std::map<std::string, FileState> files_;
  bool sync_error_ = false;
  bool write_error_ = false;
  uint64_t append_budget_ = UINT64_MAX;
  uint64_t appended_ = 0;
  int sync_calls_ = 0;
  int append_calls_ = 0;
  int renames_left_ = -1;  // -1: no rename fails
  std::shared_ptr<std::atomic<bool>> rocks_write_error_;
  std::unique_ptr<rocksdb::Env> rocks_env_;
};

}  // namespace limbic
