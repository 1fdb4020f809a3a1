// The one HTTP server of the tests: the far end of limbic's HTTP client
// (the http effector, the openai embedder, the world model's LLM, Fetch).
// It listens on 127.0.0.1 (a free port), serves each connection on a
// thread of its own, reads one request, records it and asks the handler
// for the answer: raw bytes sent as they are, then the connection closes,
// or nothing -- then the connection is held unanswered until the client
// hangs up or the server is destroyed (how tests make a timeout).
//
// Plain by default: a connection that opens with a TLS record gets a plain
// HTTP 400, which is what a client speaking https to an http port meets in
// real life. With Options::tls_cert/tls_key it speaks https instead.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace limbic::testing {

struct TestRequest {
  std::string method, target, body;
  std::map<std::string, std::string> headers;  // lower-case names
  std::chrono::steady_clock::time_point at;    // when it had been read in full
  size_t index = 0;                            // how many this server read before it
};

// A complete answer with Content-Length and Connection: close.
std::string HttpAnswer(int status, const std::string& body,
                       const std::string& extra_headers = "Content-Type: application/json\r\n");

// A loopback port with nothing listening (bound, then closed): connecting
// is refused.
uint16_t ClosedPort();

class TestHttpServer {
 public:
  using Handler = std::function<std::optional<std::string>(const TestRequest&)>;
  struct Options {
    int delay_ms = 0;  // wait this long before answering each request
    // PEM files: speak https (TLS through OpenSSL) instead of http.
    std::string tls_cert, tls_key;
  };

  explicit TestHttpServer(Handler handler) : TestHttpServer(std::move(handler), Options{}) {}
  TestHttpServer(Handler handler, Options options);
  ~TestHttpServer();
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  uint16_t port() const { return port_; }
  // http://127.0.0.1:PORT (https:// with TLS)
  std::string url() const;
  std::vector<TestRequest> requests();
  // Waits until at least `n` requests arrived.
  bool WaitFor(size_t n, int timeout_ms = 20000);
  // The most requests that were read and not yet answered at one time.
  int max_concurrent() const { return max_active_; }

 private:
  void Loop();
  void Serve(int fd);

  Handler handler_;
  Options options_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  void* tls_ = nullptr;  // SSL_CTX*
  std::atomic<bool> stop_{false};
  std::atomic<int> active_{0}, max_active_{0};
  std::mutex mu_;
  std::vector<TestRequest> requests_;
  std::vector<std::thread> connections_;  // accept thread only
  std::thread thread_;  // last: started after everything it uses exists
};

}  // namespace limbic::testing
