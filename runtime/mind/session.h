// Internal to runtime/mind/: a session as the executive keeps it, and the
// helpers mind.cc (set-up, the wake policy, a session's start and end),
// mind_budget.cc (the budget), mind_openai.cc (the openai kind) and
// mind_exec.cc (the exec kind) share.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <csignal>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/chat.h"
#include "base/json.h"
#include "base/subprocess.h"
#include "runtime/mind/mind.h"

namespace limbic::runtime {

constexpr TimeMs kExecGrace = 2000;  // an exec mind's SIGTERM to SIGKILL on a sleep
constexpr size_t kMaxErrorBytes = 300;  // an error kept in an event

// `s` cut to at most `max` bytes without splitting a UTF-8 sequence.
inline std::string Bounded(std::string s, size_t max) {
  if (s.size() <= max) return s;
  size_t at = max;
  while (at > 0 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
  s.resize(at);
  return s;
}

// Outside text (a wake's reason, a model's error, a program's output) as a
// log line shows it: valid UTF-8, control characters as '?', so it cannot
// forge a line or drive a terminal.
inline std::string ForLog(std::string_view text, size_t max = 2000) {
  return ShownText(text.substr(0, max));
}

// An exec mind's process and the thread that reads its pipes.
struct Mind::ExecRun {
  std::unique_ptr<Subprocess> proc;
  std::thread reader;
  std::mutex mu;       // guards `reaped` against a Kill racing the reap
  bool reaped = false;
  void Kill(int sig) {
    std::lock_guard<std::mutex> lock(mu);
    if (!reaped && proc) proc->Kill(sig);
  }
  ~ExecRun() {
    Kill(SIGKILL);
    if (reader.joinable()) reader.join();
  }
};

struct Mind::Session {
  std::string id;
  uint64_t seq = 0;
  WakeRequest wake;
  TimeMs woken_at = 0;
  std::chrono::steady_clock::time_point started;
  uint64_t steps = 0, tokens = 0;
  uint64_t uncounted = 0;    // tokens of its steps submitted and not yet in use_ (CountEvent)
  bool woken = false;        // mind_woken is durable
  bool context_done = false;
  nlohmann::json context;              // the bundle, or {"error": ...}
  nlohmann::json messages = nlohmann::json::array();
  std::shared_ptr<HttpInFlight> call;  // the model call in flight
  int retries = 0;
  boost::asio::steady_timer deadline, retry;
  // The step being run: the model's answer and what its tool calls came to.
  ChatTurn turn;
  TimeMs latency_ms = 0;
  nlohmann::json calls = nlohmann::json::array();    // [{name, ok, status?, error?, caused?}]
  nlohmann::json results = nlohmann::json::array();  // the tool messages for the next request
  bool in_tool = false;          // a tool call is in the API
  std::string ending;            // an outcome waiting for the tool call to return
  std::string ending_error;
  bool ended = false;            // mind_slept submitted
  std::vector<Done> on_end;      // Sleep's callers
  std::string slept_by;          // who asked it to sleep (mind_slept's actor)
  std::shared_ptr<ExecRun> exec;

  Session(boost::asio::io_context& ioc) : deadline(ioc), retry(ioc) {}
  TimeMs Elapsed() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 started)
        .count();
  }
};

}  // namespace limbic::runtime
