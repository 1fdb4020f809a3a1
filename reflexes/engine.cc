#include "reflexes/engine.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <set>
#include <span>

#include "reflexes/prefilter.h"
#include "state/commands.h"
#include "state/provenance.h"

namespace limbic::reflexes {

using state::Event;
using state::EventType;

// Two forms of a rule's pattern P that RE2 matches anchored at the start
// with its backtracker (BitState), which keeps no cache, so they cost as
// much the first time as later (engine.h). Both are null when RE2 refuses
// one (too big); the rule's own regex is used then.
struct ReflexEngine::Compiled {
  std::string pattern;  // P, what this was made from
  PatternAtoms atoms;
  // "\C*?(?:P)()": whether P matches. The empty group at the end makes two
  // submatches available, which keeps RE2 off its DFA (RE2::Match runs the
  // backtracker directly for an anchored search that wants submatches); it
  // is non-capturing around P because a capture on every start position
  // doubles the backtracker's work.
  std::unique_ptr<RE2> probe;
  // "\C*?(P)": group 1 is P's match, P's groups follow (one up).
  std::unique_ptr<RE2> capture;
};

struct ReflexEngine::Patterned {
  const Rule* rule;
  const Compiled* compiled;
};

// Rules whose patterns one RE2::Set scans at once; `set` null: too big for
// a set, so each rule is tried with its own RE2.
struct ReflexEngine::PatternGroup {
  std::vector<Patterned> rules;  // index i = pattern i of `set`
  std::unique_ptr<RE2::Set> set;
};

struct ReflexEngine::Bucket {
  std::vector<const Rule*> plain;    // no pattern: always candidates
  std::vector<PatternGroup> groups;  // unfiltered patterns
  // Prefiltered patterns: rule i is a candidate when the text holds
  // required[i] of its required atoms and at least one of its atoms.
  std::vector<Patterned> filtered;
  std::vector<uint32_t> required;
  LiteralIndex atoms;  // each distinct atom once
  struct Posting {
    uint32_t rule;  // index into `filtered`
    bool required;
  };
  std::vector<std::vector<Posting>> postings;  // by atom id
  // Scratch for one scan, valid where the stamp is the current scan's.
  uint32_t scan = 0;
  std::vector<uint32_t> atom_scan, rule_scan, rule_hits;
  std::vector<uint32_t> touched;

