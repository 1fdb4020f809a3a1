// `limbic fork`: a sandbox from a point of the log, run without touching
// the world; time travel on the command line (state digest/show and
// attention --at-seq).
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace fork_test {

using nlohmann::json;
using namespace limbic::testing;

namespace {

std::vector<std::string> At(const std::string& state, std::vector<std::string> args) {
  args.insert(args.begin(), {"--state", state});
  return args;
}

}  // namespace

TEST_CASE("fork makes a sandbox as of a seq: same digest, dry-run effectors, rules as they were",
          "[cli][fork]") {
  TempDir dir, box;
  ScriptedServer hook({201});
  const json effectors = {
      {"hook", {{"kind", "http"}, {"url", "http://127.0.0.1:" + std::to_string(hook.port()) + "/in"}}}};
  const std::string state = dir / "state";
  uint64_t fork_seq = 0;
  {
    RunningLimbic l(dir, BaseConfig(dir, effectors));
    REQUIRE(l.port() != 0);
    json rule = {{"when", {{"type", "ping"}}},
                 {"then", {{{"send", {{"effector", "hook"}, {"type", "pong"}}}}}}};
    REQUIRE(HttpJson(l.port(), "PUT", "/v1/reflexes/pong", rule).status == 200);
    auto p = HttpJson(l.port(), "POST", "/v1/percepts", {{"source", "chat"}, {"type", "msg"}, {"intensity", 0.9}});
    auto t = HttpJson(l.port(), "POST", "/v1/threads",
                      {{"goal", "answer"}, {"salience", 0.8}, {"from_percept", p.Json()["id"]}});
    REQUIRE(t.status == 201);
    fork_seq = t.Json()["events"].back()["seq"];
    // After the fork point: a thread the sandbox must not have.
    REQUIRE(HttpJson(l.port(), "POST", "/v1/threads", {{"goal", "later"}}).status == 201);

    // Forked while the runtime holds the state dir: it reads only the log.
    auto f = Limbic(At(state, {"fork", "--at-seq", std::to_string(fork_seq), "--into", box / "state"}));
    INFO(f.out << f.err);
    REQUIRE(f.exit_code == 0);
    CHECK_THAT(f.out, Catch::Contains("a sandbox"));
    CHECK_THAT(f.out, Catch::Contains("limbic run --state " + (box / "state")));
    CHECK(CliDigest(state, {"--at-seq", std::to_string(fork_seq)}) == CliDigest(box / "state"));
    CHECK(CliDigest(state) != CliDigest(box / "state"));

    auto past = Limbic(At(state, {"--json", "state", "show", "threads", "--at-seq", std::to_string(fork_seq)}));
    REQUIRE(past.exit_code == 0);
    json threads = json::parse(past.out);
    REQUIRE(threads.size() == 1);
    CHECK(threads[0]["goal"] == "answer");
    CHECK(threads[0]["effective_salience"].get<double>() > 0.7);  // at the seq's own time
    CHECK(threads[0]["unprocessed"] == 1);
    auto attention = Limbic(At(state, {"--json", "attention", "--at-seq", std::to_string(fork_seq)}));
    REQUIRE(attention.exit_code == 0);
    CHECK(json::parse(attention.out)["thread"]["goal"] == "answer");

    // Refusals name what is wrong, and leave nothing behind.
    auto past_end = Limbic(At(state, {"fork", "--at-seq", "99999", "--into", box / "late"}));
    CHECK(past_end.exit_code == 1);
    CHECK_THAT(past_end.err, Catch::Contains("the log ends at seq"));
    auto taken = Limbic(At(state, {"fork", "--at-seq", "1", "--into", box / "state"}));
    CHECK(taken.exit_code == 1);
    CHECK_THAT(taken.err, Catch::Contains("is a state dir already"));
    auto neither = Limbic(At(state, {"fork", "--into", box / "x"}));
    CHECK(neither.exit_code == 2);
  }

  // Run the sandbox: its config's rules file names a rule the fork did not have.
  json config = BaseConfig(box, effectors);
  std::ofstream(box / "reflexes.json")
      << R"({"reflexes": [{"id": "from-file", "when": {"type": "x"}, "then": [{"drop": {}}]}]})";
  RunningLimbic sb(box, config);
  REQUIRE(sb.port() != 0);
  CHECK(sb.WaitForLog("SANDBOX forked from"));
  json health = Http(sb.port(), "GET", "/healthz").Json();
  CHECK(health["sandbox"]["at_seq"] == fork_seq);
  json rules = Http(sb.port(), "GET", "/v1/reflexes").Json();
  std::string ids;
  for (const json& r : rules["reflexes"]) ids += r["id"].get<std::string>() + " ";
  CHECK(ids == "pong ");  // the log's rules at the fork, the file not synced

  // The agent acts -- and nothing reaches the world.
  REQUIRE(HttpJson(sb.port(), "POST", "/v1/percepts", {{"source", "chat"}, {"type", "ping"}}).status == 201);
  json done = WaitJson(sb.port(), "/v1/actions?status=complete",
                       [](const json& j) { return j["actions"].size() == 1; });
  CHECK(done["actions"][0]["result"]["dry_run"] == true);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(hook.requests().empty());
  std::ifstream dry(box / "state/dry-run.jsonl");
  std::string line;
  REQUIRE(std::getline(dry, line));
  json recorded = json::parse(line);
  CHECK(recorded["effector"] == "hook");
  CHECK(recorded["kind"] == "http");
  CHECK(recorded["type"] == "pong");
  CHECK(recorded["dry_run"] == true);
  // And `why` says so, not "delivered".
  const std::string action = done["actions"][0]["id"];
  auto why = Http(sb.port(), "GET", "/v1/why/" + action);
  INFO(why.body);
  CHECK(why.body.find("not delivered") != std::string::npos);
  CHECK(why.body.find(action + " delivered") == std::string::npos);
}

TEST_CASE("fork --into and replay --into: any path, but never inside a state dir or through a symlink",
          "[cli][fork][boundary]") {
  TempDir dir, box;
  const std::string state = dir / "state";
  REQUIRE(Limbic(At(state, {"percept", "add", "--source", "s", "--type", "t"})).exit_code == 0);
  REQUIRE(Limbic(At(state, {"fork", "--at-seq", "1", "--into", box / "other"})).exit_code == 0);
  std::filesystem::create_directories(dir / "archive-like");
  std::filesystem::create_symlink(box / "nowhere", box / "dangling");
  std::filesystem::create_symlink(state + "/events", box / "into-events");

  struct Case {
    std::string into, says;
  };
  const std::vector<Case> refused = {
      {state + "/events/00000000000000000999.jsonl", "inside the state dir " + state},
      {state + "/archive/archive/2026-11-27.json", "inside the state dir " + state},
      {state + "/db/inner", "inside the state dir " + state},
      {state + "/memory/inner", "inside the state dir " + state},
      {box / "other/nested", "inside the state dir " + (box / "other")},  // another state dir
      {box / "into-events/x", "inside the state dir " + state},           // through a symlink
      {box / "dangling", "is a symlink"},
      {state, "is a state dir already"},
  };
  for (const Case& c : refused) {
    auto f = Limbic(At(state, {"fork", "--at-seq", "1", "--into", c.into}));
    INFO(c.into << ": " << f.err);
    CHECK(f.exit_code == 1);
    CHECK_THAT(f.err, Catch::Contains(c.says));
    auto r = Limbic({"replay", "--from", state + "/events", "--into", c.into});
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains(c.says));
  }
  CHECK_FALSE(std::filesystem::exists(std::filesystem::symlink_status(state + "/events/00000000000000000999.jsonl")));
  CHECK_FALSE(std::filesystem::exists(state + "/db/inner"));
  CHECK_FALSE(std::filesystem::exists(box / "nowhere"));
  auto fsck = Limbic(At(state, {"fsck"}));
  INFO(fsck.out << fsck.err);
  CHECK(fsck.exit_code == 0);
  // Anywhere else is fine, as before.
  CHECK(Limbic(At(state, {"fork", "--at-seq", "1", "--into", dir / "archive-like/f"})).exit_code == 0);
}

