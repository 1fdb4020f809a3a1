#include "archive/text.h"

#include <catch2/catch.hpp>

// This file's own namespace: test programs compile in unity batches.
namespace text_test {

using namespace limbic::archive;

TEST_CASE("terms are lower-cased word runs without stop words", "[text]") {
  CHECK(Tokenize("The Deploy of API-v2 failed, again!") ==
        std::vector<std::string>{"deploy", "api", "v2", "failed", "again"});
  CHECK(Tokenize("").empty());
  CHECK(Tokenize("a I x").empty());  // one-letter runs are not terms
  CHECK(Tokenize(std::string(65, 'z')).empty());
  CHECK(Tokenize(std::string(64, 'z')).size() == 1);
}

TEST_CASE("non-ASCII UTF-8 is part of terms and invalid bytes split them", "[text]") {
  CHECK(Tokenize("Café crème") == std::vector<std::string>{"café", "crème"});
  CHECK(Tokenize("東京 tower") == std::vector<std::string>{"東京", "tower"});
  CHECK(Tokenize("ab\xff" "cd") == std::vector<std::string>{"ab", "cd"});
  CHECK(Tokenize("ab\xc0\xaf" "cd") == std::vector<std::string>{"ab", "cd"});  // overlong '/'
  CHECK(Tokenize("ab\xe2\x82") == std::vector<std::string>{"ab"});             // truncated
}

TEST_CASE("prefixes and snippets never cut a UTF-8 character", "[text]") {
  CHECK(Utf8Prefix("héllo", 2) == "h");
  CHECK(Utf8Prefix("héllo", 3) == "hé");
  CHECK(Utf8Prefix("hi", 10) == "hi");
  std::string text = std::string(300, 'x') + " the needle é\n\n here";
  std::string s = Snippet(text, {"needle"}, 60);
  CHECK(s.find("needle") != std::string::npos);
  CHECK(s.size() <= 60);
  CHECK(Snippet("  a \n b  ", {}, 100) == "a b");
}

}  // namespace text_test
