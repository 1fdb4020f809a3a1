// The dedup window through the real binary: a sensor's stable id stays a
// duplicate after its percept left the pool (removed or consolidated), also
// after a restart; it is accepted again once it left longer than
// percepts.dedup_window ago; old records are pruned; and replay agrees.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <ctime>
#include <fstream>

#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace dedup_test {

using nlohmann::json;
using namespace limbic::testing;

namespace {

std::string Line(const std::string& id) {
  return json{{"id", id}, {"source", "chat"}, {"type", "message"}, {"text", "hello " + id}}.dump() +
         "\n";
}

HttpReply PostPercept(uint16_t port, const std::string& id) {
  return HttpJson(port, "POST", "/v1/percepts",
                  {{"id", id}, {"source", "chat"}, {"type", "message"}});
}

// A 409 already_exists that names the id and says it left the pool.
void CheckRefused(const HttpReply& r, const std::string& id) {
  INFO(id << ": " << r.status << " " << r.body);
  CHECK(r.status == 409);
  CHECK(r.Json()["error"]["code"] == "already_exists");
  const std::string message = r.Json()["error"]["message"];
  CHECK_THAT(message, Catch::Contains("percept " + id + " already exists: it left the pool at"));
  CHECK_THAT(message, Catch::Contains("percepts.dedup_window"));
}

bool Exists(uint16_t port, const std::string& id) {
  return Http(port, "GET", "/v1/percepts/" + id).status == 200;
}

// How many percept_arrived events the log holds for `id`.
size_t Arrivals(uint16_t port, const std::string& id) {
  json events = Http(port, "GET", "/v1/events?type=percept_arrived&limit=1000").Json()["events"];
  size_t n = 0;
  for (const json& e : events) n += e["percept_id"] == id;
  return n;
}

void Stop(RunningLimbic& l) { REQUIRE(l.child().Kill(SIGTERM) == 0); }

RunResult L(const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"--state", dir / "state"});
  RunResult r = Limbic(args);
  INFO("limbic " << args[2] << " ... stdout: " << r.out << " stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return r;
}

void CheckReplayMatches(const TempDir& dir) {
  RunResult verify = L(dir, {"replay", "--verify", dir / "state"});
  CHECK_THAT(verify.out, Catch::Contains("matches"));
}

json DedupPool(const TempDir& dir) {
  return json::parse(L(dir, {"state", "show", "dedup", "--json"}).out);
}

// `t` (ms since the epoch) as an event's ts.
std::string FormatTs(int64_t t) {
  std::time_t s = static_cast<std::time_t>(t / 1000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[40];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(t % 1000));
  return out;
}

}  // namespace

