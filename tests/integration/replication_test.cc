// Replication of the events log on NATS JetStream (docs/scale.md), through
// the real binary and real nats-server processes on loopback: quorum and
// async modes, a SIGKILLed stream leader, NATS down, fencing, a standby and
// its promotion, and rebuilding a state dir from the stream alone.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "replication_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace replication_test {

using nlohmann::json;
using namespace limbic::testing;

TEST_CASE("quorum replication loses no acknowledged event when the stream leader is SIGKILLed",
          "[replication][nats]") {
  TempDir dir;
  auto nats = NatsCluster::Start(dir.path(), 3);
  RunningLimbic primary(dir, ReplicatedConfig(dir, nats->urls(), "agent-a", "quorum"));
  REQUIRE(primary.port() != 0);
  WaitJson(
      primary.port(), "/healthz", [](const json& h) { return h["status"] == "ok"; }, 30000);
  TempDir standby_dir;
  Standby standby(standby_dir / "state", nats->urls(), "agent-a");
  REQUIRE(standby.port() != 0);

  Storm storm;
  std::thread load([&] { RunStorm(primary.port(), 4, 150, &storm); });
  // Mid-storm: the server that leads the stream dies.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (Acked(storm) < 150 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  int leader = nats->WaitStreamLeader("LIMBIC");
  REQUIRE(leader >= 0);
  nats->Kill(leader);
  load.join();
  INFO("acknowledged " << Acked(storm) << ", 503s " << storm.refused.load());
  CHECK(Acked(storm) > 150);

  std::vector<std::string> live;
  for (int i = 0; i < 3; ++i)
    if (i != leader) live.push_back(nats->url(i));
  const LogAndStream settled =
      SettledLines(primary.port(), dir / "state", live, "LIMBIC", "agent-a");
  const std::vector<std::string>& local = settled.log;
  const std::vector<std::string>& stream = settled.stream;
  CHECK(stream.size() == local.size());
  CHECK(stream == local);  // the stream is the log, line for line
  size_t missing = 0;
  for (const std::string& id : storm.acked) {
    const std::string needle = "\"" + id + "\"";
    if (std::none_of(stream.begin(), stream.end(),
                     [&](const std::string& l) { return l.find(needle) != std::string::npos; }))
      ++missing;
  }
  CHECK(missing == 0);

  // The standby applied the same events: the same digest at the same seq.
  primary.child().Kill(SIGTERM);
  primary.child().Wait();
  const uint64_t last = LogLines(dir / "state").size();
  {
    INFO(standby.LogText());
    WaitJson(
        standby.port(), "/healthz",
        [&](const json& h) { return h.is_object() && h["applied_seq"] == last; }, 30000);
  }
  CHECK(CliDigest(dir / "state") == CliDigest(standby_dir / "state"));
  CHECK(LogLines(standby_dir / "state") == LogLines(dir / "state"));
}

TEST_CASE("quorum replication refuses writes while NATS is down and resumes by itself",
          "[replication][nats]") {
  TempDir dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  RunningLimbic primary(dir, ReplicatedConfig(dir, nats->urls(), "agent-q", "quorum"));
  REQUIRE(primary.port() != 0);
  WaitJson(
      primary.port(), "/healthz", [](const json& h) { return h["status"] == "ok"; }, 30000);
  auto first = HttpJson(primary.port(), "POST", "/v1/percepts",
                        {{"id", "before"}, {"source", "t"}, {"type", "x"}});
  REQUIRE(first.status == 201);

  nats->Stop(0);
  // Refused once publishing has failed for replication.timeout; nothing acknowledged.
  int acked_while_down = 0;
  bool refused = false;
  for (int i = 0; i < 200 && !refused; ++i) {
    auto r = HttpJson(primary.port(), "POST", "/v1/percepts",
                      {{"id", "down-" + std::to_string(i)}, {"source", "t"}, {"type", "x"}});
    if (r.status == 201) ++acked_while_down;
    if (r.status == 503) {
      refused = true;
      CHECK_THAT(r.body, Catch::Contains("NATS"));
    }
  }
  CHECK(refused);
  CHECK(acked_while_down == 0);
  auto h = Health(primary.port());
  CHECK(h["status"] == "degraded");

  nats->Restart(0);
  REQUIRE(nats->WaitReady());
  WaitJson(
      primary.port(), "/healthz", [](const json& h) { return h["status"] == "ok"; }, 30000);
  auto again = HttpJson(primary.port(), "POST", "/v1/percepts",
                        {{"id", "after"}, {"source", "t"}, {"type", "x"}});
  CHECK(again.status == 201);
  const LogAndStream settled =
      SettledLines(primary.port(), dir / "state", nats->urls(), "LIMBIC", "agent-q");
  CHECK(settled.stream == settled.log);
}

