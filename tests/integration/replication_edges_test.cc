// Replication's edge cases on the primary's side (docs/scale.md), through
// the real binary and real nats-server processes on loopback: clean stops
// (a primary that published nothing, one that never reached NATS), a
// fenced primary's report and its publishes in flight, health that tells
// what the stream holds once NATS is back, and the replication bench's
// command line. The standby's side: standby_test.cc.
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "replication_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace replication_edges_test {

using nlohmann::json;
using namespace limbic::testing;

namespace {

// A clean stop: exit 0, the replication's last line, api.json gone.
void CheckCleanStop(RunningLimbic& r, const TempDir& dir) {
  CHECK(Terminate(r) == 0);
  CHECK(r.WaitForLog("replication: stopped at seq", 0));
  CHECK_FALSE(std::filesystem::exists(dir / "state/api.json"));
}

bool HasFenced(const json& h) {
  return h.contains("replication") && h["replication"].contains("fenced");
}

}  // namespace

TEST_CASE("a fenced old primary says what the stream holds, and exits 0 on SIGTERM",
          "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  const json config = ReplicatedConfig(dir, nats->urls(), "agent-f", "quorum");
  uint64_t durable = 0;
  {
    auto primary = StartPrimary(dir, config);
    AddPercepts(primary->port(), 5);  // quorum: each acknowledged one is in the stream
    durable = Health(primary->port())["applied_seq"].get<uint64_t>();
    primary->child().Kill(SIGKILL);
    primary->child().Wait();
  }
  Standby standby(standby_dir / "state", nats->urls(), "agent-f");
  REQUIRE(standby.port() != 0);
  auto promoted = HttpJson(standby.port(), "POST", "/v1/promote", json::object());
  INFO(promoted.body);
  REQUIRE(promoted.status == 200);
  const uint64_t promoted_seq = promoted.Json()["seq"].get<uint64_t>();
  CHECK(promoted_seq == durable + 1);

  // The old primary comes back: fenced, and it says what the stream holds:
  // every event it had acknowledged, up to where the histories part (its
  // restart may write a first event of its own, which the stream never
  // takes), then the new primary's.
  RunningLimbic back(dir, config);
  REQUIRE(back.port() != 0);
  json h = WaitJson(back.port(), "/healthz", HasFenced, 30000);
  const json& r = h["replication"];
  INFO(h.dump());
  CHECK(r["replicated_seq"] == durable);
  CHECK(r["lag"] == r["durable_seq"].get<uint64_t>() - durable);
  CHECK(r["stream_last_seq"] >= promoted_seq);
  CHECK(r["stream_seq"] == r["stream_last_seq"]);  // one message per event
  CheckCleanStop(back, dir);
}

TEST_CASE("a quorum primary that never reached NATS names every server and exits 0 on SIGTERM",
          "[replication]") {
  TempDir dir;
  // Nothing listens on these ports.
  // Credentials are named without their secrets.
  const std::vector<std::string> urls = {"nats://127.0.0.1:1", "nats://ann:secretpw@127.0.0.1:2",
                                         "nats://s3cr3ttoken@127.0.0.1:3"};
  const std::string named = "nats://127.0.0.1:1,nats://ann:***@127.0.0.1:2,nats://***@127.0.0.1:3";
  RunningLimbic primary(dir, ReplicatedConfig(dir, urls, "agent-u", "quorum"));
  REQUIRE(primary.port() != 0);
  CHECK(primary.WaitForLog("on " + named, 0));
  json h = WaitJson(primary.port(), "/healthz", [](const json& h) {
    return ErrorOf(h).find("unreachable") != std::string::npos;
  });
  CHECK_THAT(ErrorOf(h), Catch::Contains(named));
  CHECK(Http(primary.port(), "GET", "/healthz").status == 503);
  CheckCleanStop(primary, dir);
  for (const std::string& line : primary.log()) {
    CHECK(line.find("secretpw") == std::string::npos);
    CHECK(line.find("s3cr3ttoken") == std::string::npos);
  }
  CHECK(h.dump().find("secretpw") == std::string::npos);
}

