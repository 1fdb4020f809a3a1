// CheckpointService: takes checkpoints of the pools (state/checkpoint.h)
// while the runtime runs -- every checkpoints.every events, or every
// checkpoints.interval when events came -- and keeps what the retention
// policy says. A primary and a standby (`limbic follow`) alike: both apply
// groups through the same subscriber, so a standby keeps its own.
//
// Taking one never stalls the loop: OnApplied only compares seqs on the io
// thread; the checkpoint (RocksDB's Checkpoint, a read-back of its seq and
// digest, the manifest) and retention run on the service's Worker, while
// the engine commits -- the projection is consistent at any instant (each
// group is one WriteBatch with its applied_seq). One runs at a time.
//
// Thread-safety: the constructor, Open, OnApplied and the destructor on
// the io thread. The engine must outlive the service (the destructor joins
// the worker after the checkpoint it is taking).
#pragma once

#include <spdlog/logger.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <span>

#include "base/worker.h"
#include "runtime/config.h"
#include "state/engine.h"

namespace limbic::runtime {

class CheckpointService {
 public:
  CheckpointService(boost::asio::io_context& io, state::Engine& engine, const Config& config,
                    std::shared_ptr<spdlog::logger> log);
  ~CheckpointService();

  //! Removes what a crash left half-written and the checkpoints of another
  //! format (before the loop runs), then starts the worker and the
  //! interval timer. Nothing when checkpoints.enabled is false.
  Status Open();
  //! An applied group: starts a checkpoint when `every` events came since
  //! the last one and none is being taken.
  void OnApplied(std::span<const state::Event> events);
  //! Seq of the newest checkpoint taken or found (0 = none).
  uint64_t last_seq() const { return last_seq_.load(); }
  //! Checkpoints taken by this process, and takes that failed.
  uint64_t taken() const { return taken_.load(); }
  uint64_t failed() const { return failed_.load(); }
  //! Checkpoints on disk after the last retention (usable ones).
  uint64_t kept() const { return kept_.load(); }
  //! How long the last one took to take, in seconds (0 = none yet).
  double last_seconds() const { return last_seconds_.load(); }

 private:
  // `every` events have come since the last one, at applied seq `applied`.
  bool Due(uint64_t applied) const;
  // The newest usable checkpoint and how many there are, from the disk.
  void Count();
  void Start();  // io thread: posts one to the worker
  void Take();   // worker
  void ScheduleInterval();

  boost::asio::io_context& io_;
  state::Engine& engine_;
  const CheckpointsConfig options_;
  const std::string state_dir_;
  std::shared_ptr<spdlog::logger> log_;
  boost::asio::steady_timer timer_;
  std::atomic<bool> running_{false};
  std::atomic<uint64_t> last_seq_{0};  // the newest checkpoint's seq
  // Where `every` is counted from: the newest checkpoint's seq, or the
  // applied seq when taking one failed (not again before `every` more).
  std::atomic<uint64_t> due_from_{0};
  std::atomic<uint64_t> taken_{0};
  std::atomic<uint64_t> failed_{0};
  std::atomic<uint64_t> kept_{0};
  std::atomic<double> last_seconds_{0};
  bool open_ = false;
  // Last: stops first, its job uses the members above. In the background:
  // a checkpoint yields every core and the disk to the loop.
  Worker worker_{"checkpoint", /*background=*/true};
};

}  // namespace limbic::runtime
