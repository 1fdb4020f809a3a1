// base/process_groups.h: the groups Subprocess starts are recorded, and
// EndLeftovers ends exactly the groups it can prove are a dead run's.
#include "base/process_groups.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "base/subprocess.h"
#include "tests/process_group.h"

// This file's own namespace: test programs compile in unity batches.
namespace process_groups_test {

using limbic::LeftoverGroup;
using limbic::ProcessGroupJournal;
using limbic::testing::GroupGone;
using limbic::testing::LiveGroupMembers;
using nlohmann::json;
using Outcome = LeftoverGroup::Outcome;

namespace {

struct Dir {
  std::string path;
  Dir() {
    char tmpl[] = "/tmp/limbic-groups-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~Dir() { std::system(("rm -rf " + path).c_str()); }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// A process group of its own, as Subprocess makes one but without it (so
// no journal is involved): `sh -c command`, its pid the group id.
pid_t StartGroup(const std::string& command) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // either side may win the race; both ask the same
  return pid;
}

uint64_t StartOf(pid_t pid) {
  auto st = limbic::ReadProcStat(pid);
  REQUIRE(st.ok());
  return st->start_ticks;
}

// A pid that no process has any more, and a start time no process had.
pid_t DeadPid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

// Waits (bounded) until `path` holds a line; returns it as a pid.
pid_t ReadPid(const std::string& path) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path);
    long pid = 0;
    if (in >> pid && pid > 0) return static_cast<pid_t>(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("no pid in " << path);
  return 0;
}

struct RecordSpec {
  pid_t pgid;
  uint64_t leader_start;
  uint64_t recorded_at;
  pid_t owner_pid;
  uint64_t owner_start = 1;
  std::string boot_id = limbic::BootId();
};

// A record as a run writes it (the grammar of base/process_groups.h).
void WriteRecord(const std::string& dir, const RecordSpec& r) {
  std::ofstream(dir + "/" + std::to_string(r.pgid) + ".json")
      << json{{"pgid", r.pgid},         {"leader_start", r.leader_start},
              {"recorded_at", r.recorded_at}, {"boot_id", r.boot_id},
              {"owner_pid", r.owner_pid}, {"owner_start", r.owner_start},
              {"argv0", "/bin/sh"}}
             .dump();
}

void WriteHeartbeat(const std::string& dir, pid_t owner_pid, uint64_t owner_start, uint64_t at) {
  std::ofstream(dir + "/heartbeat.json") << json{{"boot_id", limbic::BootId()},
                                                 {"owner_pid", owner_pid},
                                                 {"owner_start", owner_start},
                                                 {"at", at}}
                                                .dump();
}

const LeftoverGroup* Find(const std::vector<LeftoverGroup>& report, pid_t pgid) {
  for (const LeftoverGroup& g : report)
    if (g.pgid == pgid) return &g;
  return nullptr;
}

// Leaves nothing behind, whatever the test did.
struct Cleanup {
  std::vector<pid_t> groups;
  ~Cleanup() {
    for (pid_t g : groups) {
      ::kill(-g, SIGKILL);
      ::waitpid(g, nullptr, WNOHANG);
    }
  }
};

}  // namespace

TEST_CASE("a spawned group is recorded until it was sent SIGKILL", "[base][subprocess]") {
  Dir dir;
  auto journal = ProcessGroupJournal::Open(dir / "subprocesses");
  REQUIRE(journal.ok());
  limbic::SetProcessGroupJournal(*journal);
  limbic::SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "sleep 1000 & exec sleep 1000"};
  auto p = limbic::Subprocess::Spawn(o);
  limbic::SetProcessGroupJournal(nullptr);
  REQUIRE(p.ok());
  const pid_t pgid = (*p)->pid();
  const std::string record = dir / ("subprocesses/" + std::to_string(pgid) + ".json");
  REQUIRE(Exists(record));
  std::ifstream in(record);
  json r = json::parse(in);
  CHECK(r["pgid"] == pgid);
  CHECK(r["leader_start"] == StartOf(pgid));
  CHECK(r["recorded_at"].get<uint64_t>() >= r["leader_start"].get<uint64_t>());
  CHECK(r["boot_id"] == limbic::BootId());
  CHECK(r["owner_pid"] == ::getpid());
  CHECK(r["owner_start"] == StartOf(::getpid()));
  CHECK(r["argv0"] == "/bin/sh");
  (*p)->Terminate(1000);
  CHECK_FALSE(Exists(record));
  CHECK(GroupGone(pgid));
}

