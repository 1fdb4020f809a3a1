// The archive through the real binary: consolidation over HTTP, staging
// following the log across a SIGKILL, rollup, search, walk, verify, and
// the same from the command line once the runtime has stopped.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <thread>

#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace archive_test {

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

namespace {

const std::string kCombFixture = std::string(LIMBIC_SOURCE_DIR) + "/tests/archive/data/comb";

// The genuine COMB archive's documents copied as they are into the state
// dir's archive (no import): what a user who copied files would have.
void CopyCombInto(const std::string& state) {
  std::filesystem::create_directories(state + "/archive");
  std::filesystem::copy(kCombFixture + "/archive", state + "/archive/archive",
                        std::filesystem::copy_options::recursive);
}

}  // namespace

TEST_CASE("a day that does not parse degrades the archive instead of stopping limbic",
          "[archive]") {
  TempDir dir;
  std::string state = dir / "state";
  auto init =
      Limbic({"--state", state, "thread", "create", "--id", "t-1", "--goal", "start the state"});
  REQUIRE(init.exit_code == 0);
  CopyCombInto(state);
  // Not a document (RunningLimbic stops reading the log at "error", so
  // not a JSON syntax error here; the unit tests have those).
  std::ofstream(state + "/archive/archive/2026-03-02.json") << R"({"date": "2026-03-02"})";
  std::string path3 = state + "/archive/archive/2026-03-03.json";
  json doc3 = json::parse(std::ifstream(path3));
  doc3.erase("links");
  std::ofstream(path3) << doc3.dump();

  // verify reports both days and goes on; the other days read.
  auto r = Limbic({"--state", state, "archive", "verify"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out,
             Catch::Contains("2026-03-02: ") && Catch::Contains("2026-03-02.json: content is missing"));
  CHECK_THAT(r.out, Catch::Contains("2026-03-03: ") && Catch::Contains("links is missing"));
  CHECK_THAT(r.out, Catch::Contains("4 documents") && Catch::Contains("2 problems"));
  r = Limbic({"--state", state, "--json", "archive", "search", "pipeline"});
  REQUIRE(r.exit_code == 0);
  json hits = json::parse(r.out)["results"];
  REQUIRE(hits.size() == 1);
  CHECK(hits[0]["date"] == "2026-03-01");
  r = Limbic({"--state", state, "--json", "archive", "stats"});
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["documents"] == 2);
  CHECK(json::parse(r.out)["unreadable"].size() == 2);
  CHECK(Limbic({"--state", state, "archive", "show", "2026-03-04"}).exit_code == 0);

  // The runtime starts, degraded, and serves the rest.
  RunningLimbic l(dir, ArchiveConfig(dir));
  REQUIRE(l.port() != 0);
  CHECK(l.WaitForLog("archive degraded: 2 day(s) cannot be read"));
  auto answer = Http(l.port(), "GET", "/healthz");
  CHECK(answer.status == 200);  // the loop itself works
  json health = answer.Json();
  CHECK(health["status"] == "degraded");
  CHECK(health["reason"] == "archive days cannot be read");
  CHECK(health["archive"]["status"] == "degraded");
  REQUIRE(health["archive"]["unreadable"].size() == 2);
  CHECK(health["archive"]["unreadable"][0]["date"] == "2026-03-02");
  CHECK_THAT(Http(l.port(), "GET", "/metrics").body,
             Catch::Contains("limbic_archive_unreadable_days 2"));
  auto found = Http(l.port(), "GET", "/v1/archive/search?q=garden").Json();
  REQUIRE(found["results"].size() == 1);
  CHECK(found["results"][0]["date"] == "2026-03-04");

  // Mended, and the next archive job clears the mark.
  std::filesystem::copy_file(kCombFixture + "/archive/2026-03-02.json",
                             state + "/archive/archive/2026-03-02.json",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(kCombFixture + "/archive/2026-03-03.json", path3,
                             std::filesystem::copy_options::overwrite_existing);
  REQUIRE(HttpJson(l.port(), "POST", "/v1/archive/blink", {{"text", "mended"}}).status == 201);
  CHECK(WaitJson(l.port(), "/healthz", [](const json& h) {
          return h["archive"]["status"] == "ok";
        })["archive"]["status"] == "ok");
}

TEST_CASE("a genuine COMB archive is imported, verified, rolled up after and relinked",
          "[archive]") {
  TempDir dir;
  std::string state = dir / "state";
  auto run = [&](std::vector<std::string> args, int want = 0) {
    args.insert(args.begin(), {"--state", state});
    auto r = Limbic(args);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == want);
    return r;
  };
  // As copied, COMB's links are told apart from tampering (no
  // "semantic links are []" problems), and a rollup is not stopped by
  // COMB's metadata.
  run({"thread", "create", "--id", "t-1", "--goal", "start the state"});
  {
    TempDir copy;
    std::string raw = copy / "state";
    REQUIRE(Limbic({"--state", raw, "thread", "create", "--id", "t-1", "--goal", "x"}).exit_code ==
            0);
    CopyCombInto(raw);
    auto r = Limbic({"--state", raw, "archive", "verify"});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("note: 2026-03-02: links were computed by COMB's rules"));
  }

  // A COMB archive with a broken chain is refused, nothing written.
  TempDir bad;
  std::filesystem::copy(kCombFixture, bad / "comb", std::filesystem::copy_options::recursive);
  std::string bad2 = bad / "comb/archive/2026-03-02.json";
  json doc2 = json::parse(std::ifstream(bad2));
  doc2["content"] = doc2["content"].get<std::string>() + " (edited)";
  std::ofstream(bad2) << doc2.dump();
  auto r = run({"archive", "import", bad / "comb"}, 1);
  CHECK_THAT(r.err, Catch::Contains("2026-03-02.json: hash"));
  CHECK(json::parse(run({"--json", "archive", "stats"}).out)["documents"] == 0);

  r = run({"archive", "import", kCombFixture});
  CHECK_THAT(r.out, Catch::Contains("imported 4 documents; 4 with COMB's links kept"));
  r = run({"archive", "verify"});
  CHECK_THAT(r.out, Catch::Contains("4 documents") && Catch::Contains(": ok"));
  CHECK_THAT(r.out, Catch::Contains("note: 2026-03-04: links were computed by COMB's rules"));
  json shown = json::parse(run({"--json", "archive", "show", "2026-03-02"}).out);
  json comb = json::parse(std::ifstream(kCombFixture + "/archive/2026-03-02.json"));
  CHECK(shown["hash"] == comb["hash"]);
  CHECK(shown["links"] == comb["links"]);
  CHECK(shown["metadata"]["compaction_count"] == 2);
  run({"archive", "import", kCombFixture}, 1);  // not into a non-empty archive

  // A new day rolls up after COMB's days, and relinks them by limbic's rules.
  run({"archive", "blink", "the garden is fine again, thanks"});
  r = run({"--json", "archive", "rollup", "--date", Today()});
  CHECK(json::parse(r.out)["rolled_up"][0]["created"] == true);
  r = run({"archive", "verify"});
  CHECK_THAT(r.out, !Catch::Contains("note:"));
  CHECK(json::parse(run({"--json", "archive", "show", "2026-03-02"}).out)["hash"] == comb["hash"]);
  r = run({"--json", "archive", "relink"});
  CHECK(json::parse(r.out)["relinked"] == 0);  // the rollup already did
}

