#include "http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
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

ScriptedServer::ScriptedServer(std::vector<int> statuses, Options options)
    : statuses_(std::move(statuses)), location_(std::move(options.location)) {
  TestHttpServer::Options server_options;
  server_options.delay_ms = options.delay_ms;
  server_options.tls_cert = std::move(options.tls_cert);
  server_options.tls_key = std::move(options.tls_key);
  server_ = std::make_unique<TestHttpServer>(
      [this](const TestRequest& req) -> std::optional<std::string> {
        const int status = statuses_[std::min(req.index, statuses_.size() - 1)];
        if (status == 0) return std::nullopt;
        std::string body = "{\"ok\":" + std::string(status < 300 ? "true" : "false") + "}";
        std::string extra = "Content-Type: application/json\r\n";
        if (status >= 300 && status < 400 && !location_.empty()) extra += "Location: " + location_ + "\r\n";
        return HttpAnswer(status, body, extra);
      },
      std::move(server_options));
}

std::vector<ScriptedServer::Request> ScriptedServer::requests() {
  std::vector<Request> out;
  for (const TestRequest& r : server_->requests())
    out.push_back(Request{r.method, r.target, r.body, r.headers, r.at});
  return out;
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