TEST_CASE("leftovers: a dead run's group is ended, by its leader or by a member it started",
          "[base][subprocess]") {
  Dir dir;
  Cleanup cleanup;
  const pid_t owner = DeadPid();

  // A leader that still runs, with a grandchild.
  const pid_t running = StartGroup("sleep 1000 & exec sleep 1000");
  cleanup.groups.push_back(running);
  WriteRecord(dir.path, {running, StartOf(running), StartOf(running), owner});

  // A leader that exited (and was reaped: its pid is free), leaving a
  // grandchild that the owner's last heartbeat proves.
  const pid_t orphaned = StartGroup("sleep 1000 & echo $! > " + (dir / "orphan") + "; exit 0");
  cleanup.groups.push_back(orphaned);
  const pid_t orphan = ReadPid(dir / "orphan");
  const uint64_t orphaned_start = StartOf(orphaned);  // a zombie still tells
  ::waitpid(orphaned, nullptr, 0);
  WriteRecord(dir.path, {orphaned, orphaned_start, orphaned_start, owner});
  WriteHeartbeat(dir.path, owner, 1, limbic::BootTicksNow());

  // A group that ignores SIGTERM (SIG_IGN survives exec).
  const pid_t stubborn = StartGroup("trap '' TERM; sleep 1000 & exec sleep 1000");
  cleanup.groups.push_back(stubborn);
  WriteRecord(dir.path, {stubborn, StartOf(stubborn), StartOf(stubborn), owner});
  // Give the shell time to set the trap before its children start: they
  // exist once LiveGroupMembers counts two.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (LiveGroupMembers(stubborn).size() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));

  auto journal = ProcessGroupJournal::Open(dir.path);
  REQUIRE(journal.ok());
  auto report = (*journal)->EndLeftovers(300);
  ::waitpid(running, nullptr, 0);
  ::waitpid(stubborn, nullptr, 0);

  const LeftoverGroup* g = Find(report, running);
  REQUIRE(g);
  CHECK(g->outcome == Outcome::kEnded);
  CHECK(g->processes == 2);
  CHECK(g->argv0 == "/bin/sh");
  CHECK(g->owner_pid == owner);
  CHECK(GroupGone(running));

  g = Find(report, orphaned);
  REQUIRE(g);
  CHECK(g->outcome == Outcome::kEnded);
  CHECK(g->processes == 1);
  CHECK(GroupGone(orphaned));
  auto gone = limbic::ReadProcStat(orphan);  // or a zombie its new parent has not reaped
  CHECK((!gone.ok() || gone->state == 'Z'));

  g = Find(report, stubborn);
  REQUIRE(g);
  CHECK(g->outcome == Outcome::kKilled);
  CHECK(GroupGone(stubborn));

  for (pid_t pgid : {running, orphaned, stubborn})
    CHECK_FALSE(Exists(dir / (std::to_string(pgid) + ".json")));
}

