// Worker: jobs in order on one thread; Stop waits for the running job
// and drops the rest; a job that throws does not stop the others.
#include "base/worker.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

// This file's own namespace: test programs compile in unity batches.
namespace worker_test {

using limbic::Worker;

TEST_CASE("a worker runs jobs in the order posted, on one thread that is not the caller's",
          "[worker]") {
  Worker w("test");
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  std::promise<void> done;
  for (int i = 0; i < 100; ++i)  // posted before Start: they wait for it
    w.Post([&, i] {
      order.push_back(i);
      threads.push_back(std::this_thread::get_id());
    });
  w.Post([&] { done.set_value(); });
  w.Start();
  done.get_future().wait();
  w.Stop();
  REQUIRE(order.size() == 100);
  for (int i = 0; i < 100; ++i) CHECK(order[i] == i);
  CHECK(threads.front() != std::this_thread::get_id());
  for (auto id : threads) CHECK(id == threads.front());
}

// The nice value of the thread a job runs on.
int NiceOfJob(Worker& w) {
  std::promise<int> nice;
  w.Post([&] {
    const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
    errno = 0;
    nice.set_value(::getpriority(PRIO_PROCESS, tid));
  });
  return nice.get_future().get();
}

TEST_CASE("a background worker runs at the least CPU priority, others as the process",
          "[worker]") {
  errno = 0;
  const int process = ::getpriority(PRIO_PROCESS, 0);
  Worker normal("normal"), background("background", /*background=*/true);
  normal.Start();
  background.Start();
  CHECK(NiceOfJob(normal) == process);
  CHECK(NiceOfJob(background) == 19);
  // The caller's own thread is untouched.
  CHECK(::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid))) == process);
}

TEST_CASE("Stop waits for the running job", "[worker]") {
  Worker w("test");
  w.Start();
  std::promise<void> started, release;
  std::shared_future<void> released = release.get_future().share();
  bool finished = false;
  w.Post([&] {
    started.set_value();
    released.wait();
    finished = true;
  });
  started.get_future().wait();
  std::thread stopper([&] { w.Stop(); });
  release.set_value();
  stopper.join();  // Stop returned: the running job had ended
  CHECK(finished);
}

TEST_CASE("Stop drops the jobs still queued, and those posted after it", "[worker]") {
  Worker w("test");
  bool ran = false;
  w.Post([&] { ran = true; });  // queued: the worker has not started
  w.Stop();
  w.Start();                     // a stopped worker takes no jobs
  w.Post([&] { ran = true; });
  w.Stop();                      // idempotent
  CHECK_FALSE(ran);
}

TEST_CASE("a job that throws does not end the worker or the process", "[worker]") {
  Worker w("test");
  w.Start();
  std::promise<int> next;
  w.Post([] { throw std::runtime_error("boom"); });
  w.Post([&] { next.set_value(7); });
  CHECK(next.get_future().get() == 7);
}

TEST_CASE("Guarded answers what the job answers, and Internal naming the worker when it throws",
          "[worker]") {
  Worker w("archive");
  auto fine = w.Guarded<int>([]() -> limbic::Result<int> { return 3; });
  REQUIRE(fine.ok());
  CHECK(*fine == 3);
  auto refused = w.Guarded<int>([]() -> limbic::Result<int> { return limbic::Status::NotFound("x"); });
  CHECK(refused.status().IsNotFound());
  auto thrown = w.Guarded<int>([]() -> limbic::Result<int> { throw std::runtime_error("boom"); });
  REQUIRE_FALSE(thrown.ok());
  CHECK(thrown.status().code() == limbic::Status::Code::kInternal);
  CHECK(thrown.status().message() == "archive: boom");
}

}  // namespace worker_test
