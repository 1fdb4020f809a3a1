// The HTTP API of a real runtime, reached without sockets: for the fuzz
// targets `http` and `mcp`.
//
// A runtime::Runtime runs on its own thread, as `limbic run` does, in a
// scratch state dir, on the shipped config with these changes: the API on
// an ephemeral loopback port (it binds, nothing connects), no timer sensor
// (percepts the fuzzer did not send would make runs differ), and
// durability "none" (a fuzz run needs no fdatasync). Its threads get the
// binary's 256 MiB stacks (runtime/cli/main.cc). Call() hands one request to
// runtime::Dispatch -- the server's own routing after a request is read --
// on the runtime's io thread, and waits for the answer.
//
// Thread-safety: Call and Restart from one thread (the fuzzer's).
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "runtime/api/api.h"
#include "runtime/http/server.h"
#include "runtime/runtime.h"
#include "fuzz/fuzz_util.h"

namespace limbic::fuzz {

// Drops `wait` from the request's query string: a long-poll would make one
// input last up to 60 s.
void DropWait(runtime::HttpRequest& req);

class InProcessApi {
 public:
  // The process's, started on first use; lives until exit.
  static InProcessApi& Get();

  struct Answer {
    int status = 0;  // 0: not answered within kAnswerTimeoutMs
    std::string content_type;
    std::string body;
  };
  // A handler must answer within this; a request that never gets an answer
  // is a bug (a client would hang), so the targets check for it.
  static constexpr int kAnswerTimeoutMs = 30000;

  // `req` as the server hands it to Dispatch (SetTarget done, header
  // names lower-cased). An SSE route answers 200 with the frames its
  // handler sent at once (then the stream is closed), or its rejection.
  Answer Call(runtime::HttpRequest req);

  // Stops the runtime and starts a fresh one in a new state dir, so state
  // does not grow without bound over millions of inputs.
  void Restart();
  // Calls since the last (re)start.
  uint64_t calls() const { return calls_; }

 private:
  InProcessApi() = default;
  void Start();
  void Stop();

  std::unique_ptr<ScratchDir> dir_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<runtime::Runtime> runtime_;
  std::unique_ptr<runtime::Api> api_;
  std::unique_ptr<runtime::Router> router_;
  // The server's checks as a loopback API without a token holds them.
  runtime::ExposurePolicy exposure_{"127.0.0.1", {}, {}};
  std::string no_token_;
  runtime::RequestGate gate_{exposure_, no_token_, false};
  std::thread thread_;
  uint64_t calls_ = 0;
};

}  // namespace limbic::fuzz
