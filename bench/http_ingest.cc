#include "bench/http_ingest.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/http_client.h"
#include "tests/raw_connection.h"

namespace limbic::bench {
namespace {

using Clock = std::chrono::steady_clock;

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

// One request on a fresh connection, through limbic's own client: its
// status (0: no answer) and body.
int Request(uint16_t port, const std::string& method, const std::string& target,
            const std::string& body, std::string* answer) {
  HttpCall call;
  call.method = method;
  call.url = "http://127.0.0.1:" + std::to_string(port) + target;
  call.body = body;
  call.timeout_ms = 600000;  // an ingest of many files
  auto r = Fetch(call);
  if (!r.ok()) return 0;
  if (answer) *answer = std::move(r->body);
  return r->status;
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
      // Keep-alive load: the one raw client of the tests and benches.
      testing::RawConnection conn(port, {.nodelay = true});
      if (!conn.ok()) {
        ++failed;
        return;
      }
      std::string body = R"({"source":"bench","type":"message","intensity":0.5,"text":"keep-alive percept from client )" +
                         std::to_string(c) + "\"}";
      std::string req = "POST /v1/percepts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
      std::vector<double> mine;
      while (!stop) {
        auto t0 = Clock::now();
        if (!conn.Send(req)) break;
        int status = testing::StatusOf(conn.Read(-1));
        if (status == 0) break;
        if (!measuring) continue;
        if (status == 201) {
          ++done;
          mine.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        } else {
          ++failed;
        }
      }
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
  nlohmann::json out = nlohmann::json::parse(answer, nullptr, false);
  if (out.is_object() && out["files"].is_array()) r.files_ingested = out["files"].size();
  return r;
}

Result<AttentionResult> RunAttention(const AttentionOptions& o) {
  RunningLimbic running;
  LIMBIC_RETURN_IF_ERROR(
      StartLimbic(o.limbic, o.dir, {{"durability", {{"mode", "fsync"}}}}, &running));
  testing::RawConnection conn(running.port, {.nodelay = true});
  if (!conn.ok()) return Status::Unavailable("cannot connect to limbic");
  const std::string req = "GET /v1/attention HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  AttentionResult r;
  std::string last;
  for (int i = 0; i < o.warmup + o.requests; ++i) {
    auto t0 = Clock::now();
    if (!conn.Send(req)) return Status::Unavailable("limbic closed the connection");
    std::string response = conn.Read(-1);
    double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (testing::StatusOf(response) != 200) {
      ++r.failed;
      continue;
    }
    if (i >= o.warmup) r.latency_us.push_back(us);
    last = std::move(response);
  }
  auto body = nlohmann::json::parse(last.substr(std::min(last.size(), last.find("\r\n\r\n") + 4)),
                                    nullptr, false);
  if (body.is_object() && body["unassigned"].is_array()) r.unassigned = body["unassigned"].size();
  return r;
}

}  // namespace limbic::bench
