// The bounded queue of the HTTP sensors (webhook, github): requests wait
// while the previous batch is being made durable; a full queue drops one by
// its overflow policy and answers it Unavailable.
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "sensor_test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace http_sensors_test {

using namespace limbic;
using namespace limbic::sensors;
using namespace limbic::sensors::testing;
using nlohmann::json;

namespace {

// What each request was answered, by index; empty while it waits.
struct Answers {
  std::vector<std::optional<Status>> got;
  Committed Next() {
    size_t i = got.size();
    got.emplace_back();
    return [this, i](const Status& s, std::span<const state::Event>) {
      REQUIRE_FALSE(got[i].has_value());  // exactly once
      got[i] = s;
    };
  }
  bool Waiting(size_t i) const { return !got[i].has_value(); }
  bool Ok(size_t i) const { return got[i].has_value() && got[i]->ok(); }
};

std::unique_ptr<Sensor> Make(const json& cfg, PerceptSink sink) {
  boost::asio::io_context ioc;  // HTTP sensors do not keep it
  auto s = MakeSensor("hooks", cfg, ioc, std::move(sink), Quiet());
  REQUIRE(s.ok());
  return std::move(s).value();
}

json Request(int n) { return {{"source", "s"}, {"type", "t"}, {"data", {{"n", n}}}}; }

}  // namespace

TEST_CASE("webhook queue, drop_newest (default): a new request finds it full and gets Unavailable",
          "[sensors]") {
  SlowCommitter log;
  auto sensor =
      Make({{"kind", "webhook"}, {"source", "/s"}, {"type", "t"}, {"queue", 2}}, log.Sink());
  auto* hook = dynamic_cast<HttpSensor*>(sensor.get());
  REQUIRE(hook);
  Answers answers;
  for (int i = 0; i < 4; ++i) hook->Enqueue(Request(i), answers.Next());
  // Request 0 went straight to the sink; 1 and 2 wait for its commit; 3 is refused.
  REQUIRE(log.got.size() == 1);
  CHECK(answers.Waiting(0));
  CHECK(answers.Waiting(1));
  CHECK(answers.Waiting(2));
  REQUIRE_FALSE(answers.Waiting(3));
  CHECK(answers.got[3]->IsUnavailable());
  CHECK_THAT(answers.got[3]->message(), Catch::Contains("sensor \"hooks\": queue full"));
  CHECK(sensor->stats().dropped == 1);
  CHECK(sensor->stats().queue_depth == 2);

  log.CommitAll();  // 0 is durable: 1 and 2 go to the sink together
  CHECK(answers.Ok(0));
  REQUIRE(log.got.size() == 3);
  CHECK(log.got[1]["data"]["n"] == 1);
  CHECK(log.got[2]["data"]["n"] == 2);
  CHECK(sensor->stats().queue_depth == 0);
  log.CommitAll();
  CHECK(answers.Ok(1));
  CHECK(answers.Ok(2));
  auto st = sensor->stats();
  CHECK(st.received == 4);
  CHECK(st.delivered == 3);
  CHECK(st.dropped == 1);
}

TEST_CASE("webhook queue, drop_oldest: the longest-waiting request is answered Unavailable",
          "[sensors]") {
  SlowCommitter log;
  auto sensor = Make({{"kind", "webhook"},
                      {"source", "s"},
                      {"type", "t"},
                      {"queue", 2},
                      {"overflow", "drop_oldest"}},
                     log.Sink());
  auto* hook = dynamic_cast<HttpSensor*>(sensor.get());
  Answers answers;
  for (int i = 0; i < 5; ++i) hook->Enqueue(Request(i), answers.Next());
  // 0 in flight; 1 was dropped for 3, 2 for 4.
  CHECK(answers.got[1]->IsUnavailable());
  CHECK(answers.got[2]->IsUnavailable());
  CHECK_THAT(answers.got[1]->message(), Catch::Contains("queue full"));
  CHECK(answers.Waiting(3));
  CHECK(answers.Waiting(4));
  log.CommitAll();
  log.CommitAll();
  REQUIRE(log.got.size() == 3);
  CHECK(log.got[1]["data"]["n"] == 3);
  CHECK(log.got[2]["data"]["n"] == 4);
  CHECK(answers.Ok(0));
  CHECK(answers.Ok(3));
  CHECK(answers.Ok(4));
  CHECK(sensor->stats().dropped == 2);
}

TEST_CASE("github queue: the same policy, Stop answers what waits, a refusal answers only its own",
          "[sensors]") {
  SlowCommitter log;
  auto sensor = Make({{"kind", "github"}, {"secret", "k"}, {"queue", 1}}, log.Sink());
  auto* gh = dynamic_cast<GithubSensor*>(sensor.get());
  REQUIRE(gh);
  std::string body = R"({"action":"opened","issue":{"title":"bug"}})";
  auto delivery = [&](const std::string& id) {
    auto r = gh->Map(body, "issues", GithubSignature("k", body), id);
    REQUIRE(r.ok());
    return *r;
  };
  Answers answers;
  gh->Enqueue(delivery("d0"), answers.Next());
  gh->Enqueue(json{{"type", "no source: the sink refuses it"}}, answers.Next());
  gh->Enqueue(delivery("d2"), answers.Next());  // the queue holds one: refused
  CHECK(answers.got[2]->IsUnavailable());
  log.CommitAll();  // d0 durable; the sourceless request is refused by the sink
  CHECK(answers.Ok(0));
  REQUIRE(answers.got[1].has_value());
  CHECK(answers.got[1]->IsInvalidArgument());
  CHECK(sensor->stats().rejected == 1);
  gh->Enqueue(delivery("d3"), answers.Next());  // nothing in flight: straight to the sink
  gh->Enqueue(delivery("d4"), answers.Next());  // waits
  CHECK(log.got.back()["id"] == "gh-d3");
  sensor->Stop();
  CHECK(answers.got[4]->IsUnavailable());
  gh->Enqueue(delivery("d5"), answers.Next());
  CHECK(answers.got[5]->IsUnavailable());
  log.CommitAll();  // what was in flight still completes
  CHECK(answers.Ok(3));
  CHECK(log.got.size() == 2);
}

}  // namespace http_sensors_test
