// Tests of memory/encoder/wordpiece.h: BERT's own test cases
// (google-research/bert tokenization_test.py), the edges of each rule,
// loading and its refusals, and a cross-check of random text against
// reference_tokenizer.py (an independent Python implementation).
#include "memory/encoder/wordpiece.h"
#include "state/test_util.h"

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

using namespace limbic;
using namespace limbic::memory::encoder;
using Strings = std::vector<std::string>;
using Ids = std::vector<int32_t>;
using nlohmann::json;

namespace {

using TempDir = limbic::testing::ScratchDir;

void WriteFile(const std::string& path, std::string_view text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// BERT's test vocabulary (tokenization_test.py).
Strings BertVocab() {
  return {"[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un", "runn", "##ing", ","};
}

WordPiece Make(Strings vocab = BertVocab(), WordPieceOptions options = {}) {
  auto wp = WordPiece::FromVocab(std::move(vocab), std::move(options));
  INFO(wp.status().ToString());
  REQUIRE(wp.ok());
  return std::move(wp).value();
}

WordPieceOptions NoLower() {
  WordPieceOptions o;
  o.lower_case = false;
  return o;
}

Strings Words(std::string_view text, WordPieceOptions options = {}) {
  return Make(BertVocab(), std::move(options)).BasicTokens(text);
}

// A tokenizer.json as HF writes it for BERT models (all-MiniLM-L6-v2's
// shape), over `vocab`; `patch` is merged into it (null deletes a key).
std::string TokenizerJson(const Strings& vocab, const json& patch = json::object()) {
  json v = json::object();
  for (size_t i = 0; i < vocab.size(); ++i) v[vocab[i]] = i;
  auto id = [&](const char* token) { return v.contains(token) ? v[token] : json(0); };
  json j = {
      {"version", "1.0"},
      {"truncation", {{"direction", "Right"}, {"max_length", 128}, {"strategy", "LongestFirst"}}},
      {"padding", nullptr},
      {"added_tokens", json::array()},
      {"normalizer",
       {{"type", "BertNormalizer"},
        {"clean_text", true},
        {"handle_chinese_chars", true},
        {"strip_accents", nullptr},
        {"lowercase", true}}},
      {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single", json::parse(R"([{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                                   {"Sequence": {"id": "A", "type_id": 0}},
                                   {"SpecialToken": {"id": "[SEP]", "type_id": 0}}])")},
        {"special_tokens",
         {{"[CLS]", {{"id", "[CLS]"}, {"ids", {id("[CLS]")}}, {"tokens", {"[CLS]"}}}},
          {"[SEP]", {{"id", "[SEP]"}, {"ids", {id("[SEP]")}}, {"tokens", {"[SEP]"}}}}}}}},
      {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
      {"model",
       {{"type", "WordPiece"},
        {"unk_token", "[UNK]"},
        {"continuing_subword_prefix", "##"},
        {"max_input_chars_per_word", 100},
        {"vocab", v}}}};
  j.merge_patch(patch);
  return j.dump();
}

// The refusal of tokenizer.json text `text`, as "code: message".
std::string Refusal(std::string_view text) {
  auto wp = WordPiece::FromTokenizerJsonText(text, "tokenizer.json", {});
  return wp.ok() ? "loaded" : wp.status().ToString();
}

}  // namespace

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

TEST_CASE("FromVocab refuses a vocabulary without its special tokens or with repeats") {
  auto no_unk = WordPiece::FromVocab({"[CLS]", "[SEP]", "a"}, {});
  REQUIRE(!no_unk.ok());
  CHECK(no_unk.status().message() == R"(the vocabulary has no "[UNK]" (the unknown token))");
  auto repeated = WordPiece::FromVocab({"[UNK]", "[CLS]", "[SEP]", "a", "b", "a"}, {});
  REQUIRE(!repeated.ok());
  CHECK(repeated.status().message() == R"(piece "a" at id 5 repeats id 3)");
  CHECK(!WordPiece::FromVocab({}, {}).ok());
  WordPieceOptions o;
  o.unk = "<unk>";
  CHECK(!WordPiece::FromVocab(BertVocab(), o).ok());
}

TEST_CASE("FromVocabFile reads vocab.txt and tokenizer_config.json") {
  TempDir dir;
  // CRLF line ends; a blank line is the piece "" and keeps its id slot.
  WriteFile(dir / "vocab.txt",
            "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\n\r\nhello\r\n##s\r\nH\u00E9llo");
  auto wp = WordPiece::FromVocabFile(dir / "vocab.txt", "", {});
  INFO(wp.status().ToString());
  REQUIRE(wp.ok());
  CHECK(wp->vocab_size() == 8);
  CHECK(wp->Id("") == 4);
  CHECK(wp->Encode("Hellos") == Ids{2, 5, 6, 3});

  WriteFile(dir / "tokenizer_config.json", R"({
    "do_lower_case": false, "strip_accents": null, "tokenize_chinese_chars": true,
    "unk_token": {"__type": "AddedToken", "content": "[UNK]", "lstrip": false},
    "cls_token": "[CLS]", "sep_token": "[SEP]", "model_max_length": 3,
    "tokenizer_class": "BertTokenizer"})");
  wp = WordPiece::FromVocabFile(dir / "vocab.txt", dir / "tokenizer_config.json", {});
  INFO(wp.status().ToString());
  REQUIRE(wp.ok());
  CHECK(!wp->options().lower_case);
  CHECK(wp->options().max_length == 3);
  CHECK(wp->Encode("H\u00E9llo hello") == Ids{2, 7, 3});

  // model_max_length 1e30 (HF's "no limit") leaves max_length as it was.
  WriteFile(dir / "tokenizer_config.json", R"({"model_max_length": 1e30})");
  wp = WordPiece::FromVocabFile(dir / "vocab.txt", dir / "tokenizer_config.json", {});
  REQUIRE(wp.ok());
  CHECK(wp->options().max_length == 512);
}

TEST_CASE("FromVocabFile's refusals name the file, and the line or key") {
  TempDir dir;
  const std::string vocab = dir / "vocab.txt", config = dir / "tokenizer_config.json";
  auto refusal = [&](const std::string& config_path) {
    auto wp = WordPiece::FromVocabFile(vocab, config_path, {});
    return wp.ok() ? std::string("loaded") : wp.status().ToString();
  };
  CHECK(refusal("") == "not_found: " + vocab + ": no such file");
  WriteFile(vocab, "[CLS]\n[SEP]\nhello\n");
  CHECK(refusal("") ==
        "invalid_argument: " + vocab + R"(: the vocabulary has no "[UNK]" (the unknown token))");
  WriteFile(vocab, "[UNK]\n[CLS]\n[SEP]\nhello\nhello\n");
  CHECK(refusal("") ==
        "invalid_argument: " + vocab + R"(: piece "hello" at line 5 repeats line 4)");
  WriteFile(vocab, "[UNK]\n[CLS]\n[SEP]\n");
  CHECK(refusal(config) == "not_found: " + config + ": no such file");
  WriteFile(config, "{\"do_lower_case\": ");
  CHECK(refusal(config).starts_with("invalid_argument: " + config + ": malformed JSON"));
  WriteFile(config, R"({"do_lower_case": "yes"})");
  CHECK(refusal(config) ==
        "invalid_argument: " + config + ": do_lower_case: is string, not a boolean");
  WriteFile(config, R"({"cls_token": {"content": 5}})");
  CHECK(refusal(config) ==
        "invalid_argument: " + config + ": cls_token.content: is number, not a string");
  WriteFile(config, R"({"model_max_length": 1})");
  CHECK(refusal(config) ==
        "invalid_argument: " + config + ": model_max_length: 1 is below 2 ([CLS] and [SEP])");
  WriteFile(config, "[1, 2]");
  CHECK(refusal(config) == "invalid_argument: " + config + ": not a JSON object");
  // Larger than kMaxTokenizerBytes (a sparse file: nothing is written).
  WriteFile(config, "");
  std::filesystem::resize_file(config, kMaxTokenizerBytes + 1);
  CHECK(refusal(config) == "invalid_argument: " + config +
                               ": larger than 67108864 bytes, the most a tokenizer file may have");
}

TEST_CASE("FromTokenizerJson reads an HF tokenizer.json") {
  TempDir dir;
  const Strings vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "##s", "H\u00E9llo", "w"};
  WriteFile(dir / "tokenizer.json", TokenizerJson(vocab));
  auto wp = WordPiece::FromTokenizerJson(dir / "tokenizer.json", {});
  INFO(wp.status().ToString());
  REQUIRE(wp.ok());
  CHECK(wp->vocab_size() == vocab.size());
  CHECK(wp->options().max_length == 128);
  CHECK(wp->options().lower_case);
  CHECK(wp->Encode("H\u00E9llos w") == Ids{2, 4, 5, 7, 3});

