// The in-memory table of new percepts: its bounded walk returns exactly
// what scoring and sorting every new percept returns.
#include "state/fresh_table.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>
#include <unordered_map>

#include "state/recency.h"

// This file's own namespace: test programs compile in unity batches.
namespace fresh_table_test {

using namespace limbic;
using namespace limbic::state;

namespace {

struct Reference {
  std::map<std::string, FreshPercept> rows;
  // Every percept scored; strongest first, then newer, then later arrival,
  // then by id.
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
      if (a.seq != b.seq) return a.seq > b.seq;
      return a.id < b.id;
    });
    std::vector<std::string> ids;
    for (size_t i = 0; i < all.size() && i < limit; ++i) ids.push_back(all[i].id);
    return ids;
  }
};

constexpr TimeMs kMinute = 60'000;

Reference Fill(FreshTable& table, const std::vector<std::pair<std::string, FreshPercept>>& rows) {
  Reference ref;
  std::unordered_map<std::string, FreshPercept> m;
  for (const auto& [id, f] : rows) {
    ref.rows[id] = f;
    m[id] = f;
  }
  table.Build(std::move(m));
  return ref;
}

// One random change of both the table and the reference: a percept
// arriving (several in one millisecond, some from the future, intensities
// that tie, halve -- a half-life later they tie again --, are 0 or out of
// range, or `low` below 0), or one leaving. `what` < 4 adds, else removes.
void RandomChange(std::mt19937_64& rng, int what, TimeMs now, uint64_t* seq, double low,
                  FreshTable& table, Reference& ref) {
  if (what < 4 || ref.rows.empty()) {
    std::string id = "p-" + std::to_string(rng() % 500);
    FreshPercept f;
    f.ts = now - static_cast<TimeMs>(rng() % 4) * static_cast<TimeMs>(rng() % (90 * kMinute));
    if (rng() % 20 == 0) f.ts = now + 5 * kMinute;
    f.seq = ++*seq;
    f.intensity = static_cast<double>(rng() % 9) / 8.0;
    if (rng() % 30 == 0) f.intensity = low;
    if (rng() % 30 == 0) f.intensity = 1.5;
    table.Set(id, f);
    ref.rows[id] = f;
  } else {
    auto it = ref.rows.begin();
    std::advance(it, static_cast<long>(rng() % ref.rows.size()));
    table.Set(it->first, std::nullopt);
    ref.rows.erase(it);
    table.Set("never-there", std::nullopt);  // idempotent
  }
}

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
      if (what < 6) {
        RandomChange(rng, what, now, &seq, -0.25, table, ref);
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

// The key h*log2(i) + ts has the magnitude of ts (~1.8e12 ms, an ulp of
// 2^-12 ms): with a short half-life its rounding moves the bound by far
// more than a fixed relative slack, and a walk that trusted it stopped
// before a percept that qualifies.
TEST_CASE("fresh table: a short half-life never stops the walk before a qualifying percept") {
  const TimeMs t = 1'800'000'000'000;
  RecencyParams p;
  p.percept_half_life = 1;
  SECTION("a percept exactly at the threshold") {
    FreshTable table;
    Reference ref = Fill(table, {{"x", {t, 1, 0.50001}}});
    CHECK(table.Top(t, p, 0.50001, 10) == std::vector<std::string>{"x"});
    CHECK(ref.Top(t, p, 0.50001, 10) == std::vector<std::string>{"x"});
  }
  SECTION("the k-th best against the next one's bound") {
    FreshTable table;
    Reference ref = Fill(table, {{"a", {t, 1, 0.50001}}, {"b", {t - 1, 2, 1.00003}}});
    CHECK(table.Top(t, p, 0, 1) == ref.Top(t, p, 0, 1));
    CHECK(table.Top(t, p, 0, 1) == std::vector<std::string>{"b"});
  }
}

// Past ~1022 half-lives the decay 2^(-age/h) is subnormal and rounds by an
// absolute amount; times an absurd intensity the exact value exceeded its
// bound, and a weaker fresh percept above that bound was ranked first.
TEST_CASE("fresh table: a huge intensity with a subnormal decay is still ranked exactly") {
  const TimeMs t = 1'800'000'000'000;
  RecencyParams p;  // the default half-life
  const TimeMs h = p.percept_half_life;
  const double huge = 1e300;
  double worst = 0;
  TimeMs worst_age = 0;
  for (TimeMs age = 1069 * h; age < 1074 * h; age += 997) {
    double exact = EffectiveIntensity(huge, age, p);
    double bound = std::exp2((static_cast<double>(h) * std::log2(huge) - static_cast<double>(age)) /
                             static_cast<double>(h));
    if (exact / bound > worst) {
      worst = exact / bound;
      worst_age = age;
    }
  }
  REQUIRE(worst > 1);  // the rounding this case is about exists
  double exact = EffectiveIntensity(huge, worst_age, p);
  double weaker = exact / (1 + (worst - 1) / 2);  // above the bound, below the exact value
  FreshTable table;
  Reference ref = Fill(table, {{"huge", {t - worst_age, 1, huge}}, {"weaker", {t, 2, weaker}}});
  CHECK(ref.Top(t, p, 0, 1) == std::vector<std::string>{"huge"});
  CHECK(table.Top(t, p, 0, 1) == ref.Top(t, p, 0, 1));
}

TEST_CASE("fresh table: Top equals the full sort at half-lives of 1 ms to a minute") {
  const TimeMs t = 1'800'000'000'000;
  for (TimeMs h : {TimeMs(1), TimeMs(7), TimeMs(1000), TimeMs(30'000), TimeMs(60'000)}) {
    CAPTURE(h);
    RecencyParams p;
    p.percept_half_life = h;
    std::mt19937_64 rng(static_cast<uint64_t>(h));
    std::uniform_real_distribution<double> unit(0.01, 1.0);
    for (int trial = 0; trial < 3000; ++trial) {
      std::vector<std::pair<std::string, FreshPercept>> rows;
      for (uint64_t i = 0; i < 8; ++i) {
        FreshPercept f{t - static_cast<TimeMs>(rng() % static_cast<uint64_t>(4 * h + 1)), i + 1,
                       unit(rng)};
        if (rng() % 16 == 0) f.intensity = 1e300;
        if (rng() % 16 == 0) f.ts = t - static_cast<TimeMs>(1069 + rng() % 6) * h;
        rows.emplace_back("p" + std::to_string(i), f);
      }
      FreshTable table;
      Reference ref = Fill(table, rows);
      // The threshold is exactly some percept's effective intensity.
      const FreshPercept& q = rows[rng() % rows.size()].second;
      double threshold = EffectiveIntensity(q.intensity, t - q.ts, p);
      size_t limit = 1 + rng() % 3;
      CAPTURE(trial, threshold, limit);
      CHECK(table.Top(t, p, threshold, limit) == ref.Top(t, p, threshold, limit));
      CHECK(table.Top(t, p, 0, limit) == ref.Top(t, p, 0, limit));
    }
  }
}

namespace {

// Every new percept checked as consolidation's old full scan did: at least
// `after` old and below `below`; the earliest due first.
std::vector<std::string> ExpiredByScan(const Reference& ref, TimeMs now, const ExpiryRule& rule,
                                       size_t limit) {
  RecencyParams p;
  p.percept_half_life = rule.half_life;
  struct E {
    double due;
    TimeMs ts;
    uint64_t seq;
    std::string id;
  };
  std::vector<E> all;
  for (const auto& [id, f] : ref.rows) {
    TimeMs age = now - f.ts;
    if (age < rule.after || !(EffectiveIntensity(f.intensity, std::max<TimeMs>(0, age), p) < rule.below))
      continue;
    double wait = f.intensity > 0 ? static_cast<double>(rule.half_life) * std::log2(f.intensity / rule.below) : 0;
    all.push_back({static_cast<double>(f.ts) + std::max(static_cast<double>(rule.after), wait), f.ts, f.seq, id});
  }
  std::sort(all.begin(), all.end(), [](const E& a, const E& b) {
    if (a.due != b.due) return a.due < b.due;
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.seq != b.seq) return a.seq < b.seq;
    return a.id < b.id;
  });
  std::vector<std::string> ids;
  for (size_t i = 0; i < all.size() && i < limit; ++i) ids.push_back(all[i].id);
  return ids;
}

}  // namespace

