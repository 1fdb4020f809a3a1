// Replicated ingest (docs/scale.md, docs/performance.md "Replication"):
// percepts over HTTP into a real `limbic run` (bench/http_ingest.h, 64
// keep-alive connections, fsync durability) with replication off, `async`
// and `quorum`, against a JetStream cluster of three nats-server processes
// on this machine (R3 stream, file storage). The modes alternate, --reps
// rounds of each, so all three see the same machine.
//
//   limbic_replication_bench [--limbic PATH] [--nats-server PATH] [--seconds 5]
//                            [--reps 2] [--connections 64] [--modes local,async,quorum] [--dir D]
//
// Prints one JSON object: {mode: {"percepts_per_s", "p50_us", "p99_us",
// "reps": [...]}, "async_vs_local", "quorum_vs_local"}.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/nats.h"
#include "bench/http_ingest.h"
#include "bench/report.h"

extern char** environ;

namespace {

using limbic::bench::Quantile;

uint16_t FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// CPU seconds (user + system) a process has used so far.
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stod(f);
    if (i == 15) stime = std::stod(f);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Three nats-server processes with JetStream, clustered over loopback routes.
struct Cluster {
  std::vector<pid_t> pids;
  std::vector<std::string> urls;
  ~Cluster() {
    for (pid_t p : pids) kill(p, SIGTERM);
    for (pid_t p : pids) waitpid(p, nullptr, 0);
  }
};

bool StartCluster(const std::string& server, const std::string& dir, Cluster* c) {
  std::vector<uint16_t> client, route;
  for (int i = 0; i < 3; ++i) {
    client.push_back(FreePort());
    route.push_back(FreePort());
  }
  std::string routes;
  for (int i = 0; i < 3; ++i)
    routes +=
        (routes.empty() ? "" : ",") + std::string("nats://127.0.0.1:") + std::to_string(route[i]);
  for (int i = 0; i < 3; ++i) {
    std::string store = dir + "/nats-" + std::to_string(i);
    std::filesystem::create_directories(store);
    std::vector<std::string> argv = {server,
                                     "-a",
                                     "127.0.0.1",
                                     "-p",
                                     std::to_string(client[i]),
                                     "-js",
                                     "-sd",
                                     store,
                                     "-n",
                                     "node" + std::to_string(i),
                                     "--cluster_name",
                                     "limbic-bench",
                                     "--cluster",
                                     "nats://127.0.0.1:" + std::to_string(route[i]),
                                     "--routes",
                                     routes};
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, (store + ".log").c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, server.c_str(), &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return false;
    c->pids.push_back(pid);
    c->urls.push_back("nats://127.0.0.1:" + std::to_string(client[i]));
  }
  // Ready once an R3 stream can be made (the cluster has a meta leader).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    limbic::nats::ConnectOptions co;
    co.servers = c->urls;
    auto conn = limbic::nats::Connection::Connect(co);
    if (conn.ok()) {
      auto s = (*conn)->EnsureStream({"READY", {"bench.ready"}, 3, false});
      if (s.ok()) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::string limbic = "./limbic", server = "/usr/sbin/nats-server", dir;
  double seconds = 5;
  int reps = 2;
  std::string only;  // --modes local,async,quorum
  int connections = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--limbic")
      limbic = argv[i + 1];
    else if (a == "--nats-server")
      server = argv[i + 1];
    else if (a == "--seconds")
      seconds = std::stod(argv[i + 1]);
    else if (a == "--reps")
      reps = std::stoi(argv[i + 1]);
    else if (a == "--dir")
      dir = argv[i + 1];
    else if (a == "--modes")
      only = argv[i + 1];
    else if (a == "--connections")
      connections = std::stoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (dir.empty()) {
    char tmpl[] = "/tmp/limbic-replication-bench-XXXXXX";
    dir = mkdtemp(tmpl);
  }
  if (access(server.c_str(), X_OK) != 0) server = "nats-server";
  Cluster cluster;
  if (!StartCluster(server, dir, &cluster)) {
    std::fprintf(stderr, "replication bench: the NATS cluster did not start (%s)\n",
                 server.c_str());
    return 1;
  }
  struct Mode {
    std::string name;
    std::vector<double> rates;
    std::vector<double> latency_us;
    double nats_cpu = 0;  // CPU seconds of the three servers per second of the run
  };
  std::vector<Mode> modes = {{"local", {}, {}}, {"async", {}, {}}, {"quorum", {}, {}}};
  for (int rep = 0; rep < reps; ++rep) {
    for (Mode& m : modes) {
      if (!only.empty() && ("," + only + ",").find("," + m.name + ",") == std::string::npos) continue;
      double cpu0 = 0;
      for (pid_t p : cluster.pids) cpu0 += CpuSeconds(p);
      auto t0 = std::chrono::steady_clock::now();
      limbic::bench::HttpIngestOptions o;
      o.limbic = limbic;
      o.dir = dir + "/" + m.name + "-" + std::to_string(rep);
      std::filesystem::create_directories(o.dir);
      o.seconds = seconds;
      o.connections = connections;
      if (m.name != "local")
        o.extra_config = {{"replication",
                           {{"nats", cluster.urls},
                            {"stream", "BENCH_" + m.name + "_" + std::to_string(rep)},
                            {"agent", "bench-" + m.name + "-" + std::to_string(rep)},
                            {"mode", m.name}}}};
      auto r = limbic::bench::RunHttpIngest(o);
      if (!r.ok()) {
        std::fprintf(stderr, "%s: %s\n", m.name.c_str(), r.status().message().c_str());
        return 1;
      }
      m.rates.push_back(static_cast<double>(r->percepts) / r->seconds);
      double cpu1 = 0;
      for (pid_t p : cluster.pids) cpu1 += CpuSeconds(p);
      m.nats_cpu += (cpu1 - cpu0) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                    reps;
      m.latency_us.insert(m.latency_us.end(), r->latency_us.begin(), r->latency_us.end());
      std::fprintf(stderr, "%s rep %d: %.0f percepts/s (%llu failed), nats-servers %.2f cores\n", m.name.c_str(),
                   rep, m.rates.back(), static_cast<unsigned long long>(r->failed),
                   (cpu1 - cpu0) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      std::filesystem::remove_all(o.dir + "/state");
    }
  }
  nlohmann::json out;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty()      ? 0
           : v.size() % 2 ? v[v.size() / 2]
                          : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  for (Mode& m : modes)
    out[m.name] = {{"percepts_per_s", median(m.rates)},
                   {"p50_us", Quantile(m.latency_us, 0.5)},
                   {"p99_us", Quantile(m.latency_us, 0.99)},
                   {"nats_server_cores", m.nats_cpu},
                   {"reps", m.rates}};
  const double local = median(modes[0].rates);
  if (local > 0) {
    out["async_vs_local"] = median(modes[1].rates) / local;
    out["quorum_vs_local"] = median(modes[2].rates) / local;
  }
  std::cout << out.dump(2) << std::endl;
  return 0;
}
