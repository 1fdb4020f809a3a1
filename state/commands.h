// Commands: a user's request turned into the events that carry it out.
//
// Requests are JSON objects, exactly the bodies the HTTP API accepts
// (docs/api.md); the CLI builds the same objects from its flags, so both
// front ends share one validation and one mapping. Each Build* checks the
// request's shape -- unknown keys, types, ranges -- and names the request
// field that is wrong ("field \"intensity\": must be a number in [0, 1], got
// 1.7"). Whether the named thread or percept exists, and whether a status
// change is allowed, is the reducer's job when Engine::Submit validates the
// events against the state.
//
// Generated ids are "<prefix>-<seq of the creating event>" (p-, t-, a-), so
// the functions that create records take Engine::next_seq(). A request may
// supply its own "id" instead (then the event fails if it is taken).
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>
#include <vector>

#include "state/event.h"
#include "state/projection.h"
#include "base/status.h"

namespace limbic::state {

using Events = std::vector<Event>;

// {id?, source, type, intensity? = 0.5, text?, data? {}, thread_id?}
//   -> percept_arrived [, percept_assigned]
Result<Events> BuildPerceptAdd(const json& req, uint64_t next_seq);
// Requests that change a percept, thread or action also accept {reason?}:
// every event they make carries it (provenance, state/provenance.h). The
// actor is the front end's to set (state::Attribute), never the body's.

// {thread_id} -> percept_assigned
Result<Events> BuildPerceptAssign(std::string_view percept_id, const json& req);
// {} -> percept_processed
Result<Events> BuildPerceptProcess(std::string_view percept_id, const json& req = json::object());
// {reason?} -> percept_dropped
Result<Events> BuildPerceptDrop(std::string_view percept_id, const json& req);
// {reason?} -> percept_removed
Result<Events> BuildPerceptRemove(std::string_view percept_id, const json& req);

// {id?, goal, salience? = 0.5, status? = active, state? {phase, context, next_step},
//  from_percept?, percepts? [ids to assign]} -> thread_created [, percept_assigned...]
//  (from_percept is assigned too, first)
Result<Events> BuildThreadCreate(const json& req, uint64_t next_seq);
// {status?, salience?, state? (merge patch), add_percepts? [ids], reason?, outcome?}
//   -> thread_updated (salience/state/active/frozen), thread_paused (status paused),
//      thread_completed (status complete), percept_assigned per added percept
Result<Events> BuildThreadUpdate(std::string_view thread_id, const json& req);
// {reason?} -> thread_deleted (unassign_percepts: its percepts lose it)
Result<Events> BuildThreadDelete(std::string_view thread_id, const json& req);

// {level?, factors? {name: bool|number|string|null}, reason?}
//   -> arousal_set [, arousal_factor_set...]; at least one of level/factors
Result<Events> BuildArousalSet(const json& req);

// {id?, effector, type, payload? {}, idempotency_key? = id, thread_id?, percept_id?,
//  require_approval? = false} -> action_enqueued (pending_approval when
//  require_approval: it waits for BuildActionApprove)
Result<Events> BuildActionEnqueue(const json& req, uint64_t next_seq);
// {} -> action_approved (a pending_approval action becomes pending)
Result<Events> BuildActionApprove(std::string_view action_id, const json& req);
// {} -> action_rejected (a pending_approval action is never delivered)
Result<Events> BuildActionReject(std::string_view action_id, const json& req);
// {reason?} -> action_retried (a dead action is pending again, its attempts
//   back at 0)
Result<Events> BuildActionRetry(std::string_view action_id, const json& req);
// Complete and dead actions last updated before now - retention
//   -> actions_pruned (empty when there is nothing to prune)
Result<Events> BuildActionsPrune(const Projection& state, TimeMs retention, TimeMs now);

// {text, metadata? {}} -> entry_staged dated today (UTC), consolidating
// nothing: what `limbic archive blink` stages, e.g. before the agent
// restarts. metadata.kind defaults to "blink".
Result<Events> BuildBlink(const json& req, TimeMs now);

// est_tokens of a text: bytes / 4, rounded up.
inline uint64_t EstimateTokens(size_t bytes) { return (bytes + 3) / 4; }
// The `entry` of an entry_staged event: {timestamp, text, byte_size,
// est_tokens, metadata}, the archive's staging line. Bytes of `text` that
// are not valid UTF-8 become U+FFFD first, so byte_size counts the text as
// the log holds it.
json MakeStagedEntry(TimeMs ts, std::string text, json metadata);

// A JSON value parsed from user text (CLI flags): an object, or an error
// naming `what`.
Result<json> ParseJsonObject(std::string_view text, std::string_view what);

}  // namespace limbic::state
