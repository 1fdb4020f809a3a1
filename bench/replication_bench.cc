// Replicated ingest (docs/scale.md, docs/performance.md "Replication"):
// percepts over HTTP into a real `limbic run` (bench/http_ingest.h, 64
// keep-alive connections, fsync durability) with replication off, `async`
// and `quorum`, against a JetStream cluster of three nats-server processes
// on this machine (R3 stream, file storage). The modes alternate, --reps
// rounds of each, so all three see the same machine.
//
// Prints one JSON object: {mode: {"percepts_per_s", "p50_us", "p99_us",
// "reps": [...]}, "async_vs_local", "quorum_vs_local"}. kUsage lists the
// options; anything else is refused (exit 2) before anything starts.
//
// Scratch: without --dir, everything (the servers' stores, the state dirs)
// goes under a new limbic-replication-bench-XXXXXX in the temp dir
// ($TMPDIR, else /tmp), removed on every way out -- success, a failure,
// SIGINT or SIGTERM (which stop the bench after the run under way) --
// unless --keep is given. A --dir is the caller's and is left as it is.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/free_ports.h"
#include "base/nats.h"
#include "bench/http_ingest.h"
#include "bench/report.h"

extern char** environ;

namespace {

using limbic::bench::Quantile;

constexpr const char* kUsage =
    "usage: limbic_replication_bench [options]\n"
    "  --limbic PATH        the limbic binary (default ./limbic)\n"
    "  --nats-server PATH   the nats-server binary (default /usr/sbin/nats-server, else PATH)\n"
    "  --seconds S          seconds of ingest per run (default 5)\n"
    "  --reps N             rounds of each mode (default 2)\n"
    "  --connections N      HTTP connections (default 64)\n"
    "  --modes LIST         of local,async,quorum (default all three; local alone starts no NATS)\n"
    "  --dir DIR            work in DIR (kept) instead of a scratch dir in the temp dir\n"
    "  --keep               keep the scratch dir (its path is printed)\n"
    "  --help               print this and exit\n";

// SIGINT/SIGTERM: stop after the run under way, through the normal way out.
volatile std::sig_atomic_t g_signal = 0;
void OnSignal(int sig) { g_signal = sig; }

struct Args {
  std::string limbic = "./limbic";
  std::string server = "/usr/sbin/nats-server";
  bool server_given = false;
  std::string dir;
  double seconds = 5;
  int reps = 2;
  int connections = 64;
  std::string modes;  // "" = all
  bool keep = false;
};

// Parses the command line; an error names the bad argument.
std::optional<std::string> Parse(int argc, char** argv, Args* a, bool* help) {
  auto number = [](const std::string& flag, const std::string& text, double lo,
                   double* out) -> std::optional<std::string> {
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno != 0 || !(v >= lo) || v > 1e9)
      return flag + ": \"" + text + "\" is not a number >= " + std::to_string(static_cast<int>(lo));
    *out = v;
    return std::nullopt;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      *help = true;
      return std::nullopt;
    }
    if (flag == "--keep") {
      a->keep = true;
      continue;
    }
    static const std::vector<std::string> kValued = {
        "--limbic", "--nats-server", "--seconds", "--reps", "--connections", "--modes", "--dir"};
    if (std::find(kValued.begin(), kValued.end(), flag) == kValued.end())
      return "unknown argument \"" + flag + "\"";
    if (i + 1 >= argc) return flag + " needs a value";
    const std::string value = argv[++i];
    double v = 0;
    if (flag == "--limbic") {
      a->limbic = value;
    } else if (flag == "--nats-server") {
      a->server = value;
      a->server_given = true;
    } else if (flag == "--dir") {
      a->dir = value;
    } else if (flag == "--modes") {
      std::string rest = value + ",";
      for (size_t at = 0, comma; (comma = rest.find(',', at)) != std::string::npos;
           at = comma + 1) {
        std::string m = rest.substr(at, comma - at);
        if (m != "local" && m != "async" && m != "quorum")
          return "--modes: \"" + m + "\" is not local, async or quorum";
      }
      a->modes = value;
    } else if (flag == "--seconds") {
      if (auto e = number(flag, value, 0, &v)) return e;
      if (v <= 0) return "--seconds must be more than 0";
      a->seconds = v;
    } else if (auto e = number(flag, value, 1, &v)) {
      return e;
    } else if (v != static_cast<int>(v)) {
      return flag + ": \"" + value + "\" is not a whole number";
    } else {
      (flag == "--reps" ? a->reps : a->connections) = static_cast<int>(v);
    }
  }
  return std::nullopt;
}

