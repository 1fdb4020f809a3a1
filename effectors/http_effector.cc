// The `http` kind: POST/PUT a JSON body to a URL, https through OpenSSL.
//
// Each delivery runs on a BlockingRunner thread with a private io_context,
// so the whole exchange (resolve, connect, handshake, write, read) sits
// under one deadline: io.run_for(timeout). Cancel() stops that io_context;
// returning from Perform then closes the connection.
//
// Outcomes: 2xx complete; 3xx permanent (redirects are not followed: the
// body and the Idempotency-Key would go to a place nobody configured);
// 408, 429 and 5xx retried; other 4xx permanent; transport errors and
// timeouts retried.
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
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
  std::string host;         // to resolve: a name or an address, IPv6 without brackets
  std::string port;         // always set
  std::string host_header;  // "name", "name:port" for a non-default port, "[v6]:port"
  std::string target;
};

// http[s]://host[:port][/path?query]; IPv6 addresses in brackets.
Result<Url> ParseUrl(const std::string& s) {
  Url u;
  std::string rest;
  if (s.rfind("http://", 0) == 0)
    rest = s.substr(7);
  else if (s.rfind("https://", 0) == 0) {
    u.tls = true;
    rest = s.substr(8);
  } else {
    return Status::InvalidArgument("must be an http:// or https:// URL");
  }
  size_t slash = rest.find_first_of("/?#");
  std::string authority = rest.substr(0, slash);
  u.target = slash == std::string::npos ? "/" : rest.substr(slash);
  if (u.target[0] != '/') u.target = "/" + u.target;
  if (size_t hash = u.target.find('#'); hash != std::string::npos) u.target.resize(hash);
  if (authority.find('@') != std::string::npos)
    return Status::InvalidArgument("user:password@ in the URL is not supported (use headers)");
  std::string port;
  std::string bracketed;  // the host as it appears in the URL
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return Status::InvalidArgument("has an unclosed [ in the host");
    u.host = authority.substr(1, close - 1);
    bracketed = authority.substr(0, close + 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':')
        return Status::InvalidArgument("has junk after the ] of the host");
      port = authority.substr(close + 2);
    }
  } else {
    size_t colon = authority.rfind(':');
    u.host = authority.substr(0, colon);
    bracketed = u.host;
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  if (u.host.empty()) return Status::InvalidArgument("has no host");
  const std::string default_port = u.tls ? "443" : "80";
  if (port.empty()) {
    u.port = default_port;
  } else {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(port) < 1 || std::stoi(port) > 65535)
      return Status::InvalidArgument("has a bad port \"" + port + "\"");
    u.port = port;
  }
  // RFC 9110 7.2: the port goes into Host unless it is the scheme's default.
  u.host_header = u.port == default_port ? bracketed : bracketed + ":" + u.port;
  return u;
}