TEST_CASE("a fork cut short is refused by every command on it, reads included", "[cli][fork]") {
  TempDir dir, box;
  const std::string state = dir / "state";
  for (int i = 0; i < 3; ++i)
    REQUIRE(Limbic(At(state, {"percept", "add", "--source", "s", "--type", "t"})).exit_code == 0);
  const std::string cut = box / "cut";
  REQUIRE(Limbic(At(state, {"fork", "--at-seq", "3", "--into", cut})).exit_code == 0);
  // As a fork killed before its sandbox.json leaves it: marked.
  { std::ofstream(cut + "/replaying") << "a replay is building this dir\n"; }
  const std::vector<std::vector<std::string>> commands = {
      At(cut, {"events", "tail"}),
      At(cut, {"events", "show", "1"}),
      At(cut, {"events", "export"}),
      At(cut, {"why", "p-1"}),
      At(cut, {"state", "digest"}),
      At(cut, {"state", "digest", "--at-seq", "2"}),
      At(cut, {"fork", "--at-seq", "2", "--into", box / "again"}),
      {"replay", "--verify", cut},
  };
  for (const auto& args : commands) {
    auto r = Limbic(args);
    INFO(args[2] << " " << (args.size() > 3 ? args[3] : "") << ": " << r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains("cut short"));
  }
  CHECK_FALSE(std::filesystem::exists(box / "again"));
  CHECK(Limbic(At(cut, {"fsck"})).exit_code == 1);
  // Nor is its log replayed into a new dir, as if whole.
  auto copied = Limbic({"replay", "--from", cut + "/events", "--into", box / "copy"});
  CHECK(copied.exit_code == 1);
  CHECK_THAT(copied.err, Catch::Contains("cut short"));
  CHECK_FALSE(std::filesystem::exists(box / "copy"));
  // Whatever lies by that name marks it, a dangling symlink too.
  std::filesystem::remove(cut + "/replaying");
  std::filesystem::create_symlink(box / "nowhere", cut + "/replaying");
  CHECK_THAT(Limbic(At(cut, {"state", "digest"})).err, Catch::Contains("cut short"));
  // A time that is wrong says why, not just that it is wrong.
  auto leap = Limbic(At(state, {"fork", "--at-time", "2026-11-29T07:01:60Z", "--into", box / "x"}));
  CHECK(leap.exit_code == 2);  // the command line is wrong
  CHECK_THAT(leap.err, Catch::Contains("only at 23:59:60 UTC"));
  auto far = Limbic(At(state, {"fork", "--at-time", "1000000d", "--into", box / "x"}));
  CHECK(far.exit_code == 2);
  CHECK_THAT(far.err, Catch::Contains("at most 100 years"));
  // replay --until-time takes a duration before now too, as fork does.
  auto ago = Limbic({"replay", "--from", state + "/events", "--into", box / "ago", "--until-time", "1ms"});
  CHECK(ago.exit_code == 0);
  auto garbled = Limbic({"replay", "--from", state + "/events", "--into", box / "g", "--until-time", "soon"});
  CHECK(garbled.exit_code == 2);
  CHECK_THAT(garbled.err, Catch::Contains("want an RFC 3339 time or a duration"));
  // A replay of no events, with no bound asked for, is the wrong path.
  auto whole_dir = Limbic({"replay", "--from", state, "--into", box / "y"});
  CHECK(whole_dir.exit_code == 1);
  CHECK_THAT(whole_dir.err, Catch::Contains("no events to replay (a state dir: its log is " +
                                            state + "/events)"));
  CHECK_FALSE(std::filesystem::exists(box / "y"));
  // The neighbouring case: the whole fork, unmarked, answers them all.
  std::filesystem::remove(cut + "/replaying");
  for (const auto& args : commands) {
    auto r = Limbic(args);
    INFO(args[2] << ": " << r.err);
    CHECK(r.exit_code == 0);
  }
}

}  // namespace fork_test
