// base/subprocess.h: the child leads its own group, and no process of the
// group outlives Terminate or Wait.
#include "base/subprocess.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/process_group.h"

// This file's own namespace: test programs compile in unity batches.
namespace subprocess_test {

using limbic::ExitStatus;
using limbic::SpawnOptions;
using limbic::Subprocess;
using limbic::testing::GroupGone;
using limbic::testing::LiveGroupMembers;

namespace {

struct Dir {
  std::string path;
  Dir() {
    char tmpl[] = "/tmp/limbic-subprocess-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~Dir() { std::system(("rm -rf " + path).c_str()); }
  std::string Script(const std::string& name, const std::string& body) const {
    std::string p = path + "/" + name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    chmod(p.c_str(), 0755);
    return p;
  }
};

// Reads one line from `fd` (blocking).
std::string ReadLine(int fd) {
  std::string line;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

}  // namespace

TEST_CASE("a spawned program leads its own group, and Terminate ends the whole group",
          "[state][subprocess]") {
  Dir dir;
  // A grandchild in the background, then reading stdin forever.
  std::string script = dir.Script("forever.sh", "sleep 1000 &\necho started\nexec cat\n");
  SpawnOptions o;
  o.argv = {script};
  o.pipe_stdin = true;
  auto p = Subprocess::Spawn(o);
  REQUIRE(p.ok());
  Subprocess& proc = **p;
  REQUIRE(ReadLine(proc.stdout_fd()) == "started");
  CHECK(getpgid(proc.pid()) == proc.pid());
  CHECK(getpgid(0) != proc.pid());
  CHECK(LiveGroupMembers(proc.pid()).size() == 2);  // cat and sleep
  CHECK_FALSE(proc.Exited());
  ExitStatus st = proc.Terminate(2000);
  CHECK(st.signal == SIGTERM);
  CHECK(st.Describe() == "was killed by signal 15");
  CHECK(GroupGone(proc.pid()));
}

TEST_CASE("a program that ignores SIGTERM is killed after the grace", "[state][subprocess]") {
  Dir dir;
  std::string script = dir.Script("stubborn.sh", "trap '' TERM\nsleep 1000 &\necho started\nwait\n");
  SpawnOptions o;
  o.argv = {script};
  auto p = Subprocess::Spawn(o);
  REQUIRE(p.ok());
  REQUIRE(ReadLine((*p)->stdout_fd()) == "started");
  pid_t pgid = (*p)->pid();
  ExitStatus st = (*p)->Terminate(100);
  CHECK(st.signal == SIGKILL);
  CHECK(GroupGone(pgid));
}

TEST_CASE("when the program exits by itself, Wait ends what it left running in its group",
          "[state][subprocess]") {
  Dir dir;
  std::string script = dir.Script("leaves.sh", "sleep 1000 &\nexit 3\n");
  SpawnOptions o;
  o.argv = {script};
  o.pipe_stdout = false;
  o.pipe_stderr = false;
  auto p = Subprocess::Spawn(o);
  REQUIRE(p.ok());
  pid_t pgid = (*p)->pid();
  ExitStatus st = (*p)->Wait();
  CHECK(st.exit_code == 3);
  CHECK(st.Describe() == "exited with status 3");
  CHECK(GroupGone(pgid));
}

TEST_CASE("the environment is applied over ours, and a missing program names itself",
          "[state][subprocess]") {
  Dir dir;
  std::string script = dir.Script("env.sh", "echo \"$LIMBIC_SUBPROCESS_TEST\"\n");
  SpawnOptions o;
  o.argv = {script};
  o.env = {"LIMBIC_SUBPROCESS_TEST=yes"};
  auto p = Subprocess::Spawn(o);
  REQUIRE(p.ok());
  CHECK(ReadLine((*p)->stdout_fd()) == "yes");
  CHECK((*p)->Wait().exit_code == 0);

  o.argv = {dir.path + "/missing"};
  auto missing = Subprocess::Spawn(o);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "exec " + dir.path + "/missing: No such file or directory");
}

}  // namespace subprocess_test
