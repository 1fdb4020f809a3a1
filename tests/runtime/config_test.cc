#include "runtime/config.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

// This file's own namespace: test programs compile in unity batches.
namespace config_test {

using namespace limbic;
using namespace limbic::runtime;
using nlohmann::json;

TEST_CASE("the embedded default config parses and has the demo wiring", "[config]") {
  auto c = DefaultConfig();
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  CHECK(c->api_address == "127.0.0.1");
  CHECK(c->api_port == 7077);
  CHECK(c->durability == state::Durability::kFsync);
  CHECK(c->effectors.contains("log"));
  CHECK(c->sensors.contains("github"));
  REQUIRE(c->reflexes["reflexes"].is_array());
  CHECK(c->reflexes["reflexes"].size() >= 2);
}

TEST_CASE("config values are parsed, durations included", "[config]") {
  json doc = {{"state_dir", "/tmp/x"},
              {"durability", {{"mode", "interval"}, {"interval_ms", 50}}},
              {"api", {{"port", 0}, {"token", "s3cret"}}},
              {"recency", {{"percept_half_life", "30s"}, {"thread_half_life", 120000}}},
              {"outbox", {{"max_attempts", 3}, {"backoff", "250ms"}}}};
  auto c = ParseConfig(doc, "");
  REQUIRE(c.ok());
  CHECK(c->state_dir == "/tmp/x");
  CHECK(c->durability == state::Durability::kInterval);
  CHECK(c->interval_ms == 50);
  CHECK(c->api_port == 0);
  CHECK(c->api_token == "s3cret");
  CHECK(c->recency.percept_half_life == 30000);
  CHECK(c->recency.thread_half_life == 120000);
  CHECK(c->outbox.max_attempts == 3);
  CHECK(c->outbox.backoff == 250);
  CHECK(c->percepts_dedup_window == 7LL * 86400000);  // absent: the default
  auto two = ParseConfig({{"memory", {{"embedder", {{"kind", "local"}, {"model", "m"}, {"max_tokens", 2}}}}}}, "");
  REQUIRE(two.ok());
  CHECK(two->memory.embedder.max_tokens == 2);
  auto window = ParseConfig({{"percepts", {{"dedup_window", "36h"}}}}, "");
  REQUIRE(window.ok());
  CHECK(window->percepts_dedup_window == 36LL * 3600000);
}

TEST_CASE("config/limbic.json's memory section states the library's defaults", "[config]") {
  // The example config is what users read; it must not drift from what an
  // absent key means.
  auto c = DefaultConfig();
  REQUIRE(c.ok());
  const memory::MemoryOptions defaults;
  CHECK(c->memory.vectors.exact_limit == defaults.vectors.exact_limit);
  CHECK(c->memory.vectors.m == defaults.vectors.m);
  CHECK(c->memory.vectors.ef_search == defaults.vectors.ef_search);
  CHECK(c->memory.vectors.ef_construction == defaults.vectors.ef_construction);
  CHECK(c->memory.vector_threshold == defaults.vector_threshold);
  CHECK(c->memory.rrf_k == defaults.rrf_k);
  CHECK(c->memory.bm25.k1 == defaults.bm25.k1);
  CHECK(c->memory.bm25.b == defaults.bm25.b);
  CHECK(c->memory.analyzer == defaults.analyzer);
  CHECK(c->archive.analyzer == defaults.analyzer);  // the archive's search shares it
  CHECK(c->memory.context.neighbours == defaults.context.neighbours);
  CHECK(c->memory.context.episode == defaults.context.episode);
  CHECK(c->memory.context.window == defaults.context.window);
  CHECK(c->memory.fusion.method == defaults.fusion.method);
  CHECK(c->memory.fusion.lexical == defaults.fusion.lexical);
  CHECK(c->memory.fusion.vector == defaults.fusion.vector);
  CHECK(c->memory.fusion.archive == defaults.fusion.archive);

  json doc = {{"memory", {{"vector_m", 24}, {"vector_ef_search", 900}, {"vector_ef_construction", 300}}}};
  auto set = ParseConfig(doc, "");
  REQUIRE(set.ok());
  CHECK(set->memory.vectors.m == 24);
  CHECK(set->memory.vectors.ef_search == 900);
  CHECK(set->memory.vectors.ef_construction == 300);
}

TEST_CASE("a bad config names the JSON path of the key and why", "[config]") {
  struct Case {
    json doc;
    const char* needle;
  } cases[] = {
      {{{"api", {{"port", "http"}}}}, "api.port: must be an integer"},
      {{{"api", {{"prot", 1}}}}, "api.prot: unknown key"},
      {{{"outbox", {{"max_atempts", 3}}}}, "outbox.max_atempts: unknown key"},
      {{{"durability", {{"mode", "sometimes"}}}}, "durability.mode"},
      {{{"recency", {{"percept_half_life", "soon"}}}}, "recency.percept_half_life"},
      {{{"sensors", {{"gh", {{"secret", "x"}}}}}}, "sensors.gh: must be an object with a string \"kind\""},
      {{{"effectors", {{"bad name", {{"kind", "log"}}}}}}, "effectors.bad name"},
      {{{"attention", {{"percept_threshold", 2}}}}, "attention.percept_threshold"},
      {{{"percepts", {{"dedup_window", "a week"}}}}, "percepts.dedup_window"},
      {{{"percepts", {{"dedup_windw", "7d"}}}}, "percepts.dedup_windw: unknown key"},
      // An integer is milliseconds, at most 100 years: a timer past 292
      // years would overflow the clock's nanoseconds.
      {{{"outbox", {{"backoff", 9000000000000000000LL}}}}, "outbox.backoff: duration too large"},
      {{{"outbox", {{"backoff", -5}}}}, "outbox.backoff: a duration must not be negative"},
      {{{"outbox", {{"backoff", 1.5}}}}, "outbox.backoff: must be a duration such as"},
      {{{"surprise", true}}, "surprise: unknown key"},
      {{{"memory", {{"vector_m", 1}}}}, "memory.vector_m: must be an integer in [2, 256]"},
      {{{"memory", {{"embedder", {{"kind", "local"}, {"model", "m"}, {"max_tokens", 1}}}}}},
       "memory.embedder.max_tokens: must be 0 (the model's limit) or at least 2"},
      {{{"memory", {{"vector_ef_search", 0}}}}, "memory.vector_ef_search: must be an integer"},
      {{{"memory", {{"analyzer", "klingon"}}}}, "memory.analyzer: analyzer \"klingon\": not a language; one of"},
      {{{"memory", {{"fusion", {{"method", "vote"}}}}}}, "memory.fusion.method: must be score or rrf, got \"vote\""},
      {{{"memory", {{"fusion", {{"lexical", 0}, {"vector", 0}, {"archive", 0}}}}}}, "memory.fusion: at least one of"},
      {{{"memory", {{"context", {{"window", "soon"}}}}}}, "memory.context.window"},
      {{{"memory", {{"context", {{"neighbors", 0.2}}}}}}, "memory.context.neighbors: unknown key"},
      {json::array(), "config: must be an object"},
      {{{"mind", {{"kind", "claude"}}}}, "mind.kind: must be openai or exec, got \"claude\""},
      {{{"mind", {{"api_key", "sk-secret"}}}}, "mind.api_key: the key is read from the environment only"},
      {{{"mind", {{"tools", {"attention", "approve_action"}}}}}, "mind.tools[1]: a mind may not decide approvals"},
      {{{"mind", {{"enabled", true}, {"kind", "exec"}}}}, "mind.command: required for kind exec"},
      {{{"mind", {{"enabled", true}, {"kind", "exec"}, {"command", {"python3", "m.py"}}}}}, "mind.command: argv[0] must be an absolute path"},
      {{{"mind", {{"enabled", true}, {"kind", "openai"}, {"url", "ollama:11434"}}}}, "mind.url: must start with http:// or https://"},
      {{{"mind", {{"budget", {{"max_steps", 0}}}}}}, "mind.budget.max_steps: must be an integer in [1, 1000]"},
      {{{"mind", {{"budget", {{"daily_minutes", 2000}}}}}}, "mind.budget.daily_minutes: must be an integer in [0, 1440]"},
      {{{"mind", {{"wake", {{"treshold", 0.5}}}}}}, "mind.wake.treshold: unknown key"},
      {{{"mind", {{"name", "bad name\n"}}}}, "mind.name: must be a name"},
      {{{"checkpoints", {{"keep", 0}}}}, "checkpoints.keep: must be an integer in [1, 100000]"},
      {{{"checkpoints", {{"interval", "often"}}}}, "checkpoints.interval"},
      {{{"checkpoints", {{"evry", 10}}}}, "checkpoints.evry: unknown key"},
      {{{"checkpoints", {{"keep", 2}, {"dense", 4}}}}, "checkpoints.keep: 2 is fewer than checkpoints.dense 4"},
      {{{"checkpoints", {{"dense", 0}}}}, "checkpoints.dense: must be an integer in [1, 100000]"},
      {{{"checkpoints", {{"every", 0}, {"interval", 0}}}}, "checkpoints.every: 0 with checkpoints.interval 0"},
  };
  for (const auto& c : cases) {
    INFO(c.doc.dump());
    auto r = ParseConfig(c.doc, "");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains(c.needle));
  }
}

