// The in-memory thread table's ranking: its bounded walk returns exactly
// what sorting every thread by effective salience returns.
#include "state/thread_table.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "state/recency.h"

// This file's own namespace: test programs compile in unity batches.
namespace thread_table_test {

using namespace limbic;
using namespace limbic::state;

namespace {

// The reference: every thread of `status` scored and sorted (ties by id).
std::vector<std::string> Sorted(const ThreadTable& table, const std::optional<std::string>& status,
                                TimeMs now, const RecencyParams& p, size_t limit) {
  std::vector<std::pair<double, std::string>> all;
  for (const ThreadSummary& t : table.List(status))
    all.emplace_back(
        -EffectiveSalience(t.salience, std::max<TimeMs>(0, now - t.last_active), t.unprocessed, p),
        t.id);
  std::sort(all.begin(), all.end());
  if (limit && all.size() > limit) all.resize(limit);
  std::vector<std::string> ids;
  for (auto& [score, id] : all) ids.push_back(id);
  return ids;
}

std::vector<std::string> Ids(const std::vector<ThreadSummary>& threads) {
  std::vector<std::string> ids;
  for (const ThreadSummary& t : threads) ids.push_back(t.id);
  return ids;
}

constexpr TimeMs kHour = 3'600'000;

}  // namespace

TEST_CASE("thread table: Top equals sorting every thread, through random changes and times") {
  const char* const statuses[] = {"active", "waiting", "done"};
  for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    ThreadTable table;
    RecencyParams p;
    TimeMs now = 1'700'000'000'000;
    std::vector<std::string> ids;
    for (int step = 0; step < 3000; ++step) {
      int what = static_cast<int>(rng() % 10);
      if (what < 3 || ids.empty()) {
        ThreadSummary t;
        t.id = "t-" + std::to_string(rng() % 400);
        t.status = statuses[rng() % 3];
        // Coarse saliences give ties; a few are out of range on purpose.
        t.salience = static_cast<double>(rng() % 11) / 10.0;
        if (rng() % 50 == 0) t.salience = -0.5;
        if (rng() % 50 == 0) t.salience = 1.7;
        // Last active anywhere from two days ago to a minute in the future.
        t.last_active = now - static_cast<TimeMs>(rng() % (48 * kHour)) + 60'000;
        if (rng() % 4 == 0) t.last_active = now;  // just touched
        table.Set(t);
        ids.push_back(t.id);
      } else if (what == 3) {
        table.Erase(ids[rng() % ids.size()]);
      } else if (what < 6) {
        // Unprocessed counts, also for ids that are not threads.
        std::string id =
            rng() % 5 == 0 ? "gone-" + std::to_string(rng() % 9) : ids[rng() % ids.size()];
        long delta = table.Unprocessed(id) > 0 && rng() % 2 ? -1 : 1;
        table.AddUnprocessed(id, delta);
      } else if (what < 8) {
        // Time passes: a little, a lot, or backwards (time travel).
        switch (rng() % 4) {
          case 0:
            now += static_cast<TimeMs>(rng() % 1000);
            break;
          case 1:
            now += static_cast<TimeMs>(rng() % (2 * kHour));
            break;
          case 2:
            now -= static_cast<TimeMs>(rng() % kHour);
            break;
          default:
            break;
        }
      } else {
        if (rng() % 20 == 0) p.thread_half_life = static_cast<TimeMs>(rng() % 3) * kHour;  // 0 too
        std::optional<std::string> status;
        if (rng() % 3) status = statuses[rng() % 3];
        size_t limit = rng() % 6 == 0 ? 0 : 1 + rng() % 12;
        CAPTURE(step, now, p.thread_half_life, limit);
        CHECK(Ids(table.Top(status, now, p, limit)) == Sorted(table, status, now, p, limit));
      }
    }
  }
}

TEST_CASE("thread table: Top carries each thread's unprocessed count") {
  ThreadTable table;
  table.Set({"t-1", "active", 0.2, 1000, 0});
  table.Set({"t-2", "active", 0.5, 1000, 0});
  table.AddUnprocessed("t-1", 3);
  auto top = table.Top(std::string("active"), 1000, RecencyParams(), 1);
  REQUIRE(top.size() == 1);
  CHECK(top[0].id == "t-1");  // 0.2 + 0.3 beats 0.5 on the id
  CHECK(top[0].unprocessed == 3);
}

TEST_CASE("thread table: the walk looks at the few threads that can be in the top, not all") {
  // 10,000 threads of spread salience, idle for up to a day, a few with
  // unprocessed percepts: the top 10 needs far fewer than all of them.
  std::mt19937_64 rng(7);
  ThreadTable table;
  RecencyParams p;
  TimeMs now = 1'700'000'000'000;
  for (int i = 0; i < 10'000; ++i) {
    table.Set({"t-" + std::to_string(i), "active", static_cast<double>(rng() % 1000) / 1000.0,
               now - static_cast<TimeMs>(rng() % (24 * kHour)), 0});
    if (i % 7 == 0)
      table.AddUnprocessed("t-" + std::to_string(i), static_cast<long>(1 + rng() % 4));
  }
  for (int q = 0; q < 20; ++q) {
    now += 1000;
    size_t before = table.ranked_visits();
    auto top = table.Top(std::string("active"), now, p, 10);
    CHECK(Ids(top) == Sorted(table, std::string("active"), now, p, 10));
    CHECK(table.ranked_visits() - before < 1000);
  }
}

}  // namespace thread_table_test
