// Entity names: one page per entity whatever the case, safe file names,
// hostile and empty names refused or made harmless, bad dates refused.
#include <catch2/catch.hpp>
#include <filesystem>

#include "world/entity_store.h"
#include "world/entity_test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace entity_names_test {

using namespace limbic::world;
using namespace limbic::world::testing;
using namespace std::string_literals;
namespace fs = std::filesystem;

TEST_CASE("a page is found whatever the case of its file name", "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "entities");
  Spit(tmp / "entities/alice chen.md", "# alice chen\n**Type:** person\n");
  CHECK(store->Exists("Alice  Chen"));
  CHECK(store->Exists("[[ALICE CHEN]]"));
  CHECK_FALSE(store->Exists("Alice"));
  PageUpdate u = Update("Alice Chen", EntityType::kPerson);
  u.facts = {"is an engineer"};
  ApplyResult r = MustApply(*store, {u});
  CHECK(r.pages_created == 0);
  CHECK(r.pages_updated == 1);
  CHECK(FilesUnder(tmp / "entities") == std::vector<std::string>{".lock", "alice chen.md"});
  CHECK(Slurp(tmp / "entities/alice chen.md").find("- is an engineer") != std::string::npos);
}

TEST_CASE("names that differ but share a file name get pages of their own", "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "entities");
  PageUpdate a = Update("acme/billing");
  a.facts = {"slash"};
  PageUpdate b = Update("acme:billing");
  b.facts = {"colon"};
  MustApply(*store, {a, b});
  CHECK(MustApply(*store, {b}).lines_added == 0);
  auto list = store->List();
  REQUIRE(list.ok());
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].name == "acme/billing");
  CHECK((*list)[0].file == "acme-billing.md");
  CHECK((*list)[1].name == "acme:billing");
  CHECK((*list)[1].file.starts_with("acme-billing-"));
  auto read = store->Read("ACME:billing");
  REQUIRE(read.ok());
  CHECK(read->find("- colon") != std::string::npos);
  CHECK(read->find("- slash") == std::string::npos);
}

TEST_CASE("unsafe characters in names are made safe", "[world][entities]") {
  CHECK(*SafeFileName("../../etc/passwd") == "etc-passwd");
  CHECK(*SafeFileName("/etc/passwd") == "etc-passwd");
  CHECK(*SafeFileName("a\\b:c*d?e\"f<g>h|i") == "a-b-c-d-e-f-g-h-i");
  CHECK(*SafeFileName("nul\0byte"s) == "nul-byte");
  CHECK(*SafeFileName("tab\there\x01") == "tab here");
  CHECK(*SafeFileName("...hidden") == "hidden");
  CHECK(*SafeFileName("  --x--  ") == "x");
  CHECK(*SafeFileName("a---b") == "a-b");
  CHECK(*SafeFileName("C++") == "C++");
  CHECK(*SafeFileName("!!!") == "!!!");
  CHECK(*SafeFileName("Zoë Ångström") == "Zoë Ångström");
  CHECK(*SafeFileName("bad\xff utf8") == "bad- utf8");
  std::string long_name;
  for (int i = 0; i < 100; ++i) long_name += "é";  // 200 bytes
  auto cut = SafeFileName(long_name);
  REQUIRE(cut.ok());
  CHECK(cut->size() == 120);
  CHECK(cut->find("\xC3\xA9") == 0);
  CHECK(SafeFileName(std::string(119, 'a') + "é").value() ==
        std::string(119, 'a'));  // not cut inside é
}

TEST_CASE("hostile names never write outside the entities dir", "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "world/entities");
  const std::vector<std::string> names = {"../../etc/passwd",
                                          "../outside",
                                          "/abs/path",
                                          "a/../../b",
                                          "x\0/../y"s,
                                          ".hidden",
                                          "archive/../../z",
                                          "..\\..\\win",
                                          std::string(5000, 'n'),
                                          "lock",
                                          "archive"};
  std::vector<PageUpdate> updates;
  for (const std::string& n : names) {
    PageUpdate u = Update(n);
    u.facts = {"fact of " + n.substr(0, 10)};
    u.relations = {OutgoingRelation("near", n)};
    updates.push_back(u);
  }
  ApplyResult r = MustApply(*store, updates);
  CHECK(r.pages_created == names.size());
  for (const std::string& f : FilesUnder(tmp.path())) {
    INFO(f);
    CHECK(f.starts_with("world/entities/"));
  }
  CHECK(fs::is_directory(tmp / "world/entities/archive"));
  auto list = store->List();
  REQUIRE(list.ok());
  CHECK(list->size() == names.size());
  for (const std::string& n : names) CHECK(store->Exists(n));
}

TEST_CASE("names with nothing left after cleaning are refused and nothing is written",
          "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "entities");
  for (std::string bad : {"", "   ", "..", "///", "-.-", "**..**", "[[/]]"}) {
    INFO(bad);
    auto safe = SafeFileName(bad);
    REQUIRE_FALSE(safe.ok());
    CHECK(safe.status().IsInvalidArgument());
    PageUpdate good = Update("Fine");
    good.facts = {"would be written"};
    auto r = store->Apply({good, Update(bad)});
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().IsInvalidArgument());
    CHECK_THAT(r.status().message(), Catch::Contains("\"" + bad + "\""));
    CHECK_FALSE(store->Exists(bad));
  }
  CHECK(FilesUnder(tmp / "entities").empty());
}

TEST_CASE("a timeline date that is not a date is refused", "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "entities");
  PageUpdate u = Update("Bob");
  u.timeline = {{"2026-02-30", "never"}};
  auto r = store->Apply({Update("Alice"), u});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsInvalidArgument());
  CHECK_THAT(r.status().message(), Catch::Contains("2026-02-30"));
  CHECK(FilesUnder(tmp / "entities").empty());
}

}  // namespace entity_names_test
