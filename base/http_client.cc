// Fetch: resolve, connect, (handshake), write, read -- all async on a private
// io_context, so one io.run_for(timeout) is the deadline of the whole
// exchange. `step` names where we are for the error message, which is why
// it is updated before each operation starts. One exception to the
// deadline: asio resolves names with a blocking getaddrinfo on a helper
// thread that cannot be cancelled, and the io_context's destructor waits
// for it -- a hung DNS server can make Fetch return late (still with the
// timeout error). For an address (127.0.0.1, [::1]) it answers at once.
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
  auto bad = [&](const std::string& why) { return Status::InvalidArgument("URL " + url + ": " + why); };
  ParsedUrl u;
  std::string rest;
  if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else if (url.rfind("https://", 0) == 0) {
    u.tls = true;
    rest = url.substr(8);
  } else {
    return bad("must start with http:// or https://");
  }
  if (rest.find_first_of(" \t\r\n") != std::string::npos) return bad("has white space");
  const size_t slash = rest.find_first_of("/?#");
  const std::string authority = rest.substr(0, slash);
  u.target = slash == std::string::npos ? "/" : rest.substr(slash);
  if (size_t hash = u.target.find('#'); hash != std::string::npos) u.target.resize(hash);
  if (u.target.empty() || u.target[0] != '/') u.target = "/" + u.target;
  if (authority.find('@') != std::string::npos) return bad("user:password@ is not supported");
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

// One client context for the process: loading the system CA store costs a
// few milliseconds, and an ssl::context may be shared by concurrent streams
// once configured (OpenSSL locks SSL_CTX internally).
ssl::context* SharedTlsContext(std::string* error) {
  static const std::pair<ssl::context*, std::string> ctx = [] {
    auto* c = new ssl::context(ssl::context::tls_client);  // never freed: used until exit
    boost::system::error_code ec;
    c->set_verify_mode(ssl::verify_peer, ec);
    if (!ec) c->set_default_verify_paths(ec);
    return std::pair<ssl::context*, std::string>(c, ec ? ec.message() : "");
  }();
  *error = ctx.second;
  return ctx.second.empty() ? ctx.first : nullptr;
}

// The Host header: RFC 9110 7.2 -- the port only when not the default.
std::string HostHeader(const ParsedUrl& u) {
  std::string host = u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host;
  return u.port == (u.tls ? "443" : "80") ? host : host + ":" + u.port;
}

// The state of one exchange; every handler runs on the io_context's one
// thread (inside run_for), so nothing here needs a lock.
struct Exchange {
  http::request<http::string_body> req;
  http::response_parser<http::string_body> parser;
  beast::flat_buffer buf;
  size_t max_body = 0;
  std::string step = "resolve";
  std::string error;  // set when a step failed
  std::string write_error;  // the write failed; the answer is read anyway
  bool done = false;
};

template <typename Stream>
void WriteThenRead(Stream& stream, Exchange& ex) {
  ex.step = "write";
  http::async_write(stream, ex.req, [&stream, &ex](beast::error_code write_ec, size_t) {
    // A server may answer before it has read the whole request (413 for a
    // body over its limit) and close: our write then fails (broken pipe,
    // reset), but its answer may be waiting to be read. Read it; only if
    // there is none is the write's error the one to report.
    ex.step = "read";
    if (write_ec) ex.write_error = write_ec.message();
    // The header first, on its own: Beast 1.74's eager parse (async_read)
    // loses the body_limit error of a Content-Length that is too large.
    http::async_read_header(stream, ex.buf, ex.parser, [&stream, &ex](beast::error_code ec, size_t) {
      auto finish = [&ex](beast::error_code ec) {
        if (ec && !ex.write_error.empty()) {
          ex.step = "write";
          ex.error = ex.write_error;
        } else if (ec == http::error::body_limit)
          ex.error = "the answer is longer than " + std::to_string(ex.max_body) + " bytes";
        else if (ec)
          ex.error = ec.message();
        ex.done = true;
      };
      if (ec) return finish(ec);
      http::async_read(stream, ex.buf, ex.parser, [finish](beast::error_code ec, size_t) { finish(ec); });
    });
  });
}

}  // namespace

