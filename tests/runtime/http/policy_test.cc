#include "runtime/http/policy.h"

#include <catch2/catch.hpp>

using limbic::runtime::CheckHost;
using limbic::runtime::CheckOrigin;
using limbic::runtime::ClientBook;
using limbic::runtime::ExposurePolicy;
using limbic::runtime::HostName;
using limbic::runtime::UnsupportedContentCoding;
using limbic::runtime::UnsupportedTransferCoding;

TEST_CASE("host names lose their port, brackets and trailing dot", "[http_policy]") {
  CHECK(HostName("127.0.0.1:7077") == "127.0.0.1");
  CHECK(HostName("[::1]:7077") == "::1");
  CHECK(HostName("[::1]") == "::1");
  CHECK(HostName("LocalHost.:80") == "localhost");
  CHECK(HostName(" example.org ") == "example.org");
}

TEST_CASE("Host must be loopback, the API's address or allow-listed", "[http_policy]") {
  ExposurePolicy p{"127.0.0.1", {}, {}};
  for (const char* ok : {"localhost", "localhost:7077", "127.0.0.1:1", "127.8.9.10", "[::1]:7077",
                         "LOCALHOST", ""})
    CHECK(CheckHost(ok, p).empty());
  for (const char* bad : {"attacker.example", "attacker.example:7077", "localhost.attacker.example",
                          "127.0.0.1.nip.io", "10.0.0.1", "[::2]"}) {
    INFO(bad);
    CHECK_FALSE(CheckHost(bad, p).empty());
  }
  CHECK(CheckHost("attacker.example", p).find("api.allowed_hosts") != std::string::npos);
  p.allowed_hosts = {"Agent.Example"};
  CHECK(CheckHost("agent.example:443", p).empty());
  CHECK_FALSE(CheckHost("other.example", p).empty());
  p.api_address = "192.168.1.5";
  CHECK(CheckHost("192.168.1.5:7077", p).empty());
  p.allowed_hosts = {"*"};
  CHECK(CheckHost("anything.example", p).empty());
}

TEST_CASE("an Origin must be the Host's own or allow-listed", "[http_policy]") {
  ExposurePolicy p{"127.0.0.1", {}, {}};
  CHECK(CheckOrigin("", "127.0.0.1:7077", p).empty());
  CHECK(CheckOrigin("http://127.0.0.1:7077", "127.0.0.1:7077", p).empty());
  CHECK(CheckOrigin("http://LOCALHOST:7077", "localhost:7077", p).empty());
  CHECK(CheckOrigin("http://localhost", "localhost:80", p).empty());
  CHECK(CheckOrigin("https://example.org", "example.org", p).empty());  // TLS in front
  CHECK_FALSE(CheckOrigin("https://example.org", "example.org:80", p).empty());
  CHECK_FALSE(CheckOrigin("http://attacker.example", "127.0.0.1:7077", p).empty());
  CHECK_FALSE(CheckOrigin("http://127.0.0.1:8080", "127.0.0.1:7077", p).empty());
  CHECK_FALSE(CheckOrigin("null", "127.0.0.1:7077", p).empty());
  CHECK_FALSE(CheckOrigin("http://127.0.0.1:7077", "", p).empty());
  p.allowed_origins = {"http://localhost:3000"};
  CHECK(CheckOrigin("http://localhost:3000", "127.0.0.1:7077", p).empty());
  CHECK_FALSE(CheckOrigin("http://localhost:3001", "127.0.0.1:7077", p).empty());
}

TEST_CASE("only plain or chunked transfer and no content coding", "[http_policy]") {
  CHECK(UnsupportedTransferCoding("").empty());
  CHECK(UnsupportedTransferCoding("chunked").empty());
  CHECK(UnsupportedTransferCoding(" Chunked ").empty());
  CHECK(UnsupportedTransferCoding("gzip, chunked") == "gzip");
  CHECK(UnsupportedTransferCoding("chunked, deflate") == "deflate");
  CHECK(UnsupportedTransferCoding("identity") == "identity");
  CHECK(UnsupportedContentCoding("").empty());
  CHECK(UnsupportedContentCoding("identity").empty());
  CHECK(UnsupportedContentCoding("gzip") == "gzip");
}

TEST_CASE("the book counts connections and streams per client", "[http_policy]") {
  ClientBook book({/*max_connections=*/4, /*per_client=*/2, /*streams=*/2, /*streams_per_client=*/1});
  using V = ClientBook::Verdict;
  CHECK(book.CanConnect("a") == V::kAdmit);
  book.Connected("a");
  book.Connected("a");
  CHECK(book.CanConnect("a") == V::kClientFull);
  CHECK(book.CanConnect("b") == V::kAdmit);
  book.Connected("b");
  book.Connected("c");
  CHECK(book.CanConnect("d") == V::kServerFull);
  CHECK(book.CanStream("a") == V::kAdmit);
  book.StreamOpened("a");
  CHECK(book.CanStream("a") == V::kClientFull);
  book.StreamOpened("b");
  CHECK(book.CanStream("c") == V::kServerFull);
  book.StreamClosed("a");
  book.Disconnected("a");
  CHECK(book.connections("a") == 1);
  CHECK(book.CanConnect("d") == V::kAdmit);
  book.Disconnected("a");
  book.Disconnected("a");  // once too often: ignored
  CHECK(book.connections() == 2);
  CHECK(book.streams() == 1);
}

TEST_CASE("the bearer token: scheme in any case, token exact", "[http_policy]") {
  using limbic::runtime::HasBearerToken;
  using limbic::runtime::IsJsonType;
  CHECK(HasBearerToken("Bearer s3cret", "s3cret"));
  CHECK(HasBearerToken("bEaReR s3cret", "s3cret"));
  CHECK_FALSE(HasBearerToken("Bearer s3cre", "s3cret"));
  CHECK_FALSE(HasBearerToken("Basic s3cret", "s3cret"));
  CHECK_FALSE(HasBearerToken("Bearer ", ""));
  CHECK(IsJsonType("application/json; charset=utf-8"));
  CHECK(IsJsonType("Application/JSON"));
  CHECK_FALSE(IsJsonType("text/plain"));
}
