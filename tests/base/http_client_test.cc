#include "base/http_client.h"

#include <catch2/catch.hpp>

#include "tests/http_server.h"

// This file's own namespace: test programs compile in unity batches.
namespace http_client_test {

using namespace limbic;
using limbic::testing::ClosedPort;
using limbic::testing::HttpAnswer;
using limbic::testing::TestRequest;
using limbic::testing::TestHttpServer;

namespace {
HttpCall Call(std::string url, std::string method = "GET") {
  HttpCall call;
  call.method = std::move(method);
  call.url = std::move(url);
  return call;
}
}  // namespace

TEST_CASE("ParseUrl splits http and https URLs", "[base]") {
  auto u = ParseUrl("http://example.com");
  REQUIRE(u.ok());
  CHECK_FALSE(u->tls);
  CHECK(u->host == "example.com");
  CHECK(u->port == "80");
  CHECK(u->target == "/");

  u = ParseUrl("https://api.example.com:8443/v1/embeddings?x=1#frag");
  REQUIRE(u.ok());
  CHECK(u->tls);
  CHECK(u->host == "api.example.com");
  CHECK(u->port == "8443");
  CHECK(u->target == "/v1/embeddings?x=1");

  u = ParseUrl("https://h?q=1");
  REQUIRE(u.ok());
  CHECK(u->port == "443");
  CHECK(u->target == "/?q=1");

  u = ParseUrl("http://[::1]:9/x");
  REQUIRE(u.ok());
  CHECK(u->host == "::1");
  CHECK(u->port == "9");
  CHECK(u->target == "/x");
}

TEST_CASE("ParseUrl rejects what it cannot fetch", "[base]") {
  for (const char* bad : {"", "example.com", "ftp://example.com/", "http://", "http:///x", "http://:80/",
                          "http://h:0/", "http://h:65536/", "http://h:8a/", "http://h:/", "http://[::1",
                          "http://[::1]x/", "http://[nonsense]/", "http://user:pw@h/", "http://h /x"}) {
    INFO(bad);
    auto u = ParseUrl(bad);
    CHECK(u.status().IsInvalidArgument());
  }
}

TEST_CASE("Fetch sends the request and returns status lower-cased headers and body", "[base]") {
  TestHttpServer server([](const TestRequest&) {
    return HttpAnswer(201, "{\"ok\":true}", "Content-Type: application/json\r\nX-Thing: Value\r\n");
  });
  HttpCall call;
  call.method = "POST";
  call.url = server.url() + "/v1/things?a=b";
  call.body = "{\"n\":1}";
  call.headers = {{"Authorization", "Bearer secret"}};
  auto res = Fetch(call);
  REQUIRE(res.ok());
  CHECK(res->status == 201);
  CHECK(res->body == "{\"ok\":true}");
  CHECK(res->headers["x-thing"] == "Value");
  CHECK(res->headers["content-type"] == "application/json");

  auto seen = server.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].method == "POST");
  CHECK(seen[0].target == "/v1/things?a=b");
  CHECK(seen[0].body == "{\"n\":1}");
  CHECK(seen[0].headers["host"] == "127.0.0.1:" + std::to_string(server.port()));
  CHECK(seen[0].headers["content-type"] == "application/json");
  CHECK(seen[0].headers["authorization"] == "Bearer secret");
}

TEST_CASE("Fetch returns any HTTP status as a success", "[base]") {
  TestHttpServer server([](const TestRequest&) { return HttpAnswer(503, "busy", ""); });
  auto res = Fetch(Call(server.url() + "/"));
  REQUIRE(res.ok());
  CHECK(res->status == 503);
  CHECK(res->body == "busy");
  CHECK(server.requests().at(0).method == "GET");
}

