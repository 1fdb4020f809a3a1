// Fuzz target `tokenizer`: BERT's tokenizer (memory/encoder/wordpiece.h),
// its tokenizer.json loader and its Encode over any bytes.
//
// Input: a tokenizer.json, optionally followed by a line "#text" and a text.
// The whole input is also a text, encoded by a fixed small vocabulary under
// three option sets.
//
// Properties: no crash; a refused tokenizer.json is InvalidArgument naming
// "tokenizer.json" (never Internal: that is a check the loader missed, an
// exception caught); Encode gives [CLS] ids... [SEP], at most max_length,
// every id in the vocabulary, the ids in between a prefix of Tokenize's, the
// same twice; the words of basic tokenization are valid UTF-8, hold no
// space, and (with clean_text) no control character.
#include <cstdint>
#include <string>
#include <string_view>

#include "base/json.h"
#include "fuzz/fuzz_util.h"
#include "memory/encoder/wordpiece.h"

using namespace limbic;
using namespace limbic::memory::encoder;

namespace {

void CheckEncode(const WordPiece& wp, std::string_view text, const std::string& what) {
  const auto ids = wp.Encode(text);
  FUZZ_CHECK(ids.size() >= 2 && ids.size() <= wp.options().max_length,
             what + ": " + std::to_string(ids.size()) + " ids");
  FUZZ_CHECK(ids.front() == wp.Id(wp.options().cls) && ids.back() == wp.Id(wp.options().sep),
             what + ": not [CLS] ... [SEP]");
  for (int32_t id : ids)
    FUZZ_CHECK(id >= 0 && static_cast<size_t>(id) < wp.vocab_size(),
               what + ": id " + std::to_string(id) + " outside the vocabulary");
  FUZZ_CHECK(wp.Encode(text) == ids, what + ": Encode differs on the same text");
  const auto pieces = wp.Tokenize(text);
  FUZZ_CHECK(pieces.size() >= ids.size() - 2, what + ": Tokenize gives fewer pieces than Encode");
  for (size_t i = 0; i + 2 < ids.size(); ++i)
    FUZZ_CHECK(wp.Piece(ids[i + 1]) == pieces[i],
               what + ": piece " + std::to_string(i) + " differs from Tokenize's");
}

void CheckWords(const WordPiece& wp, std::string_view text, const std::string& what) {
  for (const std::string& word : wp.BasicTokens(text)) {
    FUZZ_CHECK(!word.empty(), what + ": an empty word");
    FUZZ_CHECK(IsValidUtf8(word), what + ": a word is not UTF-8: " + JsonQuote(word));
    for (unsigned char c : word) {
      FUZZ_CHECK(c != ' ' && c != '\t' && c != '\n' && c != '\r',
                 what + ": a space in " + JsonQuote(word));
      if (wp.options().clean_text)
        FUZZ_CHECK(c >= 0x20 && c != 0x7f, what + ": a control character in " + JsonQuote(word));
    }
  }
}

// A small vocabulary: letters and digits alone and continuing, a few words.
const WordPiece& Fixed(int variant) {
  static const WordPiece* fixed[3] = {};
  if (!fixed[variant]) {
    std::vector<std::string> vocab = {"[PAD]",  "[UNK]", "[CLS]", "[SEP]", "the",    "un",
                                      "##want", "##ed",  "##ing", "runn",  "\u00e9", "\u4e00"};
    for (char c = '!'; c <= '~'; ++c) {
      vocab.emplace_back(1, c);
      if (std::isalnum(static_cast<unsigned char>(c))) vocab.push_back(std::string("##") + c);
    }
    WordPieceOptions o;
    if (variant == 1) {
      o.lower_case = false;
      o.max_length = 8;
    } else if (variant == 2) {
      o.clean_text = o.chinese_chars = false;
      o.strip_accents = true;
      o.max_chars_per_word = 5;
    }
    auto wp = WordPiece::FromVocab(std::move(vocab), o);
    FUZZ_CHECK(wp.ok(), wp.status().ToString());
    fixed[variant] = new WordPiece(std::move(wp).value());
  }
  return *fixed[variant];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  for (int variant = 0; variant < 3; ++variant) {
    const std::string what = "fixed vocabulary, variant " + std::to_string(variant);
    CheckEncode(Fixed(variant), input, what);
    CheckWords(Fixed(variant), input, what);
  }

  const size_t cut = input.find("\n#text\n");
  const std::string_view file = input.substr(0, cut);
  const std::string_view text =
      cut == std::string_view::npos ? std::string_view() : input.substr(cut + 7);
  auto wp = WordPiece::FromTokenizerJsonText(file, "tokenizer.json", {});
  if (!wp.ok()) {
    const Status& s = wp.status();
    FUZZ_CHECK(s.IsInvalidArgument(), "unexpected code: " + s.ToString());
    FUZZ_CHECK(s.message().starts_with("tokenizer.json: "), "unnamed: " + s.message());
    return 0;
  }
  CheckEncode(*wp, text, "loaded tokenizer.json");
  CheckWords(*wp, text, "loaded tokenizer.json");
  return 0;
}
