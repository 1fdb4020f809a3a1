// Engine: a state dir opened for use. It owns the lock, the events log and
// the projections, recovers on open, and is the one write path:
//
//   Submit(events, done)                                  [owner thread]
//     1. assign seq and ts; validate: schema (ValidateEventFields), the
//        dedup window (CheckDedupWindow) and state (Reduce onto the pending
//        overlay = applied state + everything queued but not yet applied);
//        on error nothing is queued, no seq is used, the error is returned
//     2. prepare the RocksDB writes of the batch (Projection::Prepare);
//        queue the batch for the log
//   OnGroupWritten                                  [log writer thread]
//     3. group commit: write + fdatasync once per group
//     4. commit the group's prepared writes and applied_seq to RocksDB in
//        one WriteBatch
//   CompleteGroup                                         [owner thread]
//     5. drop the group's changes from the pending overlay; acknowledge
//        (each batch's `done`)
//     6. publish the group to listeners (reflexes, SSE, ...)
//
// Each event is reduced once (step 1); steps 3-4 run off the owner thread.
//
// Failed writes (a full disk) are survived, and no answer lies:
//   - step 3 failed: the batch's `done` gets the log's Unavailable status,
//     "not written: ..." (provably not in the log) or "outcome unknown:
//     ..." (retry with the same id). Every batch queued after it fails
//     "not written" too, and their seqs are given out again. The next
//     Submit after they have all come back resumes the log (for an unknown
//     outcome: once the log could be cut back) and goes on.
//   - step 4 failed: the events are durable, so the batch is acknowledged
//     (OK) but not yet published; the projections lag the log. The next
//     Submit first has RocksDB resume and re-applies the log after
//     applied_seq (as recovery does), then publishes what was held back;
//     until that succeeds every Submit fails "not written".
// health() says what failed until a write gets through again.
//
// State layout under EngineOptions::state_dir:
//   limbic.lock   exclusive flock while a process writes; holds its pid
//   events/       the events log (event_log.h)
//   db/           RocksDB projections (projection.h)
//   replaying     only while a replay builds the dir (replay.h): a dir a
//                 replay or fork left unfinished (killed) is refused by Open
//
// Threading: one owner thread calls every method (the runtime's io_context
// thread, or the CLI's main thread). Durable groups come back from the log's
// writer thread through EngineOptions::post, which must run the task on the
// owner thread (boost::asio::post). Without `post`, the owner drives
// completions itself with WaitIdle().
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <spdlog/logger.h>
#include <string>
#include <unordered_map>
#include <vector>

#include "state/dedup.h"
#include "base/env.h"
#include "state/event.h"
#include "state/event_log.h"
#include "state/projection.h"
#include "state/reducer.h"
#include "base/status.h"
#include "base/time.h"

namespace limbic::state {

struct EngineOptions {
  std::string state_dir;
  Env* env = nullptr;                          // nullptr = Env::Default()
  const Clock* clock = nullptr;                // nullptr = SystemClock::Default()
  Durability durability = Durability::kFsync;
  int interval_ms = 100;
  uint64_t segment_bytes = 64ull << 20;
  // Open without the lock, RocksDB read-only, log read-only. Submit fails.
  bool read_only = false;
  // A command, not `limbic run`: see ProjectionOptions::short_lived.
  bool short_lived = false;
  // Projections that have applied nothing are built from a log of at
  // least this many events by replay's bulk load (table files ingested);
  // shorter logs are applied chunk by chunk, which starts faster (the bulk
  // load costs 100-150 ms more up front; from about 200,000 events it is
  // 1.7-2× faster).
  uint64_t bulk_rebuild_events = 50000;
  std::shared_ptr<spdlog::logger> logger;      // nullptr = drop log lines
  // Runs a task on the owner thread; called from the log writer thread.
  std::function<void(std::function<void()>)> post;
  // Passed to the log: each fdatasync's duration, on the writer thread.
  std::function<void(double seconds)> on_sync;
  // The operator has decided to take segments that no longer match their
  // seals as they now are (`limbic fsck --accept-changed-segments`): they
  // are resealed (listed in EngineRecovery::log.changed_segments) and, when
  // there are any, the projections are rebuilt from the whole log, since
  // they were made from what the segments held before. Never set by a start.
  bool accept_changed_segments = false;
  // RocksDB's file layer (ProjectionOptions::rocks_env); nullptr = default.
  rocksdb::Env* rocks_env = nullptr;
  // A supplied percept id stays taken this long after its percept left the
  // pool (percepts.dedup_window; 0 = only while it is in the pool). Checked
  // on new commands only: replay and recovery apply the log as it is.
  TimeMs dedup_window = kDefaultDedupWindow;
  // Called on the owner thread, in seq order, as each group becomes durable
  // (step 5), with its last seq: what replication may publish.
  std::function<void(uint64_t last_seq)> on_durable;
};

// What Open found and did.
struct EngineRecovery {
  LogRecovery log;
  uint64_t applied_seq_at_open = 0;  // from RocksDB
  uint64_t reapplied = 0;            // log events re-applied after it
  bool rebuilt = false;              // projections rebuilt from the whole log
  uint64_t from_checkpoint = 0;      // db/ was empty: restored from the checkpoint at this seq
};

class Engine {
 public:
  // Called once per batch when it is durable and applied (status OK), or
  // when it could not be (the log broke). `events` carry their seq and ts.
  using Done = std::function<void(const Status& status, std::span<const Event> events)>;
  // Called after each applied group with all its events, in seq order.
  using Listener = std::function<void(std::span<const Event> events)>;

