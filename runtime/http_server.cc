#include "runtime/http_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <deque>
#include <optional>
#include <set>

#include "base/input_json.h"
#include "base/json.h"

namespace limbic::runtime {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using nlohmann::json;

std::string HttpRequest::Header(const std::string& name) const {
  auto it = headers.find(AsciiLower(name));
  return it == headers.end() ? std::string() : it->second;
}

Result<json> HttpRequest::JsonBody() const {
  if (body.empty()) return Status::InvalidArgument("a JSON body is required");
  auto j = ParseInputJson(body);
  if (!j.ok()) return j.status().WithContext("body");
  if (!j->is_object())
    return Status::InvalidArgument("body: must be a JSON object, got " +
                                   std::string(j->type_name()));
  return j;
}

HttpResponse HttpResponse::Json(int status, const json& body) {
  HttpResponse r;
  r.status = status;
  r.body = CompactJson(body);  // dump() recurses: a stored record may nest deep
  return r;
}

HttpResponse HttpResponse::Error(int status, std::string code, std::string message) {
  return Json(status, {{"error", {{"code", std::move(code)}, {"message", std::move(message)}}}});
}

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
  // to answer 429/503; past these, a connection is closed unanswered.
  static constexpr size_t kRefusalSlots = 16;

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
  bool streaming() const { return streaming_ && !released_; }
  std::chrono::steady_clock::time_point idle_since() const { return idle_since_; }