namespace {

// `n` heartbeats more than a day old (new, intensity 0.05) as a log, and
// `limbic replay` of it into `state`: a pool that expiry will empty.
void ExpiredPool(const TempDir& dir, const std::string& state, int n) {
  const std::string log = dir / "old.jsonl";
  {
    std::ofstream out(log);
    const long long now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    const long long first = now_ms - 3LL * 86400000;
    for (int i = 1; i <= n; ++i) {
      std::time_t secs = static_cast<std::time_t>((first + i * 10) / 1000);
      char ts[32];
      std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", std::gmtime(&secs));
      out << R"({"v":1,"seq":)" << i << R"(,"ts":")" << ts << "." << std::setw(3) << std::setfill('0')
          << (first + i * 10) % 1000 << R"(Z","type":"percept_arrived","intensity":0.05,"percept_id":"hb-)"
          << i << R"(","percept_type":"heartbeat","source":"timer"})" << "\n";
    }
  }
  auto r = Limbic({"replay", "--from", log, "--into", state});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
}

}  // namespace

TEST_CASE("a consolidation pass over thousands of expired percepts drains them in steps, off the loop",
          "[archive][consolidate]") {
  TempDir dir;
  const std::string state = dir / "state";
  const int n = 5000;
  ExpiredPool(dir, state, n);
  json config = ArchiveConfig(dir);
  config["archive"]["percepts_after"] = "1d";
  config["percepts"] = {{"expire_after", "1d"}};
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    // Two asks at once: the second is answered by the pass after the first.
    json first, second;
    std::thread other([&] { first = HttpJson(l.port(), "POST", "/v1/consolidate", json::object()).Json(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    auto r = HttpJson(l.port(), "POST", "/v1/consolidate", json::object());
    other.join();
    REQUIRE(r.status == 200);
    second = r.Json();
    INFO(first.dump() << " then " << second.dump());
    CHECK(first["expired"].get<int>() + second["expired"].get<int>() == n);
    CHECK(first["percepts"].get<int>() + second["percepts"].get<int>() == n);
    CHECK(l.WaitForLog("archive: consolidated"));
    // Nothing is left: the pool is empty, the entries staged.
    auto again = HttpJson(l.port(), "POST", "/v1/consolidate", json::object());
    CHECK(again.Json()["expired"] == 0);
    CHECK(Http(l.port(), "GET", "/v1/percepts?limit=5").Json()["percepts"].empty());
    auto stats = Http(l.port(), "GET", "/v1/archive/stats").Json();
    CHECK(stats["staged_pending"].get<int>() >= n / 200);
  }
  auto verify = Limbic({"replay", "--verify", state});
  INFO(verify.out << verify.err);
  CHECK(verify.exit_code == 0);
}

TEST_CASE("a runtime stopped during a consolidation pass answers, exits 0 and keeps a consistent state",
          "[archive][consolidate]") {
  TempDir dir;
  const std::string state = dir / "state";
  ExpiredPool(dir, state, 20000);
  json config = ArchiveConfig(dir);
  config["archive"]["percepts_after"] = "1d";
  config["percepts"] = {{"expire_after", "1d"}};
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  HttpReply answer;
  std::thread pass([&] { answer = HttpJson(l.port(), "POST", "/v1/consolidate", json::object()); });
  // Stop once the pass has committed something.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline &&
         Http(l.port(), "GET", "/v1/percepts?status=dropped&limit=1").Json()["percepts"].empty())
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(l.child().pid(), SIGTERM);
  pass.join();
  INFO(answer.status << " " << answer.body);
  CHECK((answer.status == 200 || answer.status == 0));  // answered, or the connection closed at exit
  CHECK(l.child().Wait() == 0);
  auto verify = Limbic({"replay", "--verify", state});
  INFO(verify.out << verify.err);
  CHECK(verify.exit_code == 0);
  auto fsck = Limbic({"--state", state, "fsck"});
  CHECK(fsck.exit_code == 0);
}

}  // namespace archive_test
