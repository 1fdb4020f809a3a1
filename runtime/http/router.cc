// Routing: request targets decoded, routes matched, and a parsed request
// taken through the gate to its handler (http_server.h); no sockets here.
#include <boost/asio/ip/address.hpp>
#include <optional>

#include "runtime/http/server.h"

namespace limbic::runtime {

namespace {

// The segments of a path, empty ones dropped ("/v1//a/" is v1, a).
std::vector<std::string_view> Split(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 1;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

}  // namespace

void HttpRequest::SetTarget(std::string t) {
  target = std::move(t);
  std::string_view view = target;
  const size_t q = view.find('?');
  query_items.clear();
  query.clear();
  target_error = Status::OK();
  // A malformed escape is kept as sent in `path` (for messages and the 404
  // it may get) and refused by Dispatch once a route matched.
  auto path_decoded = PercentDecode(view.substr(0, q), false);
  path = path_decoded.ok() ? std::move(*path_decoded) : std::string(view.substr(0, q));
  if (!path_decoded.ok()) target_error = path_decoded.status().WithContext("path");
  if (q == std::string_view::npos) return;
  auto items = SplitQuery(view.substr(q + 1));
  if (items.ok())
    query_items = std::move(*items);
  else if (target_error.ok())
    target_error = items.status();
}

void Router::AddRoute(Route route) {
  if (queries_)
    for (const RouteQueries& q : *queries_)
      if (q.method == route.method && q.pattern == route.pattern) route.query = &q.params;
  route.segments.clear();
  for (std::string_view seg : Split(route.pattern)) route.segments.emplace_back(seg);
  routes_.push_back(std::move(route));
}

void Router::Add(const std::string& method, const std::string& pattern, Handler handler,
                 SignedBy signed_by) {
  AddRoute(Route{method, {}, std::move(handler), nullptr, std::move(signed_by), false, pattern});
}

void Router::AddSse(const std::string& method, const std::string& pattern, SseHandler handler) {
  AddRoute(Route{method, {}, nullptr, std::move(handler), nullptr, false, pattern});
}

void Router::AddPublic(const std::string& method, const std::string& pattern, Handler handler) {
  AddRoute(Route{method, {}, std::move(handler), nullptr, nullptr, true, pattern});
}

std::vector<std::string> Router::Routes() const {
  std::vector<std::string> out;
  for (const Route& r : routes_) out.push_back(r.method + " " + r.pattern);
  return out;
}

Router::Match Router::Find(HttpRequest& req) const {
  Match m;
  // Routed on the path as sent, each segment decoded once: "%2F" is a
  // character of its segment, not a separator.
  std::string_view raw = req.target;
  raw = raw.substr(0, raw.find('?'));
  std::vector<std::string> parts;
  for (std::string_view seg : Split(raw)) {
    auto decoded = PercentDecode(seg, false);
    parts.push_back(decoded.ok() ? std::move(*decoded) : std::string(seg));
  }
  for (const Route& r : routes_) {
    if (r.segments.size() != parts.size()) continue;
    std::map<std::string, std::string> params;
    bool ok = true;
    for (size_t i = 0; i < parts.size() && ok; ++i) {
      const std::string& seg = r.segments[i];
      if (seg.size() > 2 && seg.front() == '{' && seg.back() == '}')
        params[seg.substr(1, seg.size() - 2)] = parts[i];
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
    m.query = r.query;
    m.route = r.method + " " + r.pattern;
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

namespace {

// The target's parameters, before any handler sees them: its encoding,
// the route parameters, the query string (http_query.h). Fills req.query.
Status CheckTarget(HttpRequest& req, const Router::Match& m) {
  LIMBIC_RETURN_IF_ERROR(req.target_error);
  for (const auto& [name, value] : req.params) LIMBIC_RETURN_IF_ERROR(CheckPathParam(name, value));
  static const std::vector<QueryParam> kNone;
  return CheckQuery(req.query_items, m.query ? *m.query : kNone, m.route, &req.query);
}

}  // namespace

const SseHandler* Dispatch(const Router& router, const RequestGate& gate, HttpRequest& req,
                           const Responder& respond, spdlog::logger& log) {
  Router::Match m = router.Find(req);
  if (auto refused = RefuseRequest(req, m, gate)) {
    respond(std::move(*refused));
    return nullptr;
  }
  if (Status bad = CheckTarget(req, m); !bad.ok()) {
    respond(HttpResponse::Error(400, std::string(Status::CodeName(bad.code())), bad.message()));
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
