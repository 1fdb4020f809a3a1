#include "runtime/http/server_impl.h"

#include <array>

#include <boost/asio/write.hpp>

namespace limbic::runtime {

void Session::CloseIfIdle() {
  if (sse_) return SseClose();
  if (!busy_) Close();
}

void Session::Close() {
  Release();
  boost::system::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.socket().close(ec);
}

bool Session::SseSend(std::string frame) {
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

void Session::SseClose() {
  // A rejection not yet sent is the answer; StartSse sends it, then closes.
  if (sse_closed_ || (sse_rejected_ && !sse_header_sent_)) return;
  sse_closed_ = true;
  keepalive_timer_.cancel();
  if (on_closed_) net::post(server_->ioc_, std::move(on_closed_));
  on_closed_ = nullptr;
  on_drained_ = nullptr;
  Close();
}

bool Session::backlogged() const {
  return queued_ >= std::min<size_t>(kPageBytes, server_->options_.sse_max_queued_bytes / 2);
}

void Session::SseOnDrained(std::function<void()> cb) {
  if (!sse_closed_) on_drained_ = std::move(cb);
}

void Session::SseOnClosed(std::function<void()> cb) {
  if (sse_closed_) return net::post(server_->ioc_, std::move(cb));
  on_closed_ = std::move(cb);
}

void Session::SseReject(HttpResponse r) {
  if (sse_header_sent_ || sse_rejected_ || sse_closed_) return;
  sse_rejected_ = true;
  rejection_ = std::move(r);
}

void Session::SseHeader() {
  if (sse_header_sent_) return;
  sse_header_sent_ = true;
  std::string header =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
      "Connection: close\r\nX-Accel-Buffering: no\r\n\r\n";
  queued_ += header.size();
  out_.push_front(std::move(header));
}

void Session::Release() {
  if (released_) return;
  released_ = true;
  if (refusal_) --server_->refusing_;
  else server_->book_.Disconnected(remote_);
  if (streaming_) server_->book_.StreamClosed(remote_);
}

void Session::DoRead() {
  parser_.emplace();
  parser_->body_limit(server_->options_.body_limit);
  if (buffer_.size() > 0) return DoReadRequest();  // pipelined
  idle_ = true;
  idle_since_ = std::chrono::steady_clock::now();
  stream_.expires_after(std::chrono::milliseconds(
      refusal_ ? std::min(server_->options_.idle_timeout, HttpServer::Impl::kRefusalWaitMs)
               : server_->options_.idle_timeout));
  stream_.async_read_some(buffer_.prepare(4096), [self = shared_from_this()](
                                                     beast::error_code ec, size_t n) {
    self->idle_ = false;
    self->buffer_.commit(n);
    if (ec) return self->Close();
    self->DoReadRequest();
  });
}

void Session::DoReadRequest() {
  // Over the limits, the whole request within the first byte's wait.
  if (!refusal_)
    stream_.expires_after(std::chrono::milliseconds(server_->options_.read_timeout));
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
}

void Session::OnRead(beast::error_code ec) {
  if (IsDisconnect(ec)) return Close();
  keep_alive_ = false;
  if (ec) {
    body_unread_ = true;
    return Send(ReadError(ec));
  }
  HttpRequest req = TakeRequest();
  if (refusal_) {
    keep_alive_ = false;  // this connection is over the limits: one answer
    if (req.method != "GET" || req.path != server_->options_.health_path)
      return Send(std::move(*refusal_));
  }
  Dispatch(req);
}

bool Session::IsDisconnect(beast::error_code ec) {
  return ec == http::error::end_of_stream || ec == net::error::operation_aborted ||
         ec == beast::error::timeout || ec == net::error::connection_reset ||
         ec == net::error::eof;
}

HttpResponse Session::ReadError(beast::error_code ec) const {
  if (ec == http::error::body_limit)
    return HttpResponse::Error(413, "payload_too_large",
                               "request body exceeds " +
                                   std::to_string(server_->options_.body_limit) +
                                   " bytes (api.body_limit)");
  return HttpResponse::Error(400, "bad_request", "malformed HTTP request: " + ec.message());
}

HttpRequest Session::TakeRequest() {
  auto msg = parser_->release();
  keep_alive_ = msg.keep_alive() && !server_->shutting_down_;
  started_ = std::chrono::steady_clock::now();
  HttpRequest req = ToRequest(msg);
  method_ = req.method;
  path_ = req.path;
  return req;
}

HttpRequest Session::ToRequest(http::request<http::string_body>& msg) {
  HttpRequest req;
  req.method = std::string(msg.method_string());
  req.SetTarget(std::string(msg.target()));
  for (const auto& field : msg)
    req.headers[AsciiLower(std::string(field.name_string()))] = std::string(field.value());
  req.body = std::move(msg.body());
  req.remote = remote_;
  return req;
}

void Session::Dispatch(HttpRequest& req) {
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

void Session::Send(HttpResponse r) {
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
      if (!ec && self->body_unread_ && !self->server_->shutting_down_) return self->LingerThenClose();
      self->Close();
      self->server_->MaybeDone();
      return;
    }
    self->DoRead();
  });
}

void Session::LingerThenClose() {
  boost::system::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  if (ec) {
    Close();
    return server_->MaybeDone();
  }
  stream_.expires_after(std::chrono::milliseconds(kLingerMs));
  DrainThenClose(std::make_shared<std::array<char, 16384>>());
}

void Session::DrainThenClose(std::shared_ptr<std::array<char, 16384>> scratch) {
  auto* buffer = scratch.get();
  stream_.async_read_some(net::buffer(*buffer), [self = shared_from_this(), scratch = std::move(scratch)](
                                                    beast::error_code ec, size_t n) mutable {
    self->drained_ += n;
    if (ec || self->drained_ >= kLingerBytes || self->server_->shutting_down_) {
      self->Close();
      return self->server_->MaybeDone();
    }
    self->DrainThenClose(std::move(scratch));
  });
}

void Session::StartSse(const SseHandler& handler, HttpRequest& req) {
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

void Session::ScheduleKeepalive() {
  keepalive_timer_.expires_after(std::chrono::milliseconds(server_->options_.sse_keepalive));
  keepalive_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || self->sse_closed_) return;
    self->SseSend(": keepalive\n\n");
    self->ScheduleKeepalive();
  });
}

void Session::Queue(std::string frame) {
  queued_ += frame.size();
  out_.push_back(std::move(frame));
}

void Session::DoSseWrite() {
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

}  // namespace limbic::runtime
