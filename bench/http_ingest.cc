#include "bench/http_ingest.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

namespace limbic::bench {
namespace {

using Clock = std::chrono::steady_clock;

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
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// Reads one HTTP response (headers and a Content-Length body) from `fd`,
// keeping what follows in `in`. Returns its status, or 0 on EOF/error.
int ReadResponse(int fd, std::string& in) {
  char buf[8192];
  size_t need = std::string::npos;
  while (need == std::string::npos || in.size() < need) {
    size_t end = in.find("\r\n\r\n");
    if (end != std::string::npos && need == std::string::npos) {
      size_t cl = in.find("Content-Length: ");
      if (cl == std::string::npos || cl > end) return 0;
      need = end + 4 + std::stoul(in.substr(cl + 16));
      continue;
    }
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return 0;
    in.append(buf, static_cast<size_t>(n));
  }
  int status = std::atoi(in.substr(9, 3).c_str());
  in.erase(0, need);
  return status;
}

}  // namespace

Result<HttpIngestResult> RunHttpIngest(const HttpIngestOptions& o) {
  std::ofstream(o.dir + "/reflexes.json") << R"({"reflexes": []})";
  nlohmann::json config = {{"api", {{"port", 0}}},
                           {"durability", {{"mode", o.durability}}},
                           {"reflexes", "reflexes.json"},
                           {"effectors", {{"log", {{"kind", "log"}}}}}};
  std::ofstream(o.dir + "/limbic.json") << config.dump();
  int out[2];
  if (pipe(out) != 0) return Status::IOError("pipe");
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 2);
    dup2(out[1], 1);
    execl(o.limbic.c_str(), o.limbic.c_str(), "--state", (o.dir + "/state").c_str(), "run",
          "--config", (o.dir + "/limbic.json").c_str(), nullptr);
    _exit(127);
  }
  close(out[1]);
  auto stop_child = [&] {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    close(out[0]);
  };
  // The startup line names the port.
  std::string log;
  uint16_t port = 0;
  char buf[4096];
  while (!port) {
    ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) {
      stop_child();
      return Status::Unavailable("limbic did not start: " + log);
    }
    log.append(buf, static_cast<size_t>(n));
    auto at = log.find("api http://127.0.0.1:");
    if (at != std::string::npos && log.find(',', at) != std::string::npos)
      port = static_cast<uint16_t>(std::stoi(log.substr(at + 21)));
  }
  // Keep draining its output so it never blocks on a full pipe.
  std::thread drain([fd = out[0]] {
    char sink[4096];
    while (read(fd, sink, sizeof sink) > 0) {
    }
  });

  std::atomic<bool> stop{false}, measuring{false};
  std::atomic<uint64_t> done{0}, failed{0};
  std::mutex mu;
  std::vector<double> latency;
  std::vector<std::thread> clients;
  for (int c = 0; c < o.connections; ++c) {
    clients.emplace_back([&, c] {
      int fd = Connect(port);
      if (fd < 0) {
        ++failed;
        return;
      }
      std::string body = R"({"source":"bench","type":"message","intensity":0.5,"text":"keep-alive percept from client )" +
                         std::to_string(c) + "\"}";
      std::string req = "POST /v1/percepts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
      std::string in;
      std::vector<double> mine;
      while (!stop) {
        auto t0 = Clock::now();
        if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) break;
        int status = ReadResponse(fd, in);
        if (status == 0) break;
        if (!measuring) continue;
        if (status == 201) {
          ++done;
          mine.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        } else {
          ++failed;
        }
      }
      close(fd);
      std::lock_guard<std::mutex> lock(mu);
      latency.insert(latency.end(), mine.begin(), mine.end());
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup_s));
  measuring = true;
  auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
  measuring = false;
  HttpIngestResult r;
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.percepts = done;
  stop = true;
  for (auto& t : clients) t.join();
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  drain.join();
  close(out[0]);
  r.failed = failed;
  r.latency_us = std::move(latency);
  return r;
}

}  // namespace limbic::bench
