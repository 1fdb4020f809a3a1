// `limbic run` through its real interfaces: HTTP on 127.0.0.1, subprocess
// sensors and effectors, signals.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <future>

#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace runtime_test {

using nlohmann::json;
using namespace limbic::testing;

TEST_CASE("the HTTP API covers the pools and answers once durable", "[runtime]") {
  TempDir dir;
  RunningLimbic l(dir, BaseConfig(dir));
  REQUIRE(l.port() != 0);
  auto p = HttpJson(l.port(), "POST", "/v1/percepts",
                    {{"source", "chat"}, {"type", "message"}, {"text", "hi"}, {"intensity", 0.8}});
  REQUIRE(p.status == 201);
  CHECK(p.Json()["id"] == "p-1");
  CHECK(p.Json()["seq"] == 1);
  auto t = HttpJson(l.port(), "POST", "/v1/threads", {{"goal", "answer"}, {"salience", 0.6}});
  REQUIRE(t.status == 201);
  std::string tid = t.Json()["id"];
  CHECK(HttpJson(l.port(), "POST", "/v1/percepts/p-1/assign", {{"thread_id", tid}}).status == 200);
  auto patched = HttpJson(l.port(), "PATCH", "/v1/threads/" + tid, {{"state", {{"phase", "drafting"}}}});
  CHECK(patched.status == 200);
  json attention = Http(l.port(), "GET", "/v1/attention").Json();
  CHECK(attention["thread"]["id"] == tid);
  CHECK(attention["thread"]["state"]["phase"] == "drafting");
  REQUIRE(attention["thread_percepts"].size() == 1);
  CHECK(attention["thread_percepts"][0]["id"] == "p-1");
  CHECK(Http(l.port(), "GET", "/v1/percepts?thread_id=" + tid).Json()["percepts"].size() == 1);
  CHECK(Http(l.port(), "POST", "/v1/percepts/p-1/process").status == 200);
  CHECK(Http(l.port(), "GET", "/v1/percepts/p-1").Json()["status"] == "processed");
  CHECK(HttpJson(l.port(), "PATCH", "/v1/arousal", {{"level", 0.7}, {"factors", {{"user_waiting", true}}}}).status == 200);
  json arousal = Http(l.port(), "GET", "/v1/arousal").Json();
  CHECK(arousal["level"] == 0.7);
  CHECK(arousal["effective"].get<double>() > 0.9);
  auto a = HttpJson(l.port(), "POST", "/v1/actions", {{"effector", "log"}, {"type", "note"}, {"payload", {{"x", 1}}}});
  REQUIRE(a.status == 201);
  WaitJson(l.port(), "/v1/actions/" + a.Json()["id"].get<std::string>(),
           [](const json& j) { return j["status"] == "complete"; });
  CHECK(Http(l.port(), "GET", "/healthz").Json()["status"] == "ok");
  std::string metrics = Http(l.port(), "GET", "/metrics").body;
  CHECK_THAT(metrics, Catch::Contains("limbic_fsync_seconds_count"));
  CHECK_THAT(metrics, Catch::Contains("limbic_delivery_attempts_total{effector=\"log\"} 1"));
  // Pool sizes are kept with the commits (counted once, at start, off the
  // loop): p-1 and the thread, the action complete.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (metrics.find("limbic_pool_records") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    metrics = Http(l.port(), "GET", "/metrics").body;
  }
  CHECK_THAT(metrics, Catch::Contains("limbic_pool_records{pool=\"percepts\"} 1\n"));
  CHECK_THAT(metrics, Catch::Contains("limbic_pool_records{pool=\"threads\"} 1\n"));
  CHECK_THAT(metrics, Catch::Contains("limbic_outbox_actions{status=\"complete\"} 1\n"));
  CHECK_THAT(metrics, Catch::Contains("limbic_outbox_actions{status=\"pending\"} 0\n"));
  CHECK(Http(l.port(), "DELETE", "/v1/threads/" + tid).status == 200);
  CHECK(Http(l.port(), "GET", "/v1/threads?status=all").Json()["threads"].empty());
}

