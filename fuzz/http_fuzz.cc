// Fuzz target `http`: HTTP requests through the API's handlers, in process.
//
// The input is raw HTTP/1.1 (up to 8 requests one after another, as a
// keep-alive client sends them). Each is parsed by Beast's request parser
// with the server's body limit, turned into the HttpRequest the server
// builds (SetTarget, header names lower-cased), and handed to
// runtime::Dispatch on a real runtime's io thread (fuzz/in_process_api.h):
// the routes, handlers, commands and engine the binary runs, without a
// socket. Bytes the parser refuses are the server's 400/413, not the
// handlers', and end the input.
//
// Properties: no crash; every request is answered within 30 s; the answer
// is a JSON document (or an SSE stream); errors are {"error": {"code",
// "message"}} with a 4xx or 5xx status; no 500 (a handler threw: bad input
// must be a 4xx, issue 22 item 2; a query string too, issue 38 item 2)
// unless $LIMBIC_FUZZ_ALLOW_500 is set.
//
// Left out, so a run stays on the API: `wait` (long-poll: would make a
// request last up to 60 s) and POST /v1/memory/ingest (reads any path the
// request names: issue 22 item 5 bounds it to configured roots).
// The runtime is restarted on a fresh state dir every 5,000 requests.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <cstdlib>

#include "fuzz/fuzz_util.h"
#include "fuzz/in_process_api.h"
#include "base/json.h"

using namespace limbic;
namespace http = boost::beast::http;

namespace {

constexpr int kMaxRequests = 8;
constexpr uint64_t kRestartAfterCalls = 5000;
constexpr size_t kBodyLimit = 1 << 20;  // HttpServerOptions::body_limit's default
constexpr uint32_t kHeaderLimit = 64 << 10;

bool Allow500() {
  static const bool allow = std::getenv("LIMBIC_FUZZ_ALLOW_500") != nullptr;
  return allow;
}

// $LIMBIC_FUZZ_VERBOSE: print each request and its answer (to read what a
// corpus or a crash does).
bool Verbose() {
  static const bool verbose = std::getenv("LIMBIC_FUZZ_VERBOSE") != nullptr;
  return verbose;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void CheckAnswer(const runtime::HttpRequest& req, const fuzz::InProcessApi::Answer& a) {
  const std::string what = req.method + " " + req.target;
  FUZZ_CHECK(a.status != 0, what + ": no answer within " +
                                std::to_string(fuzz::InProcessApi::kAnswerTimeoutMs) + " ms");
  FUZZ_CHECK(a.status >= 200 && a.status < 600, what + ": status " + std::to_string(a.status));
  if (a.content_type != "application/json") {
    FUZZ_CHECK(a.status < 400, what + ": an error that is not JSON: " + a.content_type);
    return;  // an SSE stream, /metrics
  }
  std::optional<nlohmann::json> body = ParseJson(a.body);
  FUZZ_CHECK(body.has_value(), what + ": answer is not JSON: " + a.body.substr(0, 200));
  if (a.status >= 400) {
    FUZZ_CHECK(body->is_object() && (*body)["error"].is_object() &&
                   (*body)["error"]["code"].is_string() && (*body)["error"]["message"].is_string(),
               what + ": error without {code, message}: " + a.body.substr(0, 200));
    FUZZ_CHECK(a.status != 500 || Allow500(), what + ": 500: " + a.body.substr(0, 400));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InProcessApi& api = fuzz::InProcessApi::Get();
  if (api.calls() >= kRestartAfterCalls) api.Restart();
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (int i = 0; i < kMaxRequests && !rest.empty(); ++i) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kBodyLimit);
    // Past the server's 8 KiB, so that a long query string (10 KB in
    // fuzz/regressions/http/query-10k-values) reaches the parameter checks.
    parser.header_limit(kHeaderLimit);
    parser.eager(true);
    boost::beast::error_code ec;
    size_t used = parser.put(boost::asio::buffer(rest.data(), rest.size()), ec);
    rest.remove_prefix(used);
    if (ec == http::error::need_more) parser.put_eof(ec);
    if (ec || !parser.is_done()) return 0;  // the server's 400 / 413: not the handlers'

    auto msg = parser.release();
    runtime::HttpRequest req;
    req.method = std::string(msg.method_string());
    req.target = std::string(msg.target());
    req.SetTarget(req.target);
    for (const auto& field : msg)
      req.headers[Lower(std::string(field.name_string()))] = std::string(field.value());
    req.body = std::move(msg.body());
    req.remote = "127.0.0.1";
    fuzz::DropWait(req);
    if (req.path == "/v1/memory/ingest") continue;
    fuzz::InProcessApi::Answer answer = api.Call(req);
    if (Verbose())
      std::fprintf(stderr, "%s %s -> %d %.200s\n", req.method.c_str(), req.target.c_str(),
                   answer.status, answer.body.c_str());
    CheckAnswer(req, answer);
  }
  return 0;
}
