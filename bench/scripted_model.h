// A scripted OpenAI-compatible chat-completions server for the mind's
// benchmark (bench/mind_bench.cc): loopback HTTP/1.1 on a thread of its own
// (poll), one request per connection (limbic's client sends "Connection:
// close"), each answered as soon as it has been read in full, by the script.
// It stamps with steady_clock when each request had been read and when its
// answer had been written, and reads the woken percept from the request (the
// user message's JSON, wake.percept_ids).
//
// Answers: choices[0].message with tool_calls [{id, type: "function",
// function: {name, arguments: JSON text}}] or content "Done.", and usage
// {prompt_tokens: 100, completion_tokens: 10}.
//
// Thread-safety: every public member may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace limbic::bench {

class ScriptedModel {
 public:
  enum class Script {
    kAnswer,       //!< a final answer at once
    kProcess,      //!< process_percept on the woken percept, then a final answer
    kReadProcess,  //!< get_percept, then process_percept, then a final answer
  };
  //! One request and its answer.
  struct Exchange {
    std::chrono::steady_clock::time_point read;      //!< the request read in full
    std::chrono::steady_clock::time_point answered;  //!< the answer written
    size_t turn = 0;      //!< tool results in the request: 0 for a session's first
    std::string percept;  //!< the wake's percept_ids[0]
    bool final = false;   //!< answered without a tool call
  };

  //! Listens on a free loopback port; throws std::runtime_error if it cannot.
  ScriptedModel();
  ~ScriptedModel();
  ScriptedModel(const ScriptedModel&) = delete;
  ScriptedModel& operator=(const ScriptedModel&) = delete;

  //! http://127.0.0.1:PORT, for mind.url.
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  //! How the requests from now on are answered.
  void SetScript(Script s) { script_ = s; }
  //! What was exchanged since the last Take, in order.
  std::vector<Exchange> Take();
  //! Waits until `n` final answers have been written since the start;
  //! false after `timeout_ms`.
  bool WaitFinals(size_t n, int timeout_ms);
  //! Final answers written since the start.
  size_t finals();

 private:
  struct Conn {
    int fd;
    std::string in;
  };
  void Loop();
  // Reads what arrived; answers a complete request. False: done with `c`.
  bool Serve(Conn& c);
  // The chat answer to `request`, by the script.
  std::string Answer(const std::string& request, Exchange* x);

  int listen_ = -1;
  uint16_t port_ = 0;
  int stop_pipe_[2] = {-1, -1};
  std::atomic<Script> script_{Script::kAnswer};
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Exchange> exchanges_;  // guarded by mu_
  size_t finals_ = 0;                // guarded by mu_
  std::thread thread_;               // last: started once the rest exists
};

}  // namespace limbic::bench
