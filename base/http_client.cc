// A call: resolve, connect, (handshake), write, read -- each async on the
// caller's io_context, under one deadline timer for the whole exchange.
// `step` names where the call is, for the error, which is why it is updated
// before each operation starts. The deadline or Cancel() ends the call at
// once (done runs) and closes what is open, so the pending operation's
// handler finds the call over and returns.
//
// TLS is not shut down gracefully: we send "Connection: close" and have
// read the one response to its end, so a close_notify exchange would only
// add a round trip (and a second place to time out).
#include "base/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <optional>

namespace limbic {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

std::string OpenAiEndpoint(std::string_view url, std::string_view path) {
  std::string endpoint(url);
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  if (endpoint.ends_with(path)) return endpoint;
  if (!endpoint.ends_with("/v1")) endpoint += "/v1";
  return endpoint += path;
}

Result<ParsedUrl> ParseUrl(const std::string& url) {
  auto bad = [](const std::string& why) { return Status::InvalidArgument(why); };
  ParsedUrl u;
  std::string rest;
  if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else if (url.rfind("https://", 0) == 0) {
    u.tls = true;
    rest = url.substr(8);
  } else {
    return bad("must be an http:// or https:// URL");
  }
  if (rest.find_first_of(" \t\r\n") != std::string::npos) return bad("has white space");
  const size_t slash = rest.find_first_of("/?#");
  const std::string authority = rest.substr(0, slash);
  u.target = slash == std::string::npos ? "/" : rest.substr(slash);
  if (size_t hash = u.target.find('#'); hash != std::string::npos) u.target.resize(hash);
  if (u.target.empty() || u.target[0] != '/') u.target = "/" + u.target;
  if (authority.find('@') != std::string::npos) return bad("user:password@ in the URL is not supported (use headers)");
  std::string port;
  bool has_port = false;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) return bad("has an unclosed [ in the host");
    u.host = authority.substr(1, close - 1);
    boost::system::error_code ec;
    net::ip::make_address_v6(u.host, ec);
    if (ec) return bad("has a bad IPv6 address in [ ]");
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return bad("has junk after the ] of the host");
      port = authority.substr(close + 2);
      has_port = true;
    }
  } else {
    const size_t colon = authority.find(':');
    u.host = authority.substr(0, colon);
    if (colon != std::string::npos) {
      port = authority.substr(colon + 1);
      has_port = true;
    }
    if (u.host.find_first_of("[]") != std::string::npos) return bad("has a bad host");
  }
  if (u.host.empty()) return bad("has no host");
  if (!has_port) {
    u.port = u.tls ? "443" : "80";
  } else {
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(port) < 1 || std::stoi(port) > 65535)
      return bad("has a bad port \"" + port + "\"");
    u.port = port;
  }
  return u;
}

namespace {

bool IsIpAddress(const std::string& host) {
  boost::system::error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

// The Host header: RFC 9110 7.2 -- the port only when not the default.
std::string HostHeader(const ParsedUrl& u) {
  std::string host = u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host;
  return u.port == (u.tls ? "443" : "80") ? host : host + ":" + u.port;
}

}  // namespace

class TlsClient {
 public:
  TlsClient(bool verify) : ctx(ssl::context::tls_client), verify(verify) {}
  // Configured once, then shared: OpenSSL locks an SSL_CTX internally.
  mutable ssl::context ctx;
  const bool verify;
};

Result<std::shared_ptr<const TlsClient>> MakeTlsClient(const TlsPolicy& policy) {
  auto tls = std::make_shared<TlsClient>(policy.verify);
  boost::system::error_code ec;
  if (!policy.verify) {
    tls->ctx.set_verify_mode(ssl::verify_none);
    return std::shared_ptr<const TlsClient>(std::move(tls));
  }
  tls->ctx.set_verify_mode(ssl::verify_peer);
  if (policy.ca_file.empty()) {
    tls->ctx.set_default_verify_paths(ec);
    if (ec) return Status::Unavailable("cannot load the system's CA certificates: " + ec.message());
  } else {
    tls->ctx.load_verify_file(policy.ca_file, ec);
    if (ec) return Status::InvalidArgument("cannot load " + policy.ca_file + ": " + ec.message());
  }
  return std::shared_ptr<const TlsClient>(std::move(tls));
}

namespace {

// The system's CAs, loaded on the first https call without a TlsClient of
// its own, then kept for the process.
Result<std::shared_ptr<const TlsClient>> SystemTls() {
  static const Result<std::shared_ptr<const TlsClient>> tls = MakeTlsClient(TlsPolicy{});
  return tls;
}

// One call. Handlers hold a shared_ptr to it; all run on `io`'s thread
// (Cancel posts there), so nothing here needs a lock.
class Call final : public HttpInFlight, public std::enable_shared_from_this<Call> {
 public:
  Call(net::io_context& io, std::string what, ParsedUrl url, std::shared_ptr<const TlsClient> tls,
       int64_t timeout_ms, size_t max_body, std::function<void(HttpReply)> done)
      : io_(io),
        what_(std::move(what)),
        url_(std::move(url)),
        tls_(std::move(tls)),
        timeout_ms_(timeout_ms),
        max_body_(max_body),
        done_(std::move(done)),
        resolver_(io),
        plain_(io),
        deadline_(io) {
    if (tls_) secure_.emplace(io, tls_->ctx);
    parser_.body_limit(max_body);
    parser_.header_limit(64 * 1024);
  }

