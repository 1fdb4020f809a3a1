// base/template.h: the one {{placeholder}} renderer and checker that the
// effectors and the reflexes share.
#include "base/template.h"

#include <catch2/catch.hpp>
#include <map>
#include <vector>

using limbic::CheckTemplate;
using limbic::RenderTemplate;
using limbic::Result;
using limbic::Status;
using nlohmann::json;

namespace {

// Values from a map; a name not in it is NotFound naming it.
limbic::PlaceholderValue From(std::map<std::string, json> values) {
  return [values = std::move(values)](std::string_view name) -> Result<json> {
    auto it = values.find(std::string(name));
    if (it == values.end()) return Status::NotFound("no " + std::string(name));
    return it->second;
  };
}

// Refuses every name that does not start with "ok".
std::string OnlyOk(std::string_view name) {
  return name.rfind("ok", 0) == 0 ? "" : "unknown placeholder {{" + std::string(name) + "}}";
}

}  // namespace

TEST_CASE("a whole placeholder keeps its type, within text it becomes text", "[base][template]") {
  auto values = From({{"n", 7}, {"s", "ana"}, {"o", {{"a", 1}}}, {"nil", nullptr}});
  CHECK(*RenderTemplate("{{n}}", values) == 7);
  CHECK(*RenderTemplate("{{o}}", values) == json({{"a", 1}}));
  CHECK(*RenderTemplate("{{nil}}", values) == nullptr);
  CHECK(*RenderTemplate("n={{n}}", values) == "n=7");
  CHECK(*RenderTemplate("{{s}} has {{o}}", values) == "ana has {\"a\":1}");
  CHECK(*RenderTemplate("{{s}}{{s}}", values) == "anaana");  // two placeholders: text
  CHECK(*RenderTemplate(" {{n}}", values) == " 7");
  CHECK(*RenderTemplate("no placeholder }} {", values) == "no placeholder }} {");
  CHECK(*RenderTemplate("", values) == "");
}

TEST_CASE("objects and arrays render member by member, other values stay", "[base][template]") {
  auto values = From({{"n", 7}, {"s", "ana"}});
  json tmpl = {
      {"a", {"{{s}}", "x {{n}}", 3, true, nullptr}}, {"b", {{"c", "{{n}}"}}}, {"{{s}}", 1}};
  json want = {{"a", {"ana", "x 7", 3, true, nullptr}}, {"b", {{"c", 7}}}, {"{{s}}", 1}};
  CHECK(*RenderTemplate(tmpl, values) == want);  // keys are not templates
  CHECK(*RenderTemplate(json(2.5), values) == 2.5);
  CHECK(*RenderTemplate(json::array(), values) == json::array());
}

TEST_CASE("rendering returns the value's first error as it is, or names an unclosed {{",
          "[base][template]") {
  auto values = From({{"n", 7}});
  auto missing = RenderTemplate({{"a", "{{n}}"}, {"b", "x {{gone}} {{also}}"}}, values);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().IsNotFound());
  CHECK(missing.status().message() == "no gone");
  auto unclosed = RenderTemplate("x {{n}} {{n", values);
  REQUIRE_FALSE(unclosed.ok());
  CHECK(unclosed.status().IsInvalidArgument());
  CHECK(unclosed.status().message() == "template \"x {{n}} {{n\": unclosed {{");
  // The value's error comes first when it is met before the unclosed {{.
  CHECK(RenderTemplate("{{gone}} {{", values).status().message() == "no gone");
  // "{{}}" is a placeholder with an empty name.
  CHECK(RenderTemplate("{{}}", values).status().message() == "no ");
}

TEST_CASE("checking names the path of the first bad string, an unclosed {{ first",
          "[base][template]") {
  CHECK(CheckTemplate({{"a", {"{{ok.1}}", "x {{ok}}"}}, {"b", 1}}, "body", OnlyOk).ok());
  CHECK(CheckTemplate(json(nullptr), "body", OnlyOk).ok());
  CHECK(CheckTemplate("plain", "body", OnlyOk).ok());

  Status s = CheckTemplate({{"a", {{"b", {"fine", "{{ok}} {{bad}}"}}}}}, "body", OnlyOk);
  CHECK(s.IsInvalidArgument());
  CHECK(s.message() == "body.a.b[]: unknown placeholder {{bad}}");
  // The first refused placeholder of the string is named.
  CHECK(CheckTemplate("{{x}} {{y}}", "k", OnlyOk).message() == "k: unknown placeholder {{x}}");
  // The first bad string in document order (objects iterate by key).
  CHECK(CheckTemplate({{"a", "{{x}}"}, {"b", "{{y}}"}}, "k", OnlyOk).message() ==
        "k.a: unknown placeholder {{x}}");
  // An unclosed {{ is named before the string's other problems.
  CHECK(CheckTemplate({{"l", json::array({"{{x}} {{ok"})}}, "e.body", OnlyOk).message() ==
        "e.body.l[]: unclosed {{ in \"{{x}} {{ok\"");
}

TEST_CASE("what checking passes renders without a form error", "[base][template]") {
  // Every name the check lets through has a value: rendering then fails
  // only on values.
  json tmpl = {{"t", "{{ok.a}} and {{ok.b}}"}, {"whole", "{{ok.a}}"}};
  REQUIRE(CheckTemplate(tmpl, "t", OnlyOk).ok());
  auto out = RenderTemplate(tmpl, From({{"ok.a", 1}, {"ok.b", "two"}}));
  REQUIRE(out.ok());
  CHECK(*out == json({{"t", "1 and two"}, {"whole", 1}}));
}