TEST_CASE("checkpoints are on by default and their section is read", "[config]") {
  auto d = ParseConfig(json::object(), "");
  REQUIRE(d.ok());
  CHECK(d->checkpoints.enabled);
  CHECK(d->checkpoints.every == 50000);
  CHECK(d->checkpoints.interval == 3600000);
  CHECK(d->checkpoints.keep == 128);
  CHECK(d->checkpoints.dense == 4);
  auto c = ParseConfig({{"checkpoints", {{"enabled", false}, {"every", 5000}, {"interval", "10m"},
                                         {"keep", 8}, {"dense", 2}}}},
                       "");
  REQUIRE(c.ok());
  CHECK_FALSE(c->checkpoints.enabled);
  CHECK(c->checkpoints.every == 5000);
  CHECK(c->checkpoints.interval == 600000);
  CHECK(c->checkpoints.keep == 8);
  CHECK(c->checkpoints.dense == 2);
}

TEST_CASE("the mind is off by default, and its section is read whole", "[config][mind]") {
  auto d = DefaultConfig();
  REQUIRE(d.ok());
  CHECK_FALSE(d->mind.enabled);
  // config/limbic.json states the library's defaults.
  MindConfig lib;
  CHECK(d->mind.name == lib.name);
  CHECK(d->mind.tools == lib.tools);
  CHECK(d->mind.budget.daily_tokens == lib.budget.daily_tokens);
  CHECK(d->mind.budget.daily_time == lib.budget.daily_time);
  CHECK(d->mind.budget.max_session == lib.budget.max_session);
  CHECK(d->mind.budget.min_interval == lib.budget.min_interval);
  CHECK(d->mind.wake_threshold == lib.wake_threshold);

  setenv("LIMBIC_TEST_MIND_KEY", "sk-test", 1);
  json doc = {{"mind",
               {{"enabled", true}, {"kind", "openai"}, {"url", "http://127.0.0.1:11434"}, {"model", "llama3.1"},
                {"api_key_env", "LIMBIC_TEST_MIND_KEY"}, {"timeout", "5s"}, {"tools", {"attention", "why"}},
                {"wake", {{"threshold", 0.5}, {"arousal_gain", 0}, {"focused_thread", false}}},
                {"budget", {{"daily_tokens", 1000}, {"daily_minutes", 5}, {"max_session", "30s"},
                            {"max_steps", 3}, {"min_interval", "10s"}, {"pressure_at", 0.5}}}}}};
  auto c = ParseConfig(doc, "/etc/limbic");
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  CHECK(c->mind.api_key == "sk-test");
  CHECK(c->mind.timeout == 5000);
  CHECK(c->mind.tools == std::vector<std::string>{"attention", "why"});
  CHECK(c->mind.budget.daily_time == 5 * 60000);
  CHECK(c->mind.budget.max_session == 30000);
  CHECK(c->mind.budget.min_interval == 10000);
  CHECK(c->mind.dir == "/etc/limbic");
  CHECK_FALSE(c->mind.focused_thread);
  unsetenv("LIMBIC_TEST_MIND_KEY");
}

