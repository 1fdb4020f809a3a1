// The README's tour, run as written -- twice, as a newcomer who follows it
// a second time would: its `sh` blocks are taken from README.md itself, so
// the README and the binary cannot drift apart.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace tour_test {

using namespace limbic::testing;

namespace {

std::string ReadReadme() {
  std::ifstream in(std::string(LIMBIC_SOURCE_DIR) + "/README.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The ```sh blocks between the headings `from` and `to`, one string each; a
// block of prompts and answers ("$ cmd") is not a script and is left out.
std::vector<std::string> ShBlockList(const std::string& readme, const std::string& from,
                                     const std::string& to) {
  size_t begin = readme.find(from);
  size_t end = readme.find(to, begin);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::vector<std::string> out;
  for (size_t at = readme.find("```sh\n", begin); at != std::string::npos && at < end;
       at = readme.find("```sh\n", at)) {
    at += 6;
    size_t close = readme.find("```", at);
    std::string block = readme.substr(at, close - at);
    if (!block.starts_with("$ ")) out.push_back(block);
    at = close + 3;
  }
  return out;
}

// The same blocks, joined.
std::string ShBlocks(const std::string& readme, const std::string& from, const std::string& to) {
  std::string out;
  for (const auto& block : ShBlockList(readme, from, to)) out += block;
  return out;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// `command` run in `dir` (by default what `make run` runs: the default
// config, ./limbic-data), on port 0 instead of its own (so the test runs
// beside anything); the lines before the running one.
struct TourRuntime {
  explicit TourRuntime(const std::string& dir, const std::string& command = "build/limbic run")
      : child({"/bin/sh", "-c", "cd '" + dir + "' && exec " + command + " --port 0"}, true) {
    std::string line;
    while (child.ReadLine(&line, 20000)) {
      auto at = line.find("api http://127.0.0.1:");
      if (at != std::string::npos) {
        port = static_cast<uint16_t>(std::stoi(line.substr(at + 21)));
        running = line;
        break;
      }
      before.push_back(line);
    }
  }
  ~TourRuntime() {
    child.Kill(SIGTERM);
    child.Wait();
  }
  Child child;
  uint16_t port = 0;
  std::string running;
  std::vector<std::string> before;
};

}  // namespace

TEST_CASE("the README tour works as written, on a first and a second run", "[cli][tour]") {
  const std::string readme = ReadReadme();
  const std::string loop = ShBlocks(readme, "### The running loop", "### The state on the command line");
  const std::string offline = ShBlocks(readme, "### The state on the command line", "### The mind");
  REQUIRE(loop.find("curl") != std::string::npos);
  REQUIRE(offline.find("$L fork") != std::string::npos);
  TempDir dir;
  std::filesystem::create_directories(dir / "build");
  REQUIRE(::symlink(LimbicBinary().c_str(), (dir / "build/limbic").c_str()) == 0);

  for (int round = 1; round <= 2; ++round) {
    INFO("round " << round);
    {
      TourRuntime rt(dir.path());
      REQUIRE(rt.port != 0);
      // "It prints one line naming what it runs."
      CHECK(rt.before.empty());
      CHECK_THAT(rt.running, Catch::Contains("running: state ./limbic-data, api http://127.0.0.1:"));
      // The SSE stream never ends: the tour's reader stops it with Ctrl-C.
      std::string script = Replace(loop, "localhost:7077", "127.0.0.1:" + std::to_string(rt.port));
      script = Replace(script, "curl -sN '", "streamed curl -sN --max-time 1 '");
      auto r = Run({"/bin/bash", "-c",
                    "set -eu; streamed() { \"$@\" || [ $? -eq 28 ]; }; cd '" + dir.path() + "'; " + script},
                   "", 60000);
      INFO(r.out << r.err);
      CHECK(r.exit_code == 0);
      CHECK_THAT(r.out, Catch::Contains("\"type\":\"percept_arrived\""));
      CHECK_THAT(r.out, Catch::Contains("reflex github-issue-opened"));
      CHECK_THAT(r.out, Catch::Contains("delivered"));
      CHECK_THAT(r.out, Catch::Contains("<title>limbic inspector</title>"));
      CHECK_THAT(r.out, !Catch::Contains("already_exists"));
    }
    auto r = Run({"/bin/bash", "-c", "set -eu; cd '" + dir.path() + "'; unset LIMBIC_STATE; " + offline},
                 "", 120000);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("ok: state at seq"));
    CHECK_THAT(r.out, Catch::Contains("a sandbox"));
    CHECK_THAT(r.err, Catch::Contains("until `limbic run` starts"));
  }
}

// The tour's mind: the example agent of config/examples/mind, started by the
// section's first block (on port 0), the rest run as written against it --
// twice, in one dir, as a reader following the tour again would.
TEST_CASE("the README tour's mind runs as written, on a first and a second run", "[cli][tour][mind]") {
  const std::vector<std::string> blocks = ShBlockList(ReadReadme(), "### The mind", "## Documentation");
  REQUIRE(blocks.size() >= 2);
  const std::string start = blocks[0].substr(0, blocks[0].find_last_not_of(" \n") + 1);
  REQUIRE(start == "build/limbic run --config config/examples/mind/limbic.json");
  std::string script;
  for (size_t i = 1; i < blocks.size(); ++i) script += blocks[i];
  TempDir dir;
  std::filesystem::create_directories(dir / "build");
  REQUIRE(::symlink(LimbicBinary().c_str(), (dir / "build/limbic").c_str()) == 0);
  REQUIRE(::symlink((std::string(LIMBIC_SOURCE_DIR) + "/config").c_str(), (dir / "config").c_str()) == 0);

  for (int round = 1; round <= 2; ++round) {
    INFO("round " << round);
    TourRuntime rt(dir.path(), start);
    REQUIRE(rt.port != 0);
    // "It names the mind it watches attention for, then what it runs."
    REQUIRE(rt.before.size() == 1);
    CHECK_THAT(rt.before[0], Catch::Contains("mind: main (exec, /usr/bin/python3) watching attention"));
    CHECK_THAT(rt.running, Catch::Contains("running: state ./limbic-mind-data, api http://127.0.0.1:"));
    CHECK_THAT(rt.running, Catch::Contains("effectors [reply (log)], 2 reflex rules"));
    auto r = Run({"/bin/bash", "-c",
                  "set -eu; cd '" + dir.path() + "'; unset LIMBIC_STATE; " +
                      Replace(script, "localhost:7080", "127.0.0.1:" + std::to_string(rt.port))},
                 "", 120000);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("\"type\":\"mind_slept\""));
    CHECK_THAT(r.out, Catch::Contains("\"outcome\":\"exited\""));
    CHECK_THAT(r.out, Catch::Contains("mind.py"));          // the steps' model
    CHECK_THAT(r.out, Catch::Contains("answered chat-"));   // a step's text
    CHECK_THAT(r.out, Catch::Contains("[by mind:main]  (session m-"));  // who enqueued the reply, and why
    CHECK_THAT(r.out, Catch::Contains("delivered"));
    CHECK_THAT(r.out, Catch::Contains("mind_woken"));         // why of the percept: the session
    CHECK_THAT(r.out, Catch::Contains("exited, 3 steps"));
    CHECK_THAT(r.err, Catch::Equals(""));
  }
}

}  // namespace tour_test
