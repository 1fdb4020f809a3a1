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
// The commands take turns, one run of each per round, so that a shared,
// noisy machine slows them alike; "x_true" is the median over the rounds
// of the command's time over /bin/true's in the same round.
//
//   limbic_startup_bench [--limbic PATH] [--runs 30] [--dir D]
//
// Prints one JSON object: {"command": {"median_ms", "p90_ms", "x_true"}, ...}.
#include <fcntl.h>
#include <spawn.h>
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

// Runs argv with stdout and stderr to /dev/null; the wall time in ms, or
// -1 when it could not start or did not exit 0.
double TimeOnce(const std::vector<std::string>& argv) {
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
  if (rc != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  const auto t1 = std::chrono::steady_clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

bool Run(const std::vector<std::string>& argv) { return TimeOnce(argv) >= 0; }

}  // namespace

int main(int argc, char** argv) {
  std::string limbic = (std::filesystem::path(argv[0]).parent_path() / "limbic").string();
  int runs = 30;
  std::string dir = "/tmp/limbic-startup-bench";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
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
    if (TimeOnce(c.argv) < 0) out[c.name] = "could not run";
    else ran.push_back(c);
  }
  if (ran.empty() || ran[0].name != "/bin/true") {
    std::fprintf(stderr, "/bin/true did not run: nothing to compare with\n");
    return 1;
  }
  std::vector<std::vector<double>> ms(ran.size());
  for (int r = 0; r < runs; ++r)
    for (size_t i = 0; i < ran.size(); ++i) ms[i].push_back(TimeOnce(ran[i].argv));
  for (size_t i = 0; i < ran.size(); ++i) {
    std::vector<double> ratios;  // ran[0] is /bin/true
    for (int r = 0; r < runs; ++r) ratios.push_back(ms[i][r] / ms[0][r]);
    out[ran[i].name] = {{"median_ms", limbic::bench::Quantile(ms[i], 0.5)},
                        {"p90_ms", limbic::bench::Quantile(ms[i], 0.9)},
                        {"x_true", limbic::bench::Quantile(ratios, 0.5)}};
  }
  std::cout << out.dump(2) << "\n";
  std::filesystem::remove_all(dir);
  return 0;
}
