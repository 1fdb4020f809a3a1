#include "bench/scripted_model.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "tests/raw_connection.h"

namespace limbic::bench {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

ScriptedModel::ScriptedModel() {
  listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(listen_, 128) != 0)
    throw std::runtime_error("the scripted model server cannot listen");
  socklen_t len = sizeof a;
  ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  thread_ = std::thread([this] { Loop(); });
}

ScriptedModel::~ScriptedModel() {
  (void)!::write(stop_pipe_[1], "x", 1);
  thread_.join();
  ::close(listen_);
  ::close(stop_pipe_[0]);
  ::close(stop_pipe_[1]);
}

std::vector<ScriptedModel::Exchange> ScriptedModel::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(exchanges_, {});
}

bool ScriptedModel::WaitFinals(size_t n, int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return finals_ >= n; });
}

size_t ScriptedModel::finals() {
  std::lock_guard<std::mutex> lock(mu_);
  return finals_;
}

void ScriptedModel::Loop() {
  std::vector<Conn> conns;
  for (;;) {
    std::vector<pollfd> fds = {{stop_pipe_[0], POLLIN, 0}, {listen_, POLLIN, 0}};
    for (const Conn& c : conns) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) continue;
    if (fds[0].revents) break;
    if (fds[1].revents & POLLIN) {
      int fd = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conns.push_back({fd, {}});
      }
    }
    std::vector<Conn> open;
    for (size_t i = 0; i < conns.size(); ++i) {
      Conn& c = conns[i];
      if (fds[i + 2].revents && !Serve(c)) {
        ::close(c.fd);
        continue;
      }
      open.push_back(std::move(c));
    }
    conns = std::move(open);
  }
  for (Conn& c : conns) ::close(c.fd);
}

bool ScriptedModel::Serve(Conn& c) {
  char buf[65536];
  ssize_t n = ::read(c.fd, buf, sizeof buf);
  if (n <= 0) return false;
  c.in.append(buf, static_cast<size_t>(n));
  const size_t end = c.in.find("\r\n\r\n");
  if (end == std::string::npos) return true;
  const std::string head = limbic::testing::RawConnection::Lower(c.in.substr(0, end));
  const size_t cl = head.find("\r\ncontent-length:");
  const size_t length =
      cl == std::string::npos ? 0 : std::strtoul(head.c_str() + cl + 17, nullptr, 10);
  if (c.in.size() < end + 4 + length) return true;
  Exchange x;
  x.read = Clock::now();
  const std::string body = Answer(c.in.substr(end + 4, length), &x);
  const std::string answer =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  for (size_t at = 0; at < answer.size();) {
    ssize_t w = ::send(c.fd, answer.data() + at, answer.size() - at, MSG_NOSIGNAL);
    if (w <= 0) break;
    at += static_cast<size_t>(w);
  }
  x.answered = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (x.final) ++finals_;
    exchanges_.push_back(std::move(x));
  }
  cv_.notify_all();
  return false;
}

std::string ScriptedModel::Answer(const std::string& request, Exchange* x) {
  json req = json::parse(request, nullptr, false);
  if (req.is_object() && req["messages"].is_array()) {
    for (const json& m : req["messages"])
      if (m.value("role", "") == "tool") ++x->turn;
    // The user message: "You were woken: ...\n\n{"wake": {...}, "context": ...}".
    if (req["messages"].size() > 1 && req["messages"][1]["content"].is_string()) {
      const std::string& content = req["messages"][1]["content"].get_ref<const std::string&>();
      const size_t at = content.find("\n\n");
      json wake =
          at == std::string::npos ? json() : json::parse(content.substr(at + 2), nullptr, false);
      if (wake.is_object() && wake["wake"]["percept_ids"].is_array() &&
          !wake["wake"]["percept_ids"].empty())
        x->percept = wake["wake"]["percept_ids"][0].get<std::string>();
    }
  }
  std::string tool;
  const Script script = script_;
  if (!x->percept.empty()) {
    if (script == Script::kProcess && x->turn == 0) tool = "process_percept";
    if (script == Script::kReadProcess && x->turn == 0) tool = "get_percept";
    if (script == Script::kReadProcess && x->turn == 1) tool = "process_percept";
  }
  json message = {{"role", "assistant"}};
  if (tool.empty()) {
    x->final = true;
    message["content"] = "Done.";
  } else {
    json arguments = {{"id", x->percept}};
    if (tool == "process_percept") arguments["reason"] = "handled by the bench";
    message["content"] = nullptr;
    message["tool_calls"] = {{{"id", "call-" + std::to_string(x->turn)},
                              {"type", "function"},
                              {"function", {{"name", tool}, {"arguments", arguments.dump()}}}}};
  }
  return json{{"id", "chatcmpl-bench"},
              {"object", "chat.completion"},
              {"model", "bench"},
              {"choices",
               {{{"index", 0},
                 {"message", message},
                 {"finish_reason", tool.empty() ? "stop" : "tool_calls"}}}},
              {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 10}}}}
      .dump();
}

}  // namespace limbic::bench
