// The context bundle through the real binary: a state dir whose world
// model was made by `limbic memory extract` and `consolidate`, read by
// `limbic memory context` and GET /v1/context, with the entity pages
// named in the query or the focused thread, MEMORY.md's sections and the
// recalled memories, each with its source, within the budget.
#include <catch2/catch.hpp>
#include <fstream>
#include <thread>

#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace context_test {

using nlohmann::json;
using namespace limbic::testing;

namespace {

RunResult Mem(const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"--state", dir / "state", "memory"});
  RunResult r = Limbic(args);
  INFO("limbic memory " << args[3] << " ... stdout: " << r.out << " stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return r;
}

json MemJ(const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), "--json");
  return json::parse(Mem(dir, std::move(args)).out);
}

std::vector<std::string> Sources(const json& items) {
  std::vector<std::string> out;
  for (const json& i : items) out.push_back(i["source"]);
  return out;
}

bool Has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// A state dir with entity pages and MEMORY.md from a daily log, and a
// fact and an episode in memory.
void MakeWorld(const TempDir& dir) {
  std::ofstream(dir / "2026-11-02.md") << "# 2026-11-02\n"
                                          "- Alice Chen joined Acme Corp as CTO.\n"
                                          "- Deployed acme/billing using Terraform after review.\n";
  json x = MemJ(dir, {"extract", dir / "2026-11-02.md"});
  REQUIRE(x["pages_created"].get<int>() >= 3);
  json c = MemJ(dir, {"consolidate"});
  REQUIRE(c["added"].get<int>() >= 1);
  MemJ(dir, {"remember", "Alice Chen", "prefers", "written billing reviews"});
  MemJ(dir, {"remember-episode", "The billing review with Alice Chen moved to Thursday."});
}

}  // namespace

TEST_CASE("memory context brings the pages named, MEMORY.md and memories, with their sources",
          "[context]") {
  TempDir dir;
  MakeWorld(dir);
  json out = MemJ(dir, {"context", "--query", "billing review with Alice Chen"});
  CHECK(out["truncated"] == false);
  auto pages = Sources(out["entities"]);
  CHECK(Has(pages, "entity:Alice Chen.md"));
  CHECK_FALSE(Has(pages, "entity:Terraform.md"));  // not named
  REQUIRE(!out["entities"].empty());
  CHECK_THAT(out["entities"][0]["text"].get<std::string>(),
             Catch::StartsWith("# Alice Chen\n**Type:** person"));
  auto sections = Sources(out["memory_md"]);
  CHECK(Has(sections, "MEMORY.md#People"));
  CHECK_THAT(out["memory_md"][0]["text"].get<std::string>(),
             Catch::Contains("Alice Chen joined Acme Corp as CTO."));
  auto memories = Sources(out["memories"]);
  REQUIRE(memories.size() == 2);
  for (const std::string& s : memories) CHECK_THAT(s, Catch::StartsWith("memory:m-"));
  CHECK(out["used_tokens"].get<int>() <= 2000);

  // The text output names every item's source.
  RunResult text = Mem(dir, {"context", "--query", "billing review with Alice Chen"});
  CHECK_THAT(text.out, Catch::Contains("[entity:Alice Chen.md]"));
  CHECK_THAT(text.out, Catch::Contains("[MEMORY.md#People]"));
  CHECK_THAT(text.out, Catch::Contains("[memory:m-"));

  // A tight budget: cut or left out, never over.
  json tight =
      MemJ(dir, {"context", "--query", "billing review with Alice Chen", "--budget-tokens", "120"});
  CHECK(tight["truncated"] == true);
  CHECK(tight["used_tokens"].get<int>() <= 120);
}

TEST_CASE("GET /v1/context names the pages of the query's and the focused thread's entities",
          "[context]") {
  TempDir dir;
  MakeWorld(dir);
  json config = BaseConfig(dir);
  config["world"] = {{"daily", false}};
  RunningLimbic l(dir, config);
  const uint16_t port = l.port();
  auto got = Http(port, "GET", "/v1/context?query=billing%20review%20with%20Alice%20Chen");
  REQUIRE(got.status == 200);
  json c = got.Json();
  CHECK(Has(Sources(c["entities"]), "entity:Alice Chen.md"));
  CHECK(Has(Sources(c["memory_md"]), "MEMORY.md#People"));
  CHECK(c["memories"].size() == 2);
  // The same bundle as the command line's, but for the clock.
  json cli = MemJ(dir, {"context", "--query", "billing review with Alice Chen"});
  CHECK(c["entities"] == cli["entities"]);
  CHECK(c["memory_md"] == cli["memory_md"]);

  // No query: the focused thread's goal and percepts name the entities.
  REQUIRE(HttpJson(port, "POST", "/v1/threads",
                   {{"goal", "follow up with Acme Corp"}, {"salience", 0.9}})
              .status == 201);
  json focus = Http(port, "GET", "/v1/context").Json();
  CHECK(focus["query"] == "follow up with Acme Corp");
  CHECK(Sources(focus["entities"]) == std::vector<std::string>{"entity:Acme Corp.md"});
  auto tight = Http(port, "GET", "/v1/context?budget_tokens=60").Json();
  CHECK(tight["used_tokens"].get<int>() <= 60);
  CHECK(tight["truncated"] == true);
}

TEST_CASE("GET /v1/context does not wait for a busy world model: it answers without its texts",
          "[runtime][memory][world]") {
  TempDir dir;
  // An llm extractor whose server takes 3 s per answer keeps the world
  // model's worker busy for a while.
  ScriptedServer::Options slow;
  slow.delay_ms = 3000;
  ScriptedServer llm({200}, slow);
  json config = BaseConfig(dir);
  config["world"] = {
      {"daily", false},
      {"extractor", "llm"},
      {"llm", {{"url", "http://127.0.0.1:" + std::to_string(llm.port())}, {"model", "m"}}}};
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  std::thread extract([&] {
    HttpJson(l.port(), "POST", "/v1/world/extract",
             {{"text", "- Met @dana about Orion."}, {"date", "2026-11-20"}});
  });
  REQUIRE(llm.WaitFor(1, 10000));  // the worker is in the extraction now
  // The note comes only from the deadline: it did not wait for the LLM.
  json busy = Http(l.port(), "GET", "/v1/context?query=Orion").Json();
  CHECK_THAT(busy.value("note", ""), Catch::Contains("world model is busy"));
  CHECK(busy["entities"].empty());
  extract.join();
  json idle = Http(l.port(), "GET", "/v1/context?query=Orion").Json();
  CHECK_FALSE(idle.contains("note"));
}

}  // namespace context_test
