// EventLog: the group-commit writer thread (recovery is in log_recover.cc).
#include "state/log_impl.h"

namespace limbic::state {

std::string_view DurabilityName(Durability d) {
  switch (d) {
    case Durability::kFsync: return "fsync";
    case Durability::kInterval: return "interval";
    case Durability::kNone: return "none";
  }
  return "fsync";
}

Result<Durability> ParseDurability(std::string_view name) {
  if (name == "fsync") return Durability::kFsync;
  if (name == "interval") return Durability::kInterval;
  if (name == "none") return Durability::kNone;
  return Status::InvalidArgument("durability \"" + std::string(name) +
                                 "\": must be fsync, interval or none");
}


void EventLog::Impl::Submit(LogBatch batch) {
  std::unique_lock<std::mutex> lock(mu_);
  if (closed_ || !started_) {
    lock.unlock();
    Status s = options_.read_only ? Status::FailedPrecondition("the events log is open read-only")
                                  : Status::Unavailable("the events log is closed");
    std::vector<LogBatch> group;
    group.push_back(std::move(batch));
    options_.on_group(s, std::move(group));
    return;
  }
  // Seqs are assigned by the caller; a gap here is a bug, and writing it
  // would corrupt the log, so the log refuses everything from now on.
  uint64_t next = submitted_seq_ + 1;
  for (const Event& e : batch.events) {
    if (e.seq != next && error_.ok())
      error_ = Status::Internal("submitted seq " + std::to_string(e.seq) + " where " +
                                std::to_string(next) + " was due");
    ++next;
  }
  submitted_seq_ = next - 1;
  queue_.push_back(std::move(batch));
  lock.unlock();
  work_cv_.notify_one();
}

void EventLog::Impl::WriterLoop() {
  using Clock = std::chrono::steady_clock;
  auto next_sync = Clock::now() + std::chrono::milliseconds(options_.interval_ms);
  for (;;) {
    std::vector<LogBatch> group;
    int flushes = 0;  // Flush() calls this round answers
    int resumes = 0;  // Resume() calls this round answers
    bool flush = false;
    bool retry_undo = false;
    Status error, wedged;
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto ready = [this] {
        return !queue_.empty() || stop_ || flush_requests_ > 0 || resume_requests_ > 0;
      };
      if (options_.durability == Durability::kInterval && unsynced_through_ > synced_seq_ &&
          wedged_.ok())
        work_cv_.wait_until(lock, next_sync, ready);
      else
        work_cv_.wait(lock, ready);
      // Stop once drained; a broken log has nothing more it can sync.
      if (queue_.empty() && stop_ && flush_requests_ == 0 && resume_requests_ == 0 &&
          (unsynced_through_ == synced_seq_ || !error_.ok() || !wedged_.ok()))
        break;
      group.swap(queue_);
      flushes = flush_requests_;
      resumes = resume_requests_;
      flush = flushes > 0 || stop_;
      retry_undo = resumes > 0 && unresolved_;
      error = error_;
      wedged = wedged_;
    }
    if (retry_undo) {
      Status undone = Undo();
      std::lock_guard<std::mutex> lock(mu_);
      if (undone.ok()) {
        unresolved_ = false;
        options_.logger->warn(
            "events log: cut back to seq {} after the failed write; the "
            "write whose outcome was unknown is not in the log",
            mark_.last_seq);
      }
    }
    // A group is written only by a log in good order; while wedged, it
    // fails untouched (not written).
    Status status = error.ok() ? wedged : error;
    if (status.ok() && !group.empty()) {
      mark_ =
          Mark{seg_path_, seg_first_seq_, file_ ? file_->Size() : 0, unsynced_through_, last_ts_};
      Status written = WriteGroup(group);
      if (!written.ok()) status = FailGroup(written);
    }
    bool interval_due = options_.durability == Durability::kInterval && Clock::now() >= next_sync;
    if (status.ok() && error.ok() && (flush || interval_due) && unsynced_through_ > synced_seq_) {
      // Only interval and none get here with bytes to sync: groups they
      // acknowledged before fdatasync, so a failure here breaks the log.
      Status synced = SyncNow();
      if (!synced.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        if (error_.ok()) error_ = synced;
        options_.logger->error("events log broken: {}", synced.ToString());
        status = synced;
      }
    }
    if (interval_due) next_sync = Clock::now() + std::chrono::milliseconds(options_.interval_ms);
    uint64_t last = 0;
    for (const LogBatch& b : group)
      if (!b.events.empty()) last = b.events.back().seq;
    if (!group.empty()) {
      bool ok = status.ok();
      options_.on_group(status, std::move(group));
      if (ok && last) written_seq_ = last;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      flush_requests_ -= flushes;
      resume_requests_ -= resumes;
      if (last) returned_seq_ = last;
    }
    done_cv_.notify_all();
  }
}

