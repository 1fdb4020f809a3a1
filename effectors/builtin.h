// Internal to effectors/: helpers the built-in kinds share.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "effectors/effector.h"

namespace limbic::effectors {

// Keys every effector config may have besides its kind's own.
inline constexpr const char* kCommonKeys[] = {"kind", "concurrency", "rate", "burst",
                                              "max_attempts", "backoff"};

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

// The kinds in http_effector.cc and exec_effector.cc.
Result<std::unique_ptr<Effector>> MakeHttpEffector(const std::string& name, const nlohmann::json& cfg,
                                                   boost::asio::io_context& ioc,
                                                   std::shared_ptr<spdlog::logger> log);
Result<std::unique_ptr<Effector>> MakeExecEffector(const std::string& name, const nlohmann::json& cfg,
                                                   boost::asio::io_context& ioc,
                                                   std::shared_ptr<spdlog::logger> log);

}  // namespace limbic::effectors

#include <atomic>
#include <list>
#include <mutex>
#include <thread>

namespace limbic::effectors {

// Runs blocking jobs (a subprocess, an HTTP exchange) each on its own
// thread and posts the outcome back to the io thread. The destructor joins
// them all, so no job outlives its effector.
class BlockingRunner {
 public:
  explicit BlockingRunner(boost::asio::io_context& ioc) : ioc_(ioc) {}
  ~BlockingRunner();
  void Run(std::function<Outcome()> job, std::function<void(Outcome)> done);

 private:
  struct Job {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> finished;
  };
  boost::asio::io_context& ioc_;
  std::mutex mu_;
  std::list<Job> jobs_;
};

}  // namespace limbic::effectors
