#include "runtime/embed_service.h"

#include <boost/asio/post.hpp>
#include <chrono>

namespace limbic::runtime {

using Clock = std::chrono::steady_clock;

struct EmbedService::Request {
  std::vector<std::string> texts;
  memory::EmbedRole role;
  Reply reply;
  std::vector<memory::Vector> vectors;  // of texts[0, vectors.size())
  Clock::time_point start = Clock::now(), said = start;
};

EmbedService::EmbedService(boost::asio::io_context& io, std::shared_ptr<spdlog::logger> log)
    : io_(io), log_(std::move(log)) {}

EmbedService::~EmbedService() { Stop(); }

Status EmbedService::Open(const memory::MemoryStore& store) {
  auto made = memory::MakeEmbedder(store.options().embedder);
  if (!made.ok()) return made.status().WithContext("memory.embedder (embed worker)");
  Open(std::move(*made), store.options().embedder.batch);
  return Status::OK();
}

void EmbedService::Open(std::unique_ptr<memory::Embedder> embedder, size_t batch) {
  embedder_ = std::move(embedder);
  batch_ = std::max<size_t>(1, batch);
  if (!embedder_->cheap()) worker_.Start();
}

void EmbedService::Run(std::vector<std::string> texts, memory::EmbedRole role, Reply reply) {
  if (embedder_->cheap() && texts.size() <= batch_) {
    memory::Embedded done{embedder_->id(), embedder_->Embed(texts, role)};
    return reply(std::move(done));
  }
  auto r = std::make_shared<Request>();
  r->texts = std::move(texts);
  r->role = role;
  r->reply = std::move(reply);
  r->vectors.reserve(r->texts.size());
  Next(std::move(r));
}

void EmbedService::Next(std::shared_ptr<Request> r) {
  if (!embedder_->cheap()) return worker_.Post([this, r] { Step(r); });
  // A cheap embedder's batches on the io thread, each behind what was
  // asked meanwhile; none after Stop, nor once the service is gone.
  std::weak_ptr<int> alive = alive_;
  boost::asio::post(io_, [this, alive, r] {
    if (!alive.expired() && !worker_.stopping()) Step(r);
  });
}

void EmbedService::Step(std::shared_ptr<Request> r) {
  const size_t begin = r->vectors.size(), end = std::min(r->texts.size(), begin + batch_);
  auto v = worker_.Guarded<std::vector<memory::Vector>>(
      [&] { return embedder_->Embed(std::span(r->texts).subspan(begin, end - begin), r->role); });
  if (v.ok() && v->size() != end - begin)
    v = Status::Internal("the embedder gave " + std::to_string(v->size()) + " vectors for " +
                         std::to_string(end - begin) + " texts");
  if (v.ok()) {
    for (auto& x : *v) r->vectors.push_back(std::move(x));
    if (Clock::now() - r->said > std::chrono::seconds(10)) {
      r->said = Clock::now();
      const double secs = std::chrono::duration<double>(r->said - r->start).count();
      log_->info("memory: embedded {}/{} texts with {} ({:.0f}/s)", end, r->texts.size(),
                 embedder_->id(), static_cast<double>(end) / secs);
    }
    // The next batch goes behind what was asked meanwhile (a recall's one
    // text); after Stop it is dropped.
    if (end < r->texts.size()) return Next(r);
  }
  memory::Embedded done{embedder_->id(), std::vector<memory::Vector>{}};
  if (v.ok()) {
    done.vectors = std::move(r->vectors);
  } else {
    done.vectors = v.status();
    if (v.status().code() == Status::Code::kInternal)
      log_->error("memory: embedding failed: {}", v.status().message());
  }
  boost::asio::post(io_, [reply = std::move(r->reply), done = std::move(done)]() mutable {
    reply(std::move(done));
  });
}

}  // namespace limbic::runtime