bool IsIpAddress(const std::string& host) {
  boost::system::error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

// One request/response under a deadline; returns the status, the start of
// the body and any Location, or an error string (transport failure, timeout).
struct Exchange {
  int status = 0;
  std::string body;
  std::string location;
  std::string error;
};

template <typename Stream>
void Talk(Stream& stream, http::request<http::string_body>& req, Exchange& ex,
          beast::flat_buffer& buf, http::response<http::string_body>& res,
          std::function<void()> finish) {
  http::async_write(stream, req, [&, finish](beast::error_code ec, size_t) {
    if (ec) {
      ex.error = "write: " + ec.message();
      return finish();
    }
    http::async_read(stream, buf, res, [&, finish](beast::error_code ec, size_t) {
      if (ec)
        ex.error = "read: " + ec.message();
      else {
        ex.status = res.result_int();
        ex.body = res.body().substr(0, 200);
        ex.location = std::string(res[http::field::location]);
      }
      finish();
    });
  });
}

Exchange Perform(const Url& url, http::request<http::string_body> req, TimeMs timeout,
                 ssl::context& tls, bool verify, CancelFlag& cancel) {
  Exchange ex;
  net::io_context io;
  tcp::resolver resolver(io);
  beast::flat_buffer buf;
  http::response<http::string_body> res;
  bool finished = false;
  auto finish = [&] { finished = true; };
  beast::tcp_stream plain(io);
  beast::ssl_stream<beast::tcp_stream> secure(io, tls);
  resolver.async_resolve(
      url.host, url.port, [&](beast::error_code ec, tcp::resolver::results_type results) {
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
          // SNI carries names only (RFC 6066 3).
          if (!IsIpAddress(url.host) &&
              !SSL_set_tlsext_host_name(secure.native_handle(), url.host.c_str())) {
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
    ex.error =
        cancel.cancelled() ? "cancelled" : "timed out after " + std::to_string(timeout) + " ms";
  return ex;  // the streams close here
}

Outcome Classify(const Exchange& ex) {
  if (!ex.error.empty()) return Outcome::Retry(ex.error);
  if (ex.status >= 200 && ex.status < 300) return Outcome::Complete({{"status", ex.status}});
  if (ex.status >= 300 && ex.status < 400)
    return Outcome::Permanent("redirect " + std::to_string(ex.status) + " to " +
                              (ex.location.empty() ? "(no Location)" : ex.location) +
                              " not followed");
  std::string why = "HTTP " + std::to_string(ex.status) + (ex.body.empty() ? "" : ": " + ex.body);
  if (ex.status >= 400 && ex.status < 500 && ex.status != 408 && ex.status != 429)
    return Outcome::Permanent(why);
  return Outcome::Retry(why);  // 5xx, 408, 429, anything odd
}

class HttpEffector final : public Effector {
 public:
  HttpEffector(std::string name, Url url, http::verb method, json headers, json body, bool has_body,
               TimeMs timeout, bool verify, std::unique_ptr<ssl::context> tls,
               boost::asio::io_context& ioc)
      : name_(std::move(name)),
        url_(std::move(url)),
        method_(method),
        headers_(std::move(headers)),
        body_(std::move(body)),
        has_body_(has_body),
        timeout_(timeout),
        verify_(verify),
        tls_(std::move(tls)),
        runner_(ioc) {}
  const std::string& name() const override { return name_; }

  void Deliver(const Delivery& d, std::function<void(Outcome)> done) override {
    auto req = Request(d);
    if (!req.ok()) {
      Outcome o = Outcome::Permanent(req.status().message());
      return runner_.Run([o](CancelFlag&) { return o; }, std::move(done));
    }
    runner_.Run(
        [this, req = std::move(req).value()](CancelFlag& cancel) mutable {
          return Classify(Perform(url_, std::move(req), timeout_, *tls_, verify_, cancel));
        },
        std::move(done));
  }

  void Cancel() override { runner_.CancelAll(); }

 private:
  // The request for `d`: body and header templates rendered.
  Result<http::request<http::string_body>> Request(const Delivery& d) const {
    auto body = has_body_ ? RenderTemplate(body_, d) : Result<json>(d.payload);
    if (!body.ok()) return body.status();
    http::request<http::string_body> req{method_, url_.target, 11};
    req.set(http::field::host, url_.host_header);
    req.set(http::field::user_agent, "limbic");
    req.set(http::field::content_type, "application/json");
    req.set("Idempotency-Key", d.idempotency_key);
    for (auto it = headers_.begin(); it != headers_.end(); ++it) {
      auto v = RenderTemplate(*it, d);
      if (!v.ok()) return v.status().WithContext("header " + it.key());
      std::string value = v->is_string() ? v->get<std::string>() : v->dump();
      if (value.find_first_of("\r\n") != std::string::npos)  // no header injection from a payload
        return Status::InvalidArgument("header " + it.key() +
                                       ": the rendered value has a line break");
      req.set(it.key(), value);
    }
    req.body() = body->dump(-1, ' ', false, json::error_handler_t::replace);
    req.prepare_payload();
    return req;
  }

  std::string name_;
  Url url_;
  http::verb method_;
  json headers_, body_;
  bool has_body_;
  TimeMs timeout_;
  bool verify_;
  std::unique_ptr<ssl::context> tls_;  // shared by all deliveries (OpenSSL makes that safe)
  BlockingRunner runner_;              // last: destroyed (cancelled, joined) first
};

// The TLS client context: verification against the system's CAs, or only
// against `ca_file`; or none.
Result<std::unique_ptr<ssl::context>> MakeTlsContext(const std::string& name, bool verify,
                                                     const std::string& ca_file) {
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
  boost::system::error_code ec;
  if (!verify) {
    ctx->set_verify_mode(ssl::verify_none);
    return ctx;
  }
  ctx->set_verify_mode(ssl::verify_peer);
  if (ca_file.empty())
    ctx->set_default_verify_paths(ec);
  else
    ctx->load_verify_file(ca_file, ec);
  if (ec && !ca_file.empty())
    return ConfigError(name, "ca_file", "cannot load " + ca_file + ": " + ec.message());
  if (ec)
    return ConfigError(name, "tls_verify",
                       "cannot load the system's CA certificates: " + ec.message());
  return ctx;
}

}  // namespace

Result<std::unique_ptr<Effector>> MakeHttpEffector(const std::string& name, const json& cfg,
                                                   boost::asio::io_context& ioc,
                                                   std::shared_ptr<spdlog::logger>) {
  LIMBIC_RETURN_IF_ERROR(CheckKeys(
      name, cfg, {"url", "method", "headers", "body", "timeout", "tls_verify", "ca_file"}));
  if (!cfg.contains("url") || !cfg["url"].is_string()) return ConfigError(name, "url", "required");
  auto url = ParseUrl(cfg["url"].get<std::string>());
  if (!url.ok()) return ConfigError(name, "url", url.status().message());
  if (cfg.contains("method") && !cfg["method"].is_string())
    return ConfigError(name, "method", "must be POST or PUT");
  std::string method = cfg.value("method", "POST");
  if (method != "POST" && method != "PUT")
    return ConfigError(name, "method", "must be POST or PUT");
  json headers = cfg.value("headers", json::object());
  if (!headers.is_object()) return ConfigError(name, "headers", "must be an object of strings");
  for (auto it = headers.begin(); it != headers.end(); ++it) {
    if (!it->is_string()) return ConfigError(name, "headers." + it.key(), "must be a string");
    LIMBIC_RETURN_IF_ERROR(CheckTemplate(name, "headers." + it.key(), *it));
  }
  if (cfg.contains("body")) LIMBIC_RETURN_IF_ERROR(CheckTemplate(name, "body", cfg["body"]));
  auto timeout = DurationKey(name, cfg, "timeout", 10000);
  if (!timeout.ok()) return timeout.status();
  if (cfg.contains("tls_verify") && !cfg["tls_verify"].is_boolean())
    return ConfigError(name, "tls_verify", "must be true or false");
  bool verify = cfg.value("tls_verify", true);
  std::string ca_file;
  if (cfg.contains("ca_file")) {
    if (!cfg["ca_file"].is_string() || cfg["ca_file"].get<std::string>().empty())
      return ConfigError(name, "ca_file", "must be the path of a PEM file");
    if (!verify)
      return ConfigError(name, "ca_file",
                         "is for verifying: it makes no sense with tls_verify false");
    ca_file = cfg["ca_file"].get<std::string>();
  }
  auto tls = MakeTlsContext(name, verify, ca_file);
  if (!tls.ok()) return tls.status();
  return std::unique_ptr<Effector>(
      new HttpEffector(name, *url, method == "PUT" ? http::verb::put : http::verb::post, headers,
                       cfg.value("body", json()), cfg.contains("body"), *timeout, verify,
                       std::move(tls).value(), ioc));
}

}  // namespace limbic::effectors
