// FlatRecord: a record held as its stored bytes reads, changes and writes
// exactly as the JSON record it stands for.
#include "state/flat_record.h"

#include <catch2/catch.hpp>
#include <random>

#include "base/json.h"
#include "state/pool_layout.h"

// This file's own namespace: test programs compile in unity batches.
namespace flat_record_test {

using namespace limbic;
using namespace limbic::state;

namespace {

json Thread() {
  return {{"id", "t-1"},
          {"goal", "answer \"the\" mail\n"},
          {"status", "active"},
          {"salience", 0.5700000000000001},
          {"percepts", json::array({"p-1", "p-22"})},
          {"state", {{"phase", nullptr}, {"context", {{"attempt", 2}}}, {"next_step", "ré"}}},
          {"created_at", "2026-11-23T21:42:00.612Z"},
          {"last_active", "2026-11-23T21:42:00.612Z"}};
}

// The record both ways: its bytes are Dump of the JSON it reads as, and of
// the JSON kept beside it.
void CheckSame(const FlatRecord& flat, const json& j) {
  CHECK(flat.bytes() == Dump(j));
  CHECK(flat.ToJson() == j);
  auto again = FlatRecord::FromStored(flat.bytes());
  REQUIRE(again.ok());
  CHECK(again->bytes() == flat.bytes());
}

}  // namespace

TEST_CASE("a flat record is its stored bytes, read in place", "[flat_record]") {
  const json j = Thread();
  FlatRecord flat = FlatRecord::FromJson(j);
  CheckSame(flat, j);
  auto stored = FlatRecord::FromStored(Dump(j));
  REQUIRE(stored.ok());
  CHECK(stored->bytes() == Dump(j));

  CHECK(flat.Has("goal"));
  CHECK_FALSE(flat.Has("outcome"));
  CHECK(*flat.Raw("percepts") == R"(["p-1","p-22"])");
  CHECK(flat.Get("state") == j["state"]);
  CHECK(flat.Get("outcome").is_null());
  CHECK(*flat.String("status") == "active");
  CHECK(*flat.String("goal") == "answer \"the\" mail\n");  // escaped: decoded
  CHECK_FALSE(flat.String("salience"));
  CHECK_FALSE(flat.String("nope"));
  CHECK(flat.IsString("status", "active"));
  CHECK_FALSE(flat.IsString("status", "activ"));
  CHECK(flat.IsString("goal", "answer \"the\" mail\n"));
  CHECK_FALSE(flat.IsString("salience", "0.57"));
  CHECK(*flat.Number("salience") == 0.5700000000000001);
  CHECK_FALSE(flat.Number("status"));
  CHECK_FALSE(flat.Number("nope"));
  CHECK(*FlatRecord::FromJson({{"n", -3}, {"u", uint64_t{1} << 63}}).Number("u") ==
        9223372036854775808.0);
  CHECK(flat.ArrayHas("percepts", "p-22"));
  CHECK_FALSE(flat.ArrayHas("percepts", "p-2"));
  CHECK_FALSE(flat.ArrayHas("goal", "p-1"));
  CHECK_FALSE(flat.ArrayHas("nope", "p-1"));

  CheckSame(FlatRecord::FromJson(json::object()), json::object());
}

TEST_CASE("changing a flat record changes its bytes as changing the JSON would", "[flat_record]") {
  json j = Thread();
  FlatRecord flat = FlatRecord::FromJson(j);
  // Each step on both forms, then the bytes compared: replacing values
  // longer and shorter, adding keys first, in between and last, erasing
  // first, middle, last and only members.
  flat.SetString("status", "paused");
  j["status"] = "paused";
  CheckSame(flat, j);
  flat.Set("salience", 1);
  j["salience"] = 1;
  CheckSame(flat, j);
  flat.Set("pause_reason", {{"why", "waiting on \"you\""}});
  j["pause_reason"] = {{"why", "waiting on \"you\""}};
  CheckSame(flat, j);
  flat.Set("aardvark", nullptr);
  j["aardvark"] = nullptr;
  CheckSame(flat, j);
  flat.SetString("zz", "");
  j["zz"] = "";
  CheckSame(flat, j);
  flat.Set("state", json::object());
  j["state"] = json::object();
  CheckSame(flat, j);
  for (const char* key : {"aardvark", "percepts", "zz", "nope"}) {
    flat.Erase(key);
    j.erase(key);
    CheckSame(flat, j);
  }
  flat.ArrayAddUnique("percepts", "p-9");  // absent: made
  j["percepts"] = json::array({"p-9"});
  CheckSame(flat, j);
  flat.ArrayAddUnique("percepts", "p-\"10\"");
  flat.ArrayAddUnique("percepts", "p-9");  // held already
  j["percepts"].push_back("p-\"10\"");
  CheckSame(flat, j);
  CHECK(flat.ArrayHas("percepts", "p-\"10\""));
  flat.ArrayRemove("percepts", "p-9");
  flat.ArrayRemove("percepts", "p-404");
  j["percepts"] = json::array({"p-\"10\""});
  CheckSame(flat, j);
  flat.ArrayRemove("percepts", "p-\"10\"");
  j["percepts"] = json::array();
  CheckSame(flat, j);
  flat.ArrayAddUnique("goal", "p-1");  // not an array: replaced
  j["goal"] = json::array({"p-1"});
  CheckSame(flat, j);
  flat.ArrayRemove("status", "paused");  // not an array: left
  CheckSame(flat, j);

  FlatRecord one = FlatRecord::FromJson({{"only", 1}});
  one.Erase("only");
  CheckSame(one, json::object());
  one.Set("b", 2);
  one.Set("a", 1);
  one.Set("c", 3);
  CheckSame(one, {{"a", 1}, {"b", 2}, {"c", 3}});
}

TEST_CASE("a flat record keeps keys the write path does not know, in their order",
          "[flat_record]") {
  // Keys that need escaping, sort before and after the known ones, or
  // hold nested objects with their own order.
  json j = {{"\"quoted\"", 1},
            {"Zeta",
             {{"b", 1},
              {"a",
               [] {
                 return json::array({1, "x", nullptr});
               }()}}},
            {"tab\there", true},
            {"é", "ü"},
            {"status", "pending"}};
  FlatRecord flat = FlatRecord::FromJson(j);
  CheckSame(flat, j);
  flat.SetString("status", "inflight");
  flat.Set("attempts", 1);
  flat.Set("~last", 2.5);
  j["status"] = "inflight";
  j["attempts"] = 1;
  j["~last"] = 2.5;
  CheckSame(flat, j);
  // Stored with those keys (escaped), read back and changed.
  auto stored = FlatRecord::FromStored(Dump(j));
  REQUIRE(stored.ok());
  stored->Set("b", 1);
  j["b"] = 1;
  CheckSame(*stored, j);
}

TEST_CASE("stored bytes not in Dump's form are taken as Dump would write them, others refused",
          "[flat_record]") {
  const json j = {{"a", 1}, {"b", {{"c", "d e"}}}};
  for (const char* text : {R"({"b":{"c":"d e"},"a":1})", R"({ "a": 1, "b": {"c": "d e"} })",
                           R"({"\u0061":1,"b":{"c":"d e"}})", R"({"a":1,"a":1,"b":{"c":"d e"}})",
                           "{\"a\":1,\"b\":{ \"c\":\"d e\"}}"}) {
    INFO(text);
    auto flat = FlatRecord::FromStored(text);
    REQUIRE(flat.ok());
    CHECK(flat->bytes() == Dump(j));
    CHECK(flat->Get("a") == 1);
  }
  // Not Dump's form below the top level either: nested keys out of order or
  // repeated, numbers or escapes Dump writes otherwise.
  for (const char* text : {R"({"a":{"z":1,"b":2}})", R"({"a":{"x":1,"x":2}})", R"({"a":1E2})",
                           R"({"a":1.50})", R"({"a":-0})", R"({"a":100000000000000000000})",
                           R"({"a":"\u0041"})", R"({"a":"\/"})", R"({"a":["\u00701"]})",
                           R"({"a":"\u001F"})", R"({"a":"\u000a"})", R"({"a":[{"b":1,"a":2}]})"}) {
    INFO(text);
    auto flat = FlatRecord::FromStored(text);
    REQUIRE(flat.ok());
    const json j = *ParseJson(text);
    CHECK(flat->bytes() == Dump(j));
    CHECK(flat->ToJson() == j);
  }
  // Kept as they are: Dump's own escapes and numbers.
  for (const char* text : {R"({"a":"\"\\\b\f\n\r\t\u001f\u0000"})",
                           R"({"a":[0,-1,2.5,1e+20,-0.5]})", R"({"a":{"b":{"c":[]}},"b":"é"})"}) {
    INFO(text);
    auto flat = FlatRecord::FromStored(text);
    REQUIRE(flat.ok());
    CHECK(flat->bytes() == text);
    CHECK(flat->bytes() == Dump(*ParseJson(text)));
  }
  // An array element compared as bytes compares as its value.
  auto odd = FlatRecord::FromStored(R"({"percepts":["\u00701"]})");
  REQUIRE(odd.ok());
  CHECK(odd->ArrayHas("percepts", "p1"));
  odd->ArrayAddUnique("percepts", "p1");
  CHECK(odd->Get("percepts") == json::array({"p1"}));
  odd->ArrayRemove("percepts", "p1");
  CHECK(odd->Get("percepts") == json::array());
  for (const char* text :
       {"", "[1,2]", "\"x\"", "{\"a\":1", "{\"a\":1}x", "{\"a\":01}", "{'a':1}"}) {
    INFO(text);
    auto flat = FlatRecord::FromStored(text);
    REQUIRE_FALSE(flat.ok());
    CHECK(flat.status().IsInvalidArgument());
  }
  CHECK(FlatRecord::FromStored("[1]").status().message() == "not a JSON object");
  CHECK(FlatRecord::FromStored("{").status().message() == "not valid JSON");
}

