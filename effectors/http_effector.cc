// The `http` kind: POST/PUT a JSON body to a URL, https through OpenSSL.
//
// Each delivery runs on a BlockingRunner thread with a private io_context,
// so the whole exchange (resolve, connect, handshake, write, read) sits
// under one deadline: io.run_for(timeout). Cancel() stops that io_context;
// returning from Perform then closes the connection.
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "effectors/builtin.h"

namespace limbic::effectors {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using nlohmann::json;

namespace {

struct Url {
  bool tls = false;
  std::string host, port, target;
};

Result<Url> ParseUrl(const std::string& s) {
  Url u;
  std::string rest;
  if (s.rfind("http://", 0) == 0) rest = s.substr(7);
  else if (s.rfind("https://", 0) == 0) {
    u.tls = true;
    rest = s.substr(8);
  } else {
    return Status::InvalidArgument("must be an http:// or https:// URL");
  }
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  u.target = slash == std::string::npos ? "/" : rest.substr(slash);
  size_t colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']') == std::string::npos) {
    u.host = authority.substr(0, colon);
    u.port = authority.substr(colon + 1);
  } else {
    u.host = authority;
    u.port = u.tls ? "443" : "80";
  }
  if (u.host.empty()) return Status::InvalidArgument("has no host");
  return u;
}

// One request/response under a deadline; returns the status and body, or
// an error string (transport failure or timeout).
struct Exchange {
  int status = 0;
  std::string body;
  std::string error;
};

template <typename Stream>
void Talk(Stream& stream, http::request<http::string_body>& req, Exchange& ex, beast::flat_buffer& buf,
          http::response<http::string_body>& res, std::function<void()> finish) {
  http::async_write(stream, req, [&, finish](beast::error_code ec, size_t) {
    if (ec) {
      ex.error = "write: " + ec.message();
      return finish();
    }
    http::async_read(stream, buf, res, [&, finish](beast::error_code ec, size_t) {
      if (ec) ex.error = "read: " + ec.message();
      else {
        ex.status = res.result_int();
        ex.body = res.body().substr(0, 200);
      }
      finish();
    });
  });
}

Exchange Perform(const Url& url, http::request<http::string_body> req, TimeMs timeout, bool verify,
                 CancelFlag& cancel) {
  Exchange ex;
  net::io_context io;
  tcp::resolver resolver(io);
  beast::flat_buffer buf;
  http::response<http::string_body> res;
  bool finished = false;
  auto finish = [&] { finished = true; };
  ssl::context ctx(ssl::context::tls_client);
  if (verify) {
    ctx.set_default_verify_paths();
    ctx.set_verify_mode(ssl::verify_peer);
  } else {
    ctx.set_verify_mode(ssl::verify_none);
  }
  beast::tcp_stream plain(io);
  beast::ssl_stream<beast::tcp_stream> secure(io, ctx);
  resolver.async_resolve(url.host, url.port, [&](beast::error_code ec, tcp::resolver::results_type results) {
    if (ec) {
      ex.error = "resolve " + url.host + ": " + ec.message();
      return finish();
    }
    beast::tcp_stream& tcp_layer = url.tls ? beast::get_lowest_layer(secure) : plain;
    tcp_layer.async_connect(results, [&](beast::error_code ec, tcp::endpoint) {
      if (ec) {
        ex.error = "connect " + url.host + ":" + url.port + ": " + ec.message();
        return finish();
      }
      if (!url.tls) return Talk(plain, req, ex, buf, res, finish);
      if (!SSL_set_tlsext_host_name(secure.native_handle(), url.host.c_str())) {
        ex.error = "TLS: cannot set SNI";
        return finish();
      }
      if (verify) secure.set_verify_callback(ssl::host_name_verification(url.host));
      secure.async_handshake(ssl::stream_base::client, [&](beast::error_code ec) {
        if (ec) {
          ex.error = "TLS handshake: " + ec.message();
          return finish();
        }
        Talk(secure, req, ex, buf, res, finish);
      });
    });
  });
  cancel.Arm([&io] { io.stop(); });
  io.run_for(std::chrono::milliseconds(timeout));
  cancel.Disarm();
  if (!finished)
    ex.error = cancel.cancelled() ? "cancelled" : "timed out after " + std::to_string(timeout) + " ms";
  return ex;  // the streams close here
}

