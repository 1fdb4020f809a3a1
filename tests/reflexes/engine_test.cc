#include "reflexes/engine.h"

#include <re2/re2.h>

#include <catch2/catch.hpp>
#include <map>
#include <random>

#include "reflexes/bench_rules.h"

// This file's own namespace: test programs compile in unity batches.
namespace engine_test {

using namespace limbic;
using namespace limbic::reflexes;
using nlohmann::json;

namespace {

RuleContext Ctx() { return RuleContext{{"log", "hook"}}; }

Rule Parse(const json& j) {
  auto r = ParseRule(j, Ctx());
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(r).value();
}

json Percept(const std::string& source, const std::string& type, const std::string& text,
             double intensity = 0.5, json data = json::object()) {
  return {{"id", "p-1"}, {"source", source}, {"type", type}, {"text", text}, {"intensity", intensity},
          {"thread_id", nullptr}, {"status", "new"}, {"data", std::move(data)}};
}

std::vector<std::string> Ids(const std::vector<Match>& ms) {
  std::vector<std::string> out;
  for (const auto& m : ms) out.push_back(m.rule->id);
  return out;
}

const json kDrop = json::array({{{"drop", json::object()}}});

}  // namespace

TEST_CASE("rules are validated, naming the rule and the field", "[reflexes]") {
  struct Case {
    json rule;
    const char* needle;
  } cases[] = {
      {{{"then", kDrop}}, "needs a string \"id\""},
      {{{"id", "r"}, {"then", json::array()}}, "rule \"r\": then: must be a non-empty list"},
      {{{"id", "r"}, {"when", {{"pattern", "(a"}}}, {"then", kDrop}}, "rule \"r\": when.pattern: invalid regular expression"},
      {{{"id", "r"}, {"when", {{"sorce", "x"}}}, {"then", kDrop}}, "when.sorce: unknown key"},
      {{{"id", "r"}, {"when", {{"min_intensity", 2}}}, {"then", kDrop}}, "when.min_intensity"},
      {{{"id", "r"}, {"when", {{"data", {{{"pointer", "/a"}}}}}}, {"then", kDrop}}, "when.data[0]: needs exactly one"},
      {{{"id", "r"}, {"then", {{{"send", {{"effector", "slack"}, {"type", "x"}}}}}}}, "then[0].send.effector: unknown effector \"slack\""},
      {{{"id", "r"}, {"then", {{{"assign_to_thread", json::object()}}}}}, "then[0].assign_to_thread: needs thread_id"},
      {{{"id", "r"}, {"then", {{{"fly", json::object()}}}}}, "then[0].fly: unknown step"},
      {{{"id", "r"}, {"then", {{{"send", {{"effector", "log"}, {"type", "x"}, {"payload", "{{percept.secret}}"}}}}}}}, "unknown placeholder {{percept.secret}}"},
      {{{"id", "r"}, {"max_fires", 3}, {"then", kDrop}}, "max_fires and window go together"},
      {{{"id", "r"}, {"cooldown", "soon"}, {"then", kDrop}}, "cooldown"},
      // Integers an int does not hold are refused, not wrapped.
      {{{"id", "r"}, {"priority", int64_t{1} << 40}, {"then", kDrop}},
       "rule \"r\": priority: must be an integer in [-2147483648, 2147483647]"},
      {{{"id", "r"}, {"priority", ~uint64_t{0}}, {"then", kDrop}}, "priority: must be an integer"},
      {{{"id", "r"}, {"max_fires", int64_t{1} << 32}, {"window", "1h"}, {"then", kDrop}},
       "max_fires: must be an integer in [1, 2147483647]"},
      {{{"id", "r"}, {"cooldown", "9999999999999999d"}, {"then", kDrop}}, "duration too large"},
      // {{match.NAME}} must name a group of the rule's own pattern.
      {{{"id", "r"}, {"when", {{"pattern", "see (?P<url>\\S+)"}}},
        {"then", {{{"send", {{"effector", "log"}, {"type", "x"}, {"payload", {{"u", "{{match.link}}"}}}}}}}}},
       "rule \"r\": then[0].send.payload.u: {{match.link}} is not a named capture group of "
       "when.pattern (it has: 0, url)"},
      {{{"id", "r"}, {"then", {kDrop[0], {{"create_thread", {{"goal", "read {{match.url}}"}}}}}}},
       "rule \"r\": then[1].create_thread.goal: {{match.url}} needs a when.pattern"},
      // Found by fuzz/rules_fuzz.cc: such a rule loaded, then every firing
      // (and its reflex_put at start) was refused by the event schema.
      {{{"id", "github%issue"}, {"then", kDrop}},
       "rule id \"github%issue\" is not a valid id (1-128 characters of [A-Za-z0-9._:-])"},
  };
  for (const auto& c : cases) {
    INFO(c.rule.dump());
    auto r = ParseRule(c.rule, Ctx());
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains(c.needle));
  }
  // Groups that exist, and "0" (the whole match), are fine.
  CHECK(ParseRule({{"id", "r"}, {"when", {{"pattern", "see (?P<url>\\S+)"}}},
                   {"then", {{{"create_thread", {{"goal", "{{match.0}}: {{match.url}}"}}}}}}},
                  Ctx())
            .ok());
  auto dup = ParseRuleFile({{"reflexes", {{{"id", "a"}, {"then", kDrop}}, {{"id", "a"}, {"then", kDrop}}}}}, Ctx());
  CHECK_THAT(dup.status().message(), Catch::Contains("duplicate"));
}

