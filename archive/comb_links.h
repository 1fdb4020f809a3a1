// COMB's own link rules, re-implemented so that Verify and Import can tell
// links that COMB (github.com/amuzetnoM/comb, comb/honeycomb.py and
// comb/_utils.py) computed from links that were edited. Internal to
// limbic_archive; no COMB code is used.
//
// COMB computes a document's links once, when it is rolled up, against the
// documents archived at that moment, and never updates them; so they are
// checked link by link, not as a best-k list over the whole archive:
//
//   tokens     = runs of [a-z0-9] in the lower-cased text (ASCII letters
//                and digits; U+0130 and U+212A lower-case to "i" and "k")
//   semantic   = cosine of raw term counts over every token (no stop
//                words, no cap); a link needs cosine > 0.01; score =
//                round(cosine, 4); at most 5, best first
//   turns      = the text split at "[user]", "[assistant]" or "[system]"
//                (any case) and the whitespace after it; a turn is the
//                stripped text up to the next marker, its length in code
//                points; empty turns do not count
//   engagement = the average turn length (0 without turns)
//   sentiment  = (p - n) / (p + n) over COMB's word lists, 0 without any
//   delta of document D towards an older or other document O
//              = clamp(0.6 * (eng_D - eng_O) / (eng_D + eng_O)
//                      + 0.4 * (sent_D - sent_O) / 2, -1, 1)
//                (the engagement term is 0 when both are 0); a link needs
//                |delta| > 0.01; stored round(delta, 4), "inward" when
//                delta > 0, else "outward"; at most 5, largest |delta| first
//
// round(x, 4) is Python's: the double nearest to x's exact value rounded
// half-even to 4 decimals. Python's str.lower, \s and str.strip know all of
// Unicode; here whitespace is the set Python's str.isspace accepts, and
// case-folding is ASCII plus the cases named above.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "archive/archive.h"

namespace limbic::archive {

//! What COMB's link rules read of one document's content.
struct CombFeatures {
  std::unordered_map<std::string, uint64_t> terms;  //!< token -> count
  uint64_t norm2 = 0;                               //!< sum of count^2
  double engagement = 0;                            //!< average turn length, code points
  double sentiment = 0;                             //!< [-1, 1]
};
CombFeatures ComputeCombFeatures(std::string_view content);

//! COMB's cosine of two documents, unrounded.
double CombSimilarity(const CombFeatures& a, const CombFeatures& b);
//! COMB's social delta stored on `doc` for its link to `other`, unrounded.
double CombSocialDelta(const CombFeatures& doc, const CombFeatures& other);
//! Python's round(x, 4).
double RoundLikePython4(double x);

//! Whether every semantic and social link of `links` is one COMB's rollup
//! of `date` could have written: at most 5 of each, distinct targets other
//! than `date`, each value exactly COMB's for its pair (as stored, rounded)
//! and above COMB's threshold, in COMB's order. `others` maps the dates
//! whose content is known to their features; a link to a date not in it is
//! not checked.
bool CombComputed(const std::string& date, const CombFeatures& self, const Links& links,
                  const std::map<std::string, CombFeatures>& others);

}  // namespace limbic::archive
