#include "reflexes/rule.h"

#include <re2/re2.h>

#include <climits>
#include <map>

#include "base/input_json.h"
#include "base/template.h"
#include "state/event.h"
#include "state/memory_schema.h"

namespace limbic::reflexes {
namespace {

// Validates one rule, remembering the first error with its field path.
class Checker {
 public:
  explicit Checker(std::string id) : id_(std::move(id)) {}

  void Fail(const std::string& path, const std::string& why) {
    if (status_.ok()) status_ = Status::InvalidArgument("rule \"" + id_ + "\": " + path + ": " + why);
  }
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  void Keys(const json& obj, const std::string& path, std::initializer_list<const char*> known) {
    if (!obj.is_object()) return Fail(path.empty() ? "rule" : path, "must be an object");
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool found = false;
      for (const char* k : known) found = found || it.key() == k;
      if (!found) Fail(path.empty() ? it.key() : path + "." + it.key(), "unknown key");
    }
  }

  std::vector<std::string> Names(const json* v, const std::string& path) {
    std::vector<std::string> out;
    if (!v) return out;
    if (v->is_string()) out.push_back(v->get<std::string>());
    else if (v->is_array()) {
      for (const json& e : *v) {
        if (!e.is_string()) {
          Fail(path, "must be a string or a list of strings");
          return {};
        }
        out.push_back(e.get<std::string>());
      }
    } else {
      Fail(path, "must be a string or a list of strings");
    }
    return out;
  }

  // Checks the placeholders in every string of `v` (templates).
  void Templates(const json& v, const std::string& path) {
    Status s = limbic::CheckTemplate(v, path,
                                     [this](std::string_view p) { return PlaceholderProblem(p); });
    if (!s.ok() && status_.ok())
      status_ = Status::InvalidArgument("rule \"" + id_ + "\": " + s.message());
  }

  // What {{match.NAME}} may name: the pattern's named groups, and "0".
  void SetCaptures(const std::map<std::string, int>& named) {
    for (const auto& [name, index] : named) captures_.insert(name);
    captures_.insert("0");
  }

 private:
  // Why a template may not use {{name}}; "" when it may.
  std::string PlaceholderProblem(std::string_view p) const {
    static const char* kPercept[] = {"percept.id",   "percept.source",    "percept.type",
                                     "percept.text", "percept.intensity", "percept.thread_id",
                                     "percept.ts"};
    std::string name(p);
    bool match = name.rfind("match.", 0) == 0 && name.size() > 6;
    bool ok = name.rfind("percept.data.", 0) == 0 || name == "percept.data" || match;
    for (const char* k : kPercept) ok = ok || name == k;
    if (!ok) return "unknown placeholder {{" + name + "}} (use percept.* or match.*)";
    if (match && !captures_.count(name.substr(6))) return NoSuchCapture(name);
    return "";
  }

  std::string NoSuchCapture(const std::string& placeholder) const {
    if (captures_.empty()) return "{{" + placeholder + "}} needs a when.pattern with that named group";
    std::string names;
    for (const auto& c : captures_) names += (names.empty() ? "" : ", ") + c;
    return "{{" + placeholder + "}} is not a named capture group of when.pattern (it has: " + names + ")";
  }

