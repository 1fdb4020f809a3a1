// ParallelFor: the loops over every document (Verify, loading an archive)
// run on all cores. Internal to limbic_archive.
#pragma once

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace limbic::archive {

// Calls fn(i) for every i in [0, n), on up to 8 threads (this one
// included), each taking the next index; returns when all are done. `fn`
// must be safe to call from several threads for different i.
template <typename Fn>
void ParallelFor(size_t n, Fn&& fn) {
  size_t threads = std::min<size_t>({std::max(1u, std::thread::hardware_concurrency()), 8, n});
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

}  // namespace limbic::archive
