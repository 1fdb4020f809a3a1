// The mind's executive as the loop sees it: what wakes the agent's model,
// puts it to sleep and says how it is doing (docs/mind.md). The executive
// itself is a seam above the API and MCP (runtime/mind/mind.h), since the
// model's tools are the MCP tools: the loop holds it through this
// interface, made by the MindFactory that `limbic run` and `limbic follow`
// give the Runtime.
//
// Thread-safety: io thread only.
#pragma once

#include <spdlog/logger.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/config.h"
#include "runtime/http/server.h"
#include "state/event.h"

namespace limbic::runtime {

class Runtime;

class Executive {
 public:
  //! What a wake asks for.
  struct WakeRequest {
    std::string trigger;  //!< percept | thread | reflex | explicit
    std::string reason;   //!< free text, kept in mind_woken
    std::string actor;    //!< who woke it: "executive", "reflex:<id>", "http", "cli", ...
    std::string thread_id;
    std::vector<std::string> percept_ids;
  };
  using Done = std::function<void(Status, nlohmann::json)>;

  virtual ~Executive() = default;
  //! Ends what a crash left awake, counts the day's use, starts watching
  //! attention. `router` is the API's: tool calls and the context go through it.
  virtual Status Start(Router router) = 0;
  //! A subscriber of applied groups (Runtime::RegisterSubscribers).
  virtual void OnApplied(std::span<const state::Event> events) = 0;
  //! Wakes the mind: `done` gets {session, seq} once mind_woken is durable,
  //! or why not: FailedPrecondition whose message starts "off: ", "busy: "
  //! (a session runs) or "budget: " (the budget refuses, naming the limit).
  virtual void Wake(WakeRequest wake, Done done) = 0;
  //! Ends the running session ("slept", mind_slept attributed to `actor`):
  //! `done` gets {session, outcome}; FailedPrecondition "asleep: ..." when
  //! none runs.
  virtual void Sleep(std::string actor, Done done) = 0;
  //! GET /v1/mind.
  virtual nlohmann::json StatusJson() = 0;
  //! Shutdown: a running session ends "interrupted"; nothing new starts.
  virtual void Stop() = 0;
};

using MindFactory =
    std::function<std::unique_ptr<Executive>(Runtime&, std::shared_ptr<spdlog::logger>)>;
//! Checks what of the mind's config needs the operation table (the tools),
//! appending "mind.tools[2]: ..." problems.
using MindCheck = std::function<void(const MindConfig&, std::vector<std::string>*)>;

}  // namespace limbic::runtime
