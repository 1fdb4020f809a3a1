// ArchiveService: the archive in the loop (docs/archive.md).
//
// The ArchiveStore lives on a worker thread of its own: staging appends and
// their fsyncs, rollups, the search index and searches are file work that
// must not stall the io thread. The io thread hands it jobs with Run() and
// gets each answer posted back.
//
//   - staging follows the log: an applied entry_staged event schedules a
//     catch-up;
//   - every archive.consolidate_every, consolidation plans from the pools
//     (on the io thread, which owns the state) and submits the events;
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
#include "runtime/config.h"
#include "state/engine.h"

namespace limbic::runtime {

class ArchiveService {
 public:
  using Store = ModelWorker<archive::ArchiveStore>;
  using Reply = Store::Reply;

  // Destroying it stops the worker after the job it is running.
  ArchiveService(boost::asio::io_context& io, state::Engine& engine, const Config& config,
                 std::shared_ptr<spdlog::logger> log);

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
  // One consolidation pass now; replies {entries, threads, percepts,
  // actions} once the events are durable and staged.
  void Consolidate(Reply reply);

 private:
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
  Store store_;  // last: its worker stops before the members its jobs use go
};

}  // namespace limbic::runtime