TEST_CASE("bad requests get a JSON error with the right status and change nothing", "[runtime]") {
  TempDir dir;
  RunningLimbic l(dir, BaseConfig(dir));
  REQUIRE(l.port() != 0);
  HttpJson(l.port(), "POST", "/v1/threads", {{"goal", "g"}, {"id", "t-1"}});
  CHECK(Http(l.port(), "DELETE", "/v1/threads/t-1").status == 200);
  uint64_t seq = Http(l.port(), "GET", "/healthz").Json()["applied_seq"];
  struct Case {
    HttpReply reply;
    int status;
    const char* code;
    const char* needle;
  } cases[] = {
      {HttpJson(l.port(), "POST", "/v1/percepts", {{"source", "s"}, {"type", "t"}, {"intensity", 1.7}}), 400, "invalid_argument", "intensity"},
      {HttpJson(l.port(), "POST", "/v1/percepts", {{"type", "t"}}), 400, "invalid_argument", "source"},
      {HttpJson(l.port(), "POST", "/v1/percepts", {{"source", "s"}, {"type", "t"}, {"colour", 1}}), 400, "invalid_argument", "colour"},
      {Http(l.port(), "POST", "/v1/percepts", "{\"source\": "), 400, "invalid_argument", "malformed JSON"},
      {Http(l.port(), "POST", "/v1/percepts", "source=s", {}, "application/x-www-form-urlencoded"), 415, "unsupported_media_type", "JSON"},
      {Http(l.port(), "POST", "/v1/percepts", "{\"text\":\"" + std::string(5000, 'x') + "\"}"), 413, "payload_too_large", "4096"},
      {HttpJson(l.port(), "PATCH", "/v1/threads/t-1", {{"status", "complete"}}), 404, "not_found", "t-1"},
      {HttpJson(l.port(), "POST", "/v1/percepts/p-9/assign", {{"thread_id", "t-1"}}), 404, "not_found", "p-9"},
      {HttpJson(l.port(), "POST", "/v1/actions", {{"effector", "slack"}, {"type", "x"}}), 400, "invalid_argument", "slack"},
      {Http(l.port(), "GET", "/v1/nothing"), 404, "not_found", "/v1/nothing"},
      {Http(l.port(), "PUT", "/v1/percepts"), 405, "method_not_allowed", "PUT"},
      {Http(l.port(), "GET", "/v1/events?after=x"), 400, "invalid_argument", "after"},
  };
  for (const auto& c : cases) {
    INFO(c.reply.status << " " << c.reply.body);
    CHECK(c.reply.status == c.status);
    json e = c.reply.Json();
    CHECK(e["error"]["code"] == c.code);
    CHECK_THAT(e["error"]["message"].get<std::string>(), Catch::Contains(c.needle));
  }
  CHECK(Http(l.port(), "PUT", "/v1/percepts").headers["allow"] == "POST, GET");
  CHECK(Http(l.port(), "GET", "/healthz").Json()["applied_seq"] == seq);
}

TEST_CASE("a token protects every request", "[runtime]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["api"]["token"] = "s3cret";
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  CHECK(Http(l.port(), "GET", "/v1/threads").status == 401);
  CHECK(Http(l.port(), "GET", "/v1/threads", "", {{"Authorization", "Bearer wrong"}}).status == 401);
  CHECK(Http(l.port(), "GET", "/v1/threads", "", {{"Authorization", "Bearer s3cret"}}).status == 200);

  TempDir open;
  json exposed = BaseConfig(open);
  exposed["api"]["address"] = "0.0.0.0";
  std::ofstream(open / "c.json") << exposed.dump();
  auto r = Limbic({"--state", open / "state", "run", "--config", open / "c.json"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("api.token"));
}

TEST_CASE("command-line writes while limbic run holds the state dir go through its API",
          "[runtime][cli]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["api"]["token"] = "s3cret";
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  auto cli = [&](std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), {"--state", dir / "state"});
    return Limbic(args, input);
  };
  // Without the token the runtime refuses, and says so.
  RunResult refused = cli({"percept", "add", "--source", "cli", "--type", "note"});
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.err, Catch::Contains("from the running limbic at http://127.0.0.1:"));

  setenv("LIMBIC_API_TOKEN", "s3cret", 1);
  RunResult added = cli({"percept", "add", "--source", "cli", "--type", "note", "--text", "hello"});
  CHECK(added.exit_code == 0);
  CHECK(added.out == "p-1  seq 1 percept_arrived\n");
  json made = json::parse(
      cli({"thread", "create", "--goal", "answer", "--from-percept", "p-1", "--json"}).out);
  CHECK(made["id"] == "t-2");
  CHECK(made["events"].size() == 2);  // thread_created, percept_assigned
  RunResult bad = cli({"thread", "update", "t-2", "--salience", "2"});
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.err, Catch::Contains("salience"));
  RunResult fact = cli({"memory", "remember", "alice", "likes", "tea"});
  CHECK(fact.exit_code == 0);
  CHECK(fact.out == "m-4\n");
  CHECK(json::parse(cli({"consolidate", "--json"}).out).contains("expired"));
  // What cannot be sent as one request is refused, naming the holder.
  RunResult import = cli({"percept", "import"}, "{\"source\":\"x\",\"type\":\"y\"}\n");
  CHECK(import.exit_code == 1);
  CHECK_THAT(import.err, Catch::Contains("in use by another limbic process"));
  unsetenv("LIMBIC_API_TOKEN");

  auto headers =
      std::vector<std::pair<std::string, std::string>>{{"Authorization", "Bearer s3cret"}};
  json percept = Http(l.port(), "GET", "/v1/percepts/p-1", "", headers).Json();
  CHECK(percept["status"] == "assigned");
  CHECK(percept["thread_id"] == "t-2");
  CHECK(Http(l.port(), "GET", "/v1/memory/m-4", "", headers).status == 200);
}

