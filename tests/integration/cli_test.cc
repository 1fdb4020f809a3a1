// The command line, end to end: every pool operation, the log commands,
// replay/time travel, and bad input rejected with a clear message and
// nothing written.
#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/time.h"
#include "process.h"

// This file's own namespace: test programs compile in unity batches.
namespace cli_test {

using nlohmann::json;
using limbic::testing::Child;
using limbic::testing::Limbic;
using limbic::testing::RunResult;
using limbic::testing::TempDir;

namespace {

// Runs limbic with --state DIR and checks the exit code.
RunResult L(const TempDir& dir, std::vector<std::string> args, int want_exit = 0,
            const std::string& input = "") {
  args.insert(args.begin(), {"--state", dir / "state"});
  RunResult r = Limbic(args, input);
  INFO("limbic " << args[2] << " ... stdout: " << r.out << " stderr: " << r.err);
  REQUIRE(r.exit_code == want_exit);
  return r;
}

json J(const TempDir& dir, std::vector<std::string> args) {
  args.push_back("--json");
  RunResult r = L(dir, args);
  json j = json::parse(r.out, nullptr, false);
  INFO(r.out);
  REQUIRE_FALSE(j.is_discarded());
  return j;
}

uint64_t LastSeq(const TempDir& dir) {
  RunResult r = L(dir, {"state", "digest", "--json"});
  return json::parse(r.out)["applied_seq"].get<uint64_t>();
}

}  // namespace

TEST_CASE("limbic --version prints the version the same way alone or among other arguments", "[cli]") {
  RunResult alone = Limbic({"--version"});
  CHECK(alone.exit_code == 0);
  CHECK(alone.out.rfind("limbic ", 0) == 0);
  CHECK(alone.out.back() == '\n');
  RunResult among = Limbic({"--state", "/nonexistent/state", "--version"});
  CHECK(among.exit_code == 0);
  CHECK(among.out == alone.out);
}

TEST_CASE("percepts: add, list with filters, assign, process, drop, remove", "[cli]") {
  TempDir dir;
  json a = J(dir, {"percept", "add", "--source", "github", "--type", "issues.opened",
                   "--intensity", "0.8", "--text", "crash on start", "--data", R"({"user":"ana"})"});
  CHECK(a["id"] == "p-1");
  CHECK(a["seq"] == 1);
  J(dir, {"percept", "add", "--source", "discord", "--type", "message", "--text", "hello"});
  json list = J(dir, {"percept", "list"});
  REQUIRE(list.size() == 2);
  CHECK(list[0]["id"] == "p-2");  // newest first
  CHECK(list[1]["data"]["user"] == "ana");
  CHECK(list[1]["effective_intensity"].get<double>() <= 0.8);
  CHECK(J(dir, {"percept", "list", "--source", "github"}).size() == 1);
  CHECK(J(dir, {"percept", "list", "--type", "message"})[0]["id"] == "p-2");
  CHECK(J(dir, {"percept", "list", "--min-age", "1h"}).empty());
  CHECK(J(dir, {"percept", "list", "--max-age", "1h", "--limit", "1"}).size() == 1);

  json t = J(dir, {"thread", "create", "--goal", "fix the crash", "--salience", "0.7"});
  std::string tid = t["id"];
  L(dir, {"percept", "assign", "p-1", "--thread", tid});
  json in_thread = J(dir, {"percept", "list", "--thread", tid});
  REQUIRE(in_thread.size() == 1);
  CHECK(in_thread[0]["status"] == "assigned");
  L(dir, {"percept", "process", "p-1"});
  CHECK(J(dir, {"percept", "list", "--status", "processed"})[0]["id"] == "p-1");
  L(dir, {"percept", "drop", "p-2", "--reason", "noise"});
  CHECK(J(dir, {"percept", "list", "--status", "dropped"})[0]["id"] == "p-2");
  L(dir, {"percept", "remove", "p-2"});
  CHECK(J(dir, {"percept", "list"}).size() == 1);
}

TEST_CASE("the pools stay bounded: untouched percepts expire, a deleted thread lets go of its percepts",
          "[cli]") {
  TempDir dir;
  L(dir, {"percept", "add", "--source", "timer", "--type", "heartbeat", "--intensity", "0.05"});
  json t = J(dir, {"thread", "create", "--goal", "watch"});
  const std::string tid = t["id"];
  json taken = J(dir, {"percept", "add", "--source", "chat", "--type", "message", "--text", "hi"});
  L(dir, {"percept", "assign", taken["id"], "--thread", tid});
  L(dir, {"thread", "delete", tid});
  json back = J(dir, {"percept", "list", "--status", "new", "--source", "chat"});
  REQUIRE(back.size() == 1);  // unassigned by the deletion
  CHECK(back[0]["thread_id"].is_null());

  // Two days on (the built-in config: percepts.expire_after 1d), both are
  // out of attention for good: dropped as expired; consolidate repeats its
  // pass until nothing is left, so they are also digested (they arrived
  // more than archive.percepts_after ago).
  const limbic::TimeMs now = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  CHECK(J(dir, {"--now", limbic::FormatTime(now + 86400000LL / 2), "consolidate"})["expired"] == 0);
  const std::string later = limbic::FormatTime(now + 2 * 86400000LL);
  json pass = J(dir, {"--now", later, "consolidate"});
  CHECK(pass["expired"] == 2);
  CHECK(pass["percepts"] == 2);
  CHECK(J(dir, {"percept", "list"}).empty());
  RunResult text = L(dir, {"--now", later, "consolidate"});
  CHECK(text.out == "staged 0 entries: 0 threads, 0 percepts, 0 actions; 0 percepts expired\n");
}

TEST_CASE("show prints one percept, thread or action as the API does, text or JSON", "[cli]") {
  TempDir dir;
  L(dir, {"percept", "add", "--source", "chat", "--type", "message", "--text", "hi"});
  L(dir, {"thread", "create", "--goal", "reply", "--from-percept", "p-1"});
  L(dir, {"action", "enqueue", "--effector", "log", "--type", "reply", "--thread", "t-2"});
  json p = J(dir, {"percept", "show", "p-1"});
  CHECK(p["status"] == "assigned");  // --from-percept assigns
  CHECK(p["thread_id"] == "t-2");
  CHECK(p.contains("effective_intensity"));
  json t = J(dir, {"thread", "show", "t-2"});
  CHECK(t["percepts"] == json::array({"p-1"}));
  CHECK(t["unprocessed"] == 1);
  CHECK(J(dir, {"action", "show", "a-4"})["status"] == "pending");
  RunResult text = L(dir, {"percept", "show", "p-1"});
  CHECK(text.out.find("status:               assigned\n") != std::string::npos);
  RunResult missing = L(dir, {"thread", "show", "t-9"}, 1);
  CHECK_THAT(missing.err, Catch::Contains("thread t-9 not found"));
  // A thread made from a percept takes it, so the percept must still be open.
  L(dir, {"percept", "process", "p-1"});
  RunResult done = L(dir, {"thread", "create", "--goal", "again", "--from-percept", "p-1"}, 1);
  CHECK_THAT(done.err, Catch::Contains("percept p-1 is processed"));
}

TEST_CASE("attention shows the focused thread and the new percepts strong enough to notice",
          "[cli]") {
  TempDir dir;
  L(dir, {"percept", "add", "--source", "chat", "--type", "message", "--text", "deploy failed"});
  L(dir,
    {"thread", "create", "--goal", "fix the deploy", "--from-percept", "p-1", "--salience", "0.9"});
  L(dir, {"thread", "create", "--goal", "someday", "--salience", "0.1"});
  L(dir, {"percept", "add", "--source", "chat", "--type", "message", "--text", "urgent",
          "--intensity", "0.9", "--id", "p-urgent"});
  L(dir, {"percept", "add", "--source", "timer", "--type", "heartbeat", "--intensity", "0.05"});
  json a = J(dir, {"attention"});
  CHECK(a["thread"]["id"] == "t-2");
  REQUIRE(a["thread_percepts"].size() == 1);
  CHECK(a["thread_percepts"][0]["id"] == "p-1");
  REQUIRE(a["unassigned"].size() == 1);  // the heartbeat is below the 0.2 threshold
  CHECK(a["unassigned"][0]["id"] == "p-urgent");
  CHECK(a["arousal"].contains("effective"));
  RunResult text = L(dir, {"attention"});
  CHECK_THAT(text.out, Catch::Contains("thread t-2  fix the deploy"));
  CHECK_THAT(text.out, Catch::Contains("unassigned: 1"));
}

TEST_CASE("events tail by id and time, events show by seq, vectors kept out of text", "[cli]") {
  TempDir dir;
  L(dir, {"percept", "add", "--source", "chat", "--type", "message", "--id", "p-a"});
  L(dir, {"percept", "add", "--source", "chat", "--type", "message", "--id", "p-b"});
  L(dir, {"thread", "create", "--goal", "g", "--from-percept", "p-a"});
  L(dir, {"memory", "remember", "alice", "likes", "tea"});
  auto lines = [](const std::string& out) {
    std::vector<json> v;
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);) v.push_back(json::parse(l));
    return v;
  };
  auto about_a = lines(L(dir, {"events", "tail", "--id", "p-a", "-n", "0"}).out);
  REQUIRE(about_a.size() == 3);  // arrived, the thread made from it, its assignment
  CHECK(about_a[0]["type"] == "percept_arrived");
  CHECK(about_a[1]["type"] == "thread_created");
  CHECK(about_a[2]["type"] == "percept_assigned");
  CHECK(lines(L(dir, {"events", "tail", "--since", "1h", "-n", "2"}).out).size() == 2);
  CHECK(L(dir, {"events", "tail", "--until", "1h"}).out.empty());  // all of them are newer
  CHECK(lines(L(dir, {"events", "show", "2"}).out)[0]["percept_id"] == "p-b");
  CHECK_THAT(L(dir, {"events", "show", "99"}, 1).err, Catch::Contains("no event with seq 99"));

  json text = lines(L(dir, {"events", "tail", "-n", "1"}).out)[0];
  CHECK(text["type"] == "memory_stored");
  CHECK_THAT(text["memory"]["embedding"]["vector"].get<std::string>(),
             Catch::Contains("bytes of base64"));
  json whole = lines(L(dir, {"events", "tail", "-n", "1", "--json"}).out)[0];
  CHECK(whole["memory"]["embedding"]["vector"].get<std::string>().size() > 1000);
}

