// The `http` kind: POST/PUT a JSON body to a URL, https through OpenSSL.
//
// Each delivery is one call of the HTTP client (base/http_client.h) on the
// runtime's io_context: no thread per delivery, and the whole exchange
// (resolve, connect, handshake, write, read) sits under the `timeout`
// deadline. Cancel() cancels the calls in flight.
//
// Outcomes: 2xx complete; 3xx permanent (redirects are not followed: the
// body and the Idempotency-Key would go to a place nobody configured);
// 408, 429 and 5xx retried; other 4xx permanent; transport errors and
// timeouts retried.
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "base/http_client.h"
#include "effectors/builtin.h"

namespace limbic::effectors {

using nlohmann::json;

namespace {

// What a transport failure says in last_error: where it stopped, without
// the URL (its path may be a secret, as Slack's webhook URLs are).
std::string TransportError(const HttpReply& r, const ParsedUrl& url) {
  if (r.timed_out || r.cancelled) return r.error;
  if (r.step == "resolve") return "resolve " + url.host + ": " + r.error;
  if (r.step == "connect") return "connect " + url.host + ":" + url.port + ": " + r.error;
  if (r.step == "tls handshake") return "TLS handshake: " + r.error;
  return r.step + ": " + r.error;
}

Outcome Classify(const HttpReply& r, const ParsedUrl& url) {
  if (r.cancelled) return Outcome::Cancelled();
  if (!r.status.ok()) return Outcome::Retry(TransportError(r, url));
  const int status = r.result.status;
  if (status >= 200 && status < 300) return Outcome::Complete({{"status", status}});
  if (status >= 300 && status < 400) {
    auto location = r.result.headers.find("location");
    return Outcome::Permanent("redirect " + std::to_string(status) + " to " +
                              (location == r.result.headers.end() ? "(no Location)" : location->second) +
                              " not followed");
  }
  const std::string body = r.result.body.substr(0, 200);
  std::string why = "HTTP " + std::to_string(status) + (body.empty() ? "" : ": " + body);
  if (status >= 400 && status < 500 && status != 408 && status != 429) return Outcome::Permanent(why);
  return Outcome::Retry(why);  // 5xx, 408, 429, anything odd
}

class HttpEffector final : public Effector {
 public:
  HttpEffector(std::string name, std::string url, ParsedUrl parsed, std::string method, json headers,
               json body, bool has_body, TimeMs timeout, std::shared_ptr<const TlsClient> tls,
               boost::asio::io_context& ioc)
      : name_(std::move(name)),
        url_(std::move(url)),
        parsed_(std::move(parsed)),
        method_(std::move(method)),
        headers_(std::move(headers)),
        body_(std::move(body)),
        has_body_(has_body),
        timeout_(timeout),
        tls_(std::move(tls)),
        ioc_(ioc) {}
  ~HttpEffector() override { Cancel(); }
  const std::string& name() const override { return name_; }

  void Deliver(const Delivery& d, std::function<void(Outcome)> done) override {
    auto call = Call(d);
    if (!call.ok()) {
      return boost::asio::post(ioc_, [done = std::move(done), why = call.status().message()] {
        done(Outcome::Permanent(why));
      });
    }
    std::erase_if(in_flight_, [](const auto& c) { return c.expired(); });
    in_flight_.push_back(StartFetch(ioc_, std::move(call).value(),
                                    [done = std::move(done), url = parsed_](HttpReply r) {
                                      done(Classify(r, url));
                                    }));
  }

  void Cancel() override {
    for (const auto& c : in_flight_)
      if (auto call = c.lock()) call->Cancel();
  }

 private:
  // The call for `d`: body and header templates rendered.
  Result<HttpCall> Call(const Delivery& d) const {
    auto body = has_body_ ? RenderTemplate(body_, d) : Result<json>(d.payload);
    if (!body.ok()) return body.status();
    HttpCall call;
    call.method = method_;
    call.url = url_;
    call.timeout_ms = timeout_;
    call.max_body = 8 << 20;  // only 200 bytes are kept; a longer answer is still read
    call.tls = tls_;
    call.headers.emplace_back("Idempotency-Key", d.idempotency_key);
    for (auto it = headers_.begin(); it != headers_.end(); ++it) {
      auto v = RenderTemplate(*it, d);
      if (!v.ok()) return v.status().WithContext("header " + it.key());
      std::string value = v->is_string() ? v->get<std::string>() : v->dump();
      if (value.find_first_of("\r\n") != std::string::npos)  // no header injection from a payload
        return Status::InvalidArgument("header " + it.key() +
                                       ": the rendered value has a line break");
      call.headers.emplace_back(it.key(), std::move(value));
    }
    call.body = body->dump(-1, ' ', false, json::error_handler_t::replace);
    return call;
  }

  std::string name_;
  std::string url_;
  ParsedUrl parsed_;
  std::string method_;
  json headers_, body_;
  bool has_body_;
  TimeMs timeout_;
  std::shared_ptr<const TlsClient> tls_;  // for https
  boost::asio::io_context& ioc_;
  std::vector<std::weak_ptr<HttpInFlight>> in_flight_;
};

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
  std::shared_ptr<const TlsClient> tls;  // an http URL needs none, but a ca_file is checked
  if (url->tls || !ca_file.empty()) {
    auto loaded = MakeTlsClient(TlsPolicy{verify, ca_file});
    if (!loaded.ok())
      return ConfigError(name, ca_file.empty() ? "tls_verify" : "ca_file", loaded.status().message());
    tls = *loaded;
  }
  return std::unique_ptr<Effector>(new HttpEffector(name, cfg["url"].get<std::string>(), *url, method,
                                                    headers, cfg.value("body", json()),
                                                    cfg.contains("body"), *timeout, tls, ioc));
}

}  // namespace limbic::effectors
