// BERT's tokenizer: basic tokenization, then WordPiece -- text in, the
// token ids a BERT-family encoder reads out.
//
// Basic tokenization (BERT's BasicTokenizer, google-research/bert
// tokenization.py, which HF tokenizers' BertNormalizer and
// BertPreTokenizer reproduce):
//   1. text is UTF-8; an invalid byte becomes U+FFFD (never an error);
//   2. U+0000, U+FFFD and control characters (category Cc/Cf, but not
//      \t \n \r) are dropped; whitespace (\t \n \r, Zs) becomes a space;
//   3. with chinese_chars, each CJK ideograph (the CJK Unified Ideographs
//      blocks and their extensions, and the compatibility ideographs)
//      becomes a word of its own;
//   4. the text splits on whitespace; with lower_case each word is
//      lower-cased, and with strip_accents (which defaults to lower_case)
//      put in NFD and stripped of nonspacing marks (Mn);
//   5. each punctuation character (Unicode P*, and the ASCII ranges
//      33-47, 58-64, 91-96, 123-126) becomes a word of its own.
// WordPiece: each word of more than max_chars_per_word (100) code points is
// [UNK]; otherwise greedy longest-match-first against the vocabulary, the
// pieces after the first looked up with the "##" prefix; a word that does
// not split completely is one [UNK].
// Encode: [CLS] pieces [SEP], the pieces cut so the whole is at most
// max_length ids.
//
// Thread-safety: a WordPiece is immutable after it is made; Encode and
// Tokenize from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace limbic::memory::encoder {

//! The largest tokenizer.json or vocab.txt read: 64 MB.
inline constexpr uint64_t kMaxTokenizerBytes = 64ull << 20;

struct WordPieceOptions {
  bool lower_case = true;
  std::optional<bool> strip_accents;  //!< unset: as lower_case
  bool chinese_chars = true;
  size_t max_length = 512;            //!< ids per Encode, [CLS] and [SEP] included (>= 2)
  size_t max_chars_per_word = 100;
  std::string unk = "[UNK]", cls = "[CLS]", sep = "[SEP]";
  std::string continuing_prefix = "##";
};

class WordPiece {
 public:
  //! From a vocabulary, one piece per line (its line number is its id).
  //! InvalidArgument when [UNK], [CLS] or [SEP] (as options name them) is
  //! missing, a piece is repeated, or the vocabulary is empty.
  static Result<WordPiece> FromVocab(std::vector<std::string> vocab, WordPieceOptions options);
  //! vocab.txt, and tokenizer_config.json when `config_path` is not empty
  //! (do_lower_case, strip_accents, tokenize_chinese_chars, unk_token,
  //! cls_token, sep_token; model_max_length lowers options.max_length).
  //! Errors name the file and, for a bad line or key, the line or key.
  static Result<WordPiece> FromVocabFile(const std::string& vocab_path,
                                         const std::string& config_path,
                                         WordPieceOptions options);
  //! An HF tokenizers tokenizer.json whose model is WordPiece: model.vocab
  //! (piece -> id; ids must be 0..n-1 without gaps or repeats),
  //! model.unk_token, model.continuing_subword_prefix,
  //! model.max_input_chars_per_word, and the BertNormalizer's clean_text,
  //! handle_chinese_chars, strip_accents and lowercase; truncation.max_length
  //! lowers options.max_length. [CLS]/[SEP] from the post_processor's
  //! special tokens when present. Any other model type is refused by name.
  //! Errors name the file and the key.
  static Result<WordPiece> FromTokenizerJson(const std::string& path, WordPieceOptions options);

  //! [CLS] ids... [SEP], at most options().max_length.
  std::vector<int32_t> Encode(std::string_view text) const;
  //! The pieces of `text`, without [CLS]/[SEP] and not truncated (tests).
  std::vector<std::string> Tokenize(std::string_view text) const;
  //! The words of basic tokenization (steps 1-5; tests).
  std::vector<std::string> BasicTokens(std::string_view text) const;

  size_t vocab_size() const { return pieces_.size(); }
  const WordPieceOptions& options() const { return options_; }
  //! The id of `piece`, or -1.
  int32_t Id(std::string_view piece) const;

 private:
  WordPieceOptions options_;
  std::vector<std::string> pieces_;
  std::unordered_map<std::string, int32_t> ids_;
  int32_t unk_ = 0, cls_ = 0, sep_ = 0;
};

}  // namespace limbic::memory::encoder