TEST_CASE("memory context: the focused thread and what memory knows about its goal, in a budget",
          "[cli]") {
  TempDir dir;
  L(dir, {"memory", "remember", "deploys", "need", "a warm cache"});
  L(dir, {"memory", "remember", "lunch", "is", "at noon"});
  L(dir, {"thread", "create", "--goal", "why do deploys fail", "--salience", "0.8"});
  json c = J(dir, {"memory", "context"});
  CHECK(c["query"] == "why do deploys fail");  // the focused thread's goal
  CHECK(c["thread"]["goal"] == "why do deploys fail");
  REQUIRE_FALSE(c["memories"].empty());
  CHECK(c["memories"][0]["subject"] == "deploys");
  CHECK(c["used_tokens"].get<size_t>() <= 2000);
  json tight = J(dir, {"memory", "context", "--query", "lunch", "--budget-tokens", "30"});
  CHECK(tight["truncated"] == true);
  CHECK(tight["used_tokens"].get<size_t>() <= 30);
  // Reading the context does not reinforce what it recalls.
  CHECK(J(dir, {"memory", "show", "m-1"})["access_count"] == json(0));
}

TEST_CASE("threads: create, update status/salience/state, list by effective salience, delete",
          "[cli]") {
  TempDir dir;
  J(dir, {"thread", "create", "--goal", "low", "--salience", "0.2", "--id", "t-low"});
  J(dir, {"thread", "create", "--goal", "high", "--salience", "0.9", "--id", "t-high",
          "--state", R"({"phase":"triage"})"});
  json list = J(dir, {"thread", "list"});
  REQUIRE(list.size() == 2);
  CHECK(list[0]["id"] == "t-high");
  CHECK(list[0]["state"]["phase"] == "triage");
  L(dir, {"thread", "update", "t-high", "--state", R"({"next_step":"reply","context":{"pr":7}})"});
  json th = J(dir, {"thread", "list"})[0];
  CHECK(th["state"]["phase"] == "triage");  // merge, not replace
  CHECK(th["state"]["next_step"] == "reply");
  L(dir, {"thread", "update", "t-low", "--salience", "1"});
  CHECK(J(dir, {"thread", "list"})[0]["id"] == "t-low");
  L(dir, {"thread", "update", "t-high", "--status", "paused", "--reason", "waiting"});
  CHECK(J(dir, {"thread", "list"}).size() == 1);
  CHECK(J(dir, {"thread", "list", "--status", "paused"})[0]["id"] == "t-high");
  L(dir, {"thread", "update", "t-high", "--status", "complete", "--outcome", "done"});
  CHECK(J(dir, {"thread", "list", "--status", "complete"}).size() == 1);
  L(dir, {"thread", "delete", "t-low"});
  CHECK(J(dir, {"thread", "list", "--status", "all"}).size() == 1);
}

