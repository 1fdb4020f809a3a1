// Provenance: actor and reason on the events that change the pools.
#include <catch2/catch.hpp>

#include "state/commands.h"
#include "state/provenance.h"

// This file's own namespace: test programs compile in unity batches.
namespace provenance_test {

using namespace limbic;
using namespace limbic::state;

TEST_CASE("attributed events take an optional actor (a name) and reason, others are untouched") {
  const json action = {{"action_id", "a-1"}, {"effector", "log"}, {"action_type", "ack"},
                       {"payload", 1}, {"idempotency_key", "k"}};
  json with = action;
  with["actor"] = "mcp:claude-code";
  with["reason"] = "the user asked";
  CHECK(ValidateEventFields(EventType::kActionEnqueued, action).ok());
  CHECK(ValidateEventFields(EventType::kActionEnqueued, with).ok());
  with["actor"] = "";
  Status empty = ValidateEventFields(EventType::kActionEnqueued, with);
  CHECK_THAT(empty.message(), Catch::Contains("action_enqueued.actor: must be a name"));
  with["actor"] = "line\nbreak";
  CHECK_FALSE(ValidateEventFields(EventType::kActionEnqueued, with).ok());
  with["actor"] = "cli";
  with["reason"] = 7;
  CHECK_THAT(ValidateEventFields(EventType::kActionEnqueued, with).message(),
             Catch::Contains("action_enqueued.reason: must be a string"));

  for (EventType t : AllEventTypes()) {
    // Every type that changes a percept, thread, action, arousal or rule is attributed.
    std::string name(EventTypeName(t));
    bool changes_pools = name.starts_with("percept_") || name.starts_with("thread_") ||
                         name.starts_with("action") || name.starts_with("arousal_");
    if (changes_pools) CHECK(IsAttributed(t));
  }
  CHECK_FALSE(IsAttributed(EventType::kReflexFired));
  CHECK_FALSE(IsAttributed(EventType::kMemoryStored));

  std::vector<Event> events = {
      Event{0, 0, EventType::kPerceptProcessed, {{"percept_id", "p-1"}}},
      Event{0, 0, EventType::kPerceptDropped, {{"percept_id", "p-2"}, {"actor", "reflex:r"}, {"reason", "noise"}}},
      Event{0, 0, EventType::kReflexFired, {{"reflex_id", "r"}, {"caused", json::array()}}}};
  Attribute(events, "cli", "tidying");
  CHECK(events[0].fields["actor"] == "cli");
  CHECK(events[0].fields["reason"] == "tidying");
  CHECK(events[1].fields["actor"] == "reflex:r");  // kept: who planned it
  CHECK(events[1].fields["reason"] == "noise");
  CHECK_FALSE(events[2].fields.contains("actor"));
}

TEST_CASE("a request's reason is kept in every event it writes, and a body cannot name the actor") {
  auto created = BuildThreadCreate(
      {{"goal", "answer dana"}, {"from_percept", "p-1"}, {"reason", "dana is waiting"}}, 5);
  REQUIRE(created.ok());
  REQUIRE(created->size() == 2);  // thread_created, percept_assigned
  for (const Event& e : *created) CHECK(e.fields["reason"] == "dana is waiting");
  auto enqueued = BuildActionEnqueue({{"effector", "log"}, {"type", "ack"}, {"require_approval", true}}, 9);
  REQUIRE(enqueued.ok());
  CHECK(enqueued->front().fields["require_approval"] == true);
  auto not_bool = BuildActionEnqueue({{"effector", "log"}, {"type", "ack"}, {"require_approval", "yes"}}, 9);
  CHECK_THAT(not_bool.status().message(), Catch::Contains("field \"require_approval\": must be true or false"));
  auto actor = BuildPerceptProcess("p-1", {{"actor", "someone-else"}});
  CHECK_THAT(actor.status().message(), Catch::Contains("unknown field \"actor\""));
  auto approve = BuildActionApprove("a-9", {{"reason", "ok by me"}});
  REQUIRE(approve.ok());
  CHECK(approve->front().type == EventType::kActionApproved);
  CHECK(approve->front().fields["reason"] == "ok by me");
  CHECK_FALSE(BuildActionReject("a 9", json::object()).ok());
}

TEST_CASE("an actor from outside must be a name") {
  CHECK(CheckActor("http").ok());
  CHECK(CheckActor("mcp:Claude Desktop").ok());
  CHECK(CheckActor("mind:\xd7\xa2\xd7\x91\xd7\xa8\xd7\x99\xd7\xaa").ok());  // Hebrew letters
  CHECK_THAT(CheckActor("").message(), Catch::Contains("1-256 bytes") && Catch::EndsWith("empty"));
  CHECK_THAT(CheckActor(std::string(257, 'a')).message(), Catch::EndsWith("257 bytes"));
  CHECK(CheckActor("a\tb").message() ==
        "actor: must be a name (1-256 bytes of UTF-8, no control or bidi-control characters); "
        "U+0009 (a control character) at byte 1");
  CHECK_THAT(CheckActor("bob\xc2\x85").message(),
             Catch::EndsWith("U+0085 (a control character) at byte 3"));
  CHECK_THAT(CheckActor("\xe2\x80\xae" "evil").message(),
             Catch::EndsWith("U+202E (a bidi control) at byte 0"));
  CHECK_THAT(CheckActor("x\xff").message(), Catch::EndsWith("not UTF-8 at byte 1"));
}

}  // namespace provenance_test
