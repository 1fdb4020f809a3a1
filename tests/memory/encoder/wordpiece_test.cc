// Tests of memory/encoder/wordpiece.h: BERT's own test cases
// (google-research/bert tokenization_test.py), the edges of each rule, and
// a cross-check of random text against reference_tokenizer.py (an
// independent Python implementation). Loading: wordpiece_files_test.cc.
#include "memory/encoder/wordpiece.h"
#include "state/test_util.h"
#include "wordpiece_util.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

// This file's own namespace: test programs compile in unity batches.
namespace wordpiece_test {

using namespace wordpiece_util;


TEST_CASE("basic tokenization lower-cases and splits on whitespace and punctuation") {
  CHECK(Words(" \tHeLLo!how  \n Are yoU?  ") == Strings{"hello", "!", "how", "are", "you", "?"});
  CHECK(Words("H\u00E9llo") == Strings{"hello"});
  CHECK(Words(" \tHeLLo!how  \n Are yoU?  ", NoLower()) ==
        Strings{"HeLLo", "!", "how", "Are", "yoU", "?"});
}

TEST_CASE("accents are stripped with lower case unless strip_accents says otherwise") {
  CHECK(Words("H\u00E4llo") == Strings{"hallo"});
  CHECK(Words("H\u00E4llo", NoLower()) == Strings{"H\u00E4llo"});
  WordPieceOptions keep;
  keep.strip_accents = false;
  CHECK(Words("H\u00C4llo", keep) == Strings{"h\u00E4llo"});
  WordPieceOptions strip_only = NoLower();
  strip_only.strip_accents = true;
  CHECK(Words("H\u00C4llo", strip_only) == Strings{"HAllo"});
  // A decomposed accent (e + U+0301) goes the same way; kept without lower case.
  CHECK(Words("Cafe\u0301") == Strings{"cafe"});
  CHECK(Words("Cafe\u0301", NoLower()) == Strings{"Cafe\u0301"});
  // U+0130 lower-cases to i + U+0307 (full mapping), which strip then removes.
  CHECK(Words("\u0130stanbul", keep) == Strings{"i\u0307stanbul"});
  CHECK(Words("\u0130stanbul") == Strings{"istanbul"});
  // No final-sigma rule: each code point is lower-cased alone, as HF does.
  CHECK(Words("\u039F\u0394\u039F\u03A3") == Strings{"\u03BF\u03B4\u03BF\u03C3"});
  // NFD can make punctuation: U+1FEF GREEK VARIA is "`" once decomposed.
  CHECK(Words("a\u1FEFb") == Strings{"a", "`", "b"});
  CHECK(Words("a\u1FEFb", NoLower()) == Strings{"a\u1FEFb"});
  // NFD orders marks by combining class (U+1D16D is 226, U+1D165 216; both
  // Mc, kept), but not across a class-0 mark (U+034F, Mn: then dropped).
  CHECK(Words("x\U0001D16D\U0001D165") == Strings{"x\U0001D165\U0001D16D"});
  CHECK(Words("x\U0001D16D\u034F\U0001D165") == Strings{"x\U0001D16D\U0001D165"});
  CHECK(Words("x\U0001D16D\U0001D165", NoLower()) == Strings{"x\U0001D16D\U0001D165"});
  // Hangul syllables decompose to jamo, which are letters (Lo), kept.
  CHECK(Words("\uD55C") == Strings{"\u1112\u1161\u11AB"});
}

TEST_CASE("a run of 100k combining marks is ordered as NFD orders it, in one pass") {
  // Classes 226 then 216 (Mc, kept): NFD puts every 216 first. An
  // insertion sort took 2.5e9 swaps here (minutes for a 1 MB text).
  std::string marks = "x", sorted = "x";
  for (int i = 0; i < 50000; ++i) marks += "\U0001D16D";
  for (int i = 0; i < 50000; ++i) marks += "\U0001D165";
  for (int i = 0; i < 50000; ++i) sorted += "\U0001D165";
  for (int i = 0; i < 50000; ++i) sorted += "\U0001D16D";
  CHECK(Words(marks) == Strings{sorted});
  // Nonspacing marks (230, then 220) are ordered, then dropped.
  std::string acute = "a";
  for (int i = 0; i < 50000; ++i) acute += "\u0301";
  for (int i = 0; i < 50000; ++i) acute += "\u0316";
  CHECK(Words(acute + " b") == Strings{"a", "b"});
  // A class-0 mark still ends a run: the marks either side are not reordered.
  CHECK(Words("x\U0001D16D\U0001D16D\u034F\U0001D165y") ==
        Strings{"x\U0001D16D\U0001D16D\U0001D165y"});
}

TEST_CASE("CJK ideographs are words of their own") {
  CHECK(Words("ah\u535A\u63A8zz") == Strings{"ah", "\u535A", "\u63A8", "zz"});
  // A compatibility ideograph is one too, and NFD gives its unified form.
  CHECK(Words("a\uF900b") == Strings{"a", "\u8C48", "b"});
  // BERT's Extension E range starts at U+2B820 (HF's at U+2B920: see the header).
  CHECK(Words("a\U0002B820b\U0002B81Dc") == Strings{"a", "\U0002B820", "b", "\U0002B81D", "c"});
  CHECK(Words("a\U0002CEB0b") == Strings{"a\U0002CEB0b"});  // Extension F: not in the ranges
  // Hiragana is not in the ranges: it stays in the word.
  CHECK(Words("a\u3042b") == Strings{"a\u3042b"});
  WordPieceOptions joined;
  joined.chinese_chars = false;
  CHECK(Words("ah\u535A\u63A8zz", joined) == Strings{"ah\u535A\u63A8zz"});
}

TEST_CASE("control characters are dropped and every kind of space splits") {
  CHECK(Words("a\u0005b") == Strings{"ab"});
  CHECK(Words(std::string("a\0b", 3)) == Strings{"ab"});
  CHECK(Words("a\x7f"
              "b\x0b"
              "c\x0c"
              "d") == Strings{"abcd"});
  CHECK(Words("a\u200Bb\uFEFFc\u00ADd") ==
        Strings{"abcd"});                     // Cf: zero-width space, BOM, soft hyphen
  CHECK(Words("a\uE000b") == Strings{"ab"});  // Co: private use
  CHECK(Words("a\u0378b") == Strings{"ab"});  // Cn: unassigned
  CHECK(Words("a\u00A0b\u3000c\u2028d\u2029e\u2003f\tg\rh\ni") ==
        Strings{"a", "b", "c", "d", "e", "f", "g", "h", "i"});
  WordPieceOptions raw;
  raw.clean_text = false;
  CHECK(Words("a\u0005b c", raw) == Strings{"a\u0005b", "c"});
}

TEST_CASE("invalid UTF-8 is dropped, never an error") {
  CHECK(Words("a\xff"
              "b") == Strings{"ab"});
  CHECK(Words("a\xc3") == Strings{"a"});             // truncated at the end
  CHECK(Words("a\xe2\x82 b") == Strings{"a", "b"});  // truncated inside
  CHECK(Words("a\xed\xa0\x80"
              "b") == Strings{"ab"});  // a surrogate
  CHECK(Words("a\xc0\xaf"
              "b") == Strings{"ab"});  // overlong "/"
  CHECK(Words("a\xf4\x90\x80\x80"
              "b") == Strings{"ab"});  // beyond U+10FFFF
  CHECK(Words("\x80\x80\x80") == Strings{});
  CHECK(Words("\xef\xbf\xbd") == Strings{});  // U+FFFD itself
}

TEST_CASE("punctuation is ASCII's non-alphanumerics and Unicode P*") {
  CHECK(Words("$+^`|~<=>") == Strings{"$", "+", "^", "`", "|", "~", "<", "=", ">"});
  CHECK(Words("\u00BFQu\u00E9?") == Strings{"\u00BF", "que", "?"});
  CHECK(Words("a\u2014b") == Strings{"a", "\u2014", "b"});
  CHECK(Words("\u4F60\u597D\u3002") == Strings{"\u4F60", "\u597D", "\u3002"});
  CHECK(Words("\uFF48\uFF49\uFF01") == Strings{"\uFF48\uFF49", "\uFF01"});  // full-width
  CHECK(Words("\u00AB\u201Cx\u201D\u00BB") == Strings{"\u00AB", "\u201C", "x", "\u201D", "\u00BB"});
}

TEST_CASE("symbols and emoji are not punctuation: they stay in the word") {
  CHECK(Words("I \u2764 \U0001F600!") == Strings{"i", "\u2764", "\U0001F600", "!"});
  CHECK(Words("a\U0001F600b") == Strings{"a\U0001F600b"});
  CHECK(Words("5\u20AC \u00A9") == Strings{"5\u20AC", "\u00A9"});
  CHECK(Make().Tokenize("want\U0001F600 want") == Strings{"[UNK]", "want"});
}

TEST_CASE("WordPiece is greedy longest-match-first, [UNK] for a word that does not split") {
  WordPiece wp = Make();
  CHECK(wp.Tokenize("") == Strings{});
  CHECK(wp.Tokenize("unwanted running") == Strings{"un", "##want", "##ed", "runn", "##ing"});
  CHECK(wp.Tokenize("unwantedX running") == Strings{"[UNK]", "runn", "##ing"});
  CHECK(wp.Tokenize("UNwant\u00E9d,running") ==
        Strings{"un", "##want", "##ed", ",", "runn", "##ing"});
  CHECK(wp.Encode("UNwant\u00E9d,running") == Ids{1, 7, 4, 5, 10, 8, 9, 2});
  CHECK(wp.Id("##want") == 4);
  CHECK(wp.Id("nope") == -1);
  // Longest first: "wa" would match, "want" is longer.
  CHECK(wp.Tokenize("want wa") == Strings{"want", "wa"});
}

TEST_CASE("an empty text, or one of nothing kept, is [CLS] [SEP]") {
  WordPiece wp = Make();
  for (std::string_view text : {std::string_view(""), std::string_view(" \t\n"),
                                std::string_view("\x01\x02\xff", 3), std::string_view("\0", 1)})
    CHECK(wp.Encode(text) == Ids{1, 2});
}

TEST_CASE("a word over max_chars_per_word code points is [UNK]") {
  WordPiece wp = Make({"[UNK]", "[CLS]", "[SEP]", "\u00E9", "##\u00E9"}, NoLower());
  std::string word;
  for (int i = 0; i < 100; ++i) word += "\u00E9";  // 200 bytes, 100 code points
  CHECK(wp.Tokenize(word).size() == 100);
  CHECK(wp.Tokenize(word + "\u00E9") == Strings{"[UNK]"});
  CHECK(wp.Tokenize(word + "\u00E9 \u00E9") == Strings{"[UNK]", "\u00E9"});
}

TEST_CASE("Encode cuts the pieces so the whole is at most max_length") {
  WordPieceOptions o;
  o.max_length = 6;
  WordPiece wp = Make(BertVocab(), o);
  CHECK(wp.Encode("want want want want") == Ids{1, 3, 3, 3, 3, 2});       // exactly
  CHECK(wp.Encode("want want want want want") == Ids{1, 3, 3, 3, 3, 2});  // one over
  CHECK(wp.Encode("want unwanted") == Ids{1, 3, 7, 4, 5, 2});             // cut in a word
  CHECK(wp.Encode("want want unwanted") == Ids{1, 3, 3, 7, 4, 2});
  o.max_length = 2;
  CHECK(Make(BertVocab(), o).Encode("want want") == Ids{1, 2});
  o.max_length = 1;
  auto refused = WordPiece::FromVocab(BertVocab(), o);
  REQUIRE(!refused.ok());
  CHECK(refused.status().IsInvalidArgument());
}

TEST_CASE("a huge text encodes, truncated, and the next text is unaffected") {
  WordPiece wp = Make();
  std::string huge;
  for (int i = 0; i < 100000; ++i) huge += i % 2 ? "want " : "unwant\u00e9d ";
  const Ids ids = wp.Encode(huge);
  CHECK(ids.size() == 512);
  CHECK(ids[1] == 7);
  CHECK(wp.Tokenize(huge).size() == 200000);
  CHECK(wp.Encode("unwanted running") == Ids{1, 7, 4, 5, 8, 9, 2});
}

namespace {

// Code points for random text, in classes. All were assigned before Unicode
// 13 and have the same properties in Python's unicodedata and utf8proc (a
// run over every code point up to U+3FFFF differed only on those assigned
// in Unicode 15, which Python 3.11's 14.0 calls unassigned).
struct Pool {
  std::vector<std::pair<int32_t, int32_t>> ranges;
  int weight;
};

std::vector<Pool> Pools() {
  return {
      {{{'a', 'z'}, {'A', 'Z'}, {'0', '9'}}, 40},
      {{{' ', ' '}}, 14},
      {{{'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}}, 6},
      {{{'\t', '\n'},
        {'\r', '\r'},
        {0xA0, 0xA0},
        {0x2003, 0x2003},
        {0x3000, 0x3000},
        {0x2028, 0x2029}},
       3},
      {{{0x00, 0x08},
        {0x0B, 0x0C},
        {0x1F, 0x1F},
        {0x7F, 0x85},
        {0xAD, 0xAD},
        {0x200B, 0x200F},
        {0xFEFF, 0xFEFF},
        {0xE000, 0xE002},
        {0x0378, 0x0379},
        {0xFFFD, 0xFFFD}},
       2},
      {{{0xC0, 0xFF}, {0x100, 0x17F}, {0x130, 0x131}, {0x1E9E, 0x1E9E}}, 10},
      {{{0x391, 0x3A9}, {0x3AC, 0x3CE}, {0x386, 0x38A}, {0x400, 0x45F}}, 6},
      {{{0x300, 0x36F}, {0x591, 0x5AF}, {0x1D165, 0x1D16D}, {0x93C, 0x94D}}, 4},
      {{{0x4E00, 0x4E3F},
        {0x3400, 0x3405},
        {0xF900, 0xF905},
        {0x20000, 0x20003},
        {0x3041, 0x3060},
        {0xAC00, 0xAC10},
        {0x2F800, 0x2F802}},
       5},
      {{{0xA1, 0xBF},
        {0x2010, 0x2027},
        {0x3001, 0x3003},
        {0xFF01, 0xFF0F},
        {0x037E, 0x037E},
        {0x0387, 0x0387},
        {0x1FEF, 0x1FEF},
        {0x1FED, 0x1FEE}},
       5},
      {{{0x1F600, 0x1F60F},
        {0x2764, 0x2764},
        {0x1F3FB, 0x1F3FC},
        {0x200D, 0x200D},
        {0xFE0F, 0xFE0F},
        {0x20AC, 0x20AC},
        {0x2122, 0x2122},
        {0x212A, 0x212B},
        {0x2126, 0x2126}},
       3},
  };
}

void AppendUtf8(int32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

class RandomText {
 public:
  explicit RandomText(uint64_t seed) : rng_(seed), pools_(Pools()) {
    std::vector<int> weights;
    for (const Pool& p : pools_) weights.push_back(p.weight);
    pick_pool_ = std::discrete_distribution<size_t>(weights.begin(), weights.end());
  }
  // A code point; *pool says which (0-based in Pools()).
  int32_t CodePoint(size_t* pool_index = nullptr) {
    const size_t index = pick_pool_(rng_);
    if (pool_index) *pool_index = index;
    const Pool& pool = pools_[index];
    const auto& [lo, hi] = pool.ranges[rng_() % pool.ranges.size()];
    return lo + static_cast<int32_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  std::string Text(size_t max_chars) {
    std::string s;
    const size_t n = rng_() % (max_chars + 1);
    for (size_t i = 0; i < n; ++i) AppendUtf8(CodePoint(), &s);
    return s;
  }
  uint64_t Next() { return rng_(); }

 private:
  std::mt19937_64 rng_;
  std::vector<Pool> pools_;
  std::discrete_distribution<size_t> pick_pool_;
};

// A vocabulary for random text: the special tokens, most single code points
// of the pools (alone and with "##"; the rest give [UNK]), and random
// pieces of two to four of them, so that greedy matching has choices.
Strings RandomVocab(RandomText* random) {
  Strings vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "##s", "##ing", "un", "##want"};
  std::set<std::string> seen(vocab.begin(), vocab.end());
  auto add = [&](const std::string& piece) {
    if (!piece.empty() && seen.insert(piece).second) vocab.push_back(piece);
  };
  for (int i = 0; i < 4000; ++i) {
    std::string piece;
    const int n = i < 3000 ? 1 : 2 + static_cast<int>(random->Next() % 3);
    for (int k = 0; k < n; ++k) {
      size_t pool = 0;
      int32_t c = random->CodePoint(&pool);
      while (pool == 1 || pool == 3 || pool == 4)
        c = random->CodePoint(&pool);  // no spaces, controls
      if (c >= 'A' && c <= 'Z' && random->Next() % 2) c += 'a' - 'A';
      AppendUtf8(c, &piece);
    }
    if (random->Next() % 8 == 0) continue;
    add(random->Next() % 2 ? piece : "##" + piece);
  }
  return vocab;
}

// reference_tokenizer.py's answer for `texts` (ids), with `flags`.
json Reference(const std::string& vocab_path, const Strings& texts, const std::string& flags,
               const TempDir& dir) {
  WriteFile(dir / "texts.json", json(texts).dump());
  const std::string cmd = std::string("/usr/bin/python3 ") + LIMBIC_ENCODER_TEST_DIR +
                          "/reference_tokenizer.py tokenize " + vocab_path + " " + flags + " < " +
                          (dir / "texts.json") + " > " + (dir / "out.json");
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
  return json::parse(ReadFile(dir / "out.json"));
}

}  // namespace

TEST_CASE("random text: the same ids as reference_tokenizer.py") {
  TempDir dir;
  RandomText random(20240611);
  const Strings vocab = RandomVocab(&random);
  std::string vocab_txt;
  for (const std::string& piece : vocab) vocab_txt += piece + "\n";
  WriteFile(dir / "vocab.txt", vocab_txt);

  Strings texts = {"", "unwanted running", "Hello, World! \u00BFQu\u00E9 tal?"};
  for (int i = 0; i < 600; ++i) texts.push_back(random.Text(i % 10 == 0 ? 200 : 40));

  struct Mode {
    const char* flags;
    WordPieceOptions options;
  };
  WordPieceOptions lower, keep_case, no_strip, short_max;
  keep_case.lower_case = false;
  no_strip.strip_accents = false;
  short_max.max_length = 12;
  for (const Mode& mode :
       {Mode{"", lower}, Mode{"--no-lower", keep_case}, Mode{"--strip-accents no", no_strip},
        Mode{"--max-length 12", short_max}}) {
    auto wp = WordPiece::FromVocabFile(dir / "vocab.txt", "", mode.options);
    INFO(wp.status().ToString());
    REQUIRE(wp.ok());
    const json expected = Reference(dir / "vocab.txt", texts, mode.flags, dir);
    REQUIRE(expected.size() == texts.size());
    size_t unk = 0, pieces = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      const Ids ids = wp->Encode(texts[i]);
      INFO("mode '" << mode.flags << "', text " << i << ": " << json(texts[i]).dump());
      REQUIRE(ids == expected[i].get<Ids>());
      pieces += ids.size() - 2;
      unk += static_cast<size_t>(std::count(ids.begin(), ids.end(), wp->Id("[UNK]")));
    }
    // The vocabulary is meant to split most words: a check the test tests something.
    CHECK(unk * 3 < pieces);
  }
}

}  // namespace wordpiece_test
