// ModelWorker<Model>: an object that does slow file work (the archive's
// store, the world model) living on a Worker of its own, and the one way an
// io thread reaches it.
//
//   ModelWorker<Store> store(io, "archive");
//   store.Start(std::move(opened));            // the worker owns it now
//   store.Run([](Store& s) { return s.Stats(); },
//             [](Result<json> r) { ... });     // on the io thread
//
// Run() queues a job on the worker, where it is the only code touching the
// model (jobs run one at a time, in order); its answer -- or Internal when
// it throws -- is posted back to the io_context for `reply`. An `after_job`
// hook, if set, runs on the worker after every job and returns what the io
// thread runs before that job's reply (the archive takes its unreadable
// days this way, so the io thread never reads the store).
//
// Thread-safety: Start, Run and Stop on the io thread; the model only on
// the worker once started.
#pragma once

#include <nlohmann/json.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "base/status.h"
#include "base/worker.h"

namespace limbic {

template <typename Model>
class ModelWorker {
 public:
  using Job = std::function<Result<nlohmann::json>(Model&)>;
  using Reply = std::function<void(Result<nlohmann::json>)>;
  using AfterJob = std::function<std::function<void()>(Model&)>;

  ModelWorker(boost::asio::io_context& io, std::string name, AfterJob after_job = nullptr)
      : io_(io), worker_(std::move(name)), after_job_(std::move(after_job)) {}
  ~ModelWorker() { worker_.Stop(); }  // after the running job; the model goes with it

  // Hands the model to the worker and starts it; jobs Run before wait for it.
  void Start(std::unique_ptr<Model> model) {
    model_ = std::move(model);
    worker_.Start();
  }
  // After the running job; later jobs are dropped without a reply.
  void Stop() { worker_.Stop(); }

  void Run(Job job, Reply reply) {
    worker_.Post([this, job = std::move(job), reply = std::move(reply)]() mutable {
      Result<nlohmann::json> result = worker_.template Guarded<nlohmann::json>([&] { return job(*model_); });
      std::function<void()> before = after_job_ ? after_job_(*model_) : nullptr;
      boost::asio::post(io_, [before = std::move(before), reply = std::move(reply),
                              result = std::move(result)]() mutable {
        if (before) before();
        if (reply) reply(std::move(result));
      });
    });
  }
  // Runs `task` on the worker, with no answer (a long pass that logs).
  void Post(std::function<void(Model&)> task) {
    worker_.Post([this, task = std::move(task)] { task(*model_); });
  }

 private:
  boost::asio::io_context& io_;
  Worker worker_;
  AfterJob after_job_;
  std::unique_ptr<Model> model_;
};

}  // namespace limbic
