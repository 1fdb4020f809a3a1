// Internal to the events log: EventLog::Impl, shared by the writer
// (log.cc) and recovery (log_recover.cc). Nothing else includes it.
#pragma once

#include <spdlog/sinks/null_sink.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "state/event_log.h"
#include "state/segment.h"
#include "base/sha256.h"

namespace limbic::state {

class EventLog::Impl {
 public:
  explicit Impl(LogOptions o) : options_(std::move(o)) {
    if (!options_.env) options_.env = Env::Default();
    if (!options_.logger)
      options_.logger = std::make_shared<spdlog::logger>(
          "log", std::make_shared<spdlog::sinks::null_sink_mt>());
  }

  ~Impl() { (void)Close(); }

  Status Recover(LogRecovery* rec);
  void Submit(LogBatch batch);
  Status Flush();
  Status Close();

  Status Resume(uint64_t last_seq);
  uint64_t synced_seq() const {
    std::lock_guard<std::mutex> lock(mu_);
    return synced_seq_;
  }

  LogOptions options_;
  std::atomic<uint64_t> submitted_seq_{0};
  std::atomic<uint64_t> written_seq_{0};
  uint64_t returned_seq_ = 0;  // last seq whose callback has run, ok or not; guarded by mu_

  mutable std::mutex mu_;
  Status error_;  // sticky; guarded by mu_
  // Guarded by mu_. Not OK from a failed group until Resume: every batch
  // is refused with it (it was never written).
  Status wedged_;
  // Guarded by mu_. The failed group's outcome is not known yet (cutting the
  // log back failed); `unknown_` says so to whoever asks.
  bool unresolved_ = false;
  Status unknown_;

 private:
  Status ScanSegment(const Segment& seg, bool last, uint64_t sealed, const std::string& seal_sha,
                     uint64_t* expected, LogRecovery* rec, Sha256* sha, bool* prefix_ok,
                     bool repair);
  Status RecoverSegment(const Segment& seg, bool last, uint64_t* expected, LogRecovery* rec,
                        Sha256* sha);
  Status SealOpenSegment();
  void WriterLoop();
  Status WriteGroup(std::vector<LogBatch>& group);
  Status FailGroup(const Status& cause);
  Status Undo();
  Status OpenSegment(uint64_t first_seq);
  Status Append(std::string_view data);
  Status SyncNow();

  std::condition_variable work_cv_;  // writer waits for work
  std::condition_variable done_cv_;  // Flush waits for the writer
  std::vector<LogBatch> queue_;
  bool stop_ = false;
  bool closed_ = false;
  bool started_ = false;
  int flush_requests_ = 0;
  int resume_requests_ = 0;  // Resume() calls waiting for the writer to retry Undo
  uint64_t synced_seq_ = 0;  // guarded by mu_
  std::thread writer_;

  // Writer-thread state: the open segment, what it holds (for its seal).
  std::unique_ptr<WritableFile> file_;
  std::string buf_;
  uint64_t unsynced_through_ = 0;
  std::string seg_path_;
  uint64_t seg_first_seq_ = 0;
  TimeMs last_ts_ = 0;  // of the last event written (or recovered)
  Sha256 seg_sha_;      // of the open segment's bytes
  // Where the log stood before the group being written: what Undo restores.
  struct Mark {
    std::string path;        // the open segment ("" = none yet)
    uint64_t first_seq = 0;  // its first seq
    uint64_t size = 0;       // its bytes, all written by earlier groups
    uint64_t last_seq = 0;   // the last seq in the log
    TimeMs last_ts = 0;
  } mark_;
};

}  // namespace limbic::state
