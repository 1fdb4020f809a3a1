// Recency: computed on read from stored values and an injected `now`.
//
// Nothing here is stored. The live runtime passes the wall clock; replay and
// time travel pass the timestamp of the last applied event; tests pass what
// they like. docs/events.md ("Recency") documents the formulas:
//
//   decay(age, h)          = 2^(-max(age, 0) / h)
//
//   effective intensity    = intensity * decay(now - percept.ts, percept_half_life)
//
//   effective salience     = clamp01( salience * (0.5 + 0.5 * decay(now - last_active,
//                                                                  thread_half_life))
//                                     + min(0.3, 0.1 * unprocessed) )
//       (an idle thread keeps at least half its salience; each unprocessed
//        percept assigned to it adds 0.1, at most 0.3 in all)
//
//   effective arousal      = clamp01( level
//                                     + 0.25 if user_waiting
//                                     + 0.05 * min(recent_errors, 5)
//                                     - 0.15 if budget_pressure
//                                     + sum over custom factors f:
//                                         numeric f -> clamp(f, -1, 1) * 0.1,
//                                         true      -> 0.1
//                                     + 0.3 * stimulus )
//       stimulus               = 1 - prod over percepts with age <= arousal_window of
//                                    (1 - effective intensity)
//       (a probabilistic OR: one intense recent percept or several mild ones
//        raise arousal; it decays as they age)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "state/event.h"
#include "state/projection.h"
#include "base/time.h"

namespace limbic::state {

struct RecencyParams {
  TimeMs percept_half_life = 10 * 60 * 1000;  // 10 min
  TimeMs thread_half_life = 60 * 60 * 1000;   // 1 h
  TimeMs arousal_window = 15 * 60 * 1000;     // percepts this recent feed arousal
};

double Decay(TimeMs age, TimeMs half_life);
double EffectiveIntensity(double intensity, TimeMs age, const RecencyParams& p);
double EffectiveSalience(double salience, TimeMs idle, size_t unprocessed, const RecencyParams& p);
// `recent_percepts`: percept records (need "intensity" and "ts").
double EffectiveArousal(const json& arousal, const std::vector<json>& recent_percepts, TimeMs now,
                        const RecencyParams& p);

// A copy of the percept record with "age_ms" and "effective_intensity".
json PerceptWithRecency(const json& percept, TimeMs now, const RecencyParams& p);
// A copy of the thread record with "idle_ms", "unprocessed" and "effective_salience".
json ThreadWithRecency(const json& thread, size_t unprocessed, TimeMs now, const RecencyParams& p);

// Threads (those with `status`, or all), each with its recency (as
// ThreadWithRecency), highest effective salience first; at most `limit`
// (0 = all). What the API, the command line and attention list.
Result<std::vector<json>> ThreadsBySalience(const Projection& projection,
                                            std::optional<std::string> status, TimeMs now,
                                            const RecencyParams& p, size_t limit = 0);

}  // namespace limbic::state
