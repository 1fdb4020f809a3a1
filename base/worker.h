// Worker: one thread that runs jobs one at a time, in the order they were
// posted -- the one way limbic takes slow work (file I/O, an LLM call, an
// ingest) off the io thread. The archive, world and ingest services each own
// one; a job's answer goes back to the io thread by whatever the job does at
// its end (the services post it to their io_context).
//
//   Worker w("archive");      // no thread yet
//   w.Start();                // the thread starts, named "limbic-archive"
//   w.Post([] { ... });       // runs on the thread, after the jobs before it
//   w.Stop();                 // after the running job; queued jobs are dropped
//
// A job that throws is caught and logged to stderr with the worker's name:
// it must not end the process (poppler on a strange PDF). A job that answers
// wraps its work in Guarded, which turns a throw into an Internal status
// the caller gets like any other error.
//
// Thread-safety: Post from any thread; Start and Stop from the owner's.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"

namespace limbic {

//! Lowers the calling thread's CPU priority to the least (nice 19) and its
//! I/O priority to the idle class: its work yields to every other thread
//! of the process whenever they compete for a core or the disk. Linux only;
//! false when the kernel refused (the thread then runs as before).
bool MakeThisThreadBackground();

class Worker {
 public:
  //! `background`: the thread runs MakeThisThreadBackground() first (for
  //! work that must never delay the loop, e.g. checkpoints).
  explicit Worker(std::string name, bool background = false);
  ~Worker();  // Stop()
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void Start();
  //! Waits for the running job to end and joins the thread; jobs still
  //! queued are dropped (destroyed on the caller's thread). Idempotent.
  void Stop();
  //! Queues `job`. Before Start, jobs wait for it; after Stop, they are
  //! dropped.
  void Post(std::function<void()> job);

  const std::string& name() const { return name_; }
  //! Whether Stop has been called (jobs posted now are dropped).
  bool stopping() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stopping_;
  }

  //! fn(), or Internal("NAME: WHAT") when it throws: a job's answer.
  template <typename T, typename Fn>
  Result<T> Guarded(Fn&& fn) const {
    try {
      return fn();
    } catch (const std::exception& e) {
      return Status::Internal(name_ + ": " + e.what());
    }
  }

 private:
  void Loop();

  const std::string name_;
  const bool background_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace limbic
