// What to work on now: the one view that GET /v1/attention, MCP `attention`
// and `limbic attention` answer (docs/api.md).
//
//   {now, arousal: {level, factors, effective}, thread, thread_percepts,
//    unassigned}
//
// `thread` is the active thread of highest effective salience (null when
// none), with its assigned percepts; `unassigned` the new percepts whose
// effective intensity is at least `threshold`, strongest first, at most
// `limit` of each list. Recency is computed at `now`.
//
// Thread-safety: a pure read of the projection.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "state/projection.h"
#include "state/recency.h"

namespace limbic::runtime {

struct AttentionParams {
  state::RecencyParams recency;
  double threshold = 0.2;  // attention.percept_threshold
  size_t limit = 20;       // attention.limit
};

// `effective_arousal`: the caller's (the runtime keeps it cached; see
// EffectiveArousalNow for one computed from the pools).
Result<nlohmann::json> BuildAttention(const state::Projection& p, TimeMs now, const AttentionParams& params,
                                      double effective_arousal);

// BuildAttention with arousal from the pools (EffectiveArousalNow): for a
// caller without the runtime's cached level (the command line).
Result<nlohmann::json> AttentionFromPools(const state::Projection& p, TimeMs now,
                                          const AttentionParams& params);

// Arousal's effective level at `now` from the pools: the arousal record and
// the percepts of the last recency.arousal_window (the newest 1,000).
Result<double> EffectiveArousalNow(const state::Projection& p, TimeMs now,
                                   const state::RecencyParams& recency);

}  // namespace limbic::runtime
