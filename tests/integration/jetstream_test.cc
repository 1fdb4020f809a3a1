// The percept bus through the real binary and real nats-servers
// (nats_cluster.h): the jetstream sensor's ids, acknowledgements and
// redeliveries, agents sharing one durable consumer or each with its own,
// and the jetstream effector's publish with the idempotency key as
// Nats-Msg-Id.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "base/nats.h"
#include "base/sha256.h"
#include "http.h"
#include "nats_cluster.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace jetstream_test {

using namespace limbic;
using namespace limbic::testing;
using nlohmann::json;

namespace {

std::unique_ptr<nats::Connection> ConnectTo(const NatsCluster& cluster) {
  nats::ConnectOptions o;
  o.servers = cluster.urls();
  o.name = "jetstream-test";
  auto c = nats::Connection::Connect(o);
  INFO(c.status().message());
  REQUIRE(c.ok());
  return std::move(c).value();
}

// A percept request on the bus: source "bus", data {n}.
std::string Body(int n) {
  return json{{"source", "bus"}, {"type", "tick"}, {"data", {{"n", n}}}}.dump();
}

void Publish(nats::Connection& c, const std::string& subject, const std::string& body,
             const std::string& msg_id, bool* duplicate = nullptr) {
  nats::PubResult r = c.Publish(subject, nats::OutMessage{body, msg_id});
  INFO(r.status.message());
  REQUIRE(r.status.ok());
  if (duplicate != nullptr) *duplicate = r.duplicate;
}

// The sensor's stream, made before limbic starts so messages can wait in it.
void MakeStream(nats::Connection& c, const std::string& stream, const std::string& subject) {
  auto info = c.EnsureStream({stream, {subject}, 0, true});
  INFO(info.status().message());
  REQUIRE(info.ok());
}

json Sensor(const NatsCluster& cluster, const std::string& durable, json extra = json::object()) {
  json s = {{"kind", "jetstream"},
            {"nats", cluster.urls()},
            {"stream", "WORLD"},
            {"subject", "world.percepts"},
            {"durable", durable}};
  s.update(extra);
  return s;
}

// The ids of the percepts from source "bus".
std::vector<std::string> PerceptIds(uint16_t port) {
  json j = Http(port, "GET", "/v1/percepts?source=bus&limit=10000").Json();
  std::vector<std::string> ids;
  if (j.is_object() && j["percepts"].is_array())
    for (const json& p : j["percepts"]) ids.push_back(p["id"]);
  return ids;
}

// Polls until `pred` holds; false after `timeout_ms`.
bool WaitUntil(const std::function<bool()>& pred, int timeout_ms = 30000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// The consumer as server 0 reports it (GET /jsz): delivered, ack_floor,
// num_ack_pending, num_pending, ...; null when it is not there.
json Consumer(const NatsCluster& cluster, const std::string& stream, const std::string& durable) {
  json jsz =
      Http(cluster.monitor_port(0), "GET", "/jsz?accounts=true&streams=true&consumers=true").Json();
  if (!jsz.is_object()) return nullptr;
  for (const json& a : jsz.value("account_details", json::array()))
    for (const json& s : a.value("stream_detail", json::array()))
      if (s.value("name", "") == stream)
        for (const json& c : s.value("consumer_detail", json::array()))
          if (c.value("name", "") == durable) return c;
  return nullptr;
}

// Every message of the stream was answered (acknowledged or terminated).
bool AllAnswered(const NatsCluster& cluster, const std::string& durable, uint64_t last_seq) {
  json c = Consumer(cluster, "WORLD", durable);
  return c.is_object() && c["num_ack_pending"] == 0 && c["num_pending"] == 0 &&
         c["ack_floor"]["stream_seq"].get<uint64_t>() >= last_seq;
}

}  // namespace

TEST_CASE("jetstream sensor: messages become percepts with stable ids, redeliveries add none",
          "[runtime][sensors][nats]") {
  TempDir nats_dir, dir;
  auto cluster = NatsCluster::Start(nats_dir.path(), 1);
  auto nc = ConnectTo(*cluster);
  MakeStream(*nc, "WORLD", "world.percepts");
  const int n = 20;
  for (int k = 1; k <= n; ++k) Publish(*nc, "world.percepts", Body(k), "ev-" + std::to_string(k));
  Publish(*nc, "world.percepts", Body(21), "");             // seq 21: no Nats-Msg-Id
  Publish(*nc, "world.percepts", Body(22), "a b/c");        // seq 22: not an id: hashed
  Publish(*nc, "world.percepts", "this is not json", "x");  // seq 23: terminated
  bool duplicate = false;
  Publish(*nc, "world.percepts", Body(1), "ev-1", &duplicate);  // JetStream drops it
  CHECK(duplicate);

  std::set<std::string> want;
  for (int k = 1; k <= n; ++k) want.insert("ev-" + std::to_string(k));
  want.insert("js-WORLD-21");
  want.insert("js-" + Sha256::Hex("a b/c"));

  json config =
      BaseConfig(dir, json::object(),
                 {{"bus", Sensor(*cluster, "agent-a", {{"batch", 8}, {"ack_wait", "1s"}})}});
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    REQUIRE(WaitUntil([&] { return PerceptIds(l.port()).size() >= want.size(); }));
    REQUIRE(WaitUntil([&] { return AllAnswered(*cluster, "agent-a", 23); }));
    auto ids = PerceptIds(l.port());
    CHECK(std::set<std::string>(ids.begin(), ids.end()) == want);
    CHECK(ids.size() == want.size());
    json p = Http(l.port(), "GET", "/v1/percepts/ev-7").Json();
    CHECK(p["data"]["n"] == 7);
    CHECK(p["type"] == "tick");
    // Received less rejected is what became percepts (a redelivery counts in both).
    double received = Metric(l.port(), "limbic_sensor_percepts_total{sensor=\"bus\"}");
    CHECK(received >= 23);
    CHECK(received - Metric(l.port(), "limbic_sensor_rejected_total{sensor=\"bus\"}") ==
          want.size());
    CHECK(l.WaitForLog("message 23 of stream WORLD (Nats-Msg-Id x) is not a JSON object"));
  }

