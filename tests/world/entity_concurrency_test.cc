// Several writers on one entities folder: processes and threads, each with
// its own store, lose no lines and add no duplicates.
#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <thread>

#include "world/entity_store.h"
#include "world/entity_test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace entity_concurrency_test {

using namespace limbic::world;
using namespace limbic::world::testing;
using limbic::testing::RunInProcesses;
using namespace std::string_literals;
namespace fs = std::filesystem;

namespace {

// Worker `w` of `n` adds to every page of `pages`: a shared fact and
// timeline line (every worker the same) and lines of its own.
void Work(EntityStore& store, int w, int rounds, int pages) {
  for (int round = 0; round < rounds; ++round) {
    std::vector<PageUpdate> updates;
    for (int p = 0; p < pages; ++p) {
      PageUpdate u = Update("Page " + std::to_string(p));
      u.facts = {"shared fact", "fact " + std::to_string(w) + "." + std::to_string(round)};
      u.timeline = {{"2026-06-0" + std::to_string(1 + round % 5), "shared event"},
                    {"2026-06-0" + std::to_string(1 + round % 5),
                     "event " + std::to_string(w) + "." + std::to_string(round)}};
      updates.push_back(u);
    }
    auto r = store.Apply(updates);
    if (!r.ok()) throw std::runtime_error(r.status().ToString());
  }
}

void CheckPages(EntityStore& store, int workers, int rounds, int pages) {
  for (int p = 0; p < pages; ++p) {
    auto text = store.Read("page " + std::to_string(p));
    REQUIRE(text.ok());
    CHECK(Count(*text, "- shared fact\n") == 1);
    CHECK(Count(*text, "- shared event\n") == 5);
    CHECK(Count(*text, "### [[") == 5);
    for (int w = 0; w < workers; ++w)
      for (int round = 0; round < rounds; ++round) {
        std::string id = std::to_string(w) + "." + std::to_string(round);
        CHECK(Count(*text, "- fact " + id + "\n") == 1);
        CHECK(Count(*text, "- event " + id + "\n") == 1);
      }
  }
  auto list = store.List();
  REQUIRE(list.ok());
  REQUIRE(list->size() == static_cast<size_t>(pages));
  for (const PageInfo& info : *list) {
    CHECK(info.facts == 1 + static_cast<size_t>(workers * rounds));
    CHECK(info.timeline == 5 + static_cast<size_t>(workers * rounds));
  }
}

}  // namespace

TEST_CASE("concurrent processes lose no lines and add no duplicates", "[world][entities]") {
  ScratchDir tmp;
  const int kWorkers = 4, kRounds = 10, kPages = 6;
  OpenStore(tmp / "entities");
  const std::vector<int> codes = RunInProcesses(kWorkers, [&](int w) {
    auto store = EntityStore::Open(tmp / "entities");
    if (!store.ok()) return 2;
    Work(**store, w, kRounds, kPages);
    return 0;
  });
  CHECK(codes == std::vector<int>(kWorkers, 0));
  CheckPages(*OpenStore(tmp / "entities"), kWorkers, kRounds, kPages);
}

TEST_CASE("concurrent threads with their own stores lose no lines", "[world][entities]") {
  ScratchDir tmp;
  const int kWorkers = 4, kRounds = 10, kPages = 6;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int w = 0; w < kWorkers; ++w)
    threads.emplace_back([&, w] {
      try {
        auto store = EntityStore::Open(tmp / "entities");
        if (!store.ok()) throw std::runtime_error(store.status().ToString());
        Work(**store, w, kRounds, kPages);
      } catch (...) {
        ++failures;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  CheckPages(*OpenStore(tmp / "entities"), kWorkers, kRounds, kPages);
}

}  // namespace entity_concurrency_test
