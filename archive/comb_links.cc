// COMB's link rules (comb_links.h), for telling COMB's links from edits.
#include "archive/comb_links.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace limbic::archive {
namespace {

// comb/_utils.py's word lists.
constexpr std::array<std::string_view, 18> kCombPositive = {
    "thanks", "thank",      "great",   "good",      "awesome",   "excellent",
    "love",   "appreciate", "happy",   "glad",      "wonderful", "nice",
    "agree",  "yes",        "perfect", "beautiful", "amazing",   "helpful"};
constexpr std::array<std::string_view, 16> kCombNegative = {
    "bad",        "wrong", "hate",     "disagree",     "no",       "never", "terrible", "awful",
    "frustrated", "angry", "annoying", "disappointed", "confused", "fail",  "error",    "broken"};

template <size_t N>
bool In(const std::array<std::string_view, N>& words, std::string_view w) {
  return std::find(words.begin(), words.end(), w) != words.end();
}

// The code point at s[i] and its length in bytes (1 for a bad byte).
char32_t Decode(std::string_view s, size_t i, size_t* len) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
  if (i + n > s.size()) n = 1;
  if (n == 1) {
    *len = 1;
    return c;
  }
  char32_t cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  *len = n;
  return cp;
}

// Python's str.isspace.
bool IsPySpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

std::vector<std::string> Tokens(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) out.push_back(std::move(cur));
    cur.clear();
  };
  for (size_t i = 0; i < text.size();) {
    size_t len = 1;
    char32_t c = Decode(text, i, &len);
    i += len;
    if (c >= 'A' && c <= 'Z') c += 32;
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      cur.push_back(static_cast<char>(c));
    } else if (c == 0x130) {  // İ lower-cases to "i" + U+0307
      cur.push_back('i');
      flush();
    } else if (c == 0x212A) {  // the Kelvin sign lower-cases to "k"
      cur.push_back('k');
    } else {
      flush();
    }
  }
  flush();
  return out;
}

// The length of a role marker "[user]" etc. at text[i] (with the
// whitespace after it), or 0. Case-insensitive as Python's re.IGNORECASE:
// U+017F (long s) matches "s".
size_t MarkerAt(std::string_view text, size_t i) {
  if (text[i] != '[') return 0;
  for (std::string_view role :
       {std::string_view("user"), std::string_view("assistant"), std::string_view("system")}) {
    size_t j = i + 1;
    bool ok = true;
    for (char want : role) {
      if (j >= text.size()) {
        ok = false;
        break;
      }
      size_t len = 1;
      char32_t c = Decode(text, j, &len);
      if (c >= 'A' && c <= 'Z') c += 32;
      if (c == static_cast<char32_t>(want) || (want == 's' && c == 0x17F)) {
        j += len;
      } else {
        ok = false;
        break;
      }
    }
    if (!ok || j >= text.size() || text[j] != ']') continue;
    ++j;
    while (j < text.size()) {
      size_t len = 1;
      if (!IsPySpace(Decode(text, j, &len))) break;
      j += len;
    }
    return j - i;
  }
  return 0;
}

// Code points of `s` without leading and trailing Python whitespace.
uint64_t StrippedLength(std::string_view s) {
  std::vector<char32_t> cps;
  for (size_t i = 0; i < s.size();) {
    size_t len = 1;
    cps.push_back(Decode(s, i, &len));
    i += len;
  }
  size_t b = 0, e = cps.size();
  while (b < e && IsPySpace(cps[b])) ++b;
  while (e > b && IsPySpace(cps[e - 1])) --e;
  return e - b;
}