TEST_CASE("a primary restarted on an up-to-date stream exits 0 on SIGTERM", "[replication][nats]") {
  TempDir dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  const json config = ReplicatedConfig(dir, nats->urls(), "agent-h", "quorum");
  uint64_t durable = 0;
  // Restarted until a run finds nothing to write (the first restart may
  // record the reflexes' cursor) and so nothing to publish.
  for (int run = 0; run < 3; ++run) {
    auto primary = StartPrimary(dir, config);
    if (run == 0) AddPercepts(primary->port(), 3);
    WaitReplicated(primary->port());
    json h = Health(primary->port());
    const uint64_t now = h["applied_seq"].get<uint64_t>();
    CHECK(h["replication"]["replicated_seq"] == now);
    if (run > 0 && now == durable) {
      CheckCleanStop(*primary, dir);
      CHECK(primary->WaitForLog("stopped at seq " + std::to_string(durable), 0));
      return;
    }
    durable = now;
    CHECK(Terminate(*primary) == 0);
  }
  FAIL("every restart wrote something");
}

// What fencing rests on: once another writer's message is in the stream,
// nothing this primary still has in flight lands after it. (Expected last
// sequences alone let the pipeline line up again behind it: event k refused,
// k + 1 expecting exactly the slot the other writer took.)
TEST_CASE(
    "a primary with publishes in flight is fenced by another writer's message, none lands after it",
    "[replication][nats]") {
  TempDir dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  auto primary = StartPrimary(dir, ReplicatedConfig(dir, nats->urls(), "agent-i", "async"));
  Writers writers(primary->port(), 4);
  WaitJson(primary->port(), "/healthz",
           [](const json& h) { return h["replication"]["replicated_seq"] >= 200; });

  // Another writer claims the slot after the stream's last message, as a
  // promotion does (tried until it wins the race with the primary).
  limbic::nats::ConnectOptions co;
  co.servers = nats->urls();
  auto conn = limbic::nats::Connection::Connect(co);
  REQUIRE(conn.ok());
  const std::string subject = "limbic.agent-i.events";
  std::string claim;
  for (int i = 0; i < 200 && claim.empty(); ++i) {
    auto last = (*conn)->LastMessage("LIMBIC", subject);
    REQUIRE(last.ok());
    REQUIRE(last->has_value());
    const json prev = json::parse((*last)->data);
    const uint64_t seq = prev["seq"].get<uint64_t>() + 1;
    const std::string line = json{
        {"v", 1},
        {"seq", seq},
        {"ts", prev["ts"]},
        {"type", "primary_promoted"},
        {"agent", "agent-i"},
        {"stream", "LIMBIC"},
        {"stream_seq",
         (*last)->stream_seq}}.dump();
    auto pub = (*conn)->Publish(
        subject, {line, "agent-i:" + std::to_string(seq) + ":other", (*last)->stream_seq});
    if (pub.status.ok() && !pub.duplicate) claim = line;
  }
  REQUIRE_FALSE(claim.empty());
  json h = WaitJson(primary->port(), "/healthz", HasFenced, 30000);
  writers.Stop();
  INFO(h.dump());
  auto last = (*conn)->LastMessage("LIMBIC", subject);
  REQUIRE(last.ok());
  REQUIRE(last->has_value());
  CHECK((*last)->data == claim);
}