TEST_CASE("Fetch errors name the method and URL and step", "[base]") {
  SECTION("connection refused") {
    const std::string url = "http://127.0.0.1:" + std::to_string(ClosedPort()) + "/v1/x";
    HttpCall call = Call(url, "POST");
    call.body = "{}";
    auto res = Fetch(call);
    REQUIRE(res.status().IsUnavailable());
    CHECK_THAT(res.status().message(), Catch::StartsWith("POST " + url + ": connect: "));
  }
  SECTION("the deadline covers a server that never answers") {
    TestHttpServer server([](const TestRequest&) { return std::nullopt; });
    HttpCall call = Call(server.url() + "/slow");
    call.timeout_ms = 300;
    auto res = Fetch(call);
    REQUIRE(res.status().IsUnavailable());
    CHECK_THAT(res.status().message(), Catch::Contains("read: timed out after 300 ms"));
    CHECK(server.requests().size() == 1);
  }
  SECTION("an answer longer than max_body") {
    TestHttpServer server([](const TestRequest&) { return HttpAnswer(200, std::string(1000, 'x')); });
    HttpCall call = Call(server.url());
    call.max_body = 100;
    auto res = Fetch(call);
    REQUIRE(res.status().IsUnavailable());
    CHECK_THAT(res.status().message(), Catch::Contains("read: the answer is longer than 100 bytes"));
  }
  SECTION("a chunked answer longer than max_body") {
    TestHttpServer server([](const TestRequest&) {
      std::string chunk(500, 'x');
      return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1f4\r\n" + chunk + "\r\n1f4\r\n" + chunk +
             "\r\n0\r\n\r\n";
    });
    HttpCall call = Call(server.url());
    call.max_body = 600;
    auto res = Fetch(call);
    REQUIRE(res.status().IsUnavailable());
    CHECK_THAT(res.status().message(), Catch::Contains("longer than 600 bytes"));
    call.max_body = 1000;
    res = Fetch(call);
    REQUIRE(res.ok());
    CHECK(res->body.size() == 1000);
  }
  SECTION("https spoken to an http server fails in the handshake") {
    TestHttpServer server([](const TestRequest&) { return HttpAnswer(200, ""); });
    const std::string url = "https://127.0.0.1:" + std::to_string(server.port()) + "/";
    auto res = Fetch(Call(url));
    REQUIRE(res.status().IsUnavailable());
    CHECK_THAT(res.status().message(), Catch::StartsWith("GET " + url + ": tls handshake: "));
  }
  SECTION("a bad URL or method is the caller's mistake") {
    CHECK(Fetch(Call("nope")).status().IsInvalidArgument());
    CHECK(Fetch(Call("http://127.0.0.1/", "FROB")).status().IsInvalidArgument());
    HttpCall call = Call("http://127.0.0.1/");
    call.headers = {{"X", "a\r\nB: c"}};
    CHECK(Fetch(call).status().IsInvalidArgument());
  }
}

TEST_CASE("OpenAiEndpoint completes a base URL, with or without /v1, once", "[base]") {
  CHECK(OpenAiEndpoint("http://h:11434", "/embeddings") == "http://h:11434/v1/embeddings");
  CHECK(OpenAiEndpoint("http://h:11434/", "/embeddings") == "http://h:11434/v1/embeddings");
  CHECK(OpenAiEndpoint("https://api.openai.com/v1", "/embeddings") ==
        "https://api.openai.com/v1/embeddings");
  CHECK(OpenAiEndpoint("https://api.openai.com/v1/", "/chat/completions") ==
        "https://api.openai.com/v1/chat/completions");
  CHECK(OpenAiEndpoint("http://h/v1/chat/completions", "/chat/completions") ==
        "http://h/v1/chat/completions");
  CHECK(OpenAiEndpoint("http://h/openai/embeddings//", "/embeddings") == "http://h/openai/embeddings");
  CHECK(OpenAiEndpoint("http://h/api", "/embeddings") == "http://h/api/v1/embeddings");
}

}  // namespace http_client_test
