#include "runtime/ingest_service.h"

#include <boost/asio/post.hpp>
#include <filesystem>

namespace limbic::runtime {

IngestService::IngestService(boost::asio::io_context& io, std::shared_ptr<spdlog::logger> log)
    : io_(io), log_(std::move(log)) {}

IngestService::~IngestService() { worker_.Stop(); }

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
    log_->debug("memory: ingest over the API is off (no memory.ingest_roots)");
  auto made = memory::MakeEmbedder(options_.embedder);
  if (!made.ok()) return made.status().WithContext("memory.embedder (ingest worker)");
  embedder_ = std::move(*made);
  worker_.Start();
  return Status::OK();
}

void IngestService::Run(nlohmann::json req, Reply reply) {
  worker_.Post([this, req = std::move(req), reply = std::move(reply)]() mutable {
    // A bug in a request (poppler on a strange PDF) must not take the runtime down.
    Result<memory::PreparedIngest> result = worker_.Guarded<memory::PreparedIngest>(
        [&] { return memory::PrepareIngest(req, scope_, options_, *embedder_, raw_dir_, log_); });
    if (!result.ok() && result.status().code() == Status::Code::kInternal)
      log_->error("ingest: a request failed: {}", result.status().message());
    boost::asio::post(io_, [reply = std::move(reply), result = std::move(result)]() mutable {
      reply(std::move(result));
    });
  });
}

}  // namespace limbic::runtime
