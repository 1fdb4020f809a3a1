// Entity pages: their form, append-only edits beside hand edits, decay and
// restore, listing, and pages that are not what the store wrote.
#include <fcntl.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "base/fault_env.h"
#include "world/entity_store.h"
#include "world/entity_test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace entity_store_test {

using namespace limbic::world;
using namespace limbic::world::testing;
using namespace std::string_literals;
namespace fs = std::filesystem;

TEST_CASE("a new page is rendered in the canonical form", "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "entities");
  PageUpdate u = Update("**Alice**", EntityType::kPerson);
  u.facts = {"is an engineer", "likes  tea\n"};
  u.timeline = {{"2026-01-02", "met Bob"}, {"2026-01-01", "joined Acme"}};
  u.relations = {OutgoingRelation("works at", "Acme"), IncomingRelation("[[Bob]]", "knows")};
  ApplyResult r = MustApply(*store, {u});
  CHECK(r.pages_created == 1);
  CHECK(r.pages_updated == 0);
  CHECK(r.lines_added == 6);
  CHECK(Slurp(tmp / "entities/Alice.md") ==
        "# Alice\n"
        "**Type:** person\n"
        "\n"
        "## Facts\n"
        "- is an engineer\n"
        "- likes tea\n"
        "\n"
        "## Timeline\n"
        "### [[2026-01-01]]\n"
        "- joined Acme\n"
        "### [[2026-01-02]]\n"
        "- met Bob\n"
        "\n"
        "## Relations\n"
        "- this works at → [[Acme]]\n"
        "- [[Bob]] knows → this\n");
  auto read = store->Read("alice");
  REQUIRE(read.ok());
  CHECK(*read == Slurp(tmp / "entities/Alice.md"));
}

TEST_CASE("applying the same update twice adds nothing the second time", "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "entities");
  PageUpdate u = Update("Acme", EntityType::kCompany);
  u.facts = {"makes rockets", "makes rockets"};
  u.timeline = {{"2026-03-01", "shipped v2"}};
  u.relations = {IncomingRelation("Alice", "works at")};
  CHECK(MustApply(*store, {u}).lines_added == 3);
  std::string first = Slurp(tmp / "entities/Acme.md");

  ApplyResult again = MustApply(*store, {u, Update("ACME")});
  CHECK(again.lines_added == 0);
  CHECK(again.pages_updated == 0);
  CHECK(again.pages_created == 0);
  CHECK(Slurp(tmp / "entities/Acme.md") == first);

  // The same line on another day is a new observation; case and markup do
  // not make a fact new.
  PageUpdate later = Update("acme");
  later.facts = {"MAKES ROCKETS", "**makes rockets**"};
  later.timeline = {{"2026-03-02", "shipped v2"}};
  ApplyResult r = MustApply(*store, {later});
  CHECK(r.lines_added == 1);
  CHECK(r.pages_updated == 1);
  CHECK(Count(Slurp(tmp / "entities/Acme.md"), "- shipped v2") == 2);
  CHECK(Slurp(tmp / "entities/Acme.md").find("# Acme\n") == 0);  // the first name seen stays
}

TEST_CASE("a new date heading goes where its date belongs", "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "entities");
  PageUpdate u = Update("Bob");
  u.timeline = {{"2026-01-10", "b"}, {"2026-01-20", "c"}};
  MustApply(*store, {u});
  u.timeline = {{"2026-01-15", "between"},
                {"2026-01-01", "first"},
                {"2026-02-01", "last"},
                {"2026-01-10", "b2"}};
  CHECK(MustApply(*store, {u}).lines_added == 4);
  CHECK(Slurp(tmp / "entities/Bob.md") ==
        "# Bob\n**Type:** concept\n\n## Facts\n\n## Timeline\n"
        "### [[2026-01-01]]\n- first\n"
        "### [[2026-01-10]]\n- b\n- b2\n"
        "### [[2026-01-15]]\n- between\n"
        "### [[2026-01-20]]\n- c\n"
        "### [[2026-02-01]]\n- last\n"
        "\n## Relations\n");
}

