#include "archive/archive.h"

#include <catch2/catch.hpp>

#include "archive/archive_fixture.h"

// This file's own namespace: test programs compile in unity batches.
namespace archive_test {

using namespace limbic;
using namespace limbic::archive;
using namespace limbic::archive::test;

TEST_CASE("documents round-trip through JSON and a bad field is named", "[archive]") {
  Document doc;
  doc.date = "2026-01-02";
  doc.content = "## 2026-01-02T01:00:00.000Z\n[user] hi";
  doc.prev_hash = std::string(64, 'a');
  doc.hash = ChainHash(doc.prev_hash, doc.content);
  doc.metadata = json{{"staged_entries", 1}};
  doc.links.prev = "2026-01-01";
  doc.links.semantic = {{"2026-01-05", 0.5123}};
  doc.links.social = {{"2026-01-01", "outward", -0.25}};
  json j = DocumentToJson(doc);
  CHECK(j["hash"] == ChainHash(std::string(64, 'a'), doc.content));
  CHECK(j["links"]["temporal"]["next"].is_null());
  for (auto back : {DocumentFromJson(j, "x"), DocumentFromJson(json(j), "x")}) {
    REQUIRE(back.ok());
    CHECK(back->content == doc.content);
    CHECK(back->prev_hash == doc.prev_hash);
    CHECK(back->links == doc.links);
    CHECK(back->metadata == doc.metadata);
  }

  json bad = j;
  bad["links"]["semantic"][0]["score"] = "high";
  auto r = DocumentFromJson(std::move(bad), "archive/2026-01-02.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsCorruption());
  CHECK(r.status().message() ==
        "archive/2026-01-02.json: links.semantic[0].score is not a number");
  bad = j;
  bad.erase("prev_hash");
  CHECK(DocumentFromJson(bad, "f").status().message().find("prev_hash is missing") !=
        std::string::npos);
  bad = j;
  bad["date"] = "2026-02-30";
  CHECK(DocumentFromJson(bad, "f").status().message().find("date") != std::string::npos);
}

TEST_CASE("rollup moves staged entries into a new day document", "[archive]") {
  Fixture f;
  auto a = f.Open();
  Fixture::Stage(*a, 1, 2);
  auto staged = a->staging().Read(Day(1));
  auto r = a->Rollup(Day(1));
  REQUIRE(r.ok());
  CHECK(r->date == Day(1));
  CHECK(r->added == 2);
  CHECK(r->created);
  CHECK(r->rewritten == 1);

  auto doc = a->Load(Day(1));
  REQUIRE(doc.ok());
  CHECK(doc->content == "## 2026-01-01T01:00:00.000Z\n" + (*staged)[0].text +
                            "\n\n## 2026-01-01T02:00:00.000Z\n" + (*staged)[1].text);
  CHECK_FALSE(doc->prev_hash);
  CHECK(doc->hash == ChainHash(std::nullopt, doc->content));
  CHECK(doc->metadata["staged_entries"] == 2);
  CHECK(doc->metadata["entries"] == 2);
  CHECK(doc->metadata["byte_size"] == doc->content.size());
  CHECK(doc->metadata["est_tokens"] == (*staged)[0].est_tokens + (*staged)[1].est_tokens);
  CHECK(doc->metadata["rolled_up_at"] == FormatTime(kJan1 + 400 * kDay));
  CHECK(a->Pending(Day(1))->empty());

  // Nothing new: left alone.
  std::string before = Slurp(f.DocPath(1));
  auto again = a->Rollup(Day(1));
  REQUIRE(again.ok());
  CHECK(again->added == 0);
  CHECK(again->rewritten == 0);
  CHECK(Slurp(f.DocPath(1)) == before);
  CHECK(*a->Dates() == std::vector<std::string>{Day(1)});
}

TEST_CASE("a second rollup of a day appends to it and re-hashes every later day", "[archive]") {
  Fixture f;
  auto a = f.Open();
  for (int n = 1; n <= 4; ++n) Fixture::StageAndRollup(*a, n);
  std::string old_content = a->Load(Day(2))->content;
  std::string old_hash4 = a->Load(Day(4))->hash;

  Fixture::Stage(*a, 2, 1);
  CHECK(a->Pending(Day(2))->size() == 1);
  // A new process: nothing remembered.
  a.reset();
  a = f.Open();
  auto r = a->Rollup(Day(2));
  REQUIRE(r.ok());
  CHECK(r->added == 1);
  CHECK_FALSE(r->created);
  CHECK(r->rewritten >= 3);

  auto d2 = a->Load(Day(2));
  CHECK(d2->content.starts_with(old_content + "\n\n## 2026-01-02T03:00:00.000Z\n"));
  CHECK(d2->metadata["staged_entries"] == 3);
  CHECK(d2->metadata["entries"] == 3);
  CHECK(a->Load(Day(3))->prev_hash == d2->hash);
  CHECK(a->Load(Day(4))->hash != old_hash4);
  auto v = a->Verify();
  REQUIRE(v.ok());
  CHECK(v->ok());
  INFO(Describe(*v));
  CHECK(v->documents == 4);
  CHECK(a->Pending(Day(2))->empty());
}

TEST_CASE("rolling up a day before the first inserts it into the chain", "[archive]") {
  Fixture f;
  auto a = f.Open();
  Fixture::StageAndRollup(*a, 5);
  Fixture::StageAndRollup(*a, 7);
  Fixture::StageAndRollup(*a, 3);
  Fixture::StageAndRollup(*a, 6);  // and one in between
  CHECK(*a->Dates() == std::vector<std::string>{Day(3), Day(5), Day(6), Day(7)});
  auto d3 = a->Load(Day(3)), d5 = a->Load(Day(5)), d6 = a->Load(Day(6)), d7 = a->Load(Day(7));
  CHECK_FALSE(d3->prev_hash);
  CHECK(d5->prev_hash == d3->hash);
  CHECK(d6->prev_hash == d5->hash);
  CHECK(d7->prev_hash == d6->hash);
  CHECK(d5->links.prev == Day(3));
  CHECK(d5->links.next == Day(6));
  CHECK(d3->links.next == Day(5));
  auto v = a->Verify();
  INFO(Describe(*v));
  CHECK(v->ok());
}

TEST_CASE("RollupBefore rolls up every earlier day with new entries", "[archive]") {
  Fixture f;
  auto a = f.Open();
  Fixture::Stage(*a, 1);
  Fixture::Stage(*a, 2);
  Fixture::Stage(*a, 3);
  auto r = a->RollupBefore(Day(3));
  REQUIRE(r.ok());
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].date == Day(1));
  CHECK((*r)[1].date == Day(2));
  CHECK(a->Pending(Day(3))->size() == 2);
  CHECK(a->RollupBefore(Day(3))->empty());

