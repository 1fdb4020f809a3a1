// Internal to runtime/http/server.cc and runtime/http/session.cc (what the
// server does is in runtime/http/server.h):
//   HttpServer::Impl  the server's state: the acceptor, the sessions and the
//                     connection book (limits), refusals, shutdown;
//   Session           one connection, as Beast's advanced server reads:
//                     DoRead -> OnRead (parse) -> Dispatch (policy, route)
//                     -> Send, whose completed write starts the next DoRead;
//                     or, for an SSE route, an event stream until either
//                     side closes.
// Everything runs on the io_context's one thread.
#pragma once

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <deque>
#include <optional>
#include <set>
#include <string>

#include "runtime/http/server.h"

namespace limbic::runtime {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

class Session;

class HttpServer::Impl : public std::enable_shared_from_this<HttpServer::Impl> {
 public:
  Impl(net::io_context& ioc, HttpServerOptions o, Router r, std::shared_ptr<spdlog::logger> log)
      : ioc_(ioc), options_(std::move(o)), router_(std::move(r)), log_(std::move(log)),
        acceptor_(ioc), deadline_(ioc), book_(options_.limits) {}

  void DoAccept();
  void OnAccept(tcp::socket socket);
  // Closes the connection idle longest (of `client`, when given); false
  // when there is none.
  bool EvictIdle(const std::string* client);
  // A refusal to tell the log about, at most once a second.
  void LogRefusal(const std::string& why);
  void Remove(Session* s);
  void Shutdown(TimeMs deadline_ms, std::function<void()> done);
  void MaybeDone();

  // A few connections beyond max_connections may be held just long enough
  // to read one request and answer it: the health check, or 429/503. Past
  // these, the one waiting longest for its first byte is closed to make
  // room, else the newcomer is closed unanswered.
  static constexpr size_t kRefusalSlots = 16;
  // How long such a connection waits for its request (first byte and all).
  static constexpr TimeMs kRefusalWaitMs = 2000;
  // Closes the refusing connection that has waited longest for its first
  // byte; false when none waits.
  bool EvictRefusing();

  net::io_context& ioc_;
  HttpServerOptions options_;
  Router router_;
  std::shared_ptr<spdlog::logger> log_;
  tcp::acceptor acceptor_;
  std::set<Session*> sessions_;
  bool shutting_down_ = false;
  bool draining_ = false;  // StopAccepting: new requests get 503
  std::function<void()> done_;
  net::steady_timer deadline_;
  ClientBook book_;
  size_t refusing_ = 0;  // sessions only there to answer 429/503
  std::chrono::steady_clock::time_point last_refusal_log_{};
  size_t refusals_unlogged_ = 0;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  // `refusal`: the connection did not fit; it answers its first request
  // with this and closes.
  Session(tcp::socket socket, std::shared_ptr<HttpServer::Impl> server, std::string remote,
          std::optional<HttpResponse> refusal)
      : stream_(std::move(socket)), server_(std::move(server)), remote_(std::move(remote)),
        refusal_(std::move(refusal)), keepalive_timer_(server_->ioc_) {
    server_->sessions_.insert(this);
    if (refusal_) ++server_->refusing_;
    else server_->book_.Connected(remote_);
  }
  ~Session() {
    Release();
    server_->Remove(this);
  }

  void Run() { DoRead(); }

  const std::string& remote() const { return remote_; }
  // Waiting for the first byte of a request, since `idle_since()`.
  bool idle() const { return idle_ && !released_ && !refusal_; }
  // Over the limits and still waiting for the first byte of its request.
  bool refusing_idle() const { return idle_ && !released_ && refusal_; }
  bool streaming() const { return streaming_ && !released_; }
  std::chrono::steady_clock::time_point idle_since() const { return idle_since_; }

  // Shutdown: idle and streaming sessions close now, busy ones after answering.
  void CloseIfIdle();
  void Close();

  // SSE
  bool SseSend(std::string frame);
  void SseClose();
  bool sse_closed() const { return sse_closed_; }
  size_t queued_bytes() const { return queued_; }
  bool backlogged() const;
  void SseOnDrained(std::function<void()> cb);
  void SseOnClosed(std::function<void()> cb);
  // Before anything was streamed: answer with an ordinary (error) response.
  void SseReject(HttpResponse r);
  void SseHeader();

 private:
  // A backlog pauses once this much is queued (or half the byte limit).
  static constexpr size_t kPageBytes = 64 * 1024;

  // Releases this connection's place in the counts, once.
  void Release();

  // Waits (idle_timeout) for the first byte of a request, then reads all of
  // it (read_timeout).
  void DoRead();

  void DoReadRequest();

  // Beast's on_read: the end of the connection closes it, a request that
  // did not parse is answered, a parsed one is handed over (over the
  // limits, only a health check; anything else gets the refusal).
  void OnRead(beast::error_code ec);

  // The peer went away or the read timed out: nothing to answer.
  static bool IsDisconnect(beast::error_code ec);

  // The answer to a request that did not parse (the connection then closes).
  HttpResponse ReadError(beast::error_code ec) const;

  // The parsed request, as handlers see it; notes what the access log needs.
  HttpRequest TakeRequest();

  HttpRequest ToRequest(http::request<http::string_body>& msg);

  void Dispatch(HttpRequest& req);

  void Send(HttpResponse r);

  // After an answer sent before the request's body was read (over
  // api.body_limit, malformed), the client may still be sending it; a
  // close with its bytes unread makes the kernel answer them with a reset
  // that can reach the client before the answer does (it then sees a
  // broken connection, not the 413). So: stop sending, read and drop what
  // comes, up to kLingerBytes or kLingerMs, then close.
  void LingerThenClose();
  void DrainThenClose(std::shared_ptr<std::array<char, 16384>> scratch);  // one buffer throughout
  static constexpr size_t kLingerBytes = 16 << 20;
  static constexpr int kLingerMs = 2000;

  // An event stream: admitted if it fits the streams' share, else an
  // ordinary 429/503 answer.
  void StartSse(const SseHandler& handler, HttpRequest& req);

  void ScheduleKeepalive();

  void Queue(std::string frame);

  void DoSseWrite();

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<HttpServer::Impl> server_;
  std::string remote_, method_, path_;
  std::optional<HttpResponse> refusal_;
  bool released_ = false;
  bool idle_ = false;
  std::chrono::steady_clock::time_point idle_since_;
  bool keep_alive_ = true;
  bool busy_ = false;
  bool body_unread_ = false;  // answered before the request was read whole
  size_t drained_ = 0;        // bytes dropped while lingering
  std::chrono::steady_clock::time_point started_;
  // SSE mode
  bool sse_ = false;
  bool streaming_ = false;  // counted as a stream in the book
  bool sse_closed_ = false;
  bool sse_header_sent_ = false;
  bool sse_rejected_ = false;
  HttpResponse rejection_;
  bool writing_ = false;
  std::deque<std::string> out_;
  size_t queued_ = 0;  // bytes in out_
  std::function<void()> on_drained_, on_closed_;
  char sink_[512];
  net::steady_timer keepalive_timer_;
};

}  // namespace limbic::runtime
