// ParallelFor: the loops over every document (Verify, loading an archive,
// links) run on all cores. Internal to limbic_archive.
#pragma once

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace limbic::archive {

// How many threads ParallelFor uses for n items: one per core, at most 8,
// and one per 8 items (starting a thread costs more than a few small
// documents do; an archive of a few days is read on the calling thread).
inline size_t Workers(size_t n) {
  return std::max<size_t>(1, std::min<size_t>({std::thread::hardware_concurrency(), 8, n / 8}));
}

// Calls fn(i, worker) for every i in [0, n) on Workers(n) threads (this one
// included) that each take the next index; `worker` in [0, Workers(n))
// names the calling thread, for per-thread scratch state. Returns when all
// are done. `fn` must be safe to call from several threads for different i.
template <typename Fn>
void ParallelForWorkers(size_t n, Fn&& fn) {
  const size_t threads = Workers(n);
  std::atomic<size_t> next{0};
  auto work = [&](size_t worker) {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i, worker);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& t : pool) t.join();
}

// The same without the worker index.
template <typename Fn>
void ParallelFor(size_t n, Fn&& fn) {
  ParallelForWorkers(n, [&](size_t i, size_t) { fn(i); });
}

}  // namespace limbic::archive
