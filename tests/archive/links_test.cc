#include "archive/links.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "archive/terms.h"
#include "archive/text.h"

// This file's own namespace: test programs compile in unity batches.
namespace links_test {

using namespace limbic::archive;

namespace {

const std::vector<std::string> kDates = {"2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04"};

std::vector<Links> LinksOf(const std::vector<Features>& fs, LinkOptions options) {
  std::vector<std::string> dates(kDates.begin(), kDates.begin() + static_cast<long>(fs.size()));
  std::vector<const Features*> ptrs;
  for (const Features& f : fs) ptrs.push_back(&f);
  return ComputeLinks(dates, ptrs, options);
}

Features WithSocial(double engagement, double sentiment) {
  Features f;
  f.engagement = engagement;
  f.sentiment = sentiment;
  return f;
}

}  // namespace

TEST_CASE("semantic links are rounded TF cosines, both ways, above the minimum", "[links]") {
  // Hand-computed: d1 {apple:2, banana:1}, d2 {apple, banana}, d3 {cherry,
  // durian}, d4 {cherry:2, durian, banana}.
  //   d1-d2 3/sqrt(5*2) = 0.9487   d3-d4 3/sqrt(2*6) = 0.8660
  //   d2-d4 1/sqrt(2*6) = 0.2887   d1-d4 1/sqrt(5*6) = 0.1826 (< 0.2)
  std::vector<Features> fs = {
      ComputeFeatures("## 2026-01-01T08:00:00.000Z\napple banana apple"),
      ComputeFeatures("## 2026-01-02T08:00:00.000Z\nApple, banana!"),
      ComputeFeatures("## 2026-01-03T08:00:00.000Z\ncherry durian"),
      ComputeFeatures("## 2026-01-04T08:00:00.000Z\ncherry durian cherry banana"),
  };
  CHECK(SemanticScore(fs[0], fs[1]) == 0.9487);
  CHECK(SemanticScore(fs[0], fs[3]) == 0.1826);
  CHECK(SemanticScore(fs[0], fs[2]) == 0);
  auto links = LinksOf(fs, LinkOptions{5, 0.2, 5});
  using S = std::vector<SemanticLink>;
  CHECK(links[0].semantic == S{{"2026-01-02", 0.9487}});
  CHECK(links[1].semantic == S{{"2026-01-01", 0.9487}, {"2026-01-04", 0.2887}});
  CHECK(links[2].semantic == S{{"2026-01-04", 0.866}});  // older to newer
  CHECK(links[3].semantic == S{{"2026-01-03", 0.866}, {"2026-01-02", 0.2887}});
  // Temporal: the neighbours.
  CHECK_FALSE(links[0].prev);
  CHECK(links[0].next == "2026-01-02");
  CHECK(links[3].prev == "2026-01-03");
  CHECK_FALSE(links[3].next);

  // TF, not TF-IDF: a new document leaves existing pairs' scores alone.
  auto three = LinksOf({fs[0], fs[1], fs[2]}, LinkOptions{5, 0.2, 5});
  CHECK(three[0].semantic == links[0].semantic);
  CHECK(three[1].semantic == S{{"2026-01-01", 0.9487}});
}

TEST_CASE("links of a larger corpus are the pairwise best, computed any way", "[links]") {
  // Through the inverted index (and a dense matrix for the terms that a
  // third of the documents share), in parallel rows, merged: the same as
  // scoring every pair by hand. Each document also has words of its own,
  // so there are more distinct terms than the index starts with room for.
  std::mt19937 rng(5);
  std::vector<std::string> dates;
  std::vector<Features> fs;
  for (int d = 0; d < 60; ++d) {
    dates.push_back(FormatDate(1767225600000 + int64_t{d} * 86400000));
    std::string text;
    for (int w = 0; w < 300; ++w) {
      if (w % 40 == 0) text += rng() % 2 ? "\n[user] " : "\n[assistant] ";
      size_t word = std::min(rng() % 80, rng() % 80) + (d % 3) * 20;
      text += (word % 17 == 0 ? "good" : word % 13 == 0 ? "bad" : "w" + std::to_string(word)) + " ";
      if (w % 20 == 0) text += "own" + std::to_string(d) + "x" + std::to_string(w) + " ";
    }
    fs.push_back(ComputeFeatures(text));
  }
  std::vector<const Features*> ptrs;
  for (const Features& f : fs) ptrs.push_back(&f);
  const LinkOptions options{3, 0.5, 4};
  auto links = ComputeLinks(dates, ptrs, options);
  size_t semantic_links = 0;
  for (size_t i = 0; i < fs.size(); ++i) {
    std::vector<std::pair<double, size_t>> sem, soc;  // (-key, j): sorted best first
    for (size_t j = 0; j < fs.size(); ++j) {
      if (j == i) continue;
      if (double s = SemanticScore(fs[i], fs[j]); s >= options.semantic_min) sem.push_back({-s, j});
      if (double d = SocialDelta(fs[j], fs[i]); d != 0) soc.push_back({-std::fabs(d), j});
    }
    std::sort(sem.begin(), sem.end());
    std::sort(soc.begin(), soc.end());
    std::vector<SemanticLink> want_sem;
    for (size_t k = 0; k < std::min<size_t>(3, sem.size()); ++k)
      want_sem.push_back({dates[sem[k].second], -sem[k].first});
    std::vector<SocialLink> want_soc;
    for (size_t k = 0; k < std::min<size_t>(4, soc.size()); ++k) {
      double d = SocialDelta(fs[soc[k].second], fs[i]);
      want_soc.push_back({dates[soc[k].second], d > 0 ? "inward" : "outward", d});
    }
    INFO("document " << i);
    CHECK(links[i].semantic == want_sem);
    CHECK(links[i].social == want_soc);
    semantic_links += links[i].semantic.size();
  }
  CHECK(semantic_links > 60);  // the corpus does link
}

TEST_CASE("semantic links keep the best k, ties by the earlier date", "[links]") {
  Features same = ComputeFeatures("kiwi mango kiwi");
  auto links = LinksOf({same, same, same, same}, LinkOptions{2, 0.1, 0});
  using S = std::vector<SemanticLink>;
  CHECK(links[0].semantic == S{{"2026-01-02", 1.0}, {"2026-01-03", 1.0}});
  CHECK(links[3].semantic == S{{"2026-01-01", 1.0}, {"2026-01-02", 1.0}});
  CHECK(links[0].social.empty());  // social_k 0
}

TEST_CASE("term vectors are Tokenize counts of the 200 most frequent terms", "[links]") {
  std::mt19937 rng(7);
  std::vector<std::string> vocab;
  for (int i = 0; i < 400; ++i) vocab.push_back("w" + std::to_string(i * 7919 % 1000));
  // Stop words in any case, one-letter and over-long runs, UTF-8 and bytes
  // that are not UTF-8, digits: each must count as Tokenize counts it.
  for (int i = 0; i < 30; ++i)
    vocab.insert(vocab.end(), {"Café", "the", "THE", "With", "x", "東京", "Déjà", "a\xff" "b",
                               "ab\xe2\x82", std::string(65, 'q'), std::string(64, 'r'), "R2D2",
                               "don't", "e-mail"});
  std::string content;
  for (int block = 0; block < 5; ++block) {
    if (block) content += "\n\n";
    content += "## 2026-03-0" + std::to_string(block + 1) + "T10:00:00.000Z\n[user] ";
    for (int i = 0; i < 600; ++i) {
      content += vocab[std::min<size_t>(rng() % vocab.size(), rng() % vocab.size())];
      content += (i % 17 == 0) ? "\n" : (i % 5 == 0 ? ", " : " ");
    }
  }
  Features f = ComputeFeatures(content);

  // The same by hand: count terms outside header lines, keep the top 200.
  std::map<uint64_t, uint32_t> counts;
  size_t start = 0;
  while (start <= content.size()) {
    size_t nl = std::min(content.find('\n', start), content.size());
    std::string line = content.substr(start, nl - start);
    start = nl + 1;
    if (line.starts_with("## 2026-")) continue;
    for (const std::string& t : Tokenize(line)) ++counts[TermId(t)];
  }
  std::vector<std::pair<uint64_t, uint32_t>> all(counts.begin(), counts.end());
  REQUIRE(all.size() > kTermCap);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.second > b.second || (a.second == b.second && a.first < b.first);
  });
  all.resize(kTermCap);
  std::sort(all.begin(), all.end());
  CHECK(f.terms == all);
  uint64_t norm2 = 0;
  for (const auto& [id, n] : all) norm2 += uint64_t{n} * n;
  CHECK(f.norm2 == norm2);
  CHECK(counts.count(TermId("2026")) == 0);  // header lines are not text
}