// A group's write failed: part of it may be in the file, and after a failed
// fdatasync the kernel may have dropped dirty pages that a read would still
// show ("fsyncgate"), so looking at the file proves nothing. Cutting the
// segment back to where it stood before the group and syncing that does:
// then the group is surely not in the log. Until that succeeds its outcome
// is unknown. Either way the log takes no batch until Resume.
Status EventLog::Impl::FailGroup(const Status& cause) {
  options_.logger->error("events log: writing seqs {}.. failed: {}", mark_.last_seq + 1,
                         cause.message());
  Status undone = Undo();
  std::lock_guard<std::mutex> lock(mu_);
  wedged_ = Status::Unavailable("not written: the events log is recovering from a failed write (" +
                                cause.message() + "); retry");
  if (undone.ok()) {
    unresolved_ = false;
    return Status::Unavailable("not written: " + cause.message() +
                               "; the events log holds none of it, retry");
  }
  options_.logger->error("events log: cannot cut the log back to seq {}: {}", mark_.last_seq,
                         undone.message());
  unresolved_ = true;
  unknown_ = Status::Unavailable("outcome unknown: " + cause.message() +
                                 ", and cutting the log back failed (" + undone.message() +
                                 "); retry with the same id");
  return unknown_;
}

// Restores the log to mark_: segments the group started are removed (with
// the seal its first segment got when closed), the segment it started in is
// truncated to its old size, reopened and synced.
Status EventLog::Impl::Undo() {
  Env* env = options_.env;
  const Mark& m = mark_;
  if (seg_path_ != m.path) {
    file_.reset();
    auto segments = ListSegments(env, options_.dir);
    if (!segments.ok()) return segments.status();
    for (const Segment& seg : *segments) {
      if (!m.path.empty() && seg.first_seq <= m.first_seq) continue;
      LIMBIC_RETURN_IF_ERROR(env->RemoveFile(seg.path));
      if (env->FileExists(SealFileName(seg.path)))
        LIMBIC_RETURN_IF_ERROR(env->RemoveFile(SealFileName(seg.path)));
    }
    if (!m.path.empty() && env->FileExists(SealFileName(m.path)))
      LIMBIC_RETURN_IF_ERROR(env->RemoveFile(SealFileName(m.path)));
    LIMBIC_RETURN_IF_ERROR(env->SyncDir(options_.dir));
    seg_path_.clear();
  }
  if (!m.path.empty()) {
    file_.reset();
    LIMBIC_RETURN_IF_ERROR(env->TruncateFile(m.path, m.size));
    auto file = env->NewAppendableFile(m.path);
    if (!file.ok()) return file.status();
    file_ = std::move(file).value();
    LIMBIC_RETURN_IF_ERROR(file_->Sync());
    // The open segment's hash, over the bytes it kept.
    Sha256 sha;
    auto in = env->NewSequentialFile(m.path);
    if (!in.ok()) return in.status();
    std::string chunk;
    for (uint64_t left = m.size; left > 0; left -= chunk.size()) {
      LIMBIC_RETURN_IF_ERROR(
          (*in)->Read(static_cast<size_t>(std::min<uint64_t>(left, 1 << 20)), &chunk));
      if (chunk.empty())
        return Status::IOError(m.path + ": shorter than its " + std::to_string(m.size) +
                               " bytes after truncation");
      sha.Update(chunk);
    }
    seg_sha_ = std::move(sha);
  } else {
    seg_sha_ = Sha256();
  }
  seg_path_ = m.path;
  seg_first_seq_ = m.first_seq;
  last_ts_ = m.last_ts;
  unsynced_through_ = m.last_seq;
  std::lock_guard<std::mutex> lock(mu_);
  synced_seq_ = m.last_seq;
  return Status::OK();
}

Status EventLog::Impl::Resume(uint64_t last_seq) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!error_.ok()) return error_;
  if (wedged_.ok()) return Status::OK();
  if (unresolved_) {
    ++resume_requests_;
    work_cv_.notify_one();
    done_cv_.wait(lock, [&] { return resume_requests_ == 0; });
    if (unresolved_) return unknown_;
  }
  if (!queue_.empty() || last_seq != synced_seq_)
    return Status::Internal("resuming the events log at seq " + std::to_string(last_seq) +
                            " but it ends at seq " + std::to_string(synced_seq_) + " with " +
                            std::to_string(queue_.size()) + " batches queued");
  submitted_seq_ = written_seq_ = returned_seq_ = last_seq;
  wedged_ = Status::OK();
  return Status::OK();
}

Status EventLog::Impl::OpenSegment(uint64_t first_seq) {
  if (file_) {
    // The old segment must be durable before a later one exists, or a
    // crash could leave a hole in the middle of the log; then it is sealed.
    LIMBIC_RETURN_IF_ERROR(SyncNow());
    const uint64_t bytes = file_->Size();
    LIMBIC_RETURN_IF_ERROR(file_->Close());
    SegmentSeal seal{seg_first_seq_, first_seq - 1, bytes, last_ts_, seg_sha_.HexDigest()};
    Status s = WriteSeal(options_.env, seg_path_, seal);
    // Not fatal: recovery decodes an unsealed segment in full and seals it.
    if (!s.ok()) options_.logger->warn("events log: could not seal {}: {}", seg_path_, s.message());
  }
  seg_path_ = SegmentFileName(options_.dir, first_seq);
  seg_first_seq_ = first_seq;
  seg_sha_ = Sha256();
  auto file = options_.env->NewAppendableFile(seg_path_);
  if (!file.ok()) return file.status();
  file_ = std::move(file).value();
  return options_.env->SyncDir(options_.dir);
}

