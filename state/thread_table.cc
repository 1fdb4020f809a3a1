#include "state/thread_table.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "state/recency.h"

namespace limbic::state {
namespace {

// How far `now` may move past the reference time before every key is
// recomputed: h / kRekeyFraction (thread_table.h).
constexpr TimeMs kRekeyFraction = 256;
// A class is passed over only when its key is below the k-th best by more
// than this: the bound and the exact formula are computed apart, and a
// rounding difference between them must never stop a walk early.
constexpr double kSlack = 1e-9;

int BoostSteps(size_t unprocessed) { return static_cast<int>(std::min<size_t>(unprocessed, 3)); }

}  // namespace

struct ThreadTable::Scored {
  double effective;
  std::string_view id;
  // Better first: higher effective salience, then lower id.
  bool operator<(const Scored& o) const {
    if (effective != o.effective) return effective > o.effective;
    return id < o.id;
  }
};

void ThreadTable::Reset(std::unordered_map<std::string, ThreadSummary> threads,
                        std::unordered_map<std::string, size_t> unprocessed) {
  rows_ = std::move(threads);
  unprocessed_ = std::move(unprocessed);
  ranks_.clear();
  ranked_ = false;
}

double ThreadTable::KeyOf(double s, TimeMs last_active, int boost_steps) const {
  double boost = std::min(0.3, 0.1 * boost_steps);
  if (std::isnan(s)) return std::numeric_limits<double>::infinity();
  // Effective salience is clamped to [0, 1], so no key is below 0.
  if (s <= 0) return std::max(0.0, 0.5 * s + boost);
  // The largest decay factor the thread can have at any now >= ref_.
  double most =
      half_life_ <= 0
          ? 1.0
          : std::exp2(static_cast<double>(last_active - ref_) / static_cast<double>(half_life_));
  return s * (0.5 + 0.5 * most) + boost;
}

ThreadTable::Rank ThreadTable::RankOf(const std::string& id, const ThreadSummary& t) const {
  int steps = BoostSteps(Unprocessed(id));
  return Rank{KeyOf(t.salience, t.last_active, steps), std::bit_cast<uint64_t>(t.salience),
              t.last_active, steps};
}

void ThreadTable::Unrank(const std::string& id, const ThreadSummary& t) {
  if (!ranked_) return;
  auto by_status = ranks_.find(t.status);
  if (by_status == ranks_.end()) return;
  auto cls = by_status->second.find(RankOf(id, t));
  if (cls == by_status->second.end()) return;
  cls->second.erase(id);
  if (cls->second.empty()) by_status->second.erase(cls);
  if (by_status->second.empty()) ranks_.erase(by_status);
}

void ThreadTable::RankRow(const std::string& id, const ThreadSummary& t) {
  if (!ranked_) return;
  ranks_[t.status][RankOf(id, t)].insert(id);
}

void ThreadTable::Set(const ThreadSummary& summary) {
  auto [it, added] = rows_.try_emplace(summary.id);
  if (!added) Unrank(it->first, it->second);
  it->second = summary;
  it->second.unprocessed = 0;
  RankRow(it->first, it->second);
}

void ThreadTable::Erase(const std::string& id) {
  auto it = rows_.find(id);
  if (it == rows_.end()) return;
  Unrank(it->first, it->second);
  rows_.erase(it);
}

void ThreadTable::AddUnprocessed(const std::string& id, long delta) {
  auto row = rows_.find(id);
  size_t before = Unprocessed(id);
  size_t after = static_cast<size_t>(static_cast<long>(before) + delta);
  bool reclass = row != rows_.end() && BoostSteps(before) != BoostSteps(after);
  if (reclass) Unrank(row->first, row->second);
  if (after == 0)
    unprocessed_.erase(id);
  else
    unprocessed_[id] = after;
  if (reclass) RankRow(row->first, row->second);
}

std::optional<ThreadSummary> ThreadTable::Find(const std::string& id) const {
  auto it = rows_.find(id);
  if (it == rows_.end()) return std::nullopt;
  ThreadSummary t = it->second;
  t.unprocessed = Unprocessed(id);
  return t;
}

size_t ThreadTable::Unprocessed(const std::string& id) const {
  auto it = unprocessed_.find(id);
  return it == unprocessed_.end() ? 0 : it->second;
}

std::vector<ThreadSummary> ThreadTable::List(const std::optional<std::string>& status) const {
  std::vector<ThreadSummary> out;
  for (const auto& [id, t] : rows_)
    if (!status || t.status == *status) {
      out.push_back(t);
      out.back().unprocessed = Unprocessed(id);
    }
  std::sort(out.begin(), out.end(),
            [](const ThreadSummary& a, const ThreadSummary& b) { return a.id < b.id; });
  return out;
}

void ThreadTable::Rekey(TimeMs ref, TimeMs h) {
  ref_ = ref;
  half_life_ = h;
  if (!ranked_) {
    ranked_ = true;
    for (const auto& [id, t] : rows_) RankRow(id, t);
    return;
  }
  for (auto& [status, classes] : ranks_) {
    Classes rekeyed;
    while (!classes.empty()) {
      auto node = classes.extract(classes.begin());
      Rank& r = node.key();
      r.key = KeyOf(std::bit_cast<double>(r.salience_bits), r.last_active, r.boost_steps);
      rekeyed.insert(std::move(node));
    }
    classes = std::move(rekeyed);
  }
}

void ThreadTable::WalkTop(const Classes& classes, TimeMs now, const RecencyParams& p, size_t limit,
                          std::vector<Scored>* best) {
  for (const auto& [rank, ids] : classes) {
    // best is a heap with its worst on top: once it is full, a class whose
    // key (an upper bound) is below that worst cannot enter, nor can any
    // after it.
    if (best->size() == limit && rank.key + kSlack < best->front().effective) break;
    ++visits_;
    double effective = EffectiveSalience(std::bit_cast<double>(rank.salience_bits),
                                         std::max<TimeMs>(0, now - rank.last_active),
                                         static_cast<size_t>(rank.boost_steps), p);
    for (std::string_view id : ids) {  // lowest id first
      Scored s{effective, id};
      if (best->size() < limit) {
        best->push_back(s);
        std::push_heap(best->begin(), best->end());
      } else if (s < best->front()) {
        std::pop_heap(best->begin(), best->end());
        best->back() = s;
        std::push_heap(best->begin(), best->end());
      } else {
        break;  // the class's later ids are higher still
      }
    }
  }
}

std::vector<ThreadSummary> ThreadTable::Top(const std::optional<std::string>& status, TimeMs now,
                                            const RecencyParams& p, size_t limit) {
  std::vector<Scored> best;
  if (limit == 0) {
    for (const auto& [id, t] : rows_) {
      if (status && t.status != *status) continue;
      best.push_back({EffectiveSalience(t.salience, std::max<TimeMs>(0, now - t.last_active),
                                        Unprocessed(id), p),
                      id});
    }
  } else {
    TimeMs h = p.thread_half_life;
    if (!ranked_ || h != half_life_ || now < ref_ || (h > 0 && now - ref_ > h / kRekeyFraction))
      Rekey(now, h);
    best.reserve(limit + 1);
    if (status) {
      if (auto it = ranks_.find(*status); it != ranks_.end())
        WalkTop(it->second, now, p, limit, &best);
    } else {
      // The best `limit` of every status: the best of all are among them.
      for (const auto& [name, classes] : ranks_) WalkTop(classes, now, p, limit, &best);
    }
  }
  std::sort(best.begin(), best.end());
  if (limit && best.size() > limit) best.resize(limit);
  std::vector<ThreadSummary> out;
  out.reserve(best.size());
  for (const Scored& s : best) {
    auto row = rows_.find(std::string(s.id));
    out.push_back(row->second);
    out.back().unprocessed = Unprocessed(row->first);
  }
  return out;
}

}  // namespace limbic::state
