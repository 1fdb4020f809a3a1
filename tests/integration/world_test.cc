// The world model through the real binary: `limbic memory extract` on a
// daily log and on a day of the state dir, the graph, entities, surprise
// and consolidate commands, bad input, and the daily pass of `limbic run`
// over a log of earlier days.
#include <signal.h>

#include <catch2/catch.hpp>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace world_test {

using nlohmann::json;
using namespace limbic::testing;

namespace {

RunResult W(const TempDir& dir, std::vector<std::string> args, int want_exit = 0) {
  args.insert(args.begin(), {"--state", dir / "state", "memory"});
  RunResult r = Limbic(args);
  INFO("limbic memory " << args[3] << " ... stdout: " << r.out << " stderr: " << r.err);
  REQUIRE(r.exit_code == want_exit);
  return r;
}

json WJ(const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), "--json");
  return json::parse(W(dir, std::move(args)).out);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string DaysAgo(int days) {
  std::time_t t = std::time(nullptr) - days * 86400;
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

const char* kDailyLog =
    "# 2026-11-02\n"
    "\n"
    "## Morning\n"
    "- Alice Chen joined Acme Corp as CTO.\n"
    "- Deployed acme/billing using Terraform after review.\n"
    "- @bob_k asked about [[Event Sourcing]] in the standup. #architecture\n"
    "```\n"
    "Not An Entity In Code\n"
    "```\n";

}  // namespace

TEST_CASE("the world model from the command line", "[world]") {
  TempDir dir;
  std::string log = dir / "2026-11-02.md";
  std::ofstream(log) << kDailyLog;
  json x = WJ(dir, {"extract", log});
  CHECK(x["date"] == "2026-11-02");
  CHECK(x["extractor"] == "heuristic");
  CHECK(x["entities"].get<int>() >= 5);
  CHECK(x["pages_created"].get<int>() >= 5);
  std::string page = Slurp(dir / "state/memory/entities/Alice Chen.md");
  CHECK_THAT(page, Catch::StartsWith("# Alice Chen\n**Type:** person\n"));
  CHECK_THAT(page, Catch::Contains("### [[2026-11-02]]\n- Alice Chen joined Acme Corp as CTO."));
  CHECK_FALSE(std::filesystem::exists(dir / "state/memory/entities/Not An Entity In Code.md"));

  // The same file again: skipped; text output says so.
  CHECK_THAT(W(dir, {"extract", log}).out, Catch::Contains("already extracted"));

  json people = WJ(dir, {"entities", "--type", "person"});
  bool alice = false;
  for (const json& e : people["entities"]) alice |= e["name"] == "Alice Chen";
  CHECK(alice);
  json n = WJ(dir, {"graph", "neighbors", "Alice Chen"});
  REQUIRE(!n["neighbors"].empty());
  CHECK(n["neighbors"][0]["entity"] == "Acme Corp");
  json p = WJ(dir, {"graph", "path", "alice chen", "Acme Corp"});
  CHECK(p["hops"] == 1);
  RunResult none = W(dir, {"graph", "path", "Alice Chen", "Nobody"}, 1);
  CHECK_THAT(none.err, Catch::Contains("Nobody"));
  json s = WJ(dir, {"surprise", "--date", "2026-11-02"});
  REQUIRE(s["scores"].size() >= 3);
  CHECK(s["scores"][0]["score"].get<double>() >= s["scores"].back()["score"].get<double>());
  json c = WJ(dir, {"consolidate"});
  CHECK(c["added"].get<int>() >= 3);
  CHECK_THAT(Slurp(dir / "state/memory/MEMORY.md"), Catch::Contains("## People"));

  // Bad input: named, nothing written.
  CHECK_THAT(W(dir, {"extract", dir / "missing.md"}, 1).err, Catch::Contains("missing.md"));
  std::ofstream(dir / "notes.md") << "- Met with Alice Chen.\n";
  CHECK_THAT(W(dir, {"extract", dir / "notes.md"}, 1).err, Catch::Contains("--date"));
  CHECK_THAT(W(dir, {"extract", "--date", "2026-02-30"}, 1).err, Catch::Contains("2026-02-30"));
  CHECK_THAT(W(dir, {"entities", "--type", "city"}, 2).err, Catch::Contains("city"));
  CHECK_THAT(W(dir, {"surprise", "--date", "yesterday"}, 1).err, Catch::Contains("yesterday"));
}

TEST_CASE("extract reads a day of the state dir from its events log", "[world]") {
  TempDir dir;
  {
    RunningLimbic l(dir, BaseConfig(dir));
    REQUIRE(l.port() != 0);
    json percept = {{"source", "github"},
                    {"type", "issue_opened"},
                    {"text", "Crash on start when Redis is down"},
                    {"data", {{"user", "octocat"}, {"repo", "acme/gateway"}, {"number", 7}}}};
    REQUIRE(HttpJson(l.port(), "POST", "/v1/percepts", percept).status == 201);
    REQUIRE(HttpJson(l.port(), "POST", "/v1/threads", {{"id", "t-1"}, {"goal", "Fix the gateway crash"}}).status == 201);
    l.child().Kill(SIGTERM);
  }
  json x = WJ(dir, {"extract"});  // today, from the log
  CHECK(x["source"] == "day:" + DaysAgo(0));
  CHECK(std::filesystem::exists(dir / "state/memory/entities/octocat.md"));
  CHECK(std::filesystem::exists(dir / "state/memory/entities/acme-gateway.md"));
  CHECK_THAT(Slurp(dir / "state/memory/graph.jsonl"), Catch::Contains("\"subject\":\"octocat\""));
}

