// ArchiveService: the archive in the loop (docs/archive.md).
//
// The ArchiveStore lives on a worker thread of its own: staging appends and
// their fsyncs, rollups, the search index and searches are file work that
// must not stall the io thread. The io thread hands it jobs with Run() and
// gets each answer posted back.
//
//   - staging follows the log: an applied entry_staged event schedules a
//     catch-up;
//   - every archive.consolidate_every (and on demand), a consolidation
//     pass: its steps (state/consolidate.h) are planned on a worker of
//     their own ("consolidate"), which reads the projection (any thread
//     may), and each is submitted on the io thread once the one before is
//     applied. A step is bounded, so the io thread spends a few
//     milliseconds per step (filtering stale expiries, submitting) and
//     serves requests between steps, whatever the size of the pools. One
//     pass runs at a time; asking while one runs gets the answer of the
//     next one, which starts when it ends;
//   - at each UTC day boundary (and once at start), past days with staged
//     entries are rolled up, when archive.rollup is set.
//
// A day document that cannot be read does not stop the runtime: the archive
// is "degraded" (healthz, the limbic_archive_unreadable_days gauge, a
// warning in the log) while the store's last index refresh could not read
// some day; every other day stays searchable and readable.
//
// Thread-safety: every public method on the io thread; the store lives on
// a ModelWorker (base/model_worker.h) and jobs run there.
#pragma once

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "archive/store.h"
#include "base/model_worker.h"
#include "base/worker.h"
#include "runtime/config.h"
#include "state/consolidate.h"
#include "state/engine.h"

namespace limbic::runtime {

class ArchiveService {
 public:
  using Store = ModelWorker<archive::ArchiveStore>;
  using Reply = Store::Reply;

  // Destroying it stops the worker after the job it is running.
  ArchiveService(boost::asio::io_context& io, state::Engine& engine, const Config& config,
                 std::shared_ptr<spdlog::logger> log);
  ~ArchiveService();

  // Opens the store (on the calling thread, before the loop runs) and
  // catches staging up with the log.
  Status Open();
  // Starts the timers.
  void Start();
  // Cancels the timers; jobs already queued still run and answer.
  void Stop();

  // Runs `job` on the store's worker; `reply` gets its result on the io thread.
  void Run(Store::Job job, Reply reply) { store_.Run(std::move(job), std::move(reply)); }
  //! The days the archive could not read at its last refresh (empty when
  //! it is healthy), as of the last job that answered.
  const std::vector<archive::Problem>& unreadable() const { return unreadable_; }

  // Sees every applied group: entry_staged events schedule a catch-up.
  void OnApplied(std::span<const state::Event> events);
  // One consolidation pass (after the one running, if any); replies
  // {entries, threads, percepts, actions, expired} once its events are
  // durable and staged. A pass cut short by Stop answers what it did; one
  // that fails answers the error (what it committed before stays).
  void Consolidate(Reply reply);
  //! Whether a consolidation pass is under way.
  bool consolidating() const { return pass_ != nullptr; }

 private:
  struct Pass;
  void StartPass(std::vector<Reply> replies);
  // Plans the pass's next step on the planner; OnPlanned gets it.
  void PlanStep();
  void OnPlanned(Result<state::ConsolidationPlan> step);
  // Sizes the next step by the io thread's time on this one.
  void Pace(double io_ms);
  // Submits a step's events as one batch; when the state no longer allows
  // one of them (the pools changed since the step was planned), each on
  // its own, leaving out those refused.
  void SubmitStep(state::Events events);
  void SubmitEach(state::Events events);
  // A batch of the step is applied (or failed): once none is in flight,
  // the next step is planned, or the pass ends.
  void OnSubmitted(const Status& status, std::span<const state::Event> committed);
  void StepSettled();
  void EndPass(Status status);
  void ScheduleConsolidate();
  void ScheduleRollup();
  void CatchUp();
  // Takes the store's unreadable days (io thread), logging a change.
  void NoteUnreadable(std::vector<archive::Problem> now);

  state::Engine& engine_;
  const Config& config_;
  std::shared_ptr<spdlog::logger> log_;
  boost::asio::steady_timer consolidate_timer_;
  boost::asio::steady_timer rollup_timer_;
  std::vector<archive::Problem> unreadable_;
  bool catch_up_queued_ = false;
  bool stopped_ = false;
  boost::asio::io_context& io_;
  std::unique_ptr<Pass> pass_;    // the pass under way, if any
  std::vector<Reply> next_pass_;  // those who asked while it ran
  Store store_;  // last but one: its worker stops before the members its jobs use go
  Worker planner_{"consolidate"};  // last: stops first, its jobs use pass_
};

}  // namespace limbic::runtime
