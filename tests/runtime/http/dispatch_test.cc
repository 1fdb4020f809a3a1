// HttpRequest::SetTarget and runtime::Dispatch: the server's handling of one
// request after it is read, without a socket (the seam fuzz/http_fuzz.cc uses).
#include <catch2/catch.hpp>
#include <spdlog/sinks/null_sink.h>

#include "runtime/http/server.h"

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

// The test router's query parameters, as the API declares its own.
const std::vector<RouteQueries> kQueries = {
    {"GET", "/v1/things/{id}", {{"q", QueryKind::kText}, {"n", QueryKind::kCount}, {"tag", QueryKind::kNames}}},
};

Router TestRouter() {
  Router r(&kQueries);
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
  HttpRequest req = Request("GET", "/v1/a%20b?x=1+2&y=%41&flag&=v&z&x=3");
  CHECK(req.path == "/v1/a b");
  CHECK(req.target_error.ok());
  using Items = std::vector<std::pair<std::string, std::string>>;
  CHECK(req.query_items ==
        Items{{"x", "1 2"}, {"y", "A"}, {"flag", ""}, {"", "v"}, {"z", ""}, {"x", "3"}});
  CHECK(req.query.empty());  // filled by Dispatch, once checked
  // A bad escape is kept as it is in the path, never a crash, and noted.
  HttpRequest bad = Request("GET", "/%zz%4?%");
  CHECK(bad.path == "/%zz%4");
  CHECK_THAT(bad.target_error.message(), Catch::Contains("path: malformed percent-encoding at byte 1"));
  CHECK_THAT(Request("GET", "/a?x=%f").target_error.message(),
             Catch::Contains("query x: malformed percent-encoding"));
}

TEST_CASE("query values are checked by their kind's rule", "[http]") {
  auto check = [](QueryKind kind, std::string_view value) {
    limbic::Status s = CheckQueryValue("p", kind, value);
    return s.ok() ? std::string("ok") : s.message();
  };
  CHECK(check(QueryKind::kName, "alice") == "ok");
  CHECK(check(QueryKind::kName, "\xff") == "query p: not valid UTF-8");
  const std::string name = "query p: must be a name (1-256 bytes of UTF-8, no control or "
                           "bidi-control characters); ";
  CHECK(check(QueryKind::kName, "a\x01") == name + "U+0001 (a control character) at byte 1");
  CHECK(check(QueryKind::kName, "a\xc2\x85") == name + "U+0085 (a control character) at byte 1");
  CHECK(check(QueryKind::kName, "\xe2\x80\xae") == name + "U+202E (a bidi control) at byte 0");
  CHECK(check(QueryKind::kName, std::string(257, 'a')) ==
        "query p: 257 bytes, more than the 256 a name may have");
  CHECK(check(QueryKind::kText, "two\nlines\tand \xc3\xa9") == "ok");
  CHECK_THAT(check(QueryKind::kText, "a\xe2\x81\xa6"),
             Catch::StartsWith("query p: must be text") &&
                 Catch::EndsWith("; U+2066 (a bidi control) at byte 1"));
  CHECK(check(QueryKind::kText, std::string(10240, 'a')) ==
        "query p: 10240 bytes, more than the 2048 text may have");
  CHECK(check(QueryKind::kNames, "a,b,,c") == "ok");
  CHECK(check(QueryKind::kNames, "a,b\x7f") == name + "U+007F (a control character) at byte 1");
  CHECK(check(QueryKind::kCount, "12") == "ok");
  CHECK(check(QueryKind::kCount, "-1") == "query p: must be a non-negative integer, got \"-1\"");
  CHECK(check(QueryKind::kCount, std::string(21, '9')).find("more than the 20") != std::string::npos);
  CHECK(check(QueryKind::kDuration, "5m") == "ok");
  CHECK(check(QueryKind::kDuration, "5 parsecs").rfind("query p: ", 0) == 0);
  CHECK(check(QueryKind::kTime, "2026-11-22T14:05:09Z") == "ok");
  CHECK(check(QueryKind::kTime, "yesterday").rfind("query p: ", 0) == 0);
  CHECK(check(QueryKind::kDate, "2026-02-29").rfind("query p: ", 0) == 0);
  CHECK(check(QueryKind::kBool, "true") == "ok");
  CHECK(check(QueryKind::kBool, "yes") == "query p: must be true or false, got \"yes\"");
}

TEST_CASE("Dispatch answers 400 naming the parameter before a handler sees it", "[http]") {
  const Router router = TestRouter();
  struct Case {
    std::string target, message;
  };
  const std::vector<Case> cases = {
      {"/v1/things/t?q=%ff", "query q: not valid UTF-8"},
      {"/v1/things/%ff", "path id: not valid UTF-8"},
      {"/v1/things/a%01b", "path id: must be a name"},
      {"/v1/things/a%01b", "; U+0001 (a control character) at byte 1"},
      {"/v1/things/t?q=" + std::string(10240, 'a'), "query q: 10240 bytes, more than the 2048"},
      {"/v1/things/t?n=1&n=2", "query n: given more than once"},
      {"/v1/things/t?n=x", "query n: must be a non-negative integer, got \"x\""},
      {"/v1/things/t?nope=1", "query nope: unknown parameter; GET /v1/things/{id} takes q, n, tag"},
      {"/v1/things/t?=1", "query: a parameter without a name"},
      {"/v1/things/t?q=%zz", "query q: malformed percent-encoding at byte 0"},
      {"/v1/things/t%4", "path: malformed percent-encoding"},
  };
  for (const Case& c : cases) {
    Answers a;
    HttpRequest req = Request("GET", c.target);
    (void)Dispatch(router, kGate, req, a.responder(), NullLog());
    INFO(c.target.substr(0, 80));
    REQUIRE(a.got.size() == 1);
    CHECK(a.got[0].status == 400);
    const nlohmann::json error = nlohmann::json::parse(a.got[0].body)["error"];
    CHECK(error["code"] == "invalid_argument");
    CHECK_THAT(error["message"].get<std::string>(), Catch::Contains(c.message));
  }
  std::string many = "/v1/things/t?";
  for (int i = 0; i < 33; ++i) many += "tag=a&";
  Answers a;
  HttpRequest req = Request("GET", many);
  (void)Dispatch(router, kGate, req, a.responder(), NullLog());
  CHECK(a.got.at(0).status == 400);
  CHECK_THAT(a.got[0].body, Catch::Contains("query: 33 parameters, more than 32"));
  // A list may repeat: its values are joined; an empty value is absent.
  Answers b;
  HttpRequest list = Request("GET", "/v1/things/t%2Fu?tag=a&tag=b,c&q=&n=");
  (void)Dispatch(router, kGate, list, b.responder(), NullLog());
  REQUIRE(b.got.size() == 1);
  CHECK(b.got[0].status == 200);
  CHECK(list.query.at("tag") == "a,b,c");
  CHECK(list.query.count("n") == 0);
  CHECK(b.got[0].body == R"({"id":"t/u","q":""})");
  CHECK(list.params.at("id") == "t/u");  // an escaped '/' stays in its segment
  // A route without a declared query takes none.
  Answers c;
  HttpRequest stray = Request("POST", "/v1/throw?x=1", "{}");
  (void)Dispatch(router, kGate, stray, c.responder(), NullLog());
  CHECK(c.got.at(0).status == 400);
  CHECK_THAT(c.got[0].body, Catch::Contains("query x: unknown parameter; POST /v1/throw takes none"));
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
