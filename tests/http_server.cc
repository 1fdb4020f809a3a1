#include "http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace limbic::testing {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// One accepted connection, plain or TLS.
class Conn {
 public:
  Conn(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}
  ~Conn() {
    if (ssl_) {
      SSL_shutdown(ssl_);
      SSL_free(ssl_);
    } else {
      shutdown(fd_, SHUT_WR);
    }
    close(fd_);
  }
  // > 0 bytes read; 0 at EOF or on an error; -1 when nothing came in `timeout_ms`.
  ssize_t Read(char* buf, size_t n, int timeout_ms) {
    if (!ssl_ || SSL_pending(ssl_) == 0) {
      pollfd p{fd_, POLLIN, 0};
      int r = poll(&p, 1, timeout_ms);
      if (r == 0) return -1;
      if (r < 0) return 0;
    }
    if (!ssl_) return std::max<ssize_t>(0, read(fd_, buf, n));
    int got = SSL_read(ssl_, buf, static_cast<int>(n));
    if (got > 0) return got;
    return SSL_get_error(ssl_, got) == SSL_ERROR_WANT_READ ? -1 : 0;
  }
  void Write(const std::string& s) {
    if (ssl_) {
      SSL_write(ssl_, s.data(), static_cast<int>(s.size()));
      return;
    }
    for (size_t sent = 0; sent < s.size();) {
      ssize_t n = send(fd_, s.data() + sent, s.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }

 private:
  int fd_;
  SSL* ssl_;
};

// Parses a request whose head ends at `end` ("\r\n\r\n").
TestRequest Parse(const std::string& raw, size_t end) {
  TestRequest req;
  req.at = std::chrono::steady_clock::now();
  size_t sp1 = raw.find(' '), sp2 = raw.find(' ', sp1 + 1);
  req.method = raw.substr(0, sp1);
  req.target = raw.substr(sp1 + 1, sp2 - sp1 - 1);
  size_t pos = raw.find("\r\n") + 2;
  while (pos < end) {
    size_t nl = raw.find("\r\n", pos);
    std::string line = raw.substr(pos, nl - pos);
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      size_t value = line.find_first_not_of(' ', colon + 1);
      req.headers[Lower(line.substr(0, colon))] = value == std::string::npos ? "" : line.substr(value);
    }
    pos = nl + 2;
  }
  req.body = raw.substr(end + 4);
  return req;
}

}  // namespace

std::string HttpAnswer(int status, const std::string& body, const std::string& extra_headers) {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

uint16_t ClosedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("ClosedPort: bind failed");
  close(fd);
  return ntohs(a.sin_port);
}

TestHttpServer::TestHttpServer(Handler handler, Options options)
    : handler_(std::move(handler)), options_(std::move(options)) {
  signal(SIGPIPE, SIG_IGN);  // a client that hung up must not kill the test
  if (!options_.tls_cert.empty()) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, options_.tls_cert.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, options_.tls_key.c_str(), SSL_FILETYPE_PEM) != 1)
      throw std::runtime_error("TestHttpServer: cannot load the TLS certificate or key");
    tls_ = ctx;
  }
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      listen(listen_fd_, 64) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("TestHttpServer: bind/listen failed");
  port_ = ntohs(a.sin_port);
  thread_ = std::thread([this] { Loop(); });
}

TestHttpServer::~TestHttpServer() {
  stop_ = true;
  thread_.join();
  for (auto& t : connections_) t.join();
  close(listen_fd_);
  if (tls_) SSL_CTX_free(static_cast<SSL_CTX*>(tls_));
}

std::string TestHttpServer::url() const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

std::vector<TestRequest> TestHttpServer::requests() {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

bool TestHttpServer::WaitFor(size_t n, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (requests().size() >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void TestHttpServer::Loop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    connections_.emplace_back([this, fd] { Serve(fd); });
  }
}

void TestHttpServer::Serve(int fd) {
  SSL* ssl = nullptr;
  if (tls_) {
    timeval tv{5, 0};  // a handshake that stalls must not hang the test
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssl = SSL_new(static_cast<SSL_CTX*>(tls_));
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) != 1) {
      SSL_free(ssl);
      close(fd);
      return;
    }
  }
  Conn conn(fd, ssl);
  // 1. The request: its head, then Content-Length bytes of body.
  std::string raw;
  char buf[65536];
  size_t need = std::string::npos;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while ((need == std::string::npos || raw.size() < need) && !stop_ &&
         std::chrono::steady_clock::now() < deadline) {
    ssize_t n = conn.Read(buf, sizeof buf, 100);
    if (n == 0) break;
    if (n < 0) continue;
    raw.append(buf, static_cast<size_t>(n));
    if (!tls_ && raw[0] == 0x16) return conn.Write(HttpAnswer(400, "this is http"));
    size_t end = raw.find("\r\n\r\n");
    if (end != std::string::npos && need == std::string::npos) {
      size_t cl = Lower(raw.substr(0, end)).find("\r\ncontent-length:");
      size_t length = cl == std::string::npos ? 0 : std::stoul(raw.substr(cl + 17));
      need = end + 4 + length;
    }
  }
  const size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos) return;
  TestRequest req = Parse(raw, end);
  {
    std::lock_guard<std::mutex> lock(mu_);
    req.index = requests_.size();
    requests_.push_back(req);
  }
  // 2. The answer, after the delay; none (held until the client hangs up
  // or the server stops) when the handler has none.
  int now_active = ++active_;
  for (int m = max_active_; now_active > m && !max_active_.compare_exchange_weak(m, now_active);) {
  }
  std::optional<std::string> answer = handler_(req);
  auto answer_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.delay_ms);
  while (!stop_ && (!answer || std::chrono::steady_clock::now() < answer_at)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(answer_at - std::chrono::steady_clock::now());
    int wait = !answer ? 50 : static_cast<int>(std::clamp<int64_t>(left.count(), 1, 50));
    if (conn.Read(buf, sizeof buf, wait) == 0) {
      --active_;
      return;  // the client is gone
    }
  }
  // Not "being handled" any more before the client can see the answer, so
  // the count never includes a request whose answer was already read.
  --active_;
  if (answer) conn.Write(*answer);
}

}  // namespace limbic::testing
