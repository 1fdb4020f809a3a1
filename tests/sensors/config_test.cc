// Sensor configs are checked when loaded: every error names its key, and
// nothing that can be checked statically is left to the first input.
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "sensor_test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace config_test {

using namespace limbic;
using namespace limbic::sensors;
using namespace limbic::sensors::testing;
using nlohmann::json;

namespace {

// `base` with `patch` merged in (a null in `patch` removes a key).
json With(json base, const json& patch) {
  base.merge_patch(patch);
  return base;
}

}  // namespace

TEST_CASE("a bad sensor config is refused at load, naming the key", "[sensors]") {
  boost::asio::io_context ioc;
  Recorder rec;
  json timer = {{"kind", "timer"}, {"every", "1s"}};
  json hook = {{"kind", "webhook"}, {"source", "/app"}, {"type", "alert"}};
  json gh = {{"kind", "github"}, {"secret", "k"}};
  json stdin_ = {{"kind", "stdin"}};
  json jsonl = {{"kind", "jsonl"}, {"path", "/tmp/x.jsonl"}};
  json exec = {{"kind", "exec"}, {"argv", {"/bin/cat"}}};
  json js = {{"kind", "jetstream"},
             {"nats", {"nats://127.0.0.1:4222"}},
             {"stream", "WORLD"},
             {"subject", "world.percepts"},
             {"durable", "agent-a"}};
  struct Case {
    json cfg;
    const char* needle;
  } cases[] = {
      {With(timer, {{"intensity", 1.5}}),
       "sensors.x.intensity: must be a number in [0, 1], got 1.5"},
      {With(timer, {{"intensity", -0.1}}), "sensors.x.intensity: must be a number in [0, 1]"},
      {With(timer, {{"intensity", "high"}}),
       "sensors.x.intensity: must be a number in [0, 1], got \"high\""},
      {With(timer, {{"source", 5}}), "sensors.x.source: must be a non-empty string"},
      {With(timer, {{"type", ""}}), "sensors.x.type: must be a non-empty string"},
      {With(timer, {{"text", json::array()}}), "sensors.x.text: must be a string"},
      {With(timer, {{"every", "soon"}}), "sensors.x.every"},
      {With(timer, {{"every", 5}}), "sensors.x.every: must be a duration of at least 10ms"},
      {{{"kind", "timer"}}, "sensors.x.every: required"},
      {With(hook, {{"source", "/a~9"}}), "sensors.x.source: invalid JSON pointer \"/a~9\""},
      {With(hook, {{"text", "/msg/~"}}), "sensors.x.text: invalid JSON pointer \"/msg/~\""},
      {With(hook, {{"intensity", "no-leading-slash"}}),
       "sensors.x.intensity: must be a number in [0, 1]"},
      {With(hook, {{"intensity", 2}}), "sensors.x.intensity: must be a number in [0, 1], got 2"},
      {With(hook, {{"data", "body"}}), "sensors.x.data: must be an object"},
      {With(hook, {{"id", "has spaces"}}), "sensors.x.id: must be an id"},
      {With(hook, {{"type", 7}}), "sensors.x.type: must be a non-empty string"},
      {With(hook, {{"colour", "/c"}}), "sensors.x.colour: unknown key"},
      {With(hook, {{"overflow", "block"}}),
       "sensors.x.overflow: must be one of \"drop_oldest\", \"drop_newest\""},
      {With(hook, {{"queue", 0}}), "sensors.x.queue: must be an integer in [1, 1000000]"},
      {With(hook, {{"queue", "big"}}), "sensors.x.queue"},
      {{{"kind", "webhook"}, {"type", "t"}}, "sensors.x.source: required"},
      {With(gh, {{"intensity", {{"push", 2}}}}),
       "sensors.x.intensity.push: must be a number in [0, 1]"},
      {{{"kind", "github"}, {"secret", "k"}, {"intensity", {{"push", nullptr}}}},
       "sensors.x.intensity.push"},
      {With(gh, {{"intensity", 0.5}}), "sensors.x.intensity: must be an object"},
      {With(gh, {{"overflow", 3}}), "sensors.x.overflow: must be one of"},
      {{{"kind", "github"}}, "sensors.x.secret: required"},
      {With(stdin_, {{"overflow", "explode"}}), "sensors.x.overflow"},
      {With(stdin_, {{"overflow", 5}}), "sensors.x.overflow"},
      {With(stdin_, {{"defaults", {{"intensity", 7}}}}),
       "sensors.x.defaults.intensity: must be a number in [0, 1], got 7"},
      {With(stdin_, {{"defaults", {{"colour", "red"}}}}),
       "sensors.x.defaults.colour: unknown field"},
      {With(stdin_, {{"defaults", "adapter"}}), "sensors.x.defaults: must be an object"},
      {With(stdin_, {{"path", "/x"}}), "sensors.x.path: unknown key"},
      {With(jsonl, {{"from", "middle"}}), "sensors.x.from: must be one of \"end\", \"start\""},
      {With(jsonl, {{"from", 5}}), "sensors.x.from"},
      {With(jsonl, {{"path", ""}}), "sensors.x.path: required"},
      {{{"kind", "jsonl"}}, "sensors.x.path: required"},
      {With(exec, {{"restart_backoff", "fast"}}), "sensors.x.restart_backoff: must be a duration"},
      {With(exec, {{"restart_backoff", "1s"}, {"max_backoff", "10ms"}}),
       "sensors.x.max_backoff: must be at least restart_backoff"},
      {With(exec, {{"env", {{"A", 1}}}}), "sensors.x.env.A: must be a string"},
      {With(exec, {{"argv", {"/nonexistent/adapter"}}}),
       "sensors.x.argv: /nonexistent/adapter is not an executable"},
      {With(exec, {{"argv", {"cat"}}}), "sensors.x.argv: argv[0] must be an absolute path"},
      {With(exec, {{"argv", json::array()}}), "sensors.x.argv: required"},
      {With(js, {{"nats", nullptr}}), "sensors.x.nats: required"},
      {With(js, {{"nats", {"http://h:1"}}}),
       "sensors.x.nats: \"http://h:1\" is not a NATS server URL"},
      {With(js, {{"nats", {"nats://h:99999"}}}), "sensors.x.nats: \"nats://h:99999\": bad port"},
      {With(js, {{"nats", {"nats://h:0"}}}), "sensors.x.nats: \"nats://h:0\": bad port"},
      {With(js, {{"nats", {"nats://[::1"}}}),
       "sensors.x.nats: \"nats://[::1\" is not a NATS server URL"},
      {With(js, {{"nats", {"nats://::1:4222"}}}),
       "sensors.x.nats: \"nats://::1:4222\" is not a NATS server URL"},
      {With(js, {{"nats", {"nats://u:p@h"}}}),
       "sensors.x.nats: \"nats://u:p@h\" is not a NATS server URL"},
      {With(js, {{"nats", 4222}}),
       "sensors.x.nats: must be a nats://HOST:PORT string or a non-empty array"},
      {With(js, {{"stream", nullptr}}), "sensors.x.stream: required"},
      {With(js, {{"stream", "A.B"}}),
       "sensors.x.stream: stream: \"A.B\" must be 1..128 characters"},
      {With(js, {{"subject", "world.>"}}),
       "sensors.x.subject: subject: \"world.>\" is not a subject"},
      {With(js, {{"durable", nullptr}}), "sensors.x.durable: required"},
      {With(js, {{"durable", "a.b"}}), "sensors.x.durable: durable: \"a.b\" must be"},
      {With(js, {{"batch", 0}}), "sensors.x.batch: must be an integer in [1, 1024], got 0"},
      {With(js, {{"batch", 2000}}), "sensors.x.batch: must be an integer in [1, 1024]"},
      {With(js, {{"ack_wait", "10ms"}}),
       "sensors.x.ack_wait: must be a duration of at least 100ms"},
      {With(js, {{"ack_wait", "25h"}}), "sensors.x.ack_wait: must be at most 24h"},
      {With(js, {{"defaults", {{"intensity", 3}}}}),
       "sensors.x.defaults.intensity: must be a number in [0, 1]"},
      {With(js, {{"queue", 8}}), "sensors.x.queue: unknown key"},
      {{{"kind", "teleport"}}, "sensors.x.kind: unknown kind \"teleport\""},
      {{{"every", "1s"}}, "sensors.x.kind: required"},
  };
  for (const Case& c : cases) {
    INFO(c.cfg.dump());
    auto r = MakeSensor("x", c.cfg, ioc, rec.Sink(), Quiet());
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().IsInvalidArgument());
    CHECK_THAT(r.status().message(), Catch::Contains(c.needle));
  }
}