  std::string id_;
  Status status_;
  std::set<std::string> captures_;  // empty: the rule has no pattern
};

Result<TimeMs> Duration(const json& v) { return DurationFromJson(v); }

bool Unit(const json& v) { return v.is_number() && v.get<double>() >= 0 && v.get<double>() <= 1; }

// Whether `v` is an integer that an int holds, without the wrap of get<int>
// (10^10 would become another priority, 2^64-1 would read as -1).
bool IsInt(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>() <= uint64_t{INT_MAX};
  return v.is_number_integer() && v.get<int64_t>() >= INT_MIN && v.get<int64_t>() <= INT_MAX;
}

// The rule's own keys besides when/then: priority, enabled, cooldown,
// window, max_fires.
void ParseLimits(const json& rule, Checker& c, Rule* r) {
  if (rule.contains("priority")) {
    if (!IsInt(rule["priority"]))
      c.Fail("priority", "must be an integer in [" + std::to_string(INT_MIN) + ", " +
                             std::to_string(INT_MAX) + "]");
    else r->priority = rule["priority"].get<int>();
  }
  if (rule.contains("enabled")) {
    if (!rule["enabled"].is_boolean()) c.Fail("enabled", "must be true or false");
    else r->enabled = rule["enabled"].get<bool>();
  }
  for (auto [key, out] : {std::pair{"cooldown", &r->cooldown}, {"window", &r->window}}) {
    if (!rule.contains(key)) continue;
    auto d = Duration(rule[key]);
    if (!d.ok()) c.Fail(key, d.status().message());
    else *out = *d;
  }
  if (rule.contains("max_fires")) {
    if (!IsInt(rule["max_fires"]) || rule["max_fires"].get<int>() < 1)
      c.Fail("max_fires", "must be an integer in [1, " + std::to_string(INT_MAX) + "]");
    else r->max_fires = rule["max_fires"].get<int>();
  }
  if ((r->max_fires > 0) != (r->window > 0)) c.Fail("max_fires", "max_fires and window go together");
}

// when.pattern: compiled here, so a rule that loaded has a working regex.
void ParsePattern(const json& pattern, Checker& c, Rule* r) {
  if (!pattern.is_string() || pattern.get<std::string>().empty()) {
    c.Fail("when.pattern", "must be a non-empty string");
    return;
  }
  r->pattern = pattern.get<std::string>();
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_shared<RE2>(r->pattern, opts);
  if (!re->ok()) c.Fail("when.pattern", "invalid regular expression: " + re->error());
  else c.SetCaptures(re->NamedCapturingGroups());
  r->regex = re;
}

// when.data: a list of {pointer, one operator}; stops at the first
// condition whose keys or pointer are wrong.
void ParseDataConditions(const json& data, Checker& c, Rule* r) {
  if (!data.is_array()) {
    c.Fail("when.data", "must be a list of conditions");
    return;
  }
  for (size_t i = 0; i < data.size(); ++i) {
    const json& d = data[i];
    std::string path = "when.data[" + std::to_string(i) + "]";
    c.Keys(d, path, {"pointer", "equals", "exists", "gt", "gte", "lt", "lte"});
    if (!c.ok()) return;
    DataCondition dc;
    if (!d.contains("pointer") || !d["pointer"].is_string() ||
        (!d["pointer"].get<std::string>().empty() && d["pointer"].get<std::string>()[0] != '/')) {
      c.Fail(path + ".pointer", "must be a JSON pointer such as \"/issue/number\"");
      return;
    }
    dc.pointer = d["pointer"];
    int ops = 0;
    static const std::pair<const char*, DataCondition::Op> kOps[] = {
        {"equals", DataCondition::Op::kEquals}, {"exists", DataCondition::Op::kExists},
        {"gt", DataCondition::Op::kGt},         {"gte", DataCondition::Op::kGte},
        {"lt", DataCondition::Op::kLt},         {"lte", DataCondition::Op::kLte}};
    for (auto [name, op] : kOps) {
      if (!d.contains(name)) continue;
      ++ops;
      dc.op = op;
      dc.value = d[name];
      if (op == DataCondition::Op::kExists && !dc.value.is_boolean()) c.Fail(path + ".exists", "must be true or false");
      if (op != DataCondition::Op::kExists && op != DataCondition::Op::kEquals && !dc.value.is_number())
        c.Fail(path + "." + name, "must be a number");
    }
    if (ops != 1) c.Fail(path, "needs exactly one of equals, exists, gt, gte, lt, lte");
    r->data.push_back(std::move(dc));
  }
}

// when.arousal: {min, max}, each in [0, 1].
void ParseArousalRange(const json& a, Checker& c, Rule* r) {
  c.Keys(a, "when.arousal", {"min", "max"});
  if (!a.is_object()) return;
  if (a.contains("min")) {
    if (!Unit(a["min"])) c.Fail("when.arousal.min", "must be a number in [0, 1]");
    else r->arousal_min = a["min"];
  }
  if (a.contains("max")) {
    if (!Unit(a["max"])) c.Fail("when.arousal.max", "must be a number in [0, 1]");
    else r->arousal_max = a["max"];
  }
}

// when: which percepts the rule meets (absent: every percept).
void ParseWhen(const json& when, Checker& c, Rule* r) {
  c.Keys(when, "when", {"source", "type", "pattern", "min_intensity", "data", "arousal"});
  if (!when.is_object()) return;
  r->sources = c.Names(when.contains("source") ? &when["source"] : nullptr, "when.source");
  r->types = c.Names(when.contains("type") ? &when["type"] : nullptr, "when.type");
  if (when.contains("pattern")) ParsePattern(when["pattern"], c, r);
  if (when.contains("min_intensity")) {
    if (!Unit(when["min_intensity"])) c.Fail("when.min_intensity", "must be a number in [0, 1]");
    else r->min_intensity = when["min_intensity"].get<double>();
  }
  if (when.contains("data")) ParseDataConditions(when["data"], c, r);
  if (when.contains("arousal")) ParseArousalRange(when["arousal"], c, r);
}

// One step of `then`, {kind: args} at `path` ("then[i].kind"). *created
// says whether an earlier step created a thread (assign_to_thread may then
// omit thread_id); a create_thread step sets it.
Step ParseStep(const std::string& kind, const json& args, const std::string& path,
               const RuleContext& ctx, bool* created, Checker& c) {
  Step step{Step::Kind::kSend, args};
  if (kind == "send") {
    c.Keys(args, path, {"effector", "type", "payload", "idempotency_key", "require_approval"});
    if (args.contains("require_approval") && !args["require_approval"].is_boolean())
      c.Fail(path + ".require_approval", "must be true or false");
    if (!args.contains("effector") || !args["effector"].is_string()) c.Fail(path + ".effector", "required");
    else if (!ctx.effectors.count(args["effector"].get<std::string>())) {
      std::string known;
      for (const auto& e : ctx.effectors) known += (known.empty() ? "" : ", ") + e;
      c.Fail(path + ".effector", "unknown effector \"" + args["effector"].get<std::string>() +
                                     "\" (configured: " + known + ")");
    }
    if (!args.contains("type") || !args["type"].is_string()) c.Fail(path + ".type", "required: a string");
    // What action_enqueued will accept, so the rule never plans an event
    // the log refuses (found by fuzz/rules).
    else if (std::string fault = NameFault(args["type"].get_ref<const std::string&>());
             !fault.empty())
      c.Fail(path + ".type", "must be " + std::string(kNameRule) + "; " + fault);
  } else if (kind == "create_thread") {
    step.kind = Step::Kind::kCreateThread;
    c.Keys(args, path, {"goal", "salience", "state"});
    if (!args.contains("goal") || !args["goal"].is_string()) c.Fail(path + ".goal", "required: a string");
    if (args.contains("salience") && !Unit(args["salience"])) c.Fail(path + ".salience", "must be a number in [0, 1]");
    if (args.contains("state") && !args["state"].is_object()) c.Fail(path + ".state", "must be an object");
    *created = true;
  } else if (kind == "assign_to_thread") {
    step.kind = Step::Kind::kAssignToThread;
    c.Keys(args, path, {"thread_id"});
    if (args.contains("thread_id") && !args["thread_id"].is_string()) c.Fail(path + ".thread_id", "must be a string");
    if (!args.contains("thread_id") && !*created)
      c.Fail(path, "needs thread_id, or a create_thread step before it");
  } else if (kind == "set_arousal") {
    step.kind = Step::Kind::kSetArousal;
    c.Keys(args, path, {"level"});
    if (!args.contains("level") || !Unit(args["level"])) c.Fail(path + ".level", "required: a number in [0, 1]");
  } else if (kind == "set_factor") {
    step.kind = Step::Kind::kSetFactor;
    c.Keys(args, path, {"name", "value"});
    if (!args.contains("name") || !args["name"].is_string()) c.Fail(path + ".name", "required: a string");
    if (!args.contains("value")) c.Fail(path + ".value", "required");
  } else if (kind == "escalate") {
    step.kind = Step::Kind::kEscalate;
    c.Keys(args, path, {"salience", "arousal"});
    if (args.contains("salience") && !Unit(args["salience"])) c.Fail(path + ".salience", "must be a number in [0, 1]");
    if (args.contains("arousal") && !Unit(args["arousal"])) c.Fail(path + ".arousal", "must be a number in [0, 1]");
    if (!args.contains("salience") && !args.contains("arousal")) c.Fail(path, "needs salience and/or arousal");
  } else if (kind == "drop") {
    step.kind = Step::Kind::kDrop;
    c.Keys(args, path, {"reason"});
  } else if (kind == "wake_mind") {
    step.kind = Step::Kind::kWakeMind;
    c.Keys(args, path, {"reason"});
    if (args.contains("reason") && !args["reason"].is_string()) c.Fail(path + ".reason", "must be a string");
  } else {
    c.Fail(path, "unknown step (send, create_thread, assign_to_thread, set_arousal, set_factor, escalate, drop, wake_mind)");
  }
  c.Templates(args, path);
  return step;
}

// then: a non-empty list of steps, parsed until the first error.
void ParseThen(const json& rule, const RuleContext& ctx, Checker& c, Rule* r) {
  if (!rule.contains("then") || !rule["then"].is_array() || rule["then"].empty()) {
    c.Fail("then", "must be a non-empty list of steps");
    return;
  }
  bool created = false;
  for (size_t i = 0; i < rule["then"].size() && c.ok(); ++i) {
    const json& s = rule["then"][i];
    std::string path = "then[" + std::to_string(i) + "]";
    if (!s.is_object() || s.size() != 1 || !s.begin()->is_object()) {
      c.Fail(path, "must be an object with one step, e.g. {\"send\": {...}}");
      return;
    }
    const std::string kind = s.begin().key();
    r->then.push_back(ParseStep(kind, *s.begin(), path + "." + kind, ctx, &created, c));
  }
}

}  // namespace

