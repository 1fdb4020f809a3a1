// Internal to runtime/: how `limbic mcp` reaches an HTTP API -- the client
// its tools call through, finding a running `limbic run`, and running the
// runtime in-process when nobody does (the contract is in runtime/mcp/server.h).
#pragma once

#include <spdlog/logger.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "runtime/config.h"
#include "runtime/mcp/tools.h"
#include "base/status.h"

namespace limbic::runtime {

class Runtime;

// One request to the API. The seam between the protocol and HTTP.
class ApiClient {
 public:
  virtual ~ApiClient() = default;
  // {HTTP status, body}; any status is a success here. Unavailable when the
  // API cannot be reached (the message names the URL and the step).
  virtual Result<std::pair<int, std::string>> Call(const ApiRequest& request) = 0;
  //! The API's api.body_limit when known (a larger body gets 413), else 0.
  virtual size_t body_limit() const { return 0; }
};

// The answer to one line of input, as `limbic mcp` gives it (the protocol
// is in runtime/mcp/server.h): a JSON-RPC response, or nullopt for a notification,
// a response or a blank line. Tool calls go to `api`. The seam that runs
// the protocol without stdio (fuzz/mcp_fuzz.cc).
std::optional<nlohmann::json> HandleMcpLine(ApiClient& api, const std::string& line,
                                            std::shared_ptr<spdlog::logger> log);

// Over HTTP with Fetch, to `base_url` ("http://127.0.0.1:7077"),
// with `Authorization: Bearer <token>` when the token is not empty.
std::unique_ptr<ApiClient> MakeHttpApiClient(std::string base_url, std::string token);

// The base URL of the `limbic run` (or `limbic mcp`) holding `state_dir`,
// from <state>/api.json, trusted only when its pid is alive and holds the
// lock. NotFound when nobody holds the lock. While the holder has written
// no api.json (still recovering, or a CLI command) this waits up to
// `wait_ms`, then is Busy naming the holder.
Result<std::string> FindRunningApi(const std::string& state_dir, int wait_ms);
// The api.body_limit of the runtime holding `state_dir`, from its api.json;
// 0 when unknown.
size_t RunningApiBodyLimit(const std::string& state_dir);

class InProcessRuntime;

// The API `limbic mcp` talks to (the rules are in runtime/mcp/server.h), found
// again when it goes away: two `limbic mcp` share a state dir, the one
// running the runtime exits, and the other must not fail every call after.
class ApiConnection : public ApiClient {
 public:
  //! `url` non-empty: that API, never re-resolved. `env_token`: the
  //! $LIMBIC_API_TOKEN ("" = the config's api.token).
  ApiConnection(Config config, std::string url, std::string env_token,
                std::shared_ptr<spdlog::logger> log);
  ~ApiConnection() override;  // Stop()

  //! Finds the runtime holding the state dir (api.json, waiting up to 10 s
  //! for one still starting), or starts one in-process when nobody holds
  //! it. The error says why neither worked.
  Status Connect();
  //! One request. When the API cannot be connected to (its runtime went
  //! away), Connect again and send once more: nothing had been sent. Other
  //! failures are returned (the request may have been handled), and the
  //! next call connects again if it must.
  Result<std::pair<int, std::string>> Call(const ApiRequest& request) override;
  size_t body_limit() const override { return body_limit_; }
  //! Stops the runtime this started, if any; its exit code, else 0.
  int Stop();

 private:
  Config config_;
  std::string fixed_url_, env_token_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<InProcessRuntime> own_;
  std::unique_ptr<ApiClient> client_;
  size_t body_limit_ = 0;
};

// A Runtime on its own thread: no sensors (stdin is the protocol's), the
// API on 127.0.0.1 with an ephemeral port.
class InProcessRuntime {
 public:
  // Called on the runtime's thread when it stops by itself (SIGINT,
  // SIGTERM), after it has shut down and released the state dir.
  using OnStopped = std::function<void(int exit_code)>;

  // Returns once the API listens; the runtime's error when it cannot start.
  // No deadline: starting includes recovery, as long as the log needs.
  static Result<std::unique_ptr<InProcessRuntime>> Start(Config config,
                                                         std::shared_ptr<spdlog::logger> log,
                                                         OnStopped on_stopped);
  ~InProcessRuntime();  // Stop()

  // Shuts down gracefully (Runtime::Stop on its io thread) and joins.
  // Returns the runtime's exit code.
  int Stop();
  const std::string& url() const { return url_; }

 private:
  InProcessRuntime() = default;
  void Main(Config config, std::shared_ptr<spdlog::logger> log);

  OnStopped on_stopped_;
  std::thread thread_;
  std::mutex mu_;  // guards what follows; the runtime thread and the caller share it
  std::condition_variable cv_;
  Runtime* runtime_ = nullptr;  // while it runs
  bool listening_ = false, finished_ = false, stop_requested_ = false;
  int exit_code_ = 0;
  std::string url_;
};

}  // namespace limbic::runtime
