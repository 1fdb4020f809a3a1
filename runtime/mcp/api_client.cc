#include "runtime/mcp/api_client.h"

#include <signal.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "base/env.h"
#include "base/http_client.h"
#include "runtime/api/api.h"
#include "runtime/runtime.h"
#include "state/engine.h"

namespace limbic::runtime {
namespace {

using nlohmann::json;

class HttpApiClient : public ApiClient {
 public:
  HttpApiClient(std::string base_url, std::string token)
      : base_(std::move(base_url)), token_(std::move(token)) {
    while (!base_.empty() && base_.back() == '/') base_.pop_back();
  }

  Result<std::pair<int, std::string>> Call(const ApiRequest& request) override {
    HttpCall call;
    call.method = request.method;
    call.url = base_ + request.target;
    call.body = request.body;
    call.timeout_ms = request.timeout_ms;
    if (!token_.empty()) call.headers.emplace_back("Authorization", "Bearer " + token_);
    if (!request.actor.empty()) call.headers.emplace_back("X-Limbic-Actor", request.actor);
    auto answer = Fetch(call);
    if (!answer.ok()) return answer.status();
    return std::make_pair(answer->status, std::move(answer->body));
  }

 private:
  std::string base_, token_;
};

bool PidAlive(long pid) {
  return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

// The pid a lock file names; 0 when unreadable.
long LockHolder(const std::string& state_dir) {
  auto text = Env::Default()->ReadFileToString(state::LockFilePath(state_dir));
  if (!text.ok()) return 0;
  try {
    return std::stol(*text);
  } catch (const std::exception&) {
    return 0;
  }
}

// api.json's URL when it describes `holder`; "" otherwise.
std::string ApiUrlOf(const std::string& state_dir, long holder) {
  auto text = Env::Default()->ReadFileToString(ApiFilePath(state_dir));
  if (!text.ok()) return "";
  json doc = json::parse(*text, nullptr, false);
  if (!doc.is_object() || !doc["pid"].is_number_integer() || !doc["url"].is_string()) return "";
  long pid = doc["pid"].get<long>();
  if (pid != holder || !PidAlive(pid)) return "";  // stale: left by a crash
  return doc["url"].get<std::string>();
}

}  // namespace

std::unique_ptr<ApiClient> MakeHttpApiClient(std::string base_url, std::string token) {
  return std::make_unique<HttpApiClient>(std::move(base_url), std::move(token));
}

size_t RunningApiBodyLimit(const std::string& state_dir) {
  auto text = Env::Default()->ReadFileToString(ApiFilePath(state_dir));
  if (!text.ok()) return 0;
  json doc = json::parse(*text, nullptr, false);
  if (!doc.is_object() || !doc["body_limit"].is_number_unsigned()) return 0;
  return doc["body_limit"].get<size_t>();
}

Result<std::string> FindRunningApi(const std::string& state_dir, int wait_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    std::error_code ec;
    if (!std::filesystem::is_directory(state_dir, ec))
      return Status::NotFound("no state in " + state_dir);
    // Taking the lock is the only reliable test of whether it is held; a
    // lock we get is released again at once, for the runtime we start.
    auto lock = Env::Default()->LockFile(state::LockFilePath(state_dir), LockWait::kNo);
    if (lock.ok()) return Status::NotFound("nobody holds " + state_dir);
    if (!lock.status().IsBusy()) return lock.status();
    std::string url = ApiUrlOf(state_dir, LockHolder(state_dir));
    if (!url.empty()) return url;
    if (std::chrono::steady_clock::now() >= deadline)
      return Status::Busy(lock.status().message() + ", which serves no HTTP API (no current " +
                          ApiFilePath(state_dir) + "); stop it, or pass --url");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

ApiConnection::ApiConnection(Config config, std::string url, std::string env_token,
                             std::shared_ptr<spdlog::logger> log)
    : config_(std::move(config)),
      fixed_url_(std::move(url)),
      env_token_(std::move(env_token)),
      log_(std::move(log)) {}

ApiConnection::~ApiConnection() { Stop(); }

int ApiConnection::Stop() {
  client_.reset();
  if (!own_) return 0;
  int code = own_->Stop();
  own_.reset();
  return code;
}

Status ApiConnection::Connect() {
  std::string token = env_token_.empty() ? config_.api_token : env_token_;
  if (!fixed_url_.empty()) {
    client_ = MakeHttpApiClient(fixed_url_, token);
    return Status::OK();  // its limit is unknown: the API's 413 says it
  }
  if (own_) return Status::OK();  // ours runs as long as we do
  auto running = FindRunningApi(config_.state_dir, 10000);
  if (running.ok()) {
    log_->info("mcp: using the runtime at {} (state {})", *running, config_.state_dir);
    client_ = MakeHttpApiClient(*running, token);
    body_limit_ = RunningApiBodyLimit(config_.state_dir);
    return Status::OK();
  }
  if (!running.status().IsNotFound()) return running.status();
  // We start it, so its token is the config's whatever the environment says.
  auto log = log_;
  auto started = InProcessRuntime::Start(config_, log, [log](int exit_code) {
    // Stopped by a signal while we wait on input: the process is done.
    log->info("mcp: the runtime stopped; exiting");
    log->flush();
    std::fflush(stdout);  // not fflush(nullptr): the main thread holds stdin's lock
    std::fflush(stderr);
    std::_Exit(exit_code);
  });
  if (!started.ok()) return started.status();
  own_ = std::move(started).value();
  log_->info("mcp: running the runtime in-process at {} (state {})", own_->url(),
             config_.state_dir);
  client_ = MakeHttpApiClient(own_->url(), config_.api_token);
  body_limit_ = config_.body_limit;
  return Status::OK();
}

Result<std::pair<int, std::string>> ApiConnection::Call(const ApiRequest& request) {
  if (!client_) LIMBIC_RETURN_IF_ERROR(Connect());
  auto answer = client_->Call(request);
  if (answer.ok() || !fixed_url_.empty() || own_) return answer;
  // Fetch names the step that failed: before "connect" succeeded nothing
  // was sent, so sending again cannot do the request twice.
  const std::string why = answer.status().message();
  if (why.find(": connect: ") == std::string::npos && why.find(": resolve: ") == std::string::npos)
    return answer;
  log_->info("mcp: {}; looking for the runtime of {} again", why, config_.state_dir);
  client_.reset();
  Status again = Connect();
  if (!again.ok())
    return Status::Unavailable(why + "; and finding it again failed: " + again.message());
  return client_->Call(request);
}

Result<std::unique_ptr<InProcessRuntime>> InProcessRuntime::Start(
    Config config, std::shared_ptr<spdlog::logger> log, OnStopped on_stopped) {
  config.sensors = json::object();  // a stdin sensor would steal the protocol's input
  config.api_address = "127.0.0.1";
  config.api_port = 0;
  std::unique_ptr<InProcessRuntime> rt(new InProcessRuntime());
  rt->on_stopped_ = std::move(on_stopped);
  rt->thread_ = std::thread([r = rt.get(), config = std::move(config), log]() mutable {
    r->Main(std::move(config), std::move(log));
  });
  std::unique_lock<std::mutex> lock(rt->mu_);
  rt->cv_.wait(lock, [&] { return rt->listening_ || rt->finished_; });
  if (!rt->listening_) {
    lock.unlock();
    rt->thread_.join();
    // Runtime::Run has logged why (the config, the lock, ...).
    return Status::Unavailable("the runtime did not start (see the log above)");
  }
  return rt;
}

void InProcessRuntime::Main(Config config, std::shared_ptr<spdlog::logger> log) {
  int exit_code;
  bool stopped_by_itself;
  {
    Runtime runtime(std::move(config), std::move(log), MakeApi);
    runtime.set_on_listening([this, &runtime](const std::string& url) {
      std::lock_guard<std::mutex> lock(mu_);
      url_ = url;
      runtime_ = &runtime;
      listening_ = true;
      cv_.notify_all();
    });
    exit_code = runtime.Run();
    std::lock_guard<std::mutex> lock(mu_);
    runtime_ = nullptr;  // nobody posts to it any more
    stopped_by_itself = listening_ && !stop_requested_;
  }  // the runtime is closed here: the state dir is released
  {
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
    exit_code_ = exit_code;
    cv_.notify_all();
  }
  if (stopped_by_itself && on_stopped_) on_stopped_(exit_code);
}

int InProcessRuntime::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_requested_ = true;
    if (runtime_) {
      Runtime* rt = runtime_;
      boost::asio::post(rt->ioc(), [rt] { rt->Stop(); });
    }
  }
  if (thread_.joinable()) thread_.join();
  return exit_code_;
}

InProcessRuntime::~InProcessRuntime() { Stop(); }

}  // namespace limbic::runtime