TEST_CASE("the term counter counts exactly the terms of Tokenize in any bytes", "[links]") {
  std::mt19937 rng(11);
  const std::vector<std::string> pieces = {
      "a", "Z", "q", "7", "0", " ", "\n", ",", "-", "'", "é", "東", "😀", "\xff", "\x80",
      "\xc3", "\xe2\x82", "\xed\xa0\x80" /* surrogate */, "\xc0\xaf" /* overlong */,
      "THE", "and", "Of", std::string(63, 'k'), std::string(70, 'm')};
  for (int round = 0; round < 300; ++round) {
    std::string text;
    size_t want = rng() % 700;
    while (text.size() < want) text += pieces[rng() % pieces.size()];
    std::map<std::string, uint32_t> expected;
    ForEachTerm(text, [&](std::string_view t) { ++expected[std::string(t)]; });

    TermCounter counter(text);
    counter.Scan(0, text.size());
    INFO("round " << round);
    for (const auto& [term, n] : expected) CHECK(counter.Count(TermId(term)) == n);
    auto top = counter.Top(100000);
    CHECK(top.size() == expected.size());
  }
}

TEST_CASE("the term counter's top terms are the most frequent, ties by the smaller id", "[links]") {
  // Counts past 255 (its histogram's last bin), many ties at the cut,
  // stop words among the most frequent, and caps from none to all.
  std::mt19937 rng(13);
  std::vector<std::string> vocab = {"the", "and", "With"};
  for (int i = 0; i < 300; ++i) vocab.push_back("t" + std::to_string(i));
  for (size_t words : {50, 2000, 40000}) {
    std::string text;
    for (size_t i = 0; i < words; ++i) {
      text += vocab[std::min<size_t>(rng() % vocab.size(), rng() % 40 ? rng() % vocab.size() : 3)];
      text += i % 13 == 0 ? "\n" : " ";
    }
    std::map<uint64_t, uint32_t> counts;
    ForEachTerm(text, [&](std::string_view t) { ++counts[TermId(t)]; });
    std::vector<std::pair<uint64_t, uint32_t>> all(counts.begin(), counts.end());
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
      return a.second > b.second || (a.second == b.second && a.first < b.first);
    });
    TermCounter counter(text);
    counter.Scan(0, text.size());
    for (size_t cap : {0, 1, 7, 100, 299, 1000}) {
      INFO(words << " words, cap " << cap);
      std::vector<std::pair<uint64_t, uint32_t>> want(all.begin(), all.begin() + std::min(cap, all.size()));
      std::sort(want.begin(), want.end());
      CHECK(counter.Top(cap) == want);
    }
  }
}

