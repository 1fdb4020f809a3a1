// What the inspector stands on, through the real binary: its files at /ui/
// (no token, but the Host rule and a strict content policy), time travel and
// forks over HTTP, a dead action sent again, events filtered by actor, id
// and time, and a reflex rule checked without saving it.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace inspector_api_test {

using nlohmann::json;
using namespace limbic::testing;

namespace {

json Percept(const std::string& source) {
  return {{"source", source}, {"type", "msg"}, {"intensity", 0.7}, {"text", "hello"}};
}

}  // namespace

TEST_CASE("the inspector's files: served without the token, Host-checked, strict headers",
          "[api][ui]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["api"]["token"] = "s3cret";
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);

  auto page = Http(l.port(), "GET", "/ui/");
  REQUIRE(page.status == 200);
  CHECK_THAT(page.headers["content-type"], Catch::StartsWith("text/html"));
  CHECK_THAT(page.body, Catch::Contains("<html"));
  CHECK_THAT(page.headers["content-security-policy"],
             Catch::Contains("default-src 'none'") && Catch::Contains("script-src 'self'") &&
                 Catch::Contains("frame-ancestors 'none'"));
  CHECK(page.headers["x-content-type-options"] == "nosniff");
  CHECK(page.headers["x-frame-options"] == "DENY");
  // Unchanged since the browser's copy: 304, no body.
  auto again = Http(l.port(), "GET", "/ui/", "", {{"If-None-Match", page.headers["etag"]}});
  CHECK(again.status == 304);
  CHECK(again.body.empty());
  // /ui redirects to /ui/, where the page's relative module paths resolve.
  auto bare = Http(l.port(), "GET", "/ui");
  CHECK(bare.status == 308);
  CHECK(bare.headers["location"] == "/ui/");

  // The data is not public: the API still wants the token.
  CHECK(Http(l.port(), "GET", "/v1/attention").status == 401);
  CHECK(Http(l.port(), "GET", "/v1/attention", "", {{"Authorization", "Bearer s3cret"}}).status ==
        200);

  // Only files of the built-in set, whatever the path says.
  CHECK(Http(l.port(), "GET", "/ui/nothing.js").status == 404);
  CHECK(Http(l.port(), "GET", "/ui/%2e%2e/%2e%2e/etc/passwd").status == 404);
  CHECK(Http(l.port(), "GET", "/ui/..%2fapi.h").status == 404);
  // A rebound DNS name cannot read them either.
  CHECK(Http(l.port(), "GET", "/ui/", "", {{"Host", "evil.example:80"}}).status == 421);
  // The page is read-only: other methods are refused before anything else.
  CHECK(Http(l.port(), "POST", "/ui/", "{}", {{"Authorization", "Bearer s3cret"}}).status == 405);
}

TEST_CASE("api.ui_dir serves the inspector from a directory, and api.ui false serves none",
          "[api][ui]") {
  TempDir dir;
  std::filesystem::create_directories(dir / "ui/views");
  std::ofstream(dir / "ui/index.html") << "<html>mine</html>";
  std::ofstream(dir / "ui/views/a.js") << "export const a = 1;\n";
  std::ofstream(dir / "ui/.secret") << "no";
  json config = BaseConfig(dir);
  config["api"]["ui_dir"] = dir / "ui";
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    CHECK(Http(l.port(), "GET", "/ui/").body == "<html>mine</html>");
    auto js = Http(l.port(), "GET", "/ui/views/a.js");
    CHECK(js.status == 200);
    CHECK_THAT(js.headers["content-type"], Catch::StartsWith("text/javascript"));
    CHECK(Http(l.port(), "GET", "/ui/.secret").status == 404);
    CHECK(Http(l.port(), "GET", "/ui/views").status == 404);
    // Edited on disk: served as it is now.
    std::ofstream(dir / "ui/index.html") << "<html>edited</html>";
    CHECK(Http(l.port(), "GET", "/ui/").body == "<html>edited</html>");
    REQUIRE(l.child().Kill(SIGTERM) == 0);
  }
  config["api"]["ui_dir"] = dir / "nowhere";
  std::ofstream(dir / "c.json") << config.dump();
  auto bad = Limbic({"--state", dir / "state", "run", "--config", dir / "c.json"});
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.err, Catch::Contains("api.ui_dir") && Catch::Contains("index.html"));

  config["api"].erase("ui_dir");
  config["api"]["ui"] = false;
  RunningLimbic off(dir, config);
  REQUIRE(off.port() != 0);
  CHECK(Http(off.port(), "GET", "/ui/").status == 404);
}