class HttpEffector final : public Effector {
 public:
  HttpEffector(std::string name, Url url, http::verb method, json headers, json body, bool has_body,
               TimeMs timeout, bool verify, boost::asio::io_context& ioc)
      : name_(std::move(name)), url_(std::move(url)), method_(method), headers_(std::move(headers)),
        body_(std::move(body)), has_body_(has_body), timeout_(timeout), verify_(verify), runner_(ioc) {}
  const std::string& name() const override { return name_; }

  void Deliver(const Delivery& d, std::function<void(Outcome)> done) override {
    auto body = has_body_ ? RenderTemplate(body_, d) : Result<json>(d.payload);
    if (!body.ok()) {
      Outcome o = Outcome::Permanent(body.status().message());
      return runner_.Run([o](CancelFlag&) { return o; }, std::move(done));
    }
    http::request<http::string_body> req{method_, url_.target, 11};
    req.set(http::field::host, url_.host);
    req.set(http::field::user_agent, "limbic");
    req.set(http::field::content_type, "application/json");
    req.set("Idempotency-Key", d.idempotency_key);
    for (auto it = headers_.begin(); it != headers_.end(); ++it) req.set(it.key(), it->get<std::string>());
    req.body() = body->dump(-1, ' ', false, json::error_handler_t::replace);
    req.prepare_payload();
    runner_.Run(
        [this, req = std::move(req)](CancelFlag& cancel) mutable {
          Exchange ex = Perform(url_, std::move(req), timeout_, verify_, cancel);
          if (!ex.error.empty()) return Outcome::Retry(ex.error);
          std::string why = "HTTP " + std::to_string(ex.status) + (ex.body.empty() ? "" : ": " + ex.body);
          if (ex.status >= 200 && ex.status < 300) return Outcome::Complete({{"status", ex.status}});
          if (ex.status >= 400 && ex.status < 500 && ex.status != 408 && ex.status != 429)
            return Outcome::Permanent(why);
          return Outcome::Retry(why);  // 5xx, 408, 429, anything odd
        },
        std::move(done));
  }

  void Cancel() override { runner_.CancelAll(); }

 private:
  std::string name_;
  Url url_;
  http::verb method_;
  json headers_, body_;
  bool has_body_;
  TimeMs timeout_;
  bool verify_;
  BlockingRunner runner_;  // last: destroyed (cancelled, joined) first
};

}  // namespace

Result<std::unique_ptr<Effector>> MakeHttpEffector(const std::string& name, const json& cfg,
                                                   boost::asio::io_context& ioc,
                                                   std::shared_ptr<spdlog::logger>) {
  LIMBIC_RETURN_IF_ERROR(CheckKeys(name, cfg, {"url", "method", "headers", "body", "timeout", "tls_verify"}));
  if (!cfg.contains("url") || !cfg["url"].is_string()) return ConfigError(name, "url", "required");
  auto url = ParseUrl(cfg["url"].get<std::string>());
  if (!url.ok()) return ConfigError(name, "url", url.status().message());
  std::string method = cfg.value("method", "POST");
  if (method != "POST" && method != "PUT") return ConfigError(name, "method", "must be POST or PUT");
  json headers = cfg.value("headers", json::object());
  if (!headers.is_object()) return ConfigError(name, "headers", "must be an object of strings");
  for (auto it = headers.begin(); it != headers.end(); ++it)
    if (!it->is_string()) return ConfigError(name, "headers." + it.key(), "must be a string");
  auto timeout = DurationKey(name, cfg, "timeout", 10000);
  if (!timeout.ok()) return timeout.status();
  if (cfg.contains("tls_verify") && !cfg["tls_verify"].is_boolean())
    return ConfigError(name, "tls_verify", "must be true or false");
  return std::unique_ptr<Effector>(new HttpEffector(
      name, *url, method == "PUT" ? http::verb::put : http::verb::post, headers,
      cfg.value("body", json()), cfg.contains("body"), *timeout, cfg.value("tls_verify", true), ioc));
}

}  // namespace limbic::effectors
