// KeyTable: the overlay's hash map answers as std::map would, through
// growth, collisions and erasure mid-iteration.
#include "state/key_table.h"

#include <catch2/catch.hpp>
#include <map>
#include <random>

// This file's own namespace: test programs compile in unity batches.
namespace key_table_test {

using namespace limbic::state;

namespace {

enum class P : uint8_t { kA, kB };
using Table = KeyTable<P, int>;
using Key = Table::Key;

// The table's entries, ordered, to compare with a std::map.
std::map<Key, int> Contents(const Table& t) {
  std::map<Key, int> out;
  for (const auto& [key, value] : t) CHECK(out.emplace(key, value).second);  // each once
  return out;
}

}  // namespace

TEST_CASE("a key table finds, adds, assigns and erases as std::map does", "[key_table]") {
  Table t;
  CHECK(t.empty());
  CHECK(t.find({P::kA, "x"}) == t.end());
  auto [it, added] = t.emplace({P::kA, "x"}, 1);
  CHECK(added);
  CHECK(it->second == 1);
  CHECK_FALSE(t.emplace({P::kA, "x"}, 2).second);  // kept
  CHECK(t.at({P::kA, "x"}) == 1);
  t[{P::kB, "x"}] = 3;  // same id, other pool
  CHECK(t.size() == 2);
  CHECK(t.Find(P::kB, "x")->second == 3);
  CHECK(t.Find(P::kB, "y") == t.end());
  CHECK_THROWS_AS(t.at({P::kB, "y"}), std::out_of_range);
  t.erase(t.find({P::kA, "x"}));
  CHECK(t.find({P::kA, "x"}) == t.end());
  CHECK(t.Find(P::kB, "x")->second == 3);
  t.clear();
  CHECK(t.empty());
  CHECK(t.find({P::kB, "x"}) == t.end());
  t[{P::kA, ""}] = 5;  // an empty id is a key like any other
  CHECK(t.at({P::kA, ""}) == 5);
}

TEST_CASE("random work on a key table matches std::map", "[key_table]") {
  std::mt19937 rng(11);
  for (int round = 0; round < 20; ++round) {
    Table t;
    std::map<Key, int> m;
    // Few distinct ids, so keys come back often and clusters form.
    const int ids = 50 + round * 100;
    for (int step = 0; step < 20000; ++step) {
      Key key{rng() % 2 ? P::kA : P::kB, "id-" + std::to_string(rng() % ids)};
      const int value = static_cast<int>(rng() % 1000);
      switch (rng() % 6) {
        case 0:
        case 1:
          t[key] = value;
          m[key] = value;
          break;
        case 2:
          CHECK(t.emplace(key, value).second == m.emplace(key, value).second);
          break;
        case 3: {
          auto it = t.find(key);
          REQUIRE((it == t.end()) == (m.count(key) == 0));
          if (it != t.end()) {
            t.erase(it);
            m.erase(key);
          }
          break;
        }
        case 4: {
          auto it = t.Find(key.first, key.second);
          auto mit = m.find(key);
          REQUIRE((it == t.end()) == (mit == m.end()));
          if (it != t.end()) CHECK(it->second == mit->second);
          break;
        }
        case 5:
          if (step % 500 == 0) {
            // Erase while iterating, as DropUpTo does: every odd value.
            for (auto it = t.begin(); it != t.end();) {
              if (it->second % 2)
                it = t.erase(it);
              else
                ++it;
            }
            std::erase_if(m, [](const auto& kv) { return kv.second % 2 != 0; });
          }
          break;
      }
      REQUIRE(t.size() == m.size());
    }
    CHECK(Contents(t) == m);
    for (const auto& [key, value] : m) CHECK(t.at(key) == value);
  }
}

}  // namespace key_table_test
