// The world model's part of a prompt's context (world/context.h): which
// MEMORY.md sections and lines a query keeps, how a section and a page are
// cut to a budget, which entity names a text mentions, and
// WorldModel::Context over real files.
#include "world/context.h"

#include <catch2/catch.hpp>
#include <fstream>

#include "state/test_util.h"
#include "world/world.h"

// This file's own namespace: test programs compile in unity batches.
namespace context_test {

using namespace limbic;
using namespace limbic::world;
using nlohmann::json;
using Dir = limbic::testing::ScratchDir;

namespace {

const char* kMemoryMd =
    "# MEMORY\n"
    "\n"
    "What surprised this agent, kept by limbic.\n"
    "\n"
    "## People\n"
    "\n"
    "- 2026-11-01: Alice Chen joined Acme Corp as CTO. (surprise 0.81)\n"
    "- 2026-11-03: Bob moved to the billing team. (surprise 0.62)\n"
    "- 2026-11-05: Alice Chen asked for a billing review. (surprise 0.55)\n"
    "\n"
    "## Projects\n"
    "\n"
    "- 2026-11-02: acme/billing migrated to PostgreSQL. (surprise 0.77)\n"
    "\n"
    "## Events\n"
    "\n"
    "- 2026-11-04: The office flooded. (surprise 0.90)\n";

const char* kPage =
    "# Alice Chen\n"
    "**Type:** person\n"
    "\n"
    "## Facts\n"
    "- is a staff engineer\n"
    "\n"
    "## Timeline\n"
    "### [[2026-11-01]]\n"
    "- joined Acme Corp as CTO\n"
    "### [[2026-11-05]]\n"
    "- asked for a billing review\n"
    "\n"
    "## Relations\n"
    "- this works_at → [[Acme Corp]]\n";

std::vector<std::string> Titles(const std::vector<ContextText>& texts) {
  std::vector<std::string> out;
  for (const ContextText& t : texts) out.push_back(t.title);
  return out;
}

}  // namespace

TEST_CASE("MEMORY.md sections: a query keeps the lines that hold its terms, best section first",
          "[world][context]") {
  auto all = MemorySections(kMemoryMd, "");
  CHECK(Titles(all) == std::vector<std::string>{"People", "Projects", "Events"});
  CHECK(all[0].source == "MEMORY.md#People");
  CHECK(all[0].lines.size() == 4);  // the heading and three items; no preamble, no blank line
  CHECK(all[0].score == 0);

  auto billing = MemorySections(kMemoryMd, "what about the billing of Alice?");
  REQUIRE(Titles(billing) == std::vector<std::string>{"People", "Projects"});
  CHECK(billing[0].score == 2);  // billing, alice
  CHECK(billing[0].lines ==
        std::vector<std::string>{
            "## People", "- 2026-11-01: Alice Chen joined Acme Corp as CTO. (surprise 0.81)",
            "- 2026-11-03: Bob moved to the billing team. (surprise 0.62)",
            "- 2026-11-05: Alice Chen asked for a billing review. (surprise 0.55)"});
  CHECK(billing[1].lines.size() == 2);
  // A heading that holds a term takes its whole section.
  auto events = MemorySections(kMemoryMd, "recent events");
  REQUIRE(Titles(events) == std::vector<std::string>{"Events"});
  CHECK(events[0].lines.size() == 2);
  CHECK(MemorySections("", "anything").empty());
  CHECK(MemorySections(kMemoryMd, "kubernetes").empty());
}

TEST_CASE("a section cut to a budget keeps its heading and its newest lines", "[world][context]") {
  auto people = MemorySections(kMemoryMd, "")[0];
  bool cut = false;
  CHECK(people.Text(people.Bytes(), &cut).size() == people.Bytes() - 1);
  CHECK_FALSE(cut);
  const size_t room = people.lines[0].size() + 1 + people.lines[3].size() + 1;
  CHECK(people.Text(room, &cut) == "## People\n" + people.lines[3]);
  CHECK(cut);
  CHECK(people.Text(3, &cut).empty());
}

TEST_CASE("a page cut to a budget keeps its head, facts and relations, then its newest dates",
          "[world][context]") {
  ContextText page = PageText("entity:Alice Chen.md", "Alice Chen", kPage);
  CHECK(page.lines.size() == 11);
  // Everything but the timeline's dates first, then 2026-11-05, then 2026-11-01.
  size_t fixed = 0;
  for (size_t i = 0; i < page.lines.size(); ++i)
    if (page.keep[i] <= 1) fixed += page.lines[i].size() + 1;
  bool cut = false;
  std::string head = page.Text(fixed, &cut);
  CHECK(cut);
  CHECK(head ==
        "# Alice Chen\n**Type:** person\n## Facts\n- is a staff engineer\n## Timeline\n"
        "## Relations\n- this works_at → [[Acme Corp]]");
  std::string newer = page.Text(fixed + 60, &cut);
  CHECK(newer ==
        "# Alice Chen\n**Type:** person\n## Facts\n- is a staff engineer\n## Timeline\n"
        "### [[2026-11-05]]\n- asked for a billing review\n"
        "## Relations\n- this works_at → [[Acme Corp]]");
  // A date whose lines do not fit is left out with them.
  CHECK(page.Text(fixed + 20) == head);
  CHECK(page.Text(page.Bytes(), &cut).find("2026-11-01") != std::string::npos);
  CHECK_FALSE(cut);
  // A round trip through JSON (the world worker hands texts to the loop so).
  CHECK(json(page).get<ContextText>().Text(fixed) == head);
}

TEST_CASE("NamedIn finds names at word boundaries, case folded but for short ones",
          "[world][context]") {
  std::vector<std::string> names = {"Alice Chen", "Alice", "Bob", "acme/billing",
                                    "Go",         "C++",   "Al",  "Event Sourcing",
                                    "x",          "Chen"};
  auto found = NamedIn(
      "Ask ALICE   chen about acme/billing-v2 and [[Event\nSourcing]]; "
      "let's go, in C++ or Go. Albert is not Al.",
      names);
  // Alice Chen (longer) before Alice at the same place; Chen inside it
  // counts; acme/billing ends at '-'; "go" is not Go, "Go" is; x is too short.
  CHECK(found == std::vector<size_t>{0, 1, 9, 3, 7, 5, 4, 6});
  CHECK(NamedIn("bob and Bobby", {"Bob"}).empty());  // short: needs its own case
  CHECK(NamedIn("Bobby", {"Bob"}).empty());
  CHECK(NamedIn("ask Bob", {"Bob"}) == std::vector<size_t>{0});
  CHECK(NamedIn("", names).empty());
}

TEST_CASE("WorldModel::Context: the pages of the entities named, and MEMORY.md for the query",
          "[world][context]") {
  Dir dir;
  auto w = WorldModel::Open(dir / "memory", {}, nullptr);
  REQUIRE(w.ok());
  ExtractInput in;
  in.date = "2026-11-02";
  in.source = "test";
  in.text = "- Alice Chen joined Acme Corp as CTO.\n- Deployed acme/billing using Terraform.\n";
  REQUIRE((*w)->Extract(in).ok());
  std::ofstream(dir / "memory/MEMORY.md") << kMemoryMd;
  auto ctx = (*w)->Context("billing for alice chen", "thread: ask Acme Corp about terraform");
  REQUIRE(ctx.ok());
  std::vector<std::string> pages;
  for (const json& p : (*ctx)["entities"]) pages.push_back(p["title"]);
  CHECK(pages == std::vector<std::string>{"Alice Chen", "Acme Corp", "Terraform"});
  auto alice = (*ctx)["entities"][0].get<ContextText>();
  CHECK(alice.source == "entity:Alice Chen.md");
  CHECK(alice.lines[0] == "# Alice Chen");
  REQUIRE((*ctx)["memory_md"].size() == 2);
  CHECK((*ctx)["memory_md"][0]["source"] == "MEMORY.md#People");
  // Nothing named, no MEMORY.md: empty lists, not an error.
  Dir empty;
  auto w2 = WorldModel::Open(empty / "memory", {}, nullptr);
  REQUIRE(w2.ok());
  auto none = (*w2)->Context("anything", "");
  REQUIRE(none.ok());
  CHECK((*none)["entities"].empty());
  CHECK((*none)["memory_md"].empty());
}

}  // namespace context_test