// The scratch dir, removed when this goes out of scope unless kept. Made
// before the cluster, so it is removed after the servers have stopped.
class Scratch {
 public:
  ~Scratch() {
    if (path_.empty()) return;
    if (keep_) {
      std::fprintf(stderr, "replication bench: kept %s\n", path_.c_str());
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    if (ec)
      std::fprintf(stderr, "replication bench: could not remove %s: %s\n", path_.c_str(),
                   ec.message().c_str());
  }
  // Makes limbic-replication-bench-XXXXXX in the temp dir.
  bool Make(bool keep) {
    keep_ = keep;
    std::error_code ec;
    std::string tmpl =
        (std::filesystem::temp_directory_path(ec) / "limbic-replication-bench-XXXXXX").string();
    if (ec) tmpl = "/tmp/limbic-replication-bench-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) return false;
    path_ = tmpl;
    return true;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool keep_ = false;
};

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
  // Six distinct ports: two picked apart could be the same one, and a
  // server that cannot bind its port leaves the cluster without a quorum.
  auto ports = limbic::FreeLoopbackPorts(6);
  if (!ports.ok()) {
    std::fprintf(stderr, "replication bench: %s\n", ports.status().message().c_str());
    return false;
  }
  std::vector<uint16_t> client(ports->begin(), ports->begin() + 3);
  std::vector<uint16_t> route(ports->begin() + 3, ports->end());
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
  while (std::chrono::steady_clock::now() < deadline && g_signal == 0) {
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

int Bench(const Args& args, const std::string& dir) {
  const std::string& server = args.server;
  const std::string& only = args.modes;
  auto selected = [&only](const std::string& mode) {
    return only.empty() || ("," + only + ",").find("," + mode + ",") != std::string::npos;
  };
  // The local mode alone needs no NATS: a run of it starts no cluster.
  Cluster cluster;
  if ((selected("async") || selected("quorum")) && !StartCluster(server, dir, &cluster)) {
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
  const int reps = args.reps;
  for (int rep = 0; rep < reps; ++rep) {
    for (Mode& m : modes) {
      if (!selected(m.name)) continue;
      if (g_signal != 0) {
        std::fprintf(stderr, "replication bench: stopped by signal %d\n",
                     static_cast<int>(g_signal));
        return 128 + g_signal;
      }
      double cpu0 = 0;
      for (pid_t p : cluster.pids) cpu0 += CpuSeconds(p);
      auto t0 = std::chrono::steady_clock::now();
      limbic::bench::HttpIngestOptions o;
      o.limbic = args.limbic;
      o.dir = dir + "/" + m.name + "-" + std::to_string(rep);
      std::filesystem::create_directories(o.dir);
      o.seconds = args.seconds;
      o.connections = args.connections;
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

}  // namespace

int main(int argc, char** argv) {
  Args args;
  bool help = false;
  if (auto error = Parse(argc, argv, &args, &help)) {
    std::fprintf(stderr, "limbic_replication_bench: %s\n%s", error->c_str(), kUsage);
    return 2;
  }
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::string server = args.server;
  if (access(server.c_str(), X_OK) != 0) {
    if (args.server_given) {
      std::fprintf(stderr, "limbic_replication_bench: --nats-server %s: not an executable\n",
                   server.c_str());
      return 1;
    }
    server = "nats-server";  // on PATH
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  Scratch scratch;  // outlives everything below
  std::string dir = args.dir;
  if (dir.empty()) {
    if (!scratch.Make(args.keep)) {
      std::fprintf(stderr, "replication bench: cannot make a scratch dir: %s\n",
                   std::strerror(errno));
      return 1;
    }
    dir = scratch.path();
  }
  Args run = args;
  run.server = server;
  try {
    return Bench(run, dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "replication bench: %s\n", e.what());
    return 1;
  }
}
