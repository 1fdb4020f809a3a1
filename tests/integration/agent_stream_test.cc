// Reading an agent's stream (runtime/replication/agent_stream.h) against a
// real nats-server: a consumer that stalls part way is replaced, and the
// reading goes on from the message after the last one taken.
#include "runtime/replication/agent_stream.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "base/nats.h"
#include "nats_cluster.h"

// This file's own namespace: test programs compile in unity batches.
namespace agent_stream_test {

using namespace limbic;
using namespace limbic::testing;

namespace {

// Event `seq` of agent "a" as the replicator publishes it.
void PublishEvent(nats::Connection& c, uint64_t seq) {
  const std::string line = "{\"v\":1,\"seq\":" + std::to_string(seq) +
                           ",\"ts\":\"2026-11-29T12:00:00.000Z\",\"type\":\"reflexes_evaluated\"}";
  auto r = c.Publish("limbic.a.events", {line, runtime::ReplicationMsgId("a", seq, line)});
  INFO(r.status.message());
  REQUIRE(r.status.ok());
}

}  // namespace

TEST_CASE("reading a stream goes on past a consumer that stops sending part way", "[nats]") {
  TempDir dir;
  auto cluster = NatsCluster::Start(dir.path(), 1);
  nats::ConnectOptions o;
  o.servers = cluster->urls();
  auto c = nats::Connection::Connect(o);
  REQUIRE(c.ok());
  REQUIRE((*c)->EnsureStream({"LIMBIC", {"limbic.a.events"}, 0, true}).ok());
  for (uint64_t seq = 1; seq <= 5; ++seq) PublishEvent(**c, seq);

  // Seqs 1..10 asked while the stream holds 1..5: after the fifth the
  // consumer is deleted on the server, so it sends nothing more, and 6..10
  // are published.
  std::mutex mu;
  std::vector<uint64_t> taken;
  Status read;
  std::thread reader([&] {
    read =
        runtime::ReadStream(**c, "LIMBIC", "a", 1, 1, 10, [&](const nats::Message&, uint64_t seq) {
          std::lock_guard<std::mutex> lock(mu);
          taken.push_back(seq);
          return Status::OK();
        });
  });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto count = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return taken.size();
  };
  while (count() < 5 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(count() == 5);
  CHECK(cluster->DeleteConsumers(0, "LIMBIC") == 1);
  for (uint64_t seq = 6; seq <= 10; ++seq) PublishEvent(**c, seq);
  reader.join();
  INFO(read.message());
  CHECK(read.ok());
  CHECK(taken == std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
}

}  // namespace agent_stream_test
