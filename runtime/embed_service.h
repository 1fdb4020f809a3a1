// EmbedService: memory's vectors off the io thread (docs/memory.md
// "Embedders").
//
// A local model takes milliseconds a text and an openai server a round
// trip; either on the io thread would stall every request behind it. So
// the API's remember, recall, context and embed first ask this service for
// their texts' vectors, then plan on the io thread with them
// (memory::Embedded). The service owns an embedder of the store's spec
// (EMBEDDING_MODEL applied; a local model is shared, not loaded twice) and
// runs it on a worker of its own. A cheap embedder (hash: microseconds)
// runs in place, before Run returns, for a request of one batch or less;
// a larger one (`memory embed --all` of 100k memories: half a second) is
// embedded a batch at a time on the io thread, posted as the worker's are.
//
// Scheduling: a request is embedded one batch (memory.embedder.batch texts)
// per worker job; a request with more texts queues its next batch behind
// whatever was asked meanwhile. So a recall waits for at most one batch of
// a `memory embed --all` of 100k memories, not for all of it, and stopping
// waits for the batch being embedded, not for the rest. Replies to
// requests of one batch or less come in the order asked.
//
// Thread-safety: Open and Run on the io thread; replies come on it.
#pragma once

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/worker.h"
#include "memory/store.h"

namespace limbic::runtime {

class EmbedService {
 public:
  using Reply = std::function<void(memory::Embedded)>;

  EmbedService(boost::asio::io_context& io, std::shared_ptr<spdlog::logger> log);
  //! Stop().
  ~EmbedService();

  //! Makes the embedder of the store's spec (an error names
  //! memory.embedder) and, unless it is cheap, starts the worker.
  Status Open(const memory::MemoryStore& store);
  //! Uses `embedder`, `batch` texts a job (>= 1), and, unless it is cheap,
  //! starts the worker (Open's work, and the tests').
  void Open(std::unique_ptr<memory::Embedder> embedder, size_t batch);
  //! One vector per text for `role`, or the embedder's error, in
  //! `reply` on the io thread (in place for a cheap embedder). A request of
  //! more than a few batches logs its progress every 10 s.
  void Run(std::vector<std::string> texts, memory::EmbedRole role, Reply reply);
  //! Waits for the batch being embedded; requests not finished are dropped
  //! unanswered, as are replies not yet delivered (with the io_context's
  //! queue). Idempotent.
  void Stop() { worker_.Stop(); }
  //! Whether Stop has begun (tests).
  bool stopping() const { return worker_.stopping(); }

 private:
  struct Request;  // one Run's texts, vectors so far and reply
  // Embeds `r`'s next batch (on the worker; a cheap embedder's on the io
  // thread); queues the batch after it (Next), or posts the reply.
  void Step(std::shared_ptr<Request> r);
  void Next(std::shared_ptr<Request> r);

  boost::asio::io_context& io_;
  std::shared_ptr<spdlog::logger> log_;
  size_t batch_ = 1;
  std::unique_ptr<memory::Embedder> embedder_;  // the worker's
  Worker worker_{"embed"};
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // for the io thread's steps
};

}  // namespace limbic::runtime
