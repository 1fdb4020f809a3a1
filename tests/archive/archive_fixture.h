// What the archive tests share: a scratch archive with a manual clock,
// staged days with distinct texts, snapshots of the document files, JSON
// edits for tampering, and a readable verify report.
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "archive/archive.h"
#include "state/test_util.h"

namespace limbic::archive::test {

namespace fs = std::filesystem;
using limbic::testing::ScratchDir;

constexpr TimeMs kDay = 86400000;
constexpr TimeMs kJan1 = 1767225600000;  // 2026-01-01T00:00:00Z

inline std::string Day(int n) { return FormatDate(kJan1 + (n - 1) * kDay); }  // Day(1) = 2026-01-01

// A file's bytes, and replacing them (tests/state/test_util.h).
using limbic::testing::Slurp;
using limbic::testing::Spit;

// Words that give each day its own vocabulary, engagement and mood.
inline std::string TextFor(int day, int entry) {
  static const char* kTopics[] = {"deploy pipeline",   "garden tomatoes", "database index",
                                  "holiday travel",    "release notes",   "garden roses"};
  static const char* kMoods[] = {"great thanks", "bad error", "fine", "awful problem sorry",
                                 "happy love"};
  std::string text = "[user] about the " + std::string(kTopics[day % 6]) + " " +
                     kMoods[(day + entry) % 5] + "\n[assistant] " +
                     std::string(static_cast<size_t>(10 + 30 * (day % 4)), 'z') + " " +
                     kTopics[(day + 1) % 6] + " entry" + std::to_string(entry);
  return text;
}

class Fixture {
 public:
  Fixture() : clock_(kJan1 + 400 * kDay) {}

  ArchiveOptions Options(Env* env = nullptr, bool read_only = false) const {
    ArchiveOptions o;
    o.dir = dir_ / "archive";
    o.env = env;
    o.clock = &clock_;
    o.read_only = read_only;
    return o;
  }
  std::unique_ptr<Archive> Open(Env* env = nullptr, bool read_only = false) const {
    auto r = Archive::Open(Options(env, read_only));
    REQUIRE(r.ok());
    return std::move(r).value();
  }
  // Stages `entries` texts for day `n`.
  static void Stage(Archive& a, int n, int entries = 2) {
    size_t have = a.staging().Read(Day(n))->size();
    for (int e = 0; e < entries; ++e) {
      int k = static_cast<int>(have) + e;
      REQUIRE(a.staging()
                  .Append(Day(n), MakeEntry(kJan1 + (n - 1) * kDay + 3600000 * (k + 1), TextFor(n, k)))
                  .ok());
    }
  }
  static void StageAndRollup(Archive& a, int n, int entries = 2) {
    Stage(a, n, entries);
    auto r = a.Rollup(Day(n));
    REQUIRE(r.ok());
  }
  std::string DocPath(int n) const { return dir_ / ("archive/archive/" + Day(n) + ".json"); }
  const std::string& root() const { return dir_.path(); }

  // name -> bytes of every file of the document directory.
  std::map<std::string, std::string> Snapshot() const {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::directory_iterator(dir_ / "archive/archive"))
      out[e.path().filename().string()] = Slurp(e.path().string());
    return out;
  }

 private:
  ScratchDir dir_;
  ManualClock clock_;
};

inline void EditJson(const std::string& path, const std::function<void(json&)>& edit) {
  json j = json::parse(Slurp(path));
  edit(j);
  Spit(path, j.dump(1));
}

inline std::set<std::string> ProblemDates(const VerifyReport& r) {
  std::set<std::string> out;
  for (const Problem& p : r.problems) out.insert(p.date);
  return out;
}

inline std::string Describe(const VerifyReport& r) {
  std::string out;
  for (const Problem& p : r.problems) out += p.date + ": " + p.what + "\n";
  return out;
}

inline bool Mentions(const VerifyReport& r, const std::string& date, const std::string& what) {
  for (const Problem& p : r.problems)
    if (p.date == date && p.what.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace limbic::archive::test
