// RawConnection: the one raw HTTP client of the tests and benchmarks, for
// what a well-formed client cannot do -- send malformed or partial bytes,
// keep a connection alive across requests, pipeline, stall, or come from a
// chosen loopback address. Well-formed one-shot requests go through limbic's
// own client instead (base/http_client.h; tests/integration/http.h's Http).
//
//   RawConnection c(port);                       // to 127.0.0.1:port
//   c.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
//   std::string response = c.Read();             // one response, headers + body
//   int status = StatusOf(response);
//
// Header-only (POSIX sockets), so a benchmark can use it without linking
// the tests' libraries.
//
// Thread-safety: one thread per connection.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

namespace limbic::testing {

class RawConnection {
 public:
  struct Options {
    const char* from = "127.0.0.1";  // source address: one machine plays several clients
    int rcvbuf = 0;                  // SO_RCVBUF when > 0 (a slow reader)
    bool nodelay = false;            // TCP_NODELAY (request/response load)
  };

  explicit RawConnection(uint16_t port) : RawConnection(port, Options{}) {}
  RawConnection(uint16_t port, Options o) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    if (o.rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &o.rcvbuf, sizeof o.rcvbuf);
    sockaddr_in src{};
    src.sin_family = AF_INET;
    ::inet_pton(AF_INET, o.from, &src.sin_addr);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&src), sizeof src);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
    if (ok_ && o.nodelay) {
      int one = 1;
      ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
  }
  ~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool ok() const { return ok_; }
  int fd() const { return fd_; }

  // Sends all of `bytes`; false when the peer closed or reset first.
  bool Send(const std::string& bytes) {
    for (size_t done = 0; done < bytes.size();) {
      ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  // One response: its headers and a Content-Length body (none without
  // one); what follows stays for the next Read. "" when the connection
  // closed first or nothing complete came within `timeout_ms` (< 0: wait
  // as long as it takes, without a poll per read).
  std::string Read(int timeout_ms = 10000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      if (size_t end = in_.find("\r\n\r\n"); end != std::string::npos) {
        // The header at a line's start, its value read without throwing.
        size_t cl = Lower(in_.substr(0, end)).find("\r\ncontent-length:");
        size_t need =
            end + 4 +
            (cl == std::string::npos ? 0 : std::strtoul(in_.c_str() + cl + 17, nullptr, 10));
        if (in_.size() >= need) {
          std::string response = in_.substr(0, need);
          in_.erase(0, need);
          return response;
        }
      }
      if (!ReadSome(timeout_ms < 0 ? -1 : MillisLeft(deadline))) return "";
    }
  }

  // Appends what arrives within `timeout_ms` (< 0: blocks) to the buffer
  // that Read and TakeBuffered serve from; false when the connection closed
  // or nothing came in time.
  bool ReadSome(int timeout_ms) {
    if (timeout_ms >= 0) {
      pollfd p{fd_, POLLIN, 0};
      if (timeout_ms == 0 || ::poll(&p, 1, timeout_ms) <= 0) return false;
    }
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fd_, buf, sizeof buf)) < 0 && errno == EINTR) {
    }
    if (n <= 0) return false;
    in_.append(buf, static_cast<size_t>(n));
    return true;
  }
  // What has been read and not yet taken (a stream's bytes).
  std::string TakeBuffered() { return std::exchange(in_, std::string()); }

  // True when the server closed the connection within `timeout_ms`.
  bool Closed(int timeout_ms = 5000) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    char buf[4096];
    return ::read(fd_, buf, sizeof buf) <= 0;
  }

  static std::string Lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

 private:
  static int MillisLeft(std::chrono::steady_clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return left.count() > 0 ? static_cast<int>(left.count()) : 0;
  }

  int fd_ = -1;
  bool ok_ = false;
  std::string in_;
};

// The status code of a raw response ("HTTP/1.1 201 Created..." -> 201); 0
// when it is not one.
inline int StatusOf(const std::string& response) {
  if (response.size() < 12 || response.compare(0, 5, "HTTP/") != 0) return 0;
  return std::atoi(response.substr(9, 3).c_str());
}

}  // namespace limbic::testing
