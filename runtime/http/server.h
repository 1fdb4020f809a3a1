// A small HTTP/1.1 server on Boost.Beast for limbic's JSON API.
//
// Everything runs on the one io_context thread that owns the runtime: no
// strands, no locks. Each connection is a Session actor (DoRead/OnRead,
// then Dispatch, then Send, whose completed write starts the next DoRead)
// that handles one request at a time with keep-alive (runtime/
// http_session.h; this file's .cc accepts, bounds and shuts down).
// Every read has a deadline; bodies have a size limit (413); malformed
// requests get 400 and the connection closes; a handler that throws gets
// 500. With a bearer token configured, requests without it get 401, except
// on routes whose request carries its own signature (a GitHub delivery).
//
// Before a request reaches its handler the server checks, in this order
// (runtime/http/policy.h has the rules, Dispatch below applies them,
// docs/api.md "Limits and exposure" the user's view): transfer codings
// (501), Host (421), token (401), shutting down (503), route (404/405),
// content coding and type (415), Origin of a state-changing request (403),
// then the target's encoding, route parameters and query string (400,
// runtime/http/query.h).
//
// Connections are bounded per server and per client (remote address). A
// connection waiting for the first byte of a request is idle; when a new
// one does not fit, the oldest idle one (of that client, if the client is
// over its share) is closed to make room; when none is idle, the newcomer
// is answered 429 (its client is over its share) or 503 (the server is
// full), with Retry-After, and closed. Event streams have their own, smaller
// share, so they cannot take every connection.
//
// The health check is always answered: a connection over the limits reads
// its one request first (it waits kRefusalWaitMs at most), and a GET of
// HttpServerOptions::health_path goes to its handler as any request would
// (the token, Host and draining rules hold), and only anything else gets
// the 429/503. Those connections have slots of their own beyond the limits
// (kRefusalSlots); when every one is taken, the one that has waited longest
// without sending a byte is closed to make room for the newcomer.
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
#include <optional>
#include <spdlog/logger.h>
#include <string>
#include <vector>

#include "runtime/http/policy.h"
#include "runtime/http/query.h"
#include "base/status.h"
#include "base/time.h"

namespace limbic::runtime {

// Defaults are the config's (docs/config.md, api.*).
struct HttpServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 7077;        // 0 = pick a free port
  size_t body_limit = 1 << 20;
  TimeMs read_timeout = 30000;  // to read one request, from its first byte; and to write an answer
  TimeMs idle_timeout = 60000;  // to wait for the first byte of a request
  std::string bearer_token;     // non-empty: required on every request but self-signed ones
  ClientBook::Limits limits;    // connections and event streams, per server and per client
  TimeMs sse_keepalive = 15000;  // a comment line on an idle event stream this often
  // An event stream whose client lets more than this queue up is closed
  // (logged); it may reconnect with Last-Event-ID.
  size_t sse_max_queued_bytes = 4 << 20;
  ExposurePolicy exposure;  // Host and Origin allow lists
  // Answered (GET) even over the connection limits: see the file comment.
  std::string health_path = "/healthz";
};

struct HttpRequest {
  std::string method;
  std::string target;                         // as sent
  std::string path;                           // decoded, without the query
  // The query string's items, decoded, in order, repeats kept; `target_error`
  // says what is wrong with the target's percent-encoding, if anything.
  std::vector<std::pair<std::string, std::string>> query_items;
  Status target_error;
  // By name, once Dispatch has checked query_items against the route's
  // parameters (runtime/http/query.h): what handlers read.
  std::map<std::string, std::string> query;
  std::map<std::string, std::string> params;  // from the route pattern, decoded and checked
  std::map<std::string, std::string> headers; // names lower-cased
  std::string body;
  std::string remote;

  // Sets `target`, and `path` and `query_items` percent-decoded from it
  // (or `target_error`).
  void SetTarget(std::string target);
  // "" when absent; `name` is case-insensitive.
  std::string Header(const std::string& name) const;
  // The body as a JSON object (every route's body is one), parsed as
  // outside input (base/input_json.h: depth limit api.max_json_depth,
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
  bool close = false;  // the connection closes after this answer

  static HttpResponse Json(int status, const nlohmann::json& body);
  // {"error": {"code": ..., "message": ...}}
  static HttpResponse Error(int status, std::string code, std::string message);
};

