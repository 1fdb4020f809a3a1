// A standby's edge cases (docs/scale.md, "Running a standby" and
// promotion), through the real binary and real nats-server processes on
// loopback: the one stream a standby dir follows, and the streams it
// refuses (other subjects, a message written after the history);
// promotions that must be refused and what they leave, and one right
// after the primary died mid-burst; a state dir that takes no local
// write; a consumer that stops sending, and a stream it cannot read.
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "replication_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace standby_test {

using nlohmann::json;
using namespace limbic::testing;

TEST_CASE("a standby's state dir follows one agent's stream: a follow of another is refused",
          "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  auto primary = StartPrimary(dir, ReplicatedConfig(dir, nats->urls(), "agent-k", "async"));
  AddPercepts(primary->port(), 3);
  WaitReplicated(primary->port());
  const std::string state = standby_dir / "state";
  {
    Standby standby(state, nats->urls(), "agent-k");
    REQUIRE(standby.port() != 0);
    WaitJson(standby.port(), "/healthz", [](const json& h) { return h["applied_seq"] >= 3; });
  }
  const std::string file = state + "/standby.json";
  std::ifstream in(file);
  const json before = json::parse(in);
  CHECK(before["agent"] == "agent-k");
  auto other = Run({LimbicBinary(), "follow", "--state", state, "--nats", nats->url(0), "--agent",
                    "agent-j", "--port", "0"},
                   "", 20000);
  INFO(other.out << other.err);
  CHECK(other.exit_code == 1);
  CHECK_THAT(other.out + other.err,
             Catch::Contains("is the standby of agent agent-k on stream LIMBIC") &&
                 Catch::Contains("not of agent agent-j"));
  std::ifstream again(file);
  CHECK(json::parse(again) == before);
  // The neighbouring case: the same agent and stream on other server URLs
  // (the same server, named otherwise) is followed.
  const std::string renamed = "nats://localhost:" + std::to_string(nats->client_port(0));
  Standby same(state, {renamed}, "agent-k");
  REQUIRE(same.port() != 0);
  WaitJson(same.port(), "/healthz", [](const json& h) { return h["applied_seq"] >= 3; });
  std::ifstream now(file);
  CHECK(json::parse(now)["nats"] == json::array({renamed}));
}

TEST_CASE(
    "promotion refuses a standby whose log is not the stream's, naming the first differing seq",
    "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  const json config = ReplicatedConfig(dir, nats->urls(), "agent-x", "quorum");
  auto primary = StartPrimary(dir, config);
  AddPercepts(primary->port(), 12);
  const uint64_t at = Health(primary->port())["applied_seq"].get<uint64_t>();
  const std::string state = standby_dir / "state";
  {
    Standby standby(state, nats->urls(), "agent-x");
    REQUIRE(standby.port() != 0);
    WaitJson(standby.port(), "/healthz", [&](const json& h) { return h["applied_seq"] == at; });
  }
  // A local write on the stopped standby, as an older limbic took it
  // (standby.json moved aside: this one refuses it).
  std::filesystem::rename(state + "/standby.json", state + "/standby.json.aside");
  REQUIRE(
      Limbic({"--state", state, "percept", "add", "--source", "local", "--type", "x"}).exit_code ==
      0);
  std::filesystem::rename(state + "/standby.json.aside", state + "/standby.json");
  // The primary goes on: seqs at+1 .. at+10, each acknowledged by the quorum.
  AddPercepts(primary->port(), 10);
  const std::string first_diff = "at seq " + std::to_string(at + 1);

  auto offline = Limbic({"--state", state, "promote"});
  INFO(offline.out << offline.err);
  CHECK(offline.exit_code == 1);
  CHECK_THAT(offline.err, Catch::Contains(first_diff));
  CHECK(std::filesystem::exists(state + "/standby.json"));  // still a standby
  // Nothing was published: the primary is not fenced and the stream is its log.
  CHECK(
      HttpJson(primary->port(), "POST", "/v1/percepts", {{"source", "t"}, {"type", "x"}}).status ==
      201);
  {
    const LogAndStream settled =
        SettledLines(primary->port(), dir / "state", nats->urls(), "LIMBIC", "agent-x");
    CHECK(settled.stream == settled.log);
  }

  // Online the same: the standby follows no more, says where, and refuses
  // to be promoted (at once, not after the promotion's deadline).
  Standby standby(state, nats->urls(), "agent-x");
  REQUIRE(standby.port() != 0);
  json h = WaitJson(standby.port(), "/healthz", [](const json& h) { return !ErrorOf(h).empty(); });
  CHECK_THAT(ErrorOf(h), Catch::Contains(first_diff));
  auto online = HttpJson(standby.port(), "POST", "/v1/promote", json::object());
  CHECK(online.status == 409);
  CHECK_THAT(online.body, Catch::Contains(first_diff));
  {
    const LogAndStream settled =
        SettledLines(primary->port(), dir / "state", nats->urls(), "LIMBIC", "agent-x");
    CHECK(settled.stream == settled.log);
  }
}

