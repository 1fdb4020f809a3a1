// A progress line on stderr for a command that can run long (`memory
// embed`, `replay`): "embedding: 1200/5000 memories (24%), 310/s, 12 s
// left". On a terminal it is rewritten in place; elsewhere (a pipe, a CI
// log) a line is printed each time another tenth is done. Nothing is
// printed with `quiet`, nor until `silent_for` has passed, so a command
// that finishes quickly prints no progress at all.
//
// Thread-safety: none; one thread updates it.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace limbic::runtime {

class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    std::string doing;  // "embedding"
    std::string unit;   // "memories"
    bool quiet = false;
    Clock::duration silent_for{};
    std::FILE* out = stderr;
    bool terminal = false;                // rewrite in place (callers pass isatty(2))
    std::function<Clock::time_point()> now = [] { return Clock::now(); };  // tests give a clock
  };
  explicit ProgressLine(Options options);

  // `done` units so far, of `total` (0 = not known: `fraction` says how
  // far, 0..1). The last call has done == total, or fraction 1.
  void Update(uint64_t done, uint64_t total, double fraction);

 private:
  Options o_;
  Clock::time_point start_;
  int printed_tenth_ = -1;  // the last tenth printed (not on a terminal)
  bool finished_ = false;   // the last line is out
};

}  // namespace limbic::runtime