TEST_CASE("arousal and actions", "[cli]") {
  TempDir dir;
  J(dir, {"arousal", "set", "--level", "0.4", "--factor", "user_waiting=true", "--factor",
          "recent_errors=2", "--factor", "mood=calm"});
  json a = J(dir, {"arousal", "get"});
  CHECK(a["level"] == 0.4);
  CHECK(a["factors"]["user_waiting"] == true);
  CHECK(a["factors"]["recent_errors"] == 2);
  CHECK(a["factors"]["mood"] == "calm");
  CHECK(a["effective"].get<double>() > 0.4);

  json e = J(dir, {"action", "enqueue", "--effector", "log", "--type", "ack", "--payload",
                   R"({"text":"hi"})"});
  CHECK(e["id"] == "a-5");  // arousal set wrote seqs 1-4
  json list = J(dir, {"action", "list", "--status", "pending"});
  REQUIRE(list.size() == 1);
  CHECK(list[0]["idempotency_key"] == "a-5");
  CHECK(list[0]["payload"]["text"] == "hi");
  json pruned = J(dir, {"action", "prune", "--older-than", "0s"});
  CHECK(pruned["events"].empty());  // pending actions are never pruned
}

TEST_CASE("bad input is rejected with a clear message and nothing is written", "[cli]") {
  TempDir dir;
  L(dir, {"thread", "create", "--goal", "g", "--id", "t-1"});
  uint64_t before = LastSeq(dir);
  struct Case {
    std::vector<std::string> args;
    const char* needle;
  } cases[] = {
      {{"percept", "add", "--source", "s", "--type", "t", "--intensity", "1.7"}, "intensity"},
      {{"percept", "add", "--source", "", "--type", "t"}, "source"},
      {{"percept", "add", "--source", "s", "--type", "t", "--data", "[1]"}, "--data"},
      {{"percept", "assign", "p-99", "--thread", "t-1"}, "p-99"},
      {{"thread", "update", "t-9", "--salience", "0.5"}, "t-9"},
      {{"thread", "update", "t-1", "--status", "sleeping"}, "status"},
      {{"arousal", "set", "--level", "-1"}, "level"},
  };
  for (const auto& c : cases) {
    RunResult r = L(dir, c.args, 1);
    CHECK_THAT(r.err, Catch::Contains(c.needle));
    CHECK_THAT(r.err, Catch::StartsWith("limbic: error:"));
  }
  L(dir, {"thread", "delete", "t-1"});
  RunResult r = L(dir, {"thread", "update", "t-1", "--status", "complete"}, 1);
  CHECK_THAT(r.err, Catch::Contains("t-1"));
  CHECK(LastSeq(dir) == before + 1);  // only the delete was written
  CHECK(L(dir, {"percept", "nonsense"}, 2).exit_code == 2);
}