TEST_CASE("matching by source, type list, pattern captures, intensity, data and arousal", "[reflexes]") {
  ReflexEngine e;
  (void)e.Put(Parse({{"id", "src"}, {"when", {{"source", "github"}}}, {"then", kDrop}}));
  (void)e.Put(Parse({{"id", "types"}, {"when", {{"type", {"issues.opened", "issues.reopened"}}}}, {"then", kDrop}}));
  (void)e.Put(Parse({{"id", "url"}, {"when", {{"pattern", "(?i)see (?P<url>https?://\\S+)"}}}, {"then", kDrop}}));
  (void)e.Put(Parse({{"id", "hot"}, {"when", {{"min_intensity", 0.8}}}, {"then", kDrop}}));
  (void)e.Put(Parse({{"id", "data"}, {"when", {{"data", {{{"pointer", "/n"}, {"gt", 3}}, {{"pointer", "/private"}, {"equals", false}}, {{"pointer", "/x"}, {"exists", false}}}}}}, {"then", kDrop}}));
  (void)e.Put(Parse({{"id", "calm"}, {"when", {{"source", "chat"}, {"arousal", {{"max", 0.5}}}}}, {"then", kDrop}}));

  CHECK(Ids(e.MatchPercept(Percept("github", "push", ""), 0.5, 0)) == std::vector<std::string>{"src"});
  CHECK(Ids(e.MatchPercept(Percept("mail", "issues.reopened", ""), 0.5, 0)) == std::vector<std::string>{"types"});
  auto m = e.MatchPercept(Percept("mail", "msg", "please SEE http://x.y/z soon"), 0.5, 0);
  REQUIRE(Ids(m) == std::vector<std::string>{"url"});
  CHECK(m[0].captures["url"] == "http://x.y/z");
  CHECK(m[0].captures["0"] == "SEE http://x.y/z");
  CHECK(Ids(e.MatchPercept(Percept("mail", "msg", "", 0.9), 0.5, 0)) == std::vector<std::string>{"hot"});
  CHECK(Ids(e.MatchPercept(Percept("mail", "msg", "", 0.5, {{"n", 4}, {"private", false}}), 0.5, 0)) ==
        std::vector<std::string>{"data"});
  CHECK(e.MatchPercept(Percept("mail", "msg", "", 0.5, {{"n", 3}, {"private", false}}), 0.5, 0).empty());
  CHECK(e.MatchPercept(Percept("mail", "msg", "", 0.5, {{"n", 9}, {"private", false}, {"x", 1}}), 0.5, 0).empty());
  CHECK(Ids(e.MatchPercept(Percept("chat", "msg", ""), 0.4, 0)) == std::vector<std::string>{"calm"});
  CHECK(e.MatchPercept(Percept("chat", "msg", ""), 0.6, 0).empty());
}