TEST_CASE("why tells a percept's story from the log: reflex, thread, action, each delivery",
          "[runtime][why]") {
  TempDir dir;
  json config = BaseConfig(
      dir,
      {{"hook",
        {{"kind", "http"}, {"url", "http://127.0.0.1:" + std::to_string(ClosedPort()) + "/x"}}}});
  config["outbox"]["max_attempts"] = 2;
  std::ofstream(dir / "reflexes.json")
      << json{{"reflexes",
               {{{"id", "triage"},
                 {"when", {{"source", "chat"}}},
                 {"then",
                  {{{"create_thread", {{"goal", "triage {{percept.text}}"}}}},
                   {{"send", {{"effector", "hook"}, {"type", "alert"}}}}}}}}}}
             .dump();
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  std::string id = HttpJson(l.port(), "POST", "/v1/percepts",
                            {{"source", "chat"}, {"type", "msg"}, {"text", "deploy failed"}})
                       .Json()["id"];
  WaitJson(l.port(), "/v1/actions?status=dead",
           [](const json& j) { return j["actions"].size() == 1; });

  json why = Http(l.port(), "GET", "/v1/why/" + id).Json();
  std::vector<std::string> types;
  for (const json& s : why["chain"]) types.push_back(s["type"]);
  CHECK(types == std::vector<std::string>{"percept_arrived", "reflex_fired", "thread_created",
                                          "percept_assigned", "action_enqueued", "action_sent",
                                          "action_failed", "action_sent", "action_dead"});
  CHECK(why["chain"][1]["what"] ==
        "reflex triage on " + id + " caused seqs " + why["chain"][1]["event"]["caused"].dump());
  // The command line reads the same log beside the runtime.
  RunResult text = Limbic({"--state", dir / "state", "why", id});
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("action_dead"));
  CHECK_THAT(text.out, Catch::Contains("Connection refused"));
  json cli = json::parse(Limbic({"--state", dir / "state", "why", id, "--json"}).out);
  CHECK(cli["chain"] == why["chain"]);
  CHECK(Http(l.port(), "GET", "/v1/why/p-none").status == 404);
}