TEST_CASE("events tail and export, replay, verify, time travel, fsck", "[cli]") {
  TempDir dir;
  L(dir, {"thread", "create", "--goal", "g", "--id", "t-1"});
  L(dir, {"percept", "add", "--source", "s", "--type", "t", "--thread", "t-1"});
  L(dir, {"thread", "update", "t-1", "--status", "complete"});

  RunResult tail = L(dir, {"events", "tail", "-n", "2"});
  auto nl = tail.out.find('\n');
  REQUIRE(nl != std::string::npos);
  CHECK(json::parse(tail.out.substr(0, nl))["type"] == "percept_assigned");
  RunResult typed = L(dir, {"events", "tail", "--type", "thread_created", "-n", "0"});
  CHECK(json::parse(typed.out)["thread_id"] == "t-1");
  CHECK(L(dir, {"events", "tail", "--since", "2000-01-01T00:00:00Z", "-n", "0"}).out.size() ==
        L(dir, {"events", "export"}).out.size());

  L(dir, {"events", "export", "-o", dir / "events.jsonl"});
  json digest = J(dir, {"state", "digest"});
  // Replays the export into a new dir with `options`: its --json result.
  auto replay = [&](const std::string& into, std::vector<std::string> options) {
    std::vector<std::string> args = {"replay", "--from", dir / "events.jsonl", "--into",
                                     dir / into};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back("--json");
    RunResult r = Limbic(args);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out);
  };
  // A replay option with a bad value is refused, naming the option.
  auto refused = [&](const std::string& into, const std::string& option, const std::string& value) {
    RunResult r =
        Limbic({"replay", "--from", dir / "events.jsonl", "--into", dir / into, option, value});
    CHECK(r.exit_code != 0);
    CHECK_THAT(r.out + r.err, Catch::Contains(option));
  };
  CHECK(replay("copy", {})["digest"] == digest["digest"]);
  RunResult verify = L(dir, {"replay", "--verify", dir / "state"});
  CHECK_THAT(verify.out, Catch::Contains("matches"));

  json past = J(dir, {"state", "show", "threads", "--at-seq", "3"});
  REQUIRE(past.size() == 1);
  CHECK(past[0]["status"] == "active");
  CHECK(J(dir, {"state", "show", "threads"})[0]["status"] == "complete");
  CHECK(replay("p2", {"--until-seq", "1"})["last_seq"] == 1);
  // Without records held in memory: the same state.
  CHECK(replay("p3", {"--resident-mib", "0"})["digest"] == digest["digest"]);
  refused("p4", "--resident-mib", "lots");
  // A write after every changed record: the same state.
  CHECK(replay("p5", {"--write-records", "1"})["digest"] == digest["digest"]);
  refused("p6", "--write-records", "0");

  RunResult fsck = L(dir, {"fsck"});
  CHECK_THAT(fsck.out, Catch::StartsWith("ok:"));
}

