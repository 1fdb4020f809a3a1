// Outbox delivery through the real binary: the http effector's protocol
// (Host, redirects, https), per-effector limits, and cancelling deliveries
// at shutdown.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>

#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace delivery_test {

using nlohmann::json;
using namespace limbic::testing;
using Steady = std::chrono::steady_clock;

namespace {

std::string Url(const ScriptedServer& s, const std::string& scheme = "http") {
  return scheme + "://127.0.0.1:" + std::to_string(s.port()) + "/in";
}

std::string Enqueue(uint16_t port, const std::string& effector, json payload = json::object(),
                    const std::string& key = "") {
  json body = {{"effector", effector}, {"type", "notify"}, {"payload", std::move(payload)}};
  if (!key.empty()) body["idempotency_key"] = key;
  auto r = HttpJson(port, "POST", "/v1/actions", body);
  INFO(r.body);
  REQUIRE(r.status == 201);
  return r.Json()["id"].get<std::string>();
}

json WaitStatus(uint16_t port, const std::string& id, const std::string& status) {
  return WaitJson(port, "/v1/actions/" + id, [&](const json& j) { return j["status"] == status; });
}

ScriptedServer::Options Delayed(int ms) {
  ScriptedServer::Options o;
  o.delay_ms = ms;
  return o;
}

ScriptedServer::Options Redirecting(const std::string& location) {
  ScriptedServer::Options o;
  o.location = location;
  return o;
}

ScriptedServer::Options Tls(const std::string& cert, const std::string& key) {
  ScriptedServer::Options o;
  o.tls_cert = cert;
  o.tls_key = key;
  return o;
}

}  // namespace

TEST_CASE(
    "http effector: Host names a non-default port, templates render, redirects are not followed",
    "[runtime][effectors]") {
  TempDir dir;
  ScriptedServer ok({201}), moved({301}, Redirecting("http://elsewhere.example/in")),
      busy({429, 200});
  json effectors = {
      {"ok",
       {{"kind", "http"},
        {"url", Url(ok)},
        {"headers", {{"X-Action", "{{action.type}}/{{action.attempt}}"}}},
        {"body", {{"text", "{{payload.text}}"}, {"key", "{{action.idempotency_key}}"}}}}},
      {"moved", {{"kind", "http"}, {"url", Url(moved)}}},
      {"busy", {{"kind", "http"}, {"url", Url(busy)}}}};
  RunningLimbic l(dir, BaseConfig(dir, effectors));
  REQUIRE(l.port() != 0);
  std::string a = Enqueue(l.port(), "ok", {{"text", "hi"}}, "k-1");
  std::string b = Enqueue(l.port(), "moved");
  std::string c = Enqueue(l.port(), "busy");

  WaitStatus(l.port(), a, "complete");
  auto reqs = ok.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].headers["host"] == "127.0.0.1:" + std::to_string(ok.port()));
  CHECK(reqs[0].headers["x-action"] == "notify/1");
  CHECK(json::parse(reqs[0].body) == json({{"text", "hi"}, {"key", "k-1"}}));

  json dead = WaitStatus(l.port(), b, "dead");
  CHECK(dead["attempts"] == 1);
  CHECK(dead["last_error"] == "redirect 301 to http://elsewhere.example/in not followed");
  CHECK(moved.requests().size() == 1);

  json retried = WaitStatus(l.port(), c, "complete");  // 429 is worth another try
  CHECK(retried["attempts"] == 2);
}

TEST_CASE("https: delivered through OpenSSL, verified against a CA file, refused when unverifiable",
          "[runtime][effectors]") {
  TempDir dir;
  auto [cert, key] = MakeSelfSignedCert(dir.path());
  ScriptedServer tls({201}, Tls(cert, key));
  json effectors = {
      {"insecure", {{"kind", "http"}, {"url", Url(tls, "https")}, {"tls_verify", false}}},
      {"pinned", {{"kind", "http"}, {"url", Url(tls, "https")}, {"ca_file", cert}}},
      {"strict", {{"kind", "http"}, {"url", Url(tls, "https")}}}};  // the system's CAs
  RunningLimbic l(dir, BaseConfig(dir, effectors));
  REQUIRE(l.port() != 0);
  std::string a = Enqueue(l.port(), "insecure", {{"n", 1}}, "k-insecure");
  std::string b = Enqueue(l.port(), "pinned", {{"n", 2}}, "k-pinned");
  std::string c = Enqueue(l.port(), "strict", {{"n", 3}});
  CHECK(WaitStatus(l.port(), a, "complete")["result"]["status"] == 201);
  CHECK(WaitStatus(l.port(), b, "complete")["result"]["status"] == 201);
  json refused = WaitStatus(l.port(), c, "dead");
  CHECK_THAT(refused["last_error"].get<std::string>(), Catch::Contains("TLS handshake"));
  CHECK_THAT(refused["last_error"].get<std::string>(),
             Catch::Contains("certificate verify failed"));
  auto reqs = tls.requests();
  REQUIRE(reqs.size() == 2);  // the unverifiable one never got past the handshake
  std::map<std::string, json> bodies;
  for (const auto& r : reqs) bodies[r.headers.at("idempotency-key")] = json::parse(r.body);
  CHECK(bodies["k-insecure"] == json({{"n", 1}}));
  CHECK(bodies["k-pinned"] == json({{"n", 2}}));
  CHECK(reqs[0].headers.at("host") == "127.0.0.1:" + std::to_string(tls.port()));
}