TEST_CASE("reflex rules: validated, put through the API, fired on percepts, disabled, deleted",
          "[runtime]") {
  TempDir dir;
  RunningLimbic l(dir, BaseConfig(dir));
  REQUIRE(l.port() != 0);
  auto bad = HttpJson(l.port(), "PUT", "/v1/reflexes/links",
                      {{"when", {{"pattern", "(unclosed"}}}, {"then", {{{"drop", json::object()}}}}});
  CHECK(bad.status == 400);
  CHECK_THAT(bad.Json()["error"]["message"].get<std::string>(), Catch::Contains("rule \"links\": when.pattern"));
  auto unknown = HttpJson(l.port(), "PUT", "/v1/reflexes/links",
                          {{"then", {{{"send", {{"effector", "slack"}, {"type", "x"}}}}}}});
  CHECK(unknown.status == 400);
  CHECK_THAT(unknown.Json()["error"]["message"].get<std::string>(), Catch::Contains("then[0].send.effector"));

  json rule = {{"when", {{"source", "chat"}, {"pattern", "(?P<url>https?://\\S+)"}}},
               {"then", {{{"create_thread", {{"goal", "read {{match.url}}"}, {"salience", 0.4}}}},
                         {{"assign_to_thread", json::object()}},
                         {{"send", {{"effector", "log"}, {"type", "ack"}, {"payload", {{"url", "{{match.url}}"}, {"who", "{{percept.data.user}}"}}}}}},
                         {{"escalate", {{"salience", 0.9}}}}}}};
  REQUIRE(HttpJson(l.port(), "PUT", "/v1/reflexes/links", rule).status == 200);
  auto p = HttpJson(l.port(), "POST", "/v1/percepts",
                    {{"source", "chat"}, {"type", "msg"}, {"text", "see https://example.org/x now"}, {"data", {{"user", "ana"}}}});
  REQUIRE(p.status == 201);
  json threads = WaitJson(l.port(), "/v1/threads", [](const json& j) { return j["threads"].size() == 1; });
  CHECK(threads["threads"][0]["goal"] == "read https://example.org/x");
  CHECK(threads["threads"][0]["salience"] == 0.9);
  CHECK(threads["threads"][0]["percepts"] == json::array({p.Json()["id"]}));
  json actions = WaitJson(l.port(), "/v1/actions?status=complete", [](const json& j) { return j["actions"].size() == 1; });
  CHECK(actions["actions"][0]["payload"] == json({{"url", "https://example.org/x"}, {"who", "ana"}}));
  json events = Http(l.port(), "GET", "/v1/events?type=reflex_fired").Json()["events"];
  REQUIRE(events.size() == 1);
  CHECK(events[0]["reflex_id"] == "links");
  REQUIRE(events[0]["caused"].size() == 4);
  std::vector<std::string> caused_types;
  for (const json& seq : events[0]["caused"]) {
    json ev = Http(l.port(), "GET", "/v1/events?limit=1&after=" + std::to_string(seq.get<uint64_t>() - 1)).Json()["events"][0];
    caused_types.push_back(ev["type"]);
  }
  CHECK(caused_types == std::vector<std::string>{"thread_created", "percept_assigned", "action_enqueued", "thread_updated"});
  CHECK(Http(l.port(), "GET", "/v1/reflexes/links").Json()["fired_count"] == 1);

  // A percept the pattern does not match, a source it does not watch: no firing.
  HttpJson(l.port(), "POST", "/v1/percepts", {{"source", "chat"}, {"type", "msg"}, {"text", "no link"}});
  HttpJson(l.port(), "POST", "/v1/percepts", {{"source", "mail"}, {"type", "msg"}, {"text", "http://a.b"}});
  CHECK(Http(l.port(), "POST", "/v1/reflexes/links/disable").status == 200);
  HttpJson(l.port(), "POST", "/v1/percepts", {{"source", "chat"}, {"type", "msg"}, {"text", "http://c.d"}});
  CHECK(Http(l.port(), "GET", "/v1/threads").Json()["threads"].size() == 1);
  CHECK(Http(l.port(), "DELETE", "/v1/reflexes/links").status == 200);
  CHECK(Http(l.port(), "GET", "/v1/reflexes/links").status == 404);
}

