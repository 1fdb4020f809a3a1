#include "base/input_json.h"

#include <catch2/catch.hpp>

namespace limbic::state {
namespace {

std::string Nested(size_t depth, std::string_view inner = "1") {
  return std::string(depth, '[') + std::string(inner) + std::string(depth, ']');
}

}  // namespace

TEST_CASE("input JSON nested exactly to the limit is accepted, one more is refused",
          "[input_json]") {
  auto ok = ParseInputJson(Nested(128), 128);
  REQUIRE(ok.ok());
  auto deep = ParseInputJson(Nested(129), 128);
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.status().IsInvalidArgument());
  CHECK(IsJsonTooDeep(deep.status()));
  CHECK(deep.status().message() == "JSON nested deeper than 128 (api.max_json_depth) at byte 129");
  // Objects count as arrays do.
  std::string objects;
  for (int i = 0; i < 5; ++i) objects += "{\"a\":";
  objects += "1}}}}}";
  CHECK(ParseInputJson(objects, 5).ok());
  CHECK(IsJsonTooDeep(ParseInputJson(objects, 4).status()));
}

TEST_CASE("input JSON nested 200000 deep is refused without building anything", "[input_json]") {
  auto deep = ParseInputJson(Nested(200000));
  REQUIRE_FALSE(deep.ok());
  CHECK(IsJsonTooDeep(deep.status()));
  // Not even valid JSON: the depth is still what is reported first.
  CHECK(IsJsonTooDeep(ParseInputJson(std::string(200000, '{')).status()));
}

TEST_CASE("brackets inside strings do not count toward the depth", "[input_json]") {
  std::string text = "{\"a\":\"" + std::string(500, '[') + "\",\"b\":\"\\\"[[[[\\\\\"}";
  auto r = ParseInputJson(text, 1);
  REQUIRE(r.ok());
  CHECK((*r)["a"].get<std::string>().size() == 500);
  CHECK((*r)["b"] == "\"[[[[\\");
}

TEST_CASE("the default limit is api.max_json_depth and is capped", "[input_json]") {
  CHECK(MaxInputJsonDepth() == kDefaultMaxJsonDepth);
  CHECK(IsJsonTooDeep(ParseInputJson(Nested(129)).status()));
  SetMaxInputJsonDepth(200);
  CHECK(ParseInputJson(Nested(129)).ok());
  SetMaxInputJsonDepth(1u << 30);
  CHECK(MaxInputJsonDepth() == kMaxMaxJsonDepth);
  SetMaxInputJsonDepth(kDefaultMaxJsonDepth);
}

TEST_CASE("numbers beyond a double are refused naming the key and byte", "[input_json]") {
  auto r = ParseInputJson(R"({"intensity":1e400})");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsInvalidArgument());
  CHECK_FALSE(IsJsonTooDeep(r.status()));
  CHECK(r.status().message() == "intensity: number out of range at byte 14: 1e400");

  auto nested = ParseInputJson(R"({"recency": {"x": [1, -2e999]}})");
  REQUIRE_FALSE(nested.ok());
  CHECK(nested.status().message() == "recency.x[1]: number out of range at byte 23: -2e999");

  std::string digits(400, '7');
  auto big = ParseInputJson("{\"data\":{\"n\":" + digits + "}}");
  REQUIRE_FALSE(big.ok());
  CHECK(big.status().message().starts_with("data.n: number out of range at byte 14: 7777"));
  CHECK(big.status().message().ends_with("(400 characters)"));

  // Still a double: read as nlohmann reads them.
  auto fine = ParseInputJson(R"({"a":1e300,"b":1e-400,"c":123456789012345678901234567890})");
  REQUIRE(fine.ok());
  CHECK((*fine)["b"].get<double>() == 0.0);
  CHECK((*fine)["c"].is_number_float());
  // A number-looking string is not a number.
  CHECK(ParseInputJson(R"({"s":"1e400"})").ok());
}

TEST_CASE("text that is not JSON is refused naming the byte", "[input_json]") {
  auto r = ParseInputJson(R"({"a":1,})");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().starts_with("malformed JSON: syntax error at byte 8"));
  CHECK_FALSE(IsJsonTooDeep(r.status()));
  CHECK_FALSE(ParseInputJson("").ok());
  // A syntax error before a huge number is the syntax error.
  CHECK(ParseInputJson("{x 1e400}").status().message().starts_with("malformed JSON"));
}

}  // namespace limbic::state

TEST_CASE("a duration from outside JSON: a string or integer milliseconds, 0 to 100 years",
          "[input_json]") {
  using nlohmann::json;
  CHECK(*limbic::DurationFromJson(json("30s")) == 30000);
  CHECK(*limbic::DurationFromJson(json(250)) == 250);
  CHECK(*limbic::DurationFromJson(json(0)) == 0);
  CHECK(*limbic::DurationFromJson(json(limbic::kMaxDurationMs)) == limbic::kMaxDurationMs);
  CHECK(limbic::DurationFromJson(json(limbic::kMaxDurationMs + 1)).status().message().starts_with("duration too large"));
  CHECK(limbic::DurationFromJson(json(uint64_t{18446744073709551615u})).status().IsInvalidArgument());
  CHECK(limbic::DurationFromJson(json(-1)).status().IsInvalidArgument());
  CHECK(limbic::DurationFromJson(json(1.5)).status().message().starts_with("must be a duration such as"));
  CHECK(limbic::DurationFromJson(json("soon")).status().IsInvalidArgument());
  CHECK(limbic::DurationFromJson(json::array()).status().IsInvalidArgument());
}
