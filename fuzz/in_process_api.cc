#include "fuzz/in_process_api.h"

#include <pthread.h>
#include <spdlog/sinks/null_sink.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <future>

#include "runtime/config.h"

namespace limbic::fuzz {
namespace {

// An SSE stream that keeps what the handler sends at once.
// An event stream that keeps what its handler sends at once. Nothing is
// ever written out, so it never drains: a handler paging a backlog stops
// once the stream says it is backlogged (at the frames' cap).
class RecordingStream final : public runtime::SseStream {
 public:
  explicit RecordingStream(boost::asio::io_context& ioc) : ioc_(ioc) {}
  bool Send(std::string_view event, std::string_view id, std::string_view data) override {
    if (closed_) return false;
    if (frames_.size() < kMaxFrames)
      frames_ += "event: " + std::string(event) + "\nid: " + std::string(id) +
                 "\ndata: " + std::string(data) + "\n\n";
    return true;
  }
  void Close() override {
    if (closed_) return;
    closed_ = true;
    for (auto& cb : on_closed_) boost::asio::post(ioc_, std::move(cb));
    on_closed_.clear();
  }
  bool closed() const override { return closed_; }
  size_t queued_bytes() const override { return 0; }
  bool backlogged() const override { return frames_.size() >= kMaxFrames; }
  void OnDrained(std::function<void()>) override {}
  void OnClosed(std::function<void()> cb) override {
    if (closed_)
      boost::asio::post(ioc_, std::move(cb));
    else
      on_closed_.push_back(std::move(cb));
  }
  void Reject(int status, std::string code, std::string message) override {
    FUZZ_CHECK(!sent_answer_, "Reject after the stream started");
    rejected_ = runtime::HttpResponse::Error(status, std::move(code), std::move(message));
  }
  runtime::HttpResponse Answer() {
    sent_answer_ = true;
    if (rejected_) return *rejected_;
    runtime::HttpResponse r;
    r.content_type = "text/event-stream";
    r.body = frames_;
    return r;
  }

 private:
  static constexpr size_t kMaxFrames = size_t{1} << 20;  // bytes kept
  boost::asio::io_context& ioc_;
  std::vector<std::function<void()>> on_closed_;
  bool closed_ = false;
  bool sent_answer_ = false;
  std::string frames_;
  std::optional<runtime::HttpResponse> rejected_;
};

}  // namespace

void DropWait(runtime::HttpRequest& req) {
  std::erase_if(req.query_items, [](const auto& item) { return item.first == "wait"; });
}

InProcessApi& InProcessApi::Get() {
  static InProcessApi* api = [] {
    // As the binary does (runtime/cli/main.cc): every thread started from here
    // on (the loop's, RocksDB's, the workers') gets a 256 MiB stack.
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, size_t{256} << 20);
    pthread_setattr_default_np(&attr);
    pthread_attr_destroy(&attr);
    auto* a = new InProcessApi();
    a->Start();
    std::atexit([] { api->Stop(); });
    return a;
  }();
  return *api;
}

void InProcessApi::Start() {
  dir_ = std::make_unique<ScratchDir>();
  log_ = std::make_shared<spdlog::logger>("fuzz", std::make_shared<spdlog::sinks::null_sink_mt>());
  auto config = runtime::DefaultConfig();
  FUZZ_CHECK(config.ok(), config.status().ToString());
  config->state_dir = *dir_ / "state";
  config->api_port = 0;
  config->durability = state::Durability::kNone;
  for (auto it = config->sensors.begin(); it != config->sensors.end();) {
    if (it.value().value("kind", "") == "timer")
      it = config->sensors.erase(it);
    else
      ++it;
  }
  runtime_ = std::make_unique<runtime::Runtime>(*config, log_, runtime::MakeApi);
  std::promise<bool> listening;
  auto ready = listening.get_future();
  runtime_->set_on_listening([&listening](const std::string&) { listening.set_value(true); });
  thread_ = std::thread([this, &listening] {
    const int rc = runtime_->Run();
    FUZZ_CHECK(rc == 0, "the runtime stopped with exit code " + std::to_string(rc));
    (void)listening;
  });
  FUZZ_CHECK(ready.get(), "the runtime did not start");
  // The routes the runtime serves, built on its io thread as it builds them.
  std::promise<void> built;
  boost::asio::post(runtime_->ioc(), [this, &built] {
    api_ = std::make_unique<runtime::Api>(runtime::ApiServicesOf(*runtime_), log_);
    router_ = std::make_unique<runtime::Router>(api_->MakeRouter());
    built.set_value();
  });
  built.get_future().get();
  calls_ = 0;
}

void InProcessApi::Stop() {
  if (!runtime_) return;
  boost::asio::post(runtime_->ioc(), [this] { runtime_->Stop(); });
  thread_.join();
  router_.reset();
  api_.reset();
  runtime_.reset();
  dir_.reset();
}

void InProcessApi::Restart() {
  Stop();
  Start();
}

InProcessApi::Answer InProcessApi::Call(runtime::HttpRequest req) {
  ++calls_;
  auto answer = std::make_shared<std::promise<Answer>>();
  auto answered = std::make_shared<bool>(false);  // io thread only
  auto future = answer->get_future();
  boost::asio::post(runtime_->ioc(), [this, req = std::move(req), answer, answered]() mutable {
    runtime::Responder respond = [answer, answered](runtime::HttpResponse r) {
      if (*answered) return;
      *answered = true;
      answer->set_value(Answer{r.status, std::move(r.content_type), std::move(r.body)});
    };
    const runtime::SseHandler* sse = runtime::Dispatch(*router_, gate_, req, respond, *log_);
    if (!sse) return;
    auto stream = std::make_shared<RecordingStream>(runtime_->ioc());
    (*sse)(req, stream);
    respond(stream->Answer());
    stream->Close();
  });
  if (future.wait_for(std::chrono::milliseconds(kAnswerTimeoutMs)) != std::future_status::ready)
    return Answer{};
  return future.get();
}

}  // namespace limbic::fuzz
