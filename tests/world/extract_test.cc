// The heuristic extractor: a hand-checked daily log, structured events,
// and inputs that must not break it.
#include "world/extract.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "base/time.h"

// This file's own namespace: test programs compile in unity batches.
namespace extract_test {

using namespace limbic::world;
using limbic::ParseTime;
using limbic::state::Event;
using limbic::state::EventType;
using nlohmann::json;

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Extraction Extract(const ExtractInput& input) {
  auto r = MakeHeuristicExtractor()->Extract(input);
  REQUIRE(r.ok());
  CHECK(r->extractor == "heuristic");
  CHECK(r->note.empty());
  return std::move(r).value();
}

Extraction ExtractText(const std::string& text, const std::string& date = "2026-11-20") {
  return Extract({date, "test", text, {}});
}

// "type name | fact | fact"
std::vector<std::string> Entities(const Extraction& x) {
  std::vector<std::string> out;
  for (const Entity& e : x.entities) {
    std::string s = std::string(TypeName(e.type)) + " " + e.name;
    for (const std::string& f : e.facts) s += " | " + f;
    out.push_back(s);
  }
  return out;
}

// "subject -predicate-> object @date"
std::vector<std::string> Triplets(const Extraction& x) {
  std::vector<std::string> out;
  for (const Triplet& t : x.triplets)
    out.push_back(t.subject + " -" + t.predicate + "-> " + t.object + " @" + t.date);
  return out;
}

// "date text [a; b]"
std::vector<std::string> Events(const Extraction& x) {
  std::vector<std::string> out;
  for (const WorldEvent& e : x.events) {
    std::string names;
    for (const std::string& n : e.entities) names += (names.empty() ? "" : "; ") + n;
    out.push_back(e.date + " " + e.text + " [" + names + "]");
  }
  return out;
}

const Entity* Find(const Extraction& x, const std::string& name) {
  for (const Entity& e : x.entities)
    if (e.name == name) return &e;
  return nullptr;
}

Event MakeEvent(EventType type, const std::string& ts, json fields) {
  Event e;
  e.type = type;
  auto t = ParseTime(ts);
  REQUIRE(t.ok());
  e.ts = *t;
  e.fields = std::move(fields);
  return e;
}

}  // namespace

TEST_CASE("heuristic extraction of a sample daily log checked by hand", "[world][extract]") {
  const Extraction x =
      ExtractText(ReadFile(LIMBIC_WORLD_TEST_DATA "/sample-daily.md"), "2026-11-19");
  CHECK(Entities(x) == std::vector<std::string>{
                           "person Alice Chen",
                           "person Bob Martinez",
                           "company Acme Corp",
                           "person Bob",  // a given name
                           "tool Terraform",
                           "project acme/billing",
                           "person carol",
                           "tool postgresql.org",
                           "tool Redis | is an in-memory data store",
                           "person Dana Scully",
                           "company Initech Labs",
                           "project acme/ingest",
                           "concept infra",
                           "project Project Atlas",
                           "person Eve Moneypenny",
                           "tool Kubernetes",
                           "tool Kafka",
                           "person Frank",
                           "company Globex",
                           "person Grace Hopper",
                           "project Compiler Design",  // follows "on"
                           "tool Snowflake",
                           "person Ivan Petrov",
                           "company Umbrella",
                           "tool GitLab",
                           "project infra/runner",
                           "person Ludwig van Beethoven",
                           "concept Bank of America | is a client",
                           "person Judy",
                           "concept billing-v2",
                       });
  CHECK(Triplets(x) == std::vector<std::string>{
                           "Alice Chen -joined-> Acme Corp @2026-11-20",
                           "Bob -uses-> Terraform @2026-11-20",
                           "Dana Scully -works_at-> Initech Labs @2026-11-20",
                           "Project Atlas -depends_on-> Kafka @2026-11-20",
                           "Bob -reviewed-> acme/billing @2026-11-21",
                           "Ivan Petrov -works_for-> Umbrella @2026-11-21",
                       });
  CHECK(Events(x) ==
        std::vector<std::string>{
            "2026-11-20 Standup with Alice Chen and Bob Martinez about the billing migration. "
            "[Alice Chen; Bob Martinez]",
            "2026-11-20 Alice Chen joined Acme Corp last month. [Alice Chen; Acme Corp]",
            "2026-11-20 Bob uses Terraform for the staging cluster. [Bob; Terraform]",
            "2026-11-20 Reviewed https://github.com/acme/billing/pull/42 with @carol. "
            "[acme/billing; carol]",
            "2026-11-20 Read https://www.postgresql.org/docs/current/ about partitioning. "
            "[postgresql.org]",
            "2026-11-20 Redis is an in-memory data store, used for sessions. [Redis]",
            "2026-11-20 Dana Scully works at Initech Labs now. [Dana Scully; Initech Labs]",
            "2026-11-20 Moved the ingest job to acme/ingest and tagged it #infra. [acme/ingest; "
            "infra]",
            "2026-11-20 Working on Project Atlas with [[Eve Moneypenny]] and [[Kubernetes]]. "
            "[Project Atlas; Eve Moneypenny; Kubernetes]",
            "2026-11-20 Project Atlas depends on Kafka. [Project Atlas; Kafka]",
            "2026-11-21 Frank said the on-call rotation needs a rewrite. [Frank]",
            "2026-11-21 Bob reviewed acme/billing and fixed the flaky test. [Bob; acme/billing]",
            "2026-11-21 Meeting at Globex about the Kafka upgrade. [Globex; Kafka]",
            "2026-11-21 Pairing with Grace Hopper on [[Compiler Design|compilers]]. "
            "[Grace Hopper; Compiler Design]",
            "2026-11-21 Migrated the reports to Snowflake, see src/reports.py and/or docs. "
            "[Snowflake]",
            "2026-11-21 Ivan Petrov works for Umbrella since spring. [Ivan Petrov; Umbrella]",
            "2026-11-21 Tried the GitLab runner from https://gitlab.com/infra/runner today. "
            "[GitLab; infra/runner]",
            "2026-11-21 Ludwig van Beethoven said Bank of America is a client. "
            "[Ludwig van Beethoven; Bank of America]",
            "2026-11-21 Release notes cc: Judy [Judy]",
            "2026-11-21 Ask Alice Chen about #billing-v2 and issue #123 on 11/22. "
            "[Alice Chen; billing-v2]",
        });
  // Left out on purpose: the fenced code's "Ignored Person", "**Deploy**"
  // (a sentence's first word seen nowhere else), src/reports.py, and/or,
  // #123, 11/22.
  CHECK(Find(x, "Ignored Person") == nullptr);
  CHECK(Find(x, "Deploy") == nullptr);
}