TEST_CASE("good sensor configs load: pointers, literals, durations in ms", "[sensors]") {
  boost::asio::io_context ioc;
  Recorder rec;
  for (const json& cfg : {
           json{{"kind", "timer"}, {"every", 60000}, {"intensity", 0}, {"text", "tick"}},
           json{{"kind", "webhook"},
                {"source", "/a~1b/~0c"},
                {"type", "/list/0"},
                {"data", ""},
                {"intensity", 0.3},
                {"queue", 8},
                {"overflow", "drop_oldest"}},
           json{{"kind", "github"},
                {"secret", "k"},
                {"intensity", {{"*", 1}}},
                {"overflow", "drop_newest"}},
           json{{"kind", "stdin"},
                {"overflow", "block"},
                {"defaults", {{"source", "in"}, {"data", {{"a", 1}}}}}},
           json{{"kind", "jsonl"}, {"path", "/tmp/not-yet-there.jsonl"}, {"from", "start"}},
           json{{"kind", "exec"},
                {"argv", {"/bin/cat", "-"}},
                {"restart_backoff", 50},
                {"max_backoff", "50ms"},
                {"env", {{"A", "1"}}}},
           json{{"kind", "jetstream"},
                {"nats", "nats://127.0.0.1:4222"},
                {"stream", "WORLD"},
                {"subject", "world.percepts"},
                {"durable", "agent_a-1"},
                {"batch", 1024},
                {"ack_wait", 100},
                {"defaults", {{"source", "bus"}, {"type", "event"}}}},
       }) {
    INFO(cfg.dump());
    auto r = MakeSensor("x", cfg, ioc, rec.Sink(), Quiet());
    CHECK(r.ok());
    if (!r.ok()) WARN(r.status().message());
  }
}

}  // namespace config_test
