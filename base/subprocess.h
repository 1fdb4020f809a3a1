// Subprocess: the one way limbic starts a program (the exec sensor, the exec
// effector, a plug-in's programs).
//
// What it guarantees:
//   - no shell and no PATH lookup: argv[0] is executed as given;
//   - the child is started with posix_spawn(3) (nothing runs in the child
//     between fork and exec but the C library's own async-signal-safe
//     steps), with POSIX_SPAWN_SETPGROUP: it leads a process group of its
//     own, whose id is its pid. Whatever it starts stays in that group
//     unless it moves itself out (setsid, setpgid): such an escapee is NOT
//     reached by the kills below;
//   - the child gets an empty signal mask and default dispositions for
//     every signal (the runtime's SIG_IGN of SIGPIPE is not inherited);
//   - its environment is this process's, with `env` ("NAME=value") applied
//     over it (ChildEnvironment);
//   - stdin, stdout and stderr are each a pipe to us or /dev/null, as asked;
//     no other descriptor of ours leaks into it (they are all O_CLOEXEC);
//   - Kill and Terminate signal the whole group, never just the pid;
//   - the leader is never reaped before the group has been sent SIGKILL
//     (Wait and Terminate do that), so its pid -- the group id -- cannot
//     be reused by an unrelated process while we may still signal it, and
//     no process of the group outlives Wait or Terminate (except escapees);
//   - while a ProcessGroupJournal is set (base/process_groups.h), the group
//     is recorded there from Spawn until it was sent SIGKILL, so the next
//     start of a runtime that was SIGKILLed ends what it left running.
//
// Errors: Spawn is IOError "exec /path: No such file or directory" (the
// C library reports a failed exec as posix_spawn's result).
//
// Thread-safety: one owner thread calls Spawn, the fd accessors, Exited,
// Wait and Terminate; Kill may be called from any thread until Wait or
// Terminate has returned (the owner must make sure it is not called after:
// e.g. effectors' CancelFlag disarms first).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/time.h"

namespace limbic {

class ProcessGroupJournal;

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0]: the program's path
  std::vector<std::string> env;   // "NAME=value", applied over this process's
  bool pipe_stdin = false;        // false: /dev/null
  bool pipe_stdout = true;        // false: /dev/null
  bool pipe_stderr = true;        // false: /dev/null
  std::string cwd;                // the child's working directory ("" = ours)
};

//! How a process ended: exit_code >= 0 for exit(2), else the signal in
//! `signal` (exit_code -1).
struct ExitStatus {
  int exit_code = -1;
  int signal = 0;
  //! "exited with status 1" / "was killed by signal 9"
  std::string Describe() const;
};

class Subprocess {
 public:
  //! Starts `options.argv`; see the file comment.
  static Result<std::unique_ptr<Subprocess>> Spawn(const SpawnOptions& options);
  //! Kills the group (SIGKILL) and reaps the leader if Wait/Terminate did not.
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  //! The leader's pid, which is also the process group's id.
  pid_t pid() const { return pid_; }
  //! Our ends of the pipes, -1 when not piped (or closed). Owned here.
  int stdin_fd() const { return in_; }
  int stdout_fd() const { return out_; }
  int stderr_fd() const { return err_; }
  //! Closes our end of a pipe (e.g. stdin once the input is written: EOF).
  void CloseStdin();
  void CloseStdout();
  void CloseStderr();

  //! Sends `sig` to every process of the group. Any thread (see above).
  void Kill(int sig) const;
  //! Whether the leader has exited; it stays unreaped (waitid WNOWAIT).
  bool Exited() const;
  //! Waits for the leader to exit, SIGKILLs what is left of its group, reaps.
  ExitStatus Wait();
  //! SIGTERM to the group; up to `grace` for the leader to exit; then
  //! SIGKILL to the group and reap. The way to stop a program.
  ExitStatus Terminate(TimeMs grace);

 private:
  Subprocess() = default;
  ExitStatus Reap();

  pid_t pid_ = -1;
  std::shared_ptr<ProcessGroupJournal> journal_;  // where the group is recorded, or null
  int in_ = -1, out_ = -1, err_ = -1;
  bool reaped_ = false;
  ExitStatus status_;
};

}  // namespace limbic
