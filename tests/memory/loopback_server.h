// A tiny HTTP/1.1 server on 127.0.0.1 for the memory tests: the far end of
// Fetch and of the openai embedder. One thread serves connections one at a
// time; a handler turns each request into a raw answer, or into nothing --
// then the connection is held open unanswered until the server is destroyed
// (how the tests make a timeout). A connection that opens with a TLS record
// gets a plain-HTTP 400, which is what a client speaking https to an http
// port meets in real life.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace limbic::testing {

struct LoopbackRequest {
  std::string method, target, body;
  std::map<std::string, std::string> headers;  // lower-case names
};

// A complete answer with Content-Length and Connection: close.
inline std::string HttpAnswer(int status, const std::string& body,
                              const std::string& extra_headers = "Content-Type: application/json\r\n") {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

// A loopback port with nothing listening (bound, then closed): connecting
// is refused.
inline uint16_t ClosedPort() {
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

class LoopbackServer {
 public:
  using Handler = std::function<std::optional<std::string>(const LoopbackRequest&)>;

  explicit LoopbackServer(Handler handler) : handler_(std::move(handler)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd_, 16) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("LoopbackServer: bind/listen failed");
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Loop(); });
  }
  ~LoopbackServer() {
    stop_ = true;
    thread_.join();
    for (int fd : held_) close(fd);
    close(fd_);
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<LoopbackRequest> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void Loop() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      int fd = accept(fd_, nullptr, nullptr);
      if (fd >= 0) Serve(fd);
    }
  }

  // Reads until `done(buf)` or the peer closes or the server stops.
  bool ReadUntil(int fd, std::string& buf, const std::function<bool(const std::string&)>& done) {
    char chunk[4096];
    while (!done(buf)) {
      if (stop_) return false;
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      ssize_t n = recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return false;
      buf.append(chunk, static_cast<size_t>(n));
    }
    return true;
  }

  void Serve(int fd) {
    std::string buf;
    bool ok = ReadUntil(fd, buf, [](const std::string& b) {
      return (!b.empty() && b[0] == 0x16) || b.find("\r\n\r\n") != std::string::npos;
    });
    if (ok && buf[0] == 0x16) return Answer(fd, HttpAnswer(400, "this is http"));
    if (!ok) return (void)close(fd);
    LoopbackRequest req;
    const size_t end = buf.find("\r\n\r\n");
    size_t line_end = buf.find("\r\n");
    const std::string first = buf.substr(0, line_end);
    req.method = first.substr(0, first.find(' '));
    req.target = first.substr(req.method.size() + 1, first.rfind(' ') - req.method.size() - 1);
    while (line_end < end) {
      const size_t next = buf.find("\r\n", line_end + 2);
      const std::string line = buf.substr(line_end + 2, next - line_end - 2);
      const size_t colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      req.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
      line_end = next;
    }
    const size_t length = req.headers.count("content-length") ? std::stoul(req.headers["content-length"]) : 0;
    if (!ReadUntil(fd, buf, [&](const std::string& b) { return b.size() >= end + 4 + length; }))
      return (void)close(fd);
    req.body = buf.substr(end + 4, length);
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(req);
    }
    std::optional<std::string> answer = handler_(req);
    if (!answer) return held_.push_back(fd);
    Answer(fd, *answer);
  }

  void Answer(int fd, const std::string& answer) {
    for (size_t sent = 0; sent < answer.size();) {
      ssize_t n = send(fd, answer.data() + sent, answer.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    shutdown(fd, SHUT_WR);
    close(fd);
  }

  Handler handler_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<int> held_;  // unanswered connections (server thread only)
  std::mutex mu_;
  std::vector<LoopbackRequest> requests_;
  std::thread thread_;  // last: started after everything it uses exists
};

}  // namespace limbic::testing
