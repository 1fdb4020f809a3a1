#include "nats_cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "base/free_ports.h"
#include "http.h"

namespace limbic::testing {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// GET `path` on the monitoring port as JSON; null when there is no answer.
json Monitor(uint16_t port, const std::string& path) {
  HttpReply r = Http(port, "GET", path);
  if (r.status == 0) return nullptr;
  json j = r.Json();
  return j.is_discarded() ? json(nullptr) : j;
}

}  // namespace

std::string NatsServerBinary() {
  if (access("/usr/sbin/nats-server", X_OK) == 0) return "/usr/sbin/nats-server";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string d; std::getline(dirs, d, ':');) {
    std::string candidate = (d.empty() ? "." : d) + "/nats-server";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::unique_ptr<NatsCluster> NatsCluster::Start(const std::string& dir, int n) {
  if (n < 1) throw std::runtime_error("NatsCluster: needs at least one server");
  std::string binary = NatsServerBinary();
  if (binary.empty())
    throw std::runtime_error(
        "nats-server not found (neither /usr/sbin/nats-server nor on PATH): `make deps` installs "
        "it");
  std::unique_ptr<NatsCluster> c(new NatsCluster(dir, binary));
  c->nodes_.resize(static_cast<size_t>(n));
  // The free ports are released before the servers bind them, so another
  // process may take one first: a server that exits saying its address is
  // in use is started again, with all of the cluster, on new ports.
  for (int attempt = 1;; ++attempt) {
    auto free = limbic::FreeLoopbackPorts(3 * static_cast<size_t>(n));
    if (!free.ok()) throw std::runtime_error("NatsCluster: " + free.status().message());
    const std::vector<uint16_t>& ports = *free;
    for (int i = 0; i < n; ++i) {
      Node& node = c->nodes_[static_cast<size_t>(i)];
      node.client_port = ports[3 * i];
      node.cluster_port = ports[3 * i + 1];
      node.monitor_port = ports[3 * i + 2];
    }
    for (int i = 0; i < n; ++i) c->Launch(i);
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    bool ready = false, taken = false;
    while (!ready && !taken && Clock::now() < deadline) {
      ready = c->WaitReady(200);
      for (int i = 0; i < n && !ready && !taken; ++i) {
        int code = 0;
        if (c->nodes_[static_cast<size_t>(i)].process->WaitFor(0, &code))
          taken = c->LogTail(i).find("address already in use") != std::string::npos;
      }
    }
    if (ready) break;
    if (taken && attempt < 5) {
      for (int i = 0; i < n; ++i) c->Kill(i);
      continue;
    }
    std::string logs;
    for (int i = 0; i < n; ++i) logs += "\n" + c->name(i) + ": " + c->LogTail(i);
    throw std::runtime_error("NatsCluster: " + std::to_string(n) +
                             " nats-server(s) not ready within 30 s" + logs);
  }
  return c;
}

NatsCluster::~NatsCluster() {
  for (int i = 0; i < size(); ++i) Kill(i);
}

std::vector<std::string> NatsCluster::urls() const {
  std::vector<std::string> out;
  for (int i = 0; i < size(); ++i) out.push_back(url(i));
  return out;
}

std::string NatsCluster::url(int i) const {
  return "nats://127.0.0.1:" + std::to_string(nodes_.at(i).client_port);
}

void NatsCluster::Launch(int i) {
  Node& node = nodes_.at(i);
  std::vector<std::string> argv{binary_, "-js",
                                "-sd",   dir_ + "/" + name(i),
                                "-n",    name(i),
                                "-a",    "127.0.0.1",
                                "-p",    std::to_string(node.client_port),
                                "-m",    std::to_string(node.monitor_port)};
  if (size() > 1) {
    std::string routes;
    for (const Node& other : nodes_)
      routes += (routes.empty() ? "" : ",") + std::string("nats://127.0.0.1:") +
                std::to_string(other.cluster_port);
    argv.insert(argv.end(),
                {"--cluster_name", "limbic-test", "--cluster",
                 "nats://127.0.0.1:" + std::to_string(node.cluster_port), "--routes", routes});
  }
  // stdout is an unread pipe, but nats-server writes its log to stderr only.
  node.process = std::make_unique<Child>(argv, StderrFile{log_path(i)});
}

void NatsCluster::Kill(int i) {
  Node& node = nodes_.at(i);
  if (!node.process) return;
  node.process->Kill(SIGKILL);
  node.process.reset();
}

void NatsCluster::Stop(int i) {
  Node& node = nodes_.at(i);
  if (!node.process) return;
  kill(node.process->pid(), SIGTERM);
  int code = 0;
  if (!node.process->WaitFor(10000, &code)) node.process->Kill(SIGKILL);
  node.process.reset();
}

void NatsCluster::Restart(int i) {
  if (nodes_.at(i).process) throw std::runtime_error("NatsCluster: " + name(i) + " is running");
  Launch(i);
}

void NatsCluster::StopAll() {
  for (int i = 0; i < size(); ++i) Stop(i);
}

bool NatsCluster::WaitReady(int timeout_ms) const {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    bool ready = true;
    for (int i = 0; i < size() && ready; ++i) {
      if (!running(i)) continue;
      json health = Monitor(monitor_port(i), "/healthz");
      ready = health.is_object() && health.value("status", "") == "ok";
      if (ready && size() > 1) {
        json jsz = Monitor(monitor_port(i), "/jsz");
        ready = jsz.is_object() && jsz.contains("meta_cluster") &&
                !jsz["meta_cluster"].value("leader", "").empty();
      }
    }
    if (ready) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

int NatsCluster::StreamLeader(const std::string& stream) const {
  for (int i = 0; i < size(); ++i) {
    if (!running(i)) continue;
    json jsz = Monitor(monitor_port(i), "/jsz?accounts=true&streams=true");
    if (!jsz.is_object() || !jsz.contains("account_details")) continue;
    for (const json& account : jsz["account_details"]) {
      if (!account.contains("stream_detail")) continue;
      for (const json& s : account["stream_detail"]) {
        if (s.value("name", "") != stream) continue;
        if (size() == 1) return i;
        // Each server says who it thinks leads; only the leader's own word
        // about itself is taken, so a stale view elsewhere is not.
        if (s.contains("cluster") && s["cluster"].value("leader", "") == name(i)) return i;
      }
    }
  }
  return -1;
}

int NatsCluster::WaitStreamLeader(const std::string& stream, int not_this, int timeout_ms) const {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int leader = StreamLeader(stream);
    if (leader != -1 && leader != not_this) return leader;
    if (Clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

json NatsCluster::JsApi(int i, const std::string& subject, const std::string& body) const {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return json();
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(client_port(i));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  json answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string out =
        "CONNECT {\"verbose\":false,\"pedantic\":false}\r\nSUB _INBOX.t 1\r\nPUB " + subject +
        " _INBOX.t " + std::to_string(body.size()) + "\r\n" + body + "\r\n";
    if (send(fd, out.data(), out.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out.size())) {
      // Lines until "MSG _INBOX.t 1 <n>", then its n bytes; a server PING gets its PONG.
      std::string in;
      char buf[4096];
      for (;;) {
        const size_t msg = in.find("MSG _INBOX.t 1 ");
        const size_t eol = msg == std::string::npos ? msg : in.find("\r\n", msg);
        if (eol != std::string::npos) {
          const size_t n = std::stoul(in.substr(msg + 15, eol - msg - 15));
          if (in.size() >= eol + 2 + n) {
            answer = json::parse(in.substr(eol + 2, n), nullptr, false);
            break;
          }
        }
        if (in.find("PING\r\n") != std::string::npos) {
          in.erase(in.find("PING\r\n"), 6);
          send(fd, "PONG\r\n", 6, MSG_NOSIGNAL);
        }
        const ssize_t got = recv(fd, buf, sizeof(buf), 0);
        if (got <= 0) break;
        in.append(buf, static_cast<size_t>(got));
      }
    }
  }
  close(fd);
  return answer;
}

int NatsCluster::DeleteConsumers(int i, const std::string& stream) const {
  const json names = JsApi(i, "$JS.API.CONSUMER.NAMES." + stream, "{}");
  if (!names.is_object() || !names.contains("consumers") || !names["consumers"].is_array())
    return 0;
  int deleted = 0;
  for (const json& name : names["consumers"]) {
    const json r =
        JsApi(i, "$JS.API.CONSUMER.DELETE." + stream + "." + name.get<std::string>(), "");
    if (r.is_object() && r.value("success", false)) ++deleted;
  }
  return deleted;
}

std::string NatsCluster::LogTail(int i) const {
  std::ifstream in(log_path(i));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (size_t k = lines.size() > 8 ? lines.size() - 8 : 0; k < lines.size(); ++k)
    out += "\n  " + lines[k];
  return out.empty() ? "(empty log)" : out;
}

}  // namespace limbic::testing
