// COMB compatibility: a genuine COMB archive (tests/archive/data/comb, made
// by COMB's own stage/rollup) verified, imported, and linked with COMB's
// sign.
#include <catch2/catch.hpp>

#include "archive/archive_fixture.h"
#include "archive/comb_links.h"
#include "archive/links.h"

namespace limbic::archive::test {
namespace {

const std::string kComb = std::string(LIMBIC_ARCHIVE_TEST_DATA) + "/comb";
const std::vector<std::string> kCombDates = {"2026-03-01", "2026-03-02", "2026-03-03",
                                             "2026-03-04"};

// A copy of the COMB fixture in a scratch dir, to tamper with.
std::string CopyOfComb(const ScratchDir& dir) {
  std::string to = dir / "comb";
  fs::copy(kComb, to, fs::copy_options::recursive);
  return to;
}

Document CombDoc(const std::string& root, const std::string& date) {
  auto doc = DocumentFromJson(json::parse(Slurp(root + "/archive/" + date + ".json")), date);
  REQUIRE(doc.ok());
  return *doc;
}

}  // namespace

TEST_CASE("every link of a genuine COMB archive is recognised as COMB's, and an edited one is not",
          "[comb]") {
  std::map<std::string, CombFeatures> features;
  std::map<std::string, Document> docs;
  for (const std::string& d : kCombDates) {
    docs[d] = CombDoc(kComb, d);
    features[d] = ComputeCombFeatures(docs[d].content);
  }
  size_t links = 0;
  for (const std::string& d : kCombDates) {
    INFO(d);
    CHECK(CombComputed(d, features[d], docs[d].links, features));
    links += docs[d].links.semantic.size() + docs[d].links.social.size();
  }
  CHECK(links == 12);  // 0 + 2 + 4 + 6: each day linked to the days before it
  Links edited = docs["2026-03-03"].links;
  edited.semantic[0].score += 0.0001;
  CHECK_FALSE(CombComputed("2026-03-03", features["2026-03-03"], edited, features));
  edited = docs["2026-03-03"].links;
  edited.social[0].delta = -edited.social[0].delta;
  edited.social[0].direction = edited.social[0].delta > 0 ? "inward" : "outward";
  CHECK_FALSE(CombComputed("2026-03-03", features["2026-03-03"], edited, features));
}

TEST_CASE("limbic's social links have COMB's direction and sign", "[comb]") {
  // COMB wrote 2026-03-02 -> 2026-03-01 as inward +0.5951: the day grew
  // warmer and more engaged since its target.
  Document comb = CombDoc(kComb, "2026-03-02");
  REQUIRE(comb.links.social.size() == 1);
  CHECK(comb.links.social[0] == SocialLink{"2026-03-01", "inward", 0.5951});
  std::vector<Features> f;
  for (const char* d : {"2026-03-01", "2026-03-02"})
    f.push_back(ComputeFeatures(CombDoc(kComb, d).content));
  auto links = ComputeLinks({"2026-03-01", "2026-03-02"}, {&f[0], &f[1]}, LinkOptions{});
  REQUIRE(links[1].social.size() == 1);
  CHECK(links[1].social[0].target == "2026-03-01");
  CHECK(links[1].social[0].direction == "inward");
  CHECK(links[1].social[0].delta > 0);
  REQUIRE(links[0].social.size() == 1);
  CHECK(links[0].social[0].direction == "outward");
  CHECK(links[0].social[0].delta == -links[1].social[0].delta);
}

TEST_CASE("verify tells a COMB archive's links from edited ones", "[comb]") {
  Fixture f;
  fs::create_directories(f.root() + "/archive");
  fs::copy(kComb + "/archive", f.root() + "/archive/archive", fs::copy_options::recursive);
  auto a = f.Open();
  auto r = a->Verify();
  REQUIRE(r.ok());
  INFO(Describe(*r));
  CHECK(r->ok());
  CHECK(r->documents == 4);
  // Every day: 2026-03-01's empty lists are what COMB wrote for the first
  // day it rolled up.
  REQUIRE(r->notes.size() == 4);
  for (const Problem& n : r->notes) CHECK(n.what.find("COMB's rules") != std::string::npos);

  // The neighbouring case: a score edited by one unit in the last place.
  EditJson(f.root() + "/archive/archive/2026-03-04.json", [](json& j) {
    j["links"]["semantic"][0]["score"] = j["links"]["semantic"][0]["score"].get<double>() + 0.0001;
  });
  r = a->Verify();
  REQUIRE(r.ok());
  CHECK(ProblemDates(*r) == std::set<std::string>{"2026-03-04"});
  CHECK(Mentions(*r, "2026-03-04", "nor COMB's"));
}

TEST_CASE("import brings a COMB archive in: chain kept, COMB's links kept, both verify", "[comb]") {
  Fixture f;
  auto a = f.Open();
  auto r = a->Import(kComb, false);
  REQUIRE(r.ok());
  CHECK(r->documents == 4);
  CHECK(r->comb_links == 4);
  CHECK_FALSE(r->relinked);
  for (const std::string& d : kCombDates) {
    auto mine = a->Load(d);
    REQUIRE(mine.ok());
    Document comb = CombDoc(kComb, d);
    CHECK(mine->content == comb.content);
    CHECK(mine->hash == comb.hash);
    CHECK(mine->prev_hash == comb.prev_hash);
    CHECK(mine->links == comb.links);
    CHECK(mine->metadata["staged_entries"] == 0);
    CHECK(mine->metadata["compaction_count"] == comb.metadata["compaction_count"]);
  }
  auto v = a->Verify();
  REQUIRE(v.ok());
  INFO(Describe(*v));
  CHECK(v->ok());
  CHECK(v->notes.size() == 4);

  // The next day rolls up after it (COMB's metadata no longer stops it),
  // and relink leaves nothing for verify to note.
  Fixture::Stage(*a, 64 + 1, 1);  // 2026-03-06
  auto up = a->Rollup("2026-03-06");
  REQUIRE(up.ok());
  CHECK(up->created);
  auto relinked = a->Relink();
  REQUIRE(relinked.ok());
  v = a->Verify();
  REQUIRE(v.ok());
  INFO(Describe(*v));
  CHECK(v->ok());
  CHECK(v->notes.empty());
  CHECK(a->Load("2026-03-02")->hash == CombDoc(kComb, "2026-03-02").hash);
}

TEST_CASE("import --relink recomputes COMB's links by limbic's rules", "[comb]") {
  Fixture f;
  auto a = f.Open();
  auto r = a->Import(kComb + "/archive", true);  // the archive folder itself
  REQUIRE(r.ok());
  CHECK(r->relinked);
  auto v = a->Verify();
  REQUIRE(v.ok());
  CHECK(v->ok());
  CHECK(v->notes.empty());
}

TEST_CASE("import refuses a COMB archive whose chain is broken, and writes nothing", "[comb]") {
  Fixture f;
  ScratchDir src;
  std::string comb = CopyOfComb(src);
  auto a = f.Open();

  SECTION("changed content") {
    EditJson(comb + "/archive/2026-03-02.json",
             [](json& j) { j["content"] = j["content"].get<std::string>() + "!"; });
    auto r = a->Import(comb, false);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().IsCorruption());
    CHECK(r.status().message().find("2026-03-02.json: hash") != std::string::npos);
  }
  SECTION("a prev_hash that is not the hash before") {
    EditJson(comb + "/archive/2026-03-03.json",
             [](json& j) { j["prev_hash"] = std::string(64, 'a'); });
    auto r = a->Import(comb, false);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("2026-03-03.json: prev_hash") != std::string::npos);
  }
  SECTION("links that are neither COMB's nor limbic's, unless --relink") {
    EditJson(comb + "/archive/2026-03-02.json",
             [](json& j) { j["links"]["social"][0]["delta"] = 0.9; });
    auto r = a->Import(comb, false);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("2026-03-02.json: semantic or social links are neither") !=
          std::string::npos);
    CHECK(a->Dates()->empty());
    REQUIRE(a->Import(comb, true).ok());
    CHECK(a->Verify()->ok());
    return;
  }
  SECTION("the neighbouring case: COMB's metadata edited (outside the hash) is imported") {
    EditJson(comb + "/archive/2026-03-02.json",
             [](json& j) { j["metadata"]["created_at"] = "then"; });
    REQUIRE(a->Import(comb, false).ok());
    CHECK(a->Dates()->size() == 4);
    return;
  }
  CHECK(a->Dates()->empty());
}

