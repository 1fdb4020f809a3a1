// An Engine on a scratch dir with a manual clock, for tests that commit
// commands and raw events and then look at the state or the log.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "state/commands.h"
#include "state/engine.h"
#include "test_util.h"

namespace limbic::testing {

struct EngineFixture {
  ScratchDir dir;
  ManualClock clock{*ParseTime("2026-11-01T09:00:00Z")};
  std::unique_ptr<state::Engine> engine;

  // The state dir is dir / `state_dir`.
  explicit EngineFixture(const std::string& state_dir = "state") {
    state::EngineOptions o;
    o.state_dir = dir / state_dir;
    o.clock = &clock;
    auto e = state::Engine::Open(o);
    INFO(e.status().ToString());
    REQUIRE(e.ok());
    engine = std::move(e).value();
  }
  void Commit(Result<state::Events> ev) {
    INFO(ev.status().ToString());
    REQUIRE(ev.ok());
    Status s = engine->Commit(*ev);
    INFO(s.ToString());
    REQUIRE(s.ok());
  }
  // An event as the runtime writes it (outbox, reflexes), not a command's.
  void Raw(state::EventType type, nlohmann::json fields) {
    state::Event e;
    e.type = type;
    e.fields = std::move(fields);
    Commit(state::Events{e});
  }
  size_t Count(state::Pool pool) { return *engine->projection().Count(pool); }
};

}  // namespace limbic::testing
