// `limbic memory extract DIR [--watch]` through the real binary: a folder
// of daily logs is extracted once per change of each file (the ledger
// decides), bad files are named and the rest go on, and --watch picks up
// files as they appear or change until SIGTERM. Also `--evaluate`.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "process.h"

// This file's own namespace: test programs compile in unity batches.
namespace world_folder_test {

using nlohmann::json;
using namespace limbic::testing;
namespace fs = std::filesystem;

namespace {

RunResult Extract(const TempDir& dir, std::vector<std::string> args, int want_exit = 0) {
  args.insert(args.begin(), {"--state", dir / "state", "--json", "memory", "extract"});
  RunResult r = Limbic(args);
  INFO("stdout: " << r.out << " stderr: " << r.err);
  REQUIRE(r.exit_code == want_exit);
  return r;
}

json Pass(const RunResult& r) {
  auto j = json::parse(r.out, nullptr, false);
  INFO(r.out);
  REQUIRE(j.is_object());
  return j;
}

// The sources of the files a pass extracted (not the unchanged ones).
std::vector<std::string> Extracted(const json& pass) {
  std::vector<std::string> out;
  for (const json& f : pass["files"])
    if (f.contains("skipped") && !f["skipped"].get<bool>()) out.push_back(f["source"]);
  return out;
}

size_t LedgerLines(const TempDir& dir) {
  std::ifstream in(dir / "state/memory/extracted.jsonl");
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) ++n;
  return n;
}

}  // namespace

TEST_CASE("extract DIR extracts the daily logs that are new or changed", "[world][folder]") {
  TempDir dir;
  const std::string logs = dir / "logs";
  fs::create_directory(logs);
  std::ofstream(logs + "/2026-03-02.md")
      << "- Met @dana from Acme Corp about the [[Orion]] migration.\n";
  std::ofstream(logs + "/2026-03-03.md") << "- Priya said the staging cluster is down again.\n";

  json first = Pass(Extract(dir, {logs}));
  CHECK(first["extracted"] == 2);
  CHECK(first["unchanged"] == 0);
  CHECK(Extracted(first) ==
        std::vector<std::string>{logs + "/2026-03-02.md", logs + "/2026-03-03.md"});
  CHECK(fs::exists(dir / "state/memory/entities/dana.md"));
  CHECK(LedgerLines(dir) == 2);

  // Again: nothing re-extracted, nothing added to the ledger.
  json again = Pass(Extract(dir, {logs}));
  CHECK(again["extracted"] == 0);
  CHECK(again["unchanged"] == 2);
  CHECK(LedgerLines(dir) == 2);

  // One file changed: only it. The same file named by itself is the same input.
  std::ofstream(logs + "/2026-03-03.md", std::ios::app) << "- Lunch with Tomás.\n";
  json changed = Pass(Extract(dir, {logs}));
  CHECK(Extracted(changed) == std::vector<std::string>{logs + "/2026-03-03.md"});
  CHECK(changed["unchanged"] == 1);
  CHECK(LedgerLines(dir) == 3);
  CHECK(Pass(Extract(dir, {logs + "/./2026-03-03.md"}))["skipped"] == true);

  // Text output: a line per extracted file and a total.
  std::ofstream(logs + "/2026-03-04 retro.md") << "- Retro with Marcus Webb.\n";
  RunResult text = Limbic({"--state", dir / "state", "memory", "extract", logs});
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("2026-03-04 retro.md (2026-03-04, heuristic): "));
  CHECK_THAT(text.out, Catch::Contains(logs + ": 1 extracted, 2 unchanged, 0 failed"));
}