TEST_CASE("import refuses an archive that already has documents", "[comb]") {
  Fixture f;
  auto a = f.Open();
  Fixture::StageAndRollup(*a, 1);
  auto r = a->Import(kComb, false);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("only be imported into an empty one") != std::string::npos);
}

TEST_CASE("verify notes social links of limbic's old sign, and relink rewrites them", "[comb]") {
  Fixture f;
  auto a = f.Open();
  for (int d = 1; d <= 3; ++d) Fixture::StageAndRollup(*a, d);
  for (int d = 1; d <= 3; ++d)
    EditJson(f.DocPath(d), [](json& j) {
      for (json& l : j["links"]["social"]) {
        l["delta"] = -l["delta"].get<double>();
        l["direction"] = l["delta"].get<double>() > 0 ? "inward" : "outward";
      }
    });
  auto v = a->Verify();
  REQUIRE(v.ok());
  INFO(Describe(*v));
  CHECK(v->ok());
  REQUIRE(v->notes.size() == 3);
  CHECK(v->notes[0].what.find("sign of limbic before") != std::string::npos);
  auto n = a->Relink();
  REQUIRE(n.ok());
  CHECK(*n == 3);
  v = a->Verify();
  CHECK(v->notes.empty());
}

}  // namespace limbic::archive::test