  SECTION("a new durable consumer delivers every message again: all duplicates") {
    config["sensors"]["bus"]["durable"] = "agent-a2";
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    REQUIRE(WaitUntil([&] { return AllAnswered(*cluster, "agent-a2", 23); }));
    auto ids = PerceptIds(l.port());
    CHECK(std::set<std::string>(ids.begin(), ids.end()) == want);
    CHECK(ids.size() == want.size());
    // 22 refused as taken, 1 not JSON: nothing new.
    double received = Metric(l.port(), "limbic_sensor_percepts_total{sensor=\"bus\"}");
    CHECK(received >= 23);
    CHECK(Metric(l.port(), "limbic_sensor_rejected_total{sensor=\"bus\"}") == received);
  }

  SECTION("SIGKILL while consuming: redelivered after ack_wait, each recorded once") {
    const int more = 400;
    for (int k = 1; k <= more; ++k)
      Publish(*nc, "world.percepts", Body(100 + k), "more-" + std::to_string(k));
    auto l = std::make_unique<RunningLimbic>(dir, config);
    REQUIRE(l->port() != 0);
    // Killed somewhere in the middle, most likely: some batches durable and
    // acknowledged, maybe one durable and not acknowledged, the rest not
    // taken yet. Wherever it lands, the outcome below is the same.
    REQUIRE(WaitUntil([&] { return PerceptIds(l->port()).size() >= want.size() + 40; }));
    l->child().Kill(SIGKILL);
    l.reset();
    l = std::make_unique<RunningLimbic>(dir, config);
    REQUIRE(l->port() != 0);
    const uint64_t last = 23 + more;  // the duplicate of ev-1 was not stored
    REQUIRE(WaitUntil([&] { return AllAnswered(*cluster, "agent-a", last); }, 60000));
    auto ids = PerceptIds(l->port());
    std::set<std::string> unique(ids.begin(), ids.end());
    CHECK(ids.size() == want.size() + more);
    CHECK(unique.size() == ids.size());
    for (int k = 1; k <= more; ++k) CHECK(unique.count("more-" + std::to_string(k)) == 1);
  }
}