TEST_CASE("async replication goes on without NATS and catches up from the local log",
          "[replication][nats]") {
  TempDir dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  RunningLimbic primary(dir, ReplicatedConfig(dir, nats->urls(), "agent-s", "async"));
  REQUIRE(primary.port() != 0);
  nats->Stop(0);
  for (int i = 0; i < 20; ++i)
    REQUIRE(HttpJson(primary.port(), "POST", "/v1/percepts",
                     {{"id", "a-" + std::to_string(i)}, {"source", "t"}, {"type", "x"}})
                .status == 201);
  json lagging = WaitJson(primary.port(), "/healthz", [](const json& h) {
    return h["replication"]["lag"].get<uint64_t>() >= 20;
  });
  CHECK(lagging["replication"]["connected"] == false);
  nats->Restart(0);
  REQUIRE(nats->WaitReady());
  const LogAndStream settled =
      SettledLines(primary.port(), dir / "state", nats->urls(), "LIMBIC", "agent-s");
  CHECK(settled.stream == settled.log);
  // The lag is a metric too.
  auto metrics = Http(primary.port(), "GET", "/metrics");
  CHECK_THAT(metrics.body, Catch::Contains("limbic_replication_lag_events 0"));
}

TEST_CASE("a second primary for the same agent is fenced, and says why", "[replication][nats]") {
  TempDir one, two;
  auto nats = NatsCluster::Start(one.path(), 1);
  RunningLimbic first(one, ReplicatedConfig(one, nats->urls(), "twin", "async"));
  REQUIRE(first.port() != 0);
  for (int i = 0; i < 5; ++i)
    REQUIRE(
        HttpJson(first.port(), "POST", "/v1/percepts", {{"source", "t"}, {"type", "x"}}).status ==
        201);
  WaitReplicated(first.port());

  // Another state dir with the same agent name: the stream is ahead of its log.
  RunningLimbic second(two, ReplicatedConfig(two, nats->urls(), "twin", "async"));
  REQUIRE(second.port() != 0);
  json fenced = WaitJson(second.port(), "/healthz", [](const json& h) {
    return h.contains("replication") && h["replication"].contains("fenced");
  });
  CHECK_THAT(fenced["replication"]["fenced"].get<std::string>(),
             Catch::Contains("another primary"));
  auto refused = HttpJson(second.port(), "POST", "/v1/percepts", {{"source", "t"}, {"type", "x"}});
  CHECK(refused.status == 503);
  CHECK_THAT(refused.body, Catch::Contains("fenced"));
  CHECK(Http(second.port(), "GET", "/healthz").status == 503);
  // A standby on a state dir with a history of its own says so, and applies nothing.
  TempDir other;
  auto added = Limbic(
      {"--state", other / "state", "percept", "add", "--source", "elsewhere", "--type", "x"});
  REQUIRE(added.exit_code == 0);
  {
    Standby stray(other / "state", nats->urls(), "twin");
    REQUIRE(stray.port() != 0);
    json h = WaitJson(stray.port(), "/healthz", [](const json& h) {
      return h.contains("replication") && h["replication"].contains("error");
    });
    CHECK_THAT(h["replication"]["error"].get<std::string>(), Catch::Contains("not a copy"));
    CHECK(h["applied_seq"] == 1);
  }
  // The first goes on; the stream is still its log.
  REQUIRE(HttpJson(first.port(), "POST", "/v1/percepts", {{"source", "t"}, {"type", "x"}}).status ==
          201);
  const LogAndStream settled =
      SettledLines(first.port(), one / "state", nats->urls(), "LIMBIC", "twin");
  CHECK(settled.stream == settled.log);
}

TEST_CASE("a standby is promoted, and the old primary coming back is fenced",
          "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  const json config = ReplicatedConfig(dir, nats->urls(), "agent-p", "quorum");
  auto primary = StartPrimary(dir, config);
  AddPercepts(primary->port(), 10);
  Standby standby(standby_dir / "state", nats->urls(), "agent-p");
  REQUIRE(standby.port() != 0);
  // A standby serves reads and refuses writes.
  WaitJson(standby.port(), "/v1/percepts",
           [](const json& p) { return p["percepts"].size() == 10; });
  CHECK(HttpJson(standby.port(), "POST", "/v1/percepts", {{"source", "t"}, {"type", "x"}}).status ==
        503);

  primary->child().Kill(SIGKILL);
  primary->child().Wait();
  primary.reset();
  auto promoted = Limbic({"--state", standby_dir / "state", "--json", "promote"});
  INFO(promoted.out << promoted.err);
  REQUIRE(promoted.exit_code == 0);
  json receipt = json::parse(promoted.out);
  CHECK(receipt["promoted"] == true);
  // The new primary takes writes.
  CHECK(HttpJson(standby.port(), "POST", "/v1/percepts", {{"source", "t"}, {"type", "x"}}).status ==
        201);

  // The old primary comes back on its own state dir: fenced.
  RunningLimbic back(dir, config);
  REQUIRE(back.port() != 0);
  json fenced = WaitJson(back.port(), "/healthz", [](const json& h) {
    return h.contains("replication") && h["replication"].contains("fenced");
  });
  CHECK(HttpJson(back.port(), "POST", "/v1/percepts", {{"source", "t"}, {"type", "x"}}).status ==
        503);
}

