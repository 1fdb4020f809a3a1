#include "world/graph.h"

#include <catch2/catch.hpp>
#include <algorithm>
#include <fstream>

#include "base/fault_env.h"
#include "state/test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace graph_test {

using namespace limbic::world;
using limbic::testing::ScratchDir;
using limbic::testing::RunInProcesses;
using limbic::testing::Slurp;

namespace {

std::unique_ptr<GraphStore> OpenGraph(const std::string& path, limbic::Env* env = limbic::Env::Default()) {
  auto g = GraphStore::Open(path, env);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return std::move(*g);
}

void AppendRaw(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << text;
}

size_t MustAdd(GraphStore& g, const std::vector<Triplet>& triplets) {
  auto n = g.Add(triplets);
  INFO(n.status().ToString());
  REQUIRE(n.ok());
  return *n;
}

Triplet T(std::string s, std::string p, std::string o, std::string date = "2026-01-01") {
  return {std::move(s), std::move(p), std::move(o), std::move(date)};
}

}  // namespace

TEST_CASE("a missing graph file is an empty graph", "[world][graph]") {
  ScratchDir tmp;
  auto g = OpenGraph(tmp / "graph.jsonl");
  CHECK(g->size() == 0);
  CHECK(g->bad_lines() == 0);
  CHECK_FALSE(g->HasEntity("Alice"));
  CHECK(MustAdd(*g, {}) == 0);
  CHECK_FALSE(std::ifstream(tmp / "graph.jsonl").good());  // nothing to add: nothing created
  CHECK(g->Neighbors("Alice", 1).status().IsNotFound());
}

TEST_CASE("the graph dedups by name key and only appends", "[world][graph]") {
  ScratchDir tmp;
  const std::string path = tmp / "graph.jsonl";
  auto g = OpenGraph(path);
  CHECK(MustAdd(*g, {T("Alice", "works at", "Acme"), T("alice", "works at", "ACME", "2026-01-02"),
                     T("Bob", "knows", "Alice")}) == 2);
  const std::string first = Slurp(path);
  CHECK(first ==
        "{\"subject\":\"Alice\",\"predicate\":\"works "
        "at\",\"object\":\"Acme\",\"date\":\"2026-01-01\"}\n"
        "{\"subject\":\"Bob\",\"predicate\":\"knows\",\"object\":\"Alice\",\"date\":\"2026-01-01\"}"
        "\n");
  CHECK(MustAdd(*g, {T(" **ALICE** ", "works at", "[[acme]]", "2026-05-05")}) == 0);
  CHECK(MustAdd(*g, {T("Alice", "founded", "Acme", "2026-05-05")}) == 1);  // another predicate
  const std::string now = Slurp(path);
  CHECK(now.starts_with(first));
  CHECK(g->size() == 3);
  CHECK(g->HasEdge("ALICE", "works at", "acme"));
  CHECK_FALSE(g->HasEdge("Acme", "works at", "Alice"));  // edges keep their direction
  CHECK(g->HasEntity("bob"));

  auto reopened = OpenGraph(path);
  CHECK(reopened->size() == 3);
  CHECK(reopened->bad_lines() == 0);
}

TEST_CASE("a store reads what another store appended before it adds", "[world][graph]") {
  ScratchDir tmp;
  const std::string path = tmp / "graph.jsonl";
  auto a = OpenGraph(path);
  auto b = OpenGraph(path);
  CHECK(MustAdd(*a, {T("A", "p", "B")}) == 1);
  CHECK_FALSE(b->HasEdge("A", "p", "B"));  // b has not looked yet
  CHECK(MustAdd(*b, {T("A", "p", "B"), T("B", "p", "C")}) == 1);
  CHECK(b->HasEdge("A", "p", "B"));
  CHECK(MustAdd(*a, {T("B", "p", "C"), T("C", "p", "D")}) == 1);
  CHECK(a->size() == 3);
  std::string text = Slurp(path);
  CHECK(std::count(text.begin(), text.end(), '\n') == 3);

  // A file replaced under the store (a rebuild) is read again from its start.
  std::remove(path.c_str());
  CHECK(MustAdd(*a, {T("X", "p", "Y")}) == 1);
  CHECK(a->size() == 1);
  CHECK_FALSE(a->HasEntity("A"));
}

