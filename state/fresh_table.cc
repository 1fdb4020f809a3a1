#include "state/fresh_table.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "state/recency.h"

namespace limbic::state {
namespace {

// A percept is passed over only when its bound is below the mark by more
// than this fraction: the bound and the exact formula are computed apart,
// and a rounding difference between them must never stop a walk early.
constexpr double kSlack = 1e-9;

bool Below(double bound, double mark) { return bound * (1 + kSlack) < mark; }

struct Scored {
  double effective;
  TimeMs ts;
  uint64_t seq;
  const std::string* id;
  // Better first: stronger, then newer, then the later arrival.
  bool operator<(const Scored& o) const {
    if (effective != o.effective) return effective > o.effective;
    if (ts != o.ts) return ts > o.ts;
    return seq > o.seq;
  }
};

}  // namespace

double FreshTable::KeyOf(const FreshPercept& p) const {
  if (!(p.intensity > 0)) return -std::numeric_limits<double>::infinity();
  return static_cast<double>(half_life_) * std::log2(p.intensity) + static_cast<double>(p.ts);
}

void FreshTable::Build(std::unordered_map<std::string, FreshPercept> percepts) {
  rows_ = std::move(percepts);
  order_.clear();
  built_ = true;
  if (half_life_ > 0) Rekey(half_life_);
}

void FreshTable::Set(const std::string& id, const std::optional<FreshPercept>& percept) {
  auto it = rows_.find(id);
  if (it != rows_.end()) {
    if (half_life_ > 0)
      order_.erase(Rank{KeyOf(it->second), it->second.ts, it->second.seq, &it->first});
    if (!percept) {
      rows_.erase(it);
      return;
    }
    it->second = *percept;
  } else {
    if (!percept) return;
    it = rows_.emplace(id, *percept).first;
  }
  if (half_life_ > 0)
    order_.insert(Rank{KeyOf(it->second), it->second.ts, it->second.seq, &it->first});
}

void FreshTable::Rekey(TimeMs h) {
  half_life_ = h;
  std::vector<Rank> ranks;
  ranks.reserve(rows_.size());
  for (const auto& [id, p] : rows_) ranks.push_back(Rank{KeyOf(p), p.ts, p.seq, &id});
  std::sort(ranks.begin(), ranks.end());
  order_ = std::set<Rank>(ranks.begin(), ranks.end());  // linear: sorted
}

std::vector<std::string> FreshTable::Top(TimeMs now, const RecencyParams& p, double threshold,
                                         size_t limit) {
  const TimeMs h = p.percept_half_life;
  if (h <= 0 || limit == 0) return {};
  if (h != half_life_) Rekey(h);
  std::vector<Scored> best;  // a heap, its worst on top
  best.reserve(limit + 1);
  for (const Rank& r : order_) {
    double bound = r.key == -std::numeric_limits<double>::infinity()
                       ? 0.0
                       : std::exp2((r.key - static_cast<double>(now)) / static_cast<double>(h));
    if (Below(bound, threshold)) break;
    if (best.size() == limit && Below(bound, best.front().effective)) break;
    ++visits_;
    const FreshPercept& f = rows_.find(*r.id)->second;
    double effective = EffectiveIntensity(f.intensity, std::max<TimeMs>(0, now - f.ts), p);
    if (effective < threshold) continue;
    Scored s{effective, f.ts, f.seq, r.id};
    if (best.size() < limit) {
      best.push_back(s);
      std::push_heap(best.begin(), best.end());
    } else if (s < best.front()) {
      std::pop_heap(best.begin(), best.end());
      best.back() = s;
      std::push_heap(best.begin(), best.end());
    }
  }
  std::sort(best.begin(), best.end());
  std::vector<std::string> ids;
  ids.reserve(best.size());
  for (const Scored& s : best) ids.push_back(*s.id);
  return ids;
}

}  // namespace limbic::state
