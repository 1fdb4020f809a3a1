#include "base/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "base/env.h"
#include "base/process_groups.h"

namespace limbic {

namespace {

void CloseFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

// Owns the pipes and spawn attributes until Spawn hands them over.
struct SpawnScratch {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  bool actions_ok = false, attr_ok = false;
  ~SpawnScratch() {
    for (int* p : {in, out, err}) {
      CloseFd(&p[0]);
      CloseFd(&p[1]);
    }
    if (actions_ok) posix_spawn_file_actions_destroy(&actions);
    if (attr_ok) posix_spawnattr_destroy(&attr);
  }
};

}  // namespace

std::string ExitStatus::Describe() const {
  if (exit_code >= 0) return "exited with status " + std::to_string(exit_code);
  if (signal > 0) return "was killed by signal " + std::to_string(signal);
  return "ended";
}

Result<std::unique_ptr<Subprocess>> Subprocess::Spawn(const SpawnOptions& o) {
  if (o.argv.empty() || o.argv[0].empty())
    return Status::InvalidArgument("spawn: argv[0] is empty");
  const std::string what = "exec " + o.argv[0];
  SpawnScratch s;
  auto io_error = [&](const char* step, int e) {
    return Status::IOError(what + ": " + step + ": " + std::strerror(e));
  };
  // Our ends stay O_CLOEXEC; adddup2 gives the child copies without it.
  if ((o.pipe_stdin && ::pipe2(s.in, O_CLOEXEC)) || (o.pipe_stdout && ::pipe2(s.out, O_CLOEXEC)) ||
      (o.pipe_stderr && ::pipe2(s.err, O_CLOEXEC)))
    return io_error("pipe", errno);
  if (int e = posix_spawn_file_actions_init(&s.actions)) return io_error("file actions", e);
  s.actions_ok = true;
  if (int e = posix_spawnattr_init(&s.attr)) return io_error("attributes", e);
  s.attr_ok = true;

  struct Stream {
    bool piped;
    int child_end;
    int target;
    int devnull_flags;
  } streams[] = {{o.pipe_stdin, s.in[0], 0, O_RDONLY},
                 {o.pipe_stdout, s.out[1], 1, O_WRONLY},
                 {o.pipe_stderr, s.err[1], 2, O_WRONLY}};
  for (const Stream& st : streams) {
    int e = st.piped ? posix_spawn_file_actions_adddup2(&s.actions, st.child_end, st.target)
                     : posix_spawn_file_actions_addopen(&s.actions, st.target, "/dev/null",
                                                        st.devnull_flags, 0);
    if (e) return io_error("file actions", e);
  }
  if (!o.cwd.empty())
    if (int e = posix_spawn_file_actions_addchdir_np(&s.actions, o.cwd.c_str()))
      return io_error("chdir", e);

  // A group of its own (pgroup 0: the child's pid), an empty signal mask and
  // every signal at its default: nothing of the runtime's signal set-up
  // (SIG_IGN for SIGPIPE, signals blocked on this thread) leaks in.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (int e = posix_spawnattr_setflags(&s.attr, flags)) return io_error("attributes", e);
  if (int e = posix_spawnattr_setpgroup(&s.attr, 0)) return io_error("attributes", e);
  if (int e = posix_spawnattr_setsigmask(&s.attr, &none)) return io_error("attributes", e);
  if (int e = posix_spawnattr_setsigdefault(&s.attr, &all)) return io_error("attributes", e);

  std::vector<std::string> args = o.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> vars = ChildEnvironment(o.env);
  std::vector<char*> envp;
  for (std::string& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);

  pid_t pid = -1;
  // posix_spawn, not posix_spawnp: no PATH lookup. glibc reports a failed
  // exec (ENOENT, EACCES, ...) as the result, after the child has exited.
  if (int e = posix_spawn(&pid, argv[0], &s.actions, &s.attr, argv.data(), envp.data()))
    return Status::IOError(what + ": " + std::strerror(e));

  std::unique_ptr<Subprocess> p(new Subprocess());
  p->pid_ = pid;
  // Written down before anything can reap the leader, so that a SIGKILLed
  // runtime's successor finds the group (base/process_groups.h).
  p->journal_ = CurrentProcessGroupJournal();
  if (p->journal_) p->journal_->Started(pid, o.argv[0]);
  std::swap(p->in_, s.in[1]);
  std::swap(p->out_, s.out[0]);
  std::swap(p->err_, s.err[0]);
  return p;  // the child's ends are closed by ~SpawnScratch
}

Subprocess::~Subprocess() {
  if (!reaped_ && pid_ > 0) {
    Kill(SIGKILL);
    Reap();
  }
  CloseFd(&in_);
  CloseFd(&out_);
  CloseFd(&err_);
}

void Subprocess::CloseStdin() { CloseFd(&in_); }
void Subprocess::CloseStdout() { CloseFd(&out_); }
void Subprocess::CloseStderr() { CloseFd(&err_); }

void Subprocess::Kill(int sig) const {
  // The leader is unreaped until the group got SIGKILL (Reap's callers), so
  // -pid_ is still this group.
  if (pid_ > 0) ::kill(-pid_, sig);
}

bool Subprocess::Exited() const {
  if (reaped_) return true;
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return true;  // ECHILD: nothing to wait for
  return info.si_pid == pid_;
}

ExitStatus Subprocess::Reap() {
  if (reaped_) return status_;
  // Every caller sent the group SIGKILL: nothing of it is left to find.
  if (journal_) journal_->Ended(pid_);
  int status = 0;
  pid_t got;
  do {
    got = ::waitpid(pid_, &status, 0);
  } while (got < 0 && errno == EINTR);
  reaped_ = true;
  if (got == pid_ && WIFEXITED(status)) status_.exit_code = WEXITSTATUS(status);
  if (got == pid_ && WIFSIGNALED(status)) status_.signal = WTERMSIG(status);
  return status_;
}

ExitStatus Subprocess::Wait() {
  if (reaped_) return status_;
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
  // The leader is gone; what it left running in its group goes with it.
  Kill(SIGKILL);
  return Reap();
}

ExitStatus Subprocess::Terminate(TimeMs grace) {
  if (reaped_) return status_;
  Kill(SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace);
  while (!Exited() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // Always, even when the leader obeyed: a child that ignored SIGTERM, or
  // outlived its parent, must not survive it.
  Kill(SIGKILL);
  return Reap();
}

}  // namespace limbic
