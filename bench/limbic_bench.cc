// limbic_bench: the figures in docs/performance.md.
//
//   ingest  durable percept ingest through the real write path (request ->
//           BuildPerceptAdd -> Engine::Submit -> group commit with fdatasync
//           -> RocksDB apply -> ack), with `window` requests in flight, as
//           many concurrent clients would have. Reports events/s, ack
//           latency p50/p99 (submit to ack) and the mean group size.
//   replay  Replay() of the log that ingest wrote into a fresh state dir:
//           decode + reduce + RocksDB + a copy of the log. Reports events/s.
//
// Prints one JSON object. Not part of `make test`.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "state/commands.h"
#include "state/engine.h"
#include "state/replay.h"

using namespace limbic;
using namespace limbic::state;
using SteadyClock = std::chrono::steady_clock;

namespace {

struct Args {
  size_t events = 200000;
  size_t window = 4096;
  std::string dir = "bench-data";
  std::string durability = "fsync";
};

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(i), v.end());
  return v[i];
}

nlohmann::json BenchIngest(const Args& a, const std::string& state_dir) {
  EngineOptions o;
  o.state_dir = state_dir;
  auto d = ParseDurability(a.durability);
  if (!d.ok()) {
    std::fprintf(stderr, "%s\n", d.status().ToString().c_str());
    std::exit(2);
  }
  o.durability = *d;
  auto opened = Engine::Open(o);
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().ToString().c_str());
    std::exit(1);
  }
  Engine& engine = **opened;
  size_t groups = 0;
  engine.AddListener([&](std::span<const Event>) { ++groups; });

  std::vector<double> latency_us;
  latency_us.reserve(a.events);
  const char* sources[] = {"github", "discord", "timer", "email"};
  auto start = SteadyClock::now();
  for (size_t i = 0; i < a.events; ++i) {
    nlohmann::json req = {{"source", sources[i % 4]},
                          {"type", "message"},
                          {"intensity", static_cast<double>(i % 100) / 100.0},
                          {"text", "benchmark percept number " + std::to_string(i)},
                          {"data", {{"n", i}}}};
    auto events = BuildPerceptAdd(req, engine.next_seq());
    auto submitted = SteadyClock::now();
    Status s = engine.Submit(std::move(events).value(),
                             [&latency_us, submitted](const Status& st, std::span<const Event>) {
                               if (!st.ok()) {
                                 std::fprintf(stderr, "ack: %s\n", st.ToString().c_str());
                                 std::exit(1);
                               }
                               latency_us.push_back(std::chrono::duration<double, std::micro>(
                                                        SteadyClock::now() - submitted)
                                                        .count());
                             });
    if (!s.ok()) {
      std::fprintf(stderr, "submit: %s\n", s.ToString().c_str());
      std::exit(1);
    }
    (void)engine.Poll(engine.pending_batches() >= a.window);
  }
  (void)engine.WaitIdle();
  double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  return {{"events", a.events},
          {"window", a.window},
          {"durability", a.durability},
          {"seconds", seconds},
          {"events_per_s", static_cast<double>(a.events) / seconds},
          {"ack_p50_us", Percentile(latency_us, 0.50)},
          {"ack_p99_us", Percentile(latency_us, 0.99)},
          {"groups", groups},
          {"mean_group", groups ? static_cast<double>(a.events) / static_cast<double>(groups) : 0}};
}

nlohmann::json BenchReplay(const std::string& state_dir, const std::string& into) {
  ReplayOptions o;
  o.from = EventsDirPath(state_dir);
  o.into = into;
  auto r = Replay(o);
  if (!r.ok()) {
    std::fprintf(stderr, "replay: %s\n", r.status().ToString().c_str());
    std::exit(1);
  }
  return {{"events", r->events},
          {"seconds", r->seconds},
          {"events_per_s", static_cast<double>(r->events) / r->seconds}};
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--events") a.events = std::stoul(v);
    else if (k == "--window") a.window = std::stoul(v);
    else if (k == "--dir") a.dir = v;
    else if (k == "--durability") a.durability = v;
    else {
      std::fprintf(stderr, "usage: limbic_bench [--events N] [--window W] [--dir DIR] "
                           "[--durability fsync|interval|none]\n");
      return 2;
    }
  }
  std::filesystem::remove_all(a.dir);
  std::filesystem::create_directories(a.dir);
  nlohmann::json out;
  out["ingest"] = BenchIngest(a, a.dir + "/ingest");
  out["replay"] = BenchReplay(a.dir + "/ingest", a.dir + "/replayed");
  std::printf("%s\n", out.dump(2).c_str());
  std::filesystem::remove_all(a.dir);
  return 0;
}