TEST_CASE("once NATS is back, neither a primary nor a standby says it is unreachable",
          "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  json config = ReplicatedConfig(dir, nats->urls(), "agent-n", "async");
  config["replication"]["timeout"] = "5s";
  auto primary = StartPrimary(dir, config);
  AddPercepts(primary->port(), 3);
  WaitReplicated(primary->port());
  Standby standby(standby_dir / "state", nats->urls(), "agent-n");
  REQUIRE(standby.port() != 0);
  WaitJson(standby.port(), "/healthz", [](const json& h) { return h["replication"]["lag"] == 0; });

  nats->Stop(0);
  auto unreachable = [](const json& h) {
    return ErrorOf(h).find("unreachable") != std::string::npos;
  };
  WaitJson(primary->port(), "/healthz", unreachable, 30000);
  WaitJson(
      standby.port(), "/healthz",
      [](const json& h) { return h["replication"]["connected"] == false; }, 30000);
  nats->Restart(0);
  // From the moment each says it is connected, until it is back to normal,
  // it never says NATS is unreachable.
  int stale = 0;
  std::string seen;
  bool primary_ok = false, standby_ok = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!(primary_ok && standby_ok) && std::chrono::steady_clock::now() < deadline) {
    for (uint16_t port : {primary->port(), standby.port()}) {
      json h = Health(port);
      if (!h.contains("replication")) continue;
      const json& r = h["replication"];
      if (r["connected"] == true && unreachable(h)) {
        ++stale;
        seen = h.dump();
      }
      const bool ok = r["connected"] == true && ErrorOf(h).empty() && r["lag"] == 0;
      (port == primary->port() ? primary_ok : standby_ok) = ok;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  INFO(seen);
  CHECK(primary_ok);
  CHECK(standby_ok);
  CHECK(stale == 0);
}

namespace {

std::string BenchBinary() { return LIMBIC_REPLICATION_BENCH; }

// The bench's scratch dirs in `dir`.
size_t BenchDirs(const std::string& dir) {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().filename().string().starts_with("limbic-replication-bench-")) ++n;
  return n;
}

// The bench with $TMPDIR = `tmp`.
RunResult Bench(const TempDir& tmp, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/env", "TMPDIR=" + tmp.path(), BenchBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv, "", 60000);
}

}  // namespace

TEST_CASE("the replication bench refuses unknown arguments and starts nothing",
          "[replication][bench]") {
  TempDir tmp;
  const size_t in_tmp = BenchDirs("/tmp");
  auto help = Bench(tmp, {"--help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("usage: limbic_replication_bench"));
  CHECK_THAT(help.out, Catch::Contains("--keep"));
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--bogus"},
                                             {"--seconds"},
                                             {"--reps", "two"},
                                             {"--reps", "1.5"},
                                             {"--modes", "local,sync"},
                                             {"--seconds", "1", "extra"}}) {
    auto r = Bench(tmp, args);
    INFO(args.front() << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("usage: limbic_replication_bench"));
  }
  CHECK(BenchDirs(tmp.path()) == 0);
  CHECK(BenchDirs("/tmp") == in_tmp);
}

TEST_CASE("the replication bench removes its scratch dir when a run fails, unless --keep",
          "[replication][bench]") {
  TempDir tmp;
  const size_t in_tmp = BenchDirs("/tmp");
  const std::vector<std::string> failing = {
      "--limbic", "/nonexistent/limbic", "--modes", "local", "--reps", "1", "--seconds", "1"};
  auto failed = Bench(tmp, failing);
  INFO(failed.err);
  CHECK(failed.exit_code == 1);
  CHECK_THAT(failed.err, Catch::Contains("limbic did not start"));
  CHECK(BenchDirs(tmp.path()) == 0);
  CHECK(BenchDirs("/tmp") == in_tmp);

  std::vector<std::string> keep = failing;
  keep.push_back("--keep");
  auto kept = Bench(tmp, keep);
  CHECK(kept.exit_code == 1);
  CHECK(BenchDirs(tmp.path()) == 1);
  CHECK_THAT(kept.err, Catch::Contains("kept " + tmp.path() + "/limbic-replication-bench-"));
}

