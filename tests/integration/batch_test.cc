// POST /v1/percepts/batch (MCP add_percepts) through the real binary: each
// item answered alone, a refused one never blocking the others, a retry
// with the same ids adding nothing twice, the limit, malformed bodies, and
// every accepted percept there after a SIGKILL.
#include <signal.h>

#include <catch2/catch.hpp>

#include "http.h"
#include "mcp_client.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace batch_test {

using nlohmann::json;
using namespace limbic::testing;

namespace {

json Percept(const std::string& id, const std::string& text) {
  return {{"source", "bulk"}, {"type", "message"}, {"id", id}, {"text", text}};
}

}  // namespace

TEST_CASE("a percept batch answers each item alone and a retry adds nothing twice", "[batch]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["api"]["batch_limit"] = 5;
  auto l = std::make_unique<RunningLimbic>(dir, config);
  const uint16_t port = l->port();
  json items = json::array({Percept("b-1", "one"), {{"source", "bulk"}},  // no type
                            Percept("b-2", "two"), "not an object", Percept("b-1", "again")});
  auto r = HttpJson(port, "POST", "/v1/percepts/batch", {{"percepts", items}});
  INFO(r.body);
  REQUIRE(r.status == 200);
  json a = r.Json();
  CHECK(a["accepted"] == 2);
  CHECK(a["refused"] == 3);
  CHECK(a["results"][0]["id"] == "b-1");
  CHECK(a["results"][2]["id"] == "b-2");
  CHECK(a["results"][2]["seq"].get<int>() == a["results"][0]["seq"].get<int>() + 1);
  CHECK(a["results"][1]["status"] == 400);
  CHECK_THAT(a["results"][1]["error"]["message"].get<std::string>(),
             Catch::StartsWith("percepts[1]: ") && Catch::Contains("type"));
  CHECK(a["results"][3]["status"] == 400);
  CHECK(a["results"][4]["status"] == 409);  // b-1, earlier in the same batch
  CHECK(a["results"][4]["error"]["code"] == "already_exists");

  // The same batch again: nothing new, every item refused on its own.
  const json events_before = Http(port, "GET", "/v1/events?after=0&limit=1000").Json();
  json again = HttpJson(port, "POST", "/v1/percepts/batch", {{"percepts", items}}).Json();
  CHECK(again["accepted"] == 0);
  CHECK(again["results"][0]["status"] == 409);
  CHECK(again["results"][2]["status"] == 409);
  CHECK(Http(port, "GET", "/v1/events?after=0&limit=1000").Json() == events_before);

  // The limit and the body's shape.
  json six = json::array();
  for (int i = 0; i < 6; ++i) six.push_back(Percept("c-" + std::to_string(i), "x"));
  auto big = HttpJson(port, "POST", "/v1/percepts/batch", {{"percepts", six}});
  CHECK(big.status == 413);
  CHECK(big.Json()["error"]["code"] == "batch_too_large");
  CHECK(HttpJson(port, "POST", "/v1/percepts/batch", {{"percepts", json::array()}}).status == 400);
  CHECK(HttpJson(port, "POST", "/v1/percepts/batch", json::array({Percept("d", "x")})).status == 400);
  CHECK(HttpJson(port, "POST", "/v1/percepts/batch", {{"percepts", items}, {"more", 1}}).status == 400);

  // Acknowledged means durable: all there after a SIGKILL.
  json five = json::array();
  for (int i = 0; i < 5; ++i) five.push_back(Percept("k-" + std::to_string(i), "kept"));
  CHECK(HttpJson(port, "POST", "/v1/percepts/batch", {{"percepts", five}}).Json()["accepted"] == 5);
  l->child().Kill(SIGKILL);
  l.reset();
  RunningLimbic after(dir, config);
  for (int i = 0; i < 5; ++i)
    CHECK(Http(after.port(), "GET", "/v1/percepts/k-" + std::to_string(i)).status == 200);
  CHECK(Http(after.port(), "GET", "/v1/percepts/b-2").status == 200);
}

TEST_CASE("mcp add_percepts adds many percepts, each answered", "[batch]") {
  TempDir dir;
  McpClient mcp(dir, WriteConfig(dir));
  mcp.Initialize();
  json added = mcp.Ok("add_percepts", {{"percepts", {Percept("m-1", "one"), Percept("m-2", "two")}}});
  CHECK(added["accepted"] == 2);
  CHECK(added["results"][1]["id"] == "m-2");
  json refused = mcp.Ok("add_percepts", {{"percepts", {Percept("m-1", "one")}}});
  CHECK(refused["refused"] == 1);
  CHECK(refused["results"][0]["status"] == 409);
  CHECK(mcp.Ok("get_percept", {{"id", "m-2"}})["text"] == "two");
}

}  // namespace batch_test