  // Shutdown: idle and streaming sessions close now, busy ones after answering.
  void CloseIfIdle() {
    if (sse_) return SseClose();
    if (!busy_) Close();
  }
  void Close() {
    Release();
    boost::system::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

  // SSE
  bool SseSend(std::string frame) {
    if (sse_closed_ || sse_rejected_) return false;
    const size_t limit = server_->options_.sse_max_queued_bytes;
    if (queued_ > 0 && queued_ + frame.size() > limit) {
      // A client this slow is dropped, not buffered without end; it can
      // resume from the log with Last-Event-ID.
      server_->log_->warn(
          "http: closing the event stream of {}: its client is not reading ({} bytes queued, "
          "limit {} = api.sse_max_queued_bytes)",
          remote_, queued_, limit);
      SseClose();
      return false;
    }
    SseHeader();
    Queue(std::move(frame));
    if (!writing_) DoSseWrite();
    return true;
  }
  void SseClose() {
    // A rejection not yet sent is the answer; StartSse sends it, then closes.
    if (sse_closed_ || (sse_rejected_ && !sse_header_sent_)) return;
    sse_closed_ = true;
    keepalive_timer_.cancel();
    if (on_closed_) net::post(server_->ioc_, std::move(on_closed_));
    on_closed_ = nullptr;
    on_drained_ = nullptr;
    Close();
  }
  bool sse_closed() const { return sse_closed_; }
  size_t queued_bytes() const { return queued_; }
  bool backlogged() const {
    return queued_ >= std::min<size_t>(kPageBytes, server_->options_.sse_max_queued_bytes / 2);
  }
  void SseOnDrained(std::function<void()> cb) {
    if (!sse_closed_) on_drained_ = std::move(cb);
  }
  void SseOnClosed(std::function<void()> cb) {
    if (sse_closed_) return net::post(server_->ioc_, std::move(cb));
    on_closed_ = std::move(cb);
  }
  // Before anything was streamed: answer with an ordinary (error) response.
  void SseReject(HttpResponse r) {
    if (sse_header_sent_ || sse_rejected_ || sse_closed_) return;
    sse_rejected_ = true;
    rejection_ = std::move(r);
  }
  void SseHeader() {
    if (sse_header_sent_) return;
    sse_header_sent_ = true;
    std::string header =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        "Connection: close\r\nX-Accel-Buffering: no\r\n\r\n";
    queued_ += header.size();
    out_.push_front(std::move(header));
  }

 private:
  // A backlog pauses once this much is queued (or half the byte limit).
  static constexpr size_t kPageBytes = 64 * 1024;

  // Releases this connection's place in the counts, once.
  void Release() {
    if (released_) return;
    released_ = true;
    if (refusal_) --server_->refusing_;
    else server_->book_.Disconnected(remote_);
    if (streaming_) server_->book_.StreamClosed(remote_);
  }

  // Waits (idle_timeout) for the first byte of a request, then reads all of
  // it (read_timeout).
  void DoRead() {
    parser_.emplace();
    parser_->body_limit(server_->options_.body_limit);
    if (buffer_.size() > 0) return DoReadRequest();  // pipelined
    idle_ = true;
    idle_since_ = std::chrono::steady_clock::now();
    stream_.expires_after(std::chrono::milliseconds(server_->options_.idle_timeout));
    stream_.async_read_some(buffer_.prepare(4096), [self = shared_from_this()](
                                                       beast::error_code ec, size_t n) {
      self->idle_ = false;
      self->buffer_.commit(n);
      if (ec) return self->Close();
      self->DoReadRequest();
    });
  }

  void DoReadRequest() {
    stream_.expires_after(std::chrono::milliseconds(server_->options_.read_timeout));
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  // Beast's on_read: the end of the connection closes it, a request that
  // did not parse is answered, a parsed one is handed over.
  void OnRead(beast::error_code ec) {
    if (IsDisconnect(ec)) return Close();
    keep_alive_ = false;
    if (ec) return Send(ReadError(ec));
    if (refusal_) return Send(std::move(*refusal_));
    HttpRequest req = TakeRequest();
    Dispatch(req);
  }

  // The peer went away or the read timed out: nothing to answer.
  static bool IsDisconnect(beast::error_code ec) {
    return ec == http::error::end_of_stream || ec == net::error::operation_aborted ||
           ec == beast::error::timeout || ec == net::error::connection_reset ||
           ec == net::error::eof;
  }

  // The answer to a request that did not parse (the connection then closes).
  HttpResponse ReadError(beast::error_code ec) const {
    if (ec == http::error::body_limit)
      return HttpResponse::Error(413, "payload_too_large",
                                 "request body exceeds " +
                                     std::to_string(server_->options_.body_limit) +
                                     " bytes (api.body_limit)");
    return HttpResponse::Error(400, "bad_request", "malformed HTTP request: " + ec.message());
  }

  // The parsed request, as handlers see it; notes what the access log needs.
  HttpRequest TakeRequest() {
    auto msg = parser_->release();
    keep_alive_ = msg.keep_alive() && !server_->shutting_down_;
    started_ = std::chrono::steady_clock::now();
    HttpRequest req = ToRequest(msg);
    method_ = req.method;
    path_ = req.path;
    return req;
  }

  HttpRequest ToRequest(http::request<http::string_body>& msg) {
    HttpRequest req;
    req.method = std::string(msg.method_string());
    req.SetTarget(std::string(msg.target()));
    for (const auto& field : msg)
      req.headers[AsciiLower(std::string(field.name_string()))] = std::string(field.value());
    req.body = std::move(msg.body());
    req.remote = remote_;
    return req;
  }

  void Dispatch(HttpRequest& req) {
    busy_ = true;
    auto answered = std::make_shared<bool>(false);
    Responder respond = [self = shared_from_this(), answered](HttpResponse r) {
      if (*answered) return;
      *answered = true;
      self->Send(std::move(r));
    };
    const RequestGate gate{server_->options_.exposure, server_->options_.bearer_token,
                           server_->draining_};
    if (const SseHandler* sse =
            runtime::Dispatch(server_->router_, gate, req, respond, *server_->log_))
      StartSse(*sse, req);
  }

  void Send(HttpResponse r) {
    busy_ = true;
    if (r.close) keep_alive_ = false;
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(r.status), 11);
    res->set(http::field::server, "limbic");
    res->set(http::field::content_type, r.content_type);
    if (r.status == 401) res->set(http::field::www_authenticate, "Bearer");
    for (auto& [k, v] : r.headers) res->set(k, v);
    res->body() = std::move(r.body);
    res->keep_alive(keep_alive_ && !server_->shutting_down_);
    res->prepare_payload();
    int status = r.status;
    stream_.expires_after(std::chrono::milliseconds(server_->options_.read_timeout));
    http::async_write(stream_, *res, [self = shared_from_this(), res, status](beast::error_code ec, size_t) {
      auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::steady_clock::now() - self->started_).count();
      self->server_->log_->debug("http: {} {} {} {}us", self->method_, self->path_, status, us);
      self->busy_ = false;
      if (ec || res->need_eof() || self->server_->shutting_down_) {
        self->Close();
        self->server_->MaybeDone();
        return;
      }
      self->DoRead();
    });
  }