TEST_CASE("jetstream sensor: two agents on one durable consumer share the messages",
          "[runtime][sensors][nats]") {
  TempDir nats_dir, dir_a, dir_b;
  auto cluster = NatsCluster::Start(nats_dir.path(), 1);
  auto nc = ConnectTo(*cluster);
  MakeStream(*nc, "WORLD", "world.percepts");
  json sensor = Sensor(*cluster, "shared", {{"batch", 4}});
  RunningLimbic a(dir_a, BaseConfig(dir_a, json::object(), {{"bus", sensor}}));
  RunningLimbic b(dir_b, BaseConfig(dir_b, json::object(), {{"bus", sensor}}));
  REQUIRE(a.port() != 0);
  REQUIRE(b.port() != 0);
  REQUIRE(a.WaitForLog("as durable consumer shared", 30000));
  REQUIRE(b.WaitForLog("as durable consumer shared", 30000));

  const int m = 200;
  for (int k = 1; k <= m; ++k) Publish(*nc, "world.percepts", Body(k), "m-" + std::to_string(k));
  REQUIRE(
      WaitUntil([&] { return PerceptIds(a.port()).size() + PerceptIds(b.port()).size() >= m; }));
  REQUIRE(WaitUntil([&] { return AllAnswered(*cluster, "shared", m); }));
  auto ids_a = PerceptIds(a.port()), ids_b = PerceptIds(b.port());
  std::set<std::string> in_a(ids_a.begin(), ids_a.end()), in_b(ids_b.begin(), ids_b.end());
  CHECK(ids_a.size() + ids_b.size() == m);  // none doubled
  std::set<std::string> all = in_a;
  all.insert(in_b.begin(), in_b.end());
  CHECK(all.size() == m);     // none lost
  CHECK_FALSE(in_a.empty());  // both took a share
  CHECK_FALSE(in_b.empty());
}

TEST_CASE("jetstream sensor: agents with their own durable consumers each see every message",
          "[runtime][sensors][nats]") {
  TempDir nats_dir, dir_a, dir_b;
  auto cluster = NatsCluster::Start(nats_dir.path(), 1);
  auto nc = ConnectTo(*cluster);
  MakeStream(*nc, "WORLD", "world.percepts");
  const int m = 100;
  for (int k = 1; k <= m; ++k) Publish(*nc, "world.percepts", Body(k), "m-" + std::to_string(k));
  RunningLimbic a(dir_a, BaseConfig(dir_a, json::object(), {{"bus", Sensor(*cluster, "agent-a")}}));
  RunningLimbic b(dir_b, BaseConfig(dir_b, json::object(), {{"bus", Sensor(*cluster, "agent-b")}}));
  REQUIRE(a.port() != 0);
  REQUIRE(b.port() != 0);
  REQUIRE(WaitUntil(
      [&] { return AllAnswered(*cluster, "agent-a", m) && AllAnswered(*cluster, "agent-b", m); }));
  for (uint16_t port : {a.port(), b.port()}) {
    auto ids = PerceptIds(port);
    CHECK(ids.size() == m);
    CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == m);
  }
}

TEST_CASE("jetstream sensor: NATS down at start does not stop limbic, it consumes once NATS is up",
          "[runtime][sensors][nats]") {
  TempDir nats_dir, dir;
  auto cluster = NatsCluster::Start(nats_dir.path(), 1);
  cluster->Stop(0);
  RunningLimbic l(dir, BaseConfig(dir, json::object(), {{"bus", Sensor(*cluster, "agent-a")}}));
  REQUIRE(l.port() != 0);  // started and serving
  CHECK(l.WaitForLog("sensor bus: not connected to NATS", 30000));
  cluster->Restart(0);
  REQUIRE(cluster->WaitReady());
  auto nc = ConnectTo(*cluster);
  // The sensor made the stream once NATS was back; publish into it.
  REQUIRE(l.WaitForLog("as durable consumer agent-a", 30000));
  Publish(*nc, "world.percepts", Body(1), "late-1");
  REQUIRE(WaitUntil([&] { return PerceptIds(l.port()) == std::vector<std::string>{"late-1"}; }));
}

