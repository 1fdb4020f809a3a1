// The one write path from a command's events to the engine:
//   build -> attribute -> policy -> submit.
// A writer builds the events of a request (state::Build*, a reflex's plan);
// SubmitCommand refuses what the build refused, writes nothing when there is
// nothing to write, checks enqueued actions against the configured effectors
// (effectors::PrepareEnqueued), attributes the events to the writer
// (state::Attribute) and submits them (Engine::Submit, or Engine::Commit for
// the command line, which runs no loop). Every such writer goes through it:
// the HTTP API (Api::Commit), the command line (CommitAndReport, an offline
// `action enqueue`), the reflexes (Runtime::FireReflexes), the sensors'
// sink (Runtime::MakeSensors), and the loop's own attributed writes (the
// rules file's sync, the outbox's records and pruning); so each attributes
// alike, and none enqueues an action that the runtime would refuse.
//
// Thread-safety: the engine's owner thread, as Engine::Submit.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "state/commands.h"
#include "state/engine.h"

namespace limbic::runtime {

//! Who writes, and how: the parts of the write path that differ by writer.
struct Writer {
  //! Set on each attributed event that names no actor yet (state/provenance.h):
  //! "cli", "http" or an X-Limbic-Actor, "sensor:<name>", "reflex:<id>".
  std::string actor;
  //! The configured effectors (the config's "effectors" object) that each
  //! enqueued action must name (effectors::PrepareEnqueued); null when none
  //! is configured, so that any action is refused: for a writer that
  //! enqueues none. Must outlive the call.
  const nlohmann::json* effectors = nullptr;
  //! The command line's synchronous write: wait until the events are durable
  //! and applied (Engine::Commit) and run `done` before returning. Otherwise
  //! `done` runs later, on the engine's owner thread (the loop).
  bool wait = false;
  //! Set as `reason` on each attributed event that has none ("" = none):
  //! a request's X-Limbic-Reason (the mind's "session S step N call I").
  std::string reason{};
};

//! Writes the events `events` built, as `writer`:
//!   1. an error of the build is returned as it is; nothing is written;
//!   2. no events: nothing is written and `done(OK, {})` runs at once;
//!   3. policy: an action for an effector `writer.effectors` lacks is
//!      refused (InvalidArgument naming it); one whose effector requires
//!      approval is marked require_approval;
//!   4. attribution: state::Attribute(events, writer.actor);
//!   5. Engine::Submit (Engine::Commit with `writer.wait`).
//! Returns the first refusal, and then never runs `done`. Otherwise `done`
//! (which may be empty) runs once: with OK and the events as committed, or,
//! without `writer.wait`, with the error that kept them from the log (as
//! Engine::Done). With `writer.wait` such an error is returned instead.
Status SubmitCommand(state::Engine& engine, Result<state::Events> events, const Writer& writer,
                     state::Engine::Done done);

}  // namespace limbic::runtime
