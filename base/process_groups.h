// ProcessGroupJournal: the process groups limbic starts, written down in
// the state dir, so that the next start ends what a SIGKILLed run left.
//
// Every program limbic starts (base/subprocess.h: exec sensors, exec
// effectors, a plug-in's programs) leads a process group of its own, and a
// stop or a restart ends the whole group. A SIGKILL of limbic ends nothing:
// the groups are re-parented to init and run on. So Subprocess::Spawn
// records each new group here and Subprocess removes the record once the
// group got its SIGKILL, and the runtime's next start, holding the state
// dir's lock, calls EndLeftovers before anything of its own runs.
//
// On disk, in <state>/subprocesses/ (one file per group, so spawning
// threads share nothing):
//   <pgid>.json     a group this run started and has not ended:
//                   {"pgid": P, "leader_start": T, "recorded_at": T,
//                    "boot_id": "...", "owner_pid": N, "owner_start": T,
//                    "argv0": "/path/of/program"}
//   heartbeat.json  {"boot_id": "...", "owner_pid": N, "owner_start": T,
//                    "at": T}, rewritten every second while the run lives
// T is a time in clock ticks since boot, as /proc/PID/stat field 22
// (starttime) counts it; P the group id, which is the leader's pid; the
// owner is the limbic process that started the group. The files are
// written without fsync (WriteFileAtomic, kDerived): they must outlive the
// process, not the machine -- a reboot ends every group, and a record of
// another boot_id is dropped unread.
//
// Which groups are ours (EndLeftovers). A group id P is a pid, and pids are
// reused, so a record alone proves nothing; the rule is:
//   - a record of another boot, or whose owner still runs (pid and start
//     time match: e.g. a copy of a live state dir), is not acted on;
//   - a process with pid P that started at another time than leader_start
//     means P was free and taken again since: the group P of now is not
//     ours (Linux frees a pid only once no process has it as its pid, its
//     group id or its session id, so while any member of our group lived P
//     could not be taken);
//   - otherwise the group is ours when its leader is the recorded one (pid
//     P, start leader_start), or when some process of group P started
//     between leader_start and the owner's last sign of life (its last
//     heartbeat, or recorded_at): until the owner died it held the leader
//     unreaped (Subprocess), so any process in group P then was in our
//     group, and one that is still alive has kept P taken since. One such
//     process proves the whole group, including what it started later;
//   - a group with no live process is gone (zombies do not count).
// Ours: SIGTERM to the group, up to `grace` for every process of it to
// exit, then SIGKILL. The record is removed in every case but the owner's
// being alive.
//
// Limits: a group whose record was not written yet when limbic died (the
// instant between posix_spawn and the write), or could not be written (a
// full disk), is not found; nor is a process that left its group (setsid,
// setpgid). A group whose leader exited and whose every live process
// started after the owner's last heartbeat (at most a second before it
// died) is not proven and is left alone.
//
// Thread-safety: Started and Ended from any thread; the rest from one
// owner thread. The journal is shared (shared_ptr) by the Subprocesses
// that recorded in it, so it outlives their records.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "base/time.h"

namespace limbic {

//! A process as /proc/PID/stat shows it.
struct ProcStat {
  pid_t pid = 0;
  char state = 0;            // 'R', 'S', ..., 'Z' for a zombie
  pid_t pgid = 0;            // field 5
  uint64_t start_ticks = 0;  // field 22: clock ticks after boot
};

//! /proc/PID/stat of `pid`; NotFound when there is no such process.
Result<ProcStat> ReadProcStat(pid_t pid);
//! Every process /proc lists.
std::vector<ProcStat> ListProcesses();
//! Now, in the unit of ProcStat::start_ticks (CLOCK_BOOTTIME).
uint64_t BootTicksNow();
//! /proc/sys/kernel/random/boot_id without its newline; "" when unreadable.
std::string BootId();

//! What EndLeftovers did with one record.
struct LeftoverGroup {
  enum class Outcome {
    kEnded,       // ours: ended by SIGTERM within the grace
    kKilled,      // ours: still there after the grace, sent SIGKILL
    kGone,        // no live process has the group id
    kNotOurs,     // the id belongs to something else now: left alone
    kOwnerAlive,  // the run that recorded it still runs: left alone, record kept
    kOtherBoot,   // recorded before the last boot
    kUnreadable,  // not a record (removed)
  };
  Outcome outcome = Outcome::kGone;
  pid_t pgid = 0;
  std::string argv0;
  pid_t owner_pid = 0;
  size_t processes = 0;  // live processes of the group when found
  std::string why;       // the evidence, for the log
};

class ProcessGroupJournal {
 public:
  //! Creates `dir` if needed. Nothing else happens until a call below.
  static Result<std::shared_ptr<ProcessGroupJournal>> Open(std::string dir);
  //! Stops the heartbeat. The files stay (a clean stop has none left).
  ~ProcessGroupJournal();
  ProcessGroupJournal(const ProcessGroupJournal&) = delete;
  ProcessGroupJournal& operator=(const ProcessGroupJournal&) = delete;

  //! Applies the rule of the file comment to every record a previous run
  //! left, and says what became of each. Call before StartHeartbeat (which
  //! overwrites the previous run's heartbeat) and before anything spawns.
  //! Blocks up to `grace` plus a second.
  std::vector<LeftoverGroup> EndLeftovers(TimeMs grace);
  //! Rewrites heartbeat.json now and then every `every` ms, on a thread of
  //! its own, until destruction.
  void StartHeartbeat(TimeMs every = 1000);

  //! Records the group `pgid` just started with `argv0` (its leader, pid
  //! `pgid`, must not be reaped yet). Best effort: a record that cannot
  //! be written is skipped (see Limits). Any thread.
  void Started(pid_t pgid, std::string_view argv0);
  //! Removes the record of `pgid`: call once the group was sent SIGKILL,
  //! before its leader is reaped. Any thread.
  void Ended(pid_t pgid);

  const std::string& dir() const { return dir_; }

 private:
  explicit ProcessGroupJournal(std::string dir);
  std::string RecordPath(pid_t pgid) const;
  void Beat();

  const std::string dir_;
  const std::string boot_id_;
  const pid_t owner_pid_;
  const uint64_t owner_start_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread heartbeat_;
};

//! The journal that Subprocess::Spawn records new groups in; nullptr (the
//! default) records nothing. Set once by the runtime, after EndLeftovers
//! and before anything spawns, and cleared once nothing spawns any more:
//! process-wide like the input limits (base/input_json.h). Any thread.
void SetProcessGroupJournal(std::shared_ptr<ProcessGroupJournal> journal);
std::shared_ptr<ProcessGroupJournal> CurrentProcessGroupJournal();

}  // namespace limbic
