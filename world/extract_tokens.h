// The heuristic extractor's tokenizer (extract_tokens.cc): a Markdown
// line is prepared (blockquote, list, task and heading marks, emphasis and
// code spans removed), split into tokens at spaces, and each token
// classified: a wikilink (which may hold spaces), a URL, a @handle, a
// #tag, an owner/repo, or a word. Punctuation around a token is kept as a
// break (a capitalised run never crosses one) and a sentence ends at a
// token ending in . ! ? : or ;. Everything is one forward scan over the
// line, so a 5 MB line costs what its bytes cost.
//
// Internal to the extractors. Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "world/model.h"

namespace limbic::world::internal {

enum class Kind : uint8_t { kWord, kOther, kWikilink, kUrl, kHandle, kTag, kRepo };

struct Token {
  Kind kind = Kind::kWord;
  size_t begin = 0, end = 0;               // the word, or the mention's whole span, in the line
  std::string name;                        // a mention's entity name
  EntityType type = EntityType::kConcept;  // a mention's type (wikilinks are typed in context)
  int sentence = 0;
  bool sentence_start = false;  // first token of its sentence
  bool break_before = false;    // punctuation between this token and the one before
  bool break_after = false;     // punctuation after this token
  bool hard_end = false;        // ends in . ! or ?: the context of the next token is gone
};

struct Line {
  std::string text;  // the line without its marks and emphasis
  bool heading = false;
  std::vector<Token> tokens;
  std::string_view Text(const Token& t) const {
    return std::string_view(text).substr(t.begin, t.end - t.begin);
  }
};

// Fills `line->text` from `raw`; false for a line to skip (a code fence,
// or inside one: *in_fence carries that from line to line).
bool PrepareLine(std::string_view raw, bool* in_fence, Line* line);
// Fills `line->tokens` from `line->text`.
void Tokenize(Line* line);

// Calls fn(line) for each prepared and tokenised line of `text`.
template <typename Fn>
void ForEachLine(std::string_view text, Fn&& fn) {
  Line line;
  bool in_fence = false;
  for (size_t start = 0; start < text.size();) {
    const size_t nl = std::min(text.find('\n', start), text.size());
    if (PrepareLine(text.substr(start, nl - start), &in_fence, &line)) {
      Tokenize(&line);
      fn(line);
    }
    start = nl + 1;
  }
}

// Punctuation stripped from the end of a word.
inline constexpr std::string_view kTrailPunct = ".,;:!?)]}>\"'_";

inline bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
inline bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
inline bool IsAlpha(char c) { return IsUpper(c) || IsLower(c); }
inline bool IsAlnum(char c) { return IsAlpha(c) || IsDigit(c); }
inline bool IsHigh(char c) { return static_cast<unsigned char>(c) >= 0x80; }
// No ASCII lower-case letter ("CI", "AWS", "S3").
inline bool IsAllUpper(std::string_view s) { return std::none_of(s.begin(), s.end(), IsLower); }

template <size_t N>
bool IsOneOf(std::string_view s, const std::string_view (&list)[N]) {
  return std::find(std::begin(list), std::end(list), s) != std::end(list);
}

}  // namespace limbic::world::internal
