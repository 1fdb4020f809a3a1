// Hostile input through the real binary (issue 22 items 1 and 2): JSON nested
// past api.max_json_depth, numbers beyond a double, bodies that are not
// objects, ids that are not ids. Each is refused with a 4xx (an MCP error, a
// config that does not load, a sensor line skipped), nothing is written, the
// runtime stays up, and a SIGKILL and restart find the same state.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "http.h"
#include "runtime_util.h"

using nlohmann::json;
using namespace limbic::testing;

namespace {

// `depth` arrays around 1: "[[[1]]]" is depth 3.
std::string Nested(size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

// The config of these tests: bodies up to 1 MiB, so that depth (not size)
// is what refuses the nested ones; a webhook sensor whose data is the body.
json HostileConfig(const TempDir& dir) {
  json config = BaseConfig(
      dir, json::object(),
      {{"hook", {{"kind", "webhook"}, {"source", "hook"}, {"type", "t"}, {"data", ""}}}});
  config["api"]["body_limit"] = 1 << 20;
  return config;
}

uint64_t AppliedSeq(uint16_t port) {
  auto health = Http(port, "GET", "/healthz");
  REQUIRE(health.status == 200);
  return health.Json()["applied_seq"].get<uint64_t>();
}

// Nothing was written after `seq` but the loop's own reflex cursor
// (reflexes_evaluated, each second after percepts arrived): what a
// refused or read-only request must leave behind.
void CheckNothingWrittenAfter(uint16_t port, uint64_t seq) {
  auto reply = Http(port, "GET", "/v1/events?after=" + std::to_string(seq) + "&limit=10000");
  REQUIRE(reply.status == 200);
  for (const auto& e : reply.Json()["events"]) {
    INFO(e.dump());
    CHECK(e["type"] == "reflexes_evaluated");
  }
}

// Every GET route docs/api.md lists, its {parameters} filled in.
std::vector<std::string> DocumentedGetRoutes() {
  std::ifstream in(std::string(LIMBIC_SOURCE_DIR) + "/docs/api.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  std::set<std::string> routes;
  const std::regex route("`GET (/[^` ?]*)");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), route); it != std::sregex_iterator();
       ++it) {
    std::string path = (*it)[1];
    path = std::regex_replace(path, std::regex("\\{date\\}"), "2026-01-01");
    path = std::regex_replace(path, std::regex("\\{[a-z_]+\\}"), "x-1");
    routes.insert(path);
  }
  return {routes.begin(), routes.end()};
}

// The parameters a route takes, as its answer to an unknown one names them
// ("... takes a, b" or "... takes none").
std::vector<std::string> ParametersOf(uint16_t port, const std::string& path) {
  auto reply = Http(port, "GET", path + "?zz_unknown=1");
  INFO(path << " -> " << reply.status << " " << reply.body);
  REQUIRE(reply.status == 400);
  const std::string message = reply.Json()["error"]["message"].get<std::string>();
  REQUIRE_THAT(message, Catch::StartsWith("query zz_unknown: unknown parameter; GET /"));
  std::vector<std::string> names;
  const size_t takes = message.rfind(" takes ");
  REQUIRE(takes != std::string::npos);
  std::string list = message.substr(takes + 7);
  if (list == "none") return names;
  std::stringstream parts(list);
  for (std::string name; std::getline(parts, name, ',');)
    names.push_back(name.substr(name.find_first_not_of(' ')));
  return names;
}

struct Refusal {
  std::string method, path, body;
  std::string code;     // the error code expected ("" = any)
  std::string mention;  // a part of the message expected ("" = any)
};

}  // namespace

