// CancelFlag and BlockingRunner (effectors/builtin.h): the threads the exec
// kind blocks on, and how Cancel() reaches them.
#include <boost/asio/post.hpp>

#include "effectors/builtin.h"

namespace limbic::effectors {

void CancelFlag::Arm(std::function<void()> interrupt) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_)
    interrupt();
  else
    interrupt_ = std::move(interrupt);
}

void CancelFlag::Disarm() {
  std::lock_guard<std::mutex> lock(mu_);
  interrupt_ = nullptr;
}

void CancelFlag::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  if (interrupt_) interrupt_();
  interrupt_ = nullptr;
}

bool CancelFlag::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

BlockingRunner::~BlockingRunner() {
  CancelAll();
  std::lock_guard<std::mutex> lock(mu_);
  for (Running& j : jobs_)
    if (j.thread.joinable()) j.thread.join();
}

void BlockingRunner::CancelAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (Running& j : jobs_)
    if (!*j.finished) j.cancel->Cancel();
}

void BlockingRunner::Run(Job job, std::function<void(Outcome)> done) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = jobs_.begin(); it != jobs_.end();) {  // reap finished threads
    if (*it->finished) {
      it->thread.join();
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
  auto cancel = std::make_shared<CancelFlag>();
  auto finished = std::make_shared<std::atomic<bool>>(false);
  std::thread thread(
      [this, job = std::move(job), done = std::move(done), cancel, finished]() mutable {
        Outcome o = job(*cancel);
        // What a cancelled job reports is an artefact of the interruption
        // (a timeout, a killed process) -- unless it got through.
        if (cancel->cancelled() && o.kind != Outcome::Kind::kComplete) o = Outcome::Cancelled();
        boost::asio::post(ioc_, [done = std::move(done), o = std::move(o)] { done(o); });
        *finished = true;
      });
  jobs_.push_back(Running{std::move(thread), std::move(cancel), std::move(finished)});
}

}  // namespace limbic::effectors
