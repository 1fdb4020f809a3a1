// Provenance: who changed a percept, thread, action or reflex, and why.
//
// Each event that changes one of them may carry two optional fields:
//   actor   who asked for it (a name: 1-256 characters, no control
//           characters). limbic writes:
//             "cli"                   the command line (directly or forwarded
//                                     to a running `limbic run`)
//             "http"                  an HTTP caller that sent no
//                                     X-Limbic-Actor header; with the
//                                     header, its value
//             "mcp:<name>"            an MCP client, by its clientInfo.name
//             "reflex:<id>"           a reflex rule
//             "sensor:<name>"         a configured sensor
//             "outbox"                the outbox delivering an action
//             "consolidation"         the consolidation pass
//             "rules-file"            the reflexes file synced at start-up
//             "mind:<name>"           the mind's tool calls (runtime/mind/mind.h)
//             "executive"             the mind's executive: a wake on
//                                     attention, a session's end, budget_pressure
//   reason  free text: why (a request's "reason", an error, ...)
// The reducer ignores both, so old logs (which have neither) replay to the
// same state; `limbic why` and the inspector show them.
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>
#include <vector>

#include "base/status.h"
#include "state/event.h"

namespace limbic::state {

// True for the event types that carry actor and reason: percept_*,
// thread_*, arousal_*, action_* and actions_pruned, reflex_put /
// reflex_deleted / reflex_enabled, entry_staged, segments_accepted,
// primary_promoted, mind_woken and mind_slept.
bool IsAttributed(EventType type);

// Sets `actor` on each attributed event of `events` that has none, and
// `reason` (when not empty) on each that has none. An event that already
// names its actor keeps it: what a reflex planned stays the reflex's when
// the runtime submits it.
void Attribute(std::vector<Event>& events, std::string_view actor, std::string_view reason = {});

// An actor from outside (an X-Limbic-Actor header, a flag): OK when it is a
// name; the error says what is wrong with it.
Status CheckActor(std::string_view actor);

}  // namespace limbic::state
