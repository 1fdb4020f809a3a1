#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <spdlog/sinks/null_sink.h>

#include "effectors/effector.h"
#include "effectors/policy.h"

// This file's own namespace: test programs compile in unity batches.
namespace policy_test {

using namespace limbic;
using namespace limbic::effectors;
using nlohmann::json;

TEST_CASE("backoff doubles, caps, and jitters within bounds", "[effectors]") {
  RetryPolicy p;
  p.base_backoff = 1000;
  p.max_backoff = 10000;
  p.jitter = 0.2;
  p.max_attempts = 4;
  CHECK(p.Backoff(1, 0.5) == 1000);
  CHECK(p.Backoff(2, 0.5) == 2000);
  CHECK(p.Backoff(3, 0.5) == 4000);
  CHECK(p.Backoff(9, 0.5) == 10000);
  CHECK(p.Backoff(1, 0.0) == 800);
  CHECK(p.Backoff(1, 0.999) == 1199);
  CHECK_FALSE(p.GiveUp(3));
  CHECK(p.GiveUp(4));
}

TEST_CASE("the rate limiter hands out tokens at its rate", "[effectors]") {
  RateLimiter r(/*rate=*/2, /*burst=*/2);
  CHECK(r.TryTake(0));
  CHECK(r.TryTake(0));
  CHECK_FALSE(r.TryTake(0));
  CHECK(r.NextAvailable(0) == 500);
  CHECK_FALSE(r.TryTake(499));
  CHECK(r.TryTake(500));
}

TEST_CASE("effector configs are checked, naming the key", "[effectors]") {
  boost::asio::io_context ioc;
  auto log = std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::null_sink_mt>());
  struct Case {
    json cfg;
    const char* needle;
  } cases[] = {
      {{{"kind", "carrier-pigeon"}}, "effectors.e.kind: unknown kind"},
      {{{"kind", "log"}, {"colour", 1}}, "effectors.e.colour: unknown key"},
      {{{"kind", "http"}}, "effectors.e.url: required"},
      {{{"kind", "http"}, {"url", "ftp://x"}},
       "effectors.e.url: must be an http:// or https:// URL"},
      {{{"kind", "http"}, {"url", "http://x"}, {"method", "GET"}}, "effectors.e.method"},
      {{{"kind", "http"}, {"url", "http://x"}, {"timeout", "soon"}}, "effectors.e.timeout"},
      {{{"kind", "exec"}, {"argv", {"relative/prog"}}}, "absolute path"},
      {{{"kind", "exec"}, {"argv", {"/nonexistent/prog"}}}, "not an executable"},
      {{{"kind", "file"}}, "effectors.e.path: required"},
      {{{"kind", "log"}, {"concurrency", 0}}, "concurrency"},
      {{{"kind", "http"}, {"url", "http://x:99999/"}}, "effectors.e.url: has a bad port"},
      // Templates are checked at load, naming the key inside the template.
      {{{"kind", "http"},
        {"url", "http://x"},
        {"body", {{"text", "{{payload.text}} by {{action.name}}"}}}},
       "effectors.e.body.text: unknown placeholder {{action.name}}"},
      {{{"kind", "http"}, {"url", "http://x"}, {"body", {{"list", json::array({"{{payload"})}}}},
       "effectors.e.body.list[]: unclosed {{"},
      {{{"kind", "http"}, {"url", "http://x"}, {"body", "{{payload.}}"}},
       "effectors.e.body: unknown placeholder {{payload.}}"},
      {{{"kind", "http"}, {"url", "http://x"}, {"headers", {{"X-Key", "{{action.key}}"}}}},
       "effectors.e.headers.X-Key: unknown placeholder {{action.key}}"},
      {{{"kind", "http"}, {"url", "https://x"}, {"ca_file", "/nonexistent.pem"}},
       "effectors.e.ca_file: cannot load"},
      {{{"kind", "http"}, {"url", "https://x"}, {"tls_verify", false}, {"ca_file", "/etc/hosts"}},
       "effectors.e.ca_file"},
      {{{"kind", "jetstream"}, {"stream", "S"}, {"subject", "a.b"}}, "effectors.e.nats: required"},
      {{{"kind", "jetstream"}, {"nats", {"nats://h"}}, {"stream", "S"}, {"subject", "a.b"}},
       "effectors.e.nats: \"nats://h\" is not a NATS server URL"},
      {{{"kind", "jetstream"}, {"nats", json::array()}, {"stream", "S"}, {"subject", "a.b"}},
       "effectors.e.nats: must be a nats://HOST:PORT string or a non-empty array"},
      {{{"kind", "jetstream"}, {"nats", "nats://h:4222"}, {"subject", "a.b"}},
       "effectors.e.stream: required"},
      {{{"kind", "jetstream"}, {"nats", "nats://h:4222"}, {"stream", "A.B"}, {"subject", "a.b"}},
       "effectors.e.stream: stream: \"A.B\" must be 1..128 characters"},
      {{{"kind", "jetstream"}, {"nats", "nats://h:4222"}, {"stream", "S"}},
       "effectors.e.subject: required"},
      {{{"kind", "jetstream"}, {"nats", "nats://h:4222"}, {"stream", "S"}, {"subject", "a.*"}},
       "effectors.e.subject: subject: \"a.*\" is not a subject"},
      {{{"kind", "jetstream"},
        {"nats", "nats://h:4222"},
        {"stream", "S"},
        {"subject", "a"},
        {"timeout", "1h"}},
       "effectors.e.timeout: must be at most 10m"},
      {{{"kind", "jetstream"},
        {"nats", "nats://h:4222"},
        {"stream", "S"},
        {"subject", "a"},
        {"body", "{{nope}}"}},
       "effectors.e.body: unknown placeholder {{nope}}"},
      {{{"kind", "jetstream"},
        {"nats", "nats://h:4222"},
        {"stream", "S"},
        {"subject", "a"},
        {"url", "x"}},
       "effectors.e.url: unknown key"},
  };
  for (const auto& c : cases) {
    INFO(c.cfg.dump());
    auto e = MakeEffector("e", c.cfg, ioc, log);
    REQUIRE_FALSE(e.ok());
    CHECK_THAT(e.status().message(), Catch::Contains(c.needle));
  }
  // Every placeholder the renderer knows passes the check.
  CHECK(MakeEffector("e",
                     {{"kind", "http"},
                      {"url", "http://[::1]:8080/in"},
                      {"headers", {{"X-Action", "{{action.type}}/{{action.id}}"}}},
                      {"body", {{"k", "{{action.idempotency_key}}"}, {"n", "{{action.attempt}}"},
                                {"t", "{{action.thread_id}}"}, {"all", "{{payload}}"}, {"a", json::array({"{{payload.a.0}}"})}}}},
                     ioc, log)
            .ok());
  auto limits = ParseLimits({{"kind", "http"}, {"concurrency", 2}, {"rate", 5}, {"max_attempts", 7}, {"backoff", "2s"}});
  REQUIRE(limits.ok());
  CHECK(limits->concurrency == 2);
  CHECK(limits->rate == 5);
  CHECK(limits->max_attempts == 7);
  CHECK(limits->backoff == 2000);
}

TEST_CASE("the file effector appends one JSON line per delivery", "[effectors]") {
  char tmpl[] = "/tmp/limbic-eff-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  boost::asio::io_context ioc;
  auto log = std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::null_sink_mt>());
  auto e = MakeEffector("f", {{"kind", "file"}, {"path", dir + "/out.jsonl"}}, ioc, log);
  REQUIRE(e.ok());
  Delivery d{"a-1", "f", "note", "k-1", "", {{"x", 1}}, 2};
  int done = 0;
  (*e)->Deliver(d, [&](Outcome o) {
    CHECK(o.kind == Outcome::Kind::kComplete);
    ++done;
  });
  CHECK(done == 0);  // never before Deliver returns
  ioc.run();
  CHECK(done == 1);
  std::ifstream in(dir + "/out.jsonl");
  std::string line;
  std::getline(in, line);
  json j = json::parse(line);
  CHECK(j["action_id"] == "a-1");
  CHECK(j["idempotency_key"] == "k-1");
  CHECK(j["attempt"] == 2);
  CHECK(j["payload"]["x"] == 1);
  std::filesystem::remove_all(dir);
}

}  // namespace policy_test
