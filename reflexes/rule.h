// Reflex rules: what fires on a percept without waking the agent's mind.
//
// A rule is JSON (docs/reflexes.md):
//   {"id", "priority"?, "enabled"?, "cooldown"?, "max_fires"?, "window"?,
//    "when": {"source"?, "type"?, "pattern"?, "min_intensity"?, "data"?, "arousal"?},
//    "then": [step, ...]}
// ParseRule checks everything at load time -- unknown keys, types, the
// regular expression (RE2), template syntax, effector names, and that each
// {{match.NAME}} names a capture group of the rule's own pattern ("0" is the
// whole match) -- and names the rule and the field: `rule "gh":
// when.pattern: invalid regular expression: missing ): (a`. Rules come from config/reflexes.json and from
// the API (PUT /v1/reflexes/{id}), both stored as reflex_put events.
//
// Thread-safety: value types.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/time.h"

namespace re2 {
class RE2;
}

namespace limbic::reflexes {

using nlohmann::json;

struct RuleContext {
  std::set<std::string> effectors;  // names a `send` step may use
};

// A JSON pointer condition on the percept's data.
struct DataCondition {
  std::string pointer;
  enum class Op { kEquals, kExists, kGt, kGte, kLt, kLte } op = Op::kEquals;
  json value;  // for kEquals: any JSON; kExists: bool; the rest: a number
};

struct Step {
  enum class Kind { kSend, kCreateThread, kAssignToThread, kSetArousal, kSetFactor, kEscalate, kDrop, kWakeMind };
  Kind kind;
  json args;  // the step's object, templates unrendered
};

struct Rule {
  std::string id;
  int priority = 0;
  bool enabled = true;
  TimeMs cooldown = 0;
  int max_fires = 0;  // 0 = unlimited
  TimeMs window = 0;
  std::vector<std::string> sources;  // empty = any
  std::vector<std::string> types;    // empty = any
  std::string pattern;               // empty = none
  std::shared_ptr<const re2::RE2> regex;
  double min_intensity = 0;
  std::vector<DataCondition> data;
  double arousal_min = 0, arousal_max = 1;
  std::vector<Step> then;
  json source_json;  // the rule as given (what reflex_put stores)
};

Result<Rule> ParseRule(const json& rule, const RuleContext& ctx);
// {"reflexes": [rule, ...]}; duplicate ids are an error.
Result<std::vector<Rule>> ParseRuleFile(const json& doc, const RuleContext& ctx);

// Renders "{{percept.data.user}} saw {{match.url}}" against a percept record
// and the captures of its match. A string that is exactly one placeholder
// keeps the value's JSON type. A missing path is an error naming it.
Result<json> RenderTemplate(const json& tmpl, const json& percept,
                            const std::map<std::string, std::string>& captures);

}  // namespace limbic::reflexes
