// Outbox: delivers queued actions to effectors, at least once.
//
// An action in pending_approval waits for action_approved (then it is
// pending) or action_rejected (never delivered).
// For each action (pool record, status pending / failed / inflight):
//   1. wait for a free slot of its effector (concurrency limit) and a token
//      (rate limit);
//   2. log action_sent {attempt} and wait until it is durable -- so after a
//      crash the action is known to be in flight and is delivered again,
//      with the same idempotency key;
//   3. Effector::Deliver;
//   4. log the outcome: action_complete; action_failed {retry_at} and a timer
//      for the retry (exponential backoff with jitter); or action_dead after
//      the last attempt or on a permanent failure; nothing when the delivery
//      was cancelled at shutdown (see Stop).
// An action naming an effector that is not configured goes dead at once.
//
// Thread-safety: io thread only. Engine and effectors must outlive it.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <spdlog/logger.h>
#include <string>
#include <unordered_map>

#include "effectors/effector.h"
#include "effectors/policy.h"
#include "runtime/config.h"
#include "runtime/metrics.h"
#include "state/engine.h"

namespace limbic::runtime {

class Outbox {
 public:
  struct EffectorSlot {
    std::unique_ptr<effectors::Effector> effector;
    effectors::EffectorLimits limits;
  };

  Outbox(boost::asio::io_context& ioc, state::Engine& engine,
         std::map<std::string, EffectorSlot>& effectors, const OutboxConfig& config,
         Metrics& metrics, std::shared_ptr<spdlog::logger> log);
  ~Outbox();

  // Schedules every pending, failed (at its retry time) and inflight action
  // in the pool: inflight ones are redelivered (a crash interrupted them).
  Status Start();
  // Engine listener: schedules newly enqueued actions.
  void OnEvents(std::span<const state::Event> events);
  // Stops dispatching; `done` runs once no delivery is in flight, or after
  // `grace`, whichever is first. At the deadline every effector is told to
  // Cancel() what it still has in flight; those deliveries record nothing,
  // so their actions stay inflight and are delivered again (same
  // idempotency key) on the next start. Undelivered actions stay in the pool.
  void Stop(TimeMs grace, std::function<void()> done);

  size_t inflight() const { return inflight_total_; }
  // Called when a delivery starts (commit-to-dispatch measurement hook).
  std::function<void(const std::string& action_id)> on_dispatch;

 private:
  struct Lane;
  Lane* LaneFor(const std::string& effector);
  void Schedule(const std::string& action_id, const std::string& effector, TimeMs at);
  // An approved or retried action: scheduled for its effector now.
  void ScheduleApproved(const std::string& action_id, TimeMs now);
  void Pump(Lane& lane);
  void Send(Lane& lane, const std::string& action_id);
  void Deliver(Lane& lane, const nlohmann::json& action, int attempt);
  void OnOutcome(Lane& lane, const std::string& action_id, int attempt, effectors::Outcome outcome);
  void Record(std::vector<state::Event> events, const std::string& what);
  void MaybeFinishStop();

  boost::asio::io_context& ioc_;
  state::Engine& engine_;
  std::map<std::string, EffectorSlot>& effectors_;
  OutboxConfig config_;
  Metrics& metrics_;
  std::shared_ptr<spdlog::logger> log_;
  std::map<std::string, std::unique_ptr<Lane>> lanes_;
  std::unordered_map<std::string, std::unique_ptr<boost::asio::steady_timer>> retry_timers_;
  std::mt19937_64 rng_;
  size_t inflight_total_ = 0;
  bool stopping_ = false;
  bool cancelled_ = false;  // the shutdown grace ran out
  std::function<void()> stop_done_;
  std::unique_ptr<boost::asio::steady_timer> stop_timer_;
};

}  // namespace limbic::runtime
