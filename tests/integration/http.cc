#include "http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <stdexcept>

namespace limbic::testing {
namespace {

int Connect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

void SendAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Request(const std::string& method, const std::string& path, const std::string& body,
                    const std::vector<std::pair<std::string, std::string>>& headers,
                    const std::string& content_type) {
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
  if (!body.empty()) req += "Content-Type: " + content_type + "\r\n";
  req += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  return req;
}

}  // namespace

HttpReply Http(uint16_t port, const std::string& method, const std::string& path, const std::string& body,
               const std::vector<std::pair<std::string, std::string>>& headers,
               const std::string& content_type) {
  HttpReply r;
  int fd = Connect(port);
  if (fd < 0) return r;
  SendAll(fd, Request(method, path, body, headers, content_type));
  std::string raw;
  char buf[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 30000) <= 0) break;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    raw.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos || raw.size() < 12) return r;
  r.status = std::stoi(raw.substr(9, 3));
  size_t pos = raw.find("\r\n") + 2;
  while (pos < end) {
    size_t nl = raw.find("\r\n", pos);
    std::string line = raw.substr(pos, nl - pos);
    size_t colon = line.find(':');
    if (colon != std::string::npos)
      r.headers[Lower(line.substr(0, colon))] = line.substr(line.find_first_not_of(' ', colon + 1));
    pos = nl + 2;
  }
  r.body = raw.substr(end + 4);
  return r;
}

HttpReply HttpJson(uint16_t port, const std::string& method, const std::string& path,
                   const nlohmann::json& body) {
  return Http(port, method, path, body.dump());
}

std::vector<SseEvent> ReadSse(uint16_t port, const std::string& path, size_t count, int timeout_ms,
                              const std::vector<std::pair<std::string, std::string>>& headers) {
  std::vector<SseEvent> out;
  int fd = Connect(port);
  if (fd < 0) return out;
  SendAll(fd, Request("GET", path, "", headers, ""));
  std::string raw;
  bool past_headers = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  SseEvent cur;
  while (out.size() < count) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) break;
    char buf[65536];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    raw.append(buf, static_cast<size_t>(n));
    if (!past_headers) {
      size_t end = raw.find("\r\n\r\n");
      if (end == std::string::npos) continue;
      raw.erase(0, end + 4);
      past_headers = true;
    }
    size_t nl;
    while ((nl = raw.find('\n')) != std::string::npos && out.size() < count) {
      std::string line = raw.substr(0, nl);
      raw.erase(0, nl + 1);
      if (line.empty()) {
        if (!cur.data.empty() || !cur.id.empty()) out.push_back(cur);
        cur = SseEvent();
      } else if (line.rfind("id: ", 0) == 0) cur.id = line.substr(4);
      else if (line.rfind("event: ", 0) == 0) cur.event = line.substr(7);
      else if (line.rfind("data: ", 0) == 0) cur.data += line.substr(6);
    }
  }
  close(fd);
  return out;
}

namespace {

// One accepted connection, plain or TLS.
class Conn {
 public:
  Conn(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}
  ~Conn() {
    if (ssl_) {
      SSL_shutdown(ssl_);
      SSL_free(ssl_);
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
    if (ssl_) SSL_write(ssl_, s.data(), static_cast<int>(s.size()));
    else SendAll(fd_, s);
  }

 private:
  int fd_;
  SSL* ssl_;
};

}  // namespace

ScriptedServer::ScriptedServer(std::vector<int> statuses, Options options)
    : options_(std::move(options)), statuses_(std::move(statuses)) {
  signal(SIGPIPE, SIG_IGN);  // a client that hung up must not kill the test
  if (!options_.tls_cert.empty()) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, options_.tls_cert.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, options_.tls_key.c_str(), SSL_FILETYPE_PEM) != 1)
      throw std::runtime_error("ScriptedServer: cannot load the TLS certificate or key");
    tls_ = ctx;
  }
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(listen_fd_, 64) != 0)
    throw std::runtime_error("ScriptedServer: bind/listen failed");
  socklen_t len = sizeof a;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  thread_ = std::thread([this] { Loop(); });
}