TEST_CASE("api.ui_dir never follows a symlink out of its directory", "[api][ui]") {
  TempDir dir;
  namespace fs = std::filesystem;
  fs::create_directories(dir / "ui/views");
  std::ofstream(dir / "ui/index.html") << "<html>mine</html>";
  std::ofstream(dir / "ui/views/a.js") << "export const a = 1;\n";
  std::ofstream(dir / "secret.txt") << "TOPSECRET";
  fs::create_directories(dir / "outside");
  std::ofstream(dir / "outside/b.js") << "TOPSECRET";
  fs::create_symlink("../secret.txt", dir / "ui/leak.txt");               // relative, out
  fs::create_symlink(dir / "secret.txt", dir / "ui/abs.txt");             // absolute, out
  fs::create_symlink("../../secret.txt", dir / "ui/views/up.js");         // deeper, out
  fs::create_symlink(dir / "outside", dir / "ui/out");                    // a directory, out
  fs::create_symlink("views/a.js", dir / "ui/same.js");                   // stays inside
  json config = BaseConfig(dir);
  config["api"]["ui_dir"] = dir / "ui";
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  for (const char* path : {"/ui/leak.txt", "/ui/abs.txt", "/ui/views/up.js", "/ui/out/b.js"}) {
    auto r = Http(l.port(), "GET", path);
    INFO(path << ": " << r.status << " " << r.body);
    CHECK(r.status == 404);
    CHECK(r.body.find("TOPSECRET") == std::string::npos);
  }
  auto inside = Http(l.port(), "GET", "/ui/same.js");
  CHECK(inside.status == 200);
  CHECK(inside.body == "export const a = 1;\n");
  CHECK(Http(l.port(), "GET", "/ui/").body == "<html>mine</html>");
  REQUIRE(l.child().Kill(SIGTERM) == 0);
}

