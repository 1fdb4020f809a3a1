#include "base/fault_env.h"

#include <rocksdb/env.h>

#include <algorithm>

namespace limbic {
namespace {

// A RocksDB file whose appends fail while *fail is set.
class FaultRocksFile final : public rocksdb::WritableFileWrapper {
 public:
  FaultRocksFile(std::unique_ptr<rocksdb::WritableFile> base,
                 std::shared_ptr<std::atomic<bool>> fail)
      : rocksdb::WritableFileWrapper(base.get()), base_(std::move(base)), fail_(std::move(fail)) {}
  rocksdb::Status Append(const rocksdb::Slice& data) override {
    if (*fail_) return rocksdb::Status::NoSpace("injected: No space left on device");
    return base_->Append(data);
  }
  rocksdb::Status Append(const rocksdb::Slice& data,
                         const rocksdb::DataVerificationInfo& info) override {
    if (*fail_) return rocksdb::Status::NoSpace("injected: No space left on device");
    return base_->Append(data, info);
  }

 private:
  std::unique_ptr<rocksdb::WritableFile> base_;
  std::shared_ptr<std::atomic<bool>> fail_;
};

class FaultRocksEnv final : public rocksdb::EnvWrapper {
 public:
  explicit FaultRocksEnv(std::shared_ptr<std::atomic<bool>> fail)
      : rocksdb::EnvWrapper(rocksdb::Env::Default()), fail_(std::move(fail)) {}
  rocksdb::Status NewWritableFile(const std::string& name,
                                  std::unique_ptr<rocksdb::WritableFile>* result,
                                  const rocksdb::EnvOptions& options) override {
    std::unique_ptr<rocksdb::WritableFile> base;
    rocksdb::Status s = target()->NewWritableFile(name, &base, options);
    if (s.ok()) result->reset(new FaultRocksFile(std::move(base), fail_));
    return s;
  }

 private:
  std::shared_ptr<std::atomic<bool>> fail_;
};

}  // namespace

FaultInjectionEnv::FaultInjectionEnv(Env* base)
    : base_(base), rocks_write_error_(std::make_shared<std::atomic<bool>>(false)) {}
FaultInjectionEnv::~FaultInjectionEnv() = default;

rocksdb::Env* FaultInjectionEnv::rocks_env() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!rocks_env_) rocks_env_ = std::make_unique<FaultRocksEnv>(rocks_write_error_);
  return rocks_env_.get();
}

void FaultInjectionEnv::SetRocksWriteError(bool fail) { *rocks_write_error_ = fail; }

class FaultWritableFile final : public WritableFile {
 public:
  FaultWritableFile(FaultInjectionEnv* env, std::string path, std::unique_ptr<WritableFile> base)
      : env_(env), path_(std::move(path)), base_(std::move(base)) {}

  Status Append(std::string_view data) override {
    size_t allowed = 0;
    Status s = env_->BeforeAppend(data.size(), &allowed);
    if (allowed > 0) {
      LIMBIC_RETURN_IF_ERROR(base_->Append(data.substr(0, allowed)));
      env_->Wrote(path_, allowed);
    }
    return s;
  }
  Status Sync() override {
    LIMBIC_RETURN_IF_ERROR(env_->BeforeSync());
    LIMBIC_RETURN_IF_ERROR(base_->Sync());
    env_->Synced(path_);
    return Status::OK();
  }
  Status Close() override { return base_->Close(); }
  uint64_t Size() const override { return base_->Size(); }

 private:
  FaultInjectionEnv* env_;
  std::string path_;
  std::unique_ptr<WritableFile> base_;
};

Result<std::unique_ptr<WritableFile>> FaultInjectionEnv::NewAppendableFile(const std::string& path) {
  auto base = base_->NewAppendableFile(path);
  if (!base.ok()) return base.status();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = files_.try_emplace(path);
    if (inserted) it->second.size = it->second.synced = (*base)->Size();  // existing bytes: durable
  }
  return std::unique_ptr<WritableFile>(new FaultWritableFile(this, path, std::move(base).value()));
}

