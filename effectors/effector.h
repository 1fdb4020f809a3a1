// Effectors: how outbox actions reach the world.
//
// The runtime's Outbox (runtime/outbox.h) decides when to deliver and
// records every step as an event; an Effector only performs one delivery
// attempt and says how it went. Built-in kinds (docs/effectors.md): log,
// file, http (https through OpenSSL), exec, jetstream (a NATS JetStream
// publish). C++ adapters add kinds with RegisterEffectorKind.
//
// Thread affinity: Deliver and Cancel are called on the runtime's
// io_context thread, and Deliver must call `done` exactly once, on that
// thread, never before Deliver returns. Blocking work (network I/O,
// subprocesses, fsync) runs elsewhere and comes back with
// boost::asio::post. The io_context and the Effector must outlive every
// delivery's `done`; destroying an Effector cancels what it has in flight
// and waits (briefly) for it.
#pragma once

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "state/event.h"

namespace limbic::effectors {

// One attempt to deliver one outbox action.
struct Delivery {
  std::string action_id;
  std::string effector;
  std::string type;
  std::string idempotency_key;  // the same on every attempt, across restarts
  std::string thread_id;        // may be empty
  nlohmann::json payload;
  int attempt = 1;
};

struct Outcome {
  enum class Kind {
    kComplete,   // delivered
    kRetry,      // transient: 5xx, timeout, connection refused, exit 75
    kPermanent,  // will never work: 4xx, 3xx, bad template, other exit codes
    kCancelled,  // interrupted by Cancel(): whether it arrived is unknown
  };
  Kind kind = Kind::kComplete;
  std::string error;
  nlohmann::json result;  // e.g. {"status": 201}

  static Outcome Complete(nlohmann::json result = nullptr) { return {Kind::kComplete, "", std::move(result)}; }
  static Outcome Retry(std::string error) { return {Kind::kRetry, std::move(error), nullptr}; }
  static Outcome Permanent(std::string error) { return {Kind::kPermanent, std::move(error), nullptr}; }
  static Outcome Cancelled() { return {Kind::kCancelled, "cancelled", nullptr}; }
};

class Effector {
 public:
  virtual ~Effector() = default;
  virtual const std::string& name() const = 0;
  virtual void Deliver(const Delivery& delivery, std::function<void(Outcome)> done) = 0;
  // Interrupts every delivery in flight, promptly: the outbox calls it when
  // the shutdown grace (outbox.shutdown_grace) runs out, so the process can
  // exit without waiting for an effector's own timeout. http closes its
  // connections, exec kills the program's process group. Each interrupted
  // delivery's `done` still runs (if the io_context does) with kCancelled;
  // one that finished first reports its real outcome. The outbox records
  // nothing for kCancelled, so the action stays inflight and is delivered
  // again, with the same idempotency key, on the next start. Deliveries
  // started later are not affected. The default suits effectors whose
  // Deliver never blocks (log, file).
  virtual void Cancel() {}
};

using EffectorFactory = std::function<Result<std::unique_ptr<Effector>>(
    const std::string& name, const nlohmann::json& config, boost::asio::io_context& ioc,
    std::shared_ptr<spdlog::logger> log)>;

// Adds (or replaces) a kind; config {"kind": KIND, ...} selects it.
void RegisterEffectorKind(const std::string& kind, EffectorFactory factory);

// Builds the effector `name` from its config object. Errors name the key:
// "effectors.hook.url: must be an http:// or https:// URL".
Result<std::unique_ptr<Effector>> MakeEffector(const std::string& name, const nlohmann::json& config,
                                               boost::asio::io_context& ioc,
                                               std::shared_ptr<spdlog::logger> log);

// Delivery limits any effector config may carry, enforced by the Outbox:
//   "concurrency": N (default 4), "rate": per second (0 = unlimited),
//   "burst": tokens (default = rate), "max_attempts": N, "backoff": duration,
//   "require_approval": true (every action waits for approval)
struct EffectorLimits {
  int concurrency = 4;
  double rate = 0;
  double burst = 0;
  int max_attempts = 0;  // 0 = the outbox default
  TimeMs backoff = 0;    // 0 = the outbox default
  bool require_approval = false;
};
Result<EffectorLimits> ParseLimits(const nlohmann::json& config);

// A dry run of the effector `name` (a sandbox's, runtime/sandbox.h): each
// delivery appends one JSON line {ts, effector, kind, action_id, type,
// idempotency_key, attempt, thread_id, payload, dry_run: true} to `path`
// (created if missing) and completes with result {"dry_run": true}.
Result<std::unique_ptr<Effector>> MakeDryRunEffector(const std::string& name,
                                                     const std::string& kind,
                                                     const std::string& path,
                                                     boost::asio::io_context& ioc);

// What an action_enqueued must meet before it is committed, given the
// config's "effectors" object: its effector is configured (else
// InvalidArgument 'field "effector": unknown effector "x" (configured: ...)'),
// and an effector with "require_approval" marks it require_approval. Other
// events pass untouched. The API, the reflexes and the offline CLI all
// enqueue through it, so none queues what the runtime would refuse.
Status PrepareEnqueued(const nlohmann::json& effectors, std::vector<state::Event>* events);

}  // namespace limbic::effectors