  http::request<http::string_body>& request() { return req_; }

  void Start() {
    auto self = shared_from_this();
    deadline_.expires_after(std::chrono::milliseconds(timeout_ms_));
    deadline_.async_wait([self](beast::error_code ec) {
      if (!ec) self->End("timed out after " + std::to_string(self->timeout_ms_) + " ms", true, false);
    });
    resolver_.async_resolve(url_.host, url_.port,
                            [self](beast::error_code ec, tcp::resolver::results_type eps) {
                              if (self->over_) return;
                              if (ec) return self->End(ec.message());
                              self->Connect(eps);
                            });
  }

  void Cancel() override {
    net::post(io_, [self = shared_from_this()] { self->End("cancelled", false, true); });
  }

 private:
  void Connect(const tcp::resolver::results_type& eps) {
    step_ = "connect";
    beast::tcp_stream& tcp_layer = secure_ ? beast::get_lowest_layer(*secure_) : plain_;
    tcp_layer.async_connect(eps, [self = shared_from_this()](beast::error_code ec, tcp::endpoint) {
      if (self->over_) return;
      if (ec) return self->End(ec.message());
      if (!self->secure_) return self->WriteThenRead(self->plain_);
      self->Handshake();
    });
  }

  void Handshake() {
    step_ = "tls handshake";
    // SNI carries names only (RFC 6066 3); the certificate is checked
    // against the host either way.
    if (!IsIpAddress(url_.host) &&
        !SSL_set_tlsext_host_name(secure_->native_handle(), url_.host.c_str()))
      return End("cannot set SNI");
    if (tls_->verify) secure_->set_verify_callback(ssl::host_name_verification(url_.host));
    secure_->async_handshake(ssl::stream_base::client, [self = shared_from_this()](beast::error_code ec) {
      if (self->over_) return;
      if (ec) return self->End(ec.message());
      self->WriteThenRead(*self->secure_);
    });
  }

  template <typename Stream>
  void WriteThenRead(Stream& stream) {
    step_ = "write";
    http::async_write(stream, req_, [this, &stream, self = shared_from_this()](beast::error_code write_ec, size_t) {
      if (over_) return;
      // A server may answer before it has read the whole request (413 for a
      // body over its limit) and close: our write then fails (broken pipe,
      // reset), but its answer may be waiting to be read. Read it; only if
      // there is none is the write's error the one to report.
      step_ = "read";
      if (write_ec) write_error_ = write_ec.message();
      // The header first, on its own: Beast 1.74's eager parse (async_read)
      // loses the body_limit error of a Content-Length that is too large.
      http::async_read_header(stream, buf_, parser_, [this, &stream, self](beast::error_code ec, size_t) {
        if (over_) return;
        if (ec) return ReadDone(ec);
        http::async_read(stream, buf_, parser_,
                         [this, self](beast::error_code ec, size_t) { ReadDone(ec); });
      });
    });
  }

  void ReadDone(beast::error_code ec) {
    if (over_) return;
    if (ec && !write_error_.empty()) {
      step_ = "write";
      return End(write_error_);
    }
    if (ec == http::error::body_limit)
      return End("the answer is longer than " + std::to_string(max_body_) + " bytes");
    if (ec) return End(ec.message());
    HttpReply reply;
    auto res = parser_.release();
    reply.result.status = static_cast<int>(res.result_int());
    for (const auto& field : res) {
      std::string name(field.name_string());
      for (char& c : name)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      // A repeated header is joined as RFC 9110 5.3 allows.
      auto [it, fresh] = reply.result.headers.emplace(name, std::string(field.value()));
      if (!fresh) it->second += ", " + std::string(field.value());
    }
    reply.result.body = std::move(res.body());
    Finish(std::move(reply));
  }