  // An event stream: admitted if it fits the streams' share, else an
  // ordinary 429/503 answer.
  void StartSse(const SseHandler& handler, HttpRequest& req) {
    ClientBook& book = server_->book_;
    auto verdict = book.CanStream(remote_);
    if (verdict != ClientBook::Verdict::kAdmit) {
      keep_alive_ = false;
      const auto& l = book.limits();
      HttpResponse r =
          verdict == ClientBook::Verdict::kClientFull
              ? HttpResponse::Error(429, "too_many_streams",
                                    remote_ + " has " + std::to_string(l.max_streams_per_client) +
                                        " event streams open, the most one client may "
                                        "(api.max_sse_streams_per_client); close one or retry later")
              : HttpResponse::Error(503, "unavailable",
                                    std::to_string(l.max_streams) +
                                        " event streams are open, the most the server takes "
                                        "(api.max_sse_streams); retry later");
      r.headers.emplace_back("Retry-After", "1");
      server_->LogRefusal("event stream from " + remote_ + " over its limit");
      return Send(std::move(r));
    }
    book.StreamOpened(remote_);
    streaming_ = true;
    sse_ = true;
    stream_.expires_never();
    class Stream final : public SseStream {
     public:
      explicit Stream(std::shared_ptr<Session> s) : s_(std::move(s)) {}
      bool Send(std::string_view event, std::string_view id, std::string_view data) override {
        std::string frame;
        if (!id.empty()) frame.append("id: ").append(id).append("\n");
        if (!event.empty()) frame.append("event: ").append(event).append("\n");
        size_t start = 0;
        do {
          size_t nl = data.find('\n', start);
          frame.append("data: ").append(data.substr(start, nl == std::string_view::npos ? nl : nl - start)).append("\n");
          start = nl == std::string_view::npos ? data.size() + 1 : nl + 1;
        } while (start <= data.size());
        frame.append("\n");
        return s_->SseSend(std::move(frame));
      }
      void Close() override { s_->SseClose(); }
      bool closed() const override { return s_->sse_closed(); }
      void Reject(int status, std::string code, std::string message) override {
        s_->SseReject(HttpResponse::Error(status, std::move(code), std::move(message)));
      }
      size_t queued_bytes() const override { return s_->queued_bytes(); }
      bool backlogged() const override { return s_->backlogged(); }
      void OnDrained(std::function<void()> cb) override { s_->SseOnDrained(std::move(cb)); }
      void OnClosed(std::function<void()> cb) override { s_->SseOnClosed(std::move(cb)); }

     private:
      std::shared_ptr<Session> s_;
    };
    try {
      handler(req, std::make_shared<Stream>(shared_from_this()));
    } catch (const std::exception& e) {
      server_->log_->error("http: SSE handler {} threw: {}", req.path, e.what());
      if (!sse_header_sent_) SseReject(HttpResponse::Error(500, "internal", e.what()));
      else SseClose();
    }
    if (sse_rejected_) {
      sse_ = false;
      if (!released_) book.StreamClosed(remote_);
      streaming_ = false;
      on_closed_ = nullptr;
      on_drained_ = nullptr;
      keep_alive_ = false;
      return Send(std::move(rejection_));
    }
    if (sse_closed_) return;
    SseHeader();
    if (!writing_) DoSseWrite();
    // A pending read notices the client going away.
    stream_.socket().async_read_some(net::buffer(sink_), [self = shared_from_this()](
                                                             beast::error_code, size_t) {
      self->SseClose();
    });
    ScheduleKeepalive();
  }

