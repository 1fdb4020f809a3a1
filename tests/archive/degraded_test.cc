// The archive degrades instead of refusing: a day that cannot be read is one
// problem, and a staged_entries count that does not fit its staging file is
// reported, never skipped or appended twice.
#include <catch2/catch.hpp>

#include "archive/archive_fixture.h"
#include "archive/store.h"

namespace limbic::archive::test {
namespace {

std::string StagingPath(const Fixture& f, int day) {
  return f.root() + "/archive/staging/" + Day(day) + ".jsonl";
}

// The first `n` lines of a file, kept.
void KeepLines(const std::string& path, size_t n) {
  std::string text = Slurp(path), out;
  size_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    size_t nl = text.find('\n', at);
    out += text.substr(at, nl + 1 - at);
    at = nl + 1;
  }
  Spit(path, out);
}

}  // namespace

TEST_CASE("a staging file shorter than its document's count is reported, and rollup refuses it",
          "[degraded]") {
  Fixture f;
  auto a = f.Open();
  Fixture::StageAndRollup(*a, 1, 3);
  Fixture::StageAndRollup(*a, 2, 2);

  // The neighbouring case first: counts that match are no problem, and a
  // rollup with nothing new adds nothing.
  REQUIRE(a->Verify()->ok());
  auto same = a->Rollup(Day(1));
  REQUIRE(same.ok());
  CHECK(same->added == 0);

  KeepLines(StagingPath(f, 1), 2);
  auto r = a->Verify();
  REQUIRE(r.ok());
  INFO(Describe(*r));
  CHECK(ProblemDates(*r) == std::set<std::string>{Day(1)});
  CHECK(Mentions(*r, Day(1),
                 "metadata.staged_entries is 3, but " + StagingPath(f, 1) + " has only 2 entries"));
  auto before = f.Snapshot();
  auto up = a->Rollup(Day(1));
  REQUIRE_FALSE(up.ok());
  CHECK(up.status().IsCorruption());
  CHECK(up.status().message().find(StagingPath(f, 1) + " has 2 entries") != std::string::npos);
  CHECK(f.Snapshot() == before);
  CHECK_FALSE(a->Pending(Day(1)).ok());
}

TEST_CASE("a tampered metadata.staged_entries is reported by verify", "[degraded]") {
  Fixture f;
  auto a = f.Open();
  Fixture::StageAndRollup(*a, 1, 3);
  Fixture::Stage(*a, 1, 1);  // a fourth entry, pending

  // The neighbouring case: an entry staged since the rollup is pending, not
  // a problem.
  REQUIRE(a->Verify()->ok());

  SECTION("lowered: a rollup would append entries twice") {
    EditJson(f.DocPath(1), [](json& j) { j["metadata"]["staged_entries"] = 1; });
    auto r = a->Verify();
    INFO(Describe(*r));
    CHECK(Mentions(*r, Day(1),
                   "metadata.staged_entries is 1, but the content holds the first 3 entries"));
  }
  SECTION("lowered to zero") {
    EditJson(f.DocPath(1), [](json& j) { j["metadata"]["staged_entries"] = 0; });
    auto r = a->Verify();
    INFO(Describe(*r));
    CHECK(Mentions(*r, Day(1),
                   "metadata.staged_entries is 0, but the content holds the first 3 entries"));
  }
  SECTION("raised over a pending entry: a rollup would skip it") {
    EditJson(f.DocPath(1), [](json& j) { j["metadata"]["staged_entries"] = 4; });
    auto r = a->Verify();
    INFO(Describe(*r));
    CHECK(Mentions(*r, Day(1),
                   "metadata.staged_entries is 4, but the content holds the first 3 entries"));
  }
  SECTION("not a count") {
    EditJson(f.DocPath(1), [](json& j) { j["metadata"]["staged_entries"] = "3"; });
    auto r = a->Verify();
    INFO(Describe(*r));
    CHECK(Mentions(*r, Day(1), "metadata.staged_entries is \"3\", not a count"));
  }
  SECTION("missing while the day has staged entries") {
    EditJson(f.DocPath(1), [](json& j) { j["metadata"].erase("staged_entries"); });
    auto r = a->Verify();
    INFO(Describe(*r));
    CHECK(Mentions(*r, Day(1), "metadata.staged_entries is missing, but"));
  }
}

TEST_CASE("one day that does not parse leaves every other day readable", "[degraded]") {
  Fixture f;
  {
    auto a = f.Open();
    for (int d = 1; d <= 4; ++d) Fixture::StageAndRollup(*a, d);
    Fixture::Stage(*a, 5, 1);
  }
  Spit(f.DocPath(2), "not json");
  EditJson(f.DocPath(3), [](json& j) { j.erase("links"); });
  StoreOptions o;
  o.state_dir = f.root();
  auto store = ArchiveStore::Open(o);
  REQUIRE(store.ok());
  auto& s = **store;
  REQUIRE(s.CatchUp().ok());
  REQUIRE(s.unreadable().size() == 2);
  CHECK(s.unreadable()[0].date == Day(2));
  CHECK(s.unreadable()[1].date == Day(3));

  auto hits = s.Search("garden", 10);  // Day(1) and Day(4) talk of the garden
  REQUIRE(hits.ok());
  std::set<std::string> dates;
  for (const json& h : (*hits)["results"]) dates.insert(h["date"].get<std::string>());
  CHECK(dates.count(Day(4)) == 1);
  CHECK(dates.count(Day(2)) == 0);

  auto stats = s.Stats();
  REQUIRE(stats.ok());
  CHECK((*stats)["documents"] == 2);
  CHECK((*stats)["unreadable"].size() == 2);
  CHECK((*stats)["staged_pending"] == 1);

  auto recall = s.Recall(10);
  REQUIRE(recall.ok());
  CHECK((*recall)["items"].size() == 3);  // Day(5)'s entry, Day(4), Day(1)
  CHECK((*recall)["unreadable"].size() == 2);

  REQUIRE(s.Show(Day(4)).ok());
  CHECK(s.Show(Day(2)).status().message().find(Day(2) + ".json: not JSON") != std::string::npos);
  auto walk = s.Walk(Day(4), "temporal", 3);
  REQUIRE(walk.ok());
  REQUIRE((*walk)["visited"].size() == 1);  // Day(3), unreadable: not gone past
  CHECK((*walk)["visited"][0]["date"] == Day(3));
  CHECK((*walk)["visited"][0].contains("error"));

  auto v = s.Verify();
  REQUIRE(v.ok());
  CHECK((*v)["problems"].size() == 2);
  CHECK((*v)["problems"][0]["date"] == Day(2));
  CHECK((*v)["problems"][1]["date"] == Day(3));
}

}  // namespace limbic::archive::test