TEST_CASE(
    "a primary and a standby refuse a stream that removes messages by itself, naming its limits",
    "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  CreateStream(*nats, "LIMITED", {"limbic.agent-m.events"},
               {{"max_msgs", 1000}, {"max_age", int64_t{3600} * 1000000000}});
  const std::string why =
      "stream LIMITED removes messages by itself (max_msgs 1000, max_age 3600 s)";
  {
    RunningLimbic primary(dir, ReplicatedConfig(dir, nats->urls(), "agent-m", "async", "LIMITED"));
    REQUIRE(primary.port() != 0);
    json h = WaitJson(primary.port(), "/healthz", HasFenced, 30000);
    INFO(h.dump());
    CHECK_THAT(h["replication"]["fenced"].get<std::string>(), Catch::Contains(why));
    CHECK(
        HttpJson(primary.port(), "POST", "/v1/percepts", {{"source", "t"}, {"type", "x"}}).status ==
        503);
    CheckCleanStop(primary, dir);
  }
  Standby standby(standby_dir / "state", nats->urls(), "agent-m", "LIMITED");
  REQUIRE(standby.port() != 0);
  json h = WaitJson(standby.port(), "/healthz", [](const json& h) { return !ErrorOf(h).empty(); });
  CHECK_THAT(ErrorOf(h), Catch::Contains(why));
  auto promoted = HttpJson(standby.port(), "POST", "/v1/promote", json::object());
  INFO(promoted.body);
  CHECK(promoted.status == 409);
  CHECK_THAT(promoted.body, Catch::Contains("removes messages by itself"));
}