double Engagement(std::string_view text) {
  uint64_t total = 0, turns = 0;
  bool in_turn = false;
  size_t start = 0;
  auto close = [&](size_t end) {
    if (!in_turn) return;
    uint64_t n = StrippedLength(text.substr(start, end - start));
    if (n > 0) {
      total += n;
      ++turns;
    }
  };
  for (size_t i = 0; i < text.size();) {
    if (size_t m = MarkerAt(text, i); m > 0) {
      close(i);
      in_turn = true;
      start = i + m;
      i += m;
    } else {
      ++i;
    }
  }
  // Python's split leaves the text after the last marker as the last turn,
  // and the loop in _parse_turns reads it.
  close(text.size());
  return turns == 0 ? 0.0 : static_cast<double>(total) / static_cast<double>(turns);
}

}  // namespace

CombFeatures ComputeCombFeatures(std::string_view content) {
  CombFeatures f;
  std::vector<std::string> tokens = Tokens(content);
  int64_t pos = 0, neg = 0;
  for (const std::string& t : tokens) {
    ++f.terms[t];
    if (In(kCombPositive, t)) ++pos;
    if (In(kCombNegative, t)) ++neg;
  }
  for (const auto& [t, n] : f.terms) f.norm2 += n * n;
  f.sentiment =
      pos + neg == 0 ? 0.0 : static_cast<double>(pos - neg) / static_cast<double>(pos + neg);
  f.engagement = Engagement(content);
  return f;
}

double CombSimilarity(const CombFeatures& a, const CombFeatures& b) {
  if (a.terms.empty() || b.terms.empty()) return 0;
  const CombFeatures& small = a.terms.size() <= b.terms.size() ? a : b;
  const CombFeatures& large = &small == &a ? b : a;
  uint64_t dot = 0;
  bool common = false;
  for (const auto& [t, n] : small.terms) {
    auto it = large.terms.find(t);
    if (it == large.terms.end()) continue;
    common = true;
    dot += n * it->second;
  }
  if (!common) return 0;
  // As Python computes it: int ** 0.5 is pow of the int as a double.
  double mag_a = std::pow(static_cast<double>(a.norm2), 0.5);
  double mag_b = std::pow(static_cast<double>(b.norm2), 0.5);
  if (mag_a == 0 || mag_b == 0) return 0;
  return static_cast<double>(dot) / (mag_a * mag_b);
}

double CombSocialDelta(const CombFeatures& doc, const CombFeatures& other) {
  const double ea = other.engagement, eb = doc.engagement;
  const double eng = ea + eb == 0 ? 0.0 : (eb - ea) / (ea + eb);
  const double sent = (doc.sentiment - other.sentiment) / 2.0;
  const double raw = eng * 0.6 + sent * 0.4;
  return std::max(-1.0, std::min(1.0, raw));
}

double RoundLikePython4(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", x);  // exact, half-even
  return std::strtod(buf, nullptr);
}

bool CombComputed(const std::string& date, const CombFeatures& self, const Links& links,
                  const std::map<std::string, CombFeatures>& others) {
  if (links.semantic.size() > 5 || links.social.size() > 5) return false;
  std::set<std::string> seen;
  double last = 2;
  for (const SemanticLink& l : links.semantic) {
    if (l.target == date || !seen.insert(l.target).second || l.score > last) return false;
    last = l.score;
    auto it = others.find(l.target);
    if (it == others.end()) continue;
    double sim = CombSimilarity(self, it->second);
    if (!(sim > 0.01) || RoundLikePython4(sim) != l.score) return false;
  }
  seen.clear();
  last = 2;
  for (const SocialLink& l : links.social) {
    if (l.target == date || !seen.insert(l.target).second || std::fabs(l.delta) > last)
      return false;
    last = std::fabs(l.delta);
    if ((l.direction == "inward") != (l.delta > 0)) return false;
    auto it = others.find(l.target);
    if (it == others.end()) continue;
    double d = CombSocialDelta(self, it->second);
    if (!(std::fabs(d) > 0.01) || RoundLikePython4(d) != l.delta ||
        l.direction != (d > 0 ? "inward" : "outward"))
      return false;
  }
  return true;
}

}  // namespace limbic::archive
