// Starting the real `limbic` binary from tests: run to completion, or keep
// it running with pipes to its stdin/stdout and kill it with any signal.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace limbic::testing {

// Path of the limbic binary under test (LIMBIC_BINARY, set by CMake).
std::string LimbicBinary();

struct RunResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
};

// Runs argv[0] (a path) in a process group of its own with `input` on
// stdin; waits for it to exit (killing it, and its group, after
// `timeout_ms`).
RunResult Run(const std::vector<std::string>& argv, const std::string& input = "",
              int timeout_ms = 60000);
// Runs `limbic <args...>`.
RunResult Limbic(const std::vector<std::string>& args, const std::string& input = "");

// Where a Child's stderr goes instead: this file (appended to).
struct StderrFile {
  std::string path;
};

// A child process with pipes: write its stdin, read its stdout line by line.
class Child {
 public:
  // With `merge_stderr`, the child's stderr goes to the same pipe as stdout.
  explicit Child(const std::vector<std::string>& argv, bool merge_stderr = false);
  // Keeps stdout for the protocol the child speaks there.
  Child(const std::vector<std::string>& argv, const StderrFile& err);
  ~Child();  // SIGKILLs it if still running
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Writes all of `data` to the child's stdin; false if the pipe closed.
  bool Write(const std::string& data);
  void CloseStdin();
  // Next stdout line without '\n'; false at EOF or after `timeout_ms`.
  bool ReadLine(std::string* line, int timeout_ms = 10000);
  // Sends `sig`, then waits; returns the exit code (-signal if signalled).
  int Kill(int sig);
  int Wait();
  // Waits up to `timeout_ms` for it to exit; false if it is still running.
  bool WaitFor(int timeout_ms, int* exit_code);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::string buffer_;
  bool reaped_ = false;
  int status_ = 0;
};

// A fresh directory under /tmp, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace limbic::testing