TEST_CASE("github webhooks: a good signature is recorded, a bad one is refused", "[runtime]") {
  TempDir dir;
  RunningLimbic l(dir, BaseConfig(dir, {}, {{"gh", {{"kind", "github"}, {"secret", "It's a Secret to Everybody"}}}}));
  REQUIRE(l.port() != 0);
  // GitHub's documented example: this payload and secret give this signature.
  std::string body = "Hello, World!";
  std::string sig = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
  // "Hello, World!" is not JSON, so a good signature on it is a 400, a bad one a 401.
  auto not_json = Http(l.port(), "POST", "/v1/sensors/gh", body,
                       {{"X-GitHub-Event", "ping"}, {"X-Hub-Signature-256", sig}}, "application/json");
  CHECK(not_json.status == 400);
  json payload = {{"action", "opened"}, {"issue", {{"title", "crash"}, {"number", 7}}}};
  std::string raw = payload.dump();
  auto sign = [&](const std::string& secret) {
    auto r = Run({"/usr/bin/openssl", "dgst", "-sha256", "-hmac", secret}, raw);
    return "sha256=" + r.out.substr(r.out.rfind(' ') + 1, 64);
  };
  auto ok = Http(l.port(), "POST", "/v1/sensors/gh", raw,
                 {{"X-GitHub-Event", "issues"}, {"X-Hub-Signature-256", sign("It's a Secret to Everybody")},
                  {"X-GitHub-Delivery", "d-1"}});
  REQUIRE(ok.status == 202);
  json percept = Http(l.port(), "GET", "/v1/percepts/gh-d-1").Json();
  CHECK(percept["type"] == "issues.opened");
  CHECK(percept["text"] == "crash");
  CHECK(percept["data"]["issue"]["number"] == 7);
  auto again = Http(l.port(), "POST", "/v1/sensors/gh", raw,
                    {{"X-GitHub-Event", "issues"}, {"X-Hub-Signature-256", sign("It's a Secret to Everybody")},
                     {"X-GitHub-Delivery", "d-1"}});
  CHECK(again.status == 409);  // a redelivery is recognised
  for (const auto& bad : {sign("wrong"), std::string("sha256=00"), std::string()}) {
    auto r = Http(l.port(), "POST", "/v1/sensors/gh", raw,
                  {{"X-GitHub-Event", "issues"}, {"X-Hub-Signature-256", bad}, {"X-GitHub-Delivery", "d-2"}});
    CHECK(r.status == 401);
  }
  CHECK(Http(l.port(), "GET", "/v1/percepts").Json()["percepts"].size() == 1);
}

TEST_CASE("http effector: retries 5xx, stops on 4xx, gives up, keeps one idempotency key", "[runtime]") {
  TempDir dir;
  ScriptedServer flaky({503, 201}), gone({404}), down({503}), hangs({0});
  json effectors = {
      {"flaky", {{"kind", "http"}, {"url", "http://127.0.0.1:" + std::to_string(flaky.port()) + "/in"}}},
      {"gone", {{"kind", "http"}, {"url", "http://127.0.0.1:" + std::to_string(gone.port()) + "/in"}}},
      {"down", {{"kind", "http"}, {"url", "http://127.0.0.1:" + std::to_string(down.port()) + "/in"}}},
      {"slow", {{"kind", "http"}, {"url", "http://127.0.0.1:" + std::to_string(hangs.port()) + "/in"}, {"timeout", "300ms"}}},
      {"closed", {{"kind", "http"}, {"url", "http://127.0.0.1:1/in"}}}};
  RunningLimbic l(dir, BaseConfig(dir, effectors));
  REQUIRE(l.port() != 0);
  auto enqueue = [&](const std::string& effector) {
    auto r = HttpJson(l.port(), "POST", "/v1/actions",
                      {{"effector", effector}, {"type", "notify"}, {"payload", {{"n", 1}}}, {"idempotency_key", "key-" + effector}});
    REQUIRE(r.status == 201);
    return r.Json()["id"].get<std::string>();
  };
  std::string a1 = enqueue("flaky"), a2 = enqueue("gone"), a3 = enqueue("down"), a4 = enqueue("slow"), a5 = enqueue("closed");
  auto status_of = [&](const std::string& id, const char* want) {
    return WaitJson(l.port(), "/v1/actions/" + id, [&](const json& j) { return j["status"] == want; });
  };
  json complete = status_of(a1, "complete");
  CHECK(complete["attempts"] == 2);
  CHECK(complete["result"]["status"] == 201);
  auto reqs = flaky.requests();
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[0].headers["idempotency-key"] == "key-flaky");
  CHECK(reqs[1].headers["idempotency-key"] == "key-flaky");
  CHECK(json::parse(reqs[1].body) == json({{"n", 1}}));
  json dead404 = status_of(a2, "dead");
  CHECK(dead404["attempts"] == 1);
  CHECK_THAT(dead404["last_error"].get<std::string>(), Catch::Contains("HTTP 404"));
  json dead503 = status_of(a3, "dead");
  CHECK(dead503["attempts"] == 3);
  CHECK_THAT(dead503["last_error"].get<std::string>(), Catch::Contains("gave up after 3 attempts"));
  CHECK(down.requests().size() == 3);
  json timed_out = status_of(a4, "dead");
  CHECK_THAT(timed_out["last_error"].get<std::string>(), Catch::Contains("timed out"));
  json refused = status_of(a5, "dead");
  CHECK_THAT(refused["last_error"].get<std::string>(), Catch::Contains("connect"));
  std::string metrics = Http(l.port(), "GET", "/metrics").body;
  CHECK_THAT(metrics, Catch::Contains("limbic_delivery_failures_total{effector=\"gone\",kind=\"permanent\"} 1"));
}

