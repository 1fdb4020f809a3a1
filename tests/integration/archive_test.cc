// The archive through the real binary: consolidation over HTTP, staging
// following the log across a SIGKILL, rollup, search, walk, verify, and
// the same from the command line once the runtime has stopped.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "http.h"
#include "runtime_util.h"

using nlohmann::json;
using namespace limbic::testing;

namespace {

json ArchiveConfig(const TempDir& dir) {
  json config = BaseConfig(dir);
  config["archive"] = {{"consolidate_every", 0},  // on demand only
                       {"threads_after", "0s"},
                       {"percepts_after", "0s"},
                       {"actions_after", "0s"},
                       {"rollup", false}};
  return config;
}

std::string Today() {
  std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

}  // namespace

TEST_CASE("finished threads are consolidated, staged, rolled up and found again", "[archive]") {
  TempDir dir;
  json config = ArchiveConfig(dir);
  std::string state = dir / "state";
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    uint16_t port = l.port();
    REQUIRE(HttpJson(port, "POST", "/v1/threads", {{"id", "t-1"}, {"goal", "migrate the billing database"}})
                .status == 201);
    REQUIRE(HttpJson(port, "POST", "/v1/percepts",
                     {{"source", "chat"}, {"type", "msg"}, {"text", "postgres replica lag is growing"},
                      {"thread_id", "t-1"}})
                .status == 201);
    REQUIRE(HttpJson(port, "POST", "/v1/percepts", {{"source", "chat"}, {"type", "msg"}, {"text", "lunch?"}})
                .status == 201);
    // Nothing is finished yet.
    auto none = HttpJson(port, "POST", "/v1/consolidate", json::object());
    REQUIRE(none.status == 200);
    CHECK(none.Json()["entries"] == 0);
    REQUIRE(HttpJson(port, "PATCH", "/v1/threads/t-1", {{"status", "complete"}, {"outcome", "moved to pg16"}})
                .status == 200);
    auto done = HttpJson(port, "POST", "/v1/consolidate", json::object());
    REQUIRE(done.status == 200);
    CHECK(done.Json()["threads"] == 1);
    CHECK(done.Json()["percepts"] == 1);
    CHECK(Http(port, "GET", "/v1/threads/t-1").status == 404);

    // Staged entries are searchable before any rollup.
    auto found = Http(port, "GET", "/v1/archive/search?q=replica+lag").Json();
    REQUIRE(found["results"].size() == 1);
    CHECK(found["results"][0]["kind"] == "staged");
    CHECK_THAT(found["results"][0]["snippet"].get<std::string>(), Catch::Contains("replica lag"));

    auto blink = HttpJson(port, "POST", "/v1/archive/blink", {{"text", "remember: the deploy key rotates friday"}});
    REQUIRE(blink.status == 201);
    CHECK(HttpJson(port, "POST", "/v1/archive/blink", {{"txt", "x"}}).status == 400);
    // Killed before a rollup, and the staging files lost with it: staging
    // is rebuilt from the log on restart. Removed only once the process is
    // gone (Kill waits for it), since the staging writer may still be
    // appending until then.
    l.child().Kill(SIGKILL);
    std::filesystem::remove_all(state + "/archive/staging");
  }
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    uint16_t port = l.port();
    auto recall = Http(port, "GET", "/v1/archive/recall?k=2").Json();
    REQUIRE(recall["items"].size() == 2);
    CHECK_THAT(recall["items"][0]["text"].get<std::string>(), Catch::Contains("deploy key rotates"));
    CHECK_THAT(recall["items"][1]["text"].get<std::string>(), Catch::Contains("[episode] migrate the billing"));

    auto rolled = HttpJson(port, "POST", "/v1/archive/rollup", {{"date", Today()}});
    REQUIRE(rolled.status == 200);
    CHECK(rolled.Json()["rolled_up"][0]["added"] == 2);
    CHECK(HttpJson(port, "POST", "/v1/archive/rollup", {{"date", "2026-02-30"}}).status == 400);
    auto day = Http(port, "GET", "/v1/archive/days/" + Today());
    REQUIRE(day.status == 200);
    CHECK(day.Json()["prev_hash"].is_null());
    CHECK(Http(port, "GET", "/v1/archive/days/1999-01-01").status == 404);
    auto found = Http(port, "GET", "/v1/archive/search?q=replica").Json();
    REQUIRE(found["results"].size() == 1);
    CHECK(found["results"][0]["kind"] == "archived");
    CHECK(Http(port, "GET", "/v1/archive/search").status == 400);
    auto verify = Http(port, "GET", "/v1/archive/verify").Json();
    CHECK(verify["ok"] == true);
    CHECK(verify["documents"] == 1);
    auto walk = Http(port, "GET", "/v1/archive/days/" + Today() + "/walk?direction=sideways");
    CHECK(walk.status == 400);
    l.child().Kill(SIGTERM);
    CHECK(l.child().Wait() == 0);
  }
  // The command line sees the same archive.
  auto r = Limbic({"--state", state, "--json", "archive", "search", "deploy key"});
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["results"][0]["date"] == Today());
  r = Limbic({"--state", state, "archive", "verify"});
  CHECK(r.exit_code == 0);
  // Tampering is named.
  std::string path = state + "/archive/archive/" + Today() + ".json";
  json doc = json::parse(std::ifstream(path));
  doc["content"] = doc["content"].get<std::string>() + " (edited)";
  std::ofstream(path) << doc.dump();
  r = Limbic({"--state", state, "archive", "verify"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains(Today()));
}

TEST_CASE("limbic consolidate and blink work offline and replay reproduces them", "[archive]") {
  TempDir dir;
  std::string state = dir / "state";
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--state", state});
    auto r = Limbic(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r;
  };
  run({"thread", "create", "--id", "t-1", "--goal", "write the report"});
  run({"percept", "add", "--source", "mail", "--type", "msg", "--text", "draft attached", "--thread", "t-1"});
  run({"thread", "update", "t-1", "--status", "complete"});
  auto r = run({"--json", "consolidate", "--threads-after", "0s"});
  CHECK(json::parse(r.out)["threads"] == 1);
  run({"archive", "blink", "note to self"});
  r = run({"--json", "archive", "stats"});
  CHECK(json::parse(r.out)["staged_pending"] == 2);
  r = Limbic({"--state", state, "consolidate", "--threads-after", "soon"});
  CHECK(r.exit_code == 2);
  r = Limbic({"--state", state, "archive", "show", "2026-13-01"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("not a date"));
  // A replay of the log gives the same pools.
  r = run({"replay", "--verify", state});
  CHECK_THAT(r.out, Catch::Contains("match"));
}
