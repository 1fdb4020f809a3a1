// Start-up cost of the limbic binary (docs/performance.md, "Start-up"):
// the wall time of whole processes -- exec, dynamic linking, static
// initialisers, the command line, opening the state dir, the answer --
// median and p90 over --runs, for
//   limbic --version
//   limbic percept list          on a small state dir (20 percepts)
//   limbic memory recall hello   on the same dir (20 facts)
// against baselines measured in the same run: /bin/true (exec alone) and
// `sqlite3 :memory: "select 1"` when sqlite3 is installed.
//
// Each command takes turns with /bin/true, one run of each per round, so
// that a shared, noisy machine slows both alike; "x_true" is the median
// over the rounds of the command's time over /bin/true's in the same
// round, "true_ms" /bin/true's median in those rounds. "cpu_ms" (and
// "true_cpu_ms") is the median of the process's user + system time: what
// waiting for a core shared with other work does not inflate. The commands are
// not interleaved with each other: the writes of `memory recall` (it
// reinforces what it returns) and their write-back slowed the commands
// that followed it by half (bench/NOTES.md, "2026-11-28: start-up").
//
//   limbic_startup_bench [--limbic PATH] [--runs 30] [--dir D]
//
// Prints one JSON object: {"command": {"median_ms", "p90_ms", "true_ms", "x_true", "cpu_ms",
//  "true_cpu_ms"}, ...}.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/report.h"

extern char** environ;

namespace {

struct Times {
  double wall_ms = -1;  // -1: it could not start or did not exit 0
  double cpu_ms = -1;   // user + system, from wait4
};

// Runs argv with stdout and stderr to /dev/null.
Times TimeOnce(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return {};
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  const auto t1 = std::chrono::steady_clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  auto ms = [](const timeval& tv) { return tv.tv_sec * 1e3 + tv.tv_usec / 1e3; };
  return {std::chrono::duration<double, std::milli>(t1 - t0).count(),
          ms(ru.ru_utime) + ms(ru.ru_stime)};
}

bool Run(const std::vector<std::string>& argv) { return TimeOnce(argv).wall_ms >= 0; }

}  // namespace

int main(int argc, char** argv) {
  std::string limbic = (std::filesystem::path(argv[0]).parent_path() / "limbic").string();
  int runs = 30;
  std::string dir = "/tmp/limbic-startup-bench";
  for (int i = 1; i < argc; i += 2) {
    std::string k = argv[i];
    if (i + 1 == argc) {
      std::fprintf(stderr, "usage: limbic_startup_bench [--limbic PATH] [--runs N] [--dir D]\n");
      return 2;
    }
    if (k == "--limbic") limbic = argv[i + 1];
    else if (k == "--runs") runs = std::max(1, std::atoi(argv[i + 1]));
    else if (k == "--dir") dir = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string state = dir + "/state";
  for (int i = 0; i < 20; ++i) {
    const std::string n = std::to_string(i);
    if (!Run({limbic, "--state", state, "percept", "add", "--source", "bench", "--type", "note",
              "--text", "hello number " + n}) ||
        !Run({limbic, "--state", state, "memory", "remember", "user" + n, "says", "hello " + n})) {
      std::fprintf(stderr, "could not set up the state dir with %s\n", limbic.c_str());
      return 1;
    }
  }
  struct Command {
    std::string name;
    std::vector<std::string> argv;
  };
  std::vector<Command> commands = {
      {"/bin/true", {"/bin/true"}},
      {"sqlite3 select 1", {"sqlite3", ":memory:", "select 1"}},
      {"limbic --version", {limbic, "--version"}},
      {"limbic percept list", {limbic, "--state", state, "percept", "list"}},
      {"limbic memory recall hello", {limbic, "--state", state, "memory", "recall", "hello"}},
  };
  // A first run of each warms the page cache; one that cannot run is left out.
  nlohmann::json out = nlohmann::json::object();
  std::vector<Command> ran;
  for (const auto& c : commands) {
    if (TimeOnce(c.argv).wall_ms < 0) out[c.name] = "could not run";
    else ran.push_back(c);
  }
  if (ran.empty() || ran[0].name != "/bin/true") {
    std::fprintf(stderr, "/bin/true did not run: nothing to compare with\n");
    return 1;
  }
  ::sync();  // the set-up's writes go to disk before anything is timed
  const Command& bin_true = ran[0];
  for (size_t i = 1; i < ran.size(); ++i) {
    std::vector<double> ms, true_ms, ratios, cpu, true_cpu;
    for (int r = 0; r < runs; ++r) {
      const Times t = TimeOnce(bin_true.argv);
      const Times c = TimeOnce(ran[i].argv);
      true_ms.push_back(t.wall_ms);
      ms.push_back(c.wall_ms);
      ratios.push_back(c.wall_ms / t.wall_ms);
      true_cpu.push_back(t.cpu_ms);
      cpu.push_back(c.cpu_ms);
    }
    using limbic::bench::Quantile;
    out[ran[i].name] = {{"median_ms", Quantile(ms, 0.5)},  {"p90_ms", Quantile(ms, 0.9)},
                        {"true_ms", Quantile(true_ms, 0.5)}, {"x_true", Quantile(ratios, 0.5)},
                        {"cpu_ms", Quantile(cpu, 0.5)},     {"true_cpu_ms", Quantile(true_cpu, 0.5)}};
    ::sync();
  }
  std::cout << out.dump(2) << "\n";
  std::filesystem::remove_all(dir);
  return 0;
}
