// runtime/submit.h: the one write path (build -> attribute -> policy ->
// submit) that the API, the command line, the reflexes and the sensors share.
#include "runtime/submit.h"

#include <catch2/catch.hpp>
#include <optional>

#include "../state/test_util.h"
#include "state/commands.h"
#include "state/engine.h"

using namespace limbic;
using limbic::runtime::SubmitCommand;
using limbic::runtime::Writer;
using limbic::state::Event;
using nlohmann::json;

namespace {

struct Fixture {
  limbic::testing::ScratchDir dir;
  std::unique_ptr<state::Engine> engine = Open(dir.path());
  const json effectors = {{"log", {{"kind", "log"}}},
                          {"gated", {{"kind", "log"}, {"require_approval", true}}}};

  static std::unique_ptr<state::Engine> Open(const std::string& path) {
    state::EngineOptions o;
    o.state_dir = path;
    auto e = state::Engine::Open(o);
    REQUIRE(e.ok());
    return std::move(e).value();
  }
  Result<state::Events> Enqueue(const std::string& effector) {
    return state::BuildActionEnqueue({{"effector", effector}, {"type", "t"}}, engine->next_seq());
  }
  Result<state::Events> Percept() {
    return state::BuildPerceptAdd({{"source", "s"}, {"type", "t"}}, engine->next_seq());
  }
};

// What `done` saw, if it ran.
struct Seen {
  std::optional<Status> status;
  std::vector<Event> events;
  state::Engine::Done Done() {
    return [this](const Status& s, std::span<const Event> e) {
      status = s;
      events.assign(e.begin(), e.end());
    };
  }
};

}  // namespace

TEST_CASE("a build's error is returned as it is and nothing is written", "[runtime][submit]") {
  Fixture f;
  Seen seen;
  Status s = SubmitCommand(*f.engine, Status::InvalidArgument("field \"type\": required"),
                           {"cli", &f.effectors}, seen.Done());
  CHECK(s.IsInvalidArgument());
  CHECK(s.message() == "field \"type\": required");
  REQUIRE(f.engine->WaitIdle().ok());
  CHECK_FALSE(seen.status);
  CHECK(f.engine->next_seq() == 1);
}

TEST_CASE("no events: nothing is written and done runs at once", "[runtime][submit]") {
  Fixture f;
  for (bool wait : {false, true}) {
    Seen seen;
    REQUIRE(SubmitCommand(*f.engine, state::Events{}, {"cli", nullptr, wait}, seen.Done()).ok());
    REQUIRE(seen.status);
    CHECK(seen.status->ok());
    CHECK(seen.events.empty());
  }
  CHECK(f.engine->next_seq() == 1);
  // `done` may be empty.
  CHECK(SubmitCommand(*f.engine, state::Events{}, {"cli"}, nullptr).ok());
}

TEST_CASE("the policy refuses an action for an unconfigured effector, writing nothing",
          "[runtime][submit]") {
  Fixture f;
  Seen seen;
  Status s = SubmitCommand(*f.engine, f.Enqueue("mail"), {"http", &f.effectors}, seen.Done());
  CHECK(s.IsInvalidArgument());
  CHECK(s.message() == "field \"effector\": unknown effector \"mail\" (configured: gated, log)");
  // A writer with no effectors enqueues none.
  Status none = SubmitCommand(*f.engine, f.Enqueue("log"), {"sensor:x"}, seen.Done());
  CHECK(none.message() == "field \"effector\": unknown effector \"log\" (configured: none)");
  REQUIRE(f.engine->WaitIdle().ok());
  CHECK_FALSE(seen.status);
  CHECK(f.engine->next_seq() == 1);
  // Events that enqueue nothing pass whatever the effectors.
  CHECK(SubmitCommand(*f.engine, f.Percept(), {"sensor:x"}, nullptr).ok());
}

TEST_CASE("the policy marks an action whose effector requires approval", "[runtime][submit]") {
  Fixture f;
  Seen gated, plain;
  REQUIRE(
      SubmitCommand(*f.engine, f.Enqueue("gated"), {"cli", &f.effectors, true}, gated.Done()).ok());
  REQUIRE(
      SubmitCommand(*f.engine, f.Enqueue("log"), {"cli", &f.effectors, true}, plain.Done()).ok());
  REQUIRE(gated.events.size() == 1);
  CHECK(gated.events[0].fields.value("require_approval", false));
  REQUIRE(plain.events.size() == 1);
  CHECK_FALSE(plain.events[0].fields.contains("require_approval"));
  auto action = f.engine->projection().Get(state::Pool::kActions, gated.events[0].Str("action_id"));
  REQUIRE(action.ok());
  REQUIRE(action->has_value());
  CHECK((**action)["status"] == "pending_approval");
}

TEST_CASE("the events are attributed to the writer, an event naming its actor keeps it",
          "[runtime][submit]") {
  Fixture f;
  auto events = f.Percept();
  REQUIRE(events.ok());
  auto more = state::BuildPerceptAdd({{"source", "s"}, {"type", "u"}}, f.engine->next_seq() + 1);
  REQUIRE(more.ok());
  (*more)[0].fields["actor"] = "reflex:r1";  // as a reflex's plan names it
  events->push_back((*more)[0]);
  Seen seen;
  REQUIRE(
      SubmitCommand(*f.engine, std::move(events), {"sensor:mail", &f.effectors, true}, seen.Done())
          .ok());
  REQUIRE(seen.events.size() == 2);
  CHECK(seen.events[0].Str("actor") == "sensor:mail");
  CHECK(seen.events[1].Str("actor") == "reflex:r1");
}

TEST_CASE("the loop's write completes later, the command line's before it returns",
          "[runtime][submit]") {
  Fixture f;
  Seen later, now;
  REQUIRE(SubmitCommand(*f.engine, f.Percept(), {"http", &f.effectors}, later.Done()).ok());
  CHECK_FALSE(later.status);  // durable and applied only after the engine's completions run
  REQUIRE(f.engine->WaitIdle().ok());
  REQUIRE(later.status);
  CHECK(later.status->ok());
  REQUIRE(later.events.size() == 1);
  CHECK(later.events[0].seq == 1);

  REQUIRE(SubmitCommand(*f.engine, f.Percept(), {"cli", &f.effectors, true}, now.Done()).ok());
  REQUIRE(now.status);
  REQUIRE(now.events.size() == 1);
  CHECK(now.events[0].seq == 2);
  CHECK(f.engine->applied_seq() == 2);
}

TEST_CASE("the engine's refusal is returned and done never runs", "[runtime][submit]") {
  Fixture f;
  for (bool wait : {false, true}) {
    Seen seen;
    Status s = SubmitCommand(*f.engine, state::BuildPerceptAssign("p-404", {{"thread_id", "t-1"}}),
                             {"cli", &f.effectors, wait}, seen.Done());
    CHECK_FALSE(s.ok());
    REQUIRE(f.engine->WaitIdle().ok());
    CHECK_FALSE(seen.status);
  }
  CHECK(f.engine->next_seq() == 1);
}
