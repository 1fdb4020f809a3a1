// base/name.h: the one definition of a name.
#include "base/name.h"

#include <catch2/catch.hpp>

// This file's own namespace: test programs compile in unity batches.
namespace name_test {

using limbic::CheckName;
using limbic::IsName;
using limbic::NameFault;
using limbic::NameRule;
using limbic::SanitizeName;
using limbic::TextFault;

TEST_CASE("a name: 1-256 bytes of UTF-8 without control or bidi-control characters", "[base]") {
  CHECK(IsName("sensor:mail"));
  CHECK(IsName("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac"));  // any script
  CHECK(IsName("a\xe2\x80\x8f" "b"));                     // U+200F, a mark that reorders nothing
  CHECK(IsName(std::string(256, 'a')));
  CHECK(NameFault("") == "empty");
  CHECK(NameFault(std::string(257, 'a')) == "257 bytes");
  // C0, DEL and C1 controls.
  CHECK(NameFault("a\nb") == "U+000A (a control character) at byte 1");
  CHECK(NameFault("a\x7f") == "U+007F (a control character) at byte 1");
  CHECK(NameFault("ab\xc2\x80") == "U+0080 (a control character) at byte 2");
  CHECK(NameFault("\xc2\x85") == "U+0085 (a control character) at byte 0");
  CHECK(NameFault("\xc2\x9f") == "U+009F (a control character) at byte 0");
  CHECK(IsName("\xc2\xa0"));  // U+00A0, the first after C1
  // Bidi embeddings, overrides and isolates, and their neighbours.
  for (const char* bidi : {"\xe2\x80\xaa", "\xe2\x80\xab", "\xe2\x80\xac", "\xe2\x80\xad",
                           "\xe2\x80\xae", "\xe2\x81\xa6", "\xe2\x81\xa7", "\xe2\x81\xa8",
                           "\xe2\x81\xa9"}) {
    INFO(bidi);
    CHECK_THAT(NameFault(std::string("x") + bidi), Catch::Contains("(a bidi control) at byte 1"));
  }
  CHECK(NameFault("\xe2\x80\xae") == "U+202E (a bidi control) at byte 0");
  CHECK(NameFault("\xe2\x81\xa6") == "U+2066 (a bidi control) at byte 0");
  CHECK(IsName("\xe2\x80\xa9"));  // U+2029, before U+202A
  CHECK(IsName("\xe2\x80\xaf"));  // U+202F, after U+202E
  CHECK(IsName("\xe2\x81\xa5"));  // U+2065
  CHECK(IsName("\xe2\x81\xaa"));  // U+206A
  // Not UTF-8: a stray continuation, a truncated sequence, an overlong form.
  CHECK(NameFault("ab\x80") == "not UTF-8 at byte 2");
  CHECK(NameFault("ab\xe2\x80") == "not UTF-8 at byte 2");
  CHECK(NameFault("\xc0\x80") == "not UTF-8 at byte 0");
  CHECK(NameFault("\xed\xa0\x80") == "not UTF-8 at byte 0");  // a surrogate
}

TEST_CASE("what the log holds is read by the rule it was written under", "[base]") {
  CHECK(IsName("bob\xc2\x85", NameRule::kLogged));
  CHECK(IsName("\xe2\x80\xae" "evil", NameRule::kLogged));
  CHECK(NameFault("a\tb", NameRule::kLogged) == "U+0009 (a control character) at byte 1");
  CHECK_FALSE(IsName("", NameRule::kLogged));
}

TEST_CASE("CheckName names the field, the rule and the code point", "[base]") {
  CHECK(CheckName("actor", "ok").ok());
  auto s = CheckName("percept_arrived.source", "mail\xe2\x80\xae");
  CHECK(s.IsInvalidArgument());
  CHECK(s.message() ==
        "percept_arrived.source: must be a name (1-256 bytes of UTF-8, no control or bidi-control "
        "characters); U+202E (a bidi control) at byte 4");
}

TEST_CASE("SanitizeName makes a label from elsewhere a name", "[base]") {
  CHECK(SanitizeName("Claude Desktop", '_', 200) == "Claude Desktop");
  CHECK(SanitizeName("a\tb\xc2\x85" "c\xe2\x80\xae" "d", '_', 200) == "a_b_c_d");
  CHECK(SanitizeName("x\xff", '_', 200) == "x\xef\xbf\xbd");  // invalid UTF-8: U+FFFD
  CHECK(SanitizeName("ab\xc3\xa9", '_', 3) == "ab");         // cut on a character boundary
  CHECK(IsName(SanitizeName(std::string(300, 'a') + "\x01", '_', 200)));
}

TEST_CASE("TextFault: a name's characters, longer, and line breaks when asked", "[base]") {
  CHECK(TextFault("", 10, false).empty());
  CHECK(TextFault("two words\tand a tab", 100, true).empty());
  CHECK(TextFault("a\tb", 100, false) == "U+0009 (a control character) at byte 1");
  CHECK(TextFault("line\nbreak\r\n", 100, true).empty());
  CHECK(TextFault("a\x01", 100, true) == "U+0001 (a control character) at byte 1");
  CHECK(TextFault("a\xc2\x85", 100, true) == "U+0085 (a control character) at byte 1");
  CHECK(TextFault("a\xe2\x80\xae", 100, true) == "U+202E (a bidi control) at byte 1");
  CHECK(TextFault("\xff", 100, true) == "not UTF-8 at byte 0");
  CHECK(TextFault(std::string(300, 'a'), 4096, false).empty());
  CHECK(TextFault(std::string(300, 'a'), 256, false) == "300 bytes");
}

}  // namespace name_test
