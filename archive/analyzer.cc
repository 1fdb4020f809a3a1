#include "archive/analyzer.h"

#include <libstemmer.h>

#include <algorithm>

#include "archive/text.h"

namespace limbic::archive {
namespace {

// The version of the rules in analyzer.h, part of id(): bump it when a
// change gives any text other terms, so that indexes rebuild.
constexpr int kRulesVersion = 1;

// The Snowball project's English stop words (snowballstem.org,
// algorithms/english/stop.txt), without the contractions, whose pieces
// follow: what splitting them at the apostrophe leaves ("isn't" -> "isn",
// "t"). "won" (won't) is left out: it is also a word. Sorted (a test
// checks), for binary search.
constexpr std::string_view kEnglishStop[] = {
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are",
    "aren", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
    "but", "by", "can", "cannot", "could", "couldn", "d", "did", "didn", "do", "does", "doesn",
    "doing", "don", "down", "during", "each", "few", "for", "from", "further", "had", "hadn",
    "has", "hasn", "have", "haven", "having", "he", "her", "here", "hers", "herself", "him",
    "himself", "his", "how", "i", "if", "in", "into", "is", "isn", "it", "its", "itself", "let",
    "ll", "m", "me", "more", "most", "mustn", "my", "myself", "no", "nor", "not", "of", "off",
    "on", "once", "only", "or", "other", "ought", "our", "ours", "ourselves", "out", "over",
    "own", "re", "s", "same", "shan", "she", "should", "shouldn", "so", "some", "such", "t",
    "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these",
    "they", "this", "those", "through", "to", "too", "under", "until", "up", "ve", "very", "was",
    "wasn", "we", "were", "weren", "what", "when", "where", "which", "while", "who", "whom",
    "why", "with", "would", "wouldn", "you", "your", "yours", "yourself", "yourselves",
};

std::span<const std::string_view> EnglishStop() { return kEnglishStop; }

// The code point of the valid UTF-8 sequence of length n at s[i].
uint32_t Decode(std::string_view s, size_t i, size_t n) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  if (n == 2) return (at(0) & 0x1Fu) << 6 | (at(1) & 0x3Fu);
  if (n == 3) return (at(0) & 0x0Fu) << 12 | (at(1) & 0x3Fu) << 6 | (at(2) & 0x3Fu);
  return (at(0) & 0x07u) << 18 | (at(1) & 0x3Fu) << 12 | (at(2) & 0x3Fu) << 6 | (at(3) & 0x3Fu);
}

void Encode(uint32_t cp, std::string* out) {
  if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
  }
  out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
}

// Punctuation, symbols, spaces and emoji outside ASCII: they separate
// tokens like ASCII punctuation does.
bool IsSeparator(uint32_t cp) {
  if (cp >= 0x80 && cp <= 0xBF) return cp != 0xAA && cp != 0xB5 && cp != 0xBA;  // ª µ º
  return cp == 0xD7 || cp == 0xF7 ||                  // × ÷
         (cp >= 0x2000 && cp <= 0x2BFF) ||            // punctuation, arrows, math, symbols
         (cp >= 0x3000 && cp <= 0x303F) ||            // CJK punctuation
         (cp >= 0xFE00 && cp <= 0xFE0F) ||            // variation selectors
         (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF01 && cp <= 0xFF0F) ||
         (cp >= 0xFF1A && cp <= 0xFF20) || (cp >= 0xFF3B && cp <= 0xFF40) ||
         (cp >= 0xFF5B && cp <= 0xFF65) || (cp >= 0x1F000 && cp <= 0x1FAFF);  // emoji
}

uint32_t Lower(uint32_t cp) {
  if ((cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) || (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2) ||
      (cp >= 0x410 && cp <= 0x42F))
    return cp + 0x20;
  if (cp >= 0x400 && cp <= 0x40F) return cp + 0x50;
  // Latin Extended-A pairs capital/small as even/odd, apart from a few.
  if (cp >= 0x100 && cp <= 0x17F && cp != 0x130 && cp != 0x131 && cp != 0x138 && cp != 0x149 &&
      cp != 0x17F) {
    const bool odd_capitals = (cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E);
    if (odd_capitals ? (cp & 1) : !(cp & 1)) return cp + 1;
  }
  return cp;
}

