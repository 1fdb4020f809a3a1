#include "base/worker.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <exception>

namespace limbic {

bool MakeThisThreadBackground() {
  const pid_t tid = static_cast<pid_t>(::syscall(SYS_gettid));
  // On Linux a nice value belongs to the thread named by its tid.
  const bool cpu = ::setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 19) == 0;
  // ioprio_set(IOPRIO_WHO_PROCESS, tid, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)):
  // no glibc wrapper. Honoured by the BFQ scheduler, ignored by others.
  constexpr int kWhoProcess = 1, kClassIdle = 3, kClassShift = 13;
  const bool io = ::syscall(SYS_ioprio_set, kWhoProcess, tid, kClassIdle << kClassShift) == 0;
  return cpu && io;
}

Worker::Worker(std::string name, bool background)
    : name_(std::move(name)), background_(background) {}

Worker::~Worker() { Stop(); }

void Worker::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    // Linux thread names hold 15 bytes: "limbic-" and the first 8 of ours.
    const std::string thread_name = ("limbic-" + name_).substr(0, 15);
    pthread_setname_np(pthread_self(), thread_name.c_str());
    if (background_) (void)MakeThisThreadBackground();
    Loop();
  });
}

void Worker::Stop() {
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    dropped.swap(jobs_);
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // `dropped` goes here, on the caller's thread, after the worker is gone.
}

void Worker::Post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void Worker::Loop() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    try {
      job();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "limbic: worker %s: a job failed: %s\n", name_.c_str(), e.what());
    } catch (...) {
      std::fprintf(stderr, "limbic: worker %s: a job failed\n", name_.c_str());
    }
  }
}

}  // namespace limbic