TEST_CASE("time travel over HTTP: the pools at a seq, with the command line's digest",
          "[api][ui]") {
  TempDir dir;
  const std::string state = dir / "state";
  RunningLimbic l(dir, BaseConfig(dir));
  REQUIRE(l.port() != 0);
  auto p = HttpJson(l.port(), "POST", "/v1/percepts", Percept("chat"));
  REQUIRE(p.status == 201);
  auto t = HttpJson(l.port(), "POST", "/v1/threads",
                    {{"goal", "answer"}, {"salience", 0.8}, {"from_percept", p.Json()["id"]}});
  REQUIRE(t.status == 201);
  const uint64_t seq = t.Json()["events"].back()["seq"];  // the assignment's
  REQUIRE(HttpJson(l.port(), "POST", "/v1/threads", {{"goal", "later"}}).status == 201);

  auto at = Http(l.port(), "GET", "/v1/state/at?digest=true&seq=" + std::to_string(seq));
  REQUIRE(at.status == 200);
  json past = at.Json();
  // Without digest=true, the same pools and no digest (it reads every record).
  json quick = Http(l.port(), "GET", "/v1/state/at?seq=" + std::to_string(seq)).Json();
  CHECK_FALSE(quick.contains("digest"));
  CHECK(quick["pools"] == past["pools"]);
  auto bad = Http(l.port(), "GET", "/v1/state/at?digest=yes&seq=" + std::to_string(seq));
  CHECK(bad.status == 400);
  CHECK_THAT(bad.body, Catch::Contains("query digest: must be true or false"));
  CHECK(past["seq"] == seq);
  CHECK(past["digest"] == CliDigest(state, {"--at-seq", std::to_string(seq)}));
  CHECK(past["pools"]["threads"]["count"] == 1);
  CHECK(past["pools"]["threads"]["items"][0]["goal"] == "answer");
  CHECK(past["pools"]["threads"]["items"][0]["unprocessed"] == 1);
  CHECK(past["pools"]["percepts"]["count"] == 1);
  CHECK(past["pools"]["percepts"]["items"][0]["status"] == "assigned");
  CHECK(past["pools"]["percepts"]["items"][0].contains("effective_intensity"));
  CHECK(past["arousal"].contains("effective"));
  // The first event only: nothing but the percept.
  json first = Http(l.port(), "GET", "/v1/state/at?seq=1&limit=1&digest=true").Json();
  CHECK(first["pools"]["threads"]["count"] == 0);
  CHECK(first["digest"] == CliDigest(state, {"--at-seq", "1"}));

  auto zero = Http(l.port(), "GET", "/v1/state/at?seq=0");
  CHECK(zero.status == 400);
  CHECK_THAT(zero.body, Catch::Contains("query seq"));
  auto late = Http(l.port(), "GET", "/v1/state/at?seq=999");
  CHECK(late.status == 400);
  CHECK_THAT(late.body, Catch::Contains("past the last applied seq"));
  CHECK(Http(l.port(), "GET", "/v1/state/at?seq=x").status == 400);
  auto without = Http(l.port(), "GET", "/v1/state/at");
  CHECK(without.status == 400);
  CHECK_THAT(without.body, Catch::Contains("query seq: required"));
  CHECK(Http(l.port(), "GET", "/v1/state/at?seq=1&limit=y").status == 400);
  // 0 items per pool is no answer (the listings would read it as "all").
  auto none = Http(l.port(), "GET", "/v1/state/at?seq=1&limit=0");
  CHECK(none.status == 400);
  CHECK_THAT(none.body, Catch::Contains("query limit"));
  // The CLI's seq options are checked as strictly.
  for (const char* bad : {"", "-1", "0", "0x10", "99999999999999999999"}) {
    auto r = Limbic({"--state", state, "state", "digest", "--at-seq", bad});
    INFO(bad << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--at-seq: must be a seq"));
  }
}

TEST_CASE("fork over HTTP: a sandbox as of a seq, and how to run it", "[api][ui][fork]") {
  TempDir dir;
  const std::string state = dir / "state";
  const std::string root = state + "-forks";  // api.fork_root's default
  RunningLimbic l(dir, BaseConfig(dir));
  REQUIRE(l.port() != 0);
  auto p = HttpJson(l.port(), "POST", "/v1/percepts", Percept("chat"));
  REQUIRE(p.status == 201);
  const uint64_t seq = p.Json()["seq"];
  REQUIRE(HttpJson(l.port(), "POST", "/v1/threads", {{"goal", "later"}}).status == 201);

  auto f = HttpJson(l.port(), "POST", "/v1/fork", {{"at_seq", seq}, {"into", "a"}});
  INFO(f.body);
  REQUIRE(f.status == 201);
  json info = f.Json();
  CHECK(info["into"] == root + "/a");
  CHECK(info["at_seq"] == seq);
  CHECK(info["digest"] == CliDigest(state, {"--at-seq", std::to_string(seq)}));
  CHECK(info["command"] == "limbic run --state " + root + "/a --port 0");
  CHECK(std::filesystem::exists(root + "/a/sandbox.json"));
  auto d = Limbic({"--state", root + "/a", "--json", "state", "digest"});
  REQUIRE(d.exit_code == 0);
  CHECK(json::parse(d.out)["digest"] == info["digest"]);

  // Without `into`: named by the seq, under the root.
  auto beside = HttpJson(l.port(), "POST", "/v1/fork", {{"at_seq", seq}});
  REQUIRE(beside.status == 201);
  CHECK(beside.Json()["into"] == root + "/fork-" + std::to_string(seq));
  auto second = HttpJson(l.port(), "POST", "/v1/fork", {{"at_seq", seq}});
  REQUIRE(second.status == 201);
  CHECK(second.Json()["into"] == root + "/fork-" + std::to_string(seq) + "-2");
  // At a time: named by the seq that time comes to, not the applied one.
  const std::string at_time = Http(l.port(), "GET", "/v1/events?type=percept_arrived").Json()["events"][0]["ts"];
  auto by_time = HttpJson(l.port(), "POST", "/v1/fork", {{"at_time", at_time}});
  INFO(by_time.body);
  REQUIRE(by_time.status == 201);
  CHECK(by_time.Json()["at_seq"] == seq);
  CHECK(by_time.Json()["into"] == root + "/fork-" + std::to_string(seq) + "-3");
  CHECK(std::filesystem::exists(root + "/fork-" + std::to_string(seq) + "-3/sandbox.json"));
  // A duration before now, as `limbic fork --at-time 10m` takes it: a
  // millisecond ago is after every event here.
  auto ago = HttpJson(l.port(), "POST", "/v1/fork", {{"at_time", "1ms"}, {"into", "ago"}});
  INFO(ago.body);
  CHECK(ago.status == 201);
  auto garbled = HttpJson(l.port(), "POST", "/v1/fork", {{"at_time", "soon"}});
  CHECK(garbled.status == 400);
  CHECK_THAT(garbled.body, Catch::Contains("at_time"));

  // Refusals name the field.
  auto taken = HttpJson(l.port(), "POST", "/v1/fork", {{"at_seq", seq}, {"into", "a"}});
  CHECK(taken.status == 400);
  CHECK_THAT(taken.body, Catch::Contains("taken"));
  CHECK(HttpJson(l.port(), "POST", "/v1/fork", {{"at_seq", 0}}).status == 400);
  CHECK(HttpJson(l.port(), "POST", "/v1/fork", json::object()).status == 400);
  auto unknown = HttpJson(l.port(), "POST", "/v1/fork", {{"at_sq", 1}});
  CHECK(unknown.status == 400);
  CHECK_THAT(unknown.body, Catch::Contains("at_sq"));
  CHECK(HttpJson(l.port(), "POST", "/v1/fork", {{"at_seq", 999}}).status == 400);
}

TEST_CASE("fork over HTTP goes only under api.fork_root, as one name, never through a symlink",
          "[api][fork][boundary]") {
  TempDir dir, elsewhere;
  const std::string state = dir / "state";
  const std::string root = dir / "sandboxes";
  json config = BaseConfig(dir);
  config["api"]["fork_root"] = root;
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    REQUIRE(HttpJson(l.port(), "POST", "/v1/percepts", Percept("chat")).status == 201);
    REQUIRE(HttpJson(l.port(), "POST", "/v1/consolidate", json::object()).status / 100 == 2);
    std::filesystem::create_directories(root);
    std::filesystem::create_symlink(elsewhere / "nowhere", root + "/dangling");
    std::filesystem::create_symlink(elsewhere.path(), root + "/link");
    std::filesystem::create_directories(root + "/full/x");

    const std::string events_file = state + "/events/00000000000000000999.jsonl";
    struct Case {
      json into;
      std::string says;
    };
    const std::vector<Case> refused = {
        {events_file, "one path segment"},
        {state + "/archive/archive/2026-11-27.json", "one path segment"},
        {state + "/db/inner", "one path segment"},
        {state + "/memory/inner", "one path segment"},
        {elsewhere / "x", "one path segment"},
        {"../state", "one path segment"},
        {"..", "must not be"},
        {".", "must not be"},
        {"", "empty"},
        {"a\nb", "U+000A"},
        {"a\tb", "U+0009"},
        {"a\xc2\x85" "b", "U+0085"},     // NEL, a C1 control
        {"a\xe2\x80\xae" "b", "U+202E"},  // a bidi override
        {"a\xe2\x81\xa6" "b", "U+2066"},  // a bidi isolate
        {std::string(300, 'x'), "more than 128"},
        {"dangling", "symlink"},
        {"link", "symlink"},
        {"full", "taken"},
        {7, "must be a name"},
    };
    for (const Case& c : refused) {
      auto r = HttpJson(l.port(), "POST", "/v1/fork", {{"at_seq", 1}, {"into", c.into}});
      INFO(c.into.dump() << " -> " << r.status << " " << r.body);
      CHECK(r.status == 400);
      CHECK_THAT(r.body, Catch::Contains(c.says));
      CHECK_THAT(r.body, Catch::Contains("into"));
    }
    CHECK_FALSE(std::filesystem::exists(std::filesystem::symlink_status(events_file)));
    CHECK_FALSE(std::filesystem::exists(elsewhere / "nowhere"));
    CHECK(std::filesystem::is_empty(elsewhere.path()));
    // A name that is fine is made under the root.
    auto ok = HttpJson(l.port(), "POST", "/v1/fork", {{"at_seq", 1}, {"into", "née-1"}});
    INFO(ok.body);
    REQUIRE(ok.status == 201);
    CHECK(ok.Json()["into"] == root + "/née-1");
  }
  // Nothing was made inside the state dir: it checks and starts as before.
  for (const std::string& path : {state + "/events/00000000000000000999.jsonl",
                                  state + "/archive/archive/2026-11-27.json", state + "/db/inner",
                                  state + "/memory/inner"}) {
    INFO(path);
    CHECK_FALSE(std::filesystem::exists(std::filesystem::symlink_status(path)));
  }
  auto fsck = Limbic({"--state", state, "fsck"});
  INFO(fsck.out << fsck.err);
  CHECK(fsck.exit_code == 0);
  RunningLimbic again(dir, config);
  CHECK(again.port() != 0);
}