TEST_CASE("structured events give entities triplets and dated events", "[world][extract]") {
  ExtractInput in{"2026-11-22", "day:2026-11-22", "", {}};
  in.events.push_back(MakeEvent(
      EventType::kThreadCreated, "2026-11-21T23:59:00.000Z",
      {{"thread_id", "t-1"},
       {"goal", "Fix the crash on start reported against the billing service before Friday"},
       {"salience", 0.5}}));
  in.events.push_back(MakeEvent(
      EventType::kPerceptArrived, "2026-11-22T09:00:00.000Z",
      {{"percept_id", "p-2"},
       {"source", "github"},
       {"percept_type", "issues.opened"},
       {"intensity", 0.7},
       {"text", "Crash on start when Redis is down, see Dana Scully's notes"},
       {"data",
        {{"user", "alice"}, {"repo", "acme/billing"}, {"action", "opened"}, {"number", 12}}}}));
  in.events.push_back(MakeEvent(EventType::kPerceptArrived, "2026-11-22T10:00:00.000Z",
                                {{"percept_id", "p-3"},
                                 {"source", "slack"},
                                 {"percept_type", "message.posted"},
                                 {"intensity", 0.4},
                                 {"data",
                                  {{"sender", {{"name", "Carol Diaz"}}},
                                   {"channel", "#ops"},
                                   {"company", "Acme Corp"},
                                   {"text", "deploy done"}}}}));
  in.events.push_back(MakeEvent(EventType::kPerceptArrived, "2026-11-22T11:00:00.000Z",
                                {{"percept_id", "p-4"},
                                 {"source", "cron"},
                                 {"percept_type", "tick"},
                                 {"intensity", 0.1},
                                 {"data",
                                  {{"author", "Bob Stone <bob@example.com>"},
                                   {"repository", {{"full_name", "acme/ingest"}}},
                                   {"pr", {{"number", 7}}},
                                   {"action", "not a word!"}}}}));
  in.events.push_back(MakeEvent(EventType::kThreadCompleted, "2026-11-22T12:00:00.000Z",
                                {{"thread_id", "t-1"}, {"outcome", "fixed in 1.4.2"}}));
  in.events.push_back(
      MakeEvent(EventType::kThreadCompleted, "2026-11-22T13:00:00.000Z", {{"thread_id", "t-9"}}));
  in.events.push_back(MakeEvent(
      EventType::kThreadUpdated, "2026-11-22T14:00:00.000Z",
      {{"thread_id", "t-8"}, {"status", "complete"}, {"state", {{"outcome", "shipped"}}}}));
  in.events.push_back(MakeEvent(EventType::kThreadUpdated, "2026-11-22T15:00:00.000Z",
                                {{"thread_id", "t-8"}, {"salience", 0.9}}));  // not a completion
  const Extraction x = Extract(in);
  CHECK(Entities(x) == std::vector<std::string>{
                           "tool GitHub",  // the goal names nothing: it is not a project either
                           "person alice",
                           "project acme/billing",
                           "tool Redis",
                           "person Dana Scully",
                           "tool Slack",
                           "person Carol Diaz",
                           "concept ops",
                           "company Acme Corp",
                           "tool cron",
                           "person Bob Stone",
                           "project acme/ingest",
                       });
  CHECK(Triplets(x) == std::vector<std::string>{
                           "alice -opened-> acme/billing#12 @2026-11-22",
                           "alice -mentioned-> Redis @2026-11-22",
                           "alice -mentioned-> Dana Scully @2026-11-22",
                           "Carol Diaz -posted_in-> ops @2026-11-22",
                           "Bob Stone -tick-> acme/ingest#7 @2026-11-22",
                       });
  CHECK(
      Events(x) ==
      std::vector<std::string>{
          "2026-11-21 started: Fix the crash on start reported against the billing service before "
          "Friday []",
          "2026-11-22 Crash on start when Redis is down, see Dana Scully's notes "
          "[GitHub; alice; acme/billing; Redis; Dana Scully]",
          "2026-11-22 deploy done [Slack; Carol Diaz; ops; Acme Corp]",
          "2026-11-22 cron/tick [cron; Bob Stone; acme/ingest]",
          "2026-11-22 completed: Fix the crash on start reported against the billing service "
          "before Friday: fixed in 1.4.2 []",
          "2026-11-22 completed: t-9 []",
          "2026-11-22 completed: t-8: shipped []",
      });
}

