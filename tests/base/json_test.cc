#include "base/json.h"

#include <catch2/catch.hpp>
#include <random>

// This file's own namespace: test programs compile in unity batches.
namespace json_test {

using limbic::Status;
using limbic::AppendCompactJson;
using limbic::CompactJson;
using limbic::IsValidUtf8;
using limbic::JsonDepth;
using limbic::JsonError;
using limbic::MakeValidUtf8;
using limbic::ParseJson;
using limbic::ToValidUtf8;
using nlohmann::json;

namespace {

// ParseJson must agree with nlohmann's parser: same verdict, same value, same types.
void SameAsReference(const std::string& text) {
  INFO("text: " << text);
  json reference = json::parse(text, nullptr, false);
  std::optional<json> ours = ParseJson(text);
  REQUIRE(ours.has_value() == !reference.is_discarded());
  if (!ours) return;
  CHECK(ours->dump() == reference.dump());
  // One documented difference: "-0" is an unsigned 0 here, a signed 0 there
  // (equal values, printed alike).
  if (text != "-0") CHECK(ours->type() == reference.type());
  if (reference.is_object())
    for (auto it = reference.begin(); it != reference.end(); ++it)
      CHECK((*ours)[it.key()].type() == it->type());
}

}  // namespace

TEST_CASE("ParseJson accepts and rejects what nlohmann does, with the same values", "[json]") {
  for (const char* text : {
           "{}", "[]", "0", "-0", "1.0", "-1", "1e2", "0.1e-400", "18446744073709551615",
           "18446744073709551616", "-9223372036854775808", "-9223372036854775809", "1e400",
           "\"\\u00e9\\ud83d\\ude00\"", "\"\\ud800\"", "\"a\\u0000b\"", "\"\xff\"", "\"a\x01\"",
           "  {\"a\":1,\"a\":2}  ", "{\"a\":[1,{\"b\":null,\"c\":[true,false]}],\"d\":\"x\"}",
           "{} x", "[1,2", "nul", "01", "1.", "", " ", "tru", "true false", "{\"a\" 1}",
           "{\"a\":1,}", "[1,]", "\"unterminated", "{\"n\":-12.5e-3,\"u\":7,\"i\":-7}",
           "{\"b\":1,\"a\":2,\"c\":{\"z\":1,\"y\":[2],\"x\":3},\"a\":3,\"0\":4}"}) {
    SameAsReference(text);
  }
}

TEST_CASE("ParseJson agrees with nlohmann on random documents and their mutations", "[json]") {
  std::mt19937 rng(7);
  auto random_value = [&](auto& self, int depth) -> json {
    switch (rng() % (depth > 3 ? 5 : 7)) {
      case 0: return nullptr;
      case 1: return rng() % 2 == 0;
      case 2: return static_cast<int64_t>(rng()) - (1ll << 31);
      case 3: return static_cast<double>(rng()) / 97.0;
      case 4: {
        static const char* const kPieces[] = {" ", "a", "Z", "\"", "\\", "\n", "\t", "/", "é", "😀"};
        std::string s;
        for (int i = rng() % 8; i > 0; --i) s += kPieces[rng() % 10];
        return s;
      }
      case 5: {
        json a = json::array();
        for (int i = rng() % 4; i > 0; --i) a.push_back(self(self, depth + 1));
        return a;
      }
      default: {
        json o = json::object();
        for (int i = rng() % 4; i > 0; --i) o["k" + std::to_string(rng() % 9)] = self(self, depth + 1);
        return o;
      }
    }
  };
  for (int i = 0; i < 500; ++i) {
    std::string text = random_value(random_value, 0).dump();
    SameAsReference(text);
    // A one-byte mutation is usually invalid; both must say so alike.
    if (!text.empty()) {
      text[rng() % text.size()] = "{}[],:\"0x \\"[rng() % 12];
      SameAsReference(text);
    }
  }
}

TEST_CASE("ParseJsonTaking takes the named members out, as ParseJson and erasing them would", "[json]") {
  using limbic::ParseJsonTaking;
  const std::string_view names[] = {"seq", "type", "v"};
  std::vector<std::string> cases;
  for (const char* text : {
           "{\"v\":1,\"seq\":7,\"type\":\"x\",\"a\":{\"b\":[1,2]},\"z\":null}",
           "{\"z\":1,\"type\":\"x\",\"a\":2,\"type\":\"y\",\"seq\":-3}",  // out of order, repeated
           "{\"a\":1}", "{}",
           "{\"seq\":7,\"b\":18446744073709551616,\"v\":1}",  // left to nlohmann: beyond 64 bits
           "{\"seq\":{\"v\":2},\"v\":[{\"type\":1}]}",  // names nested are not taken
           "[1,2]", "\"seq\"", "3", "{\"seq\":", "", "{\"a\":1} x"}) {
    cases.push_back(text);
  }
  // Nested deeper than simdjson goes: left to nlohmann too.
  cases.push_back("{\"type\":\"x\",\"deep\":" + std::string(1500, '[') + std::string(1500, ']') + "}");
  for (const std::string& text : cases) {
    INFO("text: " << text.substr(0, 80));
    std::optional<json> taken[3];
    std::optional<json> rest = ParseJsonTaking(text, names, taken);
    std::optional<json> whole = ParseJson(text);
    REQUIRE(rest.has_value() == whole.has_value());
    if (!whole) continue;
    std::optional<json> expected[3];
    if (whole->is_object()) {
      for (size_t i = 0; i < 3; ++i) {
        auto it = whole->find(names[i]);
        if (it == whole->end()) continue;
        expected[i] = *it;
        whole->erase(it);
      }
    }
    CHECK(rest->dump() == whole->dump());
    for (size_t i = 0; i < 3; ++i) {
      REQUIRE(taken[i].has_value() == expected[i].has_value());
      if (taken[i]) CHECK(taken[i]->dump() == expected[i]->dump());
    }
  }
}

TEST_CASE("JsonError names the byte", "[json]") {
  CHECK_THAT(JsonError("{\"a\": tru}"), Catch::Contains("byte 10"));
  CHECK_THAT(JsonError("[1,"), Catch::StartsWith("syntax error at byte"));
}

TEST_CASE("JsonError explains a number out of range instead of throwing", "[json]") {
  // Found by fuzz/archive_fuzz.cc: a day document holding 454e068540 made
  // JsonError throw out_of_range.406, which ended the process.
  CHECK_FALSE(ParseJson("{\"a\": 454e068540}").has_value());
  CHECK(JsonError("{\"a\": 454e068540}") == "number overflow parsing '454e068540'");
  CHECK(JsonError("[-1e400]") == "number overflow parsing '-1e400'");
}

namespace {

// A random value of every kind nlohmann can print: strings with quotes,
// backslashes, control bytes, 0x7f, multi-byte UTF-8 and broken UTF-8;
// integers at their limits; doubles of every magnitude, and not-a-number.
json RandomValue(std::mt19937_64& rng, int depth) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto text = [&] {
    static const std::vector<std::string> pieces = {
        "a", "Zz", " ", "\"", "\\", "\n", "\t", std::string(1, '\0'), "\x01", "\x1f", "\x7f", "é",
        "€", "😀", "\xc3", "\xff", "\xe2\x82", "\xed\xa0\x80", "plain text ", "/"};
    std::string s;
    for (size_t n = pick(6); n > 0; --n) s += pieces[pick(pieces.size())];
    return s;
  };
  static const double doubles[] = {0.0, -0.0, 0.1, 1.0, -2.5, 1e16, 1e-7, 123456.789, 1e300,
                                   -1e-300, 5e-324, 0.30000000000000004, 1.7976931348623157e308};
  switch (depth > 3 ? pick(6) : pick(8)) {
    case 0: return json(nullptr);
    case 1: return json(pick(2) == 0);
    case 2: return json(static_cast<int64_t>(rng()));  // either sign
    case 3: return pick(2) ? json(uint64_t{rng()}) : json(std::numeric_limits<int64_t>::min());
    case 4: {
      const size_t k = pick(std::size(doubles) + 3);
      if (k == std::size(doubles)) return json(std::nan(""));
      if (k == std::size(doubles) + 1) return json(-std::numeric_limits<double>::infinity());
      if (k == std::size(doubles) + 2) return json(std::ldexp(static_cast<double>(rng() >> 11), -static_cast<int>(pick(80))));
      return json(doubles[k]);
    }
    case 5: return json(text());
    case 6: {
      json o = json::object();
      for (size_t n = pick(5); n > 0; --n) o[text()] = RandomValue(rng, depth + 1);
      return o;
    }
    default: {
      json a = json::array();
      for (size_t n = pick(5); n > 0; --n) a.push_back(RandomValue(rng, depth + 1));
      return a;
    }
  }
}

}  // namespace