TEST_CASE("random changes to a flat record match the same changes to JSON", "[flat_record]") {
  std::mt19937 rng(7);
  const std::vector<std::string> keys = {"attempts", "id",     "last_error", "percepts",   "result",
                                         "state",    "status", "ts",         "updated_at", "zeta"};
  const std::vector<json> values = {nullptr,
                                    0,
                                    -1,
                                    2.5,
                                    "",
                                    "x",
                                    "a \"b\"",
                                    json::object(),
                                    json::array({1, 2}),
                                    {{"k", {{"n", 1}}}}};
  for (int round = 0; round < 200; ++round) {
    json j = json::object();
    FlatRecord flat = FlatRecord::FromJson(j);
    for (int step = 0; step < 30; ++step) {
      const std::string& key = keys[rng() % keys.size()];
      switch (rng() % 4) {
        case 0:
        case 1: {
          const json& v = values[rng() % values.size()];
          flat.Set(key, v);
          j[key] = v;
          break;
        }
        case 2:
          flat.Erase(key);
          j.erase(key);
          break;
        case 3: {
          const std::string id = "p-" + std::to_string(rng() % 4);
          if (rng() % 2) {
            flat.ArrayAddUnique(key, id);
            json& list = j[key];
            if (!list.is_array()) list = json::array();
            if (std::find(list.begin(), list.end(), json(id)) == list.end()) list.push_back(id);
          } else {
            flat.ArrayRemove(key, id);
            auto it = j.find(key);
            if (it != j.end() && it->is_array())
              it->erase(std::remove(it->begin(), it->end(), json(id)), it->end());
          }
          break;
        }
      }
      REQUIRE(flat.bytes() == Dump(j));
    }
    auto back = FlatRecord::FromStored(flat.bytes());
    REQUIRE(back.ok());
    CHECK(back->ToJson() == j);
  }
}

TEST_CASE("a stored record nested 200,000 deep is taken as stored, without recursion",
          "[flat_record]") {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "{\"a\":[";
  deep += "\"x\"";
  for (int i = 0; i < 100000; ++i) deep += "]}";
  const std::string stored = "{\"data\":" + deep + ",\"id\":\"p-1\"}";
  auto rec = FlatRecord::FromStored(stored);
  REQUIRE(rec.ok());
  CHECK(rec->bytes() == stored);
  CHECK(rec->Raw("data") == std::optional<std::string_view>(deep));
  CHECK(rec->String("id") == "p-1");
  // Deep and not in Dump's form (keys out of order, deep down): written as
  // Dump would, at any depth.
  std::string unordered = deep;
  unordered.replace(unordered.find("\"x\""), 3, "{\"b\":1,\"a\":2}");
  auto mended = FlatRecord::FromStored("{\"data\":" + unordered + "}");
  REQUIRE(mended.ok());
  std::string want = deep;
  want.replace(want.find("\"x\""), 3, "{\"a\":2,\"b\":1}");
  CHECK(mended->bytes() == "{\"data\":" + want + "}");
}

}  // namespace flat_record_test