TEST_CASE("a restarted jsonl sensor's lines stay duplicates after their percepts left the pool",
          "[runtime][sensors][dedup]") {
  TempDir dir;
  const std::string path = dir / "chat.jsonl";
  std::ofstream(path) << Line("chat-5") << Line("chat-7");
  json config =
      BaseConfig(dir, {}, {{"chat", {{"kind", "jsonl"}, {"path", path}, {"from", "start"}}}});
  config["archive"] = {{"consolidate_every", 0}, {"percepts_after", "0ms"}};
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    WaitJson(l.port(), "/v1/percepts?source=chat",
             [](const json& j) { return j["percepts"].size() == 2; });
    // chat-5 is removed, chat-7 processed and consolidated into the archive.
    REQUIRE(Http(l.port(), "DELETE", "/v1/percepts/chat-5").status == 200);
    REQUIRE(Http(l.port(), "POST", "/v1/percepts/chat-7/process").status == 200);
    auto consolidated = Http(l.port(), "POST", "/v1/consolidate");
    INFO(consolidated.body);
    REQUIRE(consolidated.status == 200);
    CHECK(consolidated.Json()["percepts"] == 1);
    CHECK_FALSE(Exists(l.port(), "chat-5"));
    CHECK_FALSE(Exists(l.port(), "chat-7"));
    // Sent again through the API: refused the way an id in the pool is.
    CheckRefused(PostPercept(l.port(), "chat-5"), "chat-5");
    CheckRefused(PostPercept(l.port(), "chat-7"), "chat-7");
    Stop(l);
  }
  // The restarted sensor reads the file from its start again.
  std::ofstream(path, std::ios::app) << Line("chat-9");
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    WaitJson(l.port(), "/v1/percepts/chat-9", [](const json& j) { return j.contains("id"); });
    // Lines are delivered in order: chat-5 and chat-7 were refused first.
    CHECK(l.WaitForLog("percept chat-5 already exists"));
    CHECK(l.WaitForLog("percept chat-7 already exists"));
    CHECK_FALSE(Exists(l.port(), "chat-5"));
    CHECK_FALSE(Exists(l.port(), "chat-7"));
    CHECK(Arrivals(l.port(), "chat-5") == 1);
    CHECK(Arrivals(l.port(), "chat-7") == 1);
    Stop(l);
  }
  json pool = DedupPool(dir);
  REQUIRE(pool.size() == 2);
  CHECK(pool[0]["id"] == "chat-5");
  CHECK(pool[0]["source"] == "chat");
  CHECK(pool[1]["id"] == "chat-7");
  CheckReplayMatches(dir);
}

TEST_CASE("an id is accepted again once it left the pool longer than the window ago, and pruned",
          "[runtime][dedup]") {
  TempDir dir;
  // A log as an older limbic wrote it (no dedup events): two ids left the
  // pool in 2020, one an hour ago.
  const int64_t hour_ago = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count() -
                           3600000;
  auto event = [](int seq, const std::string& ts, const std::string& type, const std::string& id) {
    json e = {{"v", 1}, {"seq", seq}, {"ts", ts}, {"type", type}, {"percept_id", id}};
    if (type == "percept_arrived") {
      e["source"] = "chat";
      e["percept_type"] = "message";
      e["intensity"] = 0.5;
    }
    return e.dump() + "\n";
  };
  std::ofstream(dir / "events.jsonl")
      << event(1, "2020-01-01T00:00:00.000Z", "percept_arrived", "chat-old")
      << event(2, "2020-01-01T00:01:00.000Z", "percept_removed", "chat-old")
      << event(3, "2020-01-01T00:02:00.000Z", "percept_arrived", "chat-gone")
      << event(4, "2020-01-01T00:03:00.000Z", "percept_removed", "chat-gone")
      << event(5, FormatTs(hour_ago), "percept_arrived", "chat-new")
      << event(6, FormatTs(hour_ago), "percept_removed", "chat-new");
  RunResult replayed = Limbic({"replay", "--from", dir / "events.jsonl", "--into", dir / "state"});
  INFO(replayed.out << replayed.err);
  REQUIRE(replayed.exit_code == 0);
  CHECK(DedupPool(dir).size() == 3);

  json config = BaseConfig(dir);
  {
    RunningLimbic l(dir, config);  // the default window: 7 days
    REQUIRE(l.port() != 0);
    CheckRefused(PostPercept(l.port(), "chat-new"), "chat-new");
    CHECK(PostPercept(l.port(), "chat-old").status == 201);
    Stop(l);
  }
  config["percepts"] = {{"dedup_window", "10s"}};  // pruned within a second or so
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    json pruned = WaitJson(l.port(), "/v1/events?type=dedup_pruned",
                           [](const json& j) { return !j["events"].empty(); });
    CHECK(pruned["events"][0]["percept_ids"] == json{"chat-gone", "chat-new"});
    CHECK(PostPercept(l.port(), "chat-new").status == 201);
    Stop(l);
  }
  CHECK(DedupPool(dir).empty());
  CheckReplayMatches(dir);
}

}  // namespace dedup_test
