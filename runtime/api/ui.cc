// The inspector's files at /ui/ (runtime/api/ui_assets.h). They hold no data and
// need no token; the page asks for the token and sends it on every call.
// Each answer forbids framing, sniffing and anything not from this origin.
#include "runtime/api/api.h"
#include "runtime/config.h"
#include "runtime/api/ui_assets.h"

namespace limbic::runtime {

namespace {

// The page's scripts and styles are its own files: no inline script or
// style, nothing from elsewhere, no framing by another page.
constexpr const char* kUiPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'";

HttpResponse UiFileResponse(const HttpRequest& req, std::string_view path, std::string body,
                            std::string_view etag) {
  HttpResponse res;
  res.headers = {{"Content-Security-Policy", kUiPolicy},
                 {"X-Content-Type-Options", "nosniff"},
                 {"X-Frame-Options", "DENY"},
                 {"Referrer-Policy", "no-referrer"},
                 {"Cross-Origin-Resource-Policy", "same-origin"},
                 // Revalidated each time: a new binary's files show at once.
                 {"Cache-Control", "no-cache"},
                 {"ETag", std::string(etag)}};
  if (req.Header("if-none-match") == etag) {
    res.status = 304;
    res.content_type.clear();
    return res;
  }
  res.status = 200;
  res.content_type = std::string(UiContentType(path));
  res.body = std::move(body);
  return res;
}

}  // namespace

// Routed only when api.ui is on (Api::MakeRouter).
void Api::ServeUi(HttpRequest& req, Responder respond) {
  if (req.path == "/ui") {  // relative module paths need the slash
    HttpResponse res = HttpResponse::Error(308, "moved", "the inspector is at /ui/");
    res.headers.emplace_back("Location", "/ui/");
    return respond(std::move(res));
  }
  // "/ui/" -> index.html; "/ui/views/now.js" -> views/now.js.
  std::string_view path = req.path;
  path.remove_prefix(std::min<size_t>(path.size(), 4));
  const std::string& dir = svc_.config.ui_dir;
  if (!dir.empty()) {
    auto f = ReadUiFile(dir, path);
    if (!f.ok())
      return respond(f.status().IsNotFound() || f.status().IsInvalidArgument()
                         ? HttpResponse::Error(404, "not_found", "no inspector file " + req.path)
                         : ErrorResponse(f.status()));
    return respond(
        UiFileResponse(req, path.empty() ? "index.html" : path, std::move(f->body), f->etag));
  }
  const UiFile* f = FindUiFile(path);
  if (!f) return respond(HttpResponse::Error(404, "not_found", "no inspector file " + req.path));
  respond(UiFileResponse(req, f->path, std::string(f->body), f->etag));
}

}  // namespace limbic::runtime
