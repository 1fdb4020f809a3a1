// LogFolder: which files of a folder are daily logs, and when each is due.
// Modification times are set explicitly, so nothing here sleeps.
#include "world/log_folder.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "state/test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace log_folder_test {

using namespace limbic::world;
using limbic::testing::ScratchDir;
using limbic::testing::Spit;
namespace fs = std::filesystem;

namespace {

// Writes `text` to `path` with a modification time of `seconds` past an epoch.
void Write(const std::string& path, const std::string& text, int seconds) {
  Spit(path, text);
  fs::last_write_time(path, fs::file_time_type(std::chrono::seconds(1'700'000'000 + seconds)));
}

std::vector<std::string> Due(LogFolder& folder, bool settle) {
  auto changes = folder.Scan(settle);
  REQUIRE(changes.ok());
  return changes->due;
}

}  // namespace

TEST_CASE("a daily log is named by a date and ends in .md", "[world][folder]") {
  CHECK(LogFolder::IsDailyLogName("2026-03-02.md"));
  CHECK(LogFolder::IsDailyLogName("2026-03-02 standup.md"));
  CHECK_FALSE(LogFolder::IsDailyLogName("2026-02-30.md"));  // not a date
  CHECK_FALSE(LogFolder::IsDailyLogName("2026-03-02.txt"));
  CHECK_FALSE(LogFolder::IsDailyLogName("notes.md"));
  CHECK_FALSE(LogFolder::IsDailyLogName("2026-03-02"));
}

TEST_CASE("a folder's logs are due once, then again only when they change", "[world][folder]") {
  ScratchDir dir;
  Write(dir / "2026-03-03.md", "- b\n", 1);
  Write(dir / "2026-03-02.md", "- a\n", 1);
  Write(dir / "notes.txt", "x", 1);
  Write(dir / ".2026-03-04.md.swp", "x", 1);
  fs::create_directory(dir / "2026-03-05.md");  // a folder, whatever its name
  LogFolder folder(dir.path());

  auto first = folder.Scan(false);
  REQUIRE(first.ok());
  CHECK(first->due == std::vector<std::string>{dir / "2026-03-02.md", dir / "2026-03-03.md"});
  CHECK(first->ignored == std::vector<std::string>{dir / "notes.txt"});

  auto again = folder.Scan(false);
  REQUIRE(again.ok());
  CHECK(again->due.empty());
  CHECK(again->ignored.empty());  // named once

  Write(dir / "2026-03-02.md", "- a, and more\n", 2);
  CHECK(Due(folder, false) == std::vector<std::string>{dir / "2026-03-02.md"});
  CHECK(Due(folder, false).empty());

  // A log removed and written again is new again.
  fs::remove(dir / "2026-03-03.md");
  CHECK(Due(folder, false).empty());
  Write(dir / "2026-03-03.md", "- b\n", 1);
  CHECK(Due(folder, false) == std::vector<std::string>{dir / "2026-03-03.md"});
}

TEST_CASE("settling waits until a log has not changed between two scans", "[world][folder]") {
  ScratchDir dir;
  LogFolder folder(dir.path());
  CHECK(Due(folder, false).empty());

  Write(dir / "2026-03-02.md", "- half", 1);
  CHECK(Due(folder, true).empty());  // new: seen once
  Write(dir / "2026-03-02.md", "- half a line\n", 2);
  CHECK(Due(folder, true).empty());  // still changing
  CHECK(Due(folder, true) == std::vector<std::string>{dir / "2026-03-02.md"});
  CHECK(Due(folder, true).empty());

  Write(dir / "2026-03-02.md", "- half a line\n- and another\n", 3);
  CHECK(Due(folder, true).empty());
  CHECK(Due(folder, true) == std::vector<std::string>{dir / "2026-03-02.md"});
}

TEST_CASE("a log that cannot be stat'ed is still handed out, once", "[world][folder]") {
  ScratchDir dir;
  fs::create_symlink(dir / "gone", dir / "2026-03-02.md");
  LogFolder folder(dir.path());
  CHECK(Due(folder, false) ==
        std::vector<std::string>{dir / "2026-03-02.md"});  // FileInput says why
  CHECK(Due(folder, false).empty());
}

TEST_CASE("a missing folder or a file is named", "[world][folder]") {
  ScratchDir dir;
  Spit(dir / "2026-03-02.md", "- a\n");
  LogFolder missing(dir / "nope");
  auto m = missing.Scan(false);
  REQUIRE_FALSE(m.ok());
  CHECK_THAT(m.status().message(), Catch::Contains("nope: no such folder"));
  LogFolder file(dir / "2026-03-02.md");
  auto f = file.Scan(false);
  REQUIRE_FALSE(f.ok());
  CHECK_THAT(f.status().message(), Catch::Contains("2026-03-02.md: not a folder"));
}

}  // namespace log_folder_test