TEST_CASE("the term counter grows past the distinct terms it was sized for", "[links]") {
  // Its table is sized by the text's length for ordinary text; a text of
  // nothing but short distinct terms fills it past half, twice.
  auto name = [](int i) {
    const char* kDigits = "abcdefghijklmnopqrstuvwxyz0123456789";
    return std::string{kDigits[i % 36], kDigits[i / 36 % 36], kDigits[i / 1296 % 36]};
  };
  std::string text;
  for (int i = 0; i < 30000; ++i) text += name(i) + (i % 100 ? " " : " Repeated ");
  TermCounter counter(text);
  counter.Scan(0, text.size());
  CHECK(counter.Count(TermId(name(0))) == 1);
  CHECK(counter.Count(TermId(name(29999))) == 1);
  CHECK(counter.Count(TermId("repeated")) == 300);
  CHECK(counter.Count(TermId(name(30000))) == 0);
  auto top = counter.Top(3);
  REQUIRE(top.size() == 3);
  CHECK(std::count(top.begin(), top.end(), std::make_pair(TermId("repeated"), uint32_t{300})) == 1);
  std::set<std::string> distinct;  // "the", "and" and others are stop words
  ForEachTerm(text, [&](std::string_view t) { distinct.insert(std::string(t)); });
  CHECK(counter.Top(100000).size() == distinct.size());
}

TEST_CASE("sentiment words are terms, not stop words", "[links]") {
  for (std::string_view w : kPositiveWords) CHECK(Tokenize(w) == std::vector<std::string>{std::string(w)});
  for (std::string_view w : kNegativeWords) CHECK(Tokenize(w) == std::vector<std::string>{std::string(w)});
  CHECK(ComputeFeatures("Great, GOOD; bad").sentiment == (2.0 - 1) / (3 + 2));
}

TEST_CASE("engagement is the average turn length, else paragraph length", "[links]") {
  // Turns run to the next tag over blank lines: 3 + 14 bytes, then 2.
  Features turns = ComputeFeatures(
      "## 2026-01-01T00:00:00.000Z\n[user] abc\ncontinued here\n\n[assistant] de");
  CHECK(turns.engagement == Approx(9.5 / 209.5).epsilon(1e-12));
  // A source tag is a turn too; a header ends a turn.
  Features source = ComputeFeatures(
      "## 2026-01-01T00:00:00.000Z\n[email] 1234\n\n## 2026-01-01T01:00:00.000Z\nnot in a turn");
  CHECK(source.engagement == Approx(4.0 / 204).epsilon(1e-12));
  // No turns: paragraphs (13 + 11 bytes, then 11).
  Features paragraphs = ComputeFeatures("para one line\nsecond line\n\nsecond para");
  CHECK(paragraphs.engagement == Approx(17.5 / 217.5).epsilon(1e-12));
  // "[ x]" and "[]" are not tags.
  CHECK(ComputeFeatures("[ x] ab").engagement == Approx(7.0 / 207).epsilon(1e-12));
  CHECK(ComputeFeatures("").engagement == 0);
}