TEST_CASE("leftovers: a group that cannot be proven the dead run's is left alone",
          "[base][subprocess]") {
  Dir dir;
  Cleanup cleanup;
  const pid_t owner = DeadPid();

  // The id now belongs to another process: the recorded leader started at
  // another time (the pid was reused).
  const pid_t reused = StartGroup("exec sleep 1000");
  cleanup.groups.push_back(reused);
  const uint64_t reused_start = StartOf(reused);
  WriteRecord(dir.path, {reused, reused_start - 5, reused_start - 5, owner});
  // The owner's heartbeat reaches past the process's start: the pid's
  // owner is what tells.
  WriteHeartbeat(dir.path, owner, 1, limbic::BootTicksNow() + 1000);

  // The leader is gone and no live member started while the run lived
  // (the record says the group started after all of them).
  const pid_t unproven = StartGroup("sleep 1000 & echo $! > " + (dir / "unproven") + "; exit 0");
  cleanup.groups.push_back(unproven);
  const pid_t member = ReadPid(dir / "unproven");
  ::waitpid(unproven, nullptr, 0);
  const uint64_t later = limbic::BootTicksNow() + 2000;
  WriteRecord(dir.path, {unproven, later, later, owner});

  // The run that recorded it still runs (a copy of a live state dir).
  const pid_t live_owner = StartGroup("exec sleep 1000");
  cleanup.groups.push_back(live_owner);
  WriteRecord(dir.path, {live_owner, StartOf(live_owner), StartOf(live_owner), ::getpid(),
                         StartOf(::getpid())});

  // Recorded before the last boot.
  const pid_t other_boot = StartGroup("exec sleep 1000");
  cleanup.groups.push_back(other_boot);
  RecordSpec old{other_boot, StartOf(other_boot), StartOf(other_boot), owner};
  old.boot_id = "00000000-0000-0000-0000-000000000000";
  WriteRecord(dir.path, old);

  // Not a record at all.
  std::ofstream(dir / "12345.json") << "{\"pgid\": \"twelve\"}";

  auto journal = ProcessGroupJournal::Open(dir.path);
  REQUIRE(journal.ok());
  auto report = (*journal)->EndLeftovers(300);

  const LeftoverGroup* g = Find(report, reused);
  REQUIRE(g);
  CHECK(g->outcome == Outcome::kNotOurs);
  CHECK_THAT(g->why, Catch::Contains("another process"));
  CHECK(LiveGroupMembers(reused).size() == 1);

  g = Find(report, unproven);
  REQUIRE(g);
  CHECK(g->outcome == Outcome::kNotOurs);
  auto alive = limbic::ReadProcStat(member);
  REQUIRE(alive.ok());
  CHECK(alive->state != 'Z');

  g = Find(report, live_owner);
  REQUIRE(g);
  CHECK(g->outcome == Outcome::kOwnerAlive);
  CHECK(LiveGroupMembers(live_owner).size() == 1);
  CHECK(Exists(dir / (std::to_string(live_owner) + ".json")));  // not ours to judge

  g = Find(report, other_boot);
  REQUIRE(g);
  CHECK(g->outcome == Outcome::kOtherBoot);
  CHECK(LiveGroupMembers(other_boot).size() == 1);

  bool unreadable = false;
  for (const LeftoverGroup& l : report) unreadable |= l.outcome == Outcome::kUnreadable;
  CHECK(unreadable);
  for (pid_t pgid : {reused, unproven, other_boot})
    CHECK_FALSE(Exists(dir / (std::to_string(pgid) + ".json")));
  CHECK_FALSE(Exists(dir / "12345.json"));
}

TEST_CASE("the heartbeat says when the run was last alive", "[base][subprocess]") {
  Dir dir;
  auto journal = ProcessGroupJournal::Open(dir.path);
  REQUIRE(journal.ok());
  const uint64_t before = limbic::BootTicksNow();
  (*journal)->StartHeartbeat(50);
  std::ifstream in(dir / "heartbeat.json");
  json hb = json::parse(in);
  CHECK(hb["owner_pid"] == ::getpid());
  CHECK(hb["owner_start"] == StartOf(::getpid()));
  CHECK(hb["boot_id"] == limbic::BootId());
  CHECK(hb["at"].get<uint64_t>() >= before);
  CHECK(hb["at"].get<uint64_t>() <= limbic::BootTicksNow());
}

}  // namespace process_groups_test
