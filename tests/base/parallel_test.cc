#include "base/parallel.h"

#include <catch2/catch.hpp>
#include <dirent.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

// This file's own namespace: test programs compile in unity batches.
namespace parallel_test {

using namespace limbic;

namespace {
// Threads of this process, from /proc/self/task.
size_t ThreadCount() {
  size_t n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}
}  // namespace

TEST_CASE("ParallelFor calls fn once for every index", "[base]") {
  for (size_t n : {0, 1, 7, 8, 64, 1000}) {
    INFO(n);
    std::vector<std::atomic<int>> calls(n);
    ParallelFor(n, [&](size_t i) { calls[i]++; });
    for (size_t i = 0; i < n; ++i) CHECK(calls[i] == 1);
  }
}

TEST_CASE("ParallelForWorkers names each thread with one worker index", "[base]") {
  const size_t n = 1000;
  const size_t workers = ParallelWorkers(n);
  CHECK(workers >= 1);
  CHECK(workers <= 8);
  CHECK(ParallelWorkers(3) == 1);  // a few items stay on the calling thread
  std::vector<std::set<std::thread::id>> seen(workers);
  std::vector<std::mutex> mu(workers);
  ParallelForWorkers(n, [&](size_t, size_t w) {
    REQUIRE(w < workers);
    std::lock_guard<std::mutex> lock(mu[w]);
    seen[w].insert(std::this_thread::get_id());
  });
  for (const auto& ids : seen) CHECK(ids.size() <= 1);  // one thread per index
}

TEST_CASE("ParallelFor starts no thread per call", "[base]") {
  ParallelFor(1000, [](size_t) {});  // the pool exists from here on
  const size_t before = ThreadCount();
  for (int round = 0; round < 50; ++round) ParallelFor(1000, [](size_t) {});
  CHECK(ThreadCount() == before);
}

TEST_CASE("ParallelFor nests and runs from several threads without waiting on itself", "[base]") {
  std::atomic<size_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      ParallelFor(64, [&](size_t) { ParallelFor(64, [&](size_t) { total++; }); });
    });
  for (auto& t : callers) t.join();
  CHECK(total == 4 * 64 * 64);
}

TEST_CASE("ParallelFor rethrows the first exception on the calling thread", "[base]") {
  std::atomic<size_t> calls{0};
  std::atomic<bool> thrown{false};
  CHECK_THROWS_WITH(ParallelFor(1000,
                                [&](size_t i) {
                                  calls++;
                                  if (i == 10) {
                                    thrown = true;
                                    throw std::runtime_error("item 10");
                                  }
                                  // Later items wait for the throw, then are slow, so the
                                  // other threads cannot run through them all before the
                                  // loop sees it. (Index 10 is handed out before them.)
                                  if (i < 10) return;
                                  while (!thrown) std::this_thread::yield();
                                  std::this_thread::sleep_for(std::chrono::milliseconds(2));
                                }),
                    "item 10");
  CHECK(calls < 1000);  // it stopped handing out indices
  // and the pool still works
  std::atomic<size_t> after{0};
  ParallelFor(100, [&](size_t) { after++; });
  CHECK(after == 100);
}

}  // namespace parallel_test