TEST_CASE("AppendCompactJson writes exactly what nlohmann's dump writes", "[json]") {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    const json v = RandomValue(rng, 0);
    const std::string want = v.dump(-1, ' ', false, json::error_handler_t::replace);
    std::string got = "prefix";  // appends, keeps what is there
    AppendCompactJson(v, &got);
    INFO(want);
    REQUIRE(got == "prefix" + want);
  }
}

namespace {

// A document nested `levels` times as {"a":[...]}: 2 * levels deep.
std::string Deep(size_t levels, std::string_view core = "1") {
  std::string text;
  for (size_t i = 0; i < levels; ++i) text += "{\"a\":[";
  text += core;
  for (size_t i = 0; i < levels; ++i) text += "]}";
  return text;
}

}  // namespace

TEST_CASE("values nested 200,000 deep are read, written, measured and mended", "[json]") {
  // An older limbic stored such values; recursion over them overflows the
  // stack, so every walk here keeps its own.
  const std::string text = Deep(100000, "\"caf\xc3\xa9\"");
  auto parsed = ParseJson(text);
  REQUIRE(parsed);
  CHECK(JsonDepth(text) == 200000);
  CHECK(CompactJson(*parsed) == text);
  // The same nesting built in memory (moves only: copying recurses), with
  // text that is not UTF-8 at the bottom.
  json j = "caf\xe9";
  for (int i = 0; i < 100000; ++i) {
    json items = json::array();
    items.push_back(std::move(j));
    j = json::object();
    j["a"] = std::move(items);
  }
  std::string written;
  AppendCompactJson(j, &written);
  CHECK(written == Deep(100000, "\"caf\xef\xbf\xbd\""));
  REQUIRE(MakeValidUtf8(&j).ok());
  CHECK(CompactJson(j) == written);
}