TEST_CASE(
    "jetstream effector: an action is published once, with its idempotency key as Nats-Msg-Id",
    "[runtime][effectors][nats]") {
  TempDir nats_dir, dir;
  auto cluster = NatsCluster::Start(nats_dir.path(), 1);
  json effectors = {{"bus",
                     {{"kind", "jetstream"},
                      {"nats", cluster->urls()},
                      {"stream", "ACTIONS"},
                      {"subject", "agent.actions"},
                      {"max_attempts", 200}}}};
  json config = BaseConfig(dir, effectors);
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  auto enqueue = [&](const std::string& key) {
    json body = {{"effector", "bus"}, {"type", "notify"}, {"payload", {{"text", "hi"}}}};
    if (!key.empty()) body["idempotency_key"] = key;
    auto r = HttpJson(l.port(), "POST", "/v1/actions", body);
    INFO(r.body);
    REQUIRE(r.status == 201);
    return r.Json()["id"].get<std::string>();
  };
  auto complete = [&](const std::string& id) {
    return WaitJson(l.port(), "/v1/actions/" + id,
                    [](const json& j) { return j["status"] == "complete"; });
  };
  std::string first = enqueue("");
  json done = complete(first);
  const std::string key = done["idempotency_key"];
  auto nc = ConnectTo(*cluster);
  auto m = nc->GetMessage("ACTIONS", 1);
  INFO(m.status().message());
  REQUIRE(m.ok());
  CHECK(m->subject == "agent.actions");
  CHECK(m->msg_id == key);
  json body = json::parse(m->data);
  CHECK(body["action_id"] == first);
  CHECK(body["type"] == "notify");
  CHECK(body["effector"] == "bus");
  CHECK(body["idempotency_key"] == key);
  CHECK(body["payload"] == json{{"text", "hi"}});

  // The same action again (what a redelivery after a crash is to NATS): one
  // message in the stream, and the second completes as a duplicate.
  std::string again = enqueue(key);
  json dup = complete(again);
  CHECK(dup["result"]["duplicate"] == true);
  CHECK(dup["result"]["seq"] == 1);
  auto info = nc->GetStream("ACTIONS");
  REQUIRE(info.ok());
  CHECK(info->messages == 1);

  SECTION("NATS down: retried, delivered once it is back") {
    cluster->Stop(0);
    std::string id = enqueue("while-down");
    WaitJson(l.port(), "/v1/actions/" + id, [](const json& j) {
      return j["attempts"].get<int>() >= 2 && j["status"] != "complete";
    });
    cluster->Restart(0);
    REQUIRE(cluster->WaitReady());
    json back = complete(id);
    CHECK(back["result"]["duplicate"] == false);
    auto nc2 = ConnectTo(*cluster);
    auto stored = nc2->LastMessage("ACTIONS", "agent.actions");
    REQUIRE(stored.ok());
    REQUIRE(stored->has_value());
    CHECK((*stored)->msg_id == "while-down");
  }
}