  // Ends the call with an error at the current step.
  void End(std::string error, bool timed_out = false, bool cancelled = false) {
    if (over_) return;
    HttpReply reply;
    reply.status = Status::Unavailable(what_ + ": " + step_ + ": " + error);
    reply.step = step_;
    reply.error = std::move(error);
    reply.timed_out = timed_out;
    reply.cancelled = cancelled;
    Finish(std::move(reply));
  }

  void Finish(HttpReply reply) {
    over_ = true;
    deadline_.cancel();
    // Whatever is still pending comes back with operation_aborted and
    // finds over_ set. TLS is not shut down gracefully: we sent
    // "Connection: close" and read the one answer to its end, so a
    // close_notify exchange would only add a round trip.
    resolver_.cancel();
    beast::error_code ignored;
    plain_.socket().close(ignored);
    if (secure_) beast::get_lowest_layer(*secure_).socket().close(ignored);
    auto done = std::move(done_);
    done(std::move(reply));
  }

  net::io_context& io_;
  const std::string what_;  // "POST http://...", for errors
  const ParsedUrl url_;
  const std::shared_ptr<const TlsClient> tls_;  // null for http
  const int64_t timeout_ms_;
  const size_t max_body_;
  std::function<void(HttpReply)> done_;
  tcp::resolver resolver_;
  beast::tcp_stream plain_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure_;
  net::steady_timer deadline_;
  http::request<http::string_body> req_;
  http::response_parser<http::string_body> parser_;
  beast::flat_buffer buf_;
  std::string step_ = "resolve";
  std::string write_error_;  // the write failed; the answer is read anyway
  bool over_ = false;
};

// A call that could not be made: done runs from `io`, as for any other.
class Refused final : public HttpInFlight {
 public:
  void Cancel() override {}
};

}  // namespace

std::shared_ptr<HttpInFlight> StartFetch(net::io_context& io, HttpCall call,
                                         std::function<void(HttpReply)> done) {
  const std::string what = call.method + " " + call.url;
  auto refuse = [&](Status status) -> std::shared_ptr<HttpInFlight> {
    HttpReply reply;
    reply.status = std::move(status);
    reply.step = "request";
    reply.error = reply.status.message();
    net::post(io, [done = std::move(done), reply = std::move(reply)]() mutable { done(std::move(reply)); });
    return std::make_shared<Refused>();
  };
  auto url = ParseUrl(call.url);
  if (!url.ok()) return refuse(url.status().WithContext(what));
  const http::verb verb = http::string_to_verb(call.method);
  if (verb == http::verb::unknown) return refuse(Status::InvalidArgument(what + ": unknown method"));
  if (call.timeout_ms <= 0) return refuse(Status::InvalidArgument(what + ": timeout_ms must be > 0"));
  std::shared_ptr<const TlsClient> tls;
  if (url->tls) {
    auto system = call.tls ? Result<std::shared_ptr<const TlsClient>>(call.tls) : SystemTls();
    if (!system.ok()) return refuse(system.status().WithContext(what + ": tls"));
    tls = *system;
  }
  http::request<http::string_body> req(verb, url->target, 11);
  req.set(http::field::host, HostHeader(*url));
  req.set(http::field::user_agent, "limbic");
  req.set(http::field::connection, "close");
  for (const auto& [name, value] : call.headers) {
    // A line break would let a value (an API key from a config) inject headers.
    if ((name + value).find_first_of("\r\n") != std::string::npos)
      return refuse(Status::InvalidArgument(what + ": header " + name + " has a line break"));
    req.set(name, value);
  }
  if (!call.body.empty()) {
    req.set(http::field::content_type, call.content_type);
    req.body() = std::move(call.body);
  }
  req.prepare_payload();
  auto c = std::make_shared<Call>(io, what, *url, std::move(tls), call.timeout_ms, call.max_body,
                                  std::move(done));
  c->request() = std::move(req);
  c->Start();
  return c;
}

Result<HttpResult> Fetch(const HttpCall& call) {
  net::io_context io;
  HttpReply reply;
  StartFetch(io, call, [&](HttpReply r) {
    reply = std::move(r);
    io.stop();
  });
  io.run();
  if (!reply.status.ok()) return reply.status;
  return std::move(reply.result);
}

}  // namespace limbic
