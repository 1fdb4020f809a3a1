// Helpers shared by the tokenizer's tests (wordpiece_test.cc,
// wordpiece_files_test.cc).
#pragma once

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "memory/encoder/wordpiece.h"
#include "state/test_util.h"

namespace wordpiece_util {

using namespace limbic;
using namespace limbic::memory::encoder;
using Strings = std::vector<std::string>;
using Ids = std::vector<int32_t>;
using nlohmann::json;


using TempDir = limbic::testing::ScratchDir;

inline void WriteFile(const std::string& path, std::string_view text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// BERT's test vocabulary (tokenization_test.py).
inline Strings BertVocab() {
  return {"[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un", "runn", "##ing", ","};
}

inline WordPiece Make(Strings vocab = BertVocab(), WordPieceOptions options = {}) {
  auto wp = WordPiece::FromVocab(std::move(vocab), std::move(options));
  INFO(wp.status().ToString());
  REQUIRE(wp.ok());
  return std::move(wp).value();
}

inline WordPieceOptions NoLower() {
  WordPieceOptions o;
  o.lower_case = false;
  return o;
}

inline Strings Words(std::string_view text, WordPieceOptions options = {}) {
  return Make(BertVocab(), std::move(options)).BasicTokens(text);
}

// A tokenizer.json as HF writes it for BERT models (all-MiniLM-L6-v2's
// shape), over `vocab`; `patch` is merged into it (null deletes a key).
inline std::string TokenizerJson(const Strings& vocab, const json& patch = json::object()) {
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
inline std::string Refusal(std::string_view text) {
  auto wp = WordPiece::FromTokenizerJsonText(text, "tokenizer.json", {});
  return wp.ok() ? "loaded" : wp.status().ToString();
}


}  // namespace wordpiece_util