TEST_CASE("a standby's state dir takes no local write from the command line", "[replication]") {
  TempDir dir;
  const std::string state = dir / "state";
  const std::vector<std::string> add = {"--state",  state,   "percept", "add",
                                        "--source", "local", "--type",  "x"};
  {
    // NATS need not answer: the state dir is a standby's from its start.
    Standby standby(state, {"nats://127.0.0.1:1"}, "agent-w");
    REQUIRE(standby.port() != 0);
    auto running = Limbic(add);
    CHECK(running.exit_code == 1);
    CHECK_THAT(running.err, Catch::Contains(state + "/standby.json"));
  }
  auto stopped = Limbic(add);
  CHECK(stopped.exit_code == 1);
  CHECK_THAT(stopped.err, Catch::Contains(state + "/standby.json"));
  CHECK_THAT(stopped.err, Catch::Contains("limbic promote --state " + state));
  CHECK_THAT(stopped.err, Catch::Contains("remove"));
  // Another kind of write, the same refusal from the same place.
  auto thread = Limbic({"--state", state, "thread", "create", "--goal", "g"});
  CHECK(thread.exit_code == 1);
  CHECK_THAT(thread.err, Catch::Contains("standby.json"));
  // Nor does a primary start there.
  std::ofstream(dir / "limbic.json") << BaseConfig(dir).dump();
  auto run = Limbic({"--state", state, "run", "--config", dir / "limbic.json"});
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.err, Catch::Contains("standby.json"));
  // Reads are served; a recall that would reinforce what it finds does not.
  auto list = Limbic({"--state", state, "--json", "percept", "list"});
  CHECK(list.exit_code == 0);
  auto recall = Limbic({"--state", state, "memory", "recall", "anything"});
  CHECK(recall.exit_code == 0);
  CHECK_THAT(recall.err, Catch::Contains("recalling without reinforcing"));
  CHECK(LogLines(state).empty());
}

TEST_CASE("a promotion refused while the old primary writes leaves the standby following",
          "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  auto primary = StartPrimary(dir, ReplicatedConfig(dir, nats->urls(), "agent-r", "async"));
  AddPercepts(primary->port(), 5);
  Standby standby(standby_dir / "state", nats->urls(), "agent-r");
  REQUIRE(standby.port() != 0);
  WaitJson(standby.port(), "/healthz", [](const json& h) { return h["applied_seq"] >= 5; });

  // The old primary writes all along: the stream moves on under each promotion.
  Writers writers(primary->port(), 4);
  // Each promotion starts with the standby well behind (stopped while the
  // primary wrote 2,000 events), so it is still catching up while the
  // primary writes on: the stream moves on under it.
  auto promote_behind = [&] {
    const uint64_t from = Health(primary->port())["applied_seq"].get<uint64_t>();
    kill(standby.pid(), SIGSTOP);
    WaitJson(primary->port(), "/healthz",
             [&](const json& h) { return h["applied_seq"].get<uint64_t>() >= from + 2000; });
    kill(standby.pid(), SIGCONT);
    return HttpJson(standby.port(), "POST", "/v1/promote", json::object());
  };
  auto refused = promote_behind();
  CHECK(refused.status == 503);
  CHECK_THAT(refused.body, Catch::Contains("still writing"));
  // Still a standby: it follows on, and takes no write.
  json h = Health(standby.port());
  CHECK(h["replication"]["role"] == "standby");
  const uint64_t applied = h["applied_seq"].get<uint64_t>();
  WaitJson(standby.port(), "/healthz", [&](const json& h) { return h["applied_seq"] > applied; });
  CHECK(HttpJson(standby.port(), "POST", "/v1/percepts", {{"source", "t"}, {"type", "x"}}).status ==
        503);
  // A second try is refused the same way, not as "a promotion is under way".
  auto again = promote_behind();
  INFO("standby log:\n" << standby.LogText());
  CHECK(again.status == 503);
  CHECK_THAT(again.body, Catch::Contains("still writing"));
  writers.Stop();

  // Once the old primary is gone (its stream caught up: async), the
  // promotion goes through.
  WaitReplicated(primary->port());
  primary->child().Kill(SIGKILL);
  primary->child().Wait();
  auto promoted = HttpJson(standby.port(), "POST", "/v1/promote", json::object());
  INFO(promoted.body);
  REQUIRE(promoted.status == 200);
  CHECK(HttpJson(standby.port(), "POST", "/v1/percepts", {{"source", "t"}, {"type", "x"}}).status ==
        201);
  WaitReplicated(standby.port());
  const std::vector<std::string> log = LogLines(standby_dir / "state");
  CHECK(StreamLines(nats->urls(), "LIMBIC", "agent-r") == log);
  // The old primary's log is a prefix of it: nothing it wrote was lost.
  const std::vector<std::string> old = LogLines(dir / "state");
  REQUIRE(old.size() < log.size());
  CHECK(std::equal(old.begin(), old.end(), log.begin()));
}

