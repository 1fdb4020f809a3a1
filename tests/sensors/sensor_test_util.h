// Small real doubles for sensor tests: sinks, loggers, an io_context runner.
#pragma once

#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/ostream_sink.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <sstream>
#include <vector>

#include "sensors/builtin.h"

namespace limbic::sensors::testing {

using nlohmann::json;

inline std::shared_ptr<spdlog::logger> Quiet() {
  return std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::null_sink_mt>());
}

// Records requests, refuses those without a source, commits at once.
struct Recorder {
  std::vector<json> got;
  PerceptSink Sink() {
    return [this](json r, Committed done) {
      if (!r.contains("source")) return Status::InvalidArgument("missing source");
      got.push_back(std::move(r));
      if (done) done(Status::OK(), {});
      return Status::OK();
    };
  }
};

// Records requests and holds their commits until the test says so, like a
// log whose fsync is slow.
struct SlowCommitter {
  std::vector<json> got;
  std::vector<Committed> pending;
  PerceptSink Sink() {
    return [this](json r, Committed done) {
      if (!r.contains("source")) return Status::InvalidArgument("missing source");
      got.push_back(std::move(r));
      pending.push_back(std::move(done));
      return Status::OK();
    };
  }
  // Makes everything handed over so far durable.
  void CommitAll() {
    std::vector<Committed> now;
    now.swap(pending);
    for (Committed& done : now)
      if (done) done(Status::OK(), {});
  }
};

// A logger whose lines the test can read (thread-safe sink).
struct CapturedLog {
  std::ostringstream out;
  std::shared_ptr<spdlog::logger> log =
      std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  std::string Text() {
    log->flush();
    return out.str();
  }
};

// Runs the io_context until `pred` or the deadline.
inline bool RunUntil(boost::asio::io_context& ioc, const std::function<bool()>& pred,
                     int ms = 5000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!pred() && std::chrono::steady_clock::now() < deadline) {
    ioc.restart();
    ioc.run_for(std::chrono::milliseconds(20));
  }
  return pred();
}

}  // namespace limbic::sensors::testing
