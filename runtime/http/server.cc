#include "runtime/http/server.h"

#include <chrono>

#include "base/input_json.h"
#include "base/json.h"
#include "runtime/http/server_impl.h"

namespace limbic::runtime {

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
    if (refusing_ >= kRefusalSlots && !EvictRefusing()) {
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

bool HttpServer::Impl::EvictRefusing() {
  Session* oldest = nullptr;
  for (Session* s : sessions_)
    if (s->refusing_idle() && (!oldest || s->idle_since() < oldest->idle_since())) oldest = s;
  if (!oldest) return false;
  oldest->Close();  // releases its slot now
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
