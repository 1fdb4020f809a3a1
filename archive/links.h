// Links between day documents, as a pure function of every document's date
// and content, so Rollup can write them and Verify can recompute them.
//
// Content is read line by line; lines that are exactly a block header
// ("## " + a 24-character timestamp, see archive.h) are skipped by all of
// what follows.
//
// Temporal: prev and next are the neighbouring archived dates.
//
// Semantic: cosine similarity of term-frequency vectors. A document's
// vector counts the terms of text.h's Tokenize over its content and keeps
// the kTermCap (200) most frequent (ties: smaller term id first); a term's
// weight is its raw count (TF, not TF-IDF: a weight that depends on the
// other documents would change the scores of existing pairs whenever a day
// is added). Terms are identified by TermId, a 64-bit hash of their bytes
// (the same on every machine); two terms of one hash would count as one. The score is the cosine rounded to
// 4 decimals; pairs scoring below semantic_min are not links. Each
// document keeps its semantic_k best, older and newer alike (so adding a
// day can add a link to it from an older document), best first, ties by
// the earlier date. Counts are integers, so dot products and norms are
// exact and the score is the same on every IEEE machine.
//
// Social: two measures of a document in fixed ranges, so a document's
// values never depend on the others:
//   engagement in [0, 1] = L / (L + 200), where L is the average length in
//     bytes of a turn. A turn starts at a line beginning with a tag "[name]"
//     (1..32 bytes, no whitespace or brackets: "[user]", "[assistant]", or a
//     source such as "[email]") and runs to the next tag line or header;
//     its length is the bytes of its lines, trimmed, without the tag.
//     Without any turn, L is the average length of a paragraph (a run of
//     non-blank lines). 200 bytes is an engagement of 0.5.
//   sentiment in [-1, 1] = (p - n) / (p + n + 2), where p and n count the
//     terms in kPositiveWords and kNegativeWords (no negation handling;
//     the + 2 keeps one stray word from swinging a document to an extreme).
// From document A to document B:
//   delta = clamp(0.6 * (engagement_B - engagement_A)
//                 + 0.4 * (sentiment_B - sentiment_A), -1, 1),
// rounded to 4 decimals. Document D's link to target T carries the delta
// from T to D, COMB's direction and sign (comb/honeycomb.py): positive when
// D is more engaged or warmer than T, an "inward" link (the relationship
// drew in from T to D); negative is "outward" (it cooled). Zero is not a
// link. A document keeps the social_k links of largest |delta|, ties by
// the earlier date. (limbic before this rule stored the opposite sign;
// Verify reports such links as a note, Archive::Relink rewrites them.)
//
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "archive/archive.h"

namespace limbic::archive {

inline constexpr size_t kTermCap = 200;
inline constexpr double kEngagementHalf = 200;  // bytes per turn of engagement 0.5
inline constexpr std::array<std::string_view, 24> kPositiveWords = {
    "agree",   "appreciate", "awesome", "beautiful", "best",     "excellent",
    "excited", "fantastic",  "fixed",   "glad",      "good",     "great",
    "happy",   "helpful",    "love",    "nice",      "perfect",  "pleased",
    "success", "thank",      "thanks",  "wonderful", "works",    "yes"};
inline constexpr std::array<std::string_view, 24> kNegativeWords = {
    "angry",  "annoying", "awful",    "bad",    "broken",   "bug",
    "confused", "crash",  "disappointed", "error", "fail",  "failed",
    "failure", "frustrated", "hate",  "problem", "sad",     "sorry",
    "terrible", "ugly",   "upset",    "worried", "worse",   "wrong"};

// A term's id: a 64-bit hash of its bytes, 8 at a time (terms.cc).
uint64_t TermId(std::string_view term);

// What links need to know of one document's content.
struct Features {
  std::vector<std::pair<uint64_t, uint32_t>> terms;  // (term id, count), sorted by id
  uint64_t norm2 = 0;     // sum of count^2 over `terms`
  double engagement = 0;  // [0, 1]
  double sentiment = 0;   // [-1, 1]
};
Features ComputeFeatures(std::string_view content);

// The rounded cosine of two documents' vectors (0 when either is empty).
double SemanticScore(const Features& a, const Features& b);
// The rounded delta from `from` to `to` (see above).
double SocialDelta(const Features& from, const Features& to);

struct LinkOptions {
  size_t semantic_k = 5;
  double semantic_min = 0.1;
  size_t social_k = 5;
};

// The links of every document: dates sorted ascending, features[i] those
// of dates[i]. A null feature is a document whose content is unknown (it
// did not parse): a temporal neighbour, but no semantic or social target.
std::vector<Links> ComputeLinks(const std::vector<std::string>& dates,
                                const std::vector<const Features*>& features,
                                const LinkOptions& options);

// Whether a stored list of at most `k` links can be the best-k list over
// all documents when `expected` was computed without the documents in
// `unknown` (sorted dates): the stored links to known documents must be
// the start of `expected`, and all of it when the stored list is not full.
// With no unknown documents this is stored == expected.
template <typename Link>
bool LinksAgree(const std::vector<Link>& stored, const std::vector<Link>& expected,
                const std::vector<std::string>& unknown, size_t k);

// ---- implementation ----

template <typename Link>
bool LinksAgree(const std::vector<Link>& stored, const std::vector<Link>& expected,
                const std::vector<std::string>& unknown, size_t k) {
  if (stored.size() > k) return false;
  size_t known = 0;
  for (const Link& link : stored) {
    if (std::binary_search(unknown.begin(), unknown.end(), link.target)) continue;
    if (known >= expected.size() || !(link == expected[known])) return false;
    ++known;
  }
  return stored.size() == k || known == expected.size();
}

}  // namespace limbic::archive