  // Takes the lock (Busy naming the holder's pid if taken), opens the
  // projections and the log, and re-applies log events after applied_seq.
  // Refuses (Corruption) when the projections are ahead of the log.
  static Result<std::unique_ptr<Engine>> Open(EngineOptions options,
                                              EngineRecovery* recovery = nullptr);
  // Flushes, applies what is pending, closes the log and RocksDB.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Steps 1-2 of the write path. `events` need type and fields; seq and ts
  // are assigned here (ts = the clock, never going backwards). Returns the
  // validation error, if any, without queuing anything; otherwise `done`
  // runs later on the owner thread. `done` may be empty.
  Status Submit(std::vector<Event> events, Done done);

  // The write path for events that already have their seq and ts: a hot
  // standby applying its primary's log (runtime/replication/replicator.h). The first
  // must have next_seq(), the rest follow contiguously, and no ts may go
  // back; they are validated as a committed line is (TimeRule::kLogged, no
  // dedup window: the primary checked it) and reduced like any other.
  Status SubmitReplicated(std::vector<Event> events, Done done);

  // Replication's hold on writes and acknowledgements (runtime/replication/replicator.h).
  // While the gate is not OK every Submit fails with it: a fenced primary, or
  // quorum mode while the events cannot be replicated.
  void set_write_gate(Status gate) { gate_ = std::move(gate); }
  const Status& write_gate() const { return gate_; }
  // With held acks (quorum mode) a batch that is durable and applied is
  // acknowledged only when ReleaseHeld covers its last seq; FailHeld
  // answers every held batch with `status` instead (the events stay in the
  // log: "outcome unknown" for their callers). Listeners still see each
  // group at once.
  void set_hold_acks(bool hold) { hold_acks_ = hold; }
  void ReleaseHeld(uint64_t through_seq);
  void FailHeld(const Status& status);
  size_t held_acks() const { return held_.size(); }

  // Submit and wait until durable and applied (for the CLI and tests; needs
  // no `post`). *committed receives the events with their seqs.
  Status Commit(std::vector<Event> events, std::vector<Event>* committed = nullptr);

  // Runs the completions (steps 5-6) of groups written so far. With `block`
  // and batches in flight, first waits until at least one group is written.
  // Only without EngineOptions::post (with it, the owner's executor runs
  // completions). Returns the sticky error, if any.
  Status Poll(bool block);
  // Poll(true) until every submitted batch is acknowledged.
  Status WaitIdle();

  // Flushes the log (fdatasync whatever the mode), then applies completions.
  Status Flush();

  void AddListener(Listener listener);

  // The seq the next submitted event will get. Ids of created records are
  // "<prefix>-<seq of the creating event>", see commands.h.
  uint64_t next_seq() const { return next_seq_; }
  // Last seq durable and applied to the projections.
  uint64_t applied_seq() const { return projection_->applied_seq(); }
  // Last seq durable in the events log (EventLog::last_synced_seq): what a
  // restart starts from. After a failed RocksDB write (see above) it is
  // ahead of applied_seq until the projections catch up.
  uint64_t durable_seq() const { return log_->last_synced_seq(); }
  // Batches submitted but not yet acknowledged.
  size_t pending_batches() const { return inflight_.size(); }

  // The applied state; what reads should see.
  const Projection& projection() const { return *projection_; }
  // Applied state plus everything submitted and not yet applied.
  const RecordReader& pending_view() const { return pending_; }

