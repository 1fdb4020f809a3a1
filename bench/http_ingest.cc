#include "bench/http_ingest.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "base/http_client.h"
#include "base/time.h"
#include "state/projection.h"
#include "tests/raw_connection.h"

namespace limbic::bench {
namespace {

using Clock = std::chrono::steady_clock;

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

RunningLimbic::~RunningLimbic() {
  if (pid > 0) {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
  }
  if (drain.joinable()) drain.join();
  if (out >= 0) close(out);
}

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
  // The rest of its output goes to <dir>/limbic.log, for a run that went wrong.
  r->drain = std::thread([fd = r->out, path = dir + "/limbic.log", log] {
    std::ofstream out(path);
    out << log;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) out.write(buf, n).flush();
  });
  return Status::OK();
}

double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i)
    if (i >= 14) ticks += std::stod(f);  // utime, stime
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

Result<HttpIngestResult> RunHttpIngest(const HttpIngestOptions& o) {
  RunningLimbic running;
  nlohmann::json config = {{"durability", {{"mode", o.durability}}}};
  config.update(o.extra_config);
  LIMBIC_RETURN_IF_ERROR(StartLimbic(o.limbic, o.dir, config, &running));
  // Measured once it takes writes (replication: its stream is checked).
  for (auto deadline = Clock::now() + std::chrono::seconds(60);
       Request(running.port, "GET", "/healthz", "", nullptr) != 200;) {
    if (Clock::now() > deadline)
      return Status::Unavailable("limbic did not become healthy in 60 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // One thread drives every connection through epoll, as an event-driven
  // client (a Node or Go service, a proxy) would: a client thread per
  // connection blocking in read made the kernel wake a thread for every
  // response, which on this VM cost the server's loop more than limbic's
  // own work (bench/NOTES.md, 2026-11-26).
  struct Conn {
    int fd = -1;
    std::string req, in;
    Clock::time_point sent;
  };
  std::vector<Conn> conns(static_cast<size_t>(o.connections));
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return Status::IOError("epoll_create1");
  auto send_next = [](Conn& c) {
    c.sent = Clock::now();
    for (size_t at = 0; at < c.req.size();) {
      ssize_t n = ::send(c.fd, c.req.data() + at, c.req.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += static_cast<size_t>(n);
    }
    return true;
  };
  HttpIngestResult r;
  for (size_t i = 0; i < conns.size(); ++i) {
    Conn& c = conns[i];
    c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(running.port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(c.fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
      ++r.failed;
      ::close(c.fd);
      c.fd = -1;
      continue;
    }
    const std::string percept =
        R"({"source":"bench","type":"message","intensity":0.5,"text":"keep-alive percept from client )" +
        std::to_string(i) + "\"}";
    std::string body = percept, path = "/v1/percepts";
    if (o.batch > 0) {
      body = R"({"percepts":[)";
      for (int k = 0; k < o.batch; ++k) body += (k ? "," : "") + percept;
      body += "]}";
      path = "/v1/percepts/batch";
    }
    c.req = "POST " + path +
            " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Content-Length: " +
            std::to_string(body.size()) + "\r\n\r\n" + body;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    ::epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
    if (!send_next(c)) ++r.failed;
  }
  const auto start = Clock::now();
  const auto measure_from = start + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(o.warmup_s));
  const auto measure_to = measure_from + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(o.seconds));
  std::vector<epoll_event> ready(conns.size());
  char buf[65536];
  double cpu_from = -1;
  for (auto now = Clock::now(); now < measure_to; now = Clock::now()) {
    if (cpu_from < 0 && now >= measure_from) cpu_from = CpuSeconds(running.pid);
    int n = ::epoll_wait(ep, ready.data(), static_cast<int>(ready.size()), 100);
    for (int k = 0; k < n; ++k) {
      Conn& c = conns[ready[static_cast<size_t>(k)].data.u64];
      ssize_t got = ::read(c.fd, buf, sizeof buf);
      if (got <= 0) {  // closed: count it and stop using the connection
        ++r.failed;
        ::epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, nullptr);
        continue;
      }
      c.in.append(buf, static_cast<size_t>(got));
      for (;;) {  // every complete response in what arrived
        size_t end = c.in.find("\r\n\r\n");
        if (end == std::string::npos) break;
        std::string head = testing::RawConnection::Lower(c.in.substr(0, end));
        size_t cl = head.find("\r\ncontent-length:");
        size_t need =
            end + 4 +
            (cl == std::string::npos ? 0 : std::strtoul(head.c_str() + cl + 17, nullptr, 10));
        if (c.in.size() < need) break;
        int status = testing::StatusOf(c.in.substr(0, need));
        // A batch's answer: {"accepted":K,...}, K first (the keys are sorted).
        uint64_t accepted = status == 201 ? 1 : 0;
        if (o.batch > 0 && status == 200) {
          const size_t at = c.in.find("\"accepted\":", end);
          if (at < need) accepted = std::strtoull(c.in.c_str() + at + 11, nullptr, 10);
        }
        c.in.erase(0, need);
        auto done = Clock::now();
        if (done >= measure_from && done < measure_to) {
          if (accepted > 0 && (o.batch == 0 || accepted == static_cast<uint64_t>(o.batch))) {
            r.percepts += accepted;
            r.latency_us.push_back(
                std::chrono::duration<double, std::micro>(done - c.sent).count());
          } else {
            ++r.failed;
          }
        }
        if (!send_next(c)) ++r.failed;
      }
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - measure_from).count();
  r.limbic_cpu_s = CpuSeconds(running.pid) - std::max(0.0, cpu_from);
  for (Conn& c : conns)
    if (c.fd >= 0) ::close(c.fd);
  ::close(ep);
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

namespace {

// VmRSS of `pid` in MiB (0 when it cannot be read).
double RssMib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

// `n` percept_arrived events as a limbic log: heartbeats of intensity
// 0.05-0.15 (below attention's 0.2), 150 ms apart, ending 25 hours before
// `now_ms`, so every one is more than a day old.
Status WriteExpiredLog(const std::string& path, size_t n, TimeMs now_ms) {
  std::ofstream out(path);
  const TimeMs step = 150, last = now_ms - 25LL * 3600 * 1000;
  const TimeMs first = last - static_cast<TimeMs>(n) * step;
  for (size_t i = 1; i <= n; ++i) {
    out << "{\"v\":1,\"seq\":" << i << ",\"ts\":\"" << FormatTime(first + static_cast<TimeMs>(i) * step)
        << "\",\"type\":\"percept_arrived\",\"intensity\":" << 0.05 + 0.1 * static_cast<double>(i % 11) / 10
        << ",\"percept_id\":\"hb-" << i << "\",\"percept_type\":\"heartbeat\",\"source\":\"timer\","
        << "\"text\":\"tick " << i << "\"}\n";
  }
  out.close();
  if (!out) return Status::IOError("writing " + path);
  return Status::OK();
}

}  // namespace

Result<ConsolidateHealthResult> RunConsolidateHealth(const ConsolidateHealthOptions& o) {
  ConsolidateHealthResult r;
  const std::string log = o.dir + "/expired.jsonl";
  LIMBIC_RETURN_IF_ERROR(WriteExpiredLog(log, o.percepts, SystemClock::Default()->Now()));
  auto t_load = Clock::now();
  const std::string replay = o.limbic + " replay --from " + log + " --into " + o.dir + "/state > " +
                             o.dir + "/replay.log 2>&1";
  if (std::system(replay.c_str()) != 0) return Status::Internal("replay failed: see " + o.dir + "/replay.log");
  r.load_seconds = std::chrono::duration<double>(Clock::now() - t_load).count();
  std::filesystem::remove(log);
  {
    RunningLimbic running;
    LIMBIC_RETURN_IF_ERROR(StartLimbic(
        o.limbic, o.dir,
        {{"durability", {{"mode", "fsync"}}},
         {"percepts", {{"expire_after", "1d"}}},
         {"archive", {{"consolidate_every", "0s"}, {"percepts_after", "1d"}, {"rollup", false}}}},
        &running));
    r.rss_before_mib = RssMib(running.pid);
    std::atomic<bool> passing{true};
    std::string answer;
    auto t0 = Clock::now();
    std::thread pass([&] {
      r.status = Request(running.port, "POST", "/v1/consolidate", "{}", &answer);
      passing = false;
    });
    while (passing) {
      auto h0 = Clock::now();
      int status = Request(running.port, "GET", "/healthz", "", nullptr);
      if (status != 200) ++r.healthz_failed;
      else r.healthz_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - h0).count());
      r.rss_max_mib = std::max(r.rss_max_mib, RssMib(running.pid));
      std::this_thread::sleep_for(std::chrono::milliseconds(o.interval_ms));
    }
    pass.join();
    r.pass_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    r.rss_after_mib = RssMib(running.pid);
    r.answer = nlohmann::json::parse(answer, nullptr, false);
  }
  // The pool as the stopped runtime left it.
  state::ProjectionOptions po;
  po.path = o.dir + "/state/db";
  po.read_only = true;
  auto projection = state::Projection::Open(po);
  if (!projection.ok()) return projection.status();
  auto left = (*projection)->Count(state::Pool::kPercepts);
  if (!left.ok()) return left.status();
  r.percepts_left = *left;
  return r;
}

}  // namespace limbic::bench