  // Appends the prefiltered rules that are candidates for a text (folded
  // with FoldForAtoms).
  void Prefilter(const std::string& folded, std::vector<Patterned>* out);
};

namespace {

// The bucket keys of a source or type list: "*" alone when the list is empty
// or holds "*" (it matches anything, so naming more adds nothing), else each
// name once.
std::vector<std::string> IndexKeys(const std::vector<std::string>& names) {
  std::set<std::string> unique(names.begin(), names.end());
  if (unique.empty() || unique.count("*")) return {"*"};
  return {unique.begin(), unique.end()};
}

}  // namespace

ReflexEngine::ReflexEngine() = default;
ReflexEngine::~ReflexEngine() = default;

Status ReflexEngine::Put(Rule rule) {
  if (!rule.pattern.empty() && (!rule.regex || !rule.regex->ok()))
    return Status::InvalidArgument("rule \"" + rule.id + "\": when.pattern is not compiled (use ParseRule)");
  std::string id = rule.id;
  if (rule.pattern.empty()) {
    compiled_.erase(id);
  } else if (auto& compiled = compiled_[id]; !compiled || compiled->pattern != rule.pattern) {
    auto c = std::make_shared<Compiled>();
    c->pattern = rule.pattern;
    c->atoms = ExtractAtoms(rule.pattern);
    RE2::Options opts;  // those of the rule's own regex (ParseRule)
    opts.set_log_errors(false);
    c->probe = std::make_unique<RE2>("\\C*?(?:" + rule.pattern + ")()", opts);
    c->capture = std::make_unique<RE2>("\\C*?(" + rule.pattern + ")", opts);
    // A valid P keeps its meaning inside a group; the group counts check it
    // (a P that ends inside \Q... would swallow the parenthesis).
    int groups = rule.regex->NumberOfCapturingGroups();
    bool same = c->probe->ok() && c->capture->ok() &&
                c->probe->NumberOfCapturingGroups() == groups + 1 &&
                c->capture->NumberOfCapturingGroups() == groups + 1;
    for (const auto& [name, index] : rule.regex->NamedCapturingGroups()) {
      if (!same) break;
      auto it = c->capture->NamedCapturingGroups().find(name);
      same = it != c->capture->NamedCapturingGroups().end() && it->second == index + 1;
    }
    if (!same) {
      c->probe.reset();
      c->capture.reset();
    }
    compiled = std::move(c);
  }
  rules_[id] = std::move(rule);
  dirty_ = true;
  return Status::OK();
}

bool ReflexEngine::Remove(const std::string& id) {
  dirty_ = true;
  fires_.erase(id);
  compiled_.erase(id);
  return rules_.erase(id) > 0;
}

Status ReflexEngine::SetEnabled(const std::string& id, bool enabled) {
  auto it = rules_.find(id);
  if (it == rules_.end()) return Status::NotFound("reflex " + id + " not found");
  it->second.enabled = enabled;
  return Status::OK();
}

bool ReflexEngine::ChangesRules(state::EventType type) {
  return type == state::EventType::kReflexPut || type == state::EventType::kReflexDeleted ||
         type == state::EventType::kReflexEnabled;
}

Status ReflexEngine::ApplyRuleEvent(const state::Event& e, const RuleContext& ctx) {
  switch (e.type) {
    case state::EventType::kReflexPut: {
      // Checked when it was put; what no longer loads must not fire as it was.
      auto rule = ParseRule(e.fields["rule"], ctx);
      Status s = rule.ok() ? Put(std::move(rule).value()) : rule.status();
      if (!s.ok()) Remove(e.Str("reflex_id"));
      return s;
    }
    case state::EventType::kReflexDeleted:
      Remove(e.Str("reflex_id"));
      return Status::OK();
    case state::EventType::kReflexEnabled:
      (void)SetEnabled(e.Str("reflex_id"), e.fields.value("enabled", true));
      return Status::OK();
    default:
      return Status::OK();
  }
}

const Rule* ReflexEngine::Get(const std::string& id) const {
  auto it = rules_.find(id);
  return it == rules_.end() ? nullptr : &it->second;
}

std::vector<const Rule*> ReflexEngine::List() const {
  std::vector<const Rule*> out;
  for (const auto& [id, r] : rules_) out.push_back(&r);
  return out;
}

void ReflexEngine::Rebuild() {
  buckets_.clear();
  std::map<std::pair<std::string, std::string>, std::vector<const Rule*>> patterned;
  for (const auto& [id, r] : rules_) {
    for (const auto& s : IndexKeys(r.sources)) {
      for (const auto& t : IndexKeys(r.types)) {
        auto& b = buckets_[{s, t}];
        if (!b) b = std::make_unique<Bucket>();
        if (r.pattern.empty()) b->plain.push_back(&r);
        else patterned[{s, t}].push_back(&r);
      }
    }
  }
  for (auto& [key, rules] : patterned) {
    Bucket& b = *buckets_[key];
    std::vector<Patterned> unfiltered;
    std::map<std::string, uint32_t, std::less<>> atom_ids;
    for (const Rule* r : rules) {
      const Compiled* c = compiled_.at(r->id).get();
      const PatternAtoms& pa = c->atoms;
      if (!pa.filtered) {
        unfiltered.push_back(Patterned{r, c});
        continue;
      }
      uint32_t index = static_cast<uint32_t>(b.filtered.size());
      b.filtered.push_back(Patterned{r, c});
      b.required.push_back(static_cast<uint32_t>(pa.required_count()));
      for (size_t i = 0; i < pa.atoms.size(); ++i) {
        auto [it, added] = atom_ids.emplace(pa.atoms[i], static_cast<uint32_t>(b.postings.size()));
        if (added) {
          b.atoms.Add(pa.atoms[i]);
          b.postings.emplace_back();
        }
        b.postings[it->second].push_back(Bucket::Posting{index, pa.required[i]});
      }
    }
    b.atoms.Build();
    b.atom_scan.assign(b.postings.size(), 0);
    b.rule_scan.assign(b.filtered.size(), 0);
    b.rule_hits.assign(b.filtered.size(), 0);
    std::span<const Patterned> all(unfiltered);
    for (size_t i = 0; i < all.size(); i += kMaxRulesPerSet)
      CompileGroups(all.subspan(i, std::min(kMaxRulesPerSet, all.size() - i)), &b.groups);
  }
  dirty_ = false;
}

void ReflexEngine::Bucket::Prefilter(const std::string& folded, std::vector<Patterned>* out) {
  if (filtered.empty()) return;
  if (++scan == 0) {  // the stamps wrapped: forget them all
    std::fill(atom_scan.begin(), atom_scan.end(), 0);
    std::fill(rule_scan.begin(), rule_scan.end(), 0);
    scan = 1;
  }
  touched.clear();
  atoms.Scan(folded, [this](uint32_t atom) {
    if (atom_scan[atom] == scan) return;  // seen earlier in this text
    atom_scan[atom] = scan;
    for (const Posting& p : postings[atom]) {
      if (rule_scan[p.rule] != scan) {
        rule_scan[p.rule] = scan;
        rule_hits[p.rule] = 0;
        touched.push_back(p.rule);
      }
      rule_hits[p.rule] += p.required;
    }
  });
  for (uint32_t i : touched)
    if (rule_hits[i] == required[i]) out->push_back(filtered[i]);
}

// Compiles `rules` into one set, or splits them until each part compiles. A
// set whose Compile() failed must never be matched against: RE2 2022-06-01
// dereferences a null program there.
void ReflexEngine::CompileGroups(std::span<const Patterned> rules, std::vector<PatternGroup>* out) {
  RE2::Options opts;
  opts.set_log_errors(false);
  auto set = std::make_unique<RE2::Set>(opts, RE2::UNANCHORED);
  PatternGroup group;
  for (const Patterned& r : rules) {
    // Add parses with the options the rule's own RE2 was validated with, so
    // it should not fail; if it does, that rule goes alone.
    if (set->Add(r.rule->pattern, nullptr) == static_cast<int>(group.rules.size()))
      group.rules.push_back(r);
    else
      out->push_back(PatternGroup{{r}, nullptr});
  }
  if (group.rules.empty()) return;
  if (set->Compile()) {
    group.set = std::move(set);
    out->push_back(std::move(group));
    return;
  }
  if (group.rules.size() == 1) {
    out->push_back(std::move(group));  // no set: its own RE2
    return;
  }
  std::span<const Patterned> added(group.rules);
  size_t half = added.size() / 2;
  CompileGroups(added.first(half), out);
  CompileGroups(added.subspan(half), out);
}

ReflexEngine::IndexStats ReflexEngine::index_stats() {
  if (dirty_) Rebuild();
  IndexStats st;
  st.buckets = buckets_.size();
  for (const auto& [key, b] : buckets_) {
    st.prefiltered += b->filtered.size();
    for (const PatternGroup& g : b->groups) {
      if (g.set) ++st.sets;
      else st.single_rules += g.rules.size();
    }
  }
  return st;
}

namespace {

bool DataHolds(const DataCondition& c, const json& data) {
  json::json_pointer ptr;
  try {
    ptr = json::json_pointer(c.pointer);
  } catch (const json::exception&) {
    return false;
  }
  bool exists = data.contains(ptr);
  if (c.op == DataCondition::Op::kExists) return exists == c.value.get<bool>();
  if (!exists) return false;
  const json& v = data.at(ptr);
  if (c.op == DataCondition::Op::kEquals) return v == c.value;
  if (!v.is_number()) return false;
  double x = v.get<double>(), y = c.value.get<double>();
  switch (c.op) {
    case DataCondition::Op::kGt: return x > y;
    case DataCondition::Op::kGte: return x >= y;
    case DataCondition::Op::kLt: return x < y;
    case DataCondition::Op::kLte: return x <= y;
    default: return false;
  }
}

}  // namespace

bool ReflexEngine::Eligible(const Rule& r, const json& percept, double arousal, TimeMs now) const {
  if (!r.enabled) return false;
  if (percept.value("intensity", 0.0) < r.min_intensity) return false;
  if (arousal < r.arousal_min || arousal > r.arousal_max) return false;
  if (!r.data.empty()) {
    static const json empty = json::object();
    auto it = percept.find("data");
    const json& data = it != percept.end() ? *it : empty;
    for (const DataCondition& c : r.data)
      if (!DataHolds(c, data)) return false;
  }
  auto f = fires_.find(r.id);
  if (f != fires_.end() && !f->second.empty()) {
    if (r.cooldown > 0 && now - f->second.back() < r.cooldown) return false;
    if (r.max_fires > 0) {
      int recent = 0;
      for (TimeMs t : f->second) recent += now - t < r.window;
      if (recent >= r.max_fires) return false;
    }
  }
  return true;
}

std::vector<Match> ReflexEngine::MatchPercept(const json& percept, double effective_arousal, TimeMs now) {
  if (dirty_) Rebuild();
  std::vector<Match> out;
  // A field of another type reads as absent: the pools only hold strings
  // here, but value() would throw on anything else (found by fuzz/rules).
  auto string_field = [&percept](const char* name) {
    auto it = percept.find(name);
    return it != percept.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const std::string source = string_field("source");
  const std::string type = string_field("type");
  const std::string text = string_field("text");
  const std::string folded = FoldForAtoms(text);
  std::vector<std::pair<std::string, std::string>> keys = {
      {source, type}, {source, "*"}, {"*", type}, {"*", "*"}};
  std::sort(keys.begin(), keys.end());  // a source or type "*" would visit a bucket twice
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<int> hits;
  std::vector<Patterned> candidates;
  for (const auto& key : keys) {
    auto it = buckets_.find(key);
    if (it == buckets_.end()) continue;
    Bucket& b = *it->second;
    for (const Rule* r : b.plain)
      if (Eligible(*r, percept, effective_arousal, now)) out.push_back(Match{r, {}});
    candidates.clear();
    b.Prefilter(folded, &candidates);
    for (const PatternGroup& g : b.groups) {
      if (g.set) {
        hits.clear();
        RE2::Set::ErrorInfo info{RE2::Set::kNoError};
        if (g.set->Match(text, &hits, &info)) {
          for (int i : hits) candidates.push_back(g.rules[static_cast<size_t>(i)]);
          continue;
        }
        if (info.kind == RE2::Set::kNoError) continue;  // no pattern matches
        // The scan gave up (DFA out of memory): every rule is a candidate.
      }
      candidates.insert(candidates.end(), g.rules.begin(), g.rules.end());
    }
    for (const auto& [r, compiled] : candidates) {
      if (!Eligible(*r, percept, effective_arousal, now)) continue;
      // The rule's own pattern decides (a prefilter or set only narrows) and
      // gives the captures: anchored (group 1 = the match) when it can be.
      const Compiled& c = *compiled;
      bool anchored = c.probe && text.size() <= kAnchoredTextMax;
      if (anchored) {
        re2::StringPiece probed[2];
        if (!c.probe->Match(text, 0, text.size(), RE2::ANCHOR_START, probed, 2)) continue;
      }
      const RE2& re = anchored ? *c.capture : *r->regex;
      int groups = re.NumberOfCapturingGroups();
      std::vector<re2::StringPiece> sub(static_cast<size_t>(groups) + 1);
      if (!re.Match(text, 0, text.size(), anchored ? RE2::ANCHOR_START : RE2::UNANCHORED,
                    sub.data(), groups + 1))
        continue;
      Match m{r, {}};
      m.captures["0"] = std::string(sub[anchored ? 1 : 0]);
      for (const auto& [name, index] : re.NamedCapturingGroups())
        if (sub[static_cast<size_t>(index)].data()) m.captures[name] = std::string(sub[static_cast<size_t>(index)]);
      out.push_back(std::move(m));
    }
  }
  std::sort(out.begin(), out.end(), [](const Match& a, const Match& b) {
    if (a.rule->priority != b.rule->priority) return a.rule->priority > b.rule->priority;
    return a.rule->id < b.rule->id;
  });
  return out;
}

void ReflexEngine::RecordFire(const std::string& id, TimeMs ts) {
  auto& q = fires_[id];
  if (!q.empty() && q.back() == ts) return;  // the same firing seen twice (planned, then applied)
  q.push_back(ts);
  const Rule* r = Get(id);
  size_t keep = r && r->max_fires > 0 ? static_cast<size_t>(r->max_fires) : 1;
  while (q.size() > keep) q.pop_front();
}

Result<std::vector<Event>> ReflexEngine::Plan(const Match& match, const json& percept,
                                              const state::RecordReader& st, uint64_t next_seq) const {
  const Rule& r = *match.rule;
  const std::string percept_id = percept.value("id", "");
  std::vector<Event> effects;
  // const operator[] on a missing key is undefined behaviour: look it up.
  auto assigned = percept.find("thread_id");
  std::string thread_id =
      assigned != percept.end() && assigned->is_string() ? assigned->get<std::string>() : "";
  double created_salience = -1;
  json wake;  // a wake_mind step's {reason, thread_id?}
  auto seq_of_next = [&] { return next_seq + 1 + effects.size(); };
  auto add = [&](Result<state::Events> events) -> Status {
    if (!events.ok()) return events.status();
    for (Event& e : *events) effects.push_back(std::move(e));
    return Status::OK();
  };
  for (size_t i = 0; i < r.then.size(); ++i) {
    const Step& step = r.then[i];
    auto rendered = RenderTemplate(step.args, percept, match.captures);
    if (!rendered.ok())
      return rendered.status().WithContext("rule \"" + r.id + "\" then[" + std::to_string(i) + "]");
    const json& a = *rendered;
    Status s;
    switch (step.kind) {
      case Step::Kind::kSend: {
        json req = {{"effector", a["effector"]}, {"type", a["type"]},
                    {"payload", a.value("payload", json::object())}, {"percept_id", percept_id}};
        if (a.contains("idempotency_key")) req["idempotency_key"] = a["idempotency_key"];
        if (a.contains("require_approval")) req["require_approval"] = a["require_approval"];
        if (!thread_id.empty()) req["thread_id"] = thread_id;
        s = add(state::BuildActionEnqueue(req, seq_of_next()));
        break;
      }
      case Step::Kind::kCreateThread: {
        json req = {{"goal", a["goal"]}, {"salience", a.value("salience", 0.5)}, {"from_percept", percept_id}};
        if (a.contains("state")) req["state"] = a["state"];
        uint64_t seq = seq_of_next();
        s = add(state::BuildThreadCreate(req, seq));
        thread_id = "t-" + std::to_string(seq);
        created_salience = req["salience"].get<double>();
        break;
      }
      case Step::Kind::kAssignToThread: {
        const std::string created = created_salience >= 0 ? thread_id : std::string();
        if (a.contains("thread_id")) thread_id = a["thread_id"].get<std::string>();
        // create_thread assigned the percept to the thread it made already.
        if (thread_id != created)
          s = add(state::BuildPerceptAssign(percept_id, {{"thread_id", thread_id}}));
        break;
      }
      case Step::Kind::kSetArousal:
        s = add(state::BuildArousalSet({{"level", a["level"]}, {"reason", "reflex " + r.id}}));
        break;
      case Step::Kind::kSetFactor:
        s = add(state::BuildArousalSet({{"factors", {{a["name"].get<std::string>(), a["value"]}}}}));
        break;
      case Step::Kind::kEscalate: {
        if (a.contains("salience") && !thread_id.empty()) {
          double current = created_salience;
          if (current < 0) {
            auto t = st.Get(state::Pool::kThreads, thread_id);
            if (t.ok() && t->has_value()) current = (**t).value("salience", 0.0);
          }
          double want = a["salience"].get<double>();
          if (current < want) s = add(state::BuildThreadUpdate(thread_id, {{"salience", want}}));
        }
        if (s.ok() && a.contains("arousal")) {
          auto rec = st.Get(state::Pool::kArousal, std::string(state::kArousalId));
          double level = rec.ok() && rec->has_value() ? (**rec).value("level", 0.5) : 0.5;
          double want = a["arousal"].get<double>();
          if (level < want) s = add(state::BuildArousalSet({{"level", want}, {"reason", "escalated by reflex " + r.id}}));
        }
        break;
      }
      case Step::Kind::kWakeMind:
        // Recorded in the firing; the mind's executive wakes on it once applied.
        wake = {{"reason", a.contains("reason") ? a["reason"] : json("reflex " + r.id + " fired")}};
        break;
      case Step::Kind::kDrop: {
        json req = json::object();
        if (a.contains("reason")) req["reason"] = a["reason"];
        s = add(state::BuildPerceptDrop(percept_id, req));
        break;
      }
    }
    if (!s.ok()) return s.WithContext("rule \"" + r.id + "\" then[" + std::to_string(i) + "]");
  }
  state::Attribute(effects, "reflex:" + r.id);
  json caused = json::array();
  for (size_t i = 0; i < effects.size(); ++i) caused.push_back(next_seq + 1 + i);
  Event fired;
  fired.type = EventType::kReflexFired;
  fired.fields = {{"reflex_id", r.id}, {"caused", std::move(caused)}};
  if (!percept_id.empty()) fired.fields["percept_id"] = percept_id;
  if (wake.is_object()) {
    if (!thread_id.empty()) wake["thread_id"] = thread_id;
    fired.fields["wake_mind"] = std::move(wake);
  }
  std::vector<Event> out;
  out.reserve(effects.size() + 1);
  out.push_back(std::move(fired));
  for (Event& e : effects) out.push_back(std::move(e));
  return out;
}

}  // namespace limbic::reflexes