TEST_CASE("a rebuild reads through a deleted last message, and names a stream that was purged",
          "[replication][nats]") {
  TempDir dir, rebuilt;
  auto nats = NatsCluster::Start(dir.path(), 1);
  ReplicateAndStop(dir, ReplicatedConfig(dir, nats->urls(), "agent-d", "async"), 5);
  const uint64_t last = StreamLastSeq(*nats, "LIMBIC");
  REQUIRE(last > 5);
  DeleteMessage(*nats, "LIMBIC", last);

  // nats-server 2.9 then names no last message of the subject; the stream
  // still holds the events before it, and the rebuild takes them all.
  auto r = Limbic({"replay", "--from", nats->url(0), "--stream", "LIMBIC", "--agent", "agent-d",
                   "--into", rebuilt / "a"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto log = LogLines(dir / "state");
  const auto taken = LogLines(rebuilt / "a");
  REQUIRE(taken.size() == last - 1);  // one message per event
  CHECK(std::equal(taken.begin(), taken.end(), log.begin()));

  // Purged: no events at all, and the rebuild says they were removed.
  const json purged = nats->JsApi(0, "$JS.API.STREAM.PURGE.LIMBIC", "{}");
  INFO(purged.dump());
  REQUIRE(purged.value("success", false));
  auto none = Limbic({"replay", "--from", nats->url(0), "--stream", "LIMBIC", "--agent", "agent-d",
                      "--into", rebuilt / "b"});
  CHECK(none.exit_code == 1);
  CHECK_THAT(none.err, Catch::Contains("holds no events of agent agent-d (subject "
                                       "limbic.agent-d.events): its messages through stream seq " +
                                       std::to_string(last) + " were removed"));
}

TEST_CASE(
    "a quorum write that finds its primary fenced is refused, saying it is in the local log only",
    "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  auto primary = StartPrimary(dir, ReplicatedConfig(dir, nats->urls(), "agent-w", "quorum"));
  AddPercepts(primary->port(), 3);
  Standby standby(standby_dir / "state", nats->urls(), "agent-w");
  REQUIRE(standby.port() != 0);
  // The old primary keeps running; once it is quiet (its reflex cursor
  // follows the percepts within a second) the promotion goes through.
  HttpReply promoted;
  for (int i = 0; i < 20; ++i) {
    WaitReplicated(primary->port());
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    promoted = HttpJson(standby.port(), "POST", "/v1/promote", json::object());
    if (promoted.status == 200) break;
  }
  INFO(promoted.body);
  REQUIRE(promoted.status == 200);

  // The old primary's next write reaches its log, then the stream refuses it.
  auto refused =
      HttpJson(primary->port(), "POST", "/v1/percepts", {{"source", "t"}, {"type", "late"}});
  INFO(refused.body);
  CHECK(refused.status == 503);
  CHECK_THAT(refused.body, Catch::Contains("fenced: "));
  CHECK_THAT(refused.body, Catch::Contains("this write is in this primary's local log only, never "
                                           "in the stream: send it to the current primary"));
  const auto log = LogLines(dir / "state");
  REQUIRE_FALSE(log.empty());
  CHECK_THAT(log.back(), Catch::Contains("\"late\""));
  for (const std::string& line : StreamLines(nats->urls(), "LIMBIC", "agent-w"))
    CHECK_THAT(line, !Catch::Contains("\"late\""));
  // From then on every write is refused before it is written.
  auto next = HttpJson(primary->port(), "POST", "/v1/percepts", {{"source", "t"}, {"type", "x"}});
  CHECK(next.status == 503);
  CHECK(LogLines(dir / "state").size() == log.size());
}

TEST_CASE(
    "a message deleted from the stream's end under a running primary is published again, "
    "and a stream missing events says so",
    "[replication][nats]") {
  TempDir dir, rebuilt;
  auto nats = NatsCluster::Start(dir.path(), 1);
  // A short duplicate window: JetStream drops the event published again
  // until it has passed.
  CreateStream(*nats, "LIMBIC", {"limbic.agent-e.events"},
               {{"duplicate_window", int64_t{3} * 1000000000}});
  const json config = ReplicatedConfig(dir, nats->urls(), "agent-e", "async");
  auto primary = StartPrimary(dir, config);
  auto quiet = [&] {  // the reflex cursor follows the percepts within a second
    WaitReplicated(primary->port());
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    WaitReplicated(primary->port());
    return StreamLastSeq(*nats, "LIMBIC");
  };
  auto stream_is_log = [&] {
    for (int i = 0; i < 100; ++i) {
      if (StreamLines(nats->urls(), "LIMBIC", "agent-e") == LogLines(dir / "state")) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  };
  AddPercepts(primary->port(), 5);
  uint64_t last = quiet();
  DeleteMessage(*nats, "LIMBIC", last);

  // The primary finds the stream holding fewer messages than the events it
  // took, reads where it stands, and publishes the deleted event again
  // once the duplicate window has passed.
  CHECK(primary->WaitForLog("fewer than the " + std::to_string(last) + " events it took", 20000));
  CHECK(stream_is_log());
  AddPercepts(primary->port(), 2);
  CHECK(stream_is_log());
  json h = Health(primary->port());
  INFO(h.dump());
  CHECK(h["status"] == "ok");

  // Deleted and written after before the primary looked: a gap nothing can
  // mend, and the primary says so.
  last = quiet();
  DeleteMessage(*nats, "LIMBIC", last);
  AddPercepts(primary->port(), 1);
  h = WaitJson(primary->port(), "/healthz", [](const json& h) { return !ErrorOf(h).empty(); });
  CHECK(h["status"] == "degraded");
  CHECK_THAT(ErrorOf(h), Catch::Contains("messages (stream seqs"));
  CHECK_THAT(ErrorOf(h), Catch::Contains("some were deleted or purged, so it can no longer start a "
                                         "standby or rebuild a state dir"));
  // It still replicates what it writes.
  AddPercepts(primary->port(), 1);
  WaitReplicated(primary->port());
  auto r = Limbic({"replay", "--from", nats->url(0), "--stream", "LIMBIC", "--agent", "agent-e",
                   "--into", rebuilt / "state"});
  INFO(r.out << r.err);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("was expected"));
}

}  // namespace replication_edges_test