TEST_CASE("per-effector concurrency: a slow server never sees more requests at once than allowed",
          "[runtime][effectors]") {
  TempDir dir;
  ScriptedServer one_at_a_time({200}, Delayed(300)), three_at_a_time({200}, Delayed(1000));
  json effectors = {
      {"one", {{"kind", "http"}, {"url", Url(one_at_a_time)}, {"concurrency", 1}}},
      {"three", {{"kind", "http"}, {"url", Url(three_at_a_time)}, {"concurrency", 3}}}};
  RunningLimbic l(dir, BaseConfig(dir, effectors));
  REQUIRE(l.port() != 0);
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(Enqueue(l.port(), "one", {{"i", i}}));
    ids.push_back(Enqueue(l.port(), "three", {{"i", i}}));
  }
  for (const auto& id : ids) WaitStatus(l.port(), id, "complete");
  CHECK(one_at_a_time.requests().size() == 5);
  CHECK(one_at_a_time.max_concurrent() == 1);
  CHECK(three_at_a_time.requests().size() == 5);
  CHECK(three_at_a_time.max_concurrent() <= 3);
  CHECK(three_at_a_time.max_concurrent() >= 2);  // the server does see overlap when it is allowed
}

TEST_CASE("per-effector rate limit: N actions at R/s with burst B take at least (N-B)/R s",
          "[runtime][effectors]") {
  TempDir dir;
  ScriptedServer server({200});
  const int n = 7, burst = 2;
  const double rate = 5;
  json effectors = {
      {"limited", {{"kind", "http"}, {"url", Url(server)}, {"rate", rate}, {"burst", burst}}}};
  RunningLimbic l(dir, BaseConfig(dir, effectors));
  REQUIRE(l.port() != 0);
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) ids.push_back(Enqueue(l.port(), "limited", {{"i", i}}));
  for (const auto& id : ids) WaitStatus(l.port(), id, "complete");
  auto reqs = server.requests();
  REQUIRE(reqs.size() == static_cast<size_t>(n));
  double spread = std::chrono::duration<double>(reqs.back().at - reqs.front().at).count();
  double expected = (n - burst) / rate;  // 1 s
  INFO("first to last request: " << spread << " s, expected at least " << expected << " s");
  CHECK(spread >= 0.75 * expected);  // margin for when each request reached the server
}

TEST_CASE(
    "SIGTERM cancels a delivery that never ends, the next start delivers it with the same key",
    "[runtime][effectors]") {
  TempDir dir;
  ScriptedServer hangs({0});
  json config =
      BaseConfig(dir, {{"remote", {{"kind", "http"}, {"url", Url(hangs)}, {"timeout", "30s"}}}});
  config["outbox"]["shutdown_grace"] = "1s";
  std::string id;
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    id = Enqueue(l.port(), "remote", {{"n", 1}}, "k-cancel");
    REQUIRE(hangs.WaitFor(1));
    CHECK(Http(l.port(), "GET", "/v1/actions/" + id).Json()["status"] == "inflight");
    auto t0 = Steady::now();
    CHECK(l.child().Kill(SIGTERM) == 0);
    double took = std::chrono::duration<double>(Steady::now() - t0).count();
    INFO("SIGTERM to exit: " << took << " s (grace 1 s, effector timeout 30 s)");
    CHECK(took < 5);
  }
  ScriptedServer answers({200});
  config["effectors"]["remote"]["url"] = Url(answers);
  RunningLimbic again(dir, config);
  REQUIRE(again.port() != 0);
  json done = WaitStatus(again.port(), id, "complete");
  CHECK(done["attempts"] == 2);
  REQUIRE(answers.requests().size() == 1);
  CHECK(answers.requests()[0].headers["idempotency-key"] == "k-cancel");
  CHECK(hangs.requests()[0].headers["idempotency-key"] == "k-cancel");
  // The interrupted attempt left no outcome behind: sent, sent, complete.
  json events = Http(again.port(), "GET", "/v1/events?limit=100").Json()["events"];
  std::vector<std::string> types;
  for (const json& e : events)
    if (e.value("action_id", "") == id) types.push_back(e["type"]);
  CHECK(types == std::vector<std::string>{"action_enqueued", "action_sent", "action_sent",
                                          "action_complete"});
  auto verified = Limbic({"replay", "--verify", dir / "state"});
  INFO(verified.out << verified.err);
  CHECK(verified.exit_code == 0);
}

}  // namespace delivery_test
