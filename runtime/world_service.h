// WorldService: the world model in the loop (docs/world.md "In the loop").
//
// When world.daily is set, once at start and a few minutes past each UTC
// midnight, a pass on a worker thread of its own (extraction may wait on
// an LLM; it must not stall the io thread or the archive):
//   1. extracts each of the last 7 days before today, and every older day
//      with a staging file that is not in the ledger yet (at most 31 days
//      per pass), from the events log and the archive's staging
//      (DayInput); a day whose input has not changed since its last
//      extraction is skipped by WorldModel::Extract itself;
//   2. consolidates: surprising events into MEMORY.md, entity decay.
// Results and errors are logged; a failed day does not stop the others.
// Days whose input is empty or unchanged do not count towards the 31.
// Stop and the destructor make a running pass stop after the day it is
// extracting (which may wait on an LLM call: world.llm.timeout, at most
// three calls per day); a day still scoring its events gives up at once,
// writing nothing (WorldModel::set_stop).
//
// The HTTP API's world routes (api_world.cc) run their WorldModel calls on
// the same worker through Run, so passes and requests never overlap.
//
// Thread-safety: Open, Start, Stop and Run on the io thread; the WorldModel
// lives on a ModelWorker (base/model_worker.h) and is used only there.
#pragma once

#include <spdlog/logger.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>

#include "base/model_worker.h"
#include "runtime/config.h"
#include "state/engine.h"
#include "world/world.h"

namespace limbic::runtime {

class WorldService {
 public:
  using Model = ModelWorker<world::WorldModel>;

  WorldService(boost::asio::io_context& io, state::Engine& engine, const Config& config,
               std::shared_ptr<spdlog::logger> log);
  ~WorldService();  // stops the worker after the day a pass is extracting

  // Opens the world model (on the calling thread, before the loop runs).
  Status Open();
  // The first pass now, then one every day.
  void Start();
  void Stop();
  // Runs `job` on the model's worker; `reply` gets its result on the io
  // thread. A job that throws is logged as well as answered.
  void Run(Model::Job job, Model::Reply reply);

 private:
  void Schedule();
  void Pass(world::WorldModel& model, const std::string& today);  // on the worker
  void PassDays(world::WorldModel& model, const std::string& today);

  state::Engine& engine_;
  const Config& config_;
  std::shared_ptr<spdlog::logger> log_;
  boost::asio::steady_timer timer_;
  bool stopped_ = false;
  std::atomic<bool> stopping_{false};  // the worker's pass stops between days
  Model model_;  // last: its worker stops before the members its passes use go
};

}  // namespace limbic::runtime
