#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "archive/archive.h"
#include "base/fault_env.h"
#include "state/test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace staging_test {

using namespace limbic;
using namespace limbic::archive;
using limbic::testing::ScratchDir;

namespace {

constexpr TimeMs kDay = 86400000;
constexpr TimeMs kJan1 = 1767225600000;  // 2026-01-01T00:00:00Z

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

Entry Seq(uint64_t seq, std::string text) {
  return MakeEntry(kJan1 + static_cast<TimeMs>(seq) * 1000, std::move(text), json{{"seq", seq}});
}

std::vector<std::string> Texts(const std::vector<Entry>& entries) {
  std::vector<std::string> out;
  for (const Entry& e : entries) out.push_back(e.text);
  return out;
}

}  // namespace

TEST_CASE("dates are real calendar dates", "[staging]") {
  CHECK(IsValidDate("2026-01-31"));
  CHECK(IsValidDate("2024-02-29"));   // leap year
  CHECK(IsValidDate("2000-02-29"));   // divisible by 400
  CHECK_FALSE(IsValidDate("1900-02-29"));  // divisible by 100
  CHECK_FALSE(IsValidDate("2026-02-29"));
  CHECK_FALSE(IsValidDate("2026-04-31"));
  CHECK_FALSE(IsValidDate("2026-13-01"));
  CHECK_FALSE(IsValidDate("2026-00-10"));
  CHECK_FALSE(IsValidDate("2026-1-01"));
  CHECK_FALSE(IsValidDate("yesterday"));
  CHECK_FALSE(IsValidDate("2026-01-01T00"));
  Status s = CheckDate("2026-02-30");
  CHECK(s.IsInvalidArgument());
  CHECK(s.message().find("2026-02-30") != std::string::npos);
  CHECK(FormatDate(kJan1 + kDay - 1) == "2026-01-01");
  CHECK(FormatDate(kJan1 + kDay) == "2026-01-02");
}

TEST_CASE("entries carry their size and survive JSON", "[staging]") {
  Entry e = MakeEntry(kJan1 + 1500, "héllo", json{{"seq", 7}, {"kind", "percept"}});
  CHECK(e.timestamp == "2026-01-01T00:00:01.500Z");
  CHECK(e.byte_size == 6);
  CHECK(e.est_tokens == 2);
  auto back = EntryFromJson(EntryToJson(e));
  REQUIRE(back.ok());
  CHECK(back->text == e.text);
  CHECK(back->metadata == e.metadata);
  CHECK(back->byte_size == 6);

  json missing = EntryToJson(e);
  missing.erase("text");
  auto bad = EntryFromJson(missing);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("text") != std::string::npos);
  json wrong = EntryToJson(e);
  wrong["byte_size"] = "six";
  CHECK(EntryFromJson(wrong).status().message().find("byte_size") != std::string::npos);
  wrong = EntryToJson(e);
  wrong["timestamp"] = "noon";
  CHECK(EntryFromJson(wrong).status().message().find("timestamp") != std::string::npos);

  // JSON cannot hold invalid UTF-8: MakeEntry replaces it.
  Entry raw = MakeEntry(kJan1, "a\xff" "b");
  CHECK(raw.text == "a\xEF\xBF\xBD" "b");
  CHECK(raw.byte_size == 5);
}

TEST_CASE("content is the entries as blocks headed by UTC timestamps", "[staging]") {
  Entry a = MakeEntry(kJan1, "first\nline two");
  Entry b = MakeEntry(kJan1, "second");
  b.timestamp = "2026-01-01T12:00:00+02:00";
  std::string content;
  AppendToContent(&content, {a});
  CHECK(content == "## 2026-01-01T00:00:00.000Z\nfirst\nline two");
  AppendToContent(&content, {b});
  CHECK(content ==
        "## 2026-01-01T00:00:00.000Z\nfirst\nline two\n\n## 2026-01-01T10:00:00.000Z\nsecond");
}

TEST_CASE("staging appends entries and reads them back in order", "[staging]") {
  ScratchDir dir;
  Staging staging(dir / "staging", Env::Default());
  REQUIRE(staging.Append("2026-01-02", Seq(1, "first")).ok());
  REQUIRE(staging.Append("2026-01-02", Seq(2, "second\nwith a newline")).ok());
  REQUIRE(staging.Append("2026-01-01", Seq(3, "other day")).ok());

  auto day = staging.Read("2026-01-02");
  REQUIRE(day.ok());
  CHECK(Texts(*day) == std::vector<std::string>{"first", "second\nwith a newline"});
  CHECK((*day)[1].metadata["seq"] == 2);
  CHECK((*day)[0].timestamp == "2026-01-01T00:00:01.000Z");
  auto empty = staging.Read("2026-01-05");
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  auto days = staging.Days();
  REQUIRE(days.ok());
  CHECK(*days == std::vector<std::string>{"2026-01-01", "2026-01-02"});

  // One line per entry.
  std::string file = ReadFile(staging.PathOf("2026-01-02"));
  CHECK(std::count(file.begin(), file.end(), '\n') == 2);
  // Names that are not days are not days.
  WriteFile(dir / "staging/2026-02-30.jsonl", "");
  WriteFile(dir / "staging/notes.txt", "");
  CHECK(*staging.Days() == std::vector<std::string>{"2026-01-01", "2026-01-02"});
}

