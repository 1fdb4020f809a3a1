// HttpRequest::SetTarget and runtime::Dispatch: the server's handling of one
// request after it is read, without a socket (the seam fuzz/http_fuzz.cc uses).
#include <catch2/catch.hpp>
#include <spdlog/sinks/null_sink.h>

#include "runtime/http_server.h"

using namespace limbic::runtime;

namespace {

const ExposurePolicy kLoopback{"127.0.0.1", {}, {}};
const std::string kNoToken;
const RequestGate kGate{kLoopback, kNoToken, false};

spdlog::logger& NullLog() {
  static spdlog::logger log("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  return log;
}

HttpRequest Request(std::string method, std::string target, std::string body = "",
                    std::string content_type = "application/json") {
  HttpRequest req;
  req.method = std::move(method);
  req.target = std::move(target);
  req.SetTarget(req.target);
  req.body = std::move(body);
  if (!req.body.empty()) req.headers["content-type"] = std::move(content_type);
  return req;
}

Router TestRouter() {
  Router r;
  r.Add("GET", "/v1/things/{id}", [](HttpRequest& req, Responder respond) {
    respond(HttpResponse::Json(200, {{"id", req.params["id"]}, {"q", req.query["q"]}}));
  });
  r.Add("POST", "/v1/throw", [](HttpRequest&, Responder) -> void { throw std::runtime_error("boom"); });
  r.AddSse("GET", "/v1/stream", [](HttpRequest&, std::shared_ptr<SseStream>) {});
  return r;
}

struct Answers {
  std::vector<HttpResponse> got;
  Responder responder() {
    return [this](HttpResponse r) { got.push_back(std::move(r)); };
  }
};

}  // namespace

TEST_CASE("SetTarget decodes the path and the query", "[http]") {
  HttpRequest req = Request("GET", "/v1/a%20b?x=1+2&y=%41&flag&=v&z");
  CHECK(req.path == "/v1/a b");
  CHECK(req.query == std::map<std::string, std::string>{{"x", "1 2"}, {"y", "A"}, {"flag", ""},
                                                        {"", "v"}, {"z", ""}});
  // A bad escape is kept as it is, never a crash.
  CHECK(Request("GET", "/%zz%4?%").path == "/%zz%4");
}

TEST_CASE("Dispatch routes, refuses, and turns a throwing handler into a 500", "[http]") {
  const Router router = TestRouter();
  Answers a;
  HttpRequest ok = Request("GET", "/v1/things/t%2D1?q=hi");
  CHECK(Dispatch(router, kGate, ok, a.responder(), NullLog()) == nullptr);
  REQUIRE(a.got.size() == 1);
  CHECK(a.got[0].status == 200);
  CHECK(a.got[0].body == R"({"id":"t-1","q":"hi"})");

  HttpRequest wrong_method = Request("DELETE", "/v1/things/x");
  (void)Dispatch(router, kGate, wrong_method, a.responder(), NullLog());
  CHECK(a.got[1].status == 405);
  CHECK(a.got[1].headers == std::vector<std::pair<std::string, std::string>>{{"Allow", "GET"}});

  HttpRequest nowhere = Request("GET", "/v1/nothing");
  (void)Dispatch(router, kGate, nowhere, a.responder(), NullLog());
  CHECK(a.got[2].status == 404);
  CHECK_THAT(a.got[2].body, Catch::Contains("no route for GET /v1/nothing"));

  HttpRequest text = Request("POST", "/v1/throw", "{}", "text/plain");
  (void)Dispatch(router, kGate, text, a.responder(), NullLog());
  CHECK(a.got[3].status == 415);

  HttpRequest throws = Request("POST", "/v1/throw", "{}");
  (void)Dispatch(router, kGate, throws, a.responder(), NullLog());
  CHECK(a.got[4].status == 500);
  CHECK_THAT(a.got[4].body, Catch::Contains("boom"));
  CHECK(a.got.size() == 5);
}

TEST_CASE("Dispatch hands an SSE route back unanswered", "[http]") {
  const Router router = TestRouter();
  Answers a;
  HttpRequest stream = Request("GET", "/v1/stream");
  CHECK(Dispatch(router, kGate, stream, a.responder(), NullLog()) != nullptr);
  CHECK(a.got.empty());
}

TEST_CASE("a public route needs no token, but the Host rule still holds", "[http]") {
  Router router;
  router.AddPublic("GET", "/ui/{file}", [](HttpRequest& req, Responder respond) {
    respond(HttpResponse::Json(200, {{"file", req.params["file"]}}));
  });
  router.Add("GET", "/v1/data", [](HttpRequest&, Responder respond) {
    respond(HttpResponse::Json(200, nlohmann::json::object()));
  });
  const std::string token = "s3cret";
  const RequestGate gate{kLoopback, token, false};
  Answers a;
  HttpRequest page = Request("GET", "/ui/app.js");
  (void)Dispatch(router, gate, page, a.responder(), NullLog());
  CHECK(a.got[0].status == 200);
  HttpRequest data = Request("GET", "/v1/data");
  (void)Dispatch(router, gate, data, a.responder(), NullLog());
  CHECK(a.got[1].status == 401);
  HttpRequest rebound = Request("GET", "/ui/app.js");
  rebound.headers["host"] = "attacker.example";
  (void)Dispatch(router, gate, rebound, a.responder(), NullLog());
  CHECK(a.got[2].status == 421);
  HttpRequest post = Request("POST", "/ui/app.js", "{}");
  (void)Dispatch(router, gate, post, a.responder(), NullLog());
  CHECK(a.got[3].status == 401);  // no public POST: the token rule answers first
}
