// ContextBundle (runtime/context.h): what goes in, in which order, within
// which share of the budget, and with which source; FocusText.
#include "runtime/context.h"

#include <catch2/catch.hpp>

#include "state/commands.h"
#include "world/context.h"

// This file's own namespace: test programs compile in unity batches.
namespace context_test {

using namespace limbic;
using namespace limbic::runtime;
using nlohmann::json;

namespace {

json Attention(json thread = nullptr, json percepts = json::array()) {
  return {{"now", "2026-11-05T10:00:00.000Z"},
          {"arousal", {{"level", 0.3}, {"factors", json::object()}, {"effective", 0.3}}},
          {"thread", std::move(thread)},
          {"thread_percepts", std::move(percepts)},
          {"unassigned", json::array()}};
}

// A page of `dates` timeline days, each with one long line.
world::ContextText Page(const std::string& name, int dates) {
  std::string md = "# " + name + "\n**Type:** person\n## Facts\n- is an engineer\n## Timeline\n";
  for (int d = 1; d <= dates; ++d)
    md += "### [[2026-10-" + std::string(d < 10 ? "0" : "") + std::to_string(d) + "]]\n- " +
          std::string(80, 'a' + static_cast<char>(d % 26)) + "\n";
  md += "## Relations\n- this works_at → [[Acme Corp]]\n";
  return world::PageText("entity:" + name + ".md", name, md);
}

json World(std::vector<world::ContextText> pages, std::string memory_md) {
  json w = {{"entities", json::array()}, {"memory_md", json::array()}};
  for (auto& p : pages) w["entities"].push_back(p);
  for (auto& s : world::MemorySections(memory_md, "")) w["memory_md"].push_back(s);
  return w;
}

std::string Section(const std::string& name, int items) {
  std::string md = "## " + name + "\n";
  for (int i = 1; i <= items; ++i)
    md += "- 2026-10-" + std::string(i < 10 ? "0" : "") + std::to_string(i) + ": " +
          std::string(60, 'm') + " " + std::to_string(i) + "\n";
  return md;
}

json Memory(int n) {
  return {{"id", "m-" + std::to_string(n)},
          {"kind", "episode"},
          {"text", "memory number " + std::to_string(n) + " " + std::string(80, 'x')},
          {"score", 1.0 / n},
          {"strength", 1.0}};
}

size_t Tokens(const json& items) {
  size_t t = 0;
  for (const json& i : items) t += state::EstimateTokens(i.dump().size());
  return t;
}

}  // namespace

TEST_CASE("the bundle holds everything with its source when the budget allows",
          "[runtime][context]") {
  ContextInput in;
  in.attention = Attention({{"id", "t-1"}, {"goal", "ask Alice Chen"}});
  in.query = "Alice Chen";
  in.world = World({Page("Alice Chen", 2)}, Section("People", 2) + Section("Events", 1));
  in.memories = {Memory(1), Memory(2)};
  in.memories[1]["source"] = "/docs/guide.md#0";
  in.memories[1]["via"] = "m-1";
  in.budget = 100000;
  json out = ContextBundle(in);
  CHECK(out["truncated"] == false);
  CHECK(out["thread"]["id"] == "t-1");
  REQUIRE(out["entities"].size() == 1);
  CHECK(out["entities"][0]["name"] == "Alice Chen");
  CHECK(out["entities"][0]["source"] == "entity:Alice Chen.md");
  CHECK_FALSE(out["entities"][0].contains("cut"));
  CHECK(out["entities"][0]["text"].get<std::string>().find("### [[2026-10-01]]") !=
        std::string::npos);
  REQUIRE(out["memory_md"].size() == 2);
  CHECK(out["memory_md"][0]["section"] == "People");
  CHECK(out["memory_md"][0]["source"] == "MEMORY.md#People");
  REQUIRE(out["memories"].size() == 2);
  CHECK(out["memories"][0]["source"] == "memory:m-1");
  CHECK(out["memories"][1]["source"] == "/docs/guide.md#0");
  CHECK(out["memories"][1]["via"] == "m-1");
  CHECK_FALSE(out["memories"][0].contains("strength"));  // slim
  const size_t used = out["used_tokens"];
  CHECK(used == state::EstimateTokens(out["arousal"].dump().size()) +
                    state::EstimateTokens(out["thread"].dump().size()) + Tokens(out["entities"]) +
                    Tokens(out["memory_md"]) + Tokens(out["memories"]));
  // No world model (it failed, or is empty): the bundle as before.
  in.world = nullptr;
  json bare = ContextBundle(in);
  CHECK(bare["entities"].empty());
  CHECK(bare["memory_md"].empty());
  CHECK(bare["memories"].size() == 2);
}

TEST_CASE("pages and MEMORY.md take their shares and the memories the rest, then the leftovers",
          "[runtime][context]") {
  ContextInput in;
  in.attention = Attention();
  in.world = World({Page("Alice Chen", 40)}, Section("People", 40));
  for (int i = 1; i <= 200; ++i) in.memories.push_back(Memory(i));
  in.budget = 3000;
  json out = ContextBundle(in);
  const size_t rest = 3000 - state::EstimateTokens(out["arousal"].dump().size());
  CHECK(out["truncated"] == true);
  CHECK(out["used_tokens"].get<size_t>() <= 3000);
  REQUIRE(out["entities"].size() == 1);
  REQUIRE(out["memory_md"].size() == 1);
  CHECK(out["entities"][0]["cut"] == true);
  CHECK(out["memory_md"][0]["cut"] == true);
  // Within their shares, but for what the memories left (less than one).
  CHECK(Tokens(out["entities"]) <= rest * 30 / 100 + 40);
  CHECK(Tokens(out["entities"]) > rest * 30 / 100 - 40);
  CHECK(Tokens(out["memory_md"]) <= rest * 20 / 100 + 40);
  CHECK(Tokens(out["memories"]) >= rest / 2 - 40);
  // A cut page keeps its head, facts and relations, and the newest day.
  const std::string page = out["entities"][0]["text"];
  CHECK(page.starts_with("# Alice Chen\n**Type:** person\n## Facts\n- is an engineer"));
  CHECK(page.ends_with("## Relations\n- this works_at → [[Acme Corp]]"));
  CHECK(page.find("[[2026-10-40]]") != std::string::npos);
  CHECK(page.find("[[2026-10-01]]") == std::string::npos);
  // A cut section keeps its heading and its newest items.
  const std::string section = out["memory_md"][0]["text"];
  CHECK(section.starts_with("## People\n"));
  CHECK(section.ends_with(std::string(60, 'm') + " 40"));

  // Without memories, texts that fit the budget come whole.
  in.memories.clear();
  json whole = ContextBundle(in);
  CHECK(whole["truncated"] == false);
  CHECK_FALSE(whole["entities"][0].contains("cut"));
  CHECK_FALSE(whole["memory_md"][0].contains("cut"));
  // And what the shares left goes to the texts, pages first.
  in.world = World({Page("Alice Chen", 100)}, Section("People", 40));
  json texts = ContextBundle(in);
  CHECK(texts["used_tokens"].get<size_t>() <= 3000);
  CHECK(texts["used_tokens"].get<size_t>() > 3000 - 60);
  CHECK(Tokens(texts["entities"]) > rest * 50 / 100);
  CHECK(texts["memory_md"][0]["cut"] == true);
}

TEST_CASE("a text that cannot keep two lines is left out, and the budget always holds",
          "[runtime][context]") {
  ContextInput in;
  in.attention = Attention({{"id", "t-1"}, {"goal", "g"}});
  in.world = World({Page("Alice Chen", 3)}, Section("People", 3));
  in.memories = {Memory(1)};
  for (size_t budget : {1u, 5u, 20u, 40u, 60u, 80u, 120u, 200u}) {
    in.budget = budget;
    json out = ContextBundle(in);
    INFO("budget " << budget << ": " << out.dump());
    CHECK(out["used_tokens"].get<size_t>() <= budget);
    for (const json& items : {out["entities"], out["memory_md"]})
      for (const json& t : items)
        CHECK(t["text"].get<std::string>().find('\n') != std::string::npos);
  }
}

TEST_CASE("FocusText: the thread's goal, state and its percepts' strings", "[runtime][context]") {
  CHECK(FocusText(Attention()).empty());
  json thread = {
      {"id", "t-1"},
      {"goal", "review acme/billing"},
      {"state",
       {{"phase", "x"}, {"context", {{"who", "Alice Chen"}, {"n", 3}}}, {"next_step", "ask Bob"}}}};
  json percepts = json::array(
      {{{"id", "p-1"}, {"source", "github"}, {"data", {{"title", "Fix [[Event Sourcing]]"}}}}});
  CHECK(FocusText(Attention(thread, percepts)) ==
        "review acme/billing\nAlice Chen\nask Bob\nFix [[Event Sourcing]]\n");
  json big = {{"id", "t-2"}, {"goal", std::string(20000, 'g')}};
  CHECK(FocusText(Attention(big)).size() == 16 << 10);
}

}  // namespace context_test