Status EventLog::Impl::Append(std::string_view data) {
  LIMBIC_RETURN_IF_ERROR(file_->Append(data));
  seg_sha_.Update(data);
  return Status::OK();
}

Status EventLog::Impl::WriteGroup(std::vector<LogBatch>& group) {
  buf_.clear();
  for (const LogBatch& batch : group) {
    for (const Event& e : batch.events) {
      if (!file_ || file_->Size() + buf_.size() >= options_.segment_bytes) {
        if (!buf_.empty()) {
          LIMBIC_RETURN_IF_ERROR(Append(buf_));
          buf_.clear();
        }
        LIMBIC_RETURN_IF_ERROR(OpenSegment(e.seq));
      }
      AppendEncodedEvent(e, &buf_);
      unsynced_through_ = e.seq;
      last_ts_ = e.ts;
    }
  }
  if (!buf_.empty()) LIMBIC_RETURN_IF_ERROR(Append(buf_));
  if (options_.durability == Durability::kFsync) return SyncNow();
  return Status::OK();
}

Status EventLog::Impl::SyncNow() {
  if (!file_) return Status::OK();
  auto start = std::chrono::steady_clock::now();
  LIMBIC_RETURN_IF_ERROR(file_->Sync());
  if (options_.on_sync)
    options_.on_sync(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  std::lock_guard<std::mutex> lock(mu_);
  synced_seq_ = unsynced_through_;
  return Status::OK();
}

Status EventLog::Impl::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!started_ || closed_) return error_;
  uint64_t target = submitted_seq_;
  ++flush_requests_;
  work_cv_.notify_one();
  // Every callback up to `target` has run, and all of it is synced (or the
  // log broke or a group failed, and nothing more will be).
  done_cv_.wait(lock, [&] {
    return returned_seq_ >= target && queue_.empty() &&
           (!error_.ok() || !wedged_.ok() || synced_seq_ >= target);
  });
  return error_;
}

Status EventLog::Impl::Close() {
  Status s;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!started_ || closed_) return error_;
  }
  s = Flush();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    closed_ = true;
  }
  work_cv_.notify_one();
  if (writer_.joinable()) writer_.join();
  if (unresolved_) {
    // A last try, so the next start does not find the unknown write's bytes.
    if (Undo().ok()) unresolved_ = false;
  }
  if (s.ok() && !unresolved_) {
    // Everything is synced: seal the open segment as it is now, so the next
    // open hashes it instead of decoding it. Not fatal: it only costs time.
    Status seal = SealOpenSegment();
    if (!seal.ok()) options_.logger->warn("events log: could not seal {}: {}", seg_path_, seal.message());
  }
  if (file_) {
    Status c = file_->Close();
    if (s.ok()) s = c;
    file_.reset();
  }
  return s;
}

// The writer has stopped (or is this thread): its state is ours to read.
Status EventLog::Impl::SealOpenSegment() {
  if (!file_ || seg_path_.empty()) return Status::OK();
  const uint64_t last = unsynced_through_;         // what the file holds
  if (last < seg_first_seq_) return Status::OK();  // nothing in it yet
  return WriteSeal(options_.env, seg_path_,
                   {seg_first_seq_, last, file_->Size(), last_ts_, seg_sha_.PeekHexDigest()});
}

EventLog::EventLog(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EventLog::~EventLog() = default;

Result<std::unique_ptr<EventLog>> EventLog::Open(LogOptions options, LogRecovery* recovery) {
  if (!options.read_only && !options.on_group)
    return Status::InvalidArgument("LogOptions::on_group is required for a writable log");
  auto impl = std::make_unique<Impl>(std::move(options));
  LogRecovery local;
  LIMBIC_RETURN_IF_ERROR(impl->Recover(recovery ? recovery : &local));
  return std::unique_ptr<EventLog>(new EventLog(std::move(impl)));
}

void EventLog::Submit(LogBatch batch) { impl_->Submit(std::move(batch)); }
Status EventLog::Resume(uint64_t last_seq) { return impl_->Resume(last_seq); }
Status EventLog::Flush() { return impl_->Flush(); }
Status EventLog::Close() { return impl_->Close(); }
uint64_t EventLog::last_submitted_seq() const { return impl_->submitted_seq_; }
uint64_t EventLog::last_written_seq() const { return impl_->written_seq_; }
uint64_t EventLog::last_synced_seq() const { return impl_->synced_seq(); }
Status EventLog::error() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->error_;
}
const std::string& EventLog::dir() const { return impl_->options_.dir; }

}  // namespace limbic::state