  // A Sequence holding the normalizer, BertProcessing, other special tokens,
  // no truncation; lowercase off (and strip_accents null follows it).
  const Strings other = {"<unk>", "<s>", "</s>", "hello", "H\u00E9llo"};
  const std::string text =
      TokenizerJson(other, {{"normalizer",
                             {{"type", "Sequence"},
                              {"normalizers", {{{"type", "BertNormalizer"}, {"lowercase", false}}}},
                              {"clean_text", nullptr},
                              {"handle_chinese_chars", nullptr},
                              {"strip_accents", nullptr},
                              {"lowercase", nullptr}}},
                            {"post_processor",
                             {{"type", "BertProcessing"},
                              {"cls", {"<s>", 1}},
                              {"sep", {"</s>", 2}},
                              {"single", nullptr},
                              {"special_tokens", nullptr}}},
                            {"truncation", nullptr},
                            {"model", {{"unk_token", "<unk>"}}}});
  wp = WordPiece::FromTokenizerJsonText(text, "t.json", {});
  INFO(wp.status().ToString());
  REQUIRE(wp.ok());
  CHECK(!wp->options().lower_case);
  CHECK(wp->options().max_length == 512);
  CHECK(wp->Encode("H\u00E9llo hello Hello") == Ids{1, 4, 3, 0, 2});

