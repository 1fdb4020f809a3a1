// Tests of runtime/embed_service.h: a request is embedded a batch per job,
// so a small request asked during a long one is answered before it, and
// stopping waits for one batch, not the whole request; a cheap embedder
// answers one batch in place and steps a larger request on the io thread.
#include "runtime/embed_service.h"

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>

// This file's own namespace: test programs compile in unity batches.
namespace embed_service_test {

using namespace limbic;
using limbic::runtime::EmbedService;

namespace {

// An embedder whose first call waits until Open() is called; each text
// "N" gives the vector {N}. Records each call's text count.
class GatedEmbedder final : public memory::Embedder {
 public:
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    bool entered = false, open = false;
    std::vector<size_t> calls;
    void Open() {
      std::lock_guard lock(mu);
      open = true;
      cv.notify_all();
    }
    void WaitEntered() {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return entered; });
    }
  };
  explicit GatedEmbedder(std::shared_ptr<Shared> s) : s_(std::move(s)) {}
  const std::string& id() const override { return id_; }
  Result<std::vector<memory::Vector>> Embed(std::span<const std::string> texts,
                                            memory::EmbedRole) override {
    {
      std::unique_lock lock(s_->mu);
      s_->calls.push_back(texts.size());
      s_->entered = true;
      s_->cv.notify_all();
      s_->cv.wait(lock, [&] { return s_->open; });
    }
    std::vector<memory::Vector> out;
    for (const std::string& t : texts) out.push_back({std::stof(t)});
    return out;
  }

 private:
  std::shared_ptr<Shared> s_;
  std::string id_ = "gated";
};

// A cheap embedder (as hash is): text "N" gives {N}; records each call's
// text count.
class CheapEmbedder final : public memory::Embedder {
 public:
  explicit CheapEmbedder(std::vector<size_t>* calls) : calls_(calls) {}
  const std::string& id() const override { return id_; }
  Result<std::vector<memory::Vector>> Embed(std::span<const std::string> texts,
                                            memory::EmbedRole) override {
    calls_->push_back(texts.size());
    std::vector<memory::Vector> out;
    for (const std::string& t : texts) out.push_back({std::stof(t)});
    return out;
  }
  bool cheap() const override { return true; }

 private:
  std::vector<size_t>* calls_;
  std::string id_ = "cheap";
};

std::vector<std::string> Numbers(int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back(std::to_string(i));
  return out;
}

std::shared_ptr<spdlog::logger> NullLog() {
  return std::make_shared<spdlog::logger>("embed-test",
                                          std::make_shared<spdlog::sinks::null_sink_mt>());
}

}  // namespace

TEST_CASE("embed service: a request asked during a long one is answered first") {
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  auto shared = std::make_shared<GatedEmbedder::Shared>();
  EmbedService svc(io, NullLog());
  svc.Open(std::make_unique<GatedEmbedder>(shared), /*batch=*/2);
  std::vector<std::string> order;
  std::vector<memory::Vector> bulk;
  auto stop_after_two = [&] {
    if (order.size() == 2) guard.reset();
  };
  svc.Run(Numbers(0, 9), memory::EmbedRole::kPassage, [&](memory::Embedded e) {
    REQUIRE(e.vectors.ok());
    bulk = *e.vectors;
    order.push_back("bulk");
    stop_after_two();
  });
  shared->WaitEntered();  // the bulk request's first batch is being embedded
  svc.Run({"100"}, memory::EmbedRole::kQuery, [&](memory::Embedded e) {
    REQUIRE(e.vectors.ok());
    REQUIRE(e.vectors->size() == 1);
    CHECK((*e.vectors)[0] == memory::Vector{100});
    CHECK(e.embedder_id == "gated");
    order.push_back("query");
    stop_after_two();
  });
  shared->Open();
  io.run();
  CHECK(order == std::vector<std::string>{"query", "bulk"});
  // The bulk request's vectors in order, whatever ran between its batches.
  REQUIRE(bulk.size() == 9);
  for (size_t i = 0; i < bulk.size(); ++i) CHECK(bulk[i] == memory::Vector{float(i)});
  std::lock_guard lock(shared->mu);
  CHECK(shared->calls == std::vector<size_t>{2, 1, 2, 2, 2, 1});
}

