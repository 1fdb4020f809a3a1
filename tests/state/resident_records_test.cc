// ResidentRecords: what a bulk load's writes left in memory answers reads
// the way RocksDB would, within its budget.
#include <catch2/catch.hpp>

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
  SECTION("records past the budget are not taken in") {
    const size_t budget = 64 << 10;
    ResidentRecords r(budget, true);
    ResidentRecords::Batch b;
    for (int i = 0; i < 1000; ++i) b.Add(Pool::kPercepts, "p-" + std::to_string(i), std::string(200, 'v'));
    r.Add(std::move(b));
    CHECK(r.bytes() <= budget);
    CHECK_FALSE(r.complete());
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
  }
  SECTION("a record that grows past the budget is let go, not left stale") {
    const size_t budget = ResidentRecords::kMinTableBytes + (4 << 10);
    ResidentRecords r(budget, true);
    r.Add(Write({{"t-1", "small"}}));
    CHECK(Read(r, "t-1", Found::kHere) == "small");
    r.Add(Write({{"t-1", std::string(budget, 'x')}}));
    Read(r, "t-1", Found::kAsk);
    CHECK(r.bytes() <= budget);
    // Its id still answers for it: others stay known to be absent.
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

}  // namespace resident_records_test
