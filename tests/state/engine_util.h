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

// A state dir with a bit of everything (a thread, 30 percepts, an assignment,
// arousal, an action) in several segments; returns the live digest.
inline std::string BuildState(const std::string& dir, uint64_t* seq_after_create = nullptr) {
  state::EngineOptions o;
  o.state_dir = dir;
  o.segment_bytes = 2048;  // several segments
  auto opened = state::Engine::Open(o);
  REQUIRE(opened.ok());
  state::Engine& e = **opened;
  auto commit = [&](Result<state::Events> ev) { MustCommit(e, std::move(ev)); };
  commit(state::BuildThreadCreate({{"goal", "answer"}, {"id", "t-1"}}, e.next_seq()));
  if (seq_after_create) *seq_after_create = e.applied_seq();
  for (int i = 0; i < 30; ++i)
    commit(state::BuildPerceptAdd({{"source", i % 2 ? "github" : "discord"}, {"type", "msg"},
                            {"text", "message " + std::to_string(i)}},
                           e.next_seq()));
  commit(state::BuildPerceptAssign("p-2", {{"thread_id", "t-1"}}));
  commit(state::BuildPerceptProcess("p-3"));
  commit(state::BuildThreadUpdate("t-1", {{"status", "paused"}, {"state", {{"phase", "wait"}}}}));
  commit(state::BuildArousalSet({{"level", 0.7}, {"factors", {{"user_waiting", true}}}}));
  commit(state::BuildActionEnqueue({{"effector", "log"}, {"type", "ack"}}, e.next_seq()));
  return *e.projection().Digest();
}

}  // namespace limbic::testing
