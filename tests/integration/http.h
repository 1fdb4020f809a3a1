// HTTP for the integration tests: a blocking client, an SSE reader, a
// scripted server (the far end of the http effector), and a harness that
// runs `limbic run` on a config and finds its port.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "process.h"

namespace limbic::testing {

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  nlohmann::json Json() const { return nlohmann::json::parse(body, nullptr, false); }
};

// One request on a fresh connection (Connection: close).
HttpReply Http(uint16_t port, const std::string& method, const std::string& path,
               const std::string& body = "",
               const std::vector<std::pair<std::string, std::string>>& headers = {},
               const std::string& content_type = "application/json");
// A request with a JSON body.
HttpReply HttpJson(uint16_t port, const std::string& method, const std::string& path,
                   const nlohmann::json& body);

struct SseEvent {
  std::string id, event, data;
};
// Opens GET `path` as an event stream and reads until `count` events came
// or `timeout_ms` passed.
std::vector<SseEvent> ReadSse(uint16_t port, const std::string& path, size_t count, int timeout_ms,
                              const std::vector<std::pair<std::string, std::string>>& headers = {});

// A server on 127.0.0.1 that records requests and answers with scripted
// statuses (the last one repeats); status 0 = never answer (a timeout).
class ScriptedServer {
 public:
  struct Request {
    std::string method, path, body;
    std::map<std::string, std::string> headers;
  };
  explicit ScriptedServer(std::vector<int> statuses);
  ~ScriptedServer();
  uint16_t port() const { return port_; }
  std::vector<Request> requests();
  // Waits until at least `n` requests arrived.
  bool WaitFor(size_t n, int timeout_ms = 20000);

 private:
  void Loop();
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<int> statuses_;
  std::vector<Request> requests_;
  std::vector<int> hung_;  // fds never answered
  std::thread thread_;
};

// `limbic run --config <dir>/limbic.json --state <dir>/state`, port 0.
class RunningLimbic {
 public:
  RunningLimbic(const TempDir& dir, const nlohmann::json& config);
  uint16_t port() const { return port_; }
  Child& child() { return *child_; }
  // Log lines read so far (stdout + stderr).
  const std::vector<std::string>& log() const { return log_; }
  // Reads log lines until one contains `needle`.
  bool WaitForLog(const std::string& needle, int timeout_ms = 10000);

 private:
  std::unique_ptr<Child> child_;
  uint16_t port_ = 0;
  std::vector<std::string> log_;
};

}  // namespace limbic::testing