TEST_CASE("a standby takes checkpoints of its own, and looks into the past start from them",
          "[replication][nats][checkpoint]") {
  namespace fs = std::filesystem;
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  auto primary = StartPrimary(dir, ReplicatedConfig(dir, nats->urls(), "agent-c", "quorum"));
  // The primary takes none (the default every 100,000); the standby one
  // every 10 events.
  json standby_config = BaseConfig(standby_dir);
  standby_config["checkpoints"] = {{"every", 10}, {"keep", 4}, {"dense", 2}};
  const std::string config_path = standby_dir / "limbic.json";
  std::ofstream(config_path) << standby_config.dump();
  const std::string state = standby_dir / "state";
  Standby standby(state, nats->urls(), "agent-c", "LIMBIC", config_path);
  REQUIRE(standby.port() != 0);
  AddPercepts(primary->port(), 45);
  const uint64_t last = Http(primary->port(), "GET", "/v1/state/digest").Json()["applied_seq"];
  WaitJson(standby.port(), "/v1/state/digest",
           [&](const json& d) { return d["applied_seq"] == last; });
  auto checkpoints = [&] {
    std::vector<uint64_t> seqs;
    std::error_code ec;
    // Checkpoints only: 20 digits (tmp-* are being taken or removed).
    for (const auto& e : fs::directory_iterator(state + "/checkpoints", ec)) {
      const std::string name = e.path().filename().string();
      if (name.size() == 20 && fs::exists(e.path() / "manifest.json"))
        seqs.push_back(std::stoull(name));
    }
    std::sort(seqs.begin(), seqs.end());
    return seqs;
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((checkpoints().empty() || checkpoints().back() + 10 <= last) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::vector<uint64_t> taken = checkpoints();
  INFO(standby.LogText());
  REQUIRE(taken.size() >= 2);
  CHECK(taken.size() <= 4);
  CHECK_FALSE(fs::exists(dir / "state/checkpoints"));
  // At a checkpoint, just after one, and at the end: the standby's answer
  // starts from its checkpoint and equals the primary's replay from seq 1.
  for (uint64_t seq : {taken.front(), taken.front() + 1, last}) {
    INFO("seq " << seq);
    auto at = Http(standby.port(), "GET", "/v1/state/at?digest=true&seq=" + std::to_string(seq));
    INFO(at.body);
    REQUIRE(at.status == 200);
    CHECK(at.Json()["from_checkpoint"].get<uint64_t>() >= taken.front());
    CHECK(at.Json()["digest"] == CliDigest(dir / "state", {"--at-seq", std::to_string(seq)}));
  }
  auto fsck = Limbic({"--state", state, "--json", "fsck"});
  INFO(fsck.out << fsck.err);
  CHECK(json::parse(fsck.out)["checkpoints"] == taken.size());
}

TEST_CASE("replay --from nats:// rebuilds a state dir with the primary's digest",
          "[replication][nats]") {
  TempDir dir, rebuilt;
  auto nats = NatsCluster::Start(dir.path(), 1);
  {
    RunningLimbic primary(dir, ReplicatedConfig(dir, nats->urls(), "agent-r", "async"));
    REQUIRE(primary.port() != 0);
    auto p =
        HttpJson(primary.port(), "POST", "/v1/percepts", {{"source", "chat"}, {"type", "msg"}});
    REQUIRE(p.status == 201);
    REQUIRE(HttpJson(primary.port(), "POST", "/v1/threads",
                     {{"goal", "answer"}, {"from_percept", p.Json()["id"]}})
                .status == 201);
    WaitReplicated(primary.port());
    primary.child().Kill(SIGTERM);
    primary.child().Wait();
  }
  auto r = Limbic({"replay", "--from", nats->url(0), "--stream", "LIMBIC", "--agent", "agent-r",
                   "--into", rebuilt / "state"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(CliDigest(rebuilt / "state") == CliDigest(dir / "state"));
  // No stream of that agent: a clear error.
  auto none = Limbic({"replay", "--from", nats->url(0), "--stream", "LIMBIC", "--agent", "nobody",
                      "--into", rebuilt / "other"});
  CHECK(none.exit_code == 1);
  CHECK_THAT(none.err, Catch::Contains("no events of agent nobody"));
}

TEST_CASE("replication config is checked: bad URLs, names and modes are named",
          "[replication][config]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["replication"] = {{"nats", {"http://x"}}, {"agent", "a.b"}, {"mode", "sync"}};
  std::ofstream(dir / "limbic.json") << config.dump();
  auto r = Limbic({"--state", dir / "state", "run", "--config", dir / "limbic.json"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("replication.nats[0]: \"http://x\" is not a NATS server URL"));
  CHECK_THAT(r.err, !Catch::Contains("got \"http://x\""));  // said once
  CHECK_THAT(r.err, Catch::Contains("replication.mode"));
  CHECK_THAT(r.err, Catch::Contains("replication.agent"));
}

TEST_CASE(
    "promote on a stopped standby's state dir applies the rest of the stream and fences the old "
    "primary",
    "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  const json config = ReplicatedConfig(dir, nats->urls(), "agent-o", "quorum");
  auto primary = StartPrimary(dir, config);
  AddPercepts(primary->port(), 3);
  {
    Standby standby(standby_dir / "state", nats->urls(), "agent-o");
    REQUIRE(standby.port() != 0);
    WaitJson(standby.port(), "/v1/percepts",
             [](const json& p) { return p["percepts"].size() == 3; });
  }  // the standby stops; the primary writes on
  AddPercepts(primary->port(), 4);
  primary->child().Kill(SIGKILL);
  primary->child().Wait();
  primary.reset();

  auto promoted = Limbic({"--state", standby_dir / "state", "--json", "promote"});
  INFO(promoted.out << promoted.err);
  REQUIRE(promoted.exit_code == 0);
  json receipt = json::parse(promoted.out);
  CHECK(receipt["offline"] == true);
  // Every event the stream held, then primary_promoted: the stream is its log.
  CHECK(StreamLines(nats->urls(), "LIMBIC", "agent-o") == LogLines(standby_dir / "state"));
  auto percepts = Limbic({"--state", standby_dir / "state", "--json", "percept", "list"});
  REQUIRE(percepts.exit_code == 0);
  CHECK(json::parse(percepts.out).size() == 7);
  // A second promote: it is no standby any more.
  auto again = Limbic({"--state", standby_dir / "state", "promote"});
  CHECK(again.exit_code == 1);
  CHECK_THAT(again.err, Catch::Contains("does not say it was one"));

  RunningLimbic back(dir, config);
  REQUIRE(back.port() != 0);
  WaitJson(back.port(), "/healthz", [](const json& h) {
    return h.contains("replication") && h["replication"].contains("fenced");
  });
}

// The neighbour of catching up (the stream behind the log, async above): a
// stream that holds a different event at a seq this log has is not caught
// up to, it fences.
TEST_CASE("a primary whose unreplicated tail differs from the stream is fenced, not caught up",
          "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  const json config = ReplicatedConfig(dir, nats->urls(), "agent-d", "async");
  auto primary = StartPrimary(dir, config);
  AddPercepts(primary->port(), 3);
  WaitReplicated(primary->port());
  {
    Standby standby(standby_dir / "state", nats->urls(), "agent-d");
    REQUIRE(standby.port() != 0);
  }
  // NATS down: the primary goes on alone (async), then dies with a tail the
  // stream never got.
  nats->Stop(0);
  AddPercepts(primary->port(), 2);
  primary->child().Kill(SIGKILL);
  primary->child().Wait();
  primary.reset();
  nats->Restart(0);
  REQUIRE(nats->WaitReady());
  // The standby is promoted: the stream's next event is primary_promoted.
  auto promoted = Limbic({"--state", standby_dir / "state", "promote"});
  INFO(promoted.out << promoted.err);
  REQUIRE(promoted.exit_code == 0);

  RunningLimbic back(dir, config);
  REQUIRE(back.port() != 0);
  json fenced = WaitJson(back.port(), "/healthz", [](const json& h) {
    return h.contains("replication") && h["replication"].contains("fenced");
  });
  CHECK_THAT(fenced["replication"]["fenced"].get<std::string>(),
             Catch::Contains("is not this log's"));
  CHECK(HttpJson(back.port(), "POST", "/v1/percepts", {{"source", "t"}, {"type", "x"}}).status ==
        503);
  // Nothing of the old tail reached the stream.
  CHECK(StreamLines(nats->urls(), "LIMBIC", "agent-d") == LogLines(standby_dir / "state"));
}

}  // namespace replication_test