TEST_CASE("neighbors are found breadth first up to the hops asked", "[world][graph]") {
  ScratchDir tmp;
  auto g = OpenGraph(tmp / "graph.jsonl");
  // A - B - C - D - E - F - G, and A - C directly; H alone with I.
  MustAdd(*g, {T("A", "knows", "B"), T("C", "knows", "B"), T("C", "knows", "D"),
               T("D", "knows", "E"), T("E", "knows", "F"), T("F", "knows", "G"),
               T("A", "mentors", "C"), T("H", "knows", "I"), T("A", "likes", "A")});
  auto one = g->Neighbors("a", 1);
  REQUIRE(one.ok());
  CHECK((*one)["entity"] == "A");
  CHECK((*one)["hops"] == 1);
  REQUIRE((*one)["neighbors"].size() == 2);
  CHECK((*one)["neighbors"][0]["entity"] == "B");
  CHECK((*one)["neighbors"][0]["hops"] == 1);
  CHECK((*one)["neighbors"][1]["entity"] == "C");
  CHECK((*one)["neighbors"][1]["edge"] ==
        nlohmann::json(
            {{"subject", "A"}, {"predicate", "mentors"}, {"object", "C"}, {"date", "2026-01-01"}}));

  auto two = g->Neighbors("A", 2);
  REQUIRE(two.ok());
  REQUIRE((*two)["neighbors"].size() == 3);  // C once, at 1 hop
  CHECK((*two)["neighbors"][2]["entity"] == "D");
  CHECK((*two)["neighbors"][2]["hops"] == 2);
  CHECK((*two)["neighbors"][2]["edge"]["subject"] == "C");  // as written, not as walked

  auto five = g->Neighbors("A", 5);
  REQUIRE(five.ok());
  REQUIRE((*five)["neighbors"].size() == 6);
  CHECK((*five)["neighbors"][5]["entity"] == "G");
  CHECK((*five)["neighbors"][5]["hops"] == 5);

  CHECK(g->Neighbors("A", 0).status().IsInvalidArgument());
  CHECK(g->Neighbors("A", 6).status().IsInvalidArgument());
  CHECK(g->Neighbors("Nobody", 1).status().IsNotFound());
}

TEST_CASE("path is a shortest path and NotFound when there is none", "[world][graph]") {
  ScratchDir tmp;
  auto g = OpenGraph(tmp / "graph.jsonl");
  MustAdd(*g, {T("A", "knows", "B"), T("B", "knows", "C"), T("C", "knows", "D"),
               T("D", "knows", "E"), T("E", "knows", "A"), T("X", "knows", "Y")});
  auto p = g->Path("a", "d");
  REQUIRE(p.ok());
  CHECK((*p)["from"] == "A");
  CHECK((*p)["to"] == "D");
  CHECK((*p)["hops"] == 2);  // A - E - D, against the direction of the edges
  REQUIRE((*p)["path"].size() == 2);
  CHECK((*p)["path"][0]["subject"] == "E");
  CHECK((*p)["path"][0]["object"] == "A");
  CHECK((*p)["path"][1]["subject"] == "D");

  auto self = g->Path("B", "b");
  REQUIRE(self.ok());
  CHECK((*self)["hops"] == 0);
  CHECK((*self)["path"].empty());

  auto apart = g->Path("A", "X");
  CHECK(apart.status().IsNotFound());
  CHECK_THAT(apart.status().message(), Catch::Contains("\"X\""));
  CHECK(g->Path("A", "Nobody").status().IsNotFound());
  CHECK(g->Path("Nobody", "A").status().IsNotFound());
}