TEST_CASE("jetstream effector: actions in flight at a SIGKILL are delivered again and stored once",
          "[runtime][effectors][nats]") {
  TempDir nats_dir, dir;
  auto cluster = NatsCluster::Start(nats_dir.path(), 1);
  json effectors = {{"bus",
                     {{"kind", "jetstream"},
                      {"nats", cluster->urls()},
                      {"stream", "ACTIONS"},
                      {"subject", "agent.actions"},
                      {"concurrency", 8}}}};
  json config = BaseConfig(dir, effectors);
  const int n = 40;
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    for (int k = 1; k <= n; ++k) {
      auto r = HttpJson(
          l.port(), "POST", "/v1/actions",
          {{"effector", "bus"}, {"type", "notify"}, {"idempotency_key", "k-" + std::to_string(k)}});
      REQUIRE(r.status == 201);
    }
    // Killed while some are published and not yet recorded complete,
    // most likely; wherever it lands, the outcome below is the same.
    l.child().Kill(SIGKILL);
  }
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  WaitJson(
      l.port(), "/v1/actions?status=complete",
      [&](const json& j) { return j["actions"].size() == static_cast<size_t>(n); }, 30000);
  auto nc = ConnectTo(*cluster);
  auto info = nc->GetStream("ACTIONS");
  REQUIRE(info.ok());
  std::multiset<std::string> keys;
  for (uint64_t seq = info->first_seq; seq <= info->last_seq; ++seq) {
    auto m = nc->GetMessage("ACTIONS", seq);
    REQUIRE(m.ok());
    keys.insert(m->msg_id);
  }
  CHECK(keys.size() == static_cast<size_t>(n));
  for (int k = 1; k <= n; ++k) CHECK(keys.count("k-" + std::to_string(k)) == 1);
}

TEST_CASE(
    "jetstream effector: a stream that does not take the subject fails the action, saying why",
    "[runtime][effectors][nats]") {
  TempDir nats_dir, dir;
  auto cluster = NatsCluster::Start(nats_dir.path(), 1);
  auto nc = ConnectTo(*cluster);
  MakeStream(*nc, "OTHER", "other.x");
  json effectors = {{"bus",
                     {{"kind", "jetstream"},
                      {"nats", cluster->urls()},
                      {"stream", "OTHER"},
                      {"subject", "agent.actions"}}}};
  RunningLimbic l(dir, BaseConfig(dir, effectors));
  REQUIRE(l.port() != 0);
  auto r = HttpJson(l.port(), "POST", "/v1/actions", {{"effector", "bus"}, {"type", "notify"}});
  REQUIRE(r.status == 201);
  json dead = WaitJson(l.port(), "/v1/actions/" + r.Json()["id"].get<std::string>(),
                       [](const json& j) { return j["status"] == "dead"; });
  CHECK(dead["attempts"] == 1);  // permanent: not retried
  CHECK(dead["last_error"].get<std::string>().find(
            "stream OTHER has subjects [other.x], none of which is agent.actions") !=
        std::string::npos);
}

TEST_CASE(
    "the bus example: a percept from the bus fires a reflex whose action goes back to the bus",
    "[runtime][sensors][effectors][nats]") {
  const std::string examples = std::string(LIMBIC_SOURCE_DIR) + "/config/examples/bus";
  json config = json::parse(std::ifstream(examples + "/limbic.json"), nullptr, false);
  REQUIRE(config.is_object());
  TempDir nats_dir, dir;
  auto cluster = NatsCluster::Start(nats_dir.path(), 1);
  config["api"]["port"] = 0;
  config["sensors"]["world"]["nats"] = cluster->urls();
  config["effectors"]["bus"]["nats"] = cluster->urls();
  { std::ofstream(dir / "reflexes.json") << std::ifstream(examples + "/reflexes.json").rdbuf(); }
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  REQUIRE(l.WaitForLog("as durable consumer agent-a", 30000));

  auto nc = ConnectTo(*cluster);
  Publish(*nc, "world.percepts", R"({"type": "order.created", "data": {"order": "o-1"}})",
          "order-o-1");
  json actions = WaitJson(
      l.port(), "/v1/actions?status=complete",
      [](const json& j) { return j["actions"].size() == 1; }, 30000);
  CHECK(actions["actions"][0]["idempotency_key"] == "ack-order-o-1");
  json percept = Http(l.port(), "GET", "/v1/percepts/order-o-1").Json();
  CHECK(percept["source"] == "world");
  auto m = nc->LastMessage("ACTIONS", "agent.actions");
  REQUIRE(m.ok());
  REQUIRE(m->has_value());
  CHECK((*m)->msg_id == "ack-order-o-1");
  json body = json::parse((*m)->data);
  CHECK(body["type"] == "order.ack");
  CHECK(body["payload"] == json{{"order", "o-1"}, {"percept", "order-o-1"}});
}

}  // namespace jetstream_test