TEST_CASE("hostile HTTP bodies are refused with 400, nothing is written, the runtime lives on",
          "[hostile]") {
  TempDir dir;
  const std::string state = dir / "state";
  json events_before;
  {
    RunningLimbic l(dir, HostileConfig(dir));
    REQUIRE(l.port() != 0);
    // Some state to keep: a percept, a thread.
    REQUIRE(HttpJson(l.port(), "POST", "/v1/percepts",
                     {{"source", "s"}, {"type", "t"}, {"id", "p-1"}, {"intensity", 0.5}})
                .status == 201);
    REQUIRE(HttpJson(l.port(), "POST", "/v1/threads", {{"goal", "g"}, {"id", "t-1"}}).status ==
            201);
    const uint64_t seq = AppliedSeq(l.port());

    const std::string digits(400, '9');
    const std::vector<Refusal> refusals = {
        // Item 1: the three repros, and the webhook sensor's body.
        {"POST", "/v1/actions", R"({"effector":"log","type":"t","payload":)" + Nested(60000) + "}",
         "json_too_deep", "nested deeper than 128 (api.max_json_depth)"},
        {"POST", "/v1/percepts", R"({"source":"s","type":"t","data":)" + Nested(80000) + "}",
         "json_too_deep", "nested deeper than 128"},
        {"POST", "/v1/percepts", R"({"source":"s","type":"t","data":)" + Nested(128) + "}",
         "json_too_deep", "at byte 160"},
        {"POST", "/v1/sensors/hook", Nested(200000), "json_too_deep", "nested deeper than 128"},
        // Item 2: numbers beyond a double, named by their key.
        {"POST", "/v1/percepts", R"({"source":"s","type":"t","intensity":1e400})",
         "invalid_argument", "intensity: number out of range"},
        {"POST", "/v1/percepts", R"({"source":"s","type":"t","data":{"n":)" + digits + "}}",
         "invalid_argument", "data.n: number out of range"},
        {"POST", "/v1/actions", R"({"effector":"log","type":"t","payload":[)" + digits + "]}",
         "invalid_argument", "payload[0]: number out of range"},
        {"PATCH", "/v1/arousal", R"({"level":-1e999})", "invalid_argument",
         "level: number out of range"},
        // An id that is not UTF-8, let alone an id.
        {"PUT", "/v1/reflexes/%ff", R"({"when":{"source":"s"},"then":[]})", "invalid_argument",
         "path id: not valid UTF-8"},
    };
    for (const Refusal& r : refusals) {
      INFO(r.method << " " << r.path << " " << r.body.substr(0, 80));
      auto reply = Http(l.port(), r.method, r.path, r.body);
      CHECK(reply.status == 400);
      json error = reply.Json()["error"];
      CHECK(error["code"] == r.code);
      CHECK_THAT(error["message"].get<std::string>(), Catch::Contains(r.mention));
      CheckNothingWrittenAfter(l.port(), seq);
    }

    // Every route that takes a body refuses one that is not a JSON object.
    const std::vector<std::pair<std::string, std::string>> routes = {
        {"POST", "/v1/percepts"},
        {"POST", "/v1/percepts/p-1/assign"},
        {"POST", "/v1/percepts/p-1/process"},
        {"POST", "/v1/percepts/p-1/drop"},
        {"DELETE", "/v1/percepts/p-1"},
        {"POST", "/v1/threads"},
        {"PATCH", "/v1/threads/t-1"},
        {"DELETE", "/v1/threads/t-1"},
        {"PATCH", "/v1/arousal"},
        {"PUT", "/v1/arousal"},
        {"POST", "/v1/actions"},
        {"POST", "/v1/actions/prune"},
        {"PUT", "/v1/reflexes/r-1"},
        {"DELETE", "/v1/reflexes/r-1"},
        {"POST", "/v1/reflexes/r-1/enable"},
        {"POST", "/v1/reflexes/r-1/disable"},
        {"POST", "/v1/consolidate"},
        {"POST", "/v1/archive/rollup"},
        {"POST", "/v1/archive/blink"},
        {"POST", "/v1/memory/facts"},
        {"POST", "/v1/memory/episodes"},
        {"POST", "/v1/memory/recall"},
        {"POST", "/v1/memory/associations"},
        {"POST", "/v1/memory/forget"},
        {"POST", "/v1/memory/decay"},
        {"POST", "/v1/memory/embed"},
        {"POST", "/v1/memory/import"},
        {"POST", "/v1/memory/ingest"},
        {"POST", "/v1/world/extract"},
        {"POST", "/v1/world/consolidate"},
    };
    for (const auto& [method, path] : routes) {
      const std::vector<std::string> bodies = {
          "[1,2]",  "\"x\"", "42", "null", "true", "{\"a\":1e400}", "{\"a\":" + Nested(129) + "}",
          "{\"a\":"};
      for (const std::string& body : bodies) {
        INFO(method << " " << path << " " << body.substr(0, 40));
        auto reply = Http(l.port(), method, path, body);
        CHECK(reply.status == 400);
        CHECK(reply.Json()["error"]["code"].is_string());
      }
    }
    CheckNothingWrittenAfter(l.port(), seq);

    // Objects with fields of the wrong type: never a 5xx.
    const json wrong = {{"source", 1},     {"type", json::array()},
                        {"text", 1},       {"date", "2026-01-01"},
                        {"id", 7},         {"goal", json::object()},
                        {"payload", 1},    {"effector", 1},
                        {"level", "high"}, {"query", 1},
                        {"k", "many"},     {"older_than", 5},
                        {"force", "yes"},  {"all", 1},
                        {"subject", 1},    {"items", "x"},
                        {"path", 1},       {"metadata", "x"},
                        {"status", 1},     {"reason", 1},
                        {"thread_id", 1}};
    for (const auto& [method, path] : routes) {
      for (const json& body : {wrong, json{{"text", 1}, {"date", "2026-01-01"}}}) {
        INFO(method << " " << path << " " << body.dump());
        auto reply = HttpJson(l.port(), method, path, body);
        CHECK(reply.status < 500);
      }
    }
    CHECK(Http(l.port(), "GET", "/healthz").status == 200);
    events_before = Http(l.port(), "GET", "/v1/events?limit=10000").Json()["events"];
    CHECK(l.child().Kill(SIGKILL) == -SIGKILL);
  }
  // A clean restart after SIGKILL: the pools are what the log says, and the
  // log holds what was acknowledged before the kill.
  RunResult verify = Limbic({"replay", "--verify", state});
  INFO(verify.out << verify.err);
  CHECK(verify.exit_code == 0);
  CHECK_THAT(verify.out, Catch::Contains("match"));
  RunningLimbic again(dir, HostileConfig(dir));
  REQUIRE(again.port() != 0);
  json events_after = Http(again.port(), "GET", "/v1/events?limit=10000").Json()["events"];
  REQUIRE(events_after.size() >= events_before.size());
  for (size_t i = 0; i < events_before.size(); ++i) CHECK(events_after[i] == events_before[i]);
  CHECK(Http(again.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("a jsonl sensor skips a line nested too deep or holding 1e400, naming why, and goes on",
          "[hostile]") {
  TempDir dir;
  const std::string feed = dir / "feed.jsonl";
  std::ofstream(feed) << R"({"source":"f","type":"t","data":)" << Nested(200000) << "}\n"
                      << R"({"source":"f","type":"t","intensity":1e400})"
                      << "\n"
                      << R"({"source":"f","type":"t","id":"good"})"
                      << "\n";
  json config = BaseConfig(dir, json::object(),
                           {{"feed", {{"kind", "jsonl"}, {"path", feed}, {"from", "start"}}}});
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  WaitJson(l.port(), "/v1/percepts/good",
           [](const json& p) { return p.value("id", "") == "good"; });
  CHECK(l.WaitForLog("sensor feed: line 1"));
  CHECK(l.WaitForLog("nested deeper than 128 (api.max_json_depth)"));
  CHECK(l.WaitForLog("intensity: number out of range"));
  // Only the good line was written.
  json percepts = Http(l.port(), "GET", "/v1/percepts").Json()["percepts"];
  CHECK(percepts.size() == 1);
  CHECK(Http(l.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("limbic mcp answers a line nested 200000 deep with a parse error and serves the next",
          "[hostile]") {
  TempDir dir;
  json config = BaseConfig(dir);
  std::ofstream(dir / "limbic.json") << config.dump(2);
  Child mcp({LimbicBinary(), "--state", dir / "state", "mcp", "--config", dir / "limbic.json"},
            StderrFile{dir / "mcp.log"});
  auto next = [&] {
    std::string line;
    REQUIRE(mcp.ReadLine(&line, 30000));
    json msg = json::parse(line, nullptr, false);
    REQUIRE(msg.is_object());
    return msg;
  };
  REQUIRE(mcp.Write(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":)" + Nested(200000) +
                    "}}\n"));
  json deep = next();
  CHECK(deep["id"].is_null());
  CHECK(deep["error"]["code"] == -32700);
  CHECK_THAT(deep["error"]["message"].get<std::string>(),
             Catch::Contains("nested deeper than 128 (api.max_json_depth)"));
  REQUIRE(mcp.Write(R"({"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":1e400}})"
                    "\n"));
  json huge = next();
  CHECK(huge["id"].is_null());
  CHECK(huge["error"]["code"] == -32700);
  CHECK_THAT(huge["error"]["message"].get<std::string>(), Catch::Contains("params.x"));
  // Valid JSON that is not a request: invalid request, not a parse error.
  REQUIRE(mcp.Write("[" + Nested(100) + "]\n"));
  CHECK(next()["error"]["code"] == -32600);
  REQUIRE(mcp.Write(R"({"jsonrpc":"2.0","id":3,"method":"ping"})"
                    "\n"));
  json pong = next();
  CHECK(pong["id"] == 3);
  CHECK(pong["result"] == json::object());
  mcp.CloseStdin();
  int code = -99;
  CHECK(mcp.WaitFor(30000, &code));
  CHECK(code == 0);
}

TEST_CASE("a config holding 1e400 or nested too deep does not load: exit 1 naming file and key",
          "[hostile]") {
  TempDir dir;
  const std::string file = dir / "bad.json";
  std::ofstream(file) << R"({"api": {"port": 0}, "recency": {"percept_half_life": 1e400}})";
  RunResult r = Limbic({"--state", dir / "state", "run", "--config", file});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains(file));
  CHECK_THAT(r.err, Catch::Contains("recency.percept_half_life: number out of range"));

  std::ofstream(file, std::ios::trunc)
      << R"({"api": {"port": 0}, "sensors": )" << Nested(200000) << "}";
  r = Limbic({"--state", dir / "state", "run", "--config", file});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains(file));
  CHECK_THAT(r.err, Catch::Contains("nested deeper than 128"));

  // A reflexes file is outside input too.
  std::ofstream(dir / "rules.json") << R"({"reflexes": [{"id": "r", "priority": 1e999}]})";
  std::ofstream(file, std::ios::trunc) << R"({"api": {"port": 0}, "reflexes": "rules.json"})";
  r = Limbic({"--state", dir / "state", "run", "--config", file});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("rules.json"));
  CHECK_THAT(r.err, Catch::Contains("reflexes[0].priority: number out of range"));

  // An integer or a duration beyond its range names the key as well.
  std::ofstream(file, std::ios::trunc)
      << R"({"api": {"port": 0, "max_json_depth": 100000}, "outbox": {"backoff": "99999999999999d"}})";
  r = Limbic({"--state", dir / "state", "run", "--config", file});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("api.max_json_depth: must be an integer in [1, 1024]"));
  CHECK_THAT(r.err, Catch::Contains("outbox.backoff: duration too large"));
}

TEST_CASE("CLI JSON arguments are outside input: too deep or 1e400 is refused, nothing written",
          "[hostile]") {
  TempDir dir;
  const std::string state = dir / "state";
  RunResult r = Limbic({"--state", state, "action", "enqueue", "--effector", "log", "--type", "t",
                        "--payload", Nested(1000)});
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("--payload: JSON nested deeper than 128"));
  r = Limbic({"--state", state, "percept", "import", "-"},
             R"({"source":"s","type":"t","intensity":1e400})"
             "\n"
             R"({"source":"s","type":"t","id":"ok"})"
             "\n");
  CHECK_THAT(r.err + r.out, Catch::Contains("intensity: number out of range"));
  RunResult listed = Limbic({"--state", state, "--json", "percept", "list"});
  CHECK_THAT(listed.out, Catch::Contains("\"ok\""));
  CHECK(listed.out.find("1e400") == std::string::npos);
}

TEST_CASE("a deep action an older limbic stored: start reports it, delivers it, fsck warns",
          "[hostile][deep]") {
  TempDir dir;
  // The door refuses it now, so it is written as an older binary wrote it:
  // a well-formed log line, and the pools rebuilt from the log by replay.
  const std::string payload = "{\"x\":" + Nested(60000) + "}";
  const std::string file = dir / "old.jsonl";
  std::ofstream(file)
      << R"({"v":1,"seq":1,"ts":"2026-01-01T00:00:00.000Z","type":"action_enqueued",)"
      << R"("action_id":"a-deep","action_type":"note","effector":"out","idempotency_key":"a-deep",)"
      << R"("payload":)" << payload << "}\n";
  const std::string state = dir / "state";
  RunResult replayed = Limbic({"replay", "--from", file, "--into", state});
  REQUIRE(replayed.exit_code == 0);

  // fsck: readable stored data, so a warning and exit 0, naming the place.
  RunResult fsck = Limbic({"--state", state, "fsck"});
  INFO(fsck.out << fsck.err);
  CHECK(fsck.exit_code == 0);
  CHECK_THAT(fsck.out, Catch::Contains("warning: "));
  CHECK_THAT(fsck.out, Catch::Contains("00000000000000000001.jsonl offset 0: seq 1 "
                                       "(action_enqueued a-deep) nests 60002 deep, beyond "
                                       "api.max_json_depth 128"));
  CHECK_THAT(Limbic({"--state", state, "fsck", "--max-json-depth", "1024"}).out,
             Catch::Contains("nests 60002 deep, beyond api.max_json_depth 1024"));

  // Without pools, start re-applies the whole log: what recovery read is
  // scanned too.
  std::filesystem::remove_all(state + "/db");
  const std::string out = dir / "out.jsonl";
  json config = BaseConfig(dir, {{"out", {{"kind", "file"}, {"path", out}}}});
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  // The start report: the event recovery re-applied, and the open action
  // (what the outbox acts on).
  auto logged = [&](const std::string& needle) {
    for (const std::string& line : l.log())
      if (line.find(needle) != std::string::npos) return true;
    return false;
  };
  CHECK(logged("start: " + state +
               "/events/00000000000000000001.jsonl offset 0: seq 1 (action_enqueued a-deep) "
               "nests 60002 deep, beyond api.max_json_depth 128"));
  CHECK(logged("start: action a-deep (pending, effector out) nests 60002 deep"));
  CHECK(l.WaitForLog("fsck` lists every such event in the log"));
  // Delivered as stored, the runtime alive.
  json action = WaitJson(l.port(), "/v1/actions/a-deep",
                         [](const json& a) { return a.value("status", "") == "complete"; });
  CHECK(action["attempts"] == 1);
  std::ifstream in(out);
  std::string delivered;
  std::getline(in, delivered);
  CHECK(delivered.find("\"payload\":" + payload) != std::string::npos);
  CHECK(Http(l.port(), "GET", "/healthz").status == 200);
}

// Issue 38 item 2: no query string gets a 5xx. Every GET route (from
// docs/api.md), every parameter it takes (from its own answer to an unknown
// one) and one it does not: invalid UTF-8, a control character, a bidi
// override, a malformed escape, an empty value, 10 KB, the key twice.
TEST_CASE("hostile query strings on every GET route get a 4xx naming the parameter, never a 5xx",
          "[hostile]") {
  TempDir dir;
  RunningLimbic l(dir, BaseConfig(dir));
  REQUIRE(l.port() != 0);
  REQUIRE(
      HttpJson(l.port(), "POST", "/v1/percepts", {{"source", "s"}, {"type", "t"}, {"id", "x-1"}})
          .status == 201);
  const uint64_t seq = AppliedSeq(l.port());
  const std::vector<std::string> routes = DocumentedGetRoutes();
  REQUIRE(routes.size() >= 30);
  size_t requests = 0, parameters = 0;
  auto expect = [&](const std::string& target, int low, int high, const std::string& mention) {
    auto reply = Http(l.port(), "GET", target);
    ++requests;
    INFO(target.substr(0, 120) << " -> " << reply.status << " " << reply.body.substr(0, 300));
    CHECK(reply.status >= low);
    CHECK(reply.status < high);
    if (!mention.empty()) CHECK_THAT(reply.body, Catch::Contains(mention));
  };
  for (const std::string& path : routes) {
    if (path.rfind("/ui", 0) == 0) continue;  // the inspector's files: below
    std::vector<std::string> names = ParametersOf(l.port(), path);
    names.push_back("zz_unknown");
    for (const std::string& p : names) {
      ++parameters;
      const bool known = p != "zz_unknown";
      const std::string q = path + "?" + p + "=";
      // What the value is refused for, when the name is known.
      auto why = [&](const std::string& what) {
        return known ? "query " + p + ": " + what : "query " + p + ": unknown parameter";
      };
      expect(q + "%ff", 400, 401, why("not valid UTF-8"));
      expect(q + "a%ffb", 400, 401, why("not valid UTF-8"));
      expect(q + "a%01b", 400, 401, "query " + p + ": ");
      expect(q + "%E2%80%AE", 400, 401, "query " + p + ": ");
      expect(q + "%zz", 400, 401, "query " + p + ": malformed percent-encoding");
      expect(q + std::string(10240, 'a'), 400, 500, "");
      expect(q + std::string(3000, '7'), 400, 401, "query " + p + ": ");
      // An empty value is no value: whatever the route makes of its absence.
      if (path != "/v1/events/stream") expect(q, 200, 500, "");
      const bool list = p == "type" && path.rfind("/v1/events", 0) == 0;
      if (path != "/v1/events/stream" || !list)
        expect(q + "1&" + p + "=1", list ? 200 : 400, list ? 500 : 401,
               known && !list ? "query " + p + ": given more than once" : "");
    }
    // A route parameter gets the same care.
    for (const std::string filled : {"x-1", "2026-01-01"}) {
      const size_t at = path.find(filled);
      if (at == std::string::npos) continue;
      for (const char* bad : {"%ff", "a%01", "%E2%80%AE", "%C2%85", "%4"}) {
        std::string target = path;
        target.replace(at, filled.size(), bad);
        expect(target, 400, 401, "path");
      }
    }
  }
  CHECK(parameters >= 60);
  // The inspector's files take no query either, and no stray one crashes.
  expect("/ui/?x=%ff", 400, 401, "");
  INFO(requests << " requests");
  CHECK(Http(l.port(), "GET", "/healthz").status == 200);
  CheckNothingWrittenAfter(l.port(), seq);
}