TEST_CASE("bad graph lines are skipped and counted and left in the file", "[world][graph]") {
  ScratchDir tmp;
  const std::string path = tmp / "graph.jsonl";
  const std::string hand =
      "{\"subject\":\"A\",\"predicate\":\"p\",\"object\":\"B\",\"date\":\"2026-01-01\"}\n"
      "not json at all\n"
      "\n"
      "[1, 2]\n"
      "{\"subject\":\"A\",\"predicate\":\"p\",\"object\":3,\"date\":\"2026-01-01\"}\n"
      "{\"subject\":\"A\",\"predicate\":\"p\",\"date\":\"2026-01-01\"}\n"
      "{\"subject\":\"A\",\"predicate\":\"q\",\"object\":\"B\",\"date\":\"yesterday\"}\n"
      "{\"subject\":\"\\u00ff\xff\",\"predicate\":\"p\",\"object\":\"B\",\"date\":\"2026-01-01\"}\n"
      "{\"date\":\"2026-01-02\",\"object\":\"C\",\"predicate\":\"p\",\"subject\":\"B\",\"extra\":1}"
      "\r\n";
  AppendRaw(path, hand);
  auto g = OpenGraph(path);
  CHECK(g->size() == 2);
  CHECK(g->bad_lines() == 6);
  CHECK(g->HasEdge("B", "p", "C"));
  CHECK(MustAdd(*g, {T("C", "p", "D")}) == 1);
  CHECK(Slurp(path).starts_with(hand));
  CHECK(g->bad_lines() == 6);
}

TEST_CASE("a torn last line is ended before lines are appended", "[world][graph]") {
  ScratchDir tmp;
  const std::string path = tmp / "graph.jsonl";
  AppendRaw(
      path,
      "{\"subject\":\"A\",\"predicate\":\"p\",\"object\":\"B\",\"date\":\"2026-01-01\"}\n{\"subj");
  auto g = OpenGraph(path);
  CHECK(g->size() == 1);
  CHECK(g->bad_lines() == 0);  // perhaps still being written
  CHECK(MustAdd(*g, {T("B", "p", "C")}) == 1);
  CHECK(g->bad_lines() == 1);
  auto reopened = OpenGraph(path);
  CHECK(reopened->size() == 2);
  CHECK(reopened->bad_lines() == 1);
  CHECK(
      Slurp(path).ends_with("{\"subj\n{\"subject\":\"B\",\"predicate\":\"p\",\"object\":\"C\","
                            "\"date\":\"2026-01-01\"}\n"));
}

TEST_CASE("an invalid triplet is refused and nothing is written", "[world][graph]") {
  ScratchDir tmp;
  const std::string path = tmp / "graph.jsonl";
  auto g = OpenGraph(path);
  MustAdd(*g, {T("A", "p", "B")});
  const std::string before = Slurp(path);
  for (const Triplet& bad : {T("", "p", "B"), T("A", " ", "B"), T("A", "p", "\n"),
                             T("A", "p", "B", "2026-13-01"), T("A", "p", "B", "")}) {
    auto r = g->Add({T("C", "p", "D"), bad});
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().IsInvalidArgument());
    CHECK_THAT(r.status().message(), Catch::Contains("triplet"));
  }
  auto r = g->Add({T("C", "p", "D", "someday")});
  CHECK_THAT(r.status().message(), Catch::Contains("\"someday\""));
  CHECK(Slurp(path) == before);
  CHECK(g->size() == 1);
  CHECK_FALSE(g->HasEntity("C"));
}

