// The in-memory table of new percepts: its bounded walk returns exactly
// what scoring and sorting every new percept returns.
#include "state/fresh_table.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <random>

#include "state/recency.h"

using namespace limbic;
using namespace limbic::state;

namespace {

struct Reference {
  std::map<std::string, FreshPercept> rows;
  // Every percept scored; strongest first, then newer, then later arrival.
  std::vector<std::string> Top(TimeMs now, const RecencyParams& p, double threshold,
                               size_t limit) const {
    struct S {
      double e;
      TimeMs ts;
      uint64_t seq;
      std::string id;
    };
    std::vector<S> all;
    for (const auto& [id, f] : rows) {
      double e = EffectiveIntensity(f.intensity, std::max<TimeMs>(0, now - f.ts), p);
      if (e >= threshold) all.push_back({e, f.ts, f.seq, id});
    }
    std::sort(all.begin(), all.end(), [](const S& a, const S& b) {
      if (a.e != b.e) return a.e > b.e;
      if (a.ts != b.ts) return a.ts > b.ts;
      return a.seq > b.seq;
    });
    std::vector<std::string> ids;
    for (size_t i = 0; i < all.size() && i < limit; ++i) ids.push_back(all[i].id);
    return ids;
  }
};

constexpr TimeMs kMinute = 60'000;

}  // namespace

TEST_CASE("fresh table: Top equals scoring every new percept, through random changes and times") {
  for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    FreshTable table;
    Reference ref;
    table.Build({});
    RecencyParams p;
    TimeMs now = 1'700'000'000'000;
    uint64_t seq = 0;
    for (int step = 0; step < 3000; ++step) {
      int what = static_cast<int>(rng() % 10);
      if (what < 4 || ref.rows.empty()) {
        std::string id = "p-" + std::to_string(rng() % 500);
        FreshPercept f;
        // Several arrivals in one millisecond, some from the future, and
        // intensities that tie, halve (a half-life later they tie again),
        // are 0 or out of range.
        f.ts = now - static_cast<TimeMs>(rng() % 4) * static_cast<TimeMs>(rng() % (90 * kMinute));
        if (rng() % 20 == 0) f.ts = now + 5 * kMinute;
        f.seq = ++seq;
        f.intensity = static_cast<double>(rng() % 9) / 8.0;
        if (rng() % 30 == 0) f.intensity = -0.25;
        if (rng() % 30 == 0) f.intensity = 1.5;
        table.Set(id, f);
        ref.rows[id] = f;
      } else if (what < 6) {
        auto it = ref.rows.begin();
        std::advance(it, static_cast<long>(rng() % ref.rows.size()));
        table.Set(it->first, std::nullopt);
        ref.rows.erase(it);
        table.Set("never-there", std::nullopt);  // idempotent
      } else if (what < 8) {
        now += static_cast<TimeMs>(rng() % 3) * static_cast<TimeMs>(rng() % (30 * kMinute));
        if (rng() % 10 == 0) now -= 20 * kMinute;  // time travel
      } else {
        if (rng() % 25 == 0)
          p.percept_half_life = (1 + static_cast<TimeMs>(rng() % 3)) * 5 * kMinute;
        double threshold = static_cast<double>(rng() % 5) / 10.0;
        size_t limit = 1 + rng() % 20;
        CAPTURE(step, now, p.percept_half_life, threshold, limit);
        CHECK(table.Top(now, p, threshold, limit) == ref.Top(now, p, threshold, limit));
      }
    }
  }
}

TEST_CASE("fresh table: the walk reads the strongest few, not every percept") {
  std::mt19937_64 rng(9);
  FreshTable table;
  table.Build({});
  RecencyParams p;
  TimeMs now = 1'700'000'000'000;
  Reference ref;
  // 50,000 new percepts from the last two hours, arriving in bursts.
  for (uint64_t i = 0; i < 50'000; ++i) {
    FreshPercept f{now - static_cast<TimeMs>(rng() % 120) * kMinute, i + 1,
                   static_cast<double>(rng() % 101) / 100.0};
    table.Set("p-" + std::to_string(i), f);
    ref.rows["p-" + std::to_string(i)] = f;
  }
  for (int q = 0; q < 10; ++q) {
    now += 1000;
    size_t before = table.visits();
    CHECK(table.Top(now, p, 0.2, 20) == ref.Top(now, p, 0.2, 20));
    CHECK(table.visits() - before < 1000);
  }
}
