// The heuristic extractor's rules for names that need more than their own
// form: people by given name or title, roles that name no one, companies
// and projects by the words around them, and the links between two names
// that type them and state triplets (extract.h, docs/world.md).
#include <catch2/catch.hpp>

#include "world/extract.h"

// This file's own namespace: test programs compile in unity batches.
namespace extract_rules_test {

using namespace limbic::world;

namespace {

Extraction X(const std::string& text) {
  auto r = MakeHeuristicExtractor()->Extract({"2026-03-02", "test", text, {}});
  REQUIRE(r.ok());
  return std::move(r).value();
}

// "type name", in order of first mention.
std::vector<std::string> Entities(const std::string& text) {
  std::vector<std::string> out;
  for (const Entity& e : X(text).entities)
    out.push_back(std::string(TypeName(e.type)) + " " + e.name);
  return out;
}

// "subject -predicate-> object".
std::vector<std::string> Triplets(const std::string& text) {
  std::vector<std::string> out;
  for (const Triplet& t : X(text).triplets)
    out.push_back(t.subject + " -" + t.predicate + "-> " + t.object);
  return out;
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("someone from an organisation works at it", "[world][extract][rules]") {
  const std::string met = "- Met @dana from Acme Corp about the [[Orion]] migration.";
  CHECK(Entities(met) == V{"person dana", "company Acme Corp", "project Orion"});
  CHECK(Triplets(met) == V{"dana -works_at-> Acme Corp"});
  // A known tool's name is the company's when someone is from it.
  CHECK(Entities("Carlos Mendez from Stripe called.") ==
        V{"person Carlos Mendez", "company Stripe"});
  CHECK(Triplets("Carlos Mendez from Stripe called.") == V{"Carlos Mendez -works_at-> Stripe"});
  // Not from a thing, and not through "the ... team".
  CHECK(Triplets("Decided to move sessions from Memcached to Redis.").empty());
  CHECK(Entities("Decided to move sessions from Memcached to Redis.") ==
        V{"tool Memcached", "tool Redis"});
}

TEST_CASE("roles and titles name no one", "[world][extract][rules]") {
  CHECK(Entities("Call with the CTO about hiring plans for Q2.").empty());
  CHECK(Entities("Asked the CEO and the VP of Sales. The SRE on call saw TLS errors.").empty());
  CHECK(Entities("Jonas Berg joined Initech as VP of Engineering.") ==
        V{"person Jonas Berg", "company Initech"});
  CHECK(Entities("Our CTO Alice Chen agreed.") == V{"person Alice Chen"});
  // An acronym typed by its context is kept.
  CHECK(Entities("Bob Stone works at IBM.") == V{"person Bob Stone", "company IBM"});
}

TEST_CASE("a given name or a title makes a person", "[world][extract][rules]") {
  CHECK(Entities("Priya is out sick today.") == V{"person Priya"});
  CHECK(Entities("Send Hannah the numbers.") == V{"person Hannah"});
  CHECK(Entities("Talked to Ms. Novak about the renewal.") == V{"person Novak"});
  CHECK(Entities("Dr. Elena Rossi presented.") == V{"person Elena Rossi"});
  // Two capitalised words are a person's name only without everyday words.
  CHECK(Entities("Wrote up notes in [[Weekly Review]].") == V{"concept Weekly Review"});
  CHECK(Entities("Lunch with Tomás and Inês.") == V{"person Tomás", "person Inês"});
}

TEST_CASE("the words around a name make a project, a company or a tool",
          "[world][extract][rules]") {
  CHECK(Entities("Emma Larsen owns the Orion launch.") == V{"person Emma Larsen", "project Orion"});
  CHECK(Entities("Kickoff for Project Helios.\nHelios depends on the auth service.") ==
        V{"project Project Helios", "project Helios"});
  CHECK(Entities("Aisha thinks we should switch to GitHub Actions.") ==
        V{"person Aisha", "tool GitHub Actions"});
  CHECK(Entities("Acme Corp acquired Initech in January.") ==
        V{"company Acme Corp", "company Initech"});
  CHECK(Entities("Mei Tanaka moved from Globex to Acme Corp.") ==
        V{"person Mei Tanaka", "company Globex", "company Acme Corp"});
}

TEST_CASE("links between names state triplets", "[world][extract][rules]") {
  CHECK(Triplets("Emma Larsen leads the [[Atlas]] project.") == V{"Emma Larsen -leads-> Atlas"});
  CHECK(Triplets("Coffee with Olivia Brown, who works at Hooli.") ==
        V{"Olivia Brown -works_at-> Hooli"});
  CHECK(Triplets("Nadia Petrova, the new PM at Acme Corp, owns the Orion launch.") ==
        V{"Nadia Petrova -works_at-> Acme Corp", "Nadia Petrova -owns-> Orion"});
  CHECK(Triplets("Mei Tanaka moved from Globex to Acme Corp last month.") ==
        V{"Mei Tanaka -works_at-> Acme Corp"});
  CHECK(Triplets("Lumen Labs uses Rust and ClickHouse.") ==
        V{"Lumen Labs -uses-> Rust", "Lumen Labs -uses-> ClickHouse"});
  CHECK(Triplets("Ravi Shah and Lucía Gómez reviewed acme/gateway.") ==
        V{"Lucía Gómez -reviewed-> acme/gateway", "Ravi Shah -reviewed-> acme/gateway"});
  // Not a triplet: an aside closed without one, a place one moved to, a
  // coordination of different kinds.
  CHECK(Triplets("Acme Corp, Globex and Initech met.").empty());
  CHECK(Triplets("Bob Stone moved to Berlin.").empty());
  CHECK(Triplets("Alice Chen uses Redis and Bob Stone.") == V{"Alice Chen -uses-> Redis"});
}

}  // namespace extract_rules_test