TEST_CASE("api.fork_root inside the state dir is refused at start", "[api][fork][boundary]") {
  TempDir dir;
  for (const std::string& root : {dir / "state", dir / "state/forks", dir / "state/events"}) {
    json config = BaseConfig(dir);
    config["api"]["fork_root"] = root;
    std::ofstream(dir / "c.json") << config.dump();
    auto r = Limbic({"--state", dir / "state", "run", "--config", dir / "c.json"});
    INFO(root << ": " << r.err);
    CHECK(r.exit_code != 0);
    CHECK_THAT(r.err, Catch::Contains("api.fork_root") && Catch::Contains("inside the state dir"));
  }
}

TEST_CASE("a dead action is sent again: action_retried by its actor, then delivered",
          "[api][ui][outbox]") {
  TempDir dir;
  ScriptedServer hook({404, 201});
  const json effectors = {
      {"hook",
       {{"kind", "http"}, {"url", "http://127.0.0.1:" + std::to_string(hook.port()) + "/in"}}}};
  RunningLimbic l(dir, BaseConfig(dir, effectors));
  REQUIRE(l.port() != 0);
  auto a = HttpJson(l.port(), "POST", "/v1/actions", {{"effector", "hook"}, {"type", "ping"}});
  REQUIRE(a.status == 201);
  const std::string id = a.Json()["id"];
  json dead =
      WaitJson(l.port(), "/v1/actions/" + id, [](const json& j) { return j["status"] == "dead"; });
  CHECK_THAT(dead["last_error"].get<std::string>(), Catch::Contains("404"));

  auto retry = Http(l.port(), "POST", "/v1/actions/" + id + "/retry",
                    R"({"reason": "fixed the URL"})", {{"X-Limbic-Actor", "ui"}});
  INFO(retry.body);
  REQUIRE(retry.status == 200);
  CHECK(retry.Json()["events"][0]["type"] == "action_retried");
  json done = WaitJson(l.port(), "/v1/actions/" + id,
                       [](const json& j) { return j["status"] == "complete"; });
  CHECK(done["attempts"] == 1);  // a fresh budget
  REQUIRE(hook.WaitFor(2));
  // The same idempotency key both times: the receiver can tell.
  auto requests = hook.requests();
  CHECK(requests[0].headers["idempotency-key"] == requests[1].headers["idempotency-key"]);

  json events = Http(l.port(), "GET", "/v1/events?type=action_retried").Json()["events"];
  REQUIRE(events.size() == 1);
  CHECK(events[0]["actor"] == "ui");
  CHECK(events[0]["reason"] == "fixed the URL");
  // Only a dead action: this one is complete now.
  auto twice = HttpJson(l.port(), "POST", "/v1/actions/" + id + "/retry", json::object());
  CHECK(twice.status == 409);
  CHECK(HttpJson(l.port(), "POST", "/v1/actions/nope/retry", json::object()).status == 404);
  json why = Http(l.port(), "GET", "/v1/why/" + id).Json();
  bool seen = false;
  for (const json& step : why["chain"]) seen = seen || step["type"] == "action_retried";
  CHECK(seen);
}

