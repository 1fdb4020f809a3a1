// A small HTTP/1.1 server on Boost.Beast for limbic's JSON API.
//
// Everything runs on the one io_context thread that owns the runtime: no
// strands, no locks. Each connection is a Session actor (DoRead/OnRead,
// DoWrite/OnWrite) that handles one request at a time with keep-alive.
// Every read has a deadline; bodies have a size limit (413); malformed
// requests get 400 and the connection closes; a handler that throws gets
// 500. With a bearer token configured, requests without it get 401.
//
// A handler answers through its Responder, now or later (long-poll), exactly
// once. An SSE handler instead gets a stream it can Send() events on until
// the client goes away.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <spdlog/logger.h>
#include <string>
#include <vector>

#include "state/status.h"
#include "state/time.h"

namespace limbic::runtime {

struct HttpServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 7077;        // 0 = pick a free port
  size_t body_limit = 1 << 20;
  TimeMs read_timeout = 30000;  // to read one request
  TimeMs idle_timeout = 60000;  // keep-alive between requests
  std::string bearer_token;     // non-empty: required on every request
  size_t max_connections = 1024;
  TimeMs sse_keepalive = 15000;
};

struct HttpRequest {
  std::string method;
  std::string target;                         // as sent
  std::string path;                           // decoded, without the query
  std::map<std::string, std::string> query;   // decoded
  std::map<std::string, std::string> params;  // from the route pattern
  std::map<std::string, std::string> headers; // names lower-cased
  std::string body;
  std::string remote;

  // "" when absent; `name` is case-insensitive.
  std::string Header(const std::string& name) const;
  // The body as a JSON object (every route's body is one), parsed as
  // outside input (state/input_json.h: depth limit api.max_json_depth,
  // numbers that fit a double); InvalidArgument naming the byte or key when
  // empty, malformed, too deep or not an object. Never throws. (The server
  // already answered 415 to a body that is not application/json.)
  Result<nlohmann::json> JsonBody() const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;

  static HttpResponse Json(int status, const nlohmann::json& body);
  // {"error": {"code": ..., "message": ...}}
  static HttpResponse Error(int status, std::string code, std::string message);
};

using Responder = std::function<void(HttpResponse)>;
using Handler = std::function<void(HttpRequest&, Responder)>;

// One Server-Sent-Events response. Io thread only.
class SseStream {
 public:
  virtual ~SseStream() = default;
  // Queues one event; false once the stream is closed (or its client is too
  // slow and was dropped).
  virtual bool Send(std::string_view event, std::string_view id, std::string_view data) = 0;
  virtual void Close() = 0;
  virtual bool closed() const = 0;
  // Instead of a stream, answers with an ordinary JSON error response
  // ({"error": {"code", "message"}}). Only before the first Send; the
  // handler must return right after.
  virtual void Reject(int status, std::string code, std::string message) = 0;
};
using SseHandler = std::function<void(HttpRequest&, std::shared_ptr<SseStream>)>;

class Router {
 public:
  // `pattern` segments in braces are parameters: "/v1/threads/{id}".
  void Add(const std::string& method, const std::string& pattern, Handler handler);
  void AddSse(const std::string& method, const std::string& pattern, SseHandler handler);

  struct Match {
    const Handler* handler = nullptr;
    const SseHandler* sse = nullptr;
    std::string allow;  // methods of a path that matched with another method
  };
  Match Find(HttpRequest& req) const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    Handler handler;
    SseHandler sse;
  };
  std::vector<Route> routes_;
};

// Listens, accepts, and runs sessions until Shutdown. Io thread only.
class HttpServer {
 public:
  // Binds and listens, but accepts nothing until Serve: a caller can find
  // out that the address is taken before it changes anything. Bind errors
  // name address:port. Connections made before Serve wait in the backlog.
  static Result<std::unique_ptr<HttpServer>> Listen(boost::asio::io_context& ioc,
                                                    HttpServerOptions options,
                                                    std::shared_ptr<spdlog::logger> log);
  // Starts accepting, routing requests with `router`. Once.
  void Serve(Router router);
  ~HttpServer();

  uint16_t port() const;
  size_t connections() const;
  // Stops accepting; open connections go on.
  void StopAccepting();
  // Closes idle connections and SSE streams now, lets requests in progress
  // answer until `deadline_ms`, then closes the rest; then calls `done`.
  void Shutdown(TimeMs deadline_ms, std::function<void()> done);

  class Impl;

 private:
  explicit HttpServer(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// 127.0.0.0/8, ::1, "localhost".
bool IsLoopbackAddress(const std::string& address);

}  // namespace limbic::runtime
