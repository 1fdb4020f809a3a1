// Routing: request targets decoded, routes matched, and a parsed request
// taken through the gate to its handler (http_server.h); no sockets here.
#include <boost/asio/ip/address.hpp>
#include <optional>

#include "runtime/http_server.h"

namespace limbic::runtime {

namespace {

std::string PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else if (plus_is_space && s[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 1;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) parts.emplace_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

}  // namespace

void HttpRequest::SetTarget(std::string t) {
  target = std::move(t);
  std::string_view view = target;
  size_t q = view.find('?');
  path = PercentDecode(view.substr(0, q), false);
  query.clear();
  if (q == std::string_view::npos) return;
  std::string_view qs = view.substr(q + 1);
  size_t start = 0;
  while (start <= qs.size()) {
    size_t amp = qs.find('&', start);
    if (amp == std::string_view::npos) amp = qs.size();
    std::string_view kv = qs.substr(start, amp - start);
    size_t eq = kv.find('=');
    if (!kv.empty())
      query[PercentDecode(kv.substr(0, eq), true)] =
          eq == std::string_view::npos ? "" : PercentDecode(kv.substr(eq + 1), true);
    start = amp + 1;
  }
}

void Router::Add(const std::string& method, const std::string& pattern, Handler handler,
                 SignedBy signed_by) {
  routes_.push_back(Route{method, Split(pattern), std::move(handler), nullptr, std::move(signed_by)});
}

void Router::AddSse(const std::string& method, const std::string& pattern, SseHandler handler) {
  routes_.push_back(Route{method, Split(pattern), nullptr, std::move(handler), nullptr});
}

void Router::AddPublic(const std::string& method, const std::string& pattern, Handler handler) {
  routes_.push_back(Route{method, Split(pattern), std::move(handler), nullptr, nullptr, true});
}

Router::Match Router::Find(HttpRequest& req) const {
  Match m;
  std::vector<std::string> parts = Split(req.path);
  for (const Route& r : routes_) {
    if (r.segments.size() != parts.size()) continue;
    std::map<std::string, std::string> params;
    bool ok = true;
    for (size_t i = 0; i < parts.size() && ok; ++i) {
      const std::string& seg = r.segments[i];
      if (seg.size() > 2 && seg.front() == '{' && seg.back() == '}')
        params[seg.substr(1, seg.size() - 2)] = PercentDecode(parts[i], false);
      else
        ok = seg == parts[i];
    }
    if (!ok) continue;
    if (r.method != req.method) {
      if (m.allow.find(r.method) == std::string::npos)
        m.allow += (m.allow.empty() ? "" : ", ") + r.method;
      continue;
    }
    req.params = std::move(params);
    m.handler = r.handler ? &r.handler : nullptr;
    m.sse = r.sse ? &r.sse : nullptr;
    m.signed_by = r.signed_by ? &r.signed_by : nullptr;
    m.open = r.open;
    return m;
  }
  return m;
}

bool IsLoopbackAddress(const std::string& address) {
  if (address == "localhost" || address == "::1") return true;
  boost::system::error_code ec;
  auto a = boost::asio::ip::make_address(address, ec);
  return !ec && a.is_loopback();
}

std::optional<HttpResponse> RefuseRequest(const HttpRequest& req, const Router::Match& m,
                                          const RequestGate& gate) {
  auto closing = [](HttpResponse r) {
    r.close = true;
    return r;
  };
  std::string coding = UnsupportedTransferCoding(req.Header("transfer-encoding"));
  if (!coding.empty())
    return closing(HttpResponse::Error(501, "not_implemented",
                                       "Transfer-Encoding \"" + coding +
                                           "\" is not supported: send the body plain or chunked"));
  const bool self_signed = m.signed_by && *m.signed_by && (*m.signed_by)(req);
  if (!self_signed) {
    std::string bad_host = CheckHost(req.Header("host"), gate.exposure);
    if (!bad_host.empty()) return closing(HttpResponse::Error(421, "misdirected_request", bad_host));
    if (!gate.bearer_token.empty() && !m.open &&
        !HasBearerToken(req.Header("authorization"), gate.bearer_token))
      return HttpResponse::Error(401, "unauthorized", "missing or wrong bearer token");
  }
  if (gate.draining)
    return closing(HttpResponse::Error(503, "unavailable", "limbic is shutting down"));
  if (!m.handler && !m.sse) {
    if (m.allow.empty())
      return HttpResponse::Error(404, "not_found", "no route for " + req.method + " " + req.path);
    HttpResponse r = HttpResponse::Error(405, "method_not_allowed",
                                         req.method + " is not allowed on " + req.path);
    r.headers.emplace_back("Allow", m.allow);
    return r;
  }
  std::string encoded = UnsupportedContentCoding(req.Header("content-encoding"));
  if (!encoded.empty())
    return HttpResponse::Error(415, "unsupported_media_type",
                               "Content-Encoding \"" + encoded +
                                   "\" is not supported: send the body uncompressed");
  // A state-changing request names its body's type, if it says one at
  // all, as JSON: "text/plain" is what a browser sends cross-origin
  // without asking first.
  const std::string type = req.Header("content-type");
  const bool typed = !type.empty() || req.headers.count("content-type");
  if ((!req.body.empty() || (typed && IsStateChanging(req.method))) && !IsJsonType(type))
    return HttpResponse::Error(415, "unsupported_media_type",
                               "the body must be JSON (Content-Type: application/json), got \"" +
                                   type + "\"");
  if (IsStateChanging(req.method) && !self_signed) {
    std::string bad_origin = CheckOrigin(req.Header("origin"), req.Header("host"), gate.exposure);
    if (!bad_origin.empty()) return HttpResponse::Error(403, "forbidden_origin", bad_origin);
  }
  return std::nullopt;
}

const SseHandler* Dispatch(const Router& router, const RequestGate& gate, HttpRequest& req,
                           const Responder& respond, spdlog::logger& log) {
  Router::Match m = router.Find(req);
  if (auto refused = RefuseRequest(req, m, gate)) {
    respond(std::move(*refused));
    return nullptr;
  }
  if (m.sse) return m.sse;
  try {
    (*m.handler)(req, respond);
  } catch (const std::exception& e) {
    log.error("http: {} {} handler threw: {}", req.method, req.path, e.what());
    respond(HttpResponse::Error(500, "internal", "the handler failed: " + std::string(e.what())));
  }
  return nullptr;
}

}  // namespace limbic::runtime
