// BERT's tokenizer: basic tokenization, then WordPiece -- text in, the
// token ids a BERT-family encoder reads out.
//
// Basic tokenization (BERT's BasicTokenizer, google-research/bert
// tokenization.py, as HF tokenizers' BertNormalizer and BertPreTokenizer
// reproduce it; where the two differ, HF's, which sentence-transformers
// runs):
//   1. text is UTF-8; each invalid byte becomes U+FFFD (never an error);
//   2. with clean_text, U+0000, U+FFFD and control characters (category C*:
//      Cc, Cf, Co, Cn -- but not \t \n \r) are dropped, and whitespace
//      (\t \n \r, Zs, Zl, Zp) becomes a space;
//   3. with chinese_chars, each CJK ideograph (U+4E00-9FFF, 3400-4DBF,
//      20000-2A6DF, 2A700-2B73F, 2B740-2B81F, 2B820-2CEAF, F900-FAFF,
//      2F800-2FA1F) becomes a word of its own;
//   4. with strip_accents (which defaults to lower_case) the text is put in
//      NFD and stripped of nonspacing marks (Mn); then with lower_case each
//      code point is lower-cased on its own (Unicode's full mapping, so
//      U+0130 becomes "i" U+0307; no final-sigma rule, as in HF);
//   5. the text splits on whitespace, and each punctuation character
//      (Unicode P*, and the ASCII ranges 33-47, 58-64, 91-96, 123-126, so
//      "$", "+", "^", "`" too) becomes a word of its own.
// WordPiece: each word of more than max_chars_per_word (100) code points is
// [UNK]; otherwise greedy longest-match-first against the vocabulary, the
// pieces after the first looked up with the "##" prefix; a word that does
// not split completely is one [UNK].
// Encode: [CLS] pieces [SEP], the pieces cut so the whole is at most
// max_length ids.
//
// Where HF's fast tokenizer still differs (BERT's own rule kept here):
//   - HF splits the added tokens of tokenizer.json ("[SEP]", "[MASK]" ...)
//     out of the raw text first, so a text holding "[SEP]" literally gets
//     that id there; here it is "[", "sep", "]";
//   - HF's CJK ranges start Extension E at U+2B920, not U+2B820, so the 256
//     ideographs U+2B820-2B91F stay inside their word there;
//   - HF and utf8proc may be at different Unicode versions: code points
//     assigned recently (utf8proc 2.8 is Unicode 15) can differ.
//
// Thread-safety: a WordPiece is immutable after it is made; Encode and
// Tokenize from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace limbic::memory::encoder {

//! The largest tokenizer.json, tokenizer_config.json or vocab.txt read: 64 MB.
inline constexpr uint64_t kMaxTokenizerBytes = 64ull << 20;

struct WordPieceOptions {
  bool clean_text = true;             //!< step 2
  bool lower_case = true;             //!< step 4
  std::optional<bool> strip_accents;  //!< step 4; unset: as lower_case
  bool chinese_chars = true;          //!< step 3
  size_t max_length = 512;            //!< ids per Encode, [CLS] and [SEP] included (>= 2)
  size_t max_chars_per_word = 100;
  std::string unk = "[UNK]", cls = "[CLS]", sep = "[SEP]";
  std::string continuing_prefix = "##";
};

class WordPiece {
 public:
  //! From a vocabulary, one piece per entry (its index is its id).
  //! InvalidArgument when [UNK], [CLS] or [SEP] (as options name them) is
  //! missing, a piece is repeated ("piece \"x\" at 7 repeats 3"), the
  //! vocabulary is empty or holds 2^31 pieces or more, or max_length < 2.
  static Result<WordPiece> FromVocab(std::vector<std::string> vocab, WordPieceOptions options);
  //! vocab.txt (one piece per line, its 0-based line number its id; trailing
  //! whitespace and \r stripped, so a blank line is the piece ""), and
  //! tokenizer_config.json when `config_path` is not empty (do_lower_case,
  //! strip_accents, tokenize_chinese_chars, unk_token, cls_token, sep_token
  //! as strings or {"content": ...}; model_max_length lowers
  //! options.max_length). NotFound naming a missing file; InvalidArgument
  //! naming the file and, for a bad line or key, the line or key.
  static Result<WordPiece> FromVocabFile(const std::string& vocab_path,
                                         const std::string& config_path, WordPieceOptions options);
  //! An HF tokenizers tokenizer.json whose model is WordPiece: model.vocab
  //! (piece -> id; ids must be 0..n-1 without gaps or repeats),
  //! model.unk_token, model.continuing_subword_prefix,
  //! model.max_input_chars_per_word; the normalizer (a BertNormalizer, a
  //! Sequence holding one, or null: nothing normalized) gives clean_text,
  //! chinese_chars, strip_accents and lower_case; the pre_tokenizer must be
  //! a BertPreTokenizer; [CLS]/[SEP] from the post_processor
  //! (TemplateProcessing "[CLS] $A [SEP]" or BertProcessing; null keeps the
  //! options'); truncation.max_length lowers options.max_length. Any other
  //! model, normalizer, pre_tokenizer or post_processor type is refused by
  //! name. NotFound naming a missing file; InvalidArgument naming the file
  //! and key ("tokenizer.json: model.vocab[\"foo\"]: id 7 repeated").
  static Result<WordPiece> FromTokenizerJson(const std::string& path, WordPieceOptions options);
  //! FromTokenizerJson on the file's text; `name` names it in errors (the
  //! fuzz target's entry).
  static Result<WordPiece> FromTokenizerJsonText(std::string_view text, const std::string& name,
                                                 WordPieceOptions options);

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
  //! The piece of `id` (0 <= id < vocab_size()).
  const std::string& Piece(int32_t id) const { return pieces_[static_cast<size_t>(id)]; }

 private:
  // Lets ids_ be searched with a string_view (no string made per lookup).
  struct PieceHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  // The ids of `word` (UTF-8, with `starts`: the byte offset of each code
  // point, then its size) appended to *ids; *key is scratch.
  void WordPieces(std::string_view word, const std::vector<uint32_t>& starts,
                  std::vector<int32_t>* ids, std::string* key) const;
  // FromVocab, its errors naming a repeated piece by 1-based line when
  // `lines` (vocab.txt), else by id.
  static Result<WordPiece> Make(std::vector<std::string> vocab, WordPieceOptions options,
                                bool lines);
  // Encode's work: the ids of `text`'s pieces, at most `limit`.
  void PieceIds(std::string_view text, size_t limit, std::vector<int32_t>* ids) const;

  WordPieceOptions options_;
  std::vector<std::string> pieces_;
  std::unordered_map<std::string, int32_t, PieceHash, std::equal_to<>> ids_;
  int32_t unk_ = 0, cls_ = 0, sep_ = 0;
  size_t max_piece_bytes_ = 0;  // the longest piece, prefix removed: no longer lookup can match
};

}  // namespace limbic::memory::encoder
