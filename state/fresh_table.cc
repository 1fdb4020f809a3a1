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

// Whether no percept at or after a rank with `key` can reach `mark`.
// The key h*log2(i) + ts is a double of the magnitude of ts (~1.8e12 ms:
// an ulp is 2^-12 ms), so the bound exp2((key - now)/h) may be below the
// exact effective intensity by ~ln2 * ulp/h, far more than kSlack when h is
// short; and EffectiveIntensity's decay goes subnormal past 1022
// half-lives, rounding by up to 2^-1075 absolute (times the intensity).
bool Below(double bound, double mark, double key, TimeMs now, TimeMs h, double max_intensity) {
  double slack = kSlack;
  if (std::isfinite(key))
    slack += 4 * std::numeric_limits<double>::epsilon() *
             std::max(std::abs(key), std::abs(static_cast<double>(now))) / static_cast<double>(h);
  return bound * (1 + slack) + std::max(1.0, max_intensity) * 0x1p-1073 < mark;
}

struct Scored {
  double effective;
  TimeMs ts;
  uint64_t seq;
  const std::string* id;
  // Better first: stronger, then newer, then the later arrival, then id.
  bool operator<(const Scored& o) const {
    if (effective != o.effective) return effective > o.effective;
    if (ts != o.ts) return ts > o.ts;
    if (seq != o.seq) return seq > o.seq;
    return *id < *o.id;
  }
};

}  // namespace

double FreshTable::KeyOf(const FreshPercept& p) const {
  if (!(p.intensity > 0)) return -std::numeric_limits<double>::infinity();
  return static_cast<double>(half_life_) * std::log2(p.intensity) + static_cast<double>(p.ts);
}

double FreshTable::DueOf(const FreshPercept& p) const {
  const ExpiryRule& r = *rule_;
  constexpr double kNever = std::numeric_limits<double>::infinity();
  if (!(r.below > 0)) return kNever;
  double wait = 0;  // from arrival until the effective intensity is below r.below
  if (p.intensity > 0) {
    if (r.half_life <= 0)
      wait = p.intensity < r.below ? 0 : 1;  // Decay is 0 once age > 0
    else
      wait = static_cast<double>(r.half_life) * std::log2(p.intensity / r.below);
  }
  return static_cast<double>(p.ts) + std::max(static_cast<double>(r.after), wait);
}

void FreshTable::Build(std::unordered_map<std::string, FreshPercept> percepts) {
  rows_ = std::move(percepts);
  order_.clear();
  due_.clear();
  built_ = true;
  if (half_life_ > 0) Rekey(half_life_);
  if (rule_) Redue(*rule_);
}

void FreshTable::Set(const std::string& id, const std::optional<FreshPercept>& percept) {
  auto it = rows_.find(id);
  if (it != rows_.end()) {
    if (half_life_ > 0)
      order_.erase(Rank{KeyOf(it->second), it->second.ts, it->second.seq, &it->first});
    if (rule_) due_.erase(Due{DueOf(it->second), it->second.ts, it->second.seq, &it->first});
    if (!percept) {
      rows_.erase(it);
      return;
    }
    it->second = *percept;
  } else {
    if (!percept) return;
    it = rows_.emplace(id, *percept).first;
  }
  if (percept->intensity > max_intensity_) max_intensity_ = percept->intensity;
  if (half_life_ > 0)
    order_.insert(Rank{KeyOf(it->second), it->second.ts, it->second.seq, &it->first});
  if (rule_) due_.insert(Due{DueOf(it->second), it->second.ts, it->second.seq, &it->first});
}

void FreshTable::Redue(const ExpiryRule& rule) {
  rule_ = rule;
  std::vector<Due> dues;
  dues.reserve(rows_.size());
  for (const auto& [id, p] : rows_) dues.push_back(Due{DueOf(p), p.ts, p.seq, &id});
  std::sort(dues.begin(), dues.end());
  due_ = std::set<Due>(dues.begin(), dues.end());  // linear: sorted
}

std::vector<std::string> FreshTable::Expired(TimeMs now, const ExpiryRule& rule, size_t limit) {
  std::vector<std::string> ids;
  if (limit == 0 || rule.after <= 0) return ids;
  if (!rule_ || *rule_ != rule) Redue(rule);
  RecencyParams p;
  p.percept_half_life = rule.half_life;
  // The moment is computed in doubles of the magnitude of ts (an ulp is
  // 2^-12 ms); a percept due within 2 ms of now is checked exactly, so
  // rounding never stops the walk before one that has expired.
  const double until = static_cast<double>(now) + 2;
  for (const Due& d : due_) {
    if (d.at > until || ids.size() >= limit) break;
    ++expiry_visits_;
    const FreshPercept& f = rows_.find(*d.id)->second;
    const TimeMs age = now - f.ts;
    if (age >= rule.after && EffectiveIntensity(f.intensity, std::max<TimeMs>(0, age), p) < rule.below)
      ids.push_back(*d.id);
  }
  return ids;
}

void FreshTable::Rekey(TimeMs h) {
  half_life_ = h;
  std::vector<Rank> ranks;
  ranks.reserve(rows_.size());
  max_intensity_ = 0;
  for (const auto& [id, p] : rows_) {
    ranks.push_back(Rank{KeyOf(p), p.ts, p.seq, &id});
    if (p.intensity > max_intensity_) max_intensity_ = p.intensity;
  }
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
    if (Below(bound, threshold, r.key, now, h, max_intensity_)) break;
    if (best.size() == limit && Below(bound, best.front().effective, r.key, now, h, max_intensity_))
      break;
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