TEST_CASE("hand edits survive in place", "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "entities");
  const std::string hand =
      "# Alice\n"
      "**Type:** person\n"
      "Some intro written by hand.\n"
      "\n"
      "## Facts\n"
      "- is an engineer\n"
      "A paragraph someone wrote.\n"
      "\n"
      "## Notes\n"
      "```\n"
      "## Facts\n"
      "```\n"
      "- private note\n"
      "\n"
      "## Timeline\n"
      "### [[2026-01-01]]\n"
      "- joined Acme\n"
      "* (by hand) had coffee\n"
      "  with a second line\n"
      "#### an aside\n"
      "\n"
      "## Relations\n"
      "- this works at → [[Acme]]\n"
      "\n"
      "<!-- the end -->\n";
  Spit(tmp / "entities/Alice.md", hand);
  PageUpdate u = Update("Alice", EntityType::kPerson);
  u.facts = {"is an engineer", "likes tea"};
  u.timeline = {
      {"2026-01-01", "met Bob"}, {"2026-01-01", "(by hand) had coffee"}, {"2026-01-02", "left"}};
  u.relations = {OutgoingRelation("works at", "Acme"), IncomingRelation("Bob", "knows")};
  ApplyResult r = MustApply(*store, {u});
  CHECK(r.lines_added == 4);
  CHECK(r.pages_updated == 1);
  CHECK(Slurp(tmp / "entities/Alice.md") ==
        "# Alice\n"
        "**Type:** person\n"
        "Some intro written by hand.\n"
        "\n"
        "## Facts\n"
        "- is an engineer\n"
        "- likes tea\n"
        "A paragraph someone wrote.\n"
        "\n"
        "## Notes\n"
        "```\n"
        "## Facts\n"
        "```\n"
        "- private note\n"
        "\n"
        "## Timeline\n"
        "### [[2026-01-01]]\n"
        "- joined Acme\n"
        "* (by hand) had coffee\n"
        "  with a second line\n"
        "- met Bob\n"
        "#### an aside\n"
        "### [[2026-01-02]]\n"
        "- left\n"
        "\n"
        "## Relations\n"
        "- this works at → [[Acme]]\n"
        "- [[Bob]] knows → this\n"
        "\n"
        "<!-- the end -->\n");
}

TEST_CASE("missing sections are created in the canonical order", "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "entities");
  Spit(tmp / "entities/Carol.md", "# Carol\n\n## Relations\n- this knows → [[Bob]]\n");
  Spit(tmp / "entities/Dave.md", "notes about dave, no headings at all");
  PageUpdate carol = Update("Carol", EntityType::kPerson);
  carol.facts = {"is a designer"};
  carol.timeline = {{"2026-05-05", "joined"}};
  PageUpdate dave = Update("Dave");
  dave.relations = {OutgoingRelation("knows", "Carol")};
  ApplyResult r = MustApply(*store, {carol, dave});
  CHECK(r.pages_updated == 2);
  CHECK(Slurp(tmp / "entities/Carol.md") ==
        "# Carol\n"
        "**Type:** person\n"
        "\n"
        "## Facts\n"
        "- is a designer\n"
        "\n"
        "## Timeline\n"
        "### [[2026-05-05]]\n"
        "- joined\n"
        "\n"
        "## Relations\n"
        "- this knows → [[Bob]]\n");
  CHECK(Slurp(tmp / "entities/Dave.md") ==
        "# Dave\n"
        "**Type:** concept\n"
        "\n"
        "notes about dave, no headings at all\n"
        "\n"
        "## Relations\n"
        "- this knows → [[Carol]]\n");
}

TEST_CASE("pages written with CRLF keep CRLF and a BOM is kept", "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "entities");
  Spit(tmp / "entities/Eve.md",
       "\xEF\xBB\xBF# Eve\r\n**Type:** person\r\n\r\n## Facts\r\n- is careful\r\n\r\n## "
       "Timeline\r\n\r\n## "
       "Relations\r\n");
  PageUpdate u = Update("Eve");
  u.facts = {"is careful", "reads logs"};
  u.timeline = {{"2026-02-02", "audited"}};
  CHECK(MustApply(*store, {u}).lines_added == 2);
  CHECK(Slurp(tmp / "entities/Eve.md") ==
        "\xEF\xBB\xBF# Eve\r\n**Type:** person\r\n\r\n## Facts\r\n- is careful\r\n- reads "
        "logs\r\n\r\n"
        "## Timeline\r\n### [[2026-02-02]]\r\n- audited\r\n\r\n## Relations\r\n");
}

TEST_CASE("the type changes only from concept", "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "entities");
  MustApply(*store, {Update("Rust")});
  CHECK(Slurp(tmp / "entities/Rust.md").find("**Type:** concept\n") != std::string::npos);
  ApplyResult r = MustApply(*store, {Update("rust", EntityType::kTool)});
  CHECK(r.pages_updated == 1);
  CHECK(r.lines_added == 0);
  CHECK(Slurp(tmp / "entities/Rust.md").find("**Type:** tool\n") != std::string::npos);
  CHECK(MustApply(*store, {Update("Rust", EntityType::kProject)}).pages_updated == 0);
  CHECK(MustApply(*store, {Update("Rust", EntityType::kConcept)}).pages_updated == 0);
  CHECK(Slurp(tmp / "entities/Rust.md").find("**Type:** tool\n") != std::string::npos);

  // Updates of one name merge: the specific type wins over concept.
  MustApply(*store,
            {Update("Go"), Update("GO", EntityType::kTool), Update("go", EntityType::kPerson)});
  CHECK(Slurp(tmp / "entities/Go.md").find("**Type:** tool\n") != std::string::npos);
  auto list = store->List();
  REQUIRE(list.ok());
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].name == "Go");
  CHECK((*list)[0].type == EntityType::kTool);
}


