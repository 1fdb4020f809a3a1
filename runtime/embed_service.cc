#include "runtime/embed_service.h"

#include <boost/asio/post.hpp>
#include <chrono>

namespace limbic::runtime {

EmbedService::EmbedService(boost::asio::io_context& io, std::shared_ptr<spdlog::logger> log)
    : io_(io), log_(std::move(log)) {}

EmbedService::~EmbedService() { worker_.Stop(); }

Status EmbedService::Open(const memory::MemoryStore& store) {
  auto made = memory::MakeEmbedder(store.options().embedder);
  if (!made.ok()) return made.status().WithContext("memory.embedder (embed worker)");
  embedder_ = std::move(*made);
  batch_ = std::max<size_t>(1, store.options().embedder.batch);
  if (!embedder_->cheap()) worker_.Start();
  return Status::OK();
}

memory::Embedded EmbedService::Embed(const std::vector<std::string>& texts,
                                     memory::EmbedRole role) {
  memory::Embedded out{embedder_->id(), std::vector<memory::Vector>{}};
  // Pieces of four batches: progress between them for `memory embed`'s thousands.
  const size_t piece = batch_ * 4;
  if (texts.size() <= piece) {
    out.vectors = worker_.Guarded<std::vector<memory::Vector>>([&] { return embedder_->Embed(texts, role); });
    return out;
  }
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto said = start;
  std::vector<memory::Vector> all;
  all.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); i += piece) {
    const size_t end = std::min(texts.size(), i + piece);
    auto v = worker_.Guarded<std::vector<memory::Vector>>([&] {
      return embedder_->Embed(std::span(texts).subspan(i, end - i), role);
    });
    if (!v.ok()) {
      out.vectors = v.status();
      return out;
    }
    for (auto& x : *v) all.push_back(std::move(x));
    if (Clock::now() - said > std::chrono::seconds(10)) {
      said = Clock::now();
      const double secs = std::chrono::duration<double>(said - start).count();
      log_->info("memory: embedded {}/{} texts with {} ({:.0f}/s)", end, texts.size(),
                 embedder_->id(), static_cast<double>(end) / secs);
    }
  }
  out.vectors = std::move(all);
  return out;
}

void EmbedService::Run(std::vector<std::string> texts, memory::EmbedRole role, Reply reply) {
  if (embedder_->cheap()) return reply(Embed(texts, role));
  worker_.Post([this, texts = std::move(texts), role, reply = std::move(reply)]() mutable {
    memory::Embedded done = Embed(texts, role);
    if (!done.vectors.ok() && done.vectors.status().code() == Status::Code::kInternal)
      log_->error("memory: embedding failed: {}", done.vectors.status().message());
    boost::asio::post(io_, [reply = std::move(reply), done = std::move(done)]() mutable {
      reply(std::move(done));
    });
  });
}

}  // namespace limbic::runtime
