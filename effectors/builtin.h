// Internal to effectors/: helpers the built-in kinds share.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "effectors/effector.h"

namespace limbic::effectors {

// Keys every effector config may have besides its kind's own.
inline constexpr const char* kCommonKeys[] = {
    "kind", "concurrency", "rate", "burst", "max_attempts", "backoff", "require_approval"};

// InvalidArgument "effectors.NAME.KEY: unknown key" for a key that is neither
// common nor in `known`.
Status CheckKeys(const std::string& name, const nlohmann::json& config,
                 std::initializer_list<const char*> known);
// "effectors.NAME.KEY: why"
Status ConfigError(const std::string& name, const std::string& key, const std::string& why);
// A duration key ("10s" or ms), or `dflt` when absent.
Result<TimeMs> DurationKey(const std::string& name, const nlohmann::json& config,
                           const std::string& key, TimeMs dflt);

// Renders a body template: strings may hold {{action.id}}, {{action.type}},
// {{action.idempotency_key}}, {{action.attempt}}, {{action.thread_id}},
// {{payload}} and {{payload.a.b}}. A string that is exactly one placeholder
// becomes the value itself (any JSON type). A missing path is an error.
Result<nlohmann::json> RenderTemplate(const nlohmann::json& tmpl, const Delivery& d);
// Checks a template when the config is loaded: every {{ closed, every
// placeholder one RenderTemplate knows. Errors name the effector and the key
// (`key`, then the path inside the template):
// "effectors.hook.body.text: unknown placeholder {{action.name}} (...)".
Status CheckTemplate(const std::string& name, const std::string& key, const nlohmann::json& tmpl);

// The kinds in http_effector.cc and exec_effector.cc.
Result<std::unique_ptr<Effector>> MakeHttpEffector(const std::string& name, const nlohmann::json& cfg,
                                                   boost::asio::io_context& ioc,
                                                   std::shared_ptr<spdlog::logger> log);
Result<std::unique_ptr<Effector>> MakeExecEffector(const std::string& name, const nlohmann::json& cfg,
                                                   boost::asio::io_context& ioc,
                                                   std::shared_ptr<spdlog::logger> log);
// In jetstream_effector.cc.
Result<std::unique_ptr<Effector>> MakeJetStreamEffector(const std::string& name,
                                                        const nlohmann::json& cfg,
                                                        boost::asio::io_context& ioc,
                                                        std::shared_ptr<spdlog::logger> log);

}  // namespace limbic::effectors

#include <atomic>
#include <list>
#include <mutex>
#include <thread>

namespace limbic::effectors {

// How Cancel() reaches a job blocked on a thread. While the job is blocked
// on something it arms the flag with a way to interrupt it (stop an
// io_context, kill a process group); Cancel() runs that under the flag's
// lock, so the job disarms before the thing goes away. Thread-safe.
class CancelFlag {
 public:
  // Runs `interrupt` at once if already cancelled.
  void Arm(std::function<void()> interrupt);
  void Disarm();
  void Cancel();
  bool cancelled() const;

 private:
  mutable std::mutex mu_;
  bool cancelled_ = false;
  std::function<void()> interrupt_;
};

// Runs blocking jobs (the exec kind's subprocesses) each on its own
// thread and posts the outcome back to the io thread. A job cancelled before
// it returned reports Outcome::Cancelled() unless it completed. The
// destructor cancels and joins them all, so no job outlives its effector.
class BlockingRunner {
 public:
  using Job = std::function<Outcome(CancelFlag& cancel)>;
  explicit BlockingRunner(boost::asio::io_context& ioc) : ioc_(ioc) {}
  ~BlockingRunner();
  void Run(Job job, std::function<void(Outcome)> done);
  // Cancels every job running now.
  void CancelAll();

 private:
  struct Running {
    std::thread thread;
    std::shared_ptr<CancelFlag> cancel;
    std::shared_ptr<std::atomic<bool>> finished;
  };
  boost::asio::io_context& ioc_;
  std::mutex mu_;
  std::list<Running> jobs_;
};

}  // namespace limbic::effectors
