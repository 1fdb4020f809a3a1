#include "http.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <stdexcept>

#include "base/http_client.h"
#include "tests/raw_connection.h"

namespace limbic::testing {

HttpReply Http(uint16_t port, const std::string& method, const std::string& path, const std::string& body,
               const std::vector<std::pair<std::string, std::string>>& headers,
               const std::string& content_type) {
  HttpCall call;
  call.method = method;
  call.url = "http://127.0.0.1:" + std::to_string(port) + path;
  call.body = body;
  call.content_type = content_type;
  call.headers = headers;
  call.timeout_ms = 60000;
  call.max_body = size_t{1} << 30;
  HttpReply r;
  auto answer = Fetch(call);
  if (!answer.ok()) return r;  // status 0: no answer
  r.status = answer->status;
  r.headers = std::move(answer->headers);
  r.body = std::move(answer->body);
  return r;
}

HttpReply HttpJson(uint16_t port, const std::string& method, const std::string& path,
                   const nlohmann::json& body) {
  return Http(port, method, path, body.dump());
}

std::vector<SseEvent> ReadSse(uint16_t port, const std::string& path, size_t count, int timeout_ms,
                              const std::vector<std::pair<std::string, std::string>>& headers) {
  std::vector<SseEvent> out;
  RawConnection conn(port);
  if (!conn.ok()) return out;
  std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const auto& [name, value] : headers) request += name + ": " + value + "\r\n";
  if (!conn.Send(request + "\r\n")) return out;
  std::string raw;
  bool past_headers = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  SseEvent cur;
  while (out.size() < count) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0 || !conn.ReadSome(static_cast<int>(left))) break;
    raw += conn.TakeBuffered();
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