ScriptedServer::~ScriptedServer() {
  stop_ = true;
  thread_.join();
  for (auto& t : connections_) t.join();
  close(listen_fd_);
  if (tls_) SSL_CTX_free(static_cast<SSL_CTX*>(tls_));
}

std::vector<ScriptedServer::Request> ScriptedServer::requests() {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

bool ScriptedServer::WaitFor(size_t n, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (requests().size() >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void ScriptedServer::Loop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    connections_.emplace_back([this, fd] { Serve(fd); });
  }
}

void ScriptedServer::Serve(int fd) {
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
    size_t end = raw.find("\r\n\r\n");
    if (end != std::string::npos && need == std::string::npos) {
      size_t cl = Lower(raw.substr(0, end)).find("content-length:");
      size_t length = cl == std::string::npos ? 0 : std::stoul(raw.substr(cl + 15));
      need = end + 4 + length;
    }
  }
  size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos) return;
  Request req;
  req.at = std::chrono::steady_clock::now();
  size_t sp1 = raw.find(' '), sp2 = raw.find(' ', sp1 + 1);
  req.method = raw.substr(0, sp1);
  req.path = raw.substr(sp1 + 1, sp2 - sp1 - 1);
  size_t pos = raw.find("\r\n") + 2;
  while (pos < end) {
    size_t nl = raw.find("\r\n", pos);
    std::string line = raw.substr(pos, nl - pos);
    size_t colon = line.find(':');
    if (colon != std::string::npos)
      req.headers[Lower(line.substr(0, colon))] = line.substr(line.find_first_not_of(' ', colon + 1));
    pos = nl + 2;
  }
  req.body = raw.substr(end + 4);
  int status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    size_t i = std::min(requests_.size(), statuses_.size() - 1);
    status = statuses_[i];
    requests_.push_back(req);
  }
  int now_active = ++active_;
  for (int m = max_active_; now_active > m && !max_active_.compare_exchange_weak(m, now_active);) {
  }
  auto answer_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.delay_ms);
  // Wait for the delay -- forever for status 0 -- unless the client hangs up
  // or the server stops.
  while (!stop_ && (status == 0 || std::chrono::steady_clock::now() < answer_at)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(answer_at - std::chrono::steady_clock::now());
    int wait = status == 0 ? 50 : static_cast<int>(std::clamp<int64_t>(left.count(), 1, 50));
    if (conn.Read(buf, sizeof buf, wait) == 0) {
      --active_;
      return;  // the client is gone
    }
  }
  // Not "being handled" any more before the client can see the answer, so
  // the count never includes a request whose answer was already read.
  --active_;
  if (stop_ && status == 0) return;
  std::string body = "{\"ok\":" + std::string(status < 300 ? "true" : "false") + "}";
  std::string extra = status >= 300 && status < 400 && !options_.location.empty()
                          ? "Location: " + options_.location + "\r\n"
                          : "";
  conn.Write("HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: application/json\r\n" + extra +
             "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
}

std::pair<std::string, std::string> MakeSelfSignedCert(const std::string& dir) {
  std::string cert = dir + "/cert.pem", key = dir + "/key.pem";
  auto r = Run({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                "-keyout", key, "-out", cert});
  if (r.exit_code != 0) throw std::runtime_error("openssl req failed: " + r.err);
  return {cert, key};
}

RunningLimbic::RunningLimbic(const TempDir& dir, const nlohmann::json& config) {
  std::string path = dir / "limbic.json";
  std::ofstream(path) << config.dump(2);
  child_ = std::make_unique<Child>(
      std::vector<std::string>{LimbicBinary(), "--state", dir / "state", "run", "--config", path}, true);
  std::string line;
  while (child_->ReadLine(&line, 20000)) {
    log_.push_back(line);
    auto at = line.find("api http://127.0.0.1:");
    if (at != std::string::npos) {
      port_ = static_cast<uint16_t>(std::stoi(line.substr(at + 21)));
      break;
    }
    if (line.find("error") != std::string::npos) break;
  }
}

bool RunningLimbic::WaitForLog(const std::string& needle, int timeout_ms) {
  for (const auto& l : log_)
    if (l.find(needle) != std::string::npos) return true;
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (!child_->ReadLine(&line, std::max(left, 1))) return false;
    log_.push_back(line);
    if (line.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace limbic::testing
