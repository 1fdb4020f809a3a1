#include "reflexes/prefilter.h"

#include <re2/re2.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <set>

// This file's own namespace: test programs compile in unity batches.
namespace prefilter_test {

using namespace limbic::reflexes;

namespace {

std::multiset<uint32_t> Found(const LiteralIndex& index, std::string_view text) {
  std::multiset<uint32_t> out;
  index.Scan(text, [&](uint32_t id) { out.insert(id); });
  return out;
}

// Whether an atom's condition lets `text` through.
bool Passes(const PatternAtoms& pa, const std::string& text) {
  if (!pa.filtered) return true;
  std::string folded = FoldForAtoms(text);
  bool any = false;
  for (size_t i = 0; i < pa.atoms.size(); ++i) {
    bool found = folded.find(pa.atoms[i]) != std::string::npos;
    if (pa.required[i] && !found) return false;
    any = any || found;
  }
  return any;
}

}  // namespace

TEST_CASE("the literal index reports every occurrence of every literal", "[reflexes]") {
  LiteralIndex index;
  const std::vector<std::string> literals = {"he",  "she",  "his", "hers", "w1",
                                             "w12", "w123", "e",   "she"};
  for (const auto& l : literals) index.Add(l);
  index.Build();
  CHECK(index.size() == literals.size());
  // Overlaps, suffixes of other literals and the duplicate ("she" twice).
  CHECK(Found(index, "ushers") == std::multiset<uint32_t>{0, 1, 3, 7, 8});
  CHECK(Found(index, "w123 w1") == std::multiset<uint32_t>{4, 5, 6, 4});
  CHECK(Found(index, "").empty());
  CHECK(Found(index, "xyz").empty());
  LiteralIndex empty;
  empty.Build();
  CHECK(Found(empty, "anything").empty());
}

TEST_CASE("the literal index agrees with find() on random literals and texts", "[reflexes]") {
  std::mt19937 rng(7);
  auto random_string = [&](size_t max_len) {
    std::string s(1 + rng() % max_len, ' ');
    for (char& c : s) c = "abcab\xc3\xa9"[rng() % 7];  // few letters, and bytes of "é"
    return s;
  };
  for (int round = 0; round < 20; ++round) {
    LiteralIndex index;
    std::vector<std::string> literals;
    for (int i = 0; i < 40; ++i) {
      literals.push_back(random_string(5));
      index.Add(literals.back());
    }
    index.Build();
    for (int t = 0; t < 50; ++t) {
      std::string text = random_string(40);
      std::multiset<uint32_t> want;
      for (uint32_t id = 0; id < literals.size(); ++id)
        for (size_t at = text.find(literals[id]); at != std::string::npos;
             at = text.find(literals[id], at + 1))
          want.insert(id);
      INFO(text);
      CHECK(Found(index, text) == want);
    }
  }
}

TEST_CASE("folding lowercases ASCII and the two runes that fold to ASCII, nothing else",
          "[reflexes]") {
  CHECK(FoldForAtoms("Hello WORLD 42") == "hello world 42");
  CHECK(FoldForAtoms("\xC5\xBF"
                     "SL") == "ssl");  // U+017F long s
  CHECK(FoldForAtoms("\xE2\x84\xAA"
                     "elvin") == "kelvin");  // U+212A Kelvin sign
  CHECK(FoldForAtoms("CAF\xC3\x89") ==
        "caf\xC3\x89");                   // É is kept: non-ASCII atoms are never looked up
  CHECK(FoldForAtoms("\xC5") == "\xC5");  // a truncated rune is kept as it is
  CHECK(FoldForAtoms("\xE2\x84") == "\xE2\x84");
}

TEST_CASE("atoms: required literals, alternations, and patterns that need none", "[reflexes]") {
  auto a = ExtractAtoms("\\bw123\\b(?P<rest>.*)");
  CHECK(a.filtered);
  CHECK(a.atoms == std::vector<std::string>{"w123"});
  CHECK(a.required == std::vector<bool>{true});

  auto both = ExtractAtoms("error.*timeout");
  CHECK(both.filtered);
  CHECK(both.required_count() == 2);

  auto either = ExtractAtoms("(?i)(crash|panic)");
  CHECK(either.filtered);
  CHECK(std::set<std::string>(either.atoms.begin(), either.atoms.end()) ==
        std::set<std::string>{"crash", "panic"});
  CHECK(either.required_count() == 0);

  // Nothing of kMinAtomLen bytes is required: a candidate for every text.
  for (const char* p : {"\\d+", ".", "^$", "a", "[a-z]{3}", "x|yz", "(?i)k"}) {
    INFO(p);
    CHECK_FALSE(ExtractAtoms(p).filtered);
  }
  // Refused by RE2: unfiltered, never a crash.
  CHECK_FALSE(ExtractAtoms("(unclosed").filtered);
  // Only a non-ASCII literal: it counts as present, so no scan can rule it out.
  CHECK_FALSE(ExtractAtoms("caf\xC3\xA9").filtered);
}

TEST_CASE("a pattern that matches a text always passes its atoms' condition", "[reflexes]") {
  // Case folding beyond ASCII: (?i)k also matches the Kelvin sign, (?i)s the
  // long s; a case-sensitive "ſ" is written "s" in the atoms.
  const std::vector<std::string> patterns = {"(?i)kelvin",
                                             "(?i)ssl",
                                             "\xC5\xBF"
                                             "sl",
                                             "(?i)caf\xC3\xA9 au lait",
                                             "error.*timeout",
                                             "(?i)(crash|panic)\\s+in\\s+(?P<where>\\w+)",
                                             "^start",
                                             "end$",
                                             "(ab|cd)(ef|gh)",
                                             "w1\\d\\d"};
  const std::vector<std::string> texts = {
      "\xE2\x84\xAA"
      "ELVIN",
      "\xC5\xBF"
      "SL",
      "\xC5\xBF"
      "sl",
      "CAF\xC3\x89 AU LAIT",
      "Caf\xC3\xA9 au lait",
      "error then timeout",
      "PANIC in main",
      "start end",
      "xcdghx",
      "w123",
      "nothing"};
  RE2::Options opts;
  opts.set_log_errors(false);
  for (const auto& p : patterns) {
    RE2 re(p, opts);
    REQUIRE(re.ok());
    PatternAtoms pa = ExtractAtoms(p);
    for (const auto& t : texts) {
      INFO(p << " on " << t);
      if (RE2::PartialMatch(t, re)) CHECK(Passes(pa, t));
    }
  }
  // The condition does rule texts out, or it would be useless.
  CHECK_FALSE(Passes(ExtractAtoms("error.*timeout"), "error only"));
  CHECK_FALSE(Passes(ExtractAtoms("(?i)kelvin"), "celsius"));
}

}  // namespace prefilter_test