TEST_CASE("staging append is idempotent by metadata.seq", "[staging]") {
  ScratchDir dir;
  Staging staging(dir / "staging", Env::Default());
  const std::string day = "2026-01-01";
  REQUIRE(staging.Append(day, Seq(1, "one")).ok());
  REQUIRE(staging.Append(day, Seq(2, "two")).ok());
  REQUIRE(staging.Append(day, Seq(2, "two again")).ok());
  REQUIRE(staging.Append(day, Seq(1, "one again")).ok());
  CHECK(Texts(*staging.Read(day)) == std::vector<std::string>{"one", "two"});

  // A fresh Staging (after a restart) reads the last seq from the file.
  Staging restarted(dir / "staging", Env::Default());
  REQUIRE(restarted.Append(day, Seq(2, "two once more")).ok());
  REQUIRE(restarted.Append(day, Seq(3, "three")).ok());
  // The file changed behind the first Staging's back: it looks again.
  REQUIRE(staging.Append(day, Seq(3, "three again")).ok());
  // Entries without a seq are always appended.
  REQUIRE(restarted.Append(day, MakeEntry(kJan1, "no seq")).ok());
  REQUIRE(restarted.Append(day, MakeEntry(kJan1, "no seq")).ok());
  CHECK(Texts(*staging.Read(day)) ==
        std::vector<std::string>{"one", "two", "three", "no seq", "no seq"});
}

TEST_CASE("a torn last staging line is cut before the next append", "[staging]") {
  ScratchDir dir;
  Staging staging(dir / "staging", Env::Default());
  const std::string day = "2026-01-01";
  REQUIRE(staging.Append(day, Seq(1, "one")).ok());
  const std::string path = staging.PathOf(day);
  std::string whole = ReadFile(path);
  WriteFile(path, whole + "{\"timestamp\":\"2026-01-01T00:0");  // a crash mid-append

  Staging restarted(dir / "staging", Env::Default());
  CHECK(Texts(*restarted.Read(day)) == std::vector<std::string>{"one"});
  REQUIRE(restarted.Append(day, Seq(2, "two")).ok());
  CHECK(Texts(*restarted.Read(day)) == std::vector<std::string>{"one", "two"});
  std::string file = ReadFile(path);
  CHECK(file.find("2026-01-01T00:0\"") == std::string::npos);
  CHECK(file.back() == '\n');

  // A whole entry that lost only its newline is kept.
  file.pop_back();
  WriteFile(path, file);
  Staging again(dir / "staging", Env::Default());
  CHECK(Texts(*again.Read(day)) == std::vector<std::string>{"one", "two"});
  REQUIRE(again.Append(day, Seq(2, "two, offered again")).ok());  // seq 2 is there
  REQUIRE(again.Append(day, Seq(3, "three")).ok());
  CHECK(Texts(*again.Read(day)) == std::vector<std::string>{"one", "two", "three"});
}

TEST_CASE("a torn append through the file layer leaves earlier entries intact", "[staging]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  Staging staging(dir / "staging", &env);
  const std::string day = "2026-01-01";
  REQUIRE(staging.Append(day, Seq(1, "one")).ok());
  env.FailAppendAfter(20);
  CHECK_FALSE(staging.Append(day, Seq(2, "two is longer than twenty bytes")).ok());
  REQUIRE(env.SimulateCrash(10).ok());  // ten of the torn bytes reached the disk

  FaultInjectionEnv fresh(Env::Default());
  Staging restarted(dir / "staging", &fresh);
  CHECK(Texts(*restarted.Read(day)) == std::vector<std::string>{"one"});
  REQUIRE(restarted.Append(day, Seq(2, "two")).ok());
  CHECK(Texts(*restarted.Read(day)) == std::vector<std::string>{"one", "two"});
}

TEST_CASE("a staging line that is not an entry is an error naming file and line", "[staging]") {
  ScratchDir dir;
  Staging staging(dir / "staging", Env::Default());
  const std::string day = "2026-01-03";
  REQUIRE(staging.Append(day, Seq(1, "one")).ok());
  const std::string path = staging.PathOf(day);
  std::string good = ReadFile(path);

  SECTION("not JSON") {
    WriteFile(path, good + "this is not json\n" + good);
    auto r = staging.Read(day);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().IsCorruption());
    CHECK(r.status().message().find(path + " line 2") != std::string::npos);
    CHECK(r.status().message().find("not JSON") != std::string::npos);
  }
  SECTION("JSON but not an entry") {
    WriteFile(path, good + good + "{\"timestamp\":\"2026-01-03T00:00:00.000Z\"}\n");
    auto r = staging.Read(day);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find(path + " line 3") != std::string::npos);
    CHECK(r.status().message().find("text") != std::string::npos);
  }
  SECTION("an empty line") {
    WriteFile(path, "\n" + good);
    CHECK(staging.Read(day).status().message().find(path + " line 1") != std::string::npos);
  }
}

TEST_CASE("staging refuses bad dates and invalid UTF-8", "[staging]") {
  ScratchDir dir;
  Staging staging(dir / "staging", Env::Default());
  Status s = staging.Append("2026-02-30", Seq(1, "x"));
  CHECK(s.IsInvalidArgument());
  CHECK(s.message().find("2026-02-30") != std::string::npos);
  CHECK(staging.Read("../etc/passwd").status().IsInvalidArgument());
  Entry raw = Seq(1, "x");
  raw.text = "bad \xff byte";
  CHECK(staging.Append("2026-01-01", raw).IsInvalidArgument());
  CHECK(staging.Read("2026-01-01")->empty());
}

}  // namespace staging_test