TEST_CASE("decay archives stale pages and apply brings them back", "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "entities");
  auto dated = [](std::string name, EntityType type, std::string date) {
    PageUpdate u = Update(std::move(name), type);
    u.timeline = {{std::move(date), "seen"}};
    return u;
  };
  MustApply(*store, {dated("Old", EntityType::kConcept, "2026-01-01"),
                     dated("Boss", EntityType::kPerson, "2026-01-01"),
                     dated("Edge", EntityType::kTool, "2026-01-31"),
                     dated("New", EntityType::kTool, "2026-03-01")});
  // No timeline: the file's modification day counts.
  Spit(tmp / "entities/Undated.md", "# Undated\n**Type:** concept\n");
  struct timespec times[2] = {{1735689600, 0}, {1735689600, 0}};  // 2025-01-01
  REQUIRE(::utimensat(AT_FDCWD, (tmp / "entities/Undated.md").c_str(), times, 0) == 0);

  auto moved = store->Decay("2026-03-02", 30, {EntityType::kPerson});
  REQUIRE(moved.ok());
  CHECK(*moved == std::vector<std::string>{"Old", "Undated"});
  CHECK(fs::exists(tmp / "entities/archive/Old.md"));
  CHECK_FALSE(fs::exists(tmp / "entities/Old.md"));
  CHECK(fs::exists(tmp / "entities/Boss.md"));  // protected
  CHECK(fs::exists(tmp / "entities/Edge.md"));  // exactly 30 days: not more than 30
  CHECK(store->Exists("old"));
  auto list = store->List();
  REQUIRE(list.ok());
  REQUIRE(list->size() == 5);
  const PageInfo& old = (*list)[3];
  CHECK(old.name == "Old");
  CHECK(old.archived);
  CHECK(old.file == "archive/Old.md");
  CHECK(old.last_referenced == "2026-01-01");
  CHECK(old.timeline == 1);
  CHECK(store->Decay("2026-03-02", 30, {EntityType::kPerson})->empty());

  // Referencing an archived entity restores it, changed or not.
  ApplyResult r =
      MustApply(*store, {dated("OLD", EntityType::kConcept, "2026-03-02"), Update("undated")});
  CHECK(r.restored == 2);
  CHECK(r.pages_updated == 1);
  CHECK(r.lines_added == 1);
  CHECK(fs::exists(tmp / "entities/Old.md"));
  CHECK(fs::exists(tmp / "entities/Undated.md"));
  CHECK(fs::is_empty(tmp / "entities/archive"));
  CHECK(Slurp(tmp / "entities/Old.md")
            .find("### [[2026-01-01]]\n- seen\n### [[2026-03-02]]\n- seen\n") != std::string::npos);

  CHECK(store->Decay("03/02/2026", 30, {}).status().IsInvalidArgument());
  CHECK(store->Decay("2026-03-02", -1, {}).status().IsInvalidArgument());
}

TEST_CASE("an archive folder removed by hand is made again", "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "entities");
  PageUpdate u = Update("Gone");
  u.timeline = {{"2025-01-01", "once"}};
  MustApply(*store, {u});
  fs::remove_all(tmp / "entities/archive");
  CHECK(store->Exists("gone"));
  REQUIRE(store->List().ok());
  auto moved = store->Decay("2026-01-01", 30, {});
  REQUIRE(moved.ok());
  CHECK(*moved == std::vector<std::string>{"Gone"});
  CHECK(fs::exists(tmp / "entities/archive/Gone.md"));
  CHECK(store->Exists("GONE"));
}