  void ScheduleKeepalive() {
    keepalive_timer_.expires_after(std::chrono::milliseconds(server_->options_.sse_keepalive));
    keepalive_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->sse_closed_) return;
      self->SseSend(": keepalive\n\n");
      self->ScheduleKeepalive();
    });
  }

  void Queue(std::string frame) {
    queued_ += frame.size();
    out_.push_back(std::move(frame));
  }

  void DoSseWrite() {
    if (out_.empty() || sse_closed_) {
      writing_ = false;
      return;
    }
    writing_ = true;
    net::async_write(stream_.socket(), net::buffer(out_.front()),
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       self->queued_ -= self->out_.front().size();
                       self->out_.pop_front();
                       if (ec) return self->SseClose();
                       if (self->out_.empty() && self->on_drained_)
                         net::post(self->server_->ioc_, self->on_drained_);
                       self->DoSseWrite();
                     });
  }

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

void HttpServer::Impl::DoAccept() {
  acceptor_.async_accept(ioc_, [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec != net::error::operation_aborted)
        self->log_->warn("http: accept failed: {}", ec.message());
      if (!self->acceptor_.is_open()) return;
    } else {
      self->OnAccept(std::move(socket));
    }
    if (self->acceptor_.is_open()) self->DoAccept();
  });
}

void HttpServer::Impl::OnAccept(tcp::socket socket) {
  boost::system::error_code ec;
  auto ep = socket.remote_endpoint(ec);
  std::string remote = ec ? "?" : ep.address().to_string();
  using Verdict = ClientBook::Verdict;
  // Over a share, the connection idle longest makes room: of this client
  // when the client is over its own share, of anyone when the server is full.
  Verdict verdict = book_.CanConnect(remote);
  if (verdict == Verdict::kClientFull && EvictIdle(&remote)) verdict = book_.CanConnect(remote);
  if (verdict == Verdict::kServerFull && EvictIdle(nullptr)) verdict = book_.CanConnect(remote);
  std::optional<HttpResponse> refusal;
  const auto& l = book_.limits();
  if (verdict == Verdict::kClientFull) {
    refusal = HttpResponse::Error(
        429, "too_many_connections",
        remote + " has " + std::to_string(l.max_connections_per_client) +
            " connections open and none idle, the most one client may "
            "(api.max_connections_per_client); close one or retry later");
  } else if (verdict == Verdict::kServerFull) {
    refusal = HttpResponse::Error(503, "unavailable",
                                  std::to_string(l.max_connections) +
                                      " connections are open and none idle, the most the server "
                                      "takes (api.max_connections); retry later");
  }
  if (refusal) {
    refusal->headers.emplace_back("Retry-After", "1");
    LogRefusal("connection from " + remote + ": " +
               (verdict == Verdict::kClientFull ? "api.max_connections_per_client"
                                                : "api.max_connections"));
    if (refusing_ >= kRefusalSlots) {
      socket.close(ec);
      return;
    }
  }
  std::make_shared<Session>(std::move(socket), shared_from_this(), std::move(remote),
                            std::move(refusal))
      ->Run();
}

bool HttpServer::Impl::EvictIdle(const std::string* client) {
  Session* oldest = nullptr;
  for (Session* s : sessions_)
    if (s->idle() && (!client || s->remote() == *client) &&
        (!oldest || s->idle_since() < oldest->idle_since()))
      oldest = s;
  if (!oldest) return false;
  log_->debug("http: closing an idle connection of {} to make room", oldest->remote());
  oldest->Close();
  return true;
}

