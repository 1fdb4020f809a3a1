// The extraction scorer (world/extract_eval.h) on small samples, and the
// heuristic extractor's quality bar on the labelled sample
// (tests/world/data/extract_sample.jsonl; docs/world.md, "Measuring
// extraction").
#include "world/extract_eval.h"

#include <catch2/catch.hpp>
#include <cstdio>

#include "base/env.h"

// This file's own namespace: test programs compile in unity batches.
namespace extract_eval_test {

using namespace limbic::world;
using limbic::Result;

namespace {

// Answers every input with the same extraction, and remembers the inputs.
class FixedExtractor final : public Extractor {
 public:
  explicit FixedExtractor(Extraction x) : x_(std::move(x)) {}
  std::string_view kind() const override { return "fixed"; }
  Result<Extraction> Extract(const ExtractInput& input) override {
    inputs.push_back(input);
    return x_;
  }
  std::vector<ExtractInput> inputs;

 private:
  Extraction x_;
};

Evaluation EvaluateFile(const std::string& name) {
  auto text = limbic::Env::Default()->ReadFileToString(std::string(LIMBIC_WORLD_TEST_DATA "/") + name);
  REQUIRE(text.ok());
  auto sample = ParseSample(*text, name);
  REQUIRE(sample.ok());
  auto extractor = MakeHeuristicExtractor();
  auto ev = Evaluate(*extractor, *sample);
  REQUIRE(ev.ok());
  return std::move(ev).value();
}

void Print(const std::string& name, const Evaluation& ev) {
  std::printf("%s (%zu lines, %zu days):\n", name.c_str(), ev.lines, ev.days);
  for (const auto& [what, s] :
       {std::pair{"entities", ev.entities}, {"names", ev.names}, {"triplets", ev.triplets}})
    std::printf(
        "  %-8s  precision %.2f  recall %.2f  F1 %.2f  (%zu right, %zu found, %zu labelled)\n",
        what, s.precision(), s.recall(), s.f1(), s.right, s.found, s.labelled);
  for (const std::string& m : ev.missed) std::printf("  missed %s\n", m.c_str());
  for (const std::string& m : ev.extra) std::printf("  extra  %s\n", m.c_str());
}

}  // namespace

TEST_CASE("a sample's lines of one date are one daily log", "[world][extract][eval]") {
  auto sample = ParseSample(
      "# a comment\n"
      "\n"
      R"({"date": "2026-03-02", "text": "- Met @dana.", "entities": [["dana", "person"]], "triplets": []})"
      "\n"
      R"({"date": "2026-03-03", "text": "- Quiet."})"
      "\n"
      R"({"date": "2026-03-02", "text": "- Dana joined Acme.", "entities": [["Dana", "person"], ["Acme", "company"]], "triplets": [["Dana", "joined", "Acme"]]})"
      "\n",
      "s.jsonl");
  REQUIRE(sample.ok());
  CHECK(sample->lines == 3);
  REQUIRE(sample->days.size() == 2);
  CHECK(sample->days[0].date == "2026-03-02");
  CHECK(sample->days[0].text == "- Met @dana.\n- Dana joined Acme.");
  CHECK(sample->days[0].lines == 2);
  CHECK(sample->days[0].entities.size() == 2);  // "dana" and "Dana" are one name
  CHECK(sample->days[0].triplets.size() == 1);
  CHECK(sample->days[1].entities.empty());
}

TEST_CASE("a malformed sample is refused naming the line", "[world][extract][eval]") {
  auto error = [](const std::string& text) {
    auto s = ParseSample(text, "s.jsonl");
    REQUIRE_FALSE(s.ok());
    return s.status().message();
  };
  CHECK_THAT(error("{\"date\": \"2026-03-02\"\n"), Catch::Contains("s.jsonl:1: not a JSON object"));
  CHECK_THAT(error("\n{\"date\": \"2026-02-30\", \"text\": \"x\"}\n"),
             Catch::Contains("s.jsonl:2: date"));
  CHECK_THAT(error(R"({"date": "2026-03-02", "text": "x", "entites": []})"),
             Catch::Contains("unknown member \"entites\""));
  CHECK_THAT(error(R"({"date": "2026-03-02", "text": "x", "entities": [["Bob", "city"]]})"),
             Catch::Contains("entities[0]: entity type must be one of"));
  CHECK_THAT(error(R"({"date": "2026-03-02", "text": "x", "triplets": [["a", "b"]]})"),
             Catch::Contains("triplets[0]: must be an array of 3 strings"));
  CHECK_THAT(
      error(R"({"date": "2026-03-02", "text": "x", "entities": [["Bob", "person"]]})"
            "\n"
            R"({"date": "2026-03-02", "text": "y", "entities": [["bob", "tool"]]})"),
      Catch::Contains("s.jsonl:2: entities[0]: \"bob\" is a tool here and a person on line 1"));
  CHECK_THAT(error("# only comments\n"), Catch::Contains("no labelled lines"));
}

TEST_CASE("precision and recall count names without case and types exactly",
          "[world][extract][eval]") {
  auto sample = ParseSample(
      R"({"date": "2026-03-02", "text": "t", "entities": [["Dana", "person"], ["Acme Corp", "company"], ["Orion", "project"]], "triplets": [["Dana", "works_at", "Acme Corp"], ["Dana", "leads", "Orion"]]})",
      "s");
  REQUIRE(sample.ok());
  Extraction x;
  x.extractor = "fixed";
  x.entities = {{"dana", EntityType::kPerson, {}},
                {"ACME  corp", EntityType::kCompany, {}},
                {"Orion", EntityType::kConcept, {}},  // right name, wrong type
                {"CTO", EntityType::kConcept, {}}};
  x.triplets = {{"dana", "works_at", "acme corp", "2026-01-01"},
                {"Dana", "met", "CTO", "2026-03-02"}};
  FixedExtractor fixed(x);
  auto ev = Evaluate(fixed, *sample);
  REQUIRE(ev.ok());
  REQUIRE(fixed.inputs.size() == 1);
  CHECK(fixed.inputs[0].date == "2026-03-02");
  CHECK(ev->extractor == "fixed");
  CHECK(ev->entities.right == 2);
  CHECK(ev->entities.found == 4);
  CHECK(ev->entities.labelled == 3);
  CHECK(ev->entities.precision() == Approx(0.5));
  CHECK(ev->entities.recall() == Approx(2.0 / 3));
  CHECK(ev->entities.f1() == Approx(2 * 0.5 * (2.0 / 3) / (0.5 + 2.0 / 3)));
  CHECK(ev->names.right == 3);
  CHECK(ev->triplets.right == 1);  // the date is not compared
  CHECK(ev->triplets.f1() == Approx(0.5));
  CHECK(ev->missed == std::vector<std::string>{"2026-03-02 entity Orion (project)",
                                               "2026-03-02 triplet Dana -leads-> Orion"});
  CHECK(ev->extra == std::vector<std::string>{"2026-03-02 entity CTO (concept)",
                                              "2026-03-02 entity Orion (concept)",
                                              "2026-03-02 triplet Dana -met-> CTO"});
  const auto j = EvaluationToJson(*ev);
  CHECK(j["entities"]["right"] == 2);
  CHECK(j["triplets"]["f1"].get<double>() == Approx(0.5));

  // Nothing found: precision 1 by definition, recall 0, F1 0.
  FixedExtractor none(Extraction{});
  auto empty = Evaluate(none, *sample);
  REQUIRE(empty.ok());
  CHECK(empty->entities.precision() == 1.0);
  CHECK(empty->entities.recall() == 0.0);
  CHECK(empty->entities.f1() == 0.0);
}

// A quality bar, not a timing: the targets of issue 24 on the labelled
// sample. The held-out sample is printed, not held to a bar: it was kept
// out of the tuning, and a bar on it would make it one more sample to tune
// to.
TEST_CASE("the heuristic extractor meets its quality bar on the labelled sample",
          "[world][extract][eval]") {
  const Evaluation ev = EvaluateFile("extract_sample.jsonl");
  Print("extract_sample.jsonl", ev);
  CHECK(ev.extractor == "heuristic");
  CHECK(ev.lines == 56);
  CHECK(ev.entities.f1() >= 0.8);
  CHECK(ev.triplets.f1() >= 0.6);
  Print("extract_holdout.jsonl", EvaluateFile("extract_holdout.jsonl"));
}

}  // namespace extract_eval_test
