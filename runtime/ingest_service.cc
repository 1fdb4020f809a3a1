#include "runtime/ingest_service.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <filesystem>

namespace limbic::runtime {

IngestService::IngestService(boost::asio::io_context& io, std::shared_ptr<spdlog::logger> log)
    : io_(io), log_(std::move(log)) {}

IngestService::~IngestService() {
  if (worker_) {
    worker_io_.stop();
    worker_->join();
  }
}

Status IngestService::Open(const memory::MemoryStore& store) {
  options_ = store.options();
  scope_ = store.ApiIngestScope();
  raw_dir_ = store.dir() + "/raw";
  // A root that does not resolve refuses everything under it: say so now,
  // not only in each request's 403.
  for (const std::string& root : scope_.roots) {
    std::error_code ec;
    if (!std::filesystem::is_directory(root, ec))
      log_->warn("memory.ingest_roots: {} is not a directory (yet); ingest under it is refused",
                 root);
  }
  if (scope_.roots.empty())
    log_->info("memory: ingest over the API is off (no memory.ingest_roots)");
  auto made = memory::MakeEmbedder(memory::ApplyEmbeddingEnv(options_.embedder));
  if (!made.ok()) return made.status().WithContext("memory.embedder (ingest worker)");
  embedder_ = std::move(*made);
  worker_ = std::make_unique<std::thread>([this] {
    auto guard = boost::asio::make_work_guard(worker_io_);
    worker_io_.run();
  });
  return Status::OK();
}

void IngestService::Run(nlohmann::json req, Reply reply) {
  boost::asio::post(worker_io_, [this, req = std::move(req), reply = std::move(reply)]() mutable {
    // A bug in a request (poppler on a strange PDF) must not take the runtime down.
    Result<memory::PreparedIngest> result = Status::Internal("ingest: the request did not finish");
    try {
      result = memory::PrepareIngest(req, scope_, options_, *embedder_, raw_dir_, log_);
    } catch (const std::exception& e) {
      log_->error("ingest: a request failed: {}", e.what());
      result = Status::Internal(std::string("ingest: ") + e.what());
    }
    boost::asio::post(io_, [reply = std::move(reply), result = std::move(result)]() mutable {
      reply(std::move(result));
    });
  });
}

}  // namespace limbic::runtime