TEST_CASE("a warmer, more engaged day's social link to a cooler one is inward, as in COMB",
          "[links]") {
  // X: turns of 3 and 5 bytes (engagement 4/204), sentiment (0-2)/(0+2+2).
  // Y: one 196-byte turn (196/396), sentiment (2-0)/(2+0+2).
  Features x = ComputeFeatures("[user] bad\n[assistant] wrong");
  Features y = ComputeFeatures("[user] great thanks " + std::string(183, 'x'));
  CHECK(x.sentiment == -0.5);
  CHECK(y.sentiment == 0.5);
  // 0.6 * (196/396 - 4/204) + 0.4 * (0.5 + 0.5) = 0.68520...
  CHECK(SocialDelta(x, y) == 0.6852);
  CHECK(SocialDelta(y, x) == -0.6852);
  auto links = LinksOf({x, y}, LinkOptions{5, 0.1, 5});
  // COMB stores on a document the change from its target to it: Y grew
  // warmer since X (inward), X is cooler than Y (outward).
  CHECK(links[1].social == std::vector<SocialLink>{{"2026-01-01", "inward", 0.6852}});
  CHECK(links[0].social == std::vector<SocialLink>{{"2026-01-02", "outward", -0.6852}});
}

TEST_CASE("social links keep the largest deltas, drop zeros and clamp to one", "[links]") {
  auto links = LinksOf({WithSocial(0.1, 0), WithSocial(0.5, 0), WithSocial(0.9, 0),
                        WithSocial(0.5, 0)},
                       LinkOptions{5, 0.1, 2});
  using So = std::vector<SocialLink>;
  CHECK(links[0].social == So{{"2026-01-03", "outward", -0.48}, {"2026-01-02", "outward", -0.24}});
  CHECK(links[2].social == So{{"2026-01-01", "inward", 0.48}, {"2026-01-02", "inward", 0.24}});
  // d2 and d4 are alike: no link between them; |0.24| ties go to the earlier date.
  CHECK(links[1].social == So{{"2026-01-01", "inward", 0.24}, {"2026-01-03", "outward", -0.24}});
  CHECK(links[3].social == So{{"2026-01-01", "inward", 0.24}, {"2026-01-03", "outward", -0.24}});

  CHECK(SocialDelta(WithSocial(0, -0.99), WithSocial(1, 0.99)) == 1.0);
  CHECK(SocialDelta(WithSocial(1, 0.99), WithSocial(0, -0.99)) == -1.0);
}

TEST_CASE("a document of unknown content is a temporal neighbour only", "[links]") {
  Features a = ComputeFeatures("alpha beta"), c = ComputeFeatures("alpha beta gamma");
  a.engagement = 0.2;
  auto links = ComputeLinks(kDates, {&a, nullptr, &c, nullptr}, LinkOptions{});
  CHECK(links[1].prev == "2026-01-01");
  CHECK(links[1].semantic.empty());
  CHECK(links[1].social.empty());
  REQUIRE(links[0].semantic.size() == 1);
  CHECK(links[0].semantic[0].target == "2026-01-03");
  CHECK(links[2].social.size() == 1);
}

TEST_CASE("stored links agree with links computed without unknown documents", "[links]") {
  using S = std::vector<SemanticLink>;
  const std::vector<std::string> unknown = {"2026-01-09"};
  S expected = {{"2026-01-01", 0.9}, {"2026-01-02", 0.5}, {"2026-01-03", 0.2}};
  // Full list of k = 3 with the unknown document in it.
  CHECK(LinksAgree(S{{"2026-01-01", 0.9}, {"2026-01-09", 0.6}, {"2026-01-02", 0.5}}, expected,
                   unknown, 3));
  // A list that is not full must hold every known candidate.
  CHECK_FALSE(LinksAgree(S{{"2026-01-01", 0.9}, {"2026-01-09", 0.6}}, expected, unknown, 5));
  CHECK_FALSE(LinksAgree(S{{"2026-01-02", 0.5}, {"2026-01-01", 0.9}, {"2026-01-03", 0.2}},
                         expected, unknown, 3));
  CHECK_FALSE(LinksAgree(S{{"2026-01-01", 0.9001}, {"2026-01-02", 0.5}, {"2026-01-03", 0.2}},
                         expected, unknown, 3));
  CHECK(LinksAgree(expected, expected, {}, 3));
  CHECK_FALSE(LinksAgree(expected, expected, {}, 2));  // more than k
}

}  // namespace links_test