TEST_CASE("extract DIR names the files it cannot take and goes on", "[world][folder]") {
  TempDir dir;
  const std::string logs = dir / "logs";
  fs::create_directory(logs);
  std::ofstream(logs + "/2026-03-02.md") << "- Met @dana from Acme Corp.\n";
  std::ofstream(logs + "/README.txt") << "my logs\n";
  fs::create_symlink(dir / "gone.md", logs + "/2026-03-03.md");  // cannot be read
  std::ofstream(logs + "/.2026-03-04.md.swp") << "x";            // hidden: passed over

  RunResult r = Extract(dir, {logs}, 1);
  CHECK_THAT(r.err, Catch::Contains(logs + "/README.txt: not a daily log"));
  CHECK_THAT(r.err, Catch::Contains(logs + "/2026-03-03.md: no such file"));
  CHECK_THAT(r.err, !Catch::Contains("swp"));
  json pass = Pass(r);
  CHECK(pass["extracted"] == 1);
  CHECK(pass["failed"] == 1);
  CHECK(pass["ignored"] == json::array({logs + "/README.txt"}));
  CHECK(Extracted(pass) == std::vector<std::string>{logs + "/2026-03-02.md"});

  // Flags that make no sense for a folder, and --watch without one.
  CHECK_THAT(Extract(dir, {logs, "--date", "2026-03-02"}, 2).err, Catch::Contains("--date"));
  CHECK_THAT(Extract(dir, {logs + "/2026-03-02.md", "--watch"}, 2).err, Catch::Contains("--watch"));
  CHECK_THAT(Extract(dir, {dir / "missing"}, 1).err, Catch::Contains("missing"));
}

TEST_CASE("extract DIR --watch extracts logs as they appear or change", "[world][folder]") {
  TempDir dir;
  const std::string logs = dir / "logs";
  fs::create_directory(logs);
  std::ofstream(logs + "/2026-03-02.md") << "- Met @dana from Acme Corp.\n";
  Child watch(
      {LimbicBinary(), "--state", dir / "state", "--json", "memory", "extract", "--watch", logs},
      StderrFile{dir / "stderr.log"});
  // Each pass that finds something prints one JSON line; the first always.
  auto next_pass = [&] {
    std::string line;
    REQUIRE(watch.ReadLine(&line, 20000));
    auto j = json::parse(line, nullptr, false);
    INFO(line);
    REQUIRE(j.is_object());
    return j;
  };
  CHECK(Extracted(next_pass()) == std::vector<std::string>{logs + "/2026-03-02.md"});

  std::ofstream(logs + "/2026-03-03.md") << "- Priya said the staging cluster is down again.\n";
  CHECK(Extracted(next_pass()) == std::vector<std::string>{logs + "/2026-03-03.md"});

  std::ofstream(logs + "/2026-03-02.md", std::ios::app) << "- Lunch with Tomás.\n";
  CHECK(Extracted(next_pass()) == std::vector<std::string>{logs + "/2026-03-02.md"});
  CHECK(LedgerLines(dir) == 3);

  CHECK(watch.Kill(SIGTERM) == 0);
}

TEST_CASE("extract --evaluate scores the extractor on a labelled sample", "[world][folder]") {
  TempDir dir;
  const std::string sample =
      std::string(LIMBIC_SOURCE_DIR) + "/tests/world/data/extract_sample.jsonl";
  json ev = Pass(Extract(dir, {"--evaluate", sample}));
  CHECK(ev["extractor"] == "heuristic");
  CHECK(ev["lines"] == 56);
  CHECK(ev["entities"]["labelled"].get<int>() > 0);
  CHECK(ev["triplets"]["f1"].is_number());
  CHECK_FALSE(fs::exists(dir / "state"));  // nothing written

  RunResult text = Limbic({"memory", "extract", "--evaluate", sample});
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("entities"));
  CHECK_THAT(text.out, Catch::Contains("precision"));

  std::ofstream(dir / "bad.jsonl")
      << "{\"date\": \"2026-03-02\", \"text\": \"x\", \"entites\": []}\n";
  CHECK_THAT(Extract(dir, {"--evaluate", dir / "bad.jsonl"}, 1).err,
             Catch::Contains("bad.jsonl:1: unknown member \"entites\""));
  CHECK_THAT(Extract(dir, {"--evaluate", sample, "--force"}, 2).err, Catch::Contains("--evaluate"));
}

}  // namespace world_folder_test