TEST_CASE("structured fields outrank text and specific types outrank concept", "[world][extract]") {
  ExtractInput in{"2026-11-22",
                  "t",
                  "- Working on Atlas today.\n- A page about [[Nova]].\n- Lunch with Nova again.\n",
                  {}};
  in.events.push_back(MakeEvent(EventType::kPerceptArrived, "2026-11-22T09:00:00.000Z",
                                {{"percept_id", "p-1"},
                                 {"source", "email"},
                                 {"percept_type", "received"},
                                 {"intensity", 0.5},
                                 {"data", {{"from", "atlas"}}}}));
  const Extraction x = Extract(in);
  REQUIRE(Find(x, "atlas") != nullptr);
  CHECK(Find(x, "atlas")->type ==
        EntityType::kPerson);          // data.from, though "on Atlas" says project
  CHECK(Find(x, "Atlas") == nullptr);  // one entity, first spelling
  REQUIRE(Find(x, "Nova") != nullptr);
  CHECK(Find(x, "Nova")->type == EntityType::kPerson);  // "with Nova" beats the wikilink's concept
}

TEST_CASE("entities triplets and facts are kept once", "[world][extract]") {
  const Extraction x = ExtractText(
      "- Alice Chen joined Acme Corp.\n- [[alice chen]] joined [[ACME CORP]].\n"
      "- Redis is a cache.\n- Redis is a cache.\n");
  CHECK(Entities(x) == std::vector<std::string>{"person Alice Chen", "company Acme Corp",
                                                "tool Redis | is a cache"});
  CHECK(Triplets(x) == std::vector<std::string>{"Alice Chen -joined-> Acme Corp @2026-11-20"});
  CHECK(x.events.size() == 4);  // events are not deduplicated: each line happened
  CHECK(Events(x)[1] == "2026-11-20 [[alice chen]] joined [[ACME CORP]]. [Alice Chen; Acme Corp]");
}

TEST_CASE("a sentence's first word needs a second sighting or a rule", "[world][extract]") {
  CHECK(ExtractText("Deploy went fine today.").entities.empty());
  CHECK(Entities(ExtractText("Zed went home. Then we met Zed again.")) ==
        std::vector<std::string>{"person Zed"});
  CHECK(Entities(ExtractText("Zed said it went fine.")) == std::vector<std::string>{"person Zed"});
  CHECK(Entities(ExtractText("Python is slow here.")) == std::vector<std::string>{"tool Python"});
  CHECK(Entities(ExtractText("Monday we met The Doctor.")) ==
        std::vector<std::string>{"person Doctor"});
}

TEST_CASE("names of each kind keep slashes and dots", "[world][extract]") {
  const Extraction x = ExtractText(
      "see vercel/next.js and github.com/acme/api.v2 and https://github.com/orgs/acme and "
      "http://127.0.0.1:8080/x and http://localhost/y and @jane.doe and [[a/b.c]]");
  CHECK(Entities(x) == std::vector<std::string>{"project vercel/next.js", "project acme/api.v2",
                                                "tool github.com", "person jane.doe",
                                                "concept a/b.c"});
}