constexpr size_t kMaxTermBytes = 64;

}  // namespace

Analyzer::Analyzer(std::string language, sb_stemmer* stemmer, bool stop_words)
    : language_(std::move(language)),
      id_(language_ + "/" + std::to_string(kRulesVersion)),
      stemmer_(stemmer),
      stop_words_(stop_words) {}

Analyzer::~Analyzer() {
  if (stemmer_) sb_stemmer_delete(stemmer_);
}

std::vector<std::string> Analyzer::Languages() {
  std::vector<std::string> out{"none"};
  for (const char** l = sb_stemmer_list(); *l; ++l) out.emplace_back(*l);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<std::shared_ptr<const Analyzer>> Analyzer::Make(std::string_view language) {
  const std::string name(language);
  if (name == "none") return std::shared_ptr<const Analyzer>(new Analyzer(name, nullptr, true));
  // "porter" is Snowball's original English stemmer; anything libstemmer
  // lists is accepted, but the English stop words go with english only.
  sb_stemmer* s = name.empty() ? nullptr : sb_stemmer_new(name.c_str(), "UTF_8");
  if (!s) {
    std::string all;
    for (const std::string& l : Languages()) all += (all.empty() ? "" : ", ") + l;
    return Status::InvalidArgument("analyzer \"" + name + "\": not a language; one of " + all);
  }
  return std::shared_ptr<const Analyzer>(
      new Analyzer(name, s, name == "english" || name == "porter"));
}

std::shared_ptr<const Analyzer> Analyzer::Default() {
  static const std::shared_ptr<const Analyzer> english = *Make("english");
  return english;
}

std::span<const std::string_view> Analyzer::StopWords() { return EnglishStop(); }

void Analyzer::Terms(std::string_view text, std::vector<std::string>* out) const {
  const std::span<const std::string_view> stop = EnglishStop();
  std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
  if (stemmer_) lock.lock();
  std::string token;
  bool too_long = false;
  auto flush = [&] {
    if (!token.empty() && !too_long &&
        !(stop_words_ && std::binary_search(stop.begin(), stop.end(), std::string_view(token)))) {
      if (stemmer_) {
        const sb_symbol* s = sb_stemmer_stem(stemmer_, reinterpret_cast<const sb_symbol*>(token.data()),
                                             static_cast<int>(token.size()));
        if (s) out->emplace_back(reinterpret_cast<const char*>(s), sb_stemmer_length(stemmer_));
        else out->push_back(token);  // out of memory in the stemmer: the word as it is
      } else {
        out->push_back(token);
      }
    }
    token.clear();
    too_long = false;
  };
  auto append = [&](std::string_view bytes) {
    if (token.size() + bytes.size() > kMaxTermBytes) too_long = true;
    else token.append(bytes);
  };
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (detail::IsAsciiWord(c)) {
        const char lower = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
        append(std::string_view(&lower, 1));
      } else {
        flush();
      }
      ++i;
      continue;
    }
    const size_t n = detail::Utf8SeqLen(text, i);
    if (n == 0) {
      flush();
      ++i;
      continue;
    }
    const uint32_t cp = Decode(text, i, n);
    if (IsSeparator(cp)) {
      flush();
    } else {
      const uint32_t lower = Lower(cp);
      if (lower == cp) {
        append(text.substr(i, n));
      } else {
        std::string bytes;
        Encode(lower, &bytes);
        append(bytes);
      }
    }
    i += n;
  }
  flush();
}

std::vector<std::string> Analyzer::Terms(std::string_view text) const {
  std::vector<std::string> out;
  Terms(text, &out);
  return out;
}

}  // namespace limbic::archive