  // No normalizer: nothing cleaned, lowered or stripped.
  wp = WordPiece::FromTokenizerJsonText(TokenizerJson(vocab, {{"normalizer", nullptr}}), "t", {});
  REQUIRE(wp.ok());
  CHECK(!wp->options().clean_text);
  CHECK(wp->Encode("H\u00E9llo hello") == Ids{2, 6, 4, 3});
}

TEST_CASE("FromTokenizerJson's refusals name the file and the key") {
  const Strings vocab = {"[UNK]", "[CLS]", "[SEP]", "foo", "bar"};
  auto missing = WordPiece::FromTokenizerJson("/nonexistent/tokenizer.json", {});
  REQUIRE(!missing.ok());
  CHECK(missing.status().ToString() == "not_found: /nonexistent/tokenizer.json: no such file");
  CHECK(Refusal("{\"model\": ").starts_with("invalid_argument: tokenizer.json: malformed JSON"));
  CHECK(Refusal("").starts_with("invalid_argument: tokenizer.json: malformed JSON"));
  CHECK(Refusal("[]") == "invalid_argument: tokenizer.json: not a JSON object");
  CHECK(Refusal(TokenizerJson(vocab, {{"model", {{"type", "BPE"}}}})) ==
        R"(invalid_argument: tokenizer.json: model.type: "BPE" is not WordPiece)");
  CHECK(
      Refusal(
          R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 3}}})") ==
      R"(invalid_argument: tokenizer.json: model.vocab["[SEP]"]: id 3 leaves a gap (the ids of 3 pieces are 0..2))");
  CHECK(
      Refusal(
          R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 1}}})") ==
      R"(invalid_argument: tokenizer.json: model.vocab["[SEP]"]: id 1 repeated ("[CLS]" has it too))");
  CHECK(
      Refusal(R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": -1}}})") ==
      R"(invalid_argument: tokenizer.json: model.vocab["[CLS]"]: is number, not a non-negative integer)");
  CHECK(
      Refusal(R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": "0"}}})") ==
      R"(invalid_argument: tokenizer.json: model.vocab["[UNK]"]: is string, not a non-negative integer)");
  CHECK(Refusal(R"({"model": {"type": "WordPiece", "vocab": []}})") ==
        "invalid_argument: tokenizer.json: model.vocab: is array, not an object");
  CHECK(Refusal(TokenizerJson({"[CLS]", "[SEP]", "foo"})) ==
        R"(invalid_argument: tokenizer.json: the vocabulary has no "[UNK]" (the unknown token))");
  CHECK(Refusal(TokenizerJson(vocab, {{"normalizer", {{"lowercase", "yes"}}}})) ==
        "invalid_argument: tokenizer.json: normalizer.lowercase: is string, not a boolean");
  CHECK(
      Refusal(TokenizerJson(vocab, {{"normalizer", {{"type", "NFKC"}}}})) ==
      R"(invalid_argument: tokenizer.json: normalizer.type: "NFKC" is not supported (only BertNormalizer))");
  CHECK(
      Refusal(TokenizerJson(vocab, {{"pre_tokenizer", {{"type", "Whitespace"}}}})) ==
      R"(invalid_argument: tokenizer.json: pre_tokenizer.type: "Whitespace" is not supported (only BertPreTokenizer))");
  CHECK(
      Refusal(TokenizerJson(vocab, {{"post_processor", {{"type", "RobertaProcessing"}}}})) ==
      R"(invalid_argument: tokenizer.json: post_processor.type: "RobertaProcessing" is not supported (only TemplateProcessing, BertProcessing))");
  CHECK(
      Refusal(TokenizerJson(
          vocab, {{"post_processor", {{"special_tokens", {{"[CLS]", {{"ids", {7}}}}}}}}})) ==
      R"(invalid_argument: tokenizer.json: post_processor.special_tokens["[CLS]"].ids: 7 is not "[CLS]"'s id 1 in model.vocab)");
  CHECK(Refusal(TokenizerJson(vocab, {{"truncation", {{"max_length", 1}}}})) ==
        "invalid_argument: tokenizer.json: truncation.max_length: 1 is below 2 ([CLS] and [SEP])");
  CHECK(Refusal(TokenizerJson(vocab, {{"model", {{"max_input_chars_per_word", 1.5}}}})) ==
        "invalid_argument: tokenizer.json: model.max_input_chars_per_word: is number, not a "
        "non-negative integer");
  // Nested past the input limit: refused before anything is built.
  const std::string deep =
      R"({"model": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  CHECK(Refusal(deep).find("nested deeper than") != std::string::npos);
  // Larger than kMaxTokenizerBytes.
  std::string big = TokenizerJson(vocab);
  big.resize(kMaxTokenizerBytes + 1, ' ');
  CHECK(Refusal(big) ==
        "invalid_argument: tokenizer.json: larger than 67108864 bytes, the most a "
        "tokenizer file may have");
}

// ---- The cross-check against reference_tokenizer.py ----

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
