#include "base/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/worker.h"

namespace limbic {
namespace {

size_t PoolSize() {
  return std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
}

// The helpers: PoolSize() - 1 Workers, never destroyed (their threads wait
// for jobs until the process exits).
std::vector<std::unique_ptr<Worker>>& Helpers() {
  static auto* helpers = [] {
    auto* v = new std::vector<std::unique_ptr<Worker>>;
    for (size_t i = 1; i < PoolSize(); ++i) {
      v->push_back(std::make_unique<Worker>("parallel-" + std::to_string(i)));
      v->back()->Start();
    }
    return v;
  }();
  return *helpers;
}

// One loop's shared state; helpers hold it by shared_ptr, so one that
// starts after the loop returned finds it closed and touches nothing else.
struct Loop {
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::condition_variable cv;
  size_t running = 0;  // helpers inside the loop
  bool closed = false;  // the caller ran out of items: no helper may join
  std::exception_ptr error;
};

}  // namespace

size_t ParallelWorkers(size_t n) { return std::clamp<size_t>(n / 8, 1, PoolSize()); }

void ParallelForWorkers(size_t n, const std::function<void(size_t, size_t)>& fn) {
  const size_t threads = ParallelWorkers(n);
  auto loop = std::make_shared<Loop>();
  auto work = [&fn, n, loop](size_t worker) {
    try {
      for (size_t i; (i = loop->next.fetch_add(1)) < n;) fn(i, worker);
    } catch (...) {
      loop->next = n;  // hand out no more
      std::lock_guard<std::mutex> lock(loop->mu);
      if (!loop->error) loop->error = std::current_exception();
    }
  };
  auto& helpers = Helpers();
  for (size_t t = 1; t < threads; ++t) {
    helpers[t - 1]->Post([loop, work, t] {
      {
        std::lock_guard<std::mutex> lock(loop->mu);
        if (loop->closed) return;
        ++loop->running;
      }
      work(t);
      std::lock_guard<std::mutex> lock(loop->mu);
      if (--loop->running == 0) loop->cv.notify_all();
    });
  }
  work(0);
  std::unique_lock<std::mutex> lock(loop->mu);
  loop->closed = true;
  loop->cv.wait(lock, [&] { return loop->running == 0; });
  if (loop->error) std::rethrow_exception(loop->error);
}

void ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  ParallelForWorkers(n, [&fn](size_t i, size_t) { fn(i); });
}

}  // namespace limbic