Status FaultInjectionEnv::BeforeAppend(size_t n, size_t* allowed) {
  std::lock_guard<std::mutex> lock(mu_);
  ++append_calls_;
  *allowed = 0;
  if (write_error_) return Status::IOError("injected write error");
  uint64_t room = append_budget_ > appended_ ? append_budget_ - appended_ : 0;
  *allowed = static_cast<size_t>(std::min<uint64_t>(n, room));
  appended_ += *allowed;
  if (*allowed < n) return Status::IOError("injected torn write");
  return Status::OK();
}

Status FaultInjectionEnv::BeforeSync() {
  std::lock_guard<std::mutex> lock(mu_);
  ++sync_calls_;
  return sync_error_ ? Status::IOError("injected sync error") : Status::OK();
}

void FaultInjectionEnv::Wrote(const std::string& path, uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  files_[path].size += n;
}

void FaultInjectionEnv::Synced(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  FileState& f = files_[path];
  f.synced = f.size;
}

Status FaultInjectionEnv::SimulateCrash(uint64_t keep_unsynced_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [path, f] : files_) {
    if (!base_->FileExists(path)) continue;
    uint64_t keep = f.synced + std::min(keep_unsynced_bytes, f.size - f.synced);
    LIMBIC_RETURN_IF_ERROR(base_->TruncateFile(path, keep));
    f.size = f.synced = keep;
  }
  return Status::OK();
}

Status FaultInjectionEnv::RemoveFile(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    files_.erase(path);
  }
  return base_->RemoveFile(path);
}

Status FaultInjectionEnv::RenameFile(const std::string& from, const std::string& to) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (renames_left_ == 0) return Status::IOError("injected rename failure: " + from);
    if (renames_left_ > 0) --renames_left_;
  }
  return base_->RenameFile(from, to);
}

Status FaultInjectionEnv::WriteFileAtomic(const std::string& path, std::string_view data,
                                          FileDurability durability) {
  size_t allowed = 0;
  if (Status s = BeforeAppend(data.size(), &allowed); !s.ok()) return s.WithContext("writing " + path);
  if (durability == FileDurability::kSynced) LIMBIC_RETURN_IF_ERROR(BeforeSync().WithContext("writing " + path));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (renames_left_ == 0) return Status::IOError("injected rename failure: " + TempPathFor(path));
    if (renames_left_ > 0) --renames_left_;
    // kSynced: durable as a whole. kDerived: nothing synced, so a simulated
    // crash may leave it empty (or with part of it).
    if (durability == FileDurability::kSynced)
      files_.erase(path);
    else
      files_[path] = FileState{data.size(), 0};
  }
  return base_->WriteFileAtomic(path, data, durability);
}

void FaultInjectionEnv::FailRenameAfter(int renames) {
  std::lock_guard<std::mutex> lock(mu_);
  renames_left_ = renames;
}

Status FaultInjectionEnv::TruncateFile(const std::string& path, uint64_t size) {
  LIMBIC_RETURN_IF_ERROR(base_->TruncateFile(path, size));
  std::lock_guard<std::mutex> lock(mu_);
  auto it = files_.find(path);
  if (it != files_.end()) it->second.size = it->second.synced = std::min(it->second.size, size);
  return Status::OK();
}

void FaultInjectionEnv::SetSyncError(bool fail) {
  std::lock_guard<std::mutex> lock(mu_);
  sync_error_ = fail;
}

void FaultInjectionEnv::SetWriteError(bool fail) {
  std::lock_guard<std::mutex> lock(mu_);
  write_error_ = fail;
}

void FaultInjectionEnv::FailAppendAfter(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  append_budget_ = appended_ + bytes;
}

int FaultInjectionEnv::sync_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sync_calls_;
}

uint64_t FaultInjectionEnv::unsynced_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = 0;
  for (const auto& [path, f] : files_) n += f.size - f.synced;
  return n;
}

int FaultInjectionEnv::append_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return append_calls_;
}

}  // namespace limbic