  const Clock& clock() const { return *clock_; }
  bool read_only() const { return options_.read_only; }
  const std::string& state_dir() const { return options_.state_dir; }
  std::string events_dir() const { return options_.state_dir + "/events"; }
  // Sticky error: the state is broken (a bug, corruption); every Submit
  // fails with it. A failed write (see above) is not sticky.
  const Status& error() const { return error_; }
  // OK, or why the last write did not get through (the log could not write
  // or sync, or the projections could not be written): a write failed and
  // none has been durable and applied since.
  const Status& health() const { return health_; }

 private:
  Engine(EngineOptions options);
  Status Recover(EngineRecovery* recovery);
  // Log writer thread: commit the group to RocksDB, hand it to the owner.
  void OnGroupWritten(const Status& status, std::vector<LogBatch>&& group);
  // Owner thread: steps 5 and 6 for every group written so far.
  void DrainCompletions();
  void CompleteGroup(Status status, bool applied, std::vector<LogBatch>& group);
  // Before a Submit after a failed write: resumes the log and catches the
  // projections up (see above). OK when there is nothing to get over.
  Status GetOverFailure();
  // Re-applies the log's events after applied_seq to the projections.
  Status ReapplyLog(uint64_t* reapplied);
  // Projections that have applied nothing (db/ missing or discarded) built
  // from the log after their applied_seq (0, or a checkpoint's) by
  // replay's bulk load, then opened as `popts` say.
  Status RebuildProjections(const ProjectionOptions& popts, uint64_t* reapplied);
  // Projections that have applied nothing: db/ becomes a copy of the
  // newest checkpoint at or before `last_seq` whose event the log holds
  // (made beside it, then renamed: a crash leaves db/ empty, never half
  // copied). Nothing changes when there is none.
  Status RestoreFromCheckpoint(const ProjectionOptions& popts, uint64_t last_seq,
                               EngineRecovery* recovery);

  EngineOptions options_;
  const Clock* clock_;
  std::unique_ptr<FileLock> lock_;
  std::unique_ptr<Projection> projection_;
  std::unique_ptr<EventLog> log_;
  Overlay pending_{nullptr};
  uint64_t next_seq_ = 1;
  TimeMs last_ts_ = 0;
  uint64_t next_tag_ = 1;
  struct Inflight {
    Done done;
    std::vector<Overlay::Key> keys;  // records the batch changed
  };
  std::unordered_map<uint64_t, Inflight> inflight_;  // tag -> batch
  std::vector<Listener> listeners_;
  Status error_;
  Status health_;
  Status gate_;
  bool hold_acks_ = false;
  struct Held {
    uint64_t last_seq;
    Done done;
    std::vector<Event> events;
  };
  std::deque<Held> held_;
  // Submit and SubmitReplicated: steps 1-2; `replicated` keeps seq and ts.
  Status SubmitImpl(std::vector<Event> events, Done done, bool replicated);
  // A group failed in the log; seqs from rollback_seq_ on are given out again.
  bool write_failed_ = false;
  uint64_t rollback_seq_ = 0;
  // Acknowledged (durable) events the projections lack, not yet published.
  std::vector<Event> unapplied_;

  // Shared with the log's writer thread, under mu_: prepared writes by
  // batch tag, and groups written (and committed) waiting for the owner.
  std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<uint64_t, std::unique_ptr<PreparedWrite>> prepared_;
  struct Written {
    Status status;  // the log's
    bool applied;   // committed to the projections
    std::vector<LogBatch> group;
  };
  std::deque<Written> written_;
  // A failed commit: later groups are not committed until the owner has
  // caught the projections up and cleared it.
  Status apply_error_;
};

// The lock file, events dir and db dir of a state dir.
std::string LockFilePath(const std::string& state_dir);
std::string EventsDirPath(const std::string& state_dir);
std::string DbDirPath(const std::string& state_dir);
std::string ReplayingFilePath(const std::string& state_dir);
//! FailedPrecondition, naming the file, when `state_dir` holds a replay or
//! fork that was cut short (ReplayingFilePath: see ReplayOptions); every
//! command but fsck refuses such a dir, reads included (its log is part of
//! one, and may not be what it claims). env nullptr: Env::Default().
Status RefuseUnfinished(const std::string& state_dir, Env* env = nullptr);

//! Whether `dir` is a state dir: it holds limbic.lock (a runtime or a
//! command has written it), or both events/ and db/ (a replay or fork made it).
bool IsStateDir(const std::string& dir);
//! The state dir that `path` is, or is inside of (the nearest one, its
//! symlinks resolved as far as they exist), or "" when there is none. A new
//! state dir is never made inside another one: replay, fork and follow
//! would write into a live log's or database's files.
std::string EnclosingStateDir(const std::string& path);

}  // namespace limbic::state