Result<HttpResult> Fetch(const HttpCall& call) {
  auto url = ParseUrl(call.url);
  if (!url.ok()) return url.status();
  const std::string what = call.method + " " + call.url;
  const http::verb verb = http::string_to_verb(call.method);
  if (verb == http::verb::unknown) return Status::InvalidArgument(what + ": unknown method");
  if (call.timeout_ms <= 0) return Status::InvalidArgument(what + ": timeout_ms must be > 0");

  Exchange ex;
  ex.req = http::request<http::string_body>(verb, url->target, 11);
  ex.req.set(http::field::host, HostHeader(*url));
  ex.req.set(http::field::user_agent, "limbic");
  ex.req.set(http::field::connection, "close");
  for (const auto& [name, value] : call.headers) {
    // A line break would let a value (an API key from a config) inject headers.
    if ((name + value).find_first_of("\r\n") != std::string::npos)
      return Status::InvalidArgument(what + ": header " + name + " has a line break");
    ex.req.set(name, value);
  }
  if (!call.body.empty()) {
    ex.req.set(http::field::content_type, call.content_type);
    ex.req.body() = call.body;
  }
  ex.req.prepare_payload();
  ex.max_body = call.max_body;
  ex.parser.body_limit(call.max_body);
  ex.parser.header_limit(64 * 1024);

  ssl::context* tls = nullptr;
  if (url->tls) {
    std::string error;
    if (!(tls = SharedTlsContext(&error)))
      return Status::Unavailable(what + ": tls: cannot load the system CA certificates: " + error);
  }

  net::io_context io;
  tcp::resolver resolver(io);
  beast::tcp_stream plain(io);
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure;
  if (tls) secure.emplace(io, *tls);
  auto fail = [&ex](const beast::error_code& ec) {
    ex.error = ec.message();
    ex.done = true;
  };

  resolver.async_resolve(url->host, url->port, [&](beast::error_code ec, tcp::resolver::results_type eps) {
    if (ec) return fail(ec);
    ex.step = "connect";
    beast::tcp_stream& tcp_layer = secure ? beast::get_lowest_layer(*secure) : plain;
    tcp_layer.async_connect(eps, [&](beast::error_code ec, tcp::endpoint) {
      if (ec) return fail(ec);
      if (!secure) return WriteThenRead(plain, ex);
      ex.step = "tls handshake";
      // SNI carries names only (RFC 6066 3); the certificate is checked
      // against the host either way.
      if (!IsIpAddress(url->host) && !SSL_set_tlsext_host_name(secure->native_handle(), url->host.c_str())) {
        ex.error = "cannot set SNI";
        ex.done = true;
        return;
      }
      secure->set_verify_callback(ssl::host_name_verification(url->host));
      secure->async_handshake(ssl::stream_base::client, [&](beast::error_code ec) {
        if (ec) return fail(ec);
        WriteThenRead(*secure, ex);
      });
    });
  });
  io.run_for(std::chrono::milliseconds(call.timeout_ms));
  if (!ex.done)
    return Status::Unavailable(what + ": " + ex.step + ": timed out after " + std::to_string(call.timeout_ms) +
                               " ms");
  if (!ex.error.empty()) return Status::Unavailable(what + ": " + ex.step + ": " + ex.error);

  auto res = ex.parser.release();
  HttpResult out;
  out.status = static_cast<int>(res.result_int());
  for (const auto& field : res) {
    std::string name(field.name_string());
    for (char& c : name)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    // A repeated header is joined as RFC 9110 5.3 allows.
    auto [it, fresh] = out.headers.emplace(name, std::string(field.value()));
    if (!fresh) it->second += ", " + std::string(field.value());
  }
  out.body = std::move(res.body());
  return out;
}

}  // namespace limbic