TEST_CASE("names that are not UTF-8 are stored as valid JSON", "[world][graph]") {
  ScratchDir tmp;
  const std::string path = tmp / "graph.jsonl";
  auto g = OpenGraph(path);
  CHECK(MustAdd(*g, {T("Caf\xe9", "p", "B")}) == 1);
  CHECK(g->HasEntity("Caf\xEF\xBF\xBD"));
  auto reopened = OpenGraph(path);
  CHECK(reopened->size() == 1);
  CHECK(reopened->bad_lines() == 0);
}

TEST_CASE("processes adding to one graph write each edge once", "[world][graph]") {
  ScratchDir tmp;
  const std::string path = tmp / "graph.jsonl";
  const int kWorkers = 4, kRounds = 20;
  const std::vector<int> codes = RunInProcesses(kWorkers, [&](int w) {
    auto g = GraphStore::Open(path);
    if (!g.ok()) return 2;
    for (int r = 0; r < kRounds; ++r) {
      // Every worker adds the shared edges; each adds its own too.
      std::vector<Triplet> batch = {T("Hub", "links", "Spoke " + std::to_string(r)),
                                    T("W" + std::to_string(w), "did", "R" + std::to_string(r))};
      if (!(*g)->Add(batch).ok()) return 1;
    }
    return 0;
  });
  CHECK(codes == std::vector<int>(kWorkers, 0));
  auto g = OpenGraph(path);
  CHECK(g->size() == static_cast<size_t>(kRounds + kWorkers * kRounds));
  CHECK(g->bad_lines() == 0);
  std::string text = Slurp(path);
  CHECK(std::count(text.begin(), text.end(), '\n') == kRounds + kWorkers * kRounds);
  auto hub = g->Neighbors("hub", 1);
  REQUIRE(hub.ok());
  CHECK((*hub)["neighbors"].size() == static_cast<size_t>(kRounds));
}

TEST_CASE("a torn append through the env is refused, and the next writer ends the torn line",
          "[world][graph][fault]") {
  ScratchDir dir;
  const std::string path = dir / "graph.jsonl";
  limbic::FaultInjectionEnv env(limbic::Env::Default());
  {
    auto g = OpenGraph(path, &env);
    CHECK(MustAdd(*g, {T("Alice", "knows", "Bob")}) == 1);
    const uint64_t size = Slurp(path).size();
    env.FailAppendAfter(10);  // the next append stops 10 bytes in
    auto torn = g->Add({T("Carol", "knows", "Dan")});
    REQUIRE_FALSE(torn.ok());
    CHECK(torn.status().IsIOError());
    CHECK(Slurp(path).size() == size + 10);
  }
  // Another writer (the env is well again for it) ends the torn line as
  // after a crash: the torn bytes are a bad line, kept; nothing is lost.
  auto g = OpenGraph(path);
  CHECK(MustAdd(*g, {T("Carol", "knows", "Dan")}) == 1);
  CHECK(g->bad_lines() == 1);
  CHECK(g->HasEdge("Alice", "knows", "Bob"));
  CHECK(g->HasEdge("Carol", "knows", "Dan"));
  const std::string text = Slurp(path);
  CHECK(text.back() == '\n');
  CHECK(std::count(text.begin(), text.end(), '\n') == 3);
}

TEST_CASE("graph lines are derived data: a crash may lose those not yet on disk",
          "[world][graph][fault]") {
  ScratchDir dir;
  const std::string path = dir / "graph.jsonl";
  limbic::FaultInjectionEnv env(limbic::Env::Default());
  CHECK(MustAdd(*OpenGraph(path, &env), {T("Alice", "knows", "Bob"), T("Bob", "knows", "Carol")}) == 2);
  CHECK(env.sync_calls() == 0);  // never fsynced
  REQUIRE(env.SimulateCrash(5).ok());
  auto g = OpenGraph(path);  // a torn first line: left for the next writer, no edge
  CHECK(g->size() == 0);
  CHECK(MustAdd(*g, {T("Alice", "knows", "Bob")}) == 1);
  CHECK(g->bad_lines() == 1);
}

}  // namespace graph_test