TEST_CASE("embed service: requests of one batch are answered in the order asked") {
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  auto shared = std::make_shared<GatedEmbedder::Shared>();
  shared->open = true;
  EmbedService svc(io, NullLog());
  svc.Open(std::make_unique<GatedEmbedder>(shared), /*batch=*/4);
  std::vector<float> got;
  for (int i = 0; i < 5; ++i)
    svc.Run(Numbers(i, i + 1), memory::EmbedRole::kQuery, [&](memory::Embedded e) {
      REQUIRE(e.vectors.ok());
      got.push_back((*e.vectors)[0][0]);
      if (got.size() == 5) guard.reset();
    });
  io.run();
  CHECK(got == std::vector<float>{0, 1, 2, 3, 4});
}

TEST_CASE("embed service: stopping during a long request waits for one batch, not the rest") {
  boost::asio::io_context io;
  auto shared = std::make_shared<GatedEmbedder::Shared>();
  EmbedService svc(io, NullLog());
  svc.Open(std::make_unique<GatedEmbedder>(shared), /*batch=*/2);
  bool replied = false;
  svc.Run(Numbers(0, 100), memory::EmbedRole::kPassage, [&](memory::Embedded) { replied = true; });
  shared->WaitEntered();
  std::thread stopper([&] { svc.Stop(); });
  while (!svc.stopping()) std::this_thread::yield();
  shared->Open();  // the running batch ends; the next is not started
  stopper.join();
  io.run();
  CHECK_FALSE(replied);
  std::lock_guard lock(shared->mu);
  CHECK(shared->calls == std::vector<size_t>{2});
}

TEST_CASE(
    "embed service: a cheap embedder answers one batch in place, and steps a larger one on the io "
    "thread") {
  boost::asio::io_context io;
  std::vector<size_t> calls;
  EmbedService svc(io, NullLog());
  svc.Open(std::make_unique<CheapEmbedder>(&calls), /*batch=*/3);
  std::vector<std::string> order;
  std::vector<memory::Vector> bulk;
  svc.Run(Numbers(0, 8), memory::EmbedRole::kPassage, [&](memory::Embedded e) {
    REQUIRE(e.vectors.ok());
    bulk = *e.vectors;
    order.push_back("bulk");
  });
  CHECK(calls.empty());  // nothing embedded before the io thread runs it
  io.run_one();          // its first batch
  CHECK(calls == std::vector<size_t>{3});
  // One batch or less: in place, before Run returns, between the bulk's batches.
  svc.Run({"100"}, memory::EmbedRole::kQuery, [&](memory::Embedded e) {
    REQUIRE(e.vectors.ok());
    CHECK((*e.vectors)[0] == memory::Vector{100});
    order.push_back("query");
  });
  CHECK(order == std::vector<std::string>{"query"});
  io.run();
  CHECK(order == std::vector<std::string>{"query", "bulk"});
  CHECK(calls == std::vector<size_t>{3, 1, 3, 2});
  REQUIRE(bulk.size() == 8);
  for (size_t i = 0; i < bulk.size(); ++i) CHECK(bulk[i] == memory::Vector{float(i)});

  // After Stop, the rest of a large request is dropped unanswered.
  calls.clear();
  bool replied = false;
  svc.Run(Numbers(0, 8), memory::EmbedRole::kPassage, [&](memory::Embedded) { replied = true; });
  io.restart();
  io.run_one();
  svc.Stop();
  io.run();
  CHECK_FALSE(replied);
  CHECK(calls == std::vector<size_t>{3});
}

}  // namespace embed_service_test