void HttpServer::Impl::LogRefusal(const std::string& why) {
  auto now = std::chrono::steady_clock::now();
  if (now - last_refusal_log_ < std::chrono::seconds(1)) {
    ++refusals_unlogged_;
    return;
  }
  log_->warn("http: refused {}{}", why,
             refusals_unlogged_ ? fmt::format(" (and {} more in the last second)", refusals_unlogged_)
                                : std::string());
  last_refusal_log_ = now;
  refusals_unlogged_ = 0;
}

void HttpServer::Impl::Remove(Session* s) {
  sessions_.erase(s);
  MaybeDone();
}

void HttpServer::Impl::MaybeDone() {
  if (!shutting_down_ || !done_ || !sessions_.empty()) return;
  deadline_.cancel();
  auto done = std::move(done_);
  done_ = nullptr;
  net::post(ioc_, std::move(done));
}

void HttpServer::Impl::Shutdown(TimeMs deadline_ms, std::function<void()> done) {
  shutting_down_ = true;
  done_ = std::move(done);
  boost::system::error_code ec;
  acceptor_.close(ec);
  std::vector<Session*> open(sessions_.begin(), sessions_.end());
  for (Session* s : open) s->CloseIfIdle();
  deadline_.expires_after(std::chrono::milliseconds(deadline_ms));
  deadline_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec) return;
    if (!self->sessions_.empty())
      self->log_->warn("http: closing {} connections still busy at the deadline",
                       self->sessions_.size());
    std::vector<Session*> rest(self->sessions_.begin(), self->sessions_.end());
    for (Session* s : rest) s->Close();
    if (self->done_) {
      auto done = std::move(self->done_);
      self->done_ = nullptr;
      done();
    }
  });
  MaybeDone();
}

HttpServer::HttpServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  boost::system::error_code ec;
  impl_->acceptor_.close(ec);
  std::vector<Session*> open(impl_->sessions_.begin(), impl_->sessions_.end());
  for (Session* s : open) s->Close();
}

Result<std::unique_ptr<HttpServer>> HttpServer::Listen(net::io_context& ioc,
                                                       HttpServerOptions options,
                                                       std::shared_ptr<spdlog::logger> log) {
  auto impl = std::make_shared<Impl>(ioc, std::move(options), Router(), std::move(log));
  const auto& o = impl->options_;
  std::string where = o.address + ":" + std::to_string(o.port);
  boost::system::error_code ec;
  std::string host = o.address == "localhost" ? "127.0.0.1" : o.address;
  auto address = net::ip::make_address(host, ec);
  if (ec) return Status::InvalidArgument("api.address \"" + o.address + "\": " + ec.message());
  tcp::endpoint endpoint(address, o.port);
  impl->acceptor_.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor_.bind(endpoint, ec);
  if (!ec) impl->acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return Status::Unavailable("cannot listen on " + where + ": " + ec.message());
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

void HttpServer::Serve(Router router) {
  impl_->router_ = std::move(router);
  impl_->DoAccept();
}

uint16_t HttpServer::port() const {
  boost::system::error_code ec;
  auto ep = impl_->acceptor_.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

size_t HttpServer::connections() const { return impl_->sessions_.size(); }

HttpServer::Counts HttpServer::counts() const {
  Counts c;
  for (const Session* s : impl_->sessions_) {
    if (s->streaming()) ++c.streams;
    else if (s->idle()) ++c.idle;
    else ++c.busy;
  }
  return c;
}

void HttpServer::StopAccepting() {
  boost::system::error_code ec;
  impl_->acceptor_.close(ec);
  impl_->draining_ = true;
}

void HttpServer::Shutdown(TimeMs deadline_ms, std::function<void()> done) {
  impl_->Shutdown(deadline_ms, std::move(done));
}

}  // namespace limbic::runtime
