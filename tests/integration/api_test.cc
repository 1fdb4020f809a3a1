// The HTTP API's edges through the real binary: config checking before the
// state dir is touched, the rules file owning its rules, auth, SSE and
// long-poll errors and filters, the prune and digest routes, and requests
// that arrive while limbic shuts down.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <future>

#include "http.h"
#include "runtime_util.h"
#include "tests/raw_connection.h"

// This file's own namespace: test programs compile in unity batches.
namespace api_test {

using nlohmann::json;
using namespace limbic::testing;

namespace {

// GET `path` on a connection kept alive across requests: the response's
// status line, or "closed".
std::string GetOn(RawConnection& conn, const std::string& path) {
  REQUIRE(conn.Send("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  std::string response = conn.Read(30000);
  return response.empty() ? "closed" : response.substr(0, response.find("\r\n"));
}

json Rule(const std::string& id, const std::string& source) {
  return {{"id", id},
          {"when", {{"source", source}}},
          {"then", {{{"send", {{"effector", "log"}, {"type", "ack"}}}}}}};
}

}  // namespace

TEST_CASE("every config problem is reported at once, before the state dir exists", "[api]") {
  TempDir dir;
  json config = BaseConfig(dir, {{"hook", {{"kind", "http"}, {"url", "not a url"}}}},
                           {{"tick", {{"kind", "timer"}, {"every", "1s"}, {"intensity", 7}}}});
  config["api"]["port"] = "http";
  config["outbox"]["max_atempts"] = 3;
  std::ofstream(dir / "c.json") << config.dump();
  auto r = Limbic({"--state", dir / "state", "run", "--config", dir / "c.json"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("2 problems") && Catch::Contains("api.port") &&
                        Catch::Contains("outbox.max_atempts: unknown key"));
  // The structure is fine now; the parts are checked by their factories.
  config["api"]["port"] = 0;
  config["outbox"].erase("max_atempts");
  std::ofstream(dir / "c.json") << config.dump();
  r = Limbic({"--state", dir / "state", "run", "--config", dir / "c.json"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains(dir / "c.json") && Catch::Contains("effectors.hook") &&
                        Catch::Contains("sensors.tick.intensity"));
  CHECK_FALSE(std::filesystem::exists(dir / "state"));
}

TEST_CASE("the rules file owns its rules, API rules are left alone", "[api]") {
  TempDir dir;
  json config = BaseConfig(dir);
  std::ofstream(dir / "reflexes.json") << json({{"reflexes", {Rule("a", "s1"), Rule("b", "s2")}}}).dump();
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    auto put = HttpJson(l.port(), "PUT", "/v1/reflexes/c", Rule("c", "s3"));
    REQUIRE(put.status == 200);
    json all = Http(l.port(), "GET", "/v1/reflexes").Json()["reflexes"];
    REQUIRE(all.size() == 3);
    CHECK(all[0]["origin"] == "file");
    CHECK(all[2]["origin"] == "api");
    REQUIRE(l.child().Kill(SIGTERM) == 0);
  }
  // "b" leaves the file, "a" changes: the pool follows; "c" stays.
  json a2 = Rule("a", "s1");
  a2["priority"] = 5;
  std::ofstream(dir / "reflexes.json") << json({{"reflexes", {a2}}}).dump();
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  json all = Http(l.port(), "GET", "/v1/reflexes").Json()["reflexes"];
  REQUIRE(all.size() == 2);
  CHECK(all[0]["id"] == "a");
  CHECK(all[0]["rule"]["priority"] == 5);
  CHECK(all[1]["id"] == "c");
  json deleted = Http(l.port(), "GET", "/v1/events?type=reflex_deleted").Json()["events"];
  REQUIRE(deleted.size() == 1);
  CHECK(deleted[0]["reflex_id"] == "b");
  CHECK_THAT(deleted[0]["reason"].get<std::string>(), Catch::Contains("reflexes.json"));
  // The deleted rule no longer fires.
  HttpJson(l.port(), "POST", "/v1/percepts", {{"source", "s2"}, {"type", "t"}});
  HttpJson(l.port(), "POST", "/v1/percepts", {{"source", "s1"}, {"type", "t"}});
  WaitJson(l.port(), "/v1/events?type=reflex_fired", [](const json& j) { return j["events"].size() == 1; });
  CHECK(Http(l.port(), "GET", "/v1/events?type=reflex_fired").Json()["events"][0]["reflex_id"] == "a");
}

TEST_CASE("auth scheme in any case, SSE and long-poll errors and filters", "[api]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["api"]["token"] = "s3cret";
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  std::vector<std::pair<std::string, std::string>> auth = {{"Authorization", "bearer s3cret"}};
  CHECK(Http(l.port(), "GET", "/healthz", "", auth).status == 200);
  CHECK(Http(l.port(), "GET", "/healthz", "", {{"Authorization", "Basic s3cret"}}).status == 401);

  // A bad stream request is an ordinary JSON error, not an empty stream.
  auto bad = Http(l.port(), "GET", "/v1/events/stream?after=x", "", auth);
  CHECK(bad.status == 400);
  CHECK_THAT(bad.Json()["error"]["message"].get<std::string>(), Catch::Contains("after"));
  bad = Http(l.port(), "GET", "/v1/events/stream?type=bogus", "", auth);
  CHECK(bad.status == 400);
  CHECK_THAT(bad.Json()["error"]["message"].get<std::string>(), Catch::Contains("bogus"));

  // A long-poll for one type sleeps through events of other types.
  auto post = [&](const std::string& path, const json& body) {
    return Http(l.port(), "POST", path, body.dump(), auth);
  };
  auto waiting = std::async(std::launch::async, [&] {
    auto t0 = std::chrono::steady_clock::now();
    json j = Http(l.port(), "GET", "/v1/events?type=action_enqueued&wait=20", "", auth).Json();
    return std::make_pair(j, std::chrono::steady_clock::now() - t0);
  });
  for (int i = 0; i < 5; ++i) REQUIRE(post("/v1/percepts", {{"source", "s"}, {"type", "t"}}).status == 201);
  // Still waiting: those events were of another type.
  CHECK(waiting.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout);
  REQUIRE(post("/v1/actions", {{"effector", "log"}, {"type", "ack"}}).status == 201);
  auto [woke, took] = waiting.get();
  REQUIRE(woke["events"].size() == 1);
  CHECK(woke["events"][0]["type"] == "action_enqueued");
  CHECK(took < std::chrono::seconds(15));
}

TEST_CASE("prune and digest routes, and the digest agrees with the command line", "[api]") {
  TempDir dir;
  json config = BaseConfig(dir);
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  auto a = HttpJson(l.port(), "POST", "/v1/actions", {{"effector", "log"}, {"type", "ack"}});
  REQUIRE(a.status == 201);
  std::string id = a.Json()["id"];
  WaitJson(l.port(), "/v1/actions/" + id, [](const json& j) { return j["status"] == "complete"; });
  CHECK(HttpJson(l.port(), "POST", "/v1/actions/prune", {{"older_than", "1h"}}).Json()["events"].empty());
  CHECK(HttpJson(l.port(), "POST", "/v1/actions/prune", {{"older_than", "soon"}}).status == 400);
  CHECK(HttpJson(l.port(), "POST", "/v1/actions/prune", {{"older", "1h"}}).status == 400);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto pruned = HttpJson(l.port(), "POST", "/v1/actions/prune", {{"older_than", "1ms"}});
  REQUIRE(pruned.status == 200);
  CHECK(pruned.Json()["events"][0]["type"] == "actions_pruned");
  CHECK(Http(l.port(), "GET", "/v1/actions/" + id).status == 404);
  json digest = Http(l.port(), "GET", "/v1/state/digest").Json();
  REQUIRE(l.child().Kill(SIGTERM) == 0);
  auto cli = Limbic({"--state", dir / "state", "--json", "state", "digest"});
  REQUIRE(cli.exit_code == 0);
  json offline = json::parse(cli.out);
  CHECK(offline["digest"] == digest["digest"]);
  CHECK(offline["applied_seq"] == digest["applied_seq"]);
}

TEST_CASE("requests that arrive while limbic stops get 503", "[api]") {
  TempDir dir;
  ScriptedServer::Options slow;
  slow.delay_ms = 3000;
  ScriptedServer server({200}, slow);
  json config = BaseConfig(
      dir, {{"hook", {{"kind", "http"}, {"url", "http://127.0.0.1:" + std::to_string(server.port()) + "/"}}}});
  config["outbox"]["shutdown_grace"] = "5s";
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  RawConnection conn(l.port());
  REQUIRE(conn.ok());
  CHECK_THAT(GetOn(conn, "/healthz"), Catch::Contains("200"));
  REQUIRE(HttpJson(l.port(), "POST", "/v1/actions", {{"effector", "hook"}, {"type", "t"}}).status == 201);
  REQUIRE(server.WaitFor(1));
  REQUIRE(kill(l.child().pid(), SIGTERM) == 0);
  REQUIRE(l.WaitForLog("stopping"));
  // The delivery is still in flight; the open connection gets 503.
  CHECK_THAT(GetOn(conn, "/healthz"), Catch::Contains("503"));
  CHECK(l.child().Wait() == 0);
}

}  // namespace api_test