  Fixture::Stage(*a, 1, 1);
  auto stats = a->Stats();
  REQUIRE(stats.ok());
  CHECK(stats->documents == 2);
  CHECK(stats->first == Day(1));
  CHECK(stats->last == Day(2));
  CHECK(stats->staged_days == 3);
  CHECK(stats->staged_pending == 3);
  CHECK(stats->content_bytes == a->Load(Day(1))->content.size() + a->Load(Day(2))->content.size());
  CHECK(stats->est_tokens > 0);
  auto again = a->RollupBefore(Day(3));
  REQUIRE(again->size() == 1);
  CHECK((*again)[0].added == 1);
  CHECK(a->Stats()->staged_pending == 2);

  // A bad staging line on one day does not hold up the days after it.
  Fixture::Stage(*a, 4);
  Fixture::Stage(*a, 5);
  Spit(a->staging().PathOf(Day(4)), Slurp(a->staging().PathOf(Day(4))) + "garbage\n");
  auto partial = a->RollupBefore(Day(6));
  REQUIRE_FALSE(partial.ok());
  CHECK(partial.status().IsCorruption());
  CHECK(partial.status().message().find(Day(4) + ".jsonl line 3") != std::string::npos);
  CHECK(*a->Dates() == std::vector<std::string>{Day(1), Day(2), Day(3), Day(5)});
  CHECK(a->Pending(Day(5))->empty());
}

