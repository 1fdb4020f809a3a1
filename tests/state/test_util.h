// Small helpers shared by the state tests.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace limbic::testing {

// A fresh directory under /tmp, removed on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    char tmpl[] = "/tmp/limbic-unit-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A file's bytes ("" when it cannot be read).
inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Replaces a file's bytes with `text`.
inline void Spit(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Runs fn(0) ... fn(n - 1) at once, each in a forked process, and waits for
// them all. Returns each one's exit code: what fn returned, 1 if it threw,
// -1 if the process could not start or did not exit normally.
inline std::vector<int> RunInProcesses(int n, const std::function<int(int)>& fn) {
  std::vector<pid_t> children;
  for (int w = 0; w < n; ++w) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int code = 1;
      try {
        code = fn(w);
      } catch (...) {
      }
      _exit(code);
    }
    children.push_back(pid);
  }
  std::vector<int> codes;
  for (pid_t pid : children) {
    int status = 0;
    const bool ok = pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status);
    codes.push_back(ok ? WEXITSTATUS(status) : -1);
  }
  return codes;
}

}  // namespace limbic::testing