TEST_CASE("an action in flight at SIGKILL is delivered again with the same key", "[runtime][crash]") {
  TempDir dir;
  ScriptedServer hangs({0});
  json config = BaseConfig(dir, {{"remote", {{"kind", "http"}, {"url", "http://127.0.0.1:" + std::to_string(hangs.port()) + "/in"}, {"timeout", "60s"}}}});
  std::string id;
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    auto r = HttpJson(l.port(), "POST", "/v1/actions", {{"effector", "remote"}, {"type", "t"}});
    REQUIRE(r.status == 201);
    id = r.Json()["id"];
    REQUIRE(hangs.WaitFor(1));
    CHECK(Http(l.port(), "GET", "/v1/actions/" + id).Json()["status"] == "inflight");
    l.child().Kill(SIGKILL);
  }
  ScriptedServer answers({201});
  config["effectors"]["remote"]["url"] = "http://127.0.0.1:" + std::to_string(answers.port()) + "/in";
  RunningLimbic again(dir, config);
  REQUIRE(again.port() != 0);
  json done = WaitJson(again.port(), "/v1/actions/" + id, [](const json& j) { return j["status"] == "complete"; });
  CHECK(done["attempts"] == 2);
  REQUIRE(answers.requests().size() == 1);
  CHECK(answers.requests()[0].headers["idempotency-key"] == hangs.requests()[0].headers["idempotency-key"]);
  CHECK(Limbic({"replay", "--verify", dir / "state"}).exit_code == 0);
}

