// Why something happened: the causal chain of a percept, thread or action,
// read from the events log (`limbic why ID`, GET /v1/why/{id}, MCP `why`).
//
// The chain holds, in log order:
//   - every event about the thing itself (its arrival or creation, each
//     change, and for an action each delivery attempt and its outcome);
//   - the reflex firing that caused it, or that it caused, with what that
//     firing wrote;
//   - what it is tied to, one step out: the percept a thread or action came
//     from, the threads a percept was assigned to, the actions enqueued for
//     it -- each with its creation and, for an action, its deliveries.
//   - the mind's sessions tied to it: a session woken on it (the percept
//     or thread named in mind_woken) with all it did -- its steps, what
//     their tool calls wrote, its end; or, for what a tool call made, the
//     session's wake (and the percepts it was woken on) and that step; the
//     same wake for what the mind's requests wrote with the session in
//     their reason (an exec mind's "session m-5").
// So a percept reads: arrived -> reflex fired -> thread created -> action
// enqueued -> sent, failed, sent, complete; an action the mind enqueued:
// percept arrived -> mind woken -> mind step -> action enqueued -> sent.
// The chain is in log order, except that a mind step comes right before
// what its tool calls wrote (it is recorded once they have run).
//
// Two passes over the log (the second follows what the first found; one
// more between them for what the mind made, to read its session's wake), so
// the cost is two or three reads of the log, about a second per million
// events; nothing is kept aside but what the chain holds, which stops at
// kMaxWhySteps steps ("truncated": true).
//
// Thread-safety: reads files only; the log may be written meanwhile (what
// is not complete yet is not read).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"
#include "state/event.h"

namespace limbic::state {

inline constexpr size_t kMaxWhySteps = 10000;

// {id, kind: percept|thread|action|session, chain: [{seq, ts, type, what,
// actor?, reason?, event}], truncated}: a mind's session (m-<seq>) reads as
// its wake, steps, what their tool calls wrote, and its end. NotFound when
// no event of the log names `id`; InvalidArgument when it is not an id.
Result<json> Why(const std::string& events_dir, const std::string& id);

// One line of text per step, for the command line.
std::string WhyText(const json& why);

// The percept, thread and action ids an event names: its id fields
// (percept_id, thread_id, action_id, from_percept) and what it consolidates.
std::vector<std::string> EventIds(const Event& e);

}  // namespace limbic::state
