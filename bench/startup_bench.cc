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
//   limbic_startup_bench [--limbic PATH] [--runs 10] [--dir D]
//
// Prints one JSON object: {"command": {"median_ms", "p90_ms"}, ...}.
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
  int runs = 10;
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
  nlohmann::json out = nlohmann::json::object();
  for (const auto& c : commands) {
    if (TimeOnce(c.argv) < 0) {  // also warms the page cache
      out[c.name] = "could not run";
      continue;
    }
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r) ms.push_back(TimeOnce(c.argv));
    out[c.name] = {{"median_ms", limbic::bench::Quantile(ms, 0.5)},
                   {"p90_ms", limbic::bench::Quantile(ms, 0.9)}};
  }
  std::cout << out.dump(2) << "\n";
  std::filesystem::remove_all(dir);
  return 0;
}
