// Consolidation: what is finished leaves the hot pools for the archive.
//
// A ConsolidationPass looks at the pools as of `now` and returns, a step at
// a time, the events that consolidate them:
//   1. expiry: a percept still new (unassigned) at least `expire_after` old
//      whose effective intensity (its recency computed at `now`) is below
//      `expire_below` -- out of attention for good -- gets a
//      percept_dropped event with reason "expired". So a low-intensity
//      heartbeat does not pile up in the pool forever.
//   2. episodes: one entry_staged event per completed thread whose last
//      activity is older than `threads_after`: an episode (goal, outcome,
//      its percepts' text, its actions and their outcomes, timestamps) that
//      consolidates the thread, all its percepts and its finished actions.
//   3. digests of loose percepts: processed or dropped (the percepts just
//      expired too), older than `percepts_after`, not of a thread still in
//      the pool; per day, at most `digest_items` per entry, oldest first.
//   4. digests of loose actions: complete, dead or rejected, last updated
//      more than `actions_after` ago, not of a thread still in the pool;
//      per day of their last update, at most `digest_items` per entry.
// Each event is applied atomically: its entry is staged (the archive's
// staging files follow the log) and its items are removed from the pools
// in the same event, so a replay reproduces both. The entry's date is the
// day the work happened (a thread's last activity, a percept's arrival, an
// action's last update).
//
// Why steps: a pass may meet a million expired percepts. Each step is
// bounded (about `step_items` percepts, threads and actions, and
// `step_bytes` of entry text), and the next is planned only after the
// caller has committed the one before and it is applied: the planning
// reads only indexes (the status index, the in-memory expiry order of the
// new percepts) from where the last step stopped, never the whole pool, and
// holds one step in memory. The runtime plans on a worker and commits each
// step on its io thread (runtime/archive_service.h); `limbic consolidate`
// does both on its one thread.
//
// Between a step's planning and its commit the pools may change (a percept
// assigned, a thread reopened): the commit validates every event as usual
// (an entry of work no longer finished is refused), and DropStale below
// takes out the expiries of percepts no longer new, so a step never does
// what its planning no longer holds true.
//
// Thread-safety: a pass is used by one thread at a time; it reads the
// projection (which any thread may read) and must not outlive it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "state/commands.h"
#include "state/projection.h"
#include "state/recency.h"

namespace limbic::state {

struct ConsolidationPolicy {
  TimeMs threads_after = 7LL * 86400000;   // completed threads idle this long
  TimeMs percepts_after = 1LL * 86400000;  // processed / dropped percepts this old
  TimeMs actions_after = 1LL * 86400000;   // complete / dead / rejected actions this old
  size_t digest_items = 200;               // items per digest entry
  TimeMs expire_after = 1LL * 86400000;    // percepts.expire_after; 0 = never expire
  double expire_below = 0.2;               // attention.percept_threshold
  RecencyParams recency;                   // the config's recency, for effective intensity
  // A step's bounds: about this many percepts, threads and actions (one
  // episode or digest may take it past), and this many bytes of entry text.
  size_t step_items = 256;
  size_t step_bytes = size_t{4} << 20;
};

//! What a pass did, counted from its events.
struct ConsolidationCounts {
  size_t entries = 0;  // entry_staged events
  size_t threads = 0;  // threads, percepts and actions consolidated into entries
  size_t percepts = 0;
  size_t actions = 0;
  size_t expired = 0;  // percept_dropped (reason "expired") events
  //! Counts `e`, an event of a pass (ignored when it is neither kind).
  void Add(const Event& e);
  void Add(std::span<const Event> events) {
    for (const Event& e : events) Add(e);
  }
  //! {entries, threads, percepts, actions, expired}
  json ToJson() const;
};

//! One step of a pass: the events to commit, in order, and their counts.
struct ConsolidationPlan {
  Events events;
  ConsolidationCounts counts;
};

class ConsolidationPass {
 public:
  //! A pass over `state` as of `now`; `state` must outlive it.
  ConsolidationPass(const Projection& state, ConsolidationPolicy policy, TimeMs now);

  //! The next step. Its events must be committed (or refused) and applied
  //! before the next call, which reads the pools as they are then. A step
  //! may be empty while the pass goes on (it read past percepts that wait
  //! for their thread); the pass is over when done().
  Result<ConsolidationPlan> Next();
  bool done() const { return phase_ == Phase::kDone; }
  //! A step's bound in items (ConsolidationPolicy::step_items), changed
  //! between steps by a caller that paces them (at least 1).
  size_t step_items() const { return step_items_; }
  void set_step_items(size_t n) { step_items_ = std::max<size_t>(1, n); }

 private:
  enum class Phase { kExpire, kEpisodes, kPercepts, kActions, kDone };
  // One status index walked oldest first, a few records ahead.
  struct Source {
    std::string status, cursor;
    std::deque<json> ahead;
    bool exhausted = false;
  };
  // Each phase adds to *plan until the step is full or the phase is over
  // (then it moves phase_ on).
  Status Expire(ConsolidationPlan* plan);
  Status Episodes(ConsolidationPlan* plan);
  Status LoosePercepts(ConsolidationPlan* plan);
  Status LooseActions(ConsolidationPlan* plan);
  // The completed threads idle long enough, oldest first, and the finished
  // actions of each (read once, when the phase starts).
  Status FindEpisodes();
  // The oldest record of the sources that are left, or nullptr at the end.
  Result<json*> Oldest(std::vector<Source>& sources, TimeMs until, bool percepts);
  // Whether the thread `id` is in the pool (its work waits for it).
  Result<bool> ThreadLives(const std::string& id) const;
  bool Full(const ConsolidationPlan& plan) const;
  void Push(ConsolidationPlan* plan, Event e);

  const Projection& state_;
  const ConsolidationPolicy policy_;
  const TimeMs now_;
  size_t step_items_;
  Phase phase_ = Phase::kExpire;
  size_t step_bytes_ = 0;              // entry text in the step being planned
  std::vector<std::string> episodes_;  // thread ids, oldest first
  size_t next_episode_ = 0;
  bool episodes_found_ = false;
  std::map<std::string, std::vector<std::string>> actions_of_;  // action ids by thread
  std::vector<Source> percepts_, actions_;
};

//! Takes out of `events` (a step) the expiries of percepts that `view` no
//! longer holds as new: they were assigned, processed or removed since the
//! step was planned. The owner of the write path calls it just before
//! committing, with the engine's pending view. Returns how many it took out.
Result<size_t> DropStale(const RecordReader& view, Events* events);

}  // namespace limbic::state
