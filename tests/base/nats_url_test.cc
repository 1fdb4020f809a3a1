// base/nats.h: what a NATS server URL may be, and how one is shown.
#include <catch2/catch.hpp>

#include "base/nats.h"

// This file's own namespace: test programs compile in unity batches.
namespace nats_url_test {

using limbic::nats::CheckServerUrl;
using limbic::nats::JoinServers;
using limbic::nats::RedactServerUrl;

TEST_CASE("a NATS server URL is nats://HOST:PORT, an IPv6 host in brackets", "[base]") {
  for (const char* ok :
       {"nats://127.0.0.1:4222", "127.0.0.1:4222", "nats://nats.local:1", "nats://[::1]:4222",
        "nats://u:p@h:4222", "nats://token@h:65535", "nats://[fe80::1%25eth0]:4222"}) {
    INFO(ok);
    CHECK(CheckServerUrl(ok).ok());
  }
  for (const char* bad : {"", "nats://", "nats://h", "nats://h:", "nats://:4222", "http://h:1",
                          "nats://h:1/x", "nats://[::1", "nats://[::1]", "nats://[::1]4222",
                          "nats://[]:4222", "nats://::1:4222", "nats://u:p@h", "nats://h:1:2"}) {
    INFO(bad);
    const auto s = CheckServerUrl(bad);
    CHECK(s.IsInvalidArgument());
    CHECK_THAT(s.message(), Catch::Contains("is not a NATS server URL (nats://HOST:PORT"));
  }
  CHECK_THAT(CheckServerUrl("nats://::1:4222").message(),
             Catch::Contains("an IPv6 host goes in brackets, nats://[::1]:4222"));
  for (const char* port : {"nats://h:0", "nats://h:65536", "nats://h:123456", "nats://h:4x"}) {
    INFO(port);
    CHECK_THAT(CheckServerUrl(port).message(), Catch::Contains("bad port"));
  }
}

TEST_CASE("a NATS server URL is shown without its password or token", "[base]") {
  CHECK(RedactServerUrl("nats://h:4222") == "nats://h:4222");
  CHECK(RedactServerUrl("nats://user:secret@h:4222") == "nats://user:***@h:4222");
  CHECK(RedactServerUrl("nats://s3cr3t@h:4222") == "nats://***@h:4222");
  CHECK(RedactServerUrl("user:secret@h:4222") == "user:***@h:4222");
  CHECK(JoinServers({"nats://a:1", "nats://u:pw@b:2"}) == "nats://a:1,nats://u:***@b:2");
}

}  // namespace nats_url_test