TEST_CASE("empty days and bad dates are clear errors", "[archive]") {
  Fixture f;
  auto a = f.Open();
  auto empty = a->Rollup(Day(9));
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().IsInvalidArgument());
  CHECK(empty.status().message().find(a->staging().PathOf(Day(9))) != std::string::npos);
  CHECK(a->Rollup("2026-02-30").status().IsInvalidArgument());
  CHECK(a->Rollup("2026-02-30").status().message().find("2026-02-30") != std::string::npos);
  CHECK(a->RollupBefore("soon").status().IsInvalidArgument());
  CHECK(a->Load("01/02/2026").status().IsInvalidArgument());
  CHECK(a->Pending("2026-1-1").status().IsInvalidArgument());
  CHECK(a->Load(Day(9)).status().IsNotFound());

  // A staging line that is not JSON stops the rollup of its day only.
  Fixture::Stage(*a, 2);
  Fixture::Stage(*a, 4);
  Spit(a->staging().PathOf(Day(4)), Slurp(a->staging().PathOf(Day(4))) + "garbage\n");
  auto bad = a->Rollup(Day(4));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find(Day(4) + ".jsonl line 3") != std::string::npos);
  CHECK(a->Rollup(Day(2)).ok());
  CHECK(*a->Dates() == std::vector<std::string>{Day(2)});

  // Read-only archives do not write.
  auto ro = f.Open(nullptr, true);
  CHECK(ro->Rollup(Day(2)).status().IsFailedPrecondition());
}

TEST_CASE("a corrupted document file is an error naming it, and nothing is lost", "[archive]") {
  Fixture f;
  auto a = f.Open();
  for (int n = 1; n <= 3; ++n) Fixture::StageAndRollup(*a, n);
  Spit(f.DocPath(2), "{\"date\": \"2026-01-02\", \"content\": ");
  auto before = f.Snapshot();

  auto load = a->Load(Day(2));
  REQUIRE_FALSE(load.ok());
  CHECK(load.status().IsCorruption());
  CHECK(load.status().message().find(f.DocPath(2)) != std::string::npos);
  Fixture::Stage(*a, 4);
  auto r = a->Rollup(Day(4));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsCorruption());
  CHECK(r.status().message().find(f.DocPath(2)) != std::string::npos);
  // Stats counts the other days and names the file it cannot read.
  auto stats = a->Stats();
  REQUIRE(stats.ok());
  CHECK(stats->documents == 2);
  REQUIRE(stats->unreadable.size() == 1);
  CHECK(stats->unreadable[0].what.find(f.DocPath(2)) != std::string::npos);
  CHECK(f.Snapshot() == before);
  CHECK(a->Pending(Day(4))->size() == 2);

  // A document of the wrong shape is named too, with the field.
  EditJson(f.DocPath(3), [](json& j) { j["links"]["social"][0]["direction"] = "sideways"; });
  auto shape = a->Load(Day(3));
  CHECK(shape.status().message().find(f.DocPath(3)) != std::string::npos);
  CHECK(shape.status().message().find("links.social[0].direction") != std::string::npos);
}

