#include "http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

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

ScriptedServer::ScriptedServer(std::vector<int> statuses) : statuses_(std::move(statuses)) {
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
  close(listen_fd_);
  for (int fd : hung_) close(fd);
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
    std::string raw;
    char buf[65536];
    size_t need = std::string::npos;
    while (need == std::string::npos || raw.size() < need) {
      pollfd q{fd, POLLIN, 0};
      if (poll(&q, 1, 2000) <= 0) break;
      ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) break;
      raw.append(buf, static_cast<size_t>(n));
      size_t end = raw.find("\r\n\r\n");
      if (end != std::string::npos && need == std::string::npos) {
        size_t cl = Lower(raw.substr(0, end)).find("content-length:");
        size_t length = cl == std::string::npos ? 0 : std::stoul(raw.substr(cl + 15));
        need = end + 4 + length;
      }
    }
    Request req;
    size_t end = raw.find("\r\n\r\n");
    if (end == std::string::npos) {
      close(fd);
      continue;
    }
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
    if (status == 0) {
      hung_.push_back(fd);  // never answer
      continue;
    }
    std::string body = "{\"ok\":" + std::string(status < 300 ? "true" : "false") + "}";
    std::string res = "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: application/json\r\nContent-Length: " +
                      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    SendAll(fd, res);
    close(fd);
  }
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