TEST_CASE("list reports every page with its counts", "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "entities");
  PageUpdate u = Update("Zed", EntityType::kProject);
  u.facts = {"a", "b"};
  u.timeline = {{"2026-04-01", "x"}, {"2026-04-03", "y"}, {"2026-04-03", "z"}};
  u.relations = {OutgoingRelation("uses", "Go")};
  MustApply(*store, {u, Update("alpha"), Update("Beta")});
  Spit(tmp / "entities/notes.txt", "not a page");
  auto list = store->List();
  REQUIRE(list.ok());
  REQUIRE(list->size() == 3);
  CHECK((*list)[0].name == "alpha");
  CHECK((*list)[1].name == "Beta");
  const PageInfo& zed = (*list)[2];
  CHECK(zed.name == "Zed");
  CHECK(zed.type == EntityType::kProject);
  CHECK(zed.file == "Zed.md");
  CHECK_FALSE(zed.archived);
  CHECK(zed.last_referenced == "2026-04-03");
  CHECK(zed.facts == 2);
  CHECK(zed.timeline == 3);
  CHECK(zed.relations == 1);
  CHECK(store->Read("nobody").status().IsNotFound());
}

TEST_CASE("pages that are not UTF-8 or are huge do not break the store", "[world][entities]") {
  ScratchDir tmp;
  auto store = OpenStore(tmp / "entities");
  Spit(tmp / "entities/Bin.md", "# Bin\n**Type:** tool\n\x00\x01\xc3\n## Facts\n- \xff\n"s);
  Spit(tmp / "entities/Latin.md",
       "# Latin \xe9t\xe9\n## Facts\n"s);  // a title in Latin-1, edited by hand
  PageUpdate bin = Update("Bin");
  bin.facts = {"binary"};
  PageUpdate latin = Update("latin");
  latin.facts = {"still its page"};
  ApplyResult r = MustApply(*store, {bin, latin});
  CHECK(r.pages_updated == 2);
  CHECK(r.pages_created == 0);
  CHECK(Slurp(tmp / "entities/Bin.md") ==
        "# Bin\n**Type:** tool\n\x00\x01\xc3\n## Facts\n- \xff\n- binary\n"s);
  CHECK(Slurp(tmp / "entities/Latin.md").find("- still its page") != std::string::npos);

  std::string huge = "# Huge\n**Type:** person\n\n## Facts\n";
  while (huge.size() <= (17u << 20)) huge += "- a line of a very long paste\n";
  Spit(tmp / "entities/Huge.md", huge);
  PageUpdate h = Update("Huge");
  h.facts = {"more"};
  PageUpdate other = Update("Other");
  auto refused = store->Apply({other, h});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().IsFailedPrecondition());
  CHECK_THAT(refused.status().message(), Catch::Contains("Huge.md"));
  CHECK_FALSE(store->Exists("Other"));
  CHECK(store->Read("Huge").status().IsFailedPrecondition());

  auto list = store->List();
  REQUIRE(list.ok());
  REQUIRE(list->size() == 3);
  CHECK((*list)[0].name == "Bin");
  CHECK((*list)[0].type == EntityType::kTool);
  CHECK((*list)[1].name == "Huge");
  CHECK((*list)[1].facts > 100000);
  CHECK((*list)[2].name == "Latin \xEF\xBF\xBDt\xEF\xBF\xBD");  // valid UTF-8, for JSON
  CHECK(store->Decay("2026-01-01", 1, {}).ok());
}


TEST_CASE("injected faults reach the entity pages: a failed write, rename or move changes no page",
          "[world][entities][fault]") {
  ScratchDir tmp;
  limbic::FaultInjectionEnv env(limbic::Env::Default());
  auto opened = EntityStore::Open(tmp / "entities", &env);
  REQUIRE(opened.ok());
  EntityStore& store = **opened;
  PageUpdate alice = Update("Alice", EntityType::kPerson);
  alice.facts = {"likes tea"};
  MustApply(store, {alice});
  const std::string before = Slurp(tmp / "entities/Alice.md");
  PageUpdate more = Update("Alice");
  more.facts = {"works at Acme"};

  env.SetWriteError(true);
  auto failed = store.Apply({more});
  CHECK(failed.status().IsIOError());
  env.SetWriteError(false);
  env.FailRenameAfter(0);
  failed = store.Apply({more});
  CHECK(failed.status().IsIOError());
  CHECK(Slurp(tmp / "entities/Alice.md") == before);
  CHECK(FilesUnder(tmp / "entities") == std::vector<std::string>{".lock", "Alice.md"});

  // Decay's move into archive/ is a rename too: refused, the page stays.
  auto moved = store.Decay("2027-01-01", 30, {});
  CHECK(moved.status().IsIOError());
  CHECK(Slurp(tmp / "entities/Alice.md") == before);

  env.FailRenameAfter(-1);  // well again: the same update lands once
  CHECK(MustApply(store, {more}).lines_added == 1);
  CHECK(Slurp(tmp / "entities/Alice.md").find("- works at Acme\n") != std::string::npos);
  REQUIRE(store.Decay("2027-01-01", 30, {}).ok());
  CHECK(fs::exists(tmp / "entities/archive/Alice.md"));
}

}  // namespace entity_store_test
