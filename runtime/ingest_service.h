// IngestService: memory ingest requests from the HTTP API (and so from MCP)
// off the io thread (docs/memory.md "Ingest").
//
// An ingest is file work -- walking folders, reading files, PDF text,
// chunking, embedding, keeping originals -- that can take seconds for a
// large folder. It runs here, on a worker thread of its own, with its own
// embedder (the same spec as the memory store's: Embedder is one thread at
// a time, and the store's stays on the io thread). Only the plan (dedup
// against the pool, ids, events) and its commit run on the io thread
// (MemoryStore::PlanIngest). Requests are prepared one at a time, in order.
//
// The scope is the API's: memory.ingest_roots for a path, and
// memory.ingest_max_bytes per file (MemoryStore::ApiIngestScope). Files
// sent whole (`files`) read nothing of this machine but kept originals
// (memory::PrepareIngest).
//
// Thread-safety: Open and Run on the io thread; the worker touches only
// what it was given at Open (a copy of the options, its embedder).
#pragma once

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "memory/store.h"
#include "base/worker.h"

namespace limbic::runtime {

class IngestService {
 public:
  using Reply = std::function<void(Result<memory::PreparedIngest>)>;

  IngestService(boost::asio::io_context& io, std::shared_ptr<spdlog::logger> log);
  //! Stops the worker after the request it is preparing; replies not yet
  //! delivered are dropped with the io_context's queue.
  ~IngestService();

  //! Copies the store's options and API scope, makes the worker's embedder
  //! (an error names memory.embedder) and starts the worker.
  Status Open(const memory::MemoryStore& store);
  //! Prepares `req` ({path | files, episode_id?}) on the worker (decoding
  //! sent content too); `reply` gets the result on the io thread.
  void Run(nlohmann::json req, Reply reply);

 private:
  boost::asio::io_context& io_;
  std::shared_ptr<spdlog::logger> log_;
  memory::MemoryOptions options_;
  memory::IngestScope scope_;
  std::string raw_dir_;
  std::unique_ptr<memory::Embedder> embedder_;  // the worker's
  Worker worker_{"ingest"};
};

}  // namespace limbic::runtime
