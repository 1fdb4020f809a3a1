// The benchmark's workloads: seeded, so every system gets exactly the same
// data and the same sequence of operations.
//
// The mixed agent loop, per 100 operations (a few sensors feeding percepts,
// the mind triaging them into threads, acting through the outbox):
//
//   30  add a percept                     (a sensor)
//   12  query unassigned percepts by source (the mind looks at what is new)
//    4  create a thread                   (it starts work on something)
//   12  assign a new percept to an active thread
//    8  mark an assigned percept processed
//    8  update a thread's state           (phase / next_step / context)
//    6  enqueue an action
//    6  mark a pending action complete    (the outbox delivered it)
//    8  query the top active threads by effective salience
//    6  read arousal
//
// Writes are 74 of 100.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "bench/store.h"

namespace limbic::bench {

inline constexpr const char* kSources[] = {"github", "discord", "email", "slack",
                                           "timer",  "calendar", "rss",  "sensors"};
inline constexpr size_t kSourceCount = 8;

// The i-th percept of a seeded stream: source, type, intensity, ~80 bytes
// of text and a small data object.
PerceptIn MakePercept(std::mt19937_64& rng, uint64_t i);

// `live` percepts, live / 20 threads (at least 10): half the percepts
// assigned to a random thread, 60% of those processed; live / 10 actions,
// half of them complete.
Preload MakePreload(size_t live, uint64_t seed);

enum class Op : uint8_t {
  kAddPercept,
  kUnassignedBySource,
  kCreateThread,
  kAssignPercept,
  kProcessPercept,
  kUpdateThreadState,
  kEnqueueAction,
  kCompleteAction,
  kTopThreads,
  kReadArousal,
  kPerceptsByThread,       // queries scenario
  kPerceptsBySourceSince,  // queries scenario
};
inline constexpr size_t kOpCount = 12;
const char* OpName(Op op);
bool IsWrite(Op op);

// One operation of a stream: what to do and the random numbers that choose
// its arguments (indexes into the driver's lists of live ids).
struct Step {
  Op op;
  uint64_t pick;  // chooses a record among the candidates
  uint64_t aux;   // chooses a source, a salience, ...
};

// `n` steps of the mixed agent loop (the proportions above).
std::vector<Step> MixedSteps(size_t n, uint64_t seed);
// `n` steps of the queries scenario: a third each of percepts by thread,
// percepts by source and age, top active threads.
std::vector<Step> QuerySteps(size_t n, uint64_t seed);

}  // namespace limbic::bench
