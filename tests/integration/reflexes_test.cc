// Reflex rules through the real binary: rules that once crashed it.
#include <signal.h>

#include <catch2/catch.hpp>

#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace reflexes_test {

using nlohmann::json;
using namespace limbic::testing;

TEST_CASE("a rule too big for an RE2::Set neither crashes the runtime nor stops matching",
          "[runtime][reflexes]") {
  TempDir dir;
  json config = BaseConfig(dir);
  // RE2 compiles this pattern alone, but no RE2::Set holding it compiles; the
  // runtime used to match against the failed set and segfault, on every
  // percept of the source, and again after each restart (the rule persists).
  json rule = {{"id", "boom"},
               {"when", {{"source", "boom"}, {"pattern", "\\w{1000}\\pL{200}"}}},
               {"then", {{{"drop", json::object()}}}}};
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    auto put = HttpJson(l.port(), "PUT", "/v1/reflexes/boom", rule);
    INFO(put.body);
    REQUIRE(put.status == 200);
    auto miss = HttpJson(l.port(), "POST", "/v1/percepts",
                         {{"source", "boom"}, {"type", "t"}, {"text", "short"}});
    REQUIRE(miss.status == 201);
    auto hit = HttpJson(l.port(), "POST", "/v1/percepts",
                        {{"source", "boom"}, {"type", "t"}, {"text", std::string(1200, 'a')}});
    REQUIRE(hit.status == 201);
    // Alive and answering; the long text fired the rule, the short one did not.
    WaitJson(l.port(), "/v1/percepts/" + hit.Json()["id"].get<std::string>(),
             [](const json& p) { return p["status"] == "dropped"; });
    CHECK(Http(l.port(), "GET", "/v1/percepts/" + miss.Json()["id"].get<std::string>())
              .Json()["status"] == "new");
    CHECK(Http(l.port(), "GET", "/healthz").status == 200);
    CHECK(l.child().Kill(SIGTERM) == 0);
  }
  RunningLimbic again(dir, config);  // the rule is loaded from the pool
  REQUIRE(again.port() != 0);
  auto p = HttpJson(again.port(), "POST", "/v1/percepts",
                    {{"source", "boom"}, {"type", "t"}, {"text", std::string(1300, 'b')}});
  REQUIRE(p.status == 201);
  WaitJson(again.port(), "/v1/percepts/" + p.Json()["id"].get<std::string>(),
           [](const json& j) { return j["status"] == "dropped"; });
  CHECK(Http(again.port(), "GET", "/healthz").status == 200);
}

}  // namespace reflexes_test
