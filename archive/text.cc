#include "archive/text.h"

#include <algorithm>
#include <array>

namespace limbic::archive {

namespace detail {

size_t Utf8SeqLen(std::string_view s, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = at(i);
  size_t n;
  uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((at(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (at(i + k) & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

}  // namespace detail

namespace {
// Sorted, for binary search.
constexpr std::array<std::string_view, 64> kStop = {
    "a",     "about", "after", "all",   "also",  "an",    "and",   "any",   "are",  "as",
    "at",    "be",    "been",  "but",   "by",    "can",   "could", "did",   "do",   "does",
    "for",   "from",  "had",   "has",   "have",  "he",    "her",   "his",   "how",  "if",
    "in",    "into",  "is",    "it",    "its",   "just",  "more",  "no",    "not",  "of",
    "on",    "or",    "our",   "she",   "so",    "than",  "that",  "the",   "their", "them",
    "then",  "there", "these", "they",  "this",  "to",    "was",   "we",    "were", "what",
    "when",  "which", "will",  "with"};
}  // namespace

bool IsStopWord(std::string_view term) { return std::binary_search(kStop.begin(), kStop.end(), term); }

std::span<const std::string_view> StopWords() { return kStop; }

std::vector<std::string> Tokenize(std::string_view text) {
  std::vector<std::string> out;
  ForEachTerm(text, [&](std::string_view t) { out.emplace_back(t); });
  return out;
}

std::string_view Utf8Prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t end = max_bytes;
  // Back up over continuation bytes to the start of the cut sequence.
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}

namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

size_t FindCaseless(std::string_view hay, std::string_view needle) {
  if (needle.empty() || needle.size() > hay.size()) return std::string_view::npos;
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(),
                        [](char a, char b) { return Lower(a) == Lower(b); });
  return it == hay.end() ? std::string_view::npos : static_cast<size_t>(it - hay.begin());
}

}  // namespace

std::string Snippet(std::string_view text, const std::vector<std::string>& terms, size_t max_bytes) {
  size_t at = std::string_view::npos;
  for (const std::string& t : terms) at = std::min(at, FindCaseless(text, t));
  size_t start = 0;
  if (at != std::string_view::npos && at > max_bytes / 4) {
    start = at - max_bytes / 4;
    // Do not start inside a UTF-8 sequence.
    while (start < at && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
  }
  std::string_view window = Utf8Prefix(text.substr(start), max_bytes);
  std::string out;
  out.reserve(window.size());
  bool space = false;
  for (char c : window) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

}  // namespace limbic::archive
