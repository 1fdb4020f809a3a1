// The threads as ranking needs them, in memory: each thread's status,
// salience and last_active, the unprocessed percepts counted per thread id,
// and an order in which the top threads by effective salience are found
// without computing every thread's.
//
// Effective salience (recency.h) is computed on read, at the caller's
// `now`; nothing time-dependent is stored in the pools. Ranking at `now`
// needs no scan of every thread because of an upper bound:
//
//   effective(now) = clamp01(s * (0.5 + 0.5 * decay(now - la)) + b)
//                 <= s * (0.5 + 0.5 * 2^((la - R) / h)) + b    = key(R)
//
// for any reference time R <= now (s salience >= 0, la last_active, h the
// thread half-life, b = min(0.3, 0.1 * unprocessed)): decay(now - la) is
// 2^(-(now - la)/h) clamped to 1, never more than 2^((la - R)/h) when
// R <= now. (A negative s has the bound s * 0.5 + b; no key is below 0,
// where effective salience is clamped.) Threads with the same s, la and b
// have the same effective salience at any time: they form one class, and
// the table keeps each status's classes ordered by key(R), highest first,
// each class's ids in order. Top walks that order, computes one effective
// salience per class and takes its lowest ids, and stops at the first
// class whose key is below the k-th best effective value found: no thread
// further on can reach it. The answer is therefore exactly that of sorting
// every thread (ties by id). It looks at the classes whose key is within
// key(R) - effective(now) of the k-th best, a gap of at most
// s * 0.5 * (1 - 2^(-(now - R)/h)); R moves to `now` (every class's key
// recomputed) when a call's now is before R or more than h/256 after it,
// so that gap stays under 0.14% of the salience.
//
// Thread-safety: none of its own (Projection holds it under a mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/time.h"

namespace limbic::state {

struct RecencyParams;

// What ranking a thread by effective salience needs.
struct ThreadSummary {
  std::string id;
  std::string status;
  double salience = 0;
  TimeMs last_active = 0;
  size_t unprocessed = 0;  // assigned percepts not yet processed or dropped
};

class ThreadTable {
 public:
  // Replaces everything: `threads` by id (their `unprocessed` ignored) and
  // the unprocessed counts by thread id, existing or not.
  void Reset(std::unordered_map<std::string, ThreadSummary> threads,
             std::unordered_map<std::string, size_t> unprocessed);
  // Adds or replaces the thread `summary.id` (its `unprocessed` ignored).
  void Set(const ThreadSummary& summary);
  void Erase(const std::string& id);
  // Changes the unprocessed count of thread id `id` by `delta`. Counts are
  // kept by id whether or not the thread exists: a deleted thread's
  // percepts stay assigned to its id and count again for a thread later
  // made with that id.
  void AddUnprocessed(const std::string& id, long delta);

  size_t size() const { return rows_.size(); }
  // The thread, with its unprocessed count, or nullopt.
  std::optional<ThreadSummary> Find(const std::string& id) const;
  size_t Unprocessed(const std::string& id) const;
  // Thread ids with a non-zero unprocessed count.
  size_t unprocessed_ids() const { return unprocessed_.size(); }

  // Threads with `status` (or all), with their unprocessed counts, by id.
  std::vector<ThreadSummary> List(const std::optional<std::string>& status) const;
  // The `limit` threads with `status` (or all) of highest effective
  // salience at `now` (ties: lower id first), with their unprocessed
  // counts; limit 0 = every one. The same as sorting List's by
  // EffectiveSalience.
  std::vector<ThreadSummary> Top(const std::optional<std::string>& status, TimeMs now,
                                 const RecencyParams& p, size_t limit);
  // Classes Top computed an effective salience for since the table was
  // made (tests read it to see that the walk stops early).
  size_t ranked_visits() const { return visits_; }

 private:
  // A class: threads of one status with the same salience (its bits),
  // last_active and min(unprocessed, 3) rank the same at any time.
  struct Rank {
    double key;  // key(ref_)
    uint64_t salience_bits;
    TimeMs last_active;
    int boost_steps;  // min(unprocessed, 3)
    // Highest key first; the rest only tells classes apart.
    bool operator<(const Rank& o) const {
      if (key != o.key) return key > o.key;
      if (salience_bits != o.salience_bits) return salience_bits < o.salience_bits;
      if (last_active != o.last_active) return last_active < o.last_active;
      return boost_steps < o.boost_steps;
    }
  };
  // A class's ids in order; they point at the keys of rows_ (stable:
  // unordered_map nodes do not move).
  using Classes = std::map<Rank, std::set<std::string_view>>;
  Rank RankOf(const std::string& id, const ThreadSummary& t) const;
  double KeyOf(double salience, TimeMs last_active, int boost_steps) const;
  void Unrank(const std::string& id, const ThreadSummary& t);
  void RankRow(const std::string& id, const ThreadSummary& t);
  // Recomputes every class's key for reference time `ref` and half-life `h`.
  void Rekey(TimeMs ref, TimeMs h);
  struct Scored;
  // Adds the best `limit` threads of `classes` at `now` to *best (a heap of
  // at most `limit`, worst on top).
  void WalkTop(const Classes& classes, TimeMs now, const RecencyParams& p, size_t limit,
               std::vector<Scored>* best);

  // `unprocessed` of each summary unused: see unprocessed_.
  std::unordered_map<std::string, ThreadSummary> rows_;
  std::unordered_map<std::string, size_t> unprocessed_;
  // By status; kept only once Top has been asked (ranked_).
  std::map<std::string, Classes, std::less<>> ranks_;
  bool ranked_ = false;
  TimeMs ref_ = 0;        // R
  TimeMs half_life_ = 0;  // h the keys were computed with
  size_t visits_ = 0;
};

}  // namespace limbic::state
