// The test harness's own process helpers (process.h): a command run with a
// timeout is killed with everything it started.
#include "process.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

// This file's own namespace: test programs compile in unity batches.
namespace process_test {

using namespace limbic::testing;

namespace {

// Whether `pid` still runs (a zombie waiting for its reaper does not).
bool Running(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

}  // namespace

TEST_CASE("a command killed for taking too long takes what it started with it", "[harness]") {
  // The shell starts a sleep in the background, prints its pid, and waits.
  auto r = Run({"/bin/sh", "-c", "sleep 60 & echo $!; wait"}, "", 500);
  CHECK(r.exit_code == -9);
  const std::string pid = r.out.substr(0, r.out.find('\n'));
  REQUIRE_FALSE(pid.empty());
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !Running(pid);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(gone);
}

}  // namespace process_test