TEST_CASE(
    "a quorum standby promoted right after its primary died mid-burst becomes a whole primary",
    "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  auto primary = StartPrimary(dir, ReplicatedConfig(dir, nats->urls(), "agent-b", "quorum"));
  const std::string config_path = standby_dir / "limbic.json";
  std::ofstream(config_path)
      << ReplicatedConfig(standby_dir, nats->urls(), "agent-b", "quorum").dump();
  const std::string state = standby_dir / "state";
  Standby standby(state, nats->urls(), "agent-b", "LIMBIC", config_path);
  REQUIRE(standby.port() != 0);
  // The primary dies right after a burst: its reflex cursor (recorded up
  // to a second after the percepts it covers) is behind its last percepts.
  AddPercepts(primary->port(), 20);
  primary->child().Kill(SIGKILL);
  primary->child().Wait();
  uint64_t cursor = 0, last_percept = 0;
  for (const std::string& line : LogLines(dir / "state")) {
    const json e = json::parse(line);
    if (e["type"] == "reflexes_evaluated") cursor = e["through_seq"].get<uint64_t>();
    if (e["type"] == "percept_arrived") last_percept = e["seq"].get<uint64_t>();
  }
  REQUIRE(cursor < last_percept);

  auto promoted = HttpJson(standby.port(), "POST", "/v1/promote", json::object());
  INFO(promoted.body << "\n" << standby.LogText());
  REQUIRE(promoted.status == 200);
  CHECK_FALSE(std::filesystem::exists(state + "/standby.json"));
  // A primary, replicating (a quorum primary takes writes once it has
  // checked the stream): it takes writes, and the reflex cursor it caught
  // up reaches the stream.
  WaitJson(standby.port(), "/healthz", [](const json& h) {
    return h["status"] == "ok" && h["replication"]["role"] == "primary" &&
           h["replication"]["lag"] == 0;
  });
  CHECK(HttpJson(standby.port(), "POST", "/v1/percepts", {{"source", "t"}, {"type", "x"}}).status ==
        201);
  for (int i = 0; i < 100 && !standby.Logged("promoted: the primary of agent agent-b"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(standby.Logged("promoted: the primary of agent agent-b"));
  bool caught_up = false;
  for (const std::string& line : StreamLines(nats->urls(), "LIMBIC", "agent-b")) {
    const json e = json::parse(line);
    if (e["type"] == "reflexes_evaluated" && e["through_seq"].get<uint64_t>() >= last_percept)
      caught_up = true;
  }
  CHECK(caught_up);
}

TEST_CASE(
    "a message written after the history by someone else is refused by a promotion and a rebuild",
    "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  auto primary = StartPrimary(dir, ReplicatedConfig(dir, nats->urls(), "agent-g", "quorum"));
  AddPercepts(primary->port(), 10);
  primary->child().Kill(SIGKILL);
  primary->child().Wait();
  limbic::nats::ConnectOptions co;
  co.servers = nats->urls();
  auto conn = limbic::nats::Connection::Connect(co);
  REQUIRE(conn.ok());
  const std::string subject = "limbic.agent-g.events";
  auto last = (*conn)->LastMessage("LIMBIC", subject);
  REQUIRE(last.ok());
  REQUIRE(last->has_value());
  const uint64_t end = json::parse((*last)->data)["seq"].get<uint64_t>();
  const std::string state = standby_dir / "state";
  Standby standby(state, nats->urls(), "agent-g");
  REQUIRE(standby.port() != 0);
  WaitJson(standby.port(), "/healthz", [&](const json& h) { return h["applied_seq"] == end; });

  // A third party publishes event 5's line again, under an id of its own.
  auto fifth = (*conn)->GetMessage("LIMBIC", 5);
  REQUIRE(fifth.ok());
  auto forged = (*conn)->Publish(subject, {fifth->data, "agent-g:5:forged"});
  REQUIRE(forged.status.ok());
  REQUIRE(forged.stream_seq == (*last)->stream_seq + 1);

  auto promoted = HttpJson(standby.port(), "POST", "/v1/promote", json::object());
  INFO(promoted.body);
  CHECK(promoted.status == 409);
  CHECK_THAT(promoted.body,
             Catch::Contains("(stream seq " + std::to_string(forged.stream_seq) +
                             ") holds event seq 5, but this standby has applied through seq " +
                             std::to_string(end)));
  CHECK(std::filesystem::exists(state + "/standby.json"));
  CHECK(Health(standby.port())["replication"]["role"] == "standby");

  TempDir rebuilt;
  auto rebuild = Limbic({"replay", "--from", nats->url(0), "--stream", "LIMBIC", "--agent",
                         "agent-g", "--into", rebuilt / "state"});
  INFO(rebuild.out << rebuild.err);
  CHECK(rebuild.exit_code != 0);
  CHECK_THAT(rebuild.err, Catch::Contains("would leave out the events after stream seq 5"));
}

TEST_CASE("a standby refuses to follow a stream that holds other subjects too, as a primary does",
          "[replication][nats]") {
  TempDir dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  CreateStream(*nats, "OTHERS", {"limbic.agent-o.events", "other.>"});
  const std::string state = dir / "standby";
  Standby standby(state, nats->urls(), "agent-o", "OTHERS");
  REQUIRE(standby.port() != 0);
  json h = WaitJson(standby.port(), "/healthz", [](const json& h) { return !ErrorOf(h).empty(); });
  CHECK_THAT(ErrorOf(h), Catch::Contains("stream OTHERS holds subjects [limbic.agent-o.events, "
                                         "other.>]: replication needs the agent's own stream"));
  auto promoted = HttpJson(standby.port(), "POST", "/v1/promote", json::object());
  INFO(promoted.body);
  CHECK(promoted.status == 409);
  CHECK_THAT(promoted.body, Catch::Contains("holds subjects"));
  CHECK(std::filesystem::exists(state + "/standby.json"));
}

TEST_CASE("a standby's health says when it cannot read where the stream ends, until it can",
          "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 3);
  auto primary = StartPrimary(dir, ReplicatedConfig(dir, nats->urls(), "agent-l", "async"));
  AddPercepts(primary->port(), 5);
  WaitReplicated(primary->port());
  Standby standby(standby_dir / "state", nats->urls(), "agent-l");
  REQUIRE(standby.port() != 0);
  WaitJson(
      standby.port(), "/healthz",
      [](const json& h) { return h["applied_seq"] >= 5 && h["replication"]["lag"] == 0; }, 30000);
  // Two servers of three gone: JetStream has no quorum, and the standby's
  // looks at the stream fail while its connection to the third is fine.
  nats->Kill(1);
  nats->Kill(2);
  json h = WaitJson(
      standby.port(), "/healthz",
      [](const json& h) {
        return ErrorOf(h).find("cannot read where stream LIMBIC ends") != std::string::npos;
      },
      30000);
  CHECK(h["status"] == "degraded");
  nats->Restart(1);
  nats->Restart(2);
  REQUIRE(nats->WaitReady());
  WaitJson(
      standby.port(), "/healthz",
      [](const json& h) { return h["status"] == "ok" && ErrorOf(h).empty(); }, 60000);
}

TEST_CASE("a standby whose consumer stops sending reads the stream again, and says so",
          "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  auto primary = StartPrimary(dir, ReplicatedConfig(dir, nats->urls(), "agent-w", "quorum"));
  AddPercepts(primary->port(), 5);
  Standby standby(standby_dir / "state", nats->urls(), "agent-w");
  REQUIRE(standby.port() != 0);
  const uint64_t before = Health(primary->port())["applied_seq"].get<uint64_t>();
  WaitJson(standby.port(), "/healthz", [&](const json& h) { return h["applied_seq"] >= before; });

  // The standby's ordered consumer goes away without a word to it: it
  // sends nothing more while the stream grows (as one did after a stream
  // leader was SIGKILLed under load).
  REQUIRE(nats->DeleteConsumers(0, "LIMBIC") >= 1);
  AddPercepts(primary->port(), 5);
  const uint64_t after = Health(primary->port())["applied_seq"].get<uint64_t>();
  REQUIRE(after > before);
  INFO("before " << before << ", after " << after);
  // Meanwhile its health says what the stream holds: the lag is not hidden.
  WaitJson(standby.port(), "/healthz",
           [&](const json& h) { return h["replication"]["stream_last_seq"] >= after; });
  INFO(standby.LogText());
  json h = WaitJson(standby.port(), "/healthz",
                    [&](const json& h) { return h["applied_seq"] >= after; });
  CHECK(h["replication"]["lag"] == 0);
  CHECK(standby.Logged("but its consumer has sent nothing after seq"));
  // The primary stopped, the standby holds its log line for line.
  CHECK(Terminate(*primary) == 0);
  const uint64_t last = LogLines(dir / "state").size();
  WaitJson(standby.port(), "/healthz", [&](const json& h) { return h["applied_seq"] == last; });
  CHECK(LogLines(standby_dir / "state") == LogLines(dir / "state"));
}

TEST_CASE(
    "a primary publishes again an event whose message was deleted, and a new standby follows "
    "through the hole",
    "[replication][nats]") {
  TempDir dir, standby_dir, rebuilt;
  auto nats = NatsCluster::Start(dir.path(), 1);
  // JetStream drops a message whose id it took within its duplicate window
  // (2 min by default), deleted or not: 5 s here.
  CreateStream(*nats, "LIMBIC", {"limbic.agent-h.events"},
               {{"duplicate_window", int64_t{5} * 1000000000}});
  const json config = ReplicatedConfig(dir, nats->urls(), "agent-h", "async");
  ReplicateAndStop(dir, config, 5);
  const uint64_t last = StreamLastSeq(*nats, "LIMBIC");
  DeleteMessage(*nats, "LIMBIC", last);

  // Back, the primary finds the stream one event short and publishes it
  // again after the hole, once the duplicate window has passed; meanwhile
  // it says why the stream takes nothing.
  auto primary = StartPrimary(dir, config);
  AddPercepts(primary->port(), 2);
  CHECK(primary->WaitForLog("as a duplicate of stream seq " + std::to_string(last) +
                                ", which stream LIMBIC no longer holds",
                            20000));
  WaitReplicated(primary->port());
  const json info = nats->JsApi(0, "$JS.API.STREAM.INFO.LIMBIC", "");
  INFO(info.dump());
  CHECK(info["state"]["num_deleted"] == 1);

  // A standby on an empty dir starts at the stream's first message.
  Standby standby(standby_dir / "state", nats->urls(), "agent-h");
  REQUIRE(standby.port() != 0);
  const uint64_t durable = Health(primary->port())["replication"]["durable_seq"].get<uint64_t>();
  json h = WaitJson(standby.port(), "/healthz", [&](const json& h) {
    return h["applied_seq"].get<uint64_t>() >= durable || !ErrorOf(h).empty();
  });
  INFO(h.dump());
  CHECK(ErrorOf(h).empty());
  CHECK(Terminate(*primary) == 0);
  const auto log = LogLines(dir / "state");
  const auto followed = LogLines(standby_dir / "state");
  REQUIRE(followed.size() >= durable);
  CHECK(std::equal(followed.begin(), followed.begin() + static_cast<std::ptrdiff_t>(durable),
                   log.begin()));

  // A rebuild reads through the hole too.
  auto r = Limbic({"replay", "--from", nats->url(0), "--stream", "LIMBIC", "--agent", "agent-h",
                   "--into", rebuilt / "state"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(LogLines(rebuilt / "state") == StreamLines(nats->urls(), "LIMBIC", "agent-h"));
  CHECK(LogLines(rebuilt / "state") == log);
}

TEST_CASE("a standby stops following a stream that is given limits, and its promotion is refused",
          "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  const json config = ReplicatedConfig(dir, nats->urls(), "agent-u", "async");
  auto primary = StartPrimary(dir, config);
  AddPercepts(primary->port(), 3);
  WaitReplicated(primary->port());
  Standby standby(standby_dir / "state", nats->urls(), "agent-u");
  REQUIRE(standby.port() != 0);
  WaitJson(standby.port(), "/healthz", [](const json& h) {
    return h["replication"]["lag"] == 0 && h["applied_seq"].get<uint64_t>() >= 3;
  });
  json cfg = nats->JsApi(0, "$JS.API.STREAM.INFO.LIMBIC", "")["config"];
  cfg["max_msgs_per_subject"] = 1000;
  const json updated = nats->JsApi(0, "$JS.API.STREAM.UPDATE.LIMBIC", cfg.dump());
  INFO(updated.dump());
  REQUIRE(updated.contains("config"));
  // Seen at its next look while nothing comes (once a second).
  json h = WaitJson(standby.port(), "/healthz", [](const json& h) { return !ErrorOf(h).empty(); });
  CHECK_THAT(ErrorOf(h), Catch::Contains("stream LIMBIC removes messages by itself "
                                         "(max_msgs_per_subject 1000)"));
  auto promoted = HttpJson(standby.port(), "POST", "/v1/promote", json::object());
  INFO(promoted.body);
  CHECK(promoted.status == 409);
  CHECK(std::filesystem::exists(standby_dir / "state/standby.json"));

  // The primary, started again, is fenced, and says the stream holds its
  // log through where it stopped.
  WaitReplicated(primary->port());
  const uint64_t durable = Health(primary->port())["replication"]["durable_seq"].get<uint64_t>();
  CHECK(Terminate(*primary) == 0);
  RunningLimbic again(dir, config);
  REQUIRE(again.port() != 0);
  h = WaitJson(again.port(), "/healthz",
               [](const json& h) { return h["replication"].contains("fenced"); });
  INFO(h.dump());
  CHECK_THAT(h["replication"]["fenced"].get<std::string>(),
             Catch::Contains("removes messages by itself (max_msgs_per_subject 1000)"));
  CHECK(h["replication"]["replicated_seq"] == durable);
  CHECK(h["replication"]["stream_last_seq"] == durable);
}

TEST_CASE("a promotion over a gap in the stream is refused at once, naming the gap",
          "[replication][nats]") {
  TempDir dir, standby_dir;
  auto nats = NatsCluster::Start(dir.path(), 1);
  ReplicateAndStop(dir, ReplicatedConfig(dir, nats->urls(), "agent-j", "async"), 5);
  DeleteMessage(*nats, "LIMBIC", 3);
  Standby standby(standby_dir / "state", nats->urls(), "agent-j");
  REQUIRE(standby.port() != 0);
  json h = WaitJson(standby.port(), "/healthz", [](const json& h) { return !ErrorOf(h).empty(); });
  CHECK_THAT(ErrorOf(h), Catch::Contains("where seq 3 was expected"));
  const auto began = std::chrono::steady_clock::now();
  auto promoted = HttpJson(standby.port(), "POST", "/v1/promote", json::object());
  INFO(promoted.body);
  CHECK(promoted.status == 409);
  CHECK_THAT(promoted.body, Catch::Contains("where seq 3 was expected"));
  // Refused when the gap is met again, not at the promotion's 20 s deadline.
  CHECK(std::chrono::steady_clock::now() - began < std::chrono::seconds(15));
  CHECK(std::filesystem::exists(standby_dir / "state/standby.json"));
}

}  // namespace standby_test