TEST_CASE("ToValidUtf8 replaces each maximal ill-formed subpart by one U+FFFD", "[json]") {
  const std::string r = "\xef\xbf\xbd";
  CHECK(ToValidUtf8("caf\xc3\xa9") == "caf\xc3\xa9");  // valid: as it is
  CHECK(ToValidUtf8("caf\xe9 latin1") == "caf" + r + " latin1");
  CHECK(ToValidUtf8("\xe2\x82") == r);  // a truncated sequence
  CHECK(ToValidUtf8("\xe2\x82x") == r + "x");
  CHECK(ToValidUtf8("\xc0\xaf") == r + r);                  // overlong: no subpart
  CHECK(ToValidUtf8("\xed\xa0\x80") == r + r + r);          // a surrogate
  CHECK(ToValidUtf8("\xf4\x90\x80\x80") == r + r + r + r);  // beyond U+10FFFF
  CHECK(ToValidUtf8("\xf0\x9f\x98") == r);
  CHECK(ToValidUtf8("\xf0\x9f\x98\x80") == "\xf0\x9f\x98\x80");
  for (std::string s : {"\xff", "a\xfe\xff", "\xc3", "\xe0\x80\x80"}) {
    INFO(s);
    CHECK(IsValidUtf8(ToValidUtf8(s)));
    CHECK_FALSE(IsValidUtf8(s));
  }
}

TEST_CASE("MakeValidUtf8 mends strings and keys at any depth, refuses keys that clash", "[json]") {
  json j = {{"k\xff", {{"deeper", json::array({"x\xe9", 1})}}}, {"ok", "fine"}};
  REQUIRE(MakeValidUtf8(&j).ok());
  CHECK(j ==
        json{{"k\xef\xbf\xbd", {{"deeper", json::array({"x\xef\xbf\xbd", 1})}}}, {"ok", "fine"}});
  json clash = {{"k\xff", 1}, {"k\xef\xbf\xbd", 2}};
  Status s = MakeValidUtf8(&clash);
  CHECK(s.IsInvalidArgument());
  CHECK_THAT(s.message(), Catch::Contains("k\xef\xbf\xbd") && Catch::Contains("twice"));
}

}  // namespace json_test