TEST_CASE("a missing config file or reflexes file is a clear error", "[config]") {
  auto r = LoadConfigFile("/nonexistent/limbic.json");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("/nonexistent/limbic.json"));
  auto c = ParseConfig({{"reflexes", "nope.json"}}, "/nonexistent");
  REQUIRE_FALSE(c.ok());
  CHECK_THAT(c.status().message(), Catch::Contains("/nonexistent/nope.json"));
}

TEST_CASE("api.max_json_depth: 128 by default, 1 to 1024, and config files are outside input",
          "[config]") {
  auto dflt = DefaultConfig();
  REQUIRE(dflt.ok());
  CHECK(dflt->max_json_depth == 128);
  auto set = ParseConfig({{"api", {{"max_json_depth", 1024}}}}, "");
  REQUIRE(set.ok());
  CHECK(set->max_json_depth == 1024);
  for (json bad : {json(0), json(1025), json("128"), json(12.5)}) {
    auto c = ParseConfig({{"api", {{"max_json_depth", bad}}}}, "");
    REQUIRE_FALSE(c.ok());
    CHECK_THAT(c.status().message(),
               Catch::Contains("api.max_json_depth: must be an integer in [1, 1024]"));
  }

  char dir_template[] = "/tmp/limbic-config-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  const std::string path = dir + "/limbic.json";
  auto load = [&](const std::string& text) {
    std::ofstream(path, std::ios::trunc) << text;
    return LoadConfigFile(path);
  };
  auto huge = load(R"({"memory": {"half_life": 1e400}})");
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().message() ==
        path + ": memory.half_life: number out of range at byte 26: 1e400");
  auto deep = load(R"({"sensors": )" + std::string(200, '[') + std::string(200, ']') + "}");
  REQUIRE_FALSE(deep.ok());
  CHECK_THAT(deep.status().message(), Catch::StartsWith(path + ": JSON nested deeper than 128"));
  // The reflexes file is held to the configured limit.
  std::ofstream(dir + "/rules.json") << R"({"reflexes": [[[[[]]]]]})";
  auto rules = load(R"({"api": {"max_json_depth": 4}, "reflexes": "rules.json"})");
  REQUIRE_FALSE(rules.ok());
  CHECK_THAT(rules.status().message(), Catch::Contains("rules.json: JSON nested deeper than 4"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the API's limits and allow lists are parsed strictly, naming the key", "[config]") {
  auto c = ParseConfig({{"api",
                         {{"read_timeout", "5s"},
                          {"idle_timeout", 2000},
                          {"max_connections", 64},
                          {"max_connections_per_client", 16},
                          {"max_sse_streams", 8},
                          {"max_sse_streams_per_client", 2},
                          {"sse_keepalive", "1s"},
                          {"sse_max_queued_bytes", 65536},
                          {"allowed_hosts", {"agent.example.com", "*"}},
                          {"allowed_origins", {"http://localhost:3000"}}}}},
                       "");
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  const ApiLimitsConfig& l = c->api_limits;
  CHECK(l.read_timeout == 5000);
  CHECK(l.idle_timeout == 2000);
  CHECK(l.max_connections == 64);
  CHECK(l.max_connections_per_client == 16);
  CHECK(l.max_sse_streams == 8);
  CHECK(l.max_sse_streams_per_client == 2);
  CHECK(l.sse_keepalive == 1000);
  CHECK(l.sse_max_queued_bytes == 65536);
  CHECK(l.allowed_hosts == std::vector<std::string>{"agent.example.com", "*"});
  CHECK(l.allowed_origins == std::vector<std::string>{"http://localhost:3000"});
  // Defaults: the documented ones.
  auto d = ParseConfig(json::object(), "");
  REQUIRE(d.ok());
  CHECK(d->api_limits.max_connections == 1024);
  CHECK(d->api_limits.sse_max_queued_bytes == 4u << 20);

  auto bad = [](json api) {
    auto r = ParseConfig({{"api", api}}, "");
    REQUIRE_FALSE(r.ok());
    return r.status().message();
  };
  CHECK_THAT(bad({{"max_connections", "many"}}), Catch::Contains("api.max_connections: must be an integer"));
  CHECK_THAT(bad({{"read_timeout", "soon"}}), Catch::Contains("api.read_timeout"));
  CHECK_THAT(bad({{"max_connections", 10}, {"max_connections_per_client", 11}}),
             Catch::Contains("api.max_connections_per_client: must be at most api.max_connections (10)"));
  CHECK_THAT(bad({{"max_connections", 10}, {"max_sse_streams", 10}}),
             Catch::Contains("api.max_sse_streams: must be less than api.max_connections"));
  CHECK_THAT(bad({{"max_sse_streams", 4}, {"max_sse_streams_per_client", 5}}),
             Catch::Contains("api.max_sse_streams_per_client"));
  CHECK_THAT(bad({{"allowed_hosts", "localhost"}}), Catch::Contains("api.allowed_hosts: must be an array"));
  CHECK_THAT(bad({{"allowed_hosts", {"http://x.example/"}}}), Catch::Contains("api.allowed_hosts[0]"));
  CHECK_THAT(bad({{"allowed_origins", {"localhost:3000"}}}), Catch::Contains("api.allowed_origins[0]"));
}

TEST_CASE("the replication section is parsed, and its mistakes are named",
          "[config][replication]") {
  auto off = ParseConfig(json::object(), "");
  REQUIRE(off.ok());
  CHECK_FALSE(off->replication.enabled());
  auto c = ParseConfig({{"replication",
                         {{"nats", {"nats://127.0.0.1:4222", "10.0.0.2:4222"}},
                          {"stream", "LIMBIC_A"},
                          {"agent", "agent-a"},
                          {"mode", "quorum"},
                          {"max_lag", 50},
                          {"timeout", "2s"}}}},
                       "");
  REQUIRE(c.ok());
  CHECK(c->replication.enabled());
  CHECK(c->replication.nats.size() == 2);
  CHECK(c->replication.mode == ReplicationConfig::Mode::kQuorum);
  CHECK(c->replication.subject() == "limbic.agent-a.events");
  CHECK(c->replication.max_lag == 50);
  CHECK(c->replication.timeout == 2000);

  auto bad =
      ParseConfig({{"replication",
                    {{"nats", {"http://h:1"}}, {"stream", "a.b"}, {"mode", "sync"}, {"extra", 1}}}},
                  "");
  REQUIRE_FALSE(bad.ok());
  const std::string m = bad.status().message();
  CHECK_THAT(m, Catch::Contains("replication.nats[0]"));
  CHECK_THAT(m, Catch::Contains("replication.mode: must be \"async\" or \"quorum\""));
  CHECK_THAT(m, Catch::Contains("replication.extra: unknown key"));
  auto no_agent = ParseConfig({{"replication", {{"nats", {"nats://127.0.0.1:4222"}}}}}, "");
  REQUIRE_FALSE(no_agent.ok());
  CHECK_THAT(no_agent.status().message(), Catch::Contains("replication.agent: required"));
}

}  // namespace config_test