TEST_CASE("fresh table: Expired equals checking every new percept, through changes, times and rules") {
  for (uint64_t seed : {11, 12, 13, 14}) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    FreshTable table;
    Reference ref;
    table.Build({});
    ExpiryRule rule{30 * kMinute, 0.2, 10 * kMinute};
    TimeMs now = 1'700'000'000'000;
    uint64_t seq = 0;
    for (int step = 0; step < 3000; ++step) {
      int what = static_cast<int>(rng() % 10);
      if (what < 6) {
        // Never below 0: the event schema holds intensity to [0, 1].
        RandomChange(rng, what, now, &seq, 0, table, ref);
      } else if (what < 8) {
        now += static_cast<TimeMs>(rng() % 3) * static_cast<TimeMs>(rng() % (30 * kMinute));
      } else {
        if (rng() % 25 == 0) rule.half_life = (1 + static_cast<TimeMs>(rng() % 3)) * 5 * kMinute;
        if (rng() % 25 == 0) rule.after = static_cast<TimeMs>(1 + rng() % 60) * kMinute;
        if (rng() % 25 == 0) rule.below = static_cast<double>(rng() % 5) / 10.0;
        size_t limit = 1 + rng() % 50;
        CAPTURE(step, now, rule.after, rule.below, rule.half_life, limit);
        CHECK(table.Expired(now, rule, limit) == ExpiredByScan(ref, now, rule, limit));
      }
    }
  }
}

TEST_CASE("fresh table: Expired looks at the expired percepts, not at every new one") {
  std::mt19937_64 rng(5);
  FreshTable table;
  table.Build({});
  const TimeMs now = 1'700'000'000'000;
  // 100,000 new percepts of the last day, the oldest 1,000 a day old.
  for (uint64_t i = 0; i < 100'000; ++i) {
    TimeMs ts = i < 1000 ? now - 24 * 60 * kMinute - static_cast<TimeMs>(i)
                         : now - static_cast<TimeMs>(rng() % (20 * 60)) * kMinute;
    table.Set("p-" + std::to_string(i), FreshPercept{ts, i + 1, static_cast<double>(rng() % 101) / 100.0});
  }
  const ExpiryRule rule{22 * 60 * kMinute, 0.2, 10 * kMinute};
  auto first = table.Expired(now, rule, 100);
  CHECK(first.size() == 100);
  size_t before = table.expiry_visits();
  auto all = table.Expired(now, rule, 100'000);
  CHECK(all.size() == 1000);
  CHECK(table.expiry_visits() - before <= 1000 + 10);
}

}  // namespace fresh_table_test
