// Provenance and approval through the real binary: every change names its
// actor (HTTP, X-Limbic-Actor, the CLI offline and forwarded, an MCP
// client, a reflex, the outbox), and actions that wait for a human.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "http.h"
#include "mcp_client.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace provenance_test {

using nlohmann::json;
using namespace limbic::testing;

namespace {

// Every event of the log, oldest first.
json AllEvents(uint16_t port) {
  auto r = Http(port, "GET", "/v1/events?after=0&limit=10000");
  REQUIRE(r.status == 200);
  return r.Json()["events"];
}

// The actor of the first event of `type` naming `id` (in any id field).
std::string ActorOf(const json& events, const std::string& type, const std::string& id) {
  for (const json& e : events)
    if (e["type"] == type && (e.value("percept_id", "") == id || e.value("thread_id", "") == id ||
                              e.value("action_id", "") == id))
      return e.value("actor", "<none>");
  return "<no such event>";
}

std::vector<std::string> State(const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"--state", dir / "state"});
  return args;
}

}  // namespace

TEST_CASE("every change records who made it: http, X-Limbic-Actor, cli, mcp, reflex, outbox",
          "[runtime][provenance]") {
  TempDir dir;
  ScriptedServer hook({201});
  json config = BaseConfig(
      dir, {{"hook", {{"kind", "http"}, {"url", "http://127.0.0.1:" + std::to_string(hook.port()) + "/in"}}}});
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  // A rule that answers every "ping" percept through the hook.
  json rule = {{"when", {{"type", "ping"}}}, {"then", {{{"send", {{"effector", "hook"}, {"type", "pong"}}}}}}};
  REQUIRE(HttpJson(port, "PUT", "/v1/reflexes/pong", rule).status == 200);

  auto plain = HttpJson(port, "POST", "/v1/percepts", {{"source", "chat"}, {"type", "msg"}});
  REQUIRE(plain.status == 201);
  auto named = Http(port, "POST", "/v1/percepts", json{{"source", "chat"}, {"type", "msg"}}.dump(),
                    {{"X-Limbic-Actor", "python-mind"}});
  REQUIRE(named.status == 201);
  auto bad = Http(port, "POST", "/v1/percepts", json{{"source", "chat"}, {"type", "msg"}}.dump(),
                  {{"X-Limbic-Actor", std::string(300, 'x')}});
  CHECK(bad.status == 400);
  CHECK_THAT(bad.body, Catch::Contains("X-Limbic-Actor"));
  const std::string p1 = plain.Json()["id"], p2 = named.Json()["id"];

  // The CLI's write goes to the running runtime, as "cli", with its reason.
  auto cli = Limbic(State(dir, {"thread", "create", "--goal", "answer", "--from-percept", p1,
                                "--reason", "the user asked", "--json"}));
  INFO(cli.err);
  REQUIRE(cli.exit_code == 0);
  const std::string t1 = json::parse(cli.out)["id"];

  McpClient mcp(dir, {});
  mcp.Initialize();  // clientInfo.name "test"
  mcp.Ok("process_percept", {{"id", p2}, {"reason", "read it"}});

  auto ping = HttpJson(port, "POST", "/v1/percepts", {{"source", "chat"}, {"type", "ping"}});
  REQUIRE(ping.status == 201);
  const std::string p3 = ping.Json()["id"];
  json actions = WaitJson(port, "/v1/actions?status=complete", [](const json& j) { return j["actions"].size() == 1; });
  const std::string a1 = actions["actions"][0]["id"];

  json events = AllEvents(port);
  CHECK(ActorOf(events, "percept_arrived", p1) == "http");
  CHECK(ActorOf(events, "percept_arrived", p2) == "python-mind");
  CHECK(ActorOf(events, "thread_created", t1) == "cli");
  CHECK(ActorOf(events, "percept_assigned", p1) == "cli");
  CHECK(ActorOf(events, "percept_processed", p2) == "mcp:test");
  CHECK(ActorOf(events, "action_enqueued", a1) == "reflex:pong");
  CHECK(ActorOf(events, "action_sent", a1) == "outbox");
  CHECK(ActorOf(events, "action_complete", a1) == "outbox");
  for (const json& e : events) {
    if (e["type"] == "reflex_put") CHECK(e["actor"] == "http");
    if (e["type"] == "thread_created") CHECK(e["reason"] == "the user asked");
    if (e["type"] == "percept_processed") CHECK(e["reason"] == "read it");
  }

  // `why` shows who did each step.
  auto why = Limbic(State(dir, {"why", a1}));
  INFO(why.out << why.err);
  REQUIRE(why.exit_code == 0);
  CHECK_THAT(why.out, Catch::Contains("reflex:pong"));
  CHECK_THAT(why.out, Catch::Contains("outbox"));
  auto why_http = Http(port, "GET", "/v1/why/" + t1).Json();
  bool saw_cli = false;
  for (const json& step : why_http["chain"]) saw_cli = saw_cli || step.value("actor", "") == "cli";
  CHECK(saw_cli);
  CHECK(mcp.Finish() == 0);
  (void)p3;
}

