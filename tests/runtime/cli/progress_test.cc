#include "runtime/cli/progress.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

namespace progress_test {

using limbic::runtime::ProgressLine;
using namespace std::chrono_literals;

namespace {

// A ProgressLine writing to a memory buffer, on a clock the test moves.
struct Captured {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  ProgressLine::Clock::time_point now{};
  ~Captured() {
    std::fclose(f);
    std::free(data);
  }
  ProgressLine Line(bool terminal, bool quiet = false, ProgressLine::Clock::duration silent = 0s) {
    return ProgressLine({.doing = "replaying",
                         .unit = "events",
                         .quiet = quiet,
                         .silent_for = silent,
                         .out = f,
                         .terminal = terminal,
                         .now = [this] { return now; }});
  }
  std::string text() {
    std::fflush(f);
    return std::string(data, size);
  }
};

}  // namespace

TEST_CASE("a progress line prints each tenth once off a terminal, with the rate and what is left",
          "[cli]") {
  Captured c;
  ProgressLine line = c.Line(false);
  for (uint64_t done = 0; done <= 100; ++done) {
    c.now += 100ms;
    line.Update(done * 1000, 0, static_cast<double>(done) / 100);
  }
  const std::string out = c.text();
  // 0%, 10%, ... 100%: eleven lines.
  CHECK(std::count(out.begin(), out.end(), '\n') == 11);
  // At 50%: 50,000 events in 5.1 s, as long again to go.
  CHECK_THAT(out, Catch::Contains("replaying: 50000 events (50%), 9804/s, 5 s left\n"));
  CHECK_THAT(out, Catch::EndsWith("replaying: 100000 events (100%), 9901/s\n"));
}

TEST_CASE("a progress line with a total counts it, and is rewritten in place on a terminal",
          "[cli]") {
  Captured c;
  ProgressLine line = c.Line(true);
  c.now += 1s;
  line.Update(1, 4, 0);
  line.Update(2, 4, 0);
  c.now += 1s;
  line.Update(4, 4, 0);
  line.Update(4, 4, 0);  // after the last: nothing
  CHECK(c.text() ==
        "\rreplaying: 1/4 events (25%), 1/s, 3 s left\x1b[K"
        "\rreplaying: 2/4 events (50%), 2/s, 1 s left\x1b[K"
        "\rreplaying: 4/4 events (100%), 2/s\x1b[K\n");
}

TEST_CASE("a progress line says nothing when quiet, or for a run shorter than its silence",
          "[cli]") {
  Captured c;
  {
    ProgressLine quiet = c.Line(false, true);
    quiet.Update(5, 10, 0);
    quiet.Update(10, 10, 0);
  }
  {
    ProgressLine quick = c.Line(false, false, 2s);
    c.now += 1s;
    quick.Update(5, 10, 0);
    quick.Update(10, 10, 0);
  }
  CHECK(c.text().empty());
  // Past its silence it speaks: the first tenth it sees, then each next one.
  ProgressLine slow = c.Line(false, false, 2s);
  c.now += 3s;
  slow.Update(3, 10, 0);
  slow.Update(3, 10, 0);
  slow.Update(10, 10, 0);
  CHECK(c.text() == "replaying: 3/10 events (30%), 1/s, 7 s left\nreplaying: 10/10 events (100%), 3/s\n");
}

}  // namespace progress_test