Result<Rule> ParseRule(const json& rule, const RuleContext& ctx) {
  if (!rule.is_object()) return Status::InvalidArgument("a rule must be a JSON object");
  Rule r;
  if (!rule.contains("id") || !rule["id"].is_string() || rule["id"].get<std::string>().empty())
    return Status::InvalidArgument("a rule needs a string \"id\"");
  r.id = rule["id"].get<std::string>();
  // The id goes into every event about the rule (reflex_put, reflex_fired),
  // whose schema takes only ids: a rule that loaded must be able to fire.
  LIMBIC_RETURN_IF_ERROR(state::CheckId("rule id", r.id));
  r.source_json = rule;
  Checker c(r.id);
  c.Keys(rule, "", {"id", "priority", "enabled", "cooldown", "max_fires", "window", "when", "then", "description"});
  ParseLimits(rule, c, &r);
  const json empty = json::object();
  ParseWhen(rule.contains("when") ? rule["when"] : empty, c, &r);
  ParseThen(rule, ctx, c, &r);
  if (!c.ok()) return c.status();
  return r;
}

Result<std::vector<Rule>> ParseRuleFile(const json& doc, const RuleContext& ctx) {
  if (!doc.is_object() || !doc.contains("reflexes") || !doc["reflexes"].is_array())
    return Status::InvalidArgument("a rules file is {\"reflexes\": [rule, ...]}");
  std::vector<Rule> out;
  std::set<std::string> ids;
  for (const json& j : doc["reflexes"]) {
    auto r = ParseRule(j, ctx);
    if (!r.ok()) return r.status();
    if (!ids.insert(r->id).second) return Status::InvalidArgument("rule \"" + r->id + "\": duplicate id");
    out.push_back(std::move(r).value());
  }
  return out;
}

namespace {

Result<json> Value(std::string_view name, const json& percept,
                   const std::map<std::string, std::string>& captures) {
  if (name.rfind("match.", 0) == 0) {
    auto it = captures.find(std::string(name.substr(6)));
    if (it == captures.end()) return Status::NotFound("{{" + std::string(name) + "}}: no such capture in this match");
    return json(it->second);
  }
  std::string path(name.substr(8));  // after "percept."
  const json* cur = &percept;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const json* next = nullptr;
    if (cur->is_object() && cur->contains(part)) next = &(*cur)[part];
    else if (cur->is_array() && !part.empty() && part.find_first_not_of("0123456789") == std::string::npos &&
             std::stoul(part) < cur->size())
      next = &(*cur)[std::stoul(part)];
    if (!next || next->is_null()) return Status::NotFound("{{" + std::string(name) + "}}: the percept has no " + path);
    cur = next;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return *cur;
}

}  // namespace

Result<json> RenderTemplate(const json& tmpl, const json& percept,
                            const std::map<std::string, std::string>& captures) {
  return limbic::RenderTemplate(
      tmpl, [&](std::string_view name) { return Value(name, percept, captures); });
}

}  // namespace limbic::reflexes