TEST_CASE("an action that requires approval waits, survives a crash, and goes only when approved",
          "[runtime][provenance][approval]") {
  TempDir dir;
  ScriptedServer hook({201});
  const std::string url = "http://127.0.0.1:" + std::to_string(hook.port()) + "/in";
  json config = BaseConfig(dir, {{"guarded", {{"kind", "http"}, {"url", url}, {"require_approval", true}}},
                                 {"open", {{"kind", "http"}, {"url", url}}}});
  std::string a1, a2, a3;
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    auto r1 = HttpJson(l.port(), "POST", "/v1/actions", {{"effector", "guarded"}, {"type", "deploy"}});
    REQUIRE(r1.status == 201);
    a1 = r1.Json()["id"];
    // One action of an open effector can ask for approval itself.
    auto r2 = HttpJson(l.port(), "POST", "/v1/actions",
                       {{"effector", "open"}, {"type", "email"}, {"require_approval", true}});
    REQUIRE(r2.status == 201);
    a2 = r2.Json()["id"];
    auto r3 = HttpJson(l.port(), "POST", "/v1/actions", {{"effector", "guarded"}, {"type", "rm"}});
    a3 = r3.Json()["id"];
    CHECK(Http(l.port(), "GET", "/v1/actions/" + a1).Json()["status"] == "pending_approval");
    json attention = Http(l.port(), "GET", "/v1/attention").Json();
    REQUIRE(attention["pending_approval"].size() == 3);
    CHECK(attention["pending_approval"][0]["id"] == a1);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(hook.requests().empty());
    l.child().Kill(SIGKILL);
  }
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(hook.requests().empty());  // still waiting after the restart
  CHECK(Http(port, "GET", "/v1/actions?status=pending_approval").Json()["actions"].size() == 3);

  // Approved from the CLI (forwarded to the runtime): delivered once.
  auto approve = Limbic(State(dir, {"action", "approve", a1, "--reason", "reviewed"}));
  INFO(approve.err);
  REQUIRE(approve.exit_code == 0);
  WaitJson(port, "/v1/actions/" + a1, [](const json& a) { return a["status"] == "complete"; });
  REQUIRE(hook.WaitFor(1));
  // Rejected through MCP: never delivered.
  McpClient mcp(dir, {});
  mcp.Initialize();
  json rejected = mcp.Ok("reject_action", {{"id", a2}, {"reason", "wrong address"}});
  CHECK(rejected["events"][0]["type"] == "action_rejected");
  // And over HTTP with a named actor.
  auto r3 = Http(port, "POST", "/v1/actions/" + a3 + "/reject", "", {{"X-Limbic-Actor", "ops-console"}});
  CHECK(r3.status == 200);
  // A decision on an action that is not waiting is a conflict.
  auto again = HttpJson(port, "POST", "/v1/actions/" + a1 + "/approve", json::object());
  CHECK(again.status == 409);
  CHECK(HttpJson(port, "POST", "/v1/actions/a-404/approve", json::object()).status == 404);

  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(hook.requests().size() == 1);
  json a2rec = Http(port, "GET", "/v1/actions/" + a2).Json();
  CHECK(a2rec["status"] == "rejected");
  CHECK(a2rec["last_error"] == "wrong address");
  json events = AllEvents(port);
  CHECK(ActorOf(events, "action_approved", a1) == "cli");
  CHECK(ActorOf(events, "action_rejected", a2) == "mcp:test");
  CHECK(ActorOf(events, "action_rejected", a3) == "ops-console");
  CHECK(Http(port, "GET", "/v1/attention").Json()["pending_approval"].empty());
  // Rejected actions are finished: prune takes them.
  auto pruned = HttpJson(port, "POST", "/v1/actions/prune", {{"older_than", "0s"}});
  REQUIRE(pruned.status == 200);
  CHECK(pruned.Json()["events"][0]["action_ids"].size() == 3);
  CHECK(mcp.Finish() == 0);
}

TEST_CASE("offline, the CLI checks an action against the last run's effectors and says it waits",
          "[cli][provenance][approval]") {
  TempDir dir;
  json config = BaseConfig(dir, {{"guarded", {{"kind", "log"}, {"require_approval", true}}}});
  {
    RunningLimbic l(dir, config);  // writes <state>/effectors.json
    REQUIRE(l.port() != 0);
  }
  auto unknown = Limbic(State(dir, {"action", "enqueue", "--effector", "discord", "--type", "say"}));
  CHECK(unknown.exit_code == 1);
  CHECK_THAT(unknown.err, Catch::Contains("unknown effector \"discord\" (configured: guarded, log)"));

  auto queued = Limbic(State(dir, {"action", "enqueue", "--effector", "guarded", "--type", "say", "--json"}));
  INFO(queued.err);
  REQUIRE(queued.exit_code == 0);
  const std::string id = json::parse(queued.out)["id"];
  CHECK(json::parse(queued.out)["events"][0]["require_approval"] == true);
  CHECK(json::parse(queued.out)["events"][0]["actor"] == "cli");
  auto plain = Limbic(State(dir, {"action", "enqueue", "--effector", "log", "--type", "say"}));
  REQUIRE(plain.exit_code == 0);
  CHECK_THAT(plain.err, Catch::Contains("until `limbic run` starts"));

  auto shown = Limbic(State(dir, {"action", "show", id, "--json"}));
  CHECK(json::parse(shown.out)["status"] == "pending_approval");
  auto attention = Limbic(State(dir, {"attention"}));
  CHECK_THAT(attention.out, Catch::Contains("waiting for approval: 1"));
  auto approved = Limbic(State(dir, {"action", "approve", id}));
  REQUIRE(approved.exit_code == 0);
  auto twice = Limbic(State(dir, {"action", "reject", id}));
  CHECK(twice.exit_code == 1);
  CHECK_THAT(twice.err, Catch::Contains("is pending"));
}

}  // namespace provenance_test
