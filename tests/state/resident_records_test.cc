// ResidentRecords: what a bulk load's writes left in memory answers reads
// the way RocksDB would, within its budget.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>

#include "state/resident_records.h"

// This file's own namespace: test programs compile in unity batches.
namespace resident_records_test {

using namespace limbic::state;
using Found = ResidentRecords::Found;

namespace {

// One write's records: ids with values, or nullopt for deletions.
ResidentRecords::Batch Write(std::initializer_list<std::pair<std::string, std::optional<std::string>>> recs,
                             Pool pool = Pool::kThreads) {
  ResidentRecords::Batch b;
  for (const auto& [id, value] : recs) b.Add(pool, id, value);
  return b;
}

std::string Read(const ResidentRecords& r, std::string_view id, Found want, Pool pool = Pool::kThreads) {
  std::string_view value = "unchanged";
  CHECK(r.Find(pool, id, &value) == want);
  return std::string(value);
}

}  // namespace

TEST_CASE("resident records answer like the DB: newest value, deleted, never written",
          "[resident]") {
  ResidentRecords r(size_t{1} << 20, /*complete=*/true);
  Read(r, "t-1", Found::kAbsent);  // an empty DB has nothing
  r.Add(Write({{"t-1", "{\"v\":1}"}, {"t-2", "{\"v\":2}"}}));
  CHECK(Read(r, "t-1", Found::kHere) == "{\"v\":1}");
  CHECK(Read(r, "t-2", Found::kHere) == "{\"v\":2}");
  Read(r, "t-3", Found::kAbsent);
  // The same id in another pool is another record.
  Read(r, "t-1", Found::kAbsent, Pool::kActions);

  // A later write changes one and deletes the other.
  r.Add(Write({{"t-1", std::string(100, 'x')}, {"t-2", std::nullopt}}));
  CHECK(Read(r, "t-1", Found::kHere) == std::string(100, 'x'));
  Read(r, "t-2", Found::kAbsent);
  CHECK(r.complete());

  // Many records: the table grows and every one is still found.
  ResidentRecords::Batch many;
  for (int i = 0; i < 5000; ++i) many.Add(Pool::kPercepts, "p-" + std::to_string(i), std::to_string(i));
  r.Add(std::move(many));
  for (int i = 0; i < 5000; ++i) CHECK(Read(r, "p-" + std::to_string(i), Found::kHere, Pool::kPercepts) == std::to_string(i));
  Read(r, "p-5000", Found::kAbsent, Pool::kPercepts);
}

TEST_CASE("resident records over a DB that held records already send misses to it",
          "[resident]") {
  ResidentRecords r(size_t{1} << 20, /*complete=*/false);
  Read(r, "t-1", Found::kAsk);
  r.Add(Write({{"t-1", "a"}, {"t-2", std::nullopt}}));
  CHECK(Read(r, "t-1", Found::kHere) == "a");
  Read(r, "t-2", Found::kAbsent);  // deleted by a write: the DB has no such record either
  Read(r, "t-3", Found::kAsk);
}

TEST_CASE("resident records stay within their budget and then ask the DB", "[resident]") {
  SECTION("no budget: nothing is held, every read goes to the DB") {
    ResidentRecords r(0, true);
    r.Add(Write({{"t-1", "a"}}));
    CHECK_FALSE(r.complete());
    CHECK(r.bytes() == 0);
    Read(r, "t-1", Found::kAsk);
    Read(r, "t-2", Found::kAsk);  // no longer known to be absent
  }
  SECTION("past the budget the records written longest ago are let go, never read as absent") {
    const size_t budget = 256 << 10;
    ResidentRecords r(budget, true);
    ResidentRecords::Batch b;
    for (int i = 0; i < 1000; ++i) b.Add(Pool::kPercepts, "p-" + std::to_string(i), std::string(200, 'v'));
    r.Add(std::move(b));
    CHECK(r.bytes() <= budget);
    // The hashes of those let go keep it complete.
    CHECK(r.complete());
    int here = 0;
    for (int i = 0; i < 1000; ++i) {
      std::string_view v;
      const Found f = r.Find(Pool::kPercepts, "p-" + std::to_string(i), &v);
      CHECK(f != Found::kAbsent);  // each was written: never "absent"
      if (f == Found::kHere) {
        CHECK(v == std::string(200, 'v'));
        ++here;
      }
    }
    CHECK(here > 0);
    CHECK(here < 1000);
    // The newest are held, the oldest asked for; one never written is absent.
    CHECK(Read(r, "p-999", Found::kHere, Pool::kPercepts) == std::string(200, 'v'));
    Read(r, "p-0", Found::kAsk, Pool::kPercepts);
    Read(r, "p-1000", Found::kAbsent, Pool::kPercepts);
    // A record written again is the newest: it stays while those written
    // after it the first time go.
    int oldest_held = 0;
    std::string_view v;
    while (r.Find(Pool::kPercepts, "p-" + std::to_string(oldest_held), &v) != Found::kHere) ++oldest_held;
    const std::string again = "p-" + std::to_string(oldest_held);
    r.Add(Write({{again, "again"}}, Pool::kPercepts));
    ResidentRecords::Batch more;
    for (int i = 1000; i < 1000 + here / 2; ++i) more.Add(Pool::kPercepts, "p-" + std::to_string(i), std::string(200, 'w'));
    r.Add(std::move(more));
    CHECK(Read(r, again, Found::kHere, Pool::kPercepts) == "again");
    Read(r, "p-" + std::to_string(oldest_held + 1), Found::kAsk, Pool::kPercepts);
    // Deleted after it was let go, it is absent; let go again, asked for
    // (its hash is still kept), never read as it was before.
    r.Add(Write({{"p-1", std::nullopt}}, Pool::kPercepts));
    Read(r, "p-1", Found::kAbsent, Pool::kPercepts);
    ResidentRecords::Batch evict;
    for (int i = 2000; i < 2000 + 2 * here; ++i) evict.Add(Pool::kPercepts, "p-" + std::to_string(i), std::string(200, 'x'));
    r.Add(std::move(evict));
    Read(r, "p-1", Found::kAsk, Pool::kPercepts);
    CHECK(r.complete());
    CHECK(r.bytes() <= budget);
  }
  SECTION("when the hashes of the records let go would take half the budget, it stops being complete") {
    const size_t budget = ResidentRecords::kMinTableBytes + (8 << 10);
    ResidentRecords r(budget, true);
    for (int w = 0; w < 20; ++w) {
      ResidentRecords::Batch b;
      for (int i = 0; i < 1000; ++i) b.Add(Pool::kPercepts, "p-" + std::to_string(w * 1000 + i), "v");
      r.Add(std::move(b));
      CHECK(r.bytes() <= budget);
    }
    CHECK_FALSE(r.complete());
    for (int i = 0; i < 20000; i += 7) {
      std::string_view v;
      CHECK(r.Find(Pool::kPercepts, "p-" + std::to_string(i), &v) != Found::kAbsent);
    }
    Read(r, "p-20000", Found::kAsk, Pool::kPercepts);
  }
  SECTION("a record that grows past the budget is let go, not left stale") {
    const size_t budget = ResidentRecords::kMinTableBytes + (4 << 10);
    ResidentRecords r(budget, true);
    r.Add(Write({{"t-3", "bystander"}, {"t-1", "small"}}));
    CHECK(Read(r, "t-1", Found::kHere) == "small");
    r.Add(Write({{"t-1", std::string(budget, 'x')}}));
    Read(r, "t-1", Found::kAsk);
    CHECK(r.bytes() <= budget);
    // It alone is let go, not the records before it.
    CHECK(Read(r, "t-3", Found::kHere) == "bystander");
    // Its hash answers for it: others stay known to be absent.
    CHECK(r.complete());
    Read(r, "t-2", Found::kAbsent);
    // Written again small, it is held again; deleted, it is absent.
    r.Add(Write({{"t-1", "small again"}}));
    CHECK(Read(r, "t-1", Found::kHere) == "small again");
    r.Add(Write({{"t-1", std::string(budget, 'x')}}));
    r.Add(Write({{"t-1", std::nullopt}}));
    Read(r, "t-1", Found::kAbsent);
  }
  SECTION("rewriting records does not use up the budget") {
    const size_t budget = ResidentRecords::kMinTableBytes + (8 << 10);
    ResidentRecords r(budget, true);
    r.Add(Write({{"t-1", std::string(1000, 'a')}, {"t-2", std::string(1000, 'b')}}));
    const size_t held = r.bytes();
    for (int i = 0; i < 100; ++i) {
      const std::string v(1000, static_cast<char>('c' + i % 20));
      r.Add(Write({{"t-1", v}, {"t-2", v}}));
      CHECK(Read(r, "t-1", Found::kHere) == v);
      CHECK(Read(r, "t-2", Found::kHere) == v);
      CHECK(r.bytes() == held);
    }
    CHECK(r.complete());
  }
}

TEST_CASE("resident records never contradict the DB, whatever the budget and the writes",
          "[resident]") {
  // A model of the DB (what each write leaves), and random writes of
  // random sizes: every answer is the model's, or "ask".
  for (size_t budget : {size_t{0}, ResidentRecords::kMinTableBytes + 512,
                        ResidentRecords::kMinTableBytes + (40 << 10), size_t{8} << 20}) {
    for (bool complete : {true, false}) {
      INFO("budget " << budget << " complete " << complete);
      std::mt19937 rng(static_cast<unsigned>(budget) + complete);
      ResidentRecords r(budget, complete);
      std::map<std::pair<int, std::string>, std::string> db;  // (pool, id) -> value
      size_t asked = 0, held = 0;
      for (int w = 0; w < 60; ++w) {
        ResidentRecords::Batch b;
        std::map<std::pair<int, std::string>, std::optional<std::string>> write;
        const int n = static_cast<int>(rng() % 300);
        for (int i = 0; i < n; ++i) {
          const Pool pool = rng() % 2 ? Pool::kPercepts : Pool::kThreads;
          const std::string id = "r-" + std::to_string(rng() % 3000);
          std::optional<std::string> value;
          if (rng() % 5) value = std::string(rng() % 400, static_cast<char>('a' + w % 26)) + id;
          write[{static_cast<int>(pool), id}] = value;  // one op per key, as a write has
        }
        for (auto& [key, value] : write) {
          b.Add(static_cast<Pool>(key.first), key.second, value);
          if (value) db[key] = *value;
          else db.erase(key);
        }
        r.Add(std::move(b));
        if (budget >= ResidentRecords::kMinTableBytes) CHECK(r.bytes() <= budget);
        for (int probe = 0; probe < 200; ++probe) {
          const Pool pool = rng() % 2 ? Pool::kPercepts : Pool::kThreads;
          const std::string id = "r-" + std::to_string(rng() % 3500);
          auto it = db.find({static_cast<int>(pool), id});
          std::string_view v;
          switch (r.Find(pool, id, &v)) {
            case Found::kHere:
              REQUIRE(it != db.end());
              CHECK(v == it->second);
              ++held;
              break;
            case Found::kAbsent: CHECK(it == db.end()); break;
            case Found::kAsk: ++asked; break;
          }
        }
      }
      if (budget == (size_t{8} << 20) && complete) CHECK(asked == 0);  // all held
      if (budget == 0) CHECK(held == 0);
    }
  }
}

}  // namespace resident_records_test
