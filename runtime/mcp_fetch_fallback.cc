// TEMPORARY: a plain-http stand-in for limbic::memory::Fetch and ParseUrl
// (state/memory/http_client.h) so that `limbic mcp` builds and is tested
// before the real client lands in limbic_memory. Delete this file (and its
// line in runtime/CMakeLists.txt) when state/memory/http_client.cc exists;
// two definitions of Fetch would not link. No TLS: https is Unavailable.
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>

#include "state/memory/http_client.h"

namespace limbic::memory {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// Runs one async operation to completion on `ioc`; the stream's deadline
// bounds it.
template <class Start>
boost::system::error_code RunOp(net::io_context& ioc, Start start) {
  boost::system::error_code result = net::error::would_block;
  start([&result](boost::system::error_code ec, auto&&...) { result = ec; });
  ioc.restart();
  ioc.run();
  return result;
}

}  // namespace

Result<ParsedUrl> ParseUrl(const std::string& url) {
  ParsedUrl out;
  std::string rest;
  if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else if (url.rfind("https://", 0) == 0) {
    out.tls = true;
    rest = url.substr(8);
  } else {
    return Status::InvalidArgument("URL " + url + ": must start with http:// or https://");
  }
  size_t slash = rest.find_first_of("/?");
  std::string authority = rest.substr(0, slash);
  out.target = slash == std::string::npos ? "/" : rest.substr(slash);
  if (out.target[0] == '?') out.target = "/" + out.target;
  std::string port;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return Status::InvalidArgument("URL " + url + ": unclosed [");
    out.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return Status::InvalidArgument("URL " + url + ": bad host");
      port = authority.substr(close + 2);
    }
  } else {
    size_t colon = authority.find(':');
    out.host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  if (out.host.empty()) return Status::InvalidArgument("URL " + url + ": no host");
  if (port.empty()) port = out.tls ? "443" : "80";
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
      std::stoi(port) > 65535)
    return Status::InvalidArgument("URL " + url + ": bad port \"" + port + "\"");
  out.port = port;
  return out;
}

Result<HttpResult> Fetch(const HttpCall& call) {
  auto url = ParseUrl(call.url);
  if (!url.ok()) return url.status();
  std::string what = call.method + " " + call.url;
  if (url->tls) return Status::Unavailable(what + ": https is not supported by this build");
  auto fail = [&](const char* step, const boost::system::error_code& ec) {
    return Status::Unavailable(what + ": " + step + ": " +
                               (ec == beast::error::timeout ? "timed out" : ec.message()));
  };

  net::io_context ioc;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(call.timeout_ms);
  tcp::resolver resolver(ioc);
  boost::system::error_code ec;
  auto endpoints = resolver.resolve(url->host, url->port, ec);
  if (ec) return fail("resolve", ec);
  beast::tcp_stream stream(ioc);
  stream.expires_at(deadline);
  ec = RunOp(ioc, [&](auto handler) { stream.async_connect(endpoints, handler); });
  if (ec) return fail("connect", ec);

  http::request<http::string_body> req{http::string_to_verb(call.method), url->target, 11};
  req.set(http::field::host, url->host);
  req.set(http::field::connection, "close");
  for (const auto& [name, value] : call.headers) req.set(name, value);
  if (!call.body.empty()) {
    req.set(http::field::content_type, call.content_type);
    req.body() = call.body;
  }
  req.prepare_payload();
  ec = RunOp(ioc, [&](auto handler) { http::async_write(stream, req, handler); });
  if (ec) return fail("send", ec);

  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(call.max_body);
  ec = RunOp(ioc, [&](auto handler) { http::async_read(stream, buffer, parser, handler); });
  if (ec) return fail("read", ec);

  HttpResult out;
  const auto& res = parser.get();
  out.status = static_cast<int>(res.result_int());
  for (const auto& field : res) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.headers[name] = std::string(field.value());
  }
  out.body = res.body();
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  return out;
}

}  // namespace limbic::memory
