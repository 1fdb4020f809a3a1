// The pool operations every benchmarked system implements: limbic (through
// its library, the code path `limbic run` uses) and the two designs a user
// would write instead (bench/baselines/): JSON files and SQLite.
//
// The benchmark drives each Store with the same seeded workload and times
// the calls. A write returns the new record's id (if it creates one) at once
// and calls `ack` when it is durable at the store's durability; synchronous
// stores call `ack` before returning, limbic may call it later (group
// commit), from Poll. Reads are synchronous and see at least every
// acknowledged write.
//
// Semantics every store follows, so they do the same work:
//   - every mutation is also recorded as an event (limbic: the events log;
//     JSON: events.jsonl, and outbox.jsonl for actions; SQLite: the events
//     table), in the same transaction or durable write as the change;
//   - percepts {id, source, type, intensity, ts, thread_id, status, text,
//     data}, status new -> assigned -> processed; threads {id, goal, status,
//     salience, percepts[], state{phase, context, next_step}, created_at,
//     last_active}; actions {id, effector, type, payload, status, attempts,
//     thread_id, ts}; arousal {level, factors};
//   - effective salience as state/recency.h defines it (unprocessed = the
//     thread's assigned percepts), computed at the time of the query.
//
// Thread-safety: one thread drives a Store.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/time.h"

namespace limbic::bench {

using nlohmann::json;
using Ack = std::function<void()>;

struct PerceptIn {
  std::string source;
  std::string type;
  double intensity = 0.5;
  std::string text;
  json data = json::object();
};

// What a store starts a scenario with: `percepts` live percepts, some of
// them assigned to (and some of those processed by) `threads` active threads
// (salience 0.5), and `actions` pending actions, every second one (odd
// indexes) then completed. Built by the store's own bulk
// path (not timed); the ids it created are returned so the workload can
// refer to them.
struct Preload {
  std::vector<PerceptIn> percepts;
  size_t threads = 0;
  std::vector<int> assign;     // per percept: index of its thread, or -1
  std::vector<bool> processed; // per percept (only when assigned)
  size_t actions = 0;
};
struct PreloadIds {
  std::vector<std::string> percepts, threads, actions;
};

class Store {
 public:
  virtual ~Store() = default;

  // Loads `p` as fast as the store can (one transaction, one file write,
  // ...); everything durable when it returns.
  virtual Result<PreloadIds> Preload(const Preload& p) = 0;

  // Writes.
  virtual Result<std::string> AddPercept(const PerceptIn& p, Ack ack) = 0;
  virtual Status AssignPercept(const std::string& percept, const std::string& thread, Ack ack) = 0;
  virtual Status ProcessPercept(const std::string& percept, Ack ack) = 0;
  virtual Result<std::string> CreateThread(const std::string& goal, double salience, Ack ack) = 0;
  // A JSON merge patch into the thread's state.
  virtual Status UpdateThreadState(const std::string& thread, const json& patch, Ack ack) = 0;
  virtual Result<std::string> EnqueueAction(const std::string& effector, const std::string& type,
                                            const json& payload, const std::string& thread,
                                            Ack ack) = 0;
  // pending -> complete (limbic records the delivery: sent, then complete).
  virtual Status CompleteAction(const std::string& action, Ack ack) = 0;

  // Reads: whole records (every field, as the store keeps them, `data` and
  // `state` as JSON objects), newest or highest first, at most `limit`.
  // Percepts with status new from `source`.
  virtual Result<std::vector<json>> UnassignedBySource(const std::string& source,
                                                       size_t limit) = 0;
  // Percepts assigned to `thread` (any status).
  virtual Result<std::vector<json>> PerceptsByThread(const std::string& thread,
                                                     size_t limit) = 0;
  // Percepts from `source` no older than `max_age` ms.
  virtual Result<std::vector<json>> PerceptsBySourceSince(const std::string& source,
                                                          TimeMs max_age, size_t limit) = 0;
  // Active threads by effective salience (each with its "effective_salience").
  virtual Result<std::vector<json>> TopActiveThreads(size_t limit) = 0;
  // {level, factors}.
  virtual Result<json> Arousal() = 0;

  // Runs the acks of writes that became durable; with `block`, waits for at
  // least one when writes are in flight.
  virtual void Poll(bool block) { (void)block; }
  // Writes in flight the store accepts (1 = each write is durable when the
  // call returns).
  virtual size_t max_inflight() const { return 1; }
  // Writes not yet acknowledged.
  virtual size_t inflight() const { return 0; }
};

}  // namespace limbic::bench
