// HTTP for the integration tests: well-formed requests through limbic's
// own client (base/http_client.h), an SSE reader on the tests' raw client
// (tests/raw_connection.h, which also sends what a well-formed client
// cannot), a scripted server (the far end of the http effector, on the
// tests' one server, tests/http_server.h), and a harness that runs `limbic
// run` on a config and finds its port.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "process.h"
#include "tests/http_server.h"

namespace limbic::testing {

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  nlohmann::json Json() const { return nlohmann::json::parse(body, nullptr, false); }
};

// One request on a fresh connection (Connection: close); status 0 when no
// answer came (refused, reset, 60 s without one).
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

// A TestHttpServer (tests/http_server.h) that answers with scripted
// statuses (the last one repeats) and a small JSON body; status 0 = never
// answer (a timeout). The far end of the http effector.
class ScriptedServer {
 public:
  struct Options {
    int delay_ms = 0;      // wait this long before answering each request
    std::string location;  // the Location header of 3xx answers
    // PEM files: speak https (TLS through OpenSSL) instead of http.
    std::string tls_cert, tls_key;
  };
  struct Request {
    std::string method, path, body;
    std::map<std::string, std::string> headers;
    std::chrono::steady_clock::time_point at;  // when it had been read in full
  };
  explicit ScriptedServer(std::vector<int> statuses) : ScriptedServer(std::move(statuses), Options{}) {}
  ScriptedServer(std::vector<int> statuses, Options options);
  uint16_t port() const { return server_->port(); }
  std::vector<Request> requests();
  // Waits until at least `n` requests arrived.
  bool WaitFor(size_t n, int timeout_ms = 20000) { return server_->WaitFor(n, timeout_ms); }
  // The most requests that were read and not yet answered at one time.
  int max_concurrent() const { return server_->max_concurrent(); }

 private:
  const std::vector<int> statuses_;
  const std::string location_;
  std::unique_ptr<TestHttpServer> server_;  // last: its threads use the members above
};

// A self-signed certificate for 127.0.0.1 (CN and IP SAN), made with the
// `openssl` command into `dir`: {cert path, key path}. The certificate is
// its own CA, so it can also serve as a CA file.
std::pair<std::string, std::string> MakeSelfSignedCert(const std::string& dir);

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