using Responder = std::function<void(HttpResponse)>;
using Handler = std::function<void(HttpRequest&, Responder)>;
// For a route whose handler authenticates requests itself (a sensor's
// signature): true when this request is to be checked that way, and then
// the bearer token, Host and Origin rules do not apply to it.
using SignedBy = std::function<bool(const HttpRequest&)>;

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

  // Bytes queued and not yet written to the socket.
  virtual size_t queued_bytes() const = 0;
  // True when a page's worth is queued: a producer that can wait (a backlog
  // read from the log) stops and resumes on OnDrained. Live events are sent
  // regardless, up to the stream's byte limit.
  virtual bool backlogged() const = 0;
  // `cb` runs (posted, never from inside Send) each time everything queued
  // has been written.
  virtual void OnDrained(std::function<void()> cb) = 0;
  // `cb` runs once (posted) when the stream closes for any reason; at once
  // if it already has.
  virtual void OnClosed(std::function<void()> cb) = 0;
};
using SseHandler = std::function<void(HttpRequest&, std::shared_ptr<SseStream>)>;

class Router {
 public:
  // `queries`: the query parameters of each route (http_query.h), looked up
  // by method and pattern as routes are added; a route without an entry
  // takes none. Must outlive the Router.
  explicit Router(const std::vector<RouteQueries>* queries = nullptr) : queries_(queries) {}

  // `pattern` segments in braces are parameters: "/v1/threads/{id}".
  // `signed_by`: see SignedBy; empty for the ordinary rules.
  void Add(const std::string& method, const std::string& pattern, Handler handler,
           SignedBy signed_by = nullptr);
  void AddSse(const std::string& method, const std::string& pattern, SseHandler handler);
  // A route that needs no bearer token: the inspector's static files,
  // which hold no data (every call they make carries the token). The Host
  // rule still applies, so a rebound DNS name cannot read them either.
  void AddPublic(const std::string& method, const std::string& pattern, Handler handler);

  struct Match {
    const Handler* handler = nullptr;
    const SseHandler* sse = nullptr;
    const SignedBy* signed_by = nullptr;  // null or empty: the ordinary rules
    bool open = false;                    // AddPublic: no token needed
    const std::vector<QueryParam>* query = nullptr;  // the route's query parameters
    std::string route;  // "GET /v1/threads/{id}", for messages
    std::string allow;  // methods of a path that matched with another method
  };
  // The route of `req` (its path segments decoded one by one, so an
  // escaped '/' stays inside its segment); sets req.params.
  Match Find(HttpRequest& req) const;
  // Every route as "METHOD pattern", in the order they are tried.
  std::vector<std::string> Routes() const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    Handler handler;
    SseHandler sse;
    SignedBy signed_by;
    bool open = false;
    std::string pattern;
    const std::vector<QueryParam>* query = nullptr;
  };
  void AddRoute(Route route);

  const std::vector<RouteQueries>* queries_;
  std::vector<Route> routes_;
};

// What a request must pass before its handler, as the server holds it.
struct RequestGate {
  const ExposurePolicy& exposure;
  const std::string& bearer_token;  // "" = none required
  bool draining = false;            // shutting down: 503
};

// The answer to a request that may not reach its handler, checked in the
// order this header's opening lists; nullopt when it may. Answers after
// which the connection must close (501, 421, 503) have `close` set.
std::optional<HttpResponse> RefuseRequest(const HttpRequest& req, const Router::Match& m,
                                          const RequestGate& gate);

// What the server does with a request once it is read: its route, the
// gate's refusals (RefuseRequest), the target's parameters (400 naming the
// one that is malformed), then its handler, answering 500 when the
// handler throws. `respond` must ignore calls after the first (a handler
// may have answered before it threw). An SSE route is not run: its handler
// is returned for the caller to start with its stream, and nothing is
// answered; otherwise nullptr. Io thread only. The seam that lets a
// request reach the API without a socket (fuzz/http_fuzz.cc).
const SseHandler* Dispatch(const Router& router, const RequestGate& gate, HttpRequest& req,
                           const Responder& respond, spdlog::logger& log);

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
  // Open connections by what they do (for /metrics).
  struct Counts {
    size_t idle = 0;     // waiting for (the first byte of) a request
    size_t busy = 0;     // reading a request, in a handler, or answering
    size_t streams = 0;  // event streams
  };
  Counts counts() const;
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
