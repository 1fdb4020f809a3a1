// The dedup window: a percept id supplied from outside (a sensor's stable
// id such as a jsonl line's id or "gh-" + a GitHub delivery id) stays taken
// after its percept has left the pool, so a re-sent input is refused as a
// duplicate the way one inside the pool is.
//
// Three parts, so that the state stays a pure function of the log:
//   - the reducer (reduce.cc) keeps the dedup pool: a supplied id whose
//     percept leaves the pool (percept_removed, or consolidated by
//     entry_staged) gets a record
//       {id, source, arrived_at, left_at}   (left_at = that event's ts);
//     percept_arrived of the id deletes it, dedup_pruned deletes the ids it
//     lists. The reducer never refuses an arrival for it, so a replay
//     applies whatever the writer accepted, whatever its window was;
//   - CheckDedupWindow, run by Engine::Submit on new commands only, refuses
//     a percept_arrived whose id left the pool less than the window before
//     the event's ts;
//   - BuildDedupPrune, run periodically by the runtime, turns records older
//     than the window into a dedup_pruned event, which is how the pool stays
//     bounded (the window itself is config, not part of the log).
//
// Generated ids ("p-<seq of its percept_arrived>", see IsGeneratedPerceptId)
// are unique for the log's life: they are never remembered nor checked.
//
// Thread-safety: pure functions of the state they read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "state/commands.h"
#include "state/projection.h"
#include "state/reducer.h"
#include "base/status.h"
#include "base/time.h"

namespace limbic::state {

//! percepts.dedup_window's default: 7 days.
inline constexpr TimeMs kDefaultDedupWindow = 7LL * 86400000;
//! At most this many ids per dedup_pruned event; a later prune takes the rest.
inline constexpr size_t kDedupPruneLimit = 10000;

//! Whether `id` is the id the runtime generates for the percept_arrived of
//! seq `seq`: "p-" followed by `seq` in decimal.
bool IsGeneratedPerceptId(std::string_view id, uint64_t seq);

//! For a percept_arrived event `e` (seq and ts assigned) of a new command:
//! AlreadyExists naming the id, when `state` remembers the id in the dedup
//! pool and it left the pool less than `window` before e.ts (it is taken
//! until left_at + window). OK for any other event, for a generated id, and
//! with window 0.
Status CheckDedupWindow(const Event& e, const RecordReader& state, TimeMs window);

//! The dedup records of `applied` whose left_at is at least `window` before
//! `now`, and that `pending` (the applied state plus what is queued) still
//! holds with the same left_at, as one dedup_pruned event of at most `limit`
//! ids in id order; no events when there are none.
Result<Events> BuildDedupPrune(const Projection& applied, const RecordReader& pending,
                               TimeMs window, TimeMs now, size_t limit = kDedupPruneLimit);

}  // namespace limbic::state