TEST_CASE("replay rejects a bad log naming file and offset, and leaves nothing", "[cli]") {
  TempDir dir;
  std::string good =
      R"({"v":1,"seq":1,"ts":"2026-01-01T00:00:00.000Z","type":"thread_created","thread_id":"t-1","goal":"g","salience":0.5})"
      "\n";
  struct Case {
    std::string second;
    const char* needle;
  } cases[] = {
      {"{not json\n", "malformed JSON"},
      {R"({"v":1,"seq":3,"ts":"2026-01-01T00:00:01.000Z","type":"thread_paused","thread_id":"t-1"})" "\n", "seq"},
      {R"({"v":1,"seq":2,"ts":"2026-01-01T00:00:01.000Z","type":"percept_assigned","percept_id":"p-7","thread_id":"t-1"})" "\n", "p-7"},
      {R"({"v":1,"seq":2,"ts":"2026-01-01T00:00:01.000Z","type":"thread_deleted","thread_id":"t-1"})" "\n"
       R"({"v":1,"seq":3,"ts":"2026-01-01T00:00:02.000Z","type":"thread_completed","thread_id":"t-1"})" "\n", "t-1"},
      {R"({"v":1,"seq":2,"ts":"2026-01-01T00:00:01.000Z","type":"percept_arrived","percept_id":"p-2","source":"s","percept_type":"t","intensity":3})" "\n", "intensity"},
      {R"({"v":1,"seq":2,"ts":"2026-01-01T00:00:01.000Z","type":"percept_arrived","percept_id":"p-2","percept_type":"t","intensity":0.3})" "\n", "source"},
      {R"({"v":1,"seq":2,"ts":"2026-01-01T00:00:01.000Z","type":"brain_melted"})" "\n", "unknown event type"},
  };
  int i = 0;
  for (const auto& c : cases) {
    std::string file = dir / ("bad" + std::to_string(i) + ".jsonl");
    std::string into = dir / ("into" + std::to_string(i++));
    FILE* f = fopen(file.c_str(), "w");
    fputs((good + c.second + good.substr(0, 0)).c_str(), f);
    fclose(f);
    RunResult r = Limbic({"replay", "--from", file, "--into", into});
    INFO(c.second << " -> " << r.err);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::Contains(c.needle));
    CHECK_THAT(r.err, Catch::Contains("offset"));
    CHECK_FALSE(std::filesystem::exists(into));
  }
  // An empty path is no state dir: "" + "/events" would be the root's.
  const bool root_had_events = std::filesystem::exists("/events");
  std::string file = dir / "good.jsonl";
  {
    FILE* f = fopen(file.c_str(), "w");
    fputs(good.c_str(), f);
    fclose(f);
  }
  RunResult empty = Limbic({"replay", "--from", file, "--into", ""});
  CHECK(empty.exit_code == 1);
  CHECK_THAT(empty.err, Catch::Contains("the new state dir is empty"));
  RunResult no_time = Limbic({"replay", "--from", file, "--into", dir / "t", "--until-time", ""});
  CHECK(no_time.exit_code == 2);
  CHECK_THAT(no_time.err, Catch::Contains("--until-time: must be an RFC 3339 time"));
  RunResult fork = Limbic({"--state", dir / "state", "fork", "--at-seq", "1", "--into", ""});
  CHECK(fork.exit_code == 1);
  CHECK_THAT(fork.err, Catch::Contains("empty"));
  RunResult run = Limbic({"run", "--state", "", "--port", "0"});
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.err, Catch::Contains("state_dir is empty"));
  CHECK(std::filesystem::exists("/events") == root_had_events);
}