TEST_CASE("events: long-poll wakes on a new event, SSE resumes without gaps", "[runtime]") {
  TempDir dir;
  RunningLimbic l(dir, BaseConfig(dir));
  REQUIRE(l.port() != 0);
  for (int i = 0; i < 3; ++i) HttpJson(l.port(), "POST", "/v1/percepts", {{"source", "s"}, {"type", "t"}});
  auto first = ReadSse(l.port(), "/v1/events/stream?after=0", 3, 5000);
  REQUIRE(first.size() == 3);
  CHECK(first[0].id == "1");
  CHECK(first[2].id == "3");
  CHECK(first[1].event == "percept_arrived");
  CHECK(json::parse(first[1].data)["seq"] == 2);
  auto waiting = std::async(std::launch::async, [&] {
    return Http(l.port(), "GET", "/v1/events?after=3&wait=10").Json();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (int i = 0; i < 2; ++i) HttpJson(l.port(), "POST", "/v1/percepts", {{"source", "s"}, {"type", "t"}});
  json woke = waiting.get();
  REQUIRE(woke["events"].size() >= 1);
  CHECK(woke["events"][0]["seq"] == 4);
  auto resumed = ReadSse(l.port(), "/v1/events/stream", 2, 5000, {{"Last-Event-ID", first.back().id}});
  REQUIRE(resumed.size() == 2);
  CHECK(resumed[0].id == "4");
  CHECK(resumed[1].id == "5");
  CHECK(Http(l.port(), "GET", "/v1/events?after=1&limit=2").Json()["events"].size() == 2);
}

TEST_CASE("exec sensor and exec effector speak JSON lines with a script", "[runtime]") {
  TempDir dir;
  std::string sensor = Script(dir, "adapter.sh",
                              "echo '{\"source\":\"adapter\",\"type\":\"tick\",\"text\":\"one\"}'\n"
                              "echo 'this is not json'\n"
                              "echo 'oops on stderr' >&2\n"
                              "echo '{\"type\":\"tick\",\"text\":\"two\"}'\n"
                              "sleep 30\n");
  std::string out = dir / "effector.out";
  std::string effector = Script(dir, "effector.sh", "cat > " + out + "\necho \"key=$LIMBIC_IDEMPOTENCY_KEY\" >> " + out + "\n");
  std::string failing = Script(dir, "fail.sh", "echo 'no such user' >&2\nexit 3\n");
  json config = BaseConfig(dir, {{"run", {{"kind", "exec"}, {"argv", {effector}}}}, {"bad", {{"kind", "exec"}, {"argv", {failing}}}}},
                           {{"adapter", {{"kind", "exec"}, {"argv", {sensor}}, {"defaults", {{"source", "adapter"}}}}}});
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  json percepts = WaitJson(l.port(), "/v1/percepts?source=adapter", [](const json& j) { return j["percepts"].size() == 2; });
  CHECK(percepts["percepts"][0]["text"] == "two");
  CHECK(l.WaitForLog("adapter: line 2 from pid "));
  CHECK(l.WaitForLog("is not a JSON object: this is not json"));
  CHECK(l.WaitForLog("oops on stderr"));
  auto a = HttpJson(l.port(), "POST", "/v1/actions", {{"effector", "run"}, {"type", "t"}, {"payload", {{"hello", "world"}}}, {"idempotency_key", "k-42"}});
  REQUIRE(a.status == 201);
  WaitJson(l.port(), "/v1/actions/" + a.Json()["id"].get<std::string>(), [](const json& j) { return j["status"] == "complete"; });
  std::ifstream in(out);
  std::string line1, line2;
  std::getline(in, line1);
  std::getline(in, line2);
  CHECK(json::parse(line1) == json({{"hello", "world"}}));
  CHECK(line2 == "key=k-42");
  auto b = HttpJson(l.port(), "POST", "/v1/actions", {{"effector", "bad"}, {"type", "t"}});
  json dead = WaitJson(l.port(), "/v1/actions/" + b.Json()["id"].get<std::string>(), [](const json& j) { return j["status"] == "dead"; });
  CHECK_THAT(dead["last_error"].get<std::string>(), Catch::Contains("exit 3: no such user"));
}

TEST_CASE("SIGTERM stops intake, drains and exits 0, a bad config is refused with its path",
          "[runtime]") {
  TempDir dir;
  RunningLimbic l(dir, BaseConfig(dir));
  REQUIRE(l.port() != 0);
  HttpJson(l.port(), "POST", "/v1/percepts", {{"source", "s"}, {"type", "t"}});
  CHECK(l.child().Kill(SIGTERM) == 0);
  CHECK(Limbic({"replay", "--verify", dir / "state"}).exit_code == 0);

  TempDir bad;
  json config = BaseConfig(bad);
  config["outbox"]["max_atempts"] = 3;
  std::ofstream(bad / "c.json") << config.dump();
  auto r = Limbic({"--state", bad / "state", "run", "--config", bad / "c.json"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("outbox.max_atempts: unknown key"));
}

TEST_CASE("a body far over api.body_limit gets its 413, not a reset, while still being sent",
          "[api]") {
  TempDir dir;
  RunningLimbic l(dir, BaseConfig(dir));  // api.body_limit 4096
  REQUIRE(l.port() != 0);
  const std::string body(4 << 20, 'x');
  for (int round = 0; round < 5; ++round) {
    INFO("round " << round);
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(l.port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    const std::string head = "POST /v1/percepts HTTP/1.1\r\nHost: 127.0.0.1:" +
                             std::to_string(l.port()) +
                             "\r\nContent-Type: application/json\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\n\r\n";
    std::string out = head + body;
    size_t sent = 0;
    while (sent < out.size()) {
      ssize_t n = ::send(fd, out.data() + sent, std::min<size_t>(out.size() - sent, 1 << 16),
                         MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    CHECK(sent == out.size());  // the server read (and dropped) the rest
    ::shutdown(fd, SHUT_WR);
    std::string in;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) in.append(buf, static_cast<size_t>(n));
    ::close(fd);
    CHECK_THAT(in, Catch::StartsWith("HTTP/1.1 413"));
    CHECK_THAT(in, Catch::Contains("payload_too_large"));
  }
  CHECK(Http(l.port(), "GET", "/healthz").status == 200);
}

}  // namespace runtime_test
