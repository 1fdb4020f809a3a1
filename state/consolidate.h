// Consolidation: what is finished leaves the hot pools for the archive.
//
// BuildConsolidation looks at the pools and returns entry_staged events:
//   - one per completed thread whose last activity is older than
//     `threads_after`: an episode (goal, outcome, its percepts' text, its
//     actions and their outcomes, timestamps) that consolidates the thread,
//     all its percepts and its finished actions;
//   - per day, digests of loose percepts (processed or dropped, older than
//     `percepts_after`, not attached to a live thread) and loose finished
//     actions (complete, dead or rejected, older than `actions_after`, not attached
//     to a live thread), at most `digest_items` items per event.
// Before those, it expires what nobody took up: a percept still new
// (unassigned) at least `expire_after` old whose effective intensity (its
// recency computed at `now`) is below `expire_below` -- out of attention for
// good -- gets a percept_dropped event with reason "expired"; a later pass
// digests it like any dropped percept. So a low-intensity heartbeat does not
// pile up in the pool forever.
// Each event is applied atomically: its entry is staged (the archive's
// staging files follow the log) and its items are removed from the pools
// in the same event, so a replay reproduces both. The entry's date is the
// day the work happened (a thread's last activity, a percept's arrival).
//
// Thread-safety: pure functions of the projection they read.
#pragma once

#include <cstddef>
#include <string>

#include "state/commands.h"
#include "state/projection.h"
#include "state/recency.h"

namespace limbic::state {

struct ConsolidationPolicy {
  TimeMs threads_after = 7LL * 86400000;   // completed threads idle this long
  TimeMs percepts_after = 1LL * 86400000;  // processed / dropped percepts this old
  TimeMs actions_after = 1LL * 86400000;   // complete / dead / rejected actions this old
  size_t digest_items = 200;               // items per digest entry
  size_t max_events = 1000;                // entries per run, and expiries per run; the next run takes the rest
  TimeMs expire_after = 1LL * 86400000;    // percepts.expire_after; 0 = never expire
  double expire_below = 0.2;               // attention.percept_threshold
  RecencyParams recency;                   // the config's recency, for effective intensity
};

struct ConsolidationPlan {
  // percept_dropped (expired) first, then entry_staged; in the order to
  // commit them.
  Events events;
  size_t threads = 0, percepts = 0, actions = 0;  // consolidated into entries
  size_t expired = 0;                             // percept_dropped events at the front
  size_t entries() const { return events.size() - expired; }
};

Result<ConsolidationPlan> BuildConsolidation(const Projection& state, const ConsolidationPolicy& policy,
                                             TimeMs now);

}  // namespace limbic::state
