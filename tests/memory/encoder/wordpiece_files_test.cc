// Tests of memory/encoder/wordpiece_files.cc: vocab.txt with
// tokenizer_config.json, and HF's tokenizer.json, read and refused (each
// refusal names the file, and the line or key).
#include <catch2/catch.hpp>
#include <string>

#include "wordpiece_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace wordpiece_files_test {

using namespace wordpiece_util;

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

}  // namespace wordpiece_files_test
