// Text handling shared by search, semantic links and snippets.
//
// Thread-safety: pure functions.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace limbic::archive {

// The terms of `text`, in order: maximal runs of ASCII letters and digits
// and of non-ASCII UTF-8 sequences (so "café" and "東京" are terms), ASCII
// lower-cased, 2..64 bytes long, without the English stop words of
// IsStopWord. Bytes that are not valid UTF-8 separate terms.
std::vector<std::string> Tokenize(std::string_view text);
// Calls fn(term) for each term of Tokenize(text) without building a vector.
template <typename Fn>
void ForEachTerm(std::string_view text, Fn&& fn);

// "the", "and", "of", ... (a short fixed English list, lower case).
bool IsStopWord(std::string_view term);
// That list, sorted.
std::span<const std::string_view> StopWords();

// The longest prefix of `s` of at most `max_bytes` that does not end inside
// a UTF-8 sequence.
std::string_view Utf8Prefix(std::string_view s, size_t max_bytes);

// Up to `max_bytes` of `text` around the first occurrence of any of
// `terms` (case-insensitive, ASCII), cut on UTF-8 boundaries and
// whitespace-collapsed; the start of the text when none occurs.
std::string Snippet(std::string_view text, const std::vector<std::string>& terms,
                    size_t max_bytes = 200);

// ---- implementation ----

namespace detail {
// Length of the valid UTF-8 sequence starting at s[i] (2..4), or 0.
size_t Utf8SeqLen(std::string_view s, size_t i);
inline bool IsAsciiWord(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
}  // namespace detail

template <typename Fn>
void ForEachTerm(std::string_view text, Fn&& fn) {
  std::string term;
  auto flush = [&] {
    if (term.size() >= 2 && term.size() <= 64 && !IsStopWord(term)) fn(std::string_view(term));
    term.clear();
  };
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (detail::IsAsciiWord(c)) {
        term.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
      } else {
        flush();
      }
      ++i;
      continue;
    }
    size_t n = detail::Utf8SeqLen(text, i);
    if (n == 0) {
      flush();
      ++i;
      continue;
    }
    term.append(text.data() + i, n);
    i += n;
  }
  flush();
}

}  // namespace limbic::archive
