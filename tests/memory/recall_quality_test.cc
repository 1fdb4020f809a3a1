// Recall quality: the labelled-set evaluator (memory/evaluate.h), a
// memory's context in the lexical list (neighbours, episodes), fusion
// against its parts, and re-indexing with another analyzer.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <sstream>

#include "memory/evaluate.h"
#include "memory/store_fixture.h"

// This file's own namespace: test programs compile in unity batches.
namespace recall_quality_test {

using namespace limbic;
using namespace limbic::memory;
using namespace limbic::memory::fixture;

std::string ReadData(const std::string& name) {
  std::ifstream in(std::string(LIMBIC_MEMORY_TEST_DATA "/") + name);
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string ParseError(const std::string& text) {
  auto r = ParseEvalSet(text, "set.jsonl");
  REQUIRE(!r.ok());
  CHECK(r.status().IsInvalidArgument());
  return r.status().message();
}

TEST_CASE("a labelled set with a bad line is refused with the file, line and field",
          "[memory][evaluate]") {
  const std::string m1 = R"({"memory": "a", "text": "apple pie"})" "\n";
  CHECK(ParseError(m1 + R"({"memory": "b", "text": "x", "colour": 1})") ==
        "set.jsonl:2: unknown field \"colour\"");
  CHECK(ParseError(m1 + R"({"memory": "a", "text": "again"})") == "set.jsonl:2: duplicate key \"a\"");
  CHECK(ParseError(m1 + "\n" + R"({"query": "pie?", "relevant": ["zz"]})") ==
        "set.jsonl:3: \"relevant\": no memory has key \"zz\"");
  CHECK(ParseError(m1 + "{not json").rfind("set.jsonl:2: not JSON", 0) == 0);
  CHECK(ParseError(m1 + std::string(100000, '[')).find("nested deeper than") != std::string::npos);
  CHECK(ParseError(m1 + R"({"query": "pie?", "relevant": []})").find("\"relevant\"") !=
        std::string::npos);
  CHECK(ParseError(R"({"memory": "f", "fact": ["a", "b"]})").rfind("set.jsonl:1: \"fact\"", 0) == 0);
  CHECK(ParseError(R"({"memory": "has space", "text": "x"})").rfind("set.jsonl:1: \"memory\"", 0) == 0);
  CHECK(ParseError(R"([1, 2])") == "set.jsonl:1: must be a JSON object");
  CHECK(ParseError(m1) == "set.jsonl: no queries");
  auto ok = ParseEvalSet(ReadData("recall_small.jsonl"), "recall_small.jsonl");
  REQUIRE(ok.ok());
  CHECK(ok->memories.size() == 20);
  CHECK(ok->queries.size() == 12);
  CHECK(ok->memories[18].text == "jon has_dog biscuit");
}

TEST_CASE("the metrics of a ranking that can be checked by hand", "[memory][evaluate]") {
  auto set = ParseEvalSet(R"({"memory": "a", "text": "apple pie recipe"}
{"memory": "b", "text": "banana bread recipe"}
{"memory": "c", "text": "cherry tart"}
{"query": "apple", "relevant": ["a"], "category": "one"}
{"query": "apple banana", "relevant": ["a", "b"], "category": "two"}
{"query": "plum", "relevant": ["c"], "category": "one"}
)",
                          "t");
  REQUIRE(set.ok());
  MemoryOptions o;
  o.fusion.vector = 0;  // words only: the ranking is apple -> a; apple banana -> a, b
  auto r = EvaluateRecall(*set, o);
  REQUIRE(r.ok());
  const json& all = (*r)["systems"]["limbic"]["overall"];
  CHECK(all["n"] == 3);
  // R@1: (1 + 1/2 + 0) / 3; R@5 = R@10: (1 + 1 + 0) / 3; MRR (1 + 1 + 0) / 3;
  // nDCG@10: (1 + 1 + 0) / 3.
  CHECK(all["r1"].get<double>() == Approx(0.5));
  CHECK(all["r5"].get<double>() == Approx(0.6667));
  CHECK(all["r10"].get<double>() == Approx(0.6667));
  CHECK(all["mrr"].get<double>() == Approx(0.6667));
  CHECK(all["ndcg10"].get<double>() == Approx(0.6667));
  CHECK((*r)["systems"]["limbic"]["categories"]["one"]["r10"].get<double>() == Approx(0.5));
  CHECK((*r)["systems"]["bm25"]["overall"]["r10"].get<double>() == Approx(0.6667));
  CHECK((*r)["systems"]["bm25_stemmed"]["overall"]["r10"].get<double>() == Approx(0.6667));
  CHECK((*r)["ratio"]["r10"].get<double>() == Approx(1.0));
  CHECK((*r)["memories"] == 3);
  CHECK((*r)["merged"] == 0);
}

TEST_CASE("fusion is never below the best of its lists on a fixed small set",
          "[memory][evaluate][fusion]") {
  auto set = ParseEvalSet(ReadData("recall_small.jsonl"), "recall_small.jsonl");
  REQUIRE(set.ok());
  auto figures = [&](MemoryOptions o) {
    auto r = EvaluateRecall(*set, o);
    REQUIRE(r.ok());
    return (*r)["systems"]["limbic"]["overall"];
  };
  MemoryOptions lexical_only, vector_only, defaults;
  lexical_only.fusion.vector = 0;
  vector_only.fusion.lexical = 0;
  const json fused = figures(defaults), words = figures(lexical_only), vectors = figures(vector_only);
  for (const char* m : {"r5", "r10"}) {
    INFO(m);
    CHECK(fused[m].get<double>() >= words[m].get<double>());
    CHECK(fused[m].get<double>() >= vectors[m].get<double>());
  }
  MemoryOptions rrf;
  rrf.fusion.method = "rrf";
  const json by_rank = figures(rrf);
  CHECK(by_rank["r10"].get<double>() >= vectors["r10"].get<double>());
}

json Explained(const json& recall, const std::string& id) {
  for (const json& r : recall["results"])
    if (r["id"] == id) return r["explain"];
  return nullptr;
}

// Words only, so that the lists below are exactly the lexical ones.
MemoryOptions Lexical() {
  MemoryOptions o;
  o.fusion.vector = 0;
  return o;
}

TEST_CASE("a memory's neighbours in its episode lend it their score", "[memory][recall][context]") {
  Fixture f(Lexical());
  const std::string q = f.Episode("Maya: what should we call the new puppy?", {{"episode_id", "s1"}})["id"];
  const std::string a = f.Episode("Jon: Biscuit, obviously.", {{"episode_id", "s1"}})["id"];
  f.Episode("Jon: unrelated chatter about the weather", {{"episode_id", "s2"}});
  json r = f.Recall({{"query", "call the puppy"}, {"k", 5u}, {"explain", true}, {"reinforce", false}});
  REQUIRE(f.Ids(r).size() == 2);
  CHECK(f.Ids(r)[0] == q);
  const json e = Explained(r, a);
  REQUIRE(e.is_object());
  CHECK(e["lexical"]["own"].get<double>() == 0);
  CHECK(e["lexical"]["neighbours"].get<double>() == Approx(0.2));  // 0.2 x q's own 1.0
  CHECK(e["bm25"]["score"].get<double>() == 0);  // in the lexical list by its context only
}

TEST_CASE("without an episode id, only memories stored within the window are neighbours",
          "[memory][recall][context]") {
  Fixture f(Lexical());
  const std::string first = f.Episode("the spare key is under the blue flowerpot")["id"];
  f.clock.Advance(kHour);
  const std::string late = f.Episode("remember to water everything")["id"];
  f.clock.Advance(60000);
  const std::string soon = f.Episode("and feed the cat twice a day")["id"];
  json r = f.Recall({{"query", "spare key flowerpot"}, {"k", 5u}, {"reinforce", false}});
  CHECK(f.Ids(r) == std::vector<std::string>{first});  // an hour apart: not neighbours
  r = f.Recall({{"query", "water everything"}, {"k", 5u}, {"reinforce", false}});
  CHECK(f.Ids(r) == std::vector<std::string>{late, soon});  // a minute apart
  MemoryOptions never = Lexical();
  never.context.window = 0;
  f.Reopen(never);
  r = f.Recall({{"query", "water everything"}, {"k", 5u}, {"reinforce", false}});
  CHECK(f.Ids(r) == std::vector<std::string>{late});
}

TEST_CASE("a memory of the episode that matches the query better ranks first",
          "[memory][recall][context]") {
  MemoryOptions o;
  o.context.neighbours = 0;  // the episode's part alone
  o.fusion.vector = 0;
  Fixture f(o);
  f.Episode("the garden plot is ready at last", {{"episode_id", "a"}});
  const std::string a2 = f.Episode("planted tomatoes today", {{"episode_id", "a"}})["id"];
  const std::string b1 = f.Episode("bought tomatoes today", {{"episode_id", "b"}})["id"];
  f.Episode("the market was busy", {{"episode_id", "b"}});
  json r = f.Recall({{"query", "garden tomatoes"}, {"k", 5u}, {"explain", true}, {"reinforce", false}});
  const auto ids = f.Ids(r);
  auto at = [&](const std::string& id) { return std::find(ids.begin(), ids.end(), id) - ids.begin(); };
  CHECK(at(a2) < at(b1));
  CHECK(Explained(r, a2)["lexical"]["own"] == Explained(r, b1)["lexical"]["own"]);
  CHECK(Explained(r, a2)["lexical"]["episode"].get<double>() == Approx(0.5));  // the best episode
  CHECK(Explained(r, b1)["lexical"]["episode"].get<double>() < 0.5);
}

TEST_CASE("forgetting a memory makes its neighbours each other's", "[memory][recall][context]") {
  Fixture f(Lexical());
  const std::string x1 = f.Episode("alpha station report", {{"episode_id", "e"}})["id"];
  const std::string x2 = f.Episode("nothing to see", {{"episode_id", "e"}})["id"];
  const std::string x3 = f.Episode("final words", {{"episode_id", "e"}})["id"];
  auto ids = [&] { return f.Ids(f.Recall({{"query", "alpha station"}, {"k", 5u}, {"reinforce", false}})); };
  CHECK(ids() == std::vector<std::string>{x1, x2});
  f.Commit(f.store->Forget({{"id", x2}}, f.clock.Now()));
  CHECK(ids() == std::vector<std::string>{x1, x3});
}

TEST_CASE("after compaction the lexical list is what a fresh index gives",
          "[memory][recall][context]") {
  auto english = archive::Analyzer::Make("english");
  REQUIRE(english.ok());
  RecallIndex churned("none", {}, {}, *english), fresh("none", {}, {}, *english);
  const char* words[] = {"river", "garden", "puppy", "train", "lisbon", "physio", "brakes", "cake"};
  auto record = [&](int i) {
    std::string text = std::string(words[i % 8]) + " " + words[(i * 7 + 3) % 8] + " note " +
                       std::to_string(i % 13);
    return json{{"id", "m-" + std::to_string(i + 1)},
                {"kind", "episode"},
                {"text", text},
                {"namespace", "default"},
                {"episode_id", "e" + std::to_string(i / 10)},
                {"created_at", FormatTime(kT0 + i * 1000)}};
  };
  for (int i = 0; i < 2500; ++i) churned.Put(record(i));
  for (int i = 0; i < 2500; ++i)
    if (i % 5 != 0) churned.Remove("m-" + std::to_string(i + 1));  // 2000 dead > 1024: compacts
  for (int i = 0; i < 2500; i += 5) fresh.Put(record(i));
  REQUIRE(churned.size() == fresh.size());
  for (const char* q : {"river garden", "puppy note 4", "lisbon cake", "brakes"}) {
    INFO(q);
    auto a = churned.Lexical(q, 20, {}), b = fresh.Lexical(q, 20, {});
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].id == b[i].id);
      CHECK(a[i].score == Approx(b[i].score));
    }
  }
}

TEST_CASE("a state dir is indexed by the analyzer it is opened with, and the digest does not change",
          "[memory][recall][analyzer]") {
  MemoryOptions none = Lexical();
  none.analyzer = "none";
  Fixture f(none);
  const std::string id = f.Episode("the runners were running late")["id"];
  auto found = [&] { return f.Ids(f.Recall({{"query", "runs"}, {"reinforce", false}})); };
  CHECK(found().empty());
  auto digest = f.engine->projection().Digest();
  REQUIRE(digest.ok());
  f.Reopen(Lexical());  // english: rebuilt with stems on open
  CHECK(found() == std::vector<std::string>{id});
  auto after = f.engine->projection().Digest();
  REQUIRE(after.ok());
  CHECK(*after == *digest);
  MemoryOptions bad;
  bad.analyzer = "klingon";
  f.store.reset();
  auto s = MemoryStore::Open(*f.engine, bad, nullptr);
  REQUIRE(!s.ok());
  CHECK(s.status().message().find("memory.analyzer") != std::string::npos);
}

}  // namespace recall_quality_test
