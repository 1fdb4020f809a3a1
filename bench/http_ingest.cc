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
#include <filesystem>
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
int ReadResponse(int fd, std::string& in, std::string* response = nullptr) {
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
  if (response) *response = in.substr(0, need);
  in.erase(0, need);
  return status;
}


// `limbic run` on a scratch dir, its output drained so it never blocks.
struct RunningLimbic {
  pid_t pid = -1;
  int out = -1;
  uint16_t port = 0;
  std::thread drain;
  ~RunningLimbic() {
    if (pid > 0) {
      kill(pid, SIGTERM);
      waitpid(pid, nullptr, 0);
    }
    if (drain.joinable()) drain.join();
    if (out >= 0) close(out);
  }
};

Status StartLimbic(const std::string& limbic, const std::string& dir, nlohmann::json config,
                   RunningLimbic* r) {
  std::ofstream(dir + "/reflexes.json") << R"({"reflexes": []})";
  config["api"]["port"] = 0;
  config["reflexes"] = "reflexes.json";
  config["effectors"] = {{"log", {{"kind", "log"}}}};
  std::ofstream(dir + "/limbic.json") << config.dump();
  int out[2];
  if (pipe(out) != 0) return Status::IOError("pipe");
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 2);
    dup2(out[1], 1);
    execl(limbic.c_str(), limbic.c_str(), "--state", (dir + "/state").c_str(), "run", "--config",
          (dir + "/limbic.json").c_str(), nullptr);
    _exit(127);
  }
  close(out[1]);
  r->pid = pid;
  r->out = out[0];
  // The startup line names the port.
  std::string log;
  char buf[4096];
  while (!r->port) {
    ssize_t n = read(r->out, buf, sizeof buf);
    if (n <= 0) return Status::Unavailable("limbic did not start: " + log);
    log.append(buf, static_cast<size_t>(n));
    auto at = log.find("api http://127.0.0.1:");
    if (at != std::string::npos && log.find(',', at) != std::string::npos)
      r->port = static_cast<uint16_t>(std::stoi(log.substr(at + 21)));
  }
  r->drain = std::thread([fd = r->out] {
    char sink[4096];
    while (read(fd, sink, sizeof sink) > 0) {
    }
  });
  return Status::OK();
}

// One request on a fresh connection; its status (0: no answer) and body.
int Request(uint16_t port, const std::string& method, const std::string& target,
            const std::string& body, std::string* answer) {
  int fd = Connect(port);
  if (fd < 0) return 0;
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                    "Content-Type: application/json\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body;
  int status = 0;
  std::string in;
  if (write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size()))
    status = ReadResponse(fd, in, answer);
  close(fd);
  return status;
}

}  // namespace

Result<HttpIngestResult> RunHttpIngest(const HttpIngestOptions& o) {
  RunningLimbic running;
  LIMBIC_RETURN_IF_ERROR(
      StartLimbic(o.limbic, o.dir, {{"durability", {{"mode", o.durability}}}}, &running));
  const uint16_t port = running.port;

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
  r.failed = failed;
  r.latency_us = std::move(latency);
  return r;
}

Result<IngestHealthResult> RunIngestHealth(const IngestHealthOptions& o) {
  // `files` Markdown files of about `file_bytes` each, 100 to a folder.
  const std::string docs = o.dir + "/docs";
  for (int i = 0; i < o.files; ++i) {
    std::string sub = docs + "/d" + std::to_string(i / 100);
    std::filesystem::create_directories(sub);
    std::ofstream f(sub + "/note-" + std::to_string(i) + ".md");
    std::string line = "Note " + std::to_string(i) +
                       ": the deploy of service " + std::to_string(i % 97) +
                       " waits on the database migration and the cache warm-up.\n";
    for (size_t n = 0; n < static_cast<size_t>(o.file_bytes); n += line.size()) f << line;
  }
  RunningLimbic running;
  LIMBIC_RETURN_IF_ERROR(StartLimbic(
      o.limbic, o.dir,
      {{"durability", {{"mode", "fsync"}}}, {"memory", {{"ingest_roots", {docs}}}}}, &running));
  IngestHealthResult r;
  std::atomic<bool> ingesting{true};
  std::string answer;
  auto t0 = Clock::now();
  std::thread ingest([&] {
    r.ingest_status = Request(running.port, "POST", "/v1/memory/ingest",
                              nlohmann::json{{"path", docs}}.dump(), &answer);
    ingesting = false;
  });
  // healthz every 10 ms while the ingest runs, each on a new connection.
  while (ingesting) {
    auto h0 = Clock::now();
    int status = Request(running.port, "GET", "/healthz", "", nullptr);
    if (status != 200) ++r.healthz_failed;
    else r.healthz_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - h0).count());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ingest.join();
  r.ingest_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  size_t body = answer.find("\r\n\r\n");
  nlohmann::json out = nlohmann::json::parse(
      body == std::string::npos ? "" : answer.substr(body + 4), nullptr, false);
  if (out.is_object() && out["files"].is_array()) r.files_ingested = out["files"].size();
  return r;
}

}  // namespace limbic::bench
