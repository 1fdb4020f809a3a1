// Fuzz target `rules`: reflex rules (reflexes/rule.h), as a rules file, a
// `PUT /v1/reflexes/{id}` body or a replayed reflex_put give them, and the
// compiled matcher and planner (reflexes/engine.h) running them.
//
// Input: a rules document {"reflexes": [rule, ...]}, optionally followed by
// a line "#percept" and a percept record (JSON) to match them against;
// without one, a few fixed percepts are used.
//
// Properties: no crash; a refusal is InvalidArgument with a message; a
// rule that parsed parses again from what reflex_put stores (its
// source_json, which replay re-parses) to the same rule; a firing's
// planned events pass the event schema (ValidateEventFields), since the
// engine would refuse them.
#include <cstdint>

#include "fuzz/fuzz_util.h"
#include "reflexes/engine.h"
#include "reflexes/rule.h"
#include "base/json.h"
#include "state/reducer.h"

using namespace limbic;
using nlohmann::json;

namespace {

json Percept(std::string text, json data) {
  return {{"id", "p-1"},        {"source", "github"},  {"type", "issues.opened"},
          {"text", std::move(text)}, {"intensity", 0.7}, {"thread_id", nullptr},
          {"status", "new"},    {"ts", 1795356309000}, {"data", std::move(data)}};
}

const std::vector<json>& FixedPercepts() {
  static const std::vector<json> percepts = {
      Percept("urgent: crash on start, see https://example.com/i/7",
              {{"user", "ana"}, {"issue", {{"number", 7}, {"labels", {"bug", "p1"}}}}}),
      Percept("", json::object()),
      Percept("caf\xc3\xa9 \xf0\x9f\x98\x80 {{percept.text}}", {{"n", -1.5}, {"s", nullptr}}),
  };
  return percepts;
}

void CheckRefusal(const Status& s, const std::string& what) {
  FUZZ_CHECK(s.IsInvalidArgument() || s.IsNotFound(), what + ": unexpected code: " + s.ToString());
  FUZZ_CHECK(!s.message().empty(), what + ": an error without a message");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<json> percepts = FixedPercepts();
  if (size_t cut = input.find("\n#percept\n"); cut != std::string_view::npos) {
    std::optional<json> p = ParseJson(input.substr(cut + 10));
    if (p && p->is_object()) percepts = {std::move(*p)};
    input = input.substr(0, cut);
  }
  std::optional<json> doc = ParseJson(input);
  if (!doc) return 0;

  const reflexes::RuleContext ctx{{"log", "hook"}};
  auto rules = reflexes::ParseRuleFile(*doc, ctx);
  if (!rules.ok()) {
    CheckRefusal(rules.status(), "ParseRuleFile");
    return 0;
  }
  reflexes::ReflexEngine engine;
  for (reflexes::Rule& rule : *rules) {
    // What a reflex_put event stores, re-parsed as replay does.
    auto again = reflexes::ParseRule(rule.source_json, ctx);
    FUZZ_CHECK(again.ok(), "rule " + rule.id + " does not parse from its own source_json: " +
                               again.status().ToString());
    FUZZ_CHECK(again->source_json == rule.source_json, "rule " + rule.id + ": source_json changed");
    Status put = engine.Put(std::move(rule));
    if (!put.ok()) CheckRefusal(put, "Put");
  }
  state::Overlay empty(nullptr);
  for (const json& percept : percepts) {
    for (double arousal : {0.0, 0.5, 1.0}) {
      for (const reflexes::Match& m : engine.MatchPercept(percept, arousal, 1795356309000)) {
        auto plan = engine.Plan(m, percept, empty, 100);
        if (!plan.ok()) {
          CheckRefusal(plan.status(), "Plan " + m.rule->id);
          continue;
        }
        for (const state::Event& ev : *plan) {
          Status valid = state::ValidateEventFields(ev.type, ev.fields);
          FUZZ_CHECK(valid.ok(), "rule " + m.rule->id + " plans an invalid " +
                                     std::string(state::EventTypeName(ev.type)) + ": " +
                                     valid.ToString());
        }
      }
    }
  }
  return 0;
}
