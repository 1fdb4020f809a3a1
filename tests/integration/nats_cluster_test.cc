// The NATS test harness (nats_cluster.h) against base/nats.h: a single
// server keeps its stream across a restart; a 3-node cluster keeps an R3
// stream writable when its leader is SIGKILLed; an ordered subscription is
// let go of safely while messages pour in for it.
#include "nats_cluster.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/nats.h"
#include "http.h"

// This file's own namespace: test programs compile in unity batches.
namespace nats_cluster_test {

using namespace limbic;
using namespace limbic::testing;
using nlohmann::json;

namespace {

std::unique_ptr<nats::Connection> ConnectTo(const std::vector<std::string>& servers) {
  nats::ConnectOptions o;
  o.servers = servers;
  o.name = "harness-test";
  o.request_timeout_ms = 2000;
  auto c = nats::Connection::Connect(o);
  INFO(c.status().message());
  REQUIRE(c.ok());
  return std::move(c).value();
}

// Publishes until the PubAck says stored (the cluster may be electing a
// leader); the last failure is shown on timeout.
nats::PubResult PublishUntilStored(nats::Connection& c, const std::string& subject,
                                   const std::string& msg_id, int timeout_ms = 30000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  nats::PubResult r;
  do {
    r = c.Publish(subject, nats::OutMessage{"{\"n\":1}", msg_id});
    if (r.status.ok()) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);
  INFO("last publish: " << r.status.message());
  FAIL("no PubAck for " << msg_id << " within " << timeout_ms << " ms");
  return r;
}

// The message count server `i` reports for `stream` from its own store.
uint64_t MessagesOn(const NatsCluster& c, int i, const std::string& stream) {
  json jsz = Http(c.monitor_port(i), "GET", "/jsz?accounts=true&streams=true").Json();
  if (!jsz.is_object() || !jsz.contains("account_details")) return 0;
  for (const json& a : jsz["account_details"])
    for (const json& s : a.value("stream_detail", json::array()))
      if (s.value("name", "") == stream) return s["state"].value("messages", uint64_t{0});
  return 0;
}

}  // namespace

TEST_CASE("nats harness: one server keeps its stream across a restart", "[nats]") {
  TempDir dir;
  auto cluster = NatsCluster::Start(dir.path(), 1);
  {
    auto c = ConnectTo(cluster->urls());
    auto info = c->EnsureStream({"SOLO", {"solo.x"}, 0, true});
    INFO(info.status().message());
    REQUIRE(info.ok());
    CHECK(info->replicas == 1);
    CHECK(cluster->StreamLeader("SOLO") == 0);
    CHECK(PublishUntilStored(*c, "solo.x", "one").stream_seq == 1);
  }
  cluster->Stop(0);
  CHECK_FALSE(cluster->running(0));
  CHECK(cluster->StreamLeader("SOLO") == -1);
  cluster->Restart(0);
  REQUIRE(cluster->WaitReady());
  auto c = ConnectTo({cluster->url(0)});
  auto info = c->GetStream("SOLO");
  REQUIRE(info.ok());
  CHECK(info->messages == 1);
  auto m = c->GetMessage("SOLO", 1);
  REQUIRE(m.ok());
  CHECK(m->msg_id == "one");
}

TEST_CASE("nats harness: an R3 stream takes writes again after its leader is SIGKILLed", "[nats]") {
  TempDir dir;
  auto cluster = NatsCluster::Start(dir.path(), 3);
  REQUIRE(cluster->urls().size() == 3);
  auto c = ConnectTo(cluster->urls());
  auto info = c->EnsureStream({"HARNESS", {"harness.x"}, 3, true});
  INFO(info.status().message());
  REQUIRE(info.ok());
  CHECK(info->replicas == 3);
  for (int k = 1; k <= 10; ++k) PublishUntilStored(*c, "harness.x", "m-" + std::to_string(k));

  int leader = cluster->WaitStreamLeader("HARNESS");
  REQUIRE(leader >= 0);
  cluster->Kill(leader);
  // A write after the kill is stored once a new leader is elected.
  nats::PubResult r = PublishUntilStored(*c, "harness.x", "m-11");
  CHECK(r.stream_seq == 11);
  CHECK_FALSE(r.duplicate);
  int next = cluster->WaitStreamLeader("HARNESS", leader);
  REQUIRE(next >= 0);
  CHECK(next != leader);
  auto after = c->GetStream("HARNESS");
  REQUIRE(after.ok());
  CHECK(after->messages == 11);
  CHECK(after->leader == cluster->name(next));
  // A message id sent again is a duplicate, also across the failover.
  CHECK(PublishUntilStored(*c, "harness.x", "m-3").duplicate);

  // The killed server comes back as the same peer and catches up.
  cluster->Restart(leader);
  REQUIRE(cluster->WaitReady());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (MessagesOn(*cluster, leader, "HARNESS") != 11 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(MessagesOn(*cluster, leader, "HARNESS") == 11);
}

TEST_CASE("an ordered subscription let go while messages pour in for it is released safely",
          "[nats]") {
  // libnats 3.4 delivers a message to a subscription it holds no
  // reference to; one destroyed meanwhile was used after it was freed (a
  // standby crashed so, replacing its consumer under load). base/nats.cc
  // unsubscribes, waits a round trip, then destroys.
  TempDir dir;
  auto cluster = NatsCluster::Start(dir.path(), 1);
  auto c = ConnectTo(cluster->urls());
  REQUIRE(c->EnsureStream({"POUR", {"pour.x"}, 0, true}).ok());
  const std::string body(2048, 'x');
  for (int i = 0; i < 4000; ++i) REQUIRE(c->Publish("pour.x", {body, ""}).status.ok());
  for (int round = 0; round < 150; ++round) {
    auto sub = c->SubscribeOrdered("POUR", "pour.x", 1 + static_cast<uint64_t>(round));
    REQUIRE(sub.ok());
    auto first = (*sub)->Next(5000);
    REQUIRE(first.ok());
    REQUIRE(first->has_value());
    CHECK((*first)->stream_seq == 1 + static_cast<uint64_t>(round));
    // Let go with the rest still arriving.
  }
  // Still connected, and nothing was left behind on the server.
  CHECK(c->connected());
  const json names = cluster->JsApi(0, "$JS.API.CONSUMER.NAMES.POUR", "{}");
  CHECK(names["consumers"].size() == 0);
}

}  // namespace nats_cluster_test
