// ModelWorker: jobs reach the model on the worker, answers come back on the
// io thread in order, the after-job hook runs before each reply, and a job
// that throws answers Internal instead of ending the process.
#include "base/model_worker.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

// This file's own namespace: test programs compile in unity batches.
namespace model_worker_test {

using limbic::ModelWorker;
using limbic::Result;
using limbic::Status;
using nlohmann::json;

namespace {
struct Counter {
  int value = 0;
  std::thread::id last_thread;
};
}  // namespace

TEST_CASE("a model worker runs jobs on its worker and answers on the io thread, in order",
          "[model_worker]") {
  boost::asio::io_context io;
  auto busy = boost::asio::make_work_guard(io);  // replies come from another thread
  std::vector<std::string> seen;  // io thread only
  ModelWorker<Counter> counter(io, "test", [&](Counter& c) {
    return [&seen, value = c.value] { seen.push_back("after " + std::to_string(value)); };
  });
  counter.Start(std::make_unique<Counter>());
  const std::thread::id io_thread = std::this_thread::get_id();
  for (int i = 1; i <= 3; ++i)
    counter.Run(
        [](Counter& c) -> Result<json> {
          c.last_thread = std::this_thread::get_id();
          return json(++c.value);
        },
        [&](Result<json> r) {
          CHECK(std::this_thread::get_id() == io_thread);
          REQUIRE(r.ok());
          seen.push_back("reply " + r->dump());
        });
  counter.Run([&](Counter& c) -> Result<json> { return json(c.last_thread != io_thread); },
              [&](Result<json> r) {
                REQUIRE(r.ok());
                CHECK(*r == json(true));  // the jobs did not run on the io thread
                io.stop();
              });
  io.run_for(std::chrono::seconds(10));
  CHECK(seen == std::vector<std::string>{"after 1", "reply 1", "after 2", "reply 2", "after 3",
                                          "reply 3", "after 3"});
}

TEST_CASE("a job that throws answers Internal naming the worker, and later jobs still run",
          "[model_worker]") {
  boost::asio::io_context io;
  auto busy = boost::asio::make_work_guard(io);
  ModelWorker<Counter> counter(io, "counter");
  counter.Start(std::make_unique<Counter>());
  Status failed;
  int after = 0;
  counter.Run([](Counter&) -> Result<json> { throw std::runtime_error("boom"); },
              [&](Result<json> r) { failed = r.status(); });
  counter.Run([](Counter& c) -> Result<json> { return json(++c.value); },
              [&](Result<json> r) {
                after = r.ok() ? r->get<int>() : -1;
                io.stop();
              });
  io.run_for(std::chrono::seconds(10));
  CHECK(failed.code() == Status::Code::kInternal);
  CHECK(failed.message() == "counter: boom");
  CHECK(after == 1);
}

TEST_CASE("jobs posted before Start wait for the model, and Stop drops what is still queued",
          "[model_worker]") {
  boost::asio::io_context io;
  int replies = 0;
  {
    ModelWorker<Counter> counter(io, "test");
    counter.Post([](Counter& c) { c.value = 41; });
    counter.Run([](Counter& c) -> Result<json> { return json(++c.value); },
                [&](Result<json> r) {
                  ++replies;
                  CHECK(*r == json(42));
                });
    counter.Start(std::make_unique<Counter>());
    std::promise<void> ran;
    counter.Post([&](Counter&) { ran.set_value(); });
    ran.get_future().wait();
    counter.Stop();
    counter.Run([](Counter&) -> Result<json> { return json(0); }, [&](Result<json>) { ++replies; });
  }
  io.run();  // only what was answered before Stop
  CHECK(replies == 1);
}

}  // namespace model_worker_test