TEST_CASE("priority orders firings, disabled rules do not fire", "[reflexes]") {
  ReflexEngine e;
  (void)e.Put(Parse({{"id", "b-low"}, {"priority", 1}, {"then", kDrop}}));
  (void)e.Put(Parse({{"id", "a-high"}, {"priority", 5}, {"then", kDrop}}));
  (void)e.Put(Parse({{"id", "c-low"}, {"priority", 1}, {"then", kDrop}}));
  CHECK(Ids(e.MatchPercept(Percept("s", "t", ""), 0.5, 0)) == std::vector<std::string>{"a-high", "b-low", "c-low"});
  REQUIRE(e.SetEnabled("a-high", false).ok());
  CHECK(Ids(e.MatchPercept(Percept("s", "t", ""), 0.5, 0)) == std::vector<std::string>{"b-low", "c-low"});
  CHECK(e.Remove("b-low"));
  CHECK(e.SetEnabled("nope", true).IsNotFound());
}

TEST_CASE("cooldown and max fires per window use the firing history", "[reflexes]") {
  ReflexEngine e;
  (void)e.Put(Parse({{"id", "cool"}, {"cooldown", "30s"}, {"then", kDrop}}));
  (void)e.Put(Parse({{"id", "capped"}, {"max_fires", 2}, {"window", "1m"}, {"then", kDrop}}));
  json p = Percept("s", "t", "");
  TimeMs t = 1'000'000;
  CHECK(e.MatchPercept(p, 0.5, t).size() == 2);
  e.RecordFire("cool", t);
  e.RecordFire("capped", t);
  CHECK(Ids(e.MatchPercept(p, 0.5, t + 10'000)) == std::vector<std::string>{"capped"});
  e.RecordFire("capped", t + 10'000);
  CHECK(e.MatchPercept(p, 0.5, t + 20'000).empty());            // cooling down, and capped
  CHECK(Ids(e.MatchPercept(p, 0.5, t + 30'000)) == std::vector<std::string>{"cool"});
  CHECK(e.MatchPercept(p, 0.5, t + 61'000).size() == 2);        // the window slid past the first
  e.RestoreHistory("cool", t + 61'000);
  CHECK(Ids(e.MatchPercept(p, 0.5, t + 62'000)) == std::vector<std::string>{"capped"});
}

TEST_CASE("templates render percept fields, nested data and captures, missing paths fail",
          "[reflexes]") {
  json p = Percept("gh", "t", "text", 0.7, {{"user", {{"login", "ana"}}}, {"labels", {"bug", "p1"}}, {"n", 7}});
  std::map<std::string, std::string> caps{{"url", "http://x"}};
  CHECK(*RenderTemplate("{{percept.data.user.login}} saw {{match.url}}", p, caps) == "ana saw http://x");
  CHECK(*RenderTemplate("{{percept.data.labels.1}}", p, caps) == "p1");
  CHECK(*RenderTemplate("{{percept.data.n}}", p, caps) == 7);  // a whole placeholder keeps its type
  CHECK(*RenderTemplate("n={{percept.data.n}}", p, caps) == "n=7");
  CHECK(*RenderTemplate(json({{"a", {"{{percept.source}}"}}}), p, caps) == json({{"a", {"gh"}}}));
  auto missing = RenderTemplate("{{percept.data.user.email}}", p, caps);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("data.user.email"));
  CHECK_FALSE(RenderTemplate("{{match.nope}}", p, caps).ok());
}

TEST_CASE("a firing plans reflex_fired first, then its effects with wired ids", "[reflexes]") {
  ReflexEngine e;
  (void)e.Put(Parse({{"id", "triage"},
                     {"then", {{{"create_thread", {{"goal", "triage {{percept.text}}"}, {"salience", 0.3}}}},
                               {{"assign_to_thread", json::object()}},
                               {{"send", {{"effector", "log"}, {"type", "ack"}, {"payload", {{"p", "{{percept.id}}"}}}}}},
                               {{"escalate", {{"salience", 0.8}, {"arousal", 0.9}}}},
                               {{"set_factor", {{"name", "user_waiting"}, {"value", true}}}}}}}));
  json p = Percept("s", "t", "crash");
  auto ms = e.MatchPercept(p, 0.5, 0);
  REQUIRE(ms.size() == 1);
  state::Overlay empty(nullptr);
  auto plan = e.Plan(ms[0], p, empty, 100);
  REQUIRE(plan.ok());
  std::vector<state::Event>& ev = *plan;
  REQUIRE(ev.size() == 7);
  CHECK(ev[0].type == state::EventType::kReflexFired);
  CHECK(ev[0].fields["caused"] == json::array({101, 102, 103, 104, 105, 106}));
  CHECK(ev[1].type == state::EventType::kThreadCreated);
  CHECK(ev[1].fields["thread_id"] == "t-101");
  CHECK(ev[1].fields["goal"] == "triage crash");
  CHECK(ev[2].fields == json({{"percept_id", "p-1"}, {"thread_id", "t-101"}, {"actor", "reflex:triage"}}));
  CHECK(ev[3].fields["action_id"] == "a-103");
  CHECK(ev[3].fields["thread_id"] == "t-101");
  CHECK(ev[3].fields["payload"] == json({{"p", "p-1"}}));
  CHECK(ev[4].type == state::EventType::kThreadUpdated);
  CHECK(ev[4].fields["salience"] == 0.8);
  CHECK(ev[5].fields["level"] == 0.9);
  CHECK(ev[6].fields == json({{"factor", "user_waiting"}, {"value", true}, {"actor", "reflex:triage"}}));
  // Every effect names the rule as its actor; the firing itself is not attributed.
  for (size_t i = 1; i < ev.size(); ++i) CHECK(ev[i].fields["actor"] == "reflex:triage");
  CHECK_FALSE(ev[0].fields.contains("actor"));
}

TEST_CASE("a wake_mind step is recorded in the firing, with the rule's thread", "[reflexes][mind]") {
  ReflexEngine e;
  (void)e.Put(Parse({{"id", "urgent"},
                     {"then", {{{"create_thread", {{"goal", "urgent"}}}},
                               {{"wake_mind", {{"reason", "urgent: {{percept.text}}"}}}}}}}));
  (void)e.Put(Parse({{"id", "plain"}, {"priority", -1}, {"then", {{{"wake_mind", json::object()}}}}}));
  json p = Percept("s", "t", "pager");
  auto ms = e.MatchPercept(p, 0.5, 0);
  REQUIRE(ms.size() == 2);
  state::Overlay empty(nullptr);
  auto plan = e.Plan(ms[0], p, empty, 100);
  REQUIRE(plan.ok());
  CHECK((*plan)[0].fields["wake_mind"] == json({{"reason", "urgent: pager"}, {"thread_id", "t-101"}}));
  auto bare = e.Plan(ms[1], p, empty, 100);
  REQUIRE(bare.ok());
  REQUIRE(bare->size() == 1);  // the firing alone: the wake is its record
  CHECK((*bare)[0].fields["wake_mind"] == json({{"reason", "reflex plain fired"}}));
  CHECK((*bare)[0].fields["caused"] == json::array());
  CHECK(state::ValidateEventFields((*bare)[0].type, (*bare)[0].fields).ok());
  // Its arguments are checked like any step's.
  auto bad = ParseRule({{"id", "x"}, {"then", {{{"wake_mind", {{"reason", 3}}}}}}}, RuleContext{{"log"}});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("then[0].wake_mind.reason: must be a string"));
  auto unknown = ParseRule({{"id", "x"}, {"then", {{{"wake_mind", {{"why", "x"}}}}}}}, RuleContext{{"log"}});
  REQUIRE_FALSE(unknown.ok());
}

TEST_CASE("a percept without thread_id plans as an unassigned one", "[reflexes]") {
  // Found by fuzz/rules_fuzz.cc: Plan read percept["thread_id"] from a const
  // object, undefined behaviour (an assertion in a debug build) when absent.
  ReflexEngine e;
  (void)e.Put(Parse({{"id", "ack"},
                     {"then", {{{"send", {{"effector", "log"}, {"type", "ack"}, {"payload", json::object()}}}}}}}));
  json p = Percept("s", "t", "x");
  p.erase("thread_id");
  auto ms = e.MatchPercept(p, 0.5, 0);
  REQUIRE(ms.size() == 1);
  state::Overlay empty(nullptr);
  auto plan = e.Plan(ms[0], p, empty, 100);
  REQUIRE(plan.ok());
  REQUIRE(plan->size() == 2);
  CHECK_FALSE((*plan)[1].fields.contains("thread_id"));
}

TEST_CASE("a percept whose source, type or text is not a string matches as if absent",
          "[reflexes]") {
  // Found by fuzz/rules_fuzz.cc: value("type", "") threw type_error on an
  // array and ended the process.
  ReflexEngine e;
  (void)e.Put(Parse({{"id", "any"}, {"then", kDrop}}));
  (void)e.Put(Parse({{"id", "typed"}, {"when", {{"type", {"t"}}}}, {"then", kDrop}}));
  json p = Percept("s", "t", "x");
  p["type"] = json::array({"t", "u"});
  p["source"] = 7;
  p["text"] = json::object();
  auto ms = e.MatchPercept(p, 0.5, 0);
  REQUIRE(ms.size() == 1);
  CHECK(ms[0].rule->id == "any");
}

TEST_CASE("a send whose type the log would refuse is refused where the rule is loaded",
          "[reflexes]") {
  // Found by fuzz/rules_fuzz.cc: a type holding control characters parsed,
  // then every firing planned an action_enqueued the event schema refuses.
  json rule = {{"id", "bad-type"},
               {"then", {{{"send", {{"effector", "log"}, {"type", "ac\x7f\x7fk"},
                                    {"payload", json::object()}}}}}}};
  auto parsed = ParseRule(rule, Ctx());
  REQUIRE_FALSE(parsed.ok());
  CHECK_THAT(parsed.status().message(), Catch::Contains("then[0].send.type: must be a name"));
}

TEST_CASE("a thousand rules in many buckets still match exactly", "[reflexes]") {
  ReflexEngine e;
  for (const json& r : GenerateRules(1000, {"log"})) (void)e.Put(Parse(r));
  // GenerateRules makes rule i watch source "s<i%50>", type "t<i%20>" and a
  // word "w<i>"; only rule 123 matches this percept.
  auto ms = e.MatchPercept(Percept("s23", "t3", "something w123 happened"), 0.5, 0);
  REQUIRE(ms.size() == 1);
  CHECK(ms[0].rule->id == "rule-123");
}

TEST_CASE("a source or type named twice, or \"*\" with others, fires once", "[reflexes]") {
  ReflexEngine e;
  (void)e.Put(Parse({{"id", "twice"}, {"when", {{"type", {"a", "a"}}}}, {"then", kDrop}}));
  (void)e.Put(Parse({{"id", "stars"}, {"when", {{"source", {"*", "*"}}, {"type", {"*", "a"}}}}, {"then", kDrop}}));
  (void)e.Put(Parse({{"id", "pat"}, {"when", {{"type", {"a", "*", "a"}}, {"pattern", "x"}}}, {"then", kDrop}}));
  CHECK(Ids(e.MatchPercept(Percept("s", "a", "x"), 0.5, 0)) == std::vector<std::string>{"pat", "stars", "twice"});
  // A percept whose own source or type is "*" meets the "*" buckets once.
  CHECK(Ids(e.MatchPercept(Percept("*", "*", "x"), 0.5, 0)) == std::vector<std::string>{"pat", "stars"});
}

TEST_CASE("a pattern too big for an RE2::Set is matched with its own RE2, never crashing",
          "[reflexes]") {
  // RE2 accepts this pattern alone, but an RE2::Set holding it fails to
  // compile -- and libre2 2022-06-01 segfaults matching a set in that state.
  const std::string big = "\\w{1000}\\pL{200}";
  ReflexEngine e;
  (void)e.Put(Parse({{"id", "boom"}, {"when", {{"source", "boom"}, {"pattern", big}}}, {"then", kDrop}}));
  for (int i = 0; i < 300; ++i) {  // neighbours in the same bucket: prefiltered ...
    (void)e.Put(Parse({{"id", "n" + std::to_string(i)},
                       {"when", {{"source", "boom"}, {"pattern", "\\bn" + std::to_string(i) + "\\b"}}},
                       {"then", kDrop}}));
    // ... and with no literal to filter on ("q" is too short): through sets.
    (void)e.Put(Parse(
        {{"id", "u" + std::to_string(i)},
         {"when", {{"source", "boom"}, {"pattern", "^(?:\\S+ ){" + std::to_string(i) + "}q$"}}},
         {"then", kDrop}}));
  }
  auto st = e.index_stats();
  CHECK(st.single_rules == 1);
  CHECK(st.prefiltered == 300);
  CHECK(st.sets >= 2);  // 300 unfiltered neighbours need two sets
  CHECK(e.MatchPercept(Percept("boom", "t", "short text"), 0.5, 0).empty());
  CHECK(Ids(e.MatchPercept(Percept("boom", "t", "a b q"), 0.5, 0)) ==
        std::vector<std::string>{"u2"});
  CHECK(Ids(e.MatchPercept(Percept("boom", "t", "n7 and n299"), 0.5, 0)) == std::vector<std::string>{"n299", "n7"});
  CHECK(Ids(e.MatchPercept(Percept("boom", "t", std::string(1200, 'a')), 0.5, 0)) ==
        std::vector<std::string>{"boom"});
  CHECK(Ids(e.MatchPercept(Percept("boom", "t", "n5 " + std::string(1200, 'z')), 0.5, 0)) ==
        std::vector<std::string>{"boom", "n5"});
}

TEST_CASE("ten thousand rules in one bucket match exactly as their own patterns do",
          "[reflexes]") {
  ReflexEngine e;
  std::vector<Rule> rules;
  for (const json& r : GenerateRules(10000, {"log"}, /*sources=*/1, /*types=*/1)) rules.push_back(Parse(r));
  for (const Rule& r : rules) (void)e.Put(r);
  auto st = e.index_stats();
  CHECK(st.buckets == 1);
  CHECK(st.single_rules == 0);
  CHECK(st.prefiltered == 10000);  // each has its word as an atom: no set to scan
  CHECK(st.sets == 0);
  const std::string texts[] = {"something w123 happened", "w0 then w9999 and w5000x", "nothing at all",
                               "w42", "w7w8 w77 w777 w7777 w77777", ""};
  for (const std::string& text : texts) {
    INFO(text);
    std::vector<std::string> want;
    for (const Rule& r : rules)
      if (RE2::PartialMatch(text, *r.regex)) want.push_back(r.id);
    auto ms = e.MatchPercept(Percept("s0", "t0", text), 0.5, 0);
    std::vector<std::string> got = Ids(ms);
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    CHECK(got == want);
  }
  // Spot checks, so the comparison above is not vacuous.
  auto ms = e.MatchPercept(Percept("s0", "t0", "w0 then w9999 and w5000x"), 0.5, 0);
  CHECK(Ids(ms) == std::vector<std::string>{"rule-9999", "rule-0"});  // priority 3, then 0
  CHECK(ms[0].captures["rest"] == " and w5000x");
}

namespace {

// What the engine must answer for `text`: each rule whose own regex finds a
// match, with the captures that regex gives (searched unanchored, as RE2
// matches a rule alone).
std::map<std::string, std::map<std::string, std::string>> Expected(const std::vector<Rule>& rules,
                                                                   const std::string& text) {
  std::map<std::string, std::map<std::string, std::string>> out;
  for (const Rule& r : rules) {
    const RE2& re = *r.regex;
    int n = re.NumberOfCapturingGroups() + 1;
    std::vector<re2::StringPiece> sub(static_cast<size_t>(n));
    if (!re.Match(text, 0, text.size(), RE2::UNANCHORED, sub.data(), n)) continue;
    auto& caps = out[r.id];
    caps["0"] = std::string(sub[0]);
    for (const auto& [name, index] : re.NamedCapturingGroups())
      if (sub[static_cast<size_t>(index)].data())
        caps[name] = std::string(sub[static_cast<size_t>(index)]);
  }
  return out;
}

std::map<std::string, std::map<std::string, std::string>> Got(const std::vector<Match>& ms) {
  std::map<std::string, std::map<std::string, std::string>> out;
  for (const Match& m : ms) out[m.rule->id] = m.captures;
  return out;
}

}  // namespace

TEST_CASE("random patterns and texts: the engine finds exactly what each rule's own regex finds",
          "[reflexes]") {
  // Words with and without case, digits, and runes that fold to ASCII (ſ, K)
  // or are not ASCII at all (é), so patterns with literal atoms, without
  // any, case-insensitive ones, anchors and alternations all meet texts
  // that match them and texts that nearly do.
  const std::vector<std::string> words = {"error",
                                          "Error",
                                          "timeout",
                                          "w1",
                                          "w12",
                                          "w123",
                                          "ab",
                                          "AB",
                                          "caf\xC3\xA9",
                                          "\xC5\xBF"
                                          "sl",
                                          "\xE2\x84\xAA"
                                          "elvin",
                                          "x",
                                          "7"};
  const std::vector<std::string> pieces = {
      "error",     "(?i:error)",  "timeout", "w1",         "w12\\b", "\\bw123\\b",
      "(?:ab|cd)", "[a-c]",       "\\d+",    ".*",         ".",      "\\s*",
      "(?i)ab",    "caf\xC3\xA9", "(?i)ssl", "(?i)kelvin", "\\w+",   "(?:x|7)?"};
  std::mt19937 rng(25);
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  std::vector<Rule> rules;
  for (int i = 0; i < 400; ++i) {
    std::string p;
    if (rng() % 6 == 0) p += "^";
    int parts = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < parts; ++k) {
      std::string piece = pick(pieces);
      if (rng() % 4 == 0) piece = "(?P<g" + std::to_string(k) + ">" + piece + ")";
      if (rng() % 5 == 0) piece += "|" + pick(pieces);
      p += rng() % 3 == 0 ? "(?:" + piece + ")" : piece;
      if (k + 1 < parts && rng() % 2) p += " ";
    }
    if (rng() % 6 == 0) p += "$";
    // Rules spread over a few buckets, "*" among them.
    const char* source = rng() % 3 == 0 ? "*" : (rng() % 2 ? "a" : "b");
    json rule = {{"id", "r" + std::to_string(i)},
                 {"when", {{"source", source}, {"pattern", p}}},
                 {"then", kDrop}};
    auto parsed = ParseRule(rule, Ctx());
    if (parsed.ok()) rules.push_back(std::move(parsed).value());
  }
  REQUIRE(rules.size() > 300);
  ReflexEngine e;
  for (const Rule& r : rules) REQUIRE(e.Put(r).ok());
  auto st = e.index_stats();
  CHECK(st.prefiltered > 0);  // both ways of finding a pattern are exercised
  CHECK(st.sets > 0);
  size_t matched = 0;
  for (int t = 0; t < 400; ++t) {
    std::string text;
    int n = static_cast<int>(rng() % 6);
    for (int k = 0; k < n; ++k) text += (k ? " " : "") + pick(words);
    if (t % 50 == 0) text += "\xFF" + pick(words);  // not UTF-8
    const std::string source = t % 2 ? "a" : "b";
    std::vector<Rule> in_bucket;
    for (const Rule& r : rules)
      if (r.sources[0] == "*" || r.sources[0] == source) in_bucket.push_back(r);
    auto want = Expected(in_bucket, text);
    INFO("text: " << text);
    CHECK(Got(e.MatchPercept(Percept(source, "t", text), 0.5, 0)) == want);
    matched += want.size();
  }
  CHECK(matched > 1000);  // not a comparison of empty answers
}

TEST_CASE("texts longer than the anchored limit, and patterns that do not wrap, match exactly",
          "[reflexes]") {
  std::vector<Rule> rules = {
      Parse({{"id", "word"}, {"when", {{"pattern", "\\bneedle(?P<n>\\d+)"}}}, {"then", kDrop}}),
      // \Q quotes to the end, so in a group it would swallow the ")": this
      // rule keeps its own regex.
      Parse({{"id", "quoted"}, {"when", {{"pattern", "x\\Q(y"}}}, {"then", kDrop}}),
      Parse({{"id", "digits"}, {"when", {{"pattern", "^\\d+$"}}}, {"then", kDrop}}),
  };
  ReflexEngine e;
  for (const Rule& r : rules) REQUIRE(e.Put(r).ok());
  const std::string long_pad(ReflexEngine::kAnchoredTextMax, 'z');
  for (const std::string& text :
       {std::string("a needle42 b"), long_pad + " needle7", "needle1 " + long_pad,
        std::string("ax(y"), long_pad + "x(y", std::string("12345"),
        std::string(ReflexEngine::kAnchoredTextMax + 1, '9')}) {
    INFO(text.substr(0, 20) << "... (" << text.size() << " bytes)");
    CHECK(Got(e.MatchPercept(Percept("s", "t", text), 0.5, 0)) == Expected(rules, text));
  }
  auto ms = e.MatchPercept(Percept("s", "t", long_pad + " needle7 and needle8"), 0.5, 0);
  REQUIRE(ms.size() == 1);
  CHECK(ms[0].captures["0"] == "needle7");
  CHECK(ms[0].captures["n"] == "7");
  CHECK(Ids(e.MatchPercept(Percept("s", "t", "ax(y"), 0.5, 0)) ==
        std::vector<std::string>{"quoted"});
}

}  // namespace engine_test