TEST_CASE("a second writer is refused naming the holder, and reads still work", "[cli]") {
  TempDir dir;
  L(dir, {"thread", "create", "--goal", "g", "--id", "t-1"});
  Child holder({limbic::testing::LimbicBinary(), "--state", dir / "state", "percept", "import", "-"});
  REQUIRE(holder.Write(R"({"source":"s","type":"t"})" "\n"));
  std::string ack;
  // The import may only print its ack once the next line arrives.
  REQUIRE(holder.Write(R"({"source":"s","type":"t"})" "\n"));
  REQUIRE(holder.ReadLine(&ack));
  RunResult w = L(dir, {"thread", "create", "--goal", "g2"}, 1);
  CHECK_THAT(w.err, Catch::Contains("pid " + std::to_string(holder.pid())));
  CHECK(J(dir, {"thread", "list"}).size() == 1);
  holder.CloseStdin();
  CHECK(holder.Wait() == 0);
  CHECK(J(dir, {"percept", "list"}).size() == 2);
}

TEST_CASE("a read repairs projections that lag the log, but not while another process holds the state",
          "[cli]") {
  TempDir dir;
  L(dir, {"percept", "add", "--source", "s", "--type", "t", "--id", "p-1"});
  // The log gets an event the projections never saw: a crash after the
  // group's fdatasync and before RocksDB's write.
  std::string segment;
  for (const auto& e : std::filesystem::directory_iterator(dir / "state/events"))
    if (e.path().extension() == ".jsonl" && e.path().string() > segment) segment = e.path().string();
  REQUIRE_FALSE(segment.empty());
  std::string last, line;
  for (std::ifstream in(segment); std::getline(in, line);) last = line;
  json event = json::parse(last);
  event["seq"] = event["seq"].get<uint64_t>() + 1;
  event["percept_id"] = "p-2";
  std::ofstream(segment, std::ios::app) << event.dump() << "\n";

  {
    // Another process holds the state dir (flock(1) on its lock file, so
    // nothing repairs): the read takes the projections as they are.
    Child holder({"/usr/bin/flock", "-o", dir / "state/limbic.lock", "sh", "-c", "echo locked; exec cat"});
    std::string locked;
    REQUIRE(holder.ReadLine(&locked));
    REQUIRE(locked == "locked");
    CHECK(J(dir, {"percept", "list"}).size() == 1);
    holder.Kill(SIGKILL);
  }
  // Free again: the read takes the lock, re-applies the log's tail first.
  json list = J(dir, {"percept", "list"});
  REQUIRE(list.size() == 2);
  CHECK(list[0]["id"] == "p-2");
  CHECK(LastSeq(dir) == 2);
}

}  // namespace cli_test