TEST_CASE("events filtered by actor, id and time, paged through the log", "[api][ui]") {
  TempDir dir;
  RunningLimbic l(dir, BaseConfig(dir));
  REQUIRE(l.port() != 0);
  auto a =
      Http(l.port(), "POST", "/v1/percepts", Percept("chat").dump(), {{"X-Limbic-Actor", "ui"}});
  REQUIRE(a.status == 201);
  const std::string id = a.Json()["id"];
  // A percept whose data holds the actor and the id: not theirs.
  json decoy = Percept("chat");
  decoy["data"] = {{"actor", "ui"}, {"ref", id}};
  REQUIRE(HttpJson(l.port(), "POST", "/v1/percepts", decoy).status == 201);
  REQUIRE(HttpJson(l.port(), "POST", "/v1/percepts/" + id + "/drop", json::object()).status == 200);

  json by_actor = Http(l.port(), "GET", "/v1/events?actor=ui").Json();
  REQUIRE(by_actor["events"].size() == 1);
  CHECK(by_actor["events"][0]["percept_id"] == id);
  CHECK(by_actor["scanned_to"] == by_actor["last_seq"]);
  json by_id = Http(l.port(), "GET", "/v1/events?id=" + id).Json();
  REQUIRE(by_id["events"].size() == 2);
  CHECK(by_id["events"][1]["type"] == "percept_dropped");
  json both = Http(l.port(), "GET", "/v1/events?id=" + id + "&type=percept_dropped").Json();
  CHECK(both["events"].size() == 1);
  // Paging: one match per answer, going on from the last seq looked at.
  json page = Http(l.port(), "GET", "/v1/events?id=" + id + "&limit=1").Json();
  REQUIRE(page["events"].size() == 1);
  CHECK(page["scanned_to"] == 1);
  json next = Http(l.port(), "GET", "/v1/events?id=" + id + "&limit=1&after=1").Json();
  CHECK(next["events"][0]["type"] == "percept_dropped");

  CHECK(Http(l.port(), "GET", "/v1/events?since=2000-01-01T00:00:00Z").Json()["events"].size() ==
        3);
  CHECK(Http(l.port(), "GET", "/v1/events?until=2000-01-01T00:00:00Z").Json()["events"].empty());
  auto bad = Http(l.port(), "GET", "/v1/events?since=yesterday");
  CHECK(bad.status == 400);
  CHECK_THAT(bad.body, Catch::Contains("query since"));
}