TEST_CASE("prose and paths with a slash are not repos", "[world][extract]") {
  const Extraction x = ExtractText(
      "and/or he/she read/write CI/CD 11/22 src/main.cc docs/index.md w/o /usr/lib ./a/b x/y "
      "client/server");
  CHECK(x.entities.empty());
}

TEST_CASE("headings with a date date what follows", "[world][extract]") {
  const Extraction x = ExtractText(
      "- Met Alice Chen first.\n# Notes for 2026-11-25\n- Met Alice Chen again.\n## 2026-02-30\n- "
      "Met Alice Chen.\n");
  REQUIRE(x.events.size() == 3);
  CHECK(x.events[0].date == "2026-11-20");
  CHECK(x.events[1].date == "2026-11-25");
  CHECK(x.events[2].date == "2026-11-25");  // not a real date: no change
}

TEST_CASE("code fences are skipped and an unclosed one runs to the end", "[world][extract]") {
  const Extraction x = ExtractText(
      "Met Alice Chen.\n```\nMet Bob Stone.\n```\nMet Carol Diaz.\n~~~\nMet Dan Brown.\n");
  CHECK(Entities(x) == std::vector<std::string>{"person Alice Chen", "person Carol Diaz"});
}

TEST_CASE("empty input gives an empty extraction", "[world][extract]") {
  for (const char* text : {"", "\n\n\n", "   ", "# \n- \n* [ ] \n> "}) {
    const Extraction x = ExtractText(text);
    CHECK(x.entities.empty());
    CHECK(x.triplets.empty());
    CHECK(x.events.empty());
  }
}

TEST_CASE("a bad input date is an error naming the source", "[world][extract]") {
  auto r = MakeHeuristicExtractor()->Extract({"2026-13-01", "notes.md", "Met Alice Chen.", {}});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsInvalidArgument());
  CHECK_THAT(r.status().message(), Catch::Contains("notes.md") && Catch::Contains("2026-13-01"));
}

TEST_CASE("unbalanced markup does not break extraction", "[world][extract]") {
  const Extraction x = ExtractText(
      "[[ unclosed link to Alice Chen\n[[a [[Bob Stone]] ]]\n**bold without end Carol Diaz\n"
      "[[]] [[|]] [[ ]] @ # #! http:// https:// https://github.com/ [x](\n``` \n");
  CHECK(Entities(x) == std::vector<std::string>{"person Alice Chen", "person Bob Stone",
                                                "person Carol Diaz", "tool github.com"});
}

TEST_CASE("binary junk and a 5 MB line do not crash", "[world][extract]") {
  std::string junk;
  uint32_t state = 12345;
  for (int i = 0; i < 1 << 20; ++i) {
    state = state * 1103515245u + 12345u;
    junk += static_cast<char>(state >> 23);
  }
  const Extraction j = ExtractText(junk);
  for (const Entity& e : j.entities) {
    CHECK_FALSE(e.name.empty());
    CHECK(e.name.size() <= 100);
  }

  std::string line;
  while (line.size() < (5u << 20))
    line += "Alice Chen met Bob Stone at [[Acme Corp]] via https://x.io #t ";
  line += "[[" + std::string(1000, 'x');
  const Extraction x = ExtractText(line + "\n" + std::string(5u << 20, 'A'));
  CHECK(x.entities.size() == 5);
  REQUIRE(x.events.size() == 1);
  CHECK(x.events[0].text.size() <= 500);
}

TEST_CASE("a thread goal is not a project but what it names is", "[world][extract]") {
  ExtractInput in{"2026-11-22", "t", "", {}};
  in.events.push_back(MakeEvent(
      EventType::kThreadCreated, "2026-11-22T08:00:00.000Z",
      {{"thread_id", "t-2"},
       {"goal", "Investigate latency spikes in acme/payments with Priya before the Orion launch"},
       {"salience", 0.5}}));
  in.events.push_back(MakeEvent(EventType::kThreadCompleted, "2026-11-22T18:00:00.000Z",
                                {{"thread_id", "t-2"}, {"outcome", "a missing index"}}));
  const Extraction x = Extract(in);
  CHECK(Entities(x) == std::vector<std::string>{"project acme/payments", "person Priya",
                                                "project Orion"});  // "the Orion launch"
  CHECK(Events(x) == std::vector<std::string>{
                         "2026-11-22 started: Investigate latency spikes in acme/payments with "
                         "Priya before the Orion launch [acme/payments; Priya; Orion]",
                         "2026-11-22 completed: Investigate latency spikes in acme/payments with "
                         "Priya before the Orion launch: a missing index [acme/payments; Priya; "
                         "Orion]",
                     });
}

}  // namespace extract_test
