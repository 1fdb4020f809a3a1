// Runs a stream of workload Steps against a Store and times every call.
//
// The driver keeps the ids each store returned, in lists of candidates
// (percepts still new, percepts assigned and unprocessed, active threads,
// pending actions); a Step's `pick` chooses among them. Every store sees the
// same lists evolve the same way, so they all do the same work. A step whose
// list is empty adds a percept instead.
//
// Writes go out while the store has room (Store::max_inflight), each timed
// from the call to its acknowledgement; reads are timed around the call.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "bench/store.h"
#include "bench/workload.h"

namespace limbic::bench {

struct RunStats {
  uint64_t ops = 0;
  double seconds = 0;
  std::vector<double> latency_us;  // one per op
  // Per kind of op (indexed by Op): how many, and the time spent in the
  // store's call itself (a write's submit, not its wait for durability),
  // which shows which operations grow with the pools.
  struct PerOp {
    uint64_t count = 0;
    double call_us = 0;
  };
  std::array<PerOp, kOpCount> by_op{};
  double ops_per_s() const { return seconds > 0 ? static_cast<double>(ops) / seconds : 0; }
};

class Driver {
 public:
  // `preload` and `ids`: what the store was preloaded with, and the ids.
  Driver(Store& store, const Preload& preload, const PreloadIds& ids);

  // Runs `steps` in order until they are done or `budget_s` seconds have
  // passed (then stops at the next step), waits for every write to be
  // acknowledged, and returns what was done. Errors from the store abort.
  Result<RunStats> Run(const std::vector<Step>& steps, double budget_s);

 private:
  Status Do(const Step& step, RunStats* stats);
  Status AddPercept(RunStats* stats);
  // Times a write: `call` gets the Ack to hand to the store.
  template <typename Call>
  auto Write(RunStats* stats, Op op, Call call);

  Store& store_;
  std::vector<std::string> new_percepts_, assigned_, threads_, pending_actions_;
  uint64_t added_ = 0;
  std::mt19937_64 percept_rng_{42};
};

}  // namespace limbic::bench