TEST_CASE("a reflex rule checked with dry_run: the same errors, nothing saved", "[api][ui]") {
  TempDir dir;
  RunningLimbic l(dir, BaseConfig(dir));
  REQUIRE(l.port() != 0);
  json rule = {{"when", {{"source", "chat"}}},
               {"then", {{{"send", {{"effector", "log"}, {"type", "ack"}}}}}}};
  auto ok = HttpJson(l.port(), "PUT", "/v1/reflexes/r1?dry_run=true", rule);
  REQUIRE(ok.status == 200);
  CHECK(ok.Json()["valid"] == true);
  CHECK(ok.Json()["rule"]["id"] == "r1");
  CHECK(Http(l.port(), "GET", "/v1/reflexes/r1").status == 404);
  CHECK(Http(l.port(), "GET", "/v1/events?type=reflex_put").Json()["events"].empty());

  rule["then"][0]["send"]["effector"] = "nowhere";
  auto bad = HttpJson(l.port(), "PUT", "/v1/reflexes/r1?dry_run=true", rule);
  CHECK(bad.status == 400);
  CHECK_THAT(bad.body, Catch::Contains("nowhere"));
  CHECK(HttpJson(l.port(), "PUT", "/v1/reflexes/r1?dry_run=maybe", rule).status == 400);
}

}  // namespace inspector_api_test
