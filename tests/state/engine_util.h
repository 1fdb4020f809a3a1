// Helpers for tests that drive a state::Engine.
#pragma once

#include <catch2/catch.hpp>

#include "state/commands.h"
#include "state/engine.h"

namespace limbic::testing {

// Commits events a test built; any error fails the test, naming it.
inline void MustCommit(state::Engine& e, Result<state::Events> ev) {
  INFO(ev.status().ToString());
  REQUIRE(ev.ok());
  Status s = e.Commit(*ev);
  INFO(s.ToString());
  REQUIRE(s.ok());
}

}  // namespace limbic::testing
