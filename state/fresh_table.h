// The new (unassigned) percepts as attention ranks them, in memory: the
// strongest by effective intensity at any `now` without computing every
// percept's.
//
// Effective intensity (recency.h) is computed on read:
//
//   effective(now) = i * 2^(-max(0, now - ts) / h)
//                 <= 2^((h * log2(i) + ts - now) / h)
//
// (i intensity, ts arrival time, h the percept half-life), with equality
// whenever ts <= now. The order by key = h * log2(i) + ts is therefore the
// order by effective intensity at every now after the percepts arrived: it
// never changes as time passes, so it is kept, not recomputed. (Percepts
// of intensity <= 0 have the key -infinity and the bound 0.) Top walks
// that order, computing each percept's exact effective intensity, and
// stops at the first percept whose bound is below the threshold or below
// the k-th best found: no percept further on can reach it. The answer is
// exactly that of scoring every new percept and sorting them (ties: newer
// first, then the later arrival, then by id), and it looks at the k best plus those
// whose bound ties with them (a percept from the future, ts > now, counts
// at its full intensity, under its bound).
//
// The keys depend on h, so a call with another half-life rebuilds them.
// The table is built on first use from the percepts the projection holds
// (Projection does this), then follows every commit.
//
// Thread-safety: none of its own (Projection holds it under a mutex).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/time.h"

namespace limbic::state {

struct RecencyParams;

// What ranking a new percept needs.
struct FreshPercept {
  TimeMs ts = 0;
  uint64_t seq = 0;
  double intensity = 0;
};

// When a new percept has expired (consolidation's expiry, consolidate.h):
// it is at least `after` old and its effective intensity is below `below`.
//
// Like the ranking key, the moment a percept expires never changes as time
// passes: with i its intensity, ts its arrival and h the half-life,
//
//   i * 2^(-age/h) < below  <=>  age > h * log2(i / below)
//
// so it is due at ts + max(after, h * log2(i / below)) (at ts + after when
// i is 0; never when below <= 0, since an intensity is never below 0: the
// event schema holds it to [0, 1]). The table
// keeps the new percepts in order of that moment, and Expired walks them
// from the earliest: its cost is that of the percepts it returns, never
// that of the pool.
struct ExpiryRule {
  TimeMs after = 0;     // percepts.expire_after (> 0)
  double below = 0;     // attention.percept_threshold
  TimeMs half_life = 0; // recency.percept_half_life
  bool operator==(const ExpiryRule&) const = default;
};

class FreshTable {
 public:
  // Whether Build has been called (Projection builds it on first use).
  bool built() const { return built_; }
  // Replaces everything with `percepts` (by id).
  void Build(std::unordered_map<std::string, FreshPercept> percepts);
  // Adds or replaces the percept `id` (nullopt: removes it, if present).
  // Both are idempotent.
  void Set(const std::string& id, const std::optional<FreshPercept>& percept);

  size_t size() const { return rows_.size(); }
  const FreshPercept* Find(const std::string& id) const {
    auto it = rows_.find(id);
    return it == rows_.end() ? nullptr : &it->second;
  }

  // The ids of the `limit` (> 0) new percepts of highest effective
  // intensity at `now`, at least `threshold`, strongest first (ties: newer
  // first, then the later arrival, then by id). Needs
  // p.percept_half_life > 0.
  std::vector<std::string> Top(TimeMs now, const RecencyParams& p, double threshold, size_t limit);
  // Percepts Top computed an effective intensity for since the table was
  // made (tests read it to see that the walk stops early).
  size_t visits() const { return visits_; }

  // The ids of up to `limit` new percepts that have expired at `now` under
  // `rule` (ExpiryRule above), the earliest due first (ties: older, then
  // the earlier arrival, then by id). Each is checked with the exact
  // formula (EffectiveIntensity), as the old full scan did. The order is
  // made on the first call with a rule and remade when the rule changes.
  std::vector<std::string> Expired(TimeMs now, const ExpiryRule& rule, size_t limit);
  // Percepts Expired has looked at since the table was made.
  size_t expiry_visits() const { return expiry_visits_; }

 private:
  struct Rank {
    double key;
    TimeMs ts;
    uint64_t seq;
    const std::string* id;  // the key of its row in rows_ (stable)
    // Highest key first; then newer, then later arrival, then id.
    bool operator<(const Rank& o) const {
      if (key != o.key) return key > o.key;
      if (ts != o.ts) return ts > o.ts;
      if (seq != o.seq) return seq > o.seq;
      return *id < *o.id;
    }
  };
  // A percept in the order it expires.
  struct Due {
    double at;  // ms; +infinity: never
    TimeMs ts;
    uint64_t seq;
    const std::string* id;  // the key of its row in rows_ (stable)
    bool operator<(const Due& o) const {
      if (at != o.at) return at < o.at;
      if (ts != o.ts) return ts < o.ts;
      if (seq != o.seq) return seq < o.seq;
      return *id < *o.id;
    }
  };
  double KeyOf(const FreshPercept& p) const;
  void Rekey(TimeMs h);
  double DueOf(const FreshPercept& p) const;
  void Redue(const ExpiryRule& rule);

  std::unordered_map<std::string, FreshPercept> rows_;
  std::set<Rank> order_;
  bool built_ = false;
  TimeMs half_life_ = 0;  // h the keys were computed with (0: none yet)
  // At least every row's intensity (for the subnormal margin in Top).
  double max_intensity_ = 0;
  size_t visits_ = 0;
  // The expiry order, kept once Expired has been asked with a rule.
  std::set<Due> due_;
  std::optional<ExpiryRule> rule_;
  size_t expiry_visits_ = 0;
};

}  // namespace limbic::state
