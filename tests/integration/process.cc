#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace limbic::testing {
namespace {

std::vector<char*> Argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// `own_group`: the child leads a process group of its own, so that what it
// starts (a bench's servers) can be killed with it.
pid_t Spawn(const std::vector<std::string>& argv, int* in, int* out, int* err, bool merge = false,
            const char* err_file = nullptr, bool own_group = false) {
  int pin[2], pout[2], perr[2];
  if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) || pipe2(perr, O_CLOEXEC))
    throw std::runtime_error("pipe failed");
  pid_t pid = fork();
  if (pid == 0) {
    if (own_group) setpgid(0, 0);
    dup2(pin[0], 0);
    dup2(pout[1], 1);
    dup2(merge ? pout[1] : perr[1], 2);
    if (err_file) {
      int fd = open(err_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (fd >= 0) dup2(fd, 2);
    }
    auto args = Argv(argv);
    execv(args[0], args.data());
    _exit(127);
  }
  if (own_group) setpgid(pid, pid);  // both sides: whichever runs first
  close(pin[0]);
  close(pout[1]);
  close(perr[1]);
  *in = pin[1];
  *out = pout[0];
  if (err) *err = perr[0];
  else close(perr[0]);
  return pid;
}

int ExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return -1;
}

}  // namespace

std::string LimbicBinary() { return LIMBIC_BINARY; }

RunResult Run(const std::vector<std::string>& argv, const std::string& input, int timeout_ms) {
  signal(SIGPIPE, SIG_IGN);
  int in, out, err;
  pid_t pid = Spawn(argv, &in, &out, &err, false, nullptr, /*own_group=*/true);
  size_t written = 0;
  if (input.empty()) {
    close(in);
    in = -1;
  }
  RunResult r;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    pollfd fds[3];
    int n = 0;
    if (out_open) fds[n++] = {out, POLLIN, 0};
    if (err_open) fds[n++] = {err, POLLIN, 0};
    if (in >= 0) fds[n++] = {in, POLLOUT, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      // The whole group: a program killed for taking too long must not
      // leave what it started running into the next test.
      if (kill(-pid, SIGKILL) != 0) kill(pid, SIGKILL);
      break;
    }
    if (poll(fds, n, static_cast<int>(left)) <= 0) continue;
    for (int i = 0; i < n; ++i) {
      if (!fds[i].revents) continue;
      if (fds[i].fd == in) {
        ssize_t w = write(in, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 || written == input.size()) {
          close(in);
          in = -1;
        }
        continue;
      }
      char buf[65536];
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got <= 0) {
        if (fds[i].fd == out) out_open = false;
        else err_open = false;
        continue;
      }
      (fds[i].fd == out ? r.out : r.err).append(buf, static_cast<size_t>(got));
    }
  }
  if (in >= 0) close(in);
  close(out);
  close(err);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = ExitCode(status);
  return r;
}

RunResult Limbic(const std::vector<std::string>& args, const std::string& input) {
  std::vector<std::string> argv{LimbicBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv, input);
}

Child::Child(const std::vector<std::string>& argv, bool merge_stderr) {
  signal(SIGPIPE, SIG_IGN);
  pid_ = Spawn(argv, &in_, &out_, nullptr, merge_stderr);
}

Child::Child(const std::vector<std::string>& argv, const StderrFile& err) {
  signal(SIGPIPE, SIG_IGN);
  pid_ = Spawn(argv, &in_, &out_, nullptr, false, err.path.c_str());
}

Child::~Child() {
  if (!reaped_) Kill(SIGKILL);
  if (in_ >= 0) close(in_);
  if (out_ >= 0) close(out_);
}

bool Child::Write(const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = write(in_, data.data() + done, data.size() - done);
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

void Child::CloseStdin() {
  if (in_ >= 0) close(in_);
  in_ = -1;
}

bool Child::ReadLine(std::string* line, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      *line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return true;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) return false;
    pollfd fd{out_, POLLIN, 0};
    if (poll(&fd, 1, static_cast<int>(left)) <= 0) continue;
    char buf[65536];
    ssize_t got = read(out_, buf, sizeof buf);
    if (got <= 0) return false;
    buffer_.append(buf, static_cast<size_t>(got));
  }
}

int Child::Kill(int sig) {
  if (reaped_) return ExitCode(status_);
  kill(pid_, sig);
  return Wait();
}

int Child::Wait() {
  if (!reaped_) {
    waitpid(pid_, &status_, 0);
    reaped_ = true;
  }
  return ExitCode(status_);
}

bool Child::WaitFor(int timeout_ms, int* exit_code) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!reaped_) {
    if (waitpid(pid_, &status_, WNOHANG) == pid_) {
      reaped_ = true;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    usleep(10000);
  }
  *exit_code = ExitCode(status_);
  return true;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/limbic-test-XXXXXX";
  char* p = mkdtemp(tmpl);
  if (!p) throw std::runtime_error("mkdtemp failed");
  path_ = p;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace limbic::testing
