// Effector::Cancel: an interrupted delivery reports kCancelled promptly,
// long before the effector's own timeout, and leaves nothing running.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/sinks/null_sink.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "effectors/effector.h"
#include "tests/http_server.h"
#include "tests/process_group.h"

// This file's own namespace: test programs compile in unity batches.
namespace cancel_test {

using namespace limbic;
using namespace limbic::effectors;
using nlohmann::json;
using Steady = std::chrono::steady_clock;

namespace {

std::shared_ptr<spdlog::logger> NullLog() {
  return std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::null_sink_mt>());
}

// Runs `ioc` until `outcome` is set or 10 s passed.
void RunUntil(boost::asio::io_context& ioc, const std::optional<Outcome>& outcome) {
  auto guard = boost::asio::make_work_guard(ioc);
  auto deadline = Steady::now() + std::chrono::seconds(10);
  while (!outcome && Steady::now() < deadline) ioc.run_one_for(std::chrono::milliseconds(50));
}

}  // namespace

TEST_CASE("cancelling an http delivery to a server that never answers returns at once",
          "[effectors]") {
  // A server that reads the request and never answers.
  limbic::testing::TestHttpServer server([](const limbic::testing::TestRequest&) { return std::nullopt; });
  boost::asio::io_context ioc;
  auto e = MakeEffector("hook",
                        {{"kind", "http"},
                         {"url", "http://127.0.0.1:" + std::to_string(server.port()) + "/in"},
                         {"timeout", "30s"}},
                        ioc, NullLog());
  REQUIRE(e.ok());
  std::optional<Outcome> outcome;
  auto t0 = Steady::now();
  (*e)->Deliver(Delivery{"a-1", "hook", "t", "k-1", "", json::object(), 1},
                [&](Outcome o) { outcome = o; });
  // Let it reach the blocking read (a cancel before that is caught too).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  (*e)->Cancel();
  RunUntil(ioc, outcome);
  REQUIRE(outcome);
  CHECK(outcome->kind == Outcome::Kind::kCancelled);
  CHECK(Steady::now() - t0 < std::chrono::seconds(5));
}

TEST_CASE("cancelling an exec delivery kills the program's whole process group", "[effectors]") {
  char tmpl[] = "/tmp/limbic-cancel-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string script = dir + "/slow.sh";
  std::string pidfile = dir + "/child.pid";
  // The shell starts a grandchild and waits on it: both must die.
  std::ofstream(script) << "#!/bin/sh\nsleep 60 &\necho $! > " << pidfile << ".tmp\nmv " << pidfile
                        << ".tmp " << pidfile << "\nwait\n";
  chmod(script.c_str(), 0755);
  boost::asio::io_context ioc;
  auto e = MakeEffector("run", {{"kind", "exec"}, {"argv", {script}}, {"timeout", "30s"}}, ioc,
                        NullLog());
  REQUIRE(e.ok());
  std::optional<Outcome> outcome;
  auto t0 = Steady::now();
  (*e)->Deliver(Delivery{"a-1", "run", "t", "k-1", "", json::object(), 1},
                [&](Outcome o) { outcome = o; });
  // Wait (bounded) until the grandchild exists, so the test can check it dies.
  while (!std::filesystem::exists(pidfile) && Steady::now() - t0 < std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(std::filesystem::exists(pidfile));
  pid_t grandchild = 0;
  std::ifstream(pidfile) >> grandchild;
  REQUIRE(grandchild > 0);
  (*e)->Cancel();
  RunUntil(ioc, outcome);
  REQUIRE(outcome);
  CHECK(outcome->kind == Outcome::Kind::kCancelled);
  CHECK(Steady::now() - t0 < std::chrono::seconds(10));
  // The grandchild got SIGKILL: gone, or a zombie waiting for its reaper.
  auto gone = [&] {
    if (kill(grandchild, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string pid, comm, state;
    stat >> pid >> comm >> state;
    return state == "Z" || state.empty();
  };
  auto deadline = Steady::now() + std::chrono::seconds(5);
  while (!gone() && Steady::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(gone());
  kill(grandchild, SIGKILL);  // whatever happened, leave nothing behind
  std::filesystem::remove_all(dir);
}

TEST_CASE("an exec delivery that times out leaves no process of its group behind",
          "[effectors]") {
  char tmpl[] = "/tmp/limbic-timeout-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string script = dir + "/hang.sh";
  std::string pidfile = dir + "/group.pid";
  // The program's pid is its group's id; it waits on a grandchild forever.
  std::ofstream(script) << "#!/bin/sh\nsleep 1000 &\necho $$ > " << pidfile << ".tmp\nmv "
                        << pidfile << ".tmp " << pidfile << "\nwait\n";
  chmod(script.c_str(), 0755);
  boost::asio::io_context ioc;
  auto e = MakeEffector("run", {{"kind", "exec"}, {"argv", {script}}, {"timeout", "1s"}}, ioc,
                        NullLog());
  REQUIRE(e.ok());
  std::optional<Outcome> outcome;
  (*e)->Deliver(Delivery{"a-1", "run", "t", "k-1", "", json::object(), 1},
                [&](Outcome o) { outcome = o; });
  RunUntil(ioc, outcome);
  REQUIRE(outcome);
  CHECK(outcome->kind == Outcome::Kind::kRetry);
  CHECK(outcome->error == "timed out after 1000 ms");
  REQUIRE(std::filesystem::exists(pidfile));
  pid_t pgid = 0;
  std::ifstream(pidfile) >> pgid;
  REQUIRE(pgid > 0);
  CHECK(limbic::testing::GroupGone(pgid));
  std::filesystem::remove_all(dir);
}

}  // namespace cancel_test
