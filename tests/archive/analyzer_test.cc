// The analyzer (archive/analyzer.h): Snowball's published English
// examples, the token rules, stop words, languages, and sharing.
#include "archive/analyzer.h"
#include "archive/text.h"

#include <catch2/catch.hpp>
#include <atomic>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

// This file's own namespace: test programs compile in unity batches.
namespace analyzer_test {

using namespace limbic::archive;
using Terms = std::vector<std::string>;

std::shared_ptr<const Analyzer> Make(const std::string& language) {
  auto a = Analyzer::Make(language);
  REQUIRE(a.ok());
  return *a;
}

TEST_CASE("english stems as Snowball's own published examples do", "[analyzer]") {
  std::ifstream in(LIMBIC_ARCHIVE_TEST_DATA "/snowball_english.txt");
  REQUIRE(in);
  auto english = Make("english");
  const auto stop = Analyzer::StopWords();
  size_t checked = 0, stop_words = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string word, stem;
    REQUIRE(words >> word >> stem);
    // A stop word is dropped before stemming; an apostrophe splits a word.
    if (std::binary_search(stop.begin(), stop.end(), word)) {
      CHECK(english->Terms(word).empty());
      ++stop_words;
      continue;
    }
    if (word.find('\'') != std::string::npos) continue;
    INFO(word);
    CHECK(english->Terms(word) == Terms{stem});
    ++checked;
  }
  CHECK(checked > 700);
  CHECK(stop_words > 0);
}

TEST_CASE("the analyzer drops stop words and stems what is left", "[analyzer]") {
  auto english = Make("english");
  CHECK(english->Terms("The dogs were running to the parks!") == Terms{"dog", "run", "park"});
  CHECK(english->Terms("Maya's bikes") == Terms{"maya", "bike"});  // "s" is a stop word
  CHECK(english->Terms("I don't know") == Terms{"know"});
  CHECK(english->id() == "english/1");
  auto none = Make("none");
  CHECK(none->Terms("The dogs were running") == Terms{"dogs", "running"});
  CHECK(none->id() == "none/1");
  CHECK(Analyzer::Default()->language() == "english");
  // Other languages stem, without a stop list.
  CHECK(Make("french")->Terms("les chevaux") == Terms{"le", "cheval"});
}

TEST_CASE("tokens: case, apostrophes, punctuation and invalid UTF-8", "[analyzer]") {
  auto none = Make("none");
  CHECK(none->Terms("ÉCOLE Straße ÀÖ") == Terms{"école", "straße", "àö"});
  CHECK(none->Terms("ΑΘΗΝΑ МОСКВА Ёж") == Terms{"αθηνα", "москва", "ёж"});
  CHECK(none->Terms("ŁÓDŹ") == Terms{"łódź"});
  CHECK(none->Terms("Maya’s café—bar…") == Terms{"maya", "café", "bar"});
  CHECK(none->Terms("«quoted» 5 × 3 🎉party") == Terms{"quoted", "5", "3", "party"});
  CHECK(none->Terms("東京 tower") == Terms{"東京", "tower"});
  CHECK(none->Terms("ab\xff" "cd") == Terms{"ab", "cd"});
  CHECK(none->Terms("ab\xc0\xaf" "cd") == Terms{"ab", "cd"});  // overlong '/'
  CHECK(none->Terms("ab\xe2\x82") == Terms{"ab"});             // truncated
  CHECK(none->Terms(std::string(65, 'z')).empty());
  CHECK(none->Terms(std::string(64, 'z')) == Terms{std::string(64, 'z')});
  CHECK(none->Terms("x 7 b").size() == 3);  // one-letter words are terms
  CHECK(none->Terms("").empty());
}

TEST_CASE("the stop words are sorted, and an unknown language is refused by name",
          "[analyzer]") {
  const auto stop = Analyzer::StopWords();
  CHECK(std::is_sorted(stop.begin(), stop.end()));
  CHECK(std::adjacent_find(stop.begin(), stop.end()) == stop.end());
  auto bad = Analyzer::Make("klingon");
  REQUIRE(!bad.ok());
  CHECK(bad.status().IsInvalidArgument());
  CHECK(bad.status().message().find("\"klingon\"") != std::string::npos);
  CHECK(bad.status().message().find("english") != std::string::npos);
  CHECK(!Analyzer::Make("").ok());
  const auto langs = Analyzer::Languages();
  for (const char* l : {"none", "english", "french", "german", "spanish"})
    CHECK(std::find(langs.begin(), langs.end(), l) != langs.end());
}

TEST_CASE("any bytes give terms of valid UTF-8, 1..64 bytes, without separators",
          "[analyzer]") {
  std::mt19937_64 rng(40);
  // Bytes that make words, separators, UTF-8 lead and continuation bytes.
  const std::string alphabet = std::string("aZ9 '.\n") + "\xc3\xa9\xe2\x80\x99\xf0\x9f\x8e\x89\xff\xc0\x80";
  for (const char* language : {"english", "none", "german"}) {
    auto a = Make(language);
    for (int i = 0; i < 3000; ++i) {
      std::string text;
      const size_t n = rng() % 200;
      for (size_t j = 0; j < n; ++j)
        text.push_back(rng() % 4 ? alphabet[rng() % alphabet.size()] : static_cast<char>(rng()));
      for (const std::string& t : a->Terms(text)) {
        INFO(language << ": " << t);
        REQUIRE(!t.empty());
        REQUIRE(t.size() <= 64);
        for (size_t k = 0; k < t.size();) {
          const auto c = static_cast<unsigned char>(t[k]);
          REQUIRE(c != ' ');
          REQUIRE(c != '\'');
          if (c < 0x80) {
            ++k;
            continue;
          }
          const size_t len = limbic::archive::detail::Utf8SeqLen(t, k);
          REQUIRE(len > 0);
          k += len;
        }
      }
    }
  }
}

TEST_CASE("one analyzer serves several threads", "[analyzer]") {
  auto english = Make("english");
  const std::string text = "Running runners ran; the swimmers were swimming happily.";
  const Terms want = english->Terms(text);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i)
        if (english->Terms(text) != want) ++wrong;
    });
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
}

}  // namespace analyzer_test