TEST_CASE("limbic run extracts the days before today and consolidates MEMORY.md", "[world]") {
  TempDir dir;
  // A log of two earlier days, replayed into a state dir.
  std::string d2 = DaysAgo(2), d1 = DaysAgo(1);
  std::ofstream(dir / "log.jsonl")
      << R"({"v":1,"seq":1,"ts":")" << d2
      << R"(T09:00:00.000Z","type":"percept_arrived","percept_id":"p-1","source":"chat","percept_type":"message","intensity":0.5,"text":"Alice Chen joined Acme Corp as CTO.","data":{"user":"alice"}})"
      << "\n"
      << R"({"v":1,"seq":2,"ts":")" << d1
      << R"(T10:00:00.000Z","type":"percept_arrived","percept_id":"p-2","source":"chat","percept_type":"message","intensity":0.5,"text":"Bob Stone deployed acme/billing using Terraform.","data":{"user":"bob"}})"
      << "\n";
  RunResult r = Limbic({"replay", "--from", dir / "log.jsonl", "--into", dir / "state"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  RunningLimbic l(dir, BaseConfig(dir));
  REQUIRE(l.port() != 0);
  REQUIRE(l.WaitForLog("world: consolidated", 20000));
  std::string ledger = Slurp(dir / "state/memory/extracted.jsonl");
  CHECK_THAT(ledger, Catch::Contains("day:" + d2));
  CHECK_THAT(ledger, Catch::Contains("day:" + d1));
  CHECK(std::filesystem::exists(dir / "state/memory/entities/Alice Chen.md"));
  CHECK(std::filesystem::exists(dir / "state/memory/entities/Bob Stone.md"));
  CHECK_THAT(Slurp(dir / "state/memory/MEMORY.md"), Catch::Contains("Alice Chen joined Acme Corp as CTO."));
  l.child().Kill(SIGTERM);
  CHECK(l.child().Wait() == 0);
}

TEST_CASE("the world model over HTTP", "[world]") {
  TempDir dir;
  RunningLimbic l(dir, BaseConfig(dir));
  REQUIRE(l.port() != 0);
  uint16_t port = l.port();
  auto x = HttpJson(port, "POST", "/v1/world/extract", {{"text", kDailyLog}, {"date", "2026-11-02"}});
  REQUIRE(x.status == 200);
  CHECK(x.Json()["source"] == "api:2026-11-02");
  CHECK(x.Json()["entities"].get<int>() >= 5);
  CHECK(HttpJson(port, "POST", "/v1/world/extract", {{"text", kDailyLog}, {"date", "2026-11-02"}})
            .Json()["skipped"] == true);
  auto people = Http(port, "GET", "/v1/world/entities?type=person");
  REQUIRE(people.status == 200);
  CHECK(!people.Json()["entities"].empty());
  auto page = Http(port, "GET", "/v1/world/entity?name=Alice%20Chen");
  REQUIRE(page.status == 200);
  CHECK_THAT(page.Json()["markdown"].get<std::string>(), Catch::StartsWith("# Alice Chen\n"));
  CHECK(Http(port, "GET", "/v1/world/entity?name=Nobody").status == 404);
  auto repo = Http(port, "GET", "/v1/world/entity?name=acme%2Fbilling");
  REQUIRE(repo.status == 200);
  CHECK_THAT(repo.Json()["markdown"].get<std::string>(), Catch::Contains("**Type:** project"));
  auto n = Http(port, "GET", "/v1/world/graph/neighbors?name=Alice%20Chen&hops=2");
  REQUIRE(n.status == 200);
  CHECK(n.Json()["neighbors"][0]["entity"] == "Acme Corp");
  CHECK(Http(port, "GET", "/v1/world/graph/path?from=Alice%20Chen&to=Acme%20Corp").Json()["hops"] == 1);
  CHECK(Http(port, "GET", "/v1/world/graph/path?from=Alice%20Chen").status == 400);
  CHECK(Http(port, "GET", "/v1/world/surprise?date=2026-11-02").Json()["scores"].size() >= 3);
  auto c = HttpJson(port, "POST", "/v1/world/consolidate", json::object());
  REQUIRE(c.status == 200);
  CHECK(c.Json()["added"].get<int>() >= 3);
  CHECK_THAT(Http(port, "GET", "/v1/world/memory").Json()["markdown"].get<std::string>(),
             Catch::Contains("## People"));
  // Bad requests are named and change nothing.
  CHECK(HttpJson(port, "POST", "/v1/world/extract", {{"text", "x"}}).status == 400);
  CHECK(HttpJson(port, "POST", "/v1/world/extract", {{"date", "2026-02-30"}}).status == 400);
  auto unknown = HttpJson(port, "POST", "/v1/world/extract", {{"txt", "x"}});
  CHECK(unknown.status == 400);
  CHECK_THAT(unknown.body, Catch::Contains("txt"));
  CHECK(Http(port, "GET", "/v1/world/entities?type=city").status == 400);
  CHECK(Http(port, "GET", "/v1/world/surprise?date=soon").status == 400);
  CHECK(HttpJson(port, "POST", "/v1/world/extract", json::array({1})).status == 400);
  CHECK(HttpJson(port, "POST", "/v1/world/consolidate", nullptr).status == 400);
  CHECK(Http(port, "GET", "/v1/arousal").status == 200);  // still up
  l.child().Kill(SIGTERM);
  CHECK(l.child().Wait() == 0);
}

}  // namespace world_test