TEST_CASE("verify finds each kind of tampering and names the date", "[archive]") {
  Fixture f;
  auto a = f.Open();
  for (int n = 1; n <= 6; ++n) Fixture::StageAndRollup(*a, n);
  auto clean = a->Verify();
  REQUIRE(clean.ok());
  INFO(Describe(*clean));
  REQUIRE(clean->ok());
  CHECK(clean->documents == 6);
  CHECK(clean->bytes > 0);

  auto expect_only = [&](std::set<std::string> dates, const std::string& what) {
    auto v = a->Verify();
    REQUIRE(v.ok());
    INFO(Describe(*v));
    CHECK(ProblemDates(*v) == dates);
    CHECK(Mentions(*v, *dates.begin(), what));
  };
  SECTION("content") {
    EditJson(f.DocPath(3), [](json& j) { j["content"] = j["content"].get<std::string>() + "!"; });
    expect_only({Day(3)}, "hash does not match content");
  }
  SECTION("hash") {
    EditJson(f.DocPath(3), [](json& j) { j["hash"] = std::string(64, '0'); });
    expect_only({Day(3), Day(4)}, "hash does not match content");
    CHECK(Mentions(*a->Verify(), Day(4), "prev_hash"));
  }
  SECTION("prev_hash") {
    EditJson(f.DocPath(5), [](json& j) { j["prev_hash"] = std::string(64, 'a'); });
    expect_only({Day(5)}, "prev_hash");
  }
  SECTION("prev_hash of the first document") {
    EditJson(f.DocPath(1), [](json& j) { j["prev_hash"] = std::string(64, 'a'); });
    expect_only({Day(1)}, "first document");
  }
  SECTION("content re-hashed by the tamperer breaks the next link of the chain") {
    EditJson(f.DocPath(2), [](json& j) {
      j["content"] = "## 2026-01-02T01:00:00.000Z\nsomething else entirely";
      j["hash"] = ChainHash(j["prev_hash"].get<std::string>(), j["content"].get<std::string>());
    });
    auto v = a->Verify();
    INFO(Describe(*v));
    CHECK(Mentions(*v, Day(3), "prev_hash"));
    CHECK_FALSE(v->ok());
  }
  SECTION("temporal link") {
    EditJson(f.DocPath(4), [](json& j) { j["links"]["temporal"]["next"] = Day(6); });
    expect_only({Day(4)}, "temporal link next");
  }
  SECTION("semantic link score") {
    EditJson(f.DocPath(2), [](json& j) {
      auto& s = j["links"]["semantic"];
      REQUIRE(!s.empty());
      s[0]["score"] = s[0]["score"].get<double>() - 0.01;
    });
    expect_only({Day(2)}, "semantic links");
  }
  SECTION("semantic link removed") {
    EditJson(f.DocPath(6), [](json& j) { j["links"]["semantic"] = json::array(); });
    expect_only({Day(6)}, "semantic links");
  }
  SECTION("social link") {
    EditJson(f.DocPath(1), [](json& j) {
      auto& s = j["links"]["social"];
      REQUIRE(!s.empty());
      s[0]["direction"] = s[0]["direction"] == "inward" ? "outward" : "inward";
    });
    expect_only({Day(1)}, "social links");
  }
  SECTION("social delta") {
    EditJson(f.DocPath(5), [](json& j) {
      auto& s = j["links"]["social"];
      REQUIRE(!s.empty());
      s[0]["delta"] = 0.123;
    });
    expect_only({Day(5)}, "social links");
  }
  SECTION("several documents at once: every one is listed") {
    EditJson(f.DocPath(1), [](json& j) { j["links"]["temporal"]["prev"] = Day(9); });
    EditJson(f.DocPath(3), [](json& j) { j["content"] = "changed"; });
    EditJson(f.DocPath(6), [](json& j) { j["links"]["social"] = json::array(); });
    auto v = a->Verify();
    INFO(Describe(*v));
    CHECK(ProblemDates(*v) == std::set<std::string>{Day(1), Day(3), Day(6)});
    CHECK(v->problems.front().date == Day(1));
    CHECK(v->problems.back().date == Day(6));
  }
  SECTION("a file that does not parse is one problem, and verify goes on") {
    Spit(f.DocPath(2), "not json at all");
    EditJson(f.DocPath(5), [](json& j) { j["hash"] = std::string(64, 'f'); });
    Spit(f.root() + "/archive/archive/2026-02-30.json", "{}");
    auto v = a->Verify();
    REQUIRE(v.ok());
    INFO(Describe(*v));
    CHECK(v->documents == 6);
    CHECK(ProblemDates(*v) == std::set<std::string>{Day(2), "2026-02-30", Day(5), Day(6)});
    CHECK(Mentions(*v, Day(2), "not JSON"));
    CHECK(Mentions(*v, Day(2), f.DocPath(2)));
    CHECK(Mentions(*v, "2026-02-30", "not a date"));
    CHECK(*a->Dates() == std::vector<std::string>{Day(1), Day(2), Day(3), Day(4), Day(5), Day(6)});
  }
}

}  // namespace archive_test
