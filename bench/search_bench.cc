// BM25 search over archived days, printed as JSON.
//
// Indexes --docs day documents of ~--doc-kb KB each, one Index call each
// (as Refresh does), then times --queries searches of 1-4 terms, k = 10,
// twice: through a read-only open made while the writer is still open
// right after the burst (a command while `limbic run` indexes; its
// compactions are still running), and through the index reopened after the
// writer closed. Each "open_ms" is the OpenBm25 call alone.
// Text is English-like: words drawn with a Zipf distribution (s = 1.07)
// from a fixed list of common English words followed by made-up words of
// 2-4 syllables, --vocab words in all; sentences of 6-20 words. Query terms
// come from the same distribution (stop words skipped), so most queries
// name terms that occur in most days: the slow case for BM25. Everything
// is drawn from one seeded generator, so runs are repeatable.
//
//   limbic_search_bench [--dir D] [--docs N] [--doc-kb KB] [--queries Q]
//                       [--vocab V] [--seed S]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "bench/report.h"
#include "archive/search.h"
#include "base/time.h"

using namespace limbic;
using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

namespace {

double Ms(SteadyClock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The most frequent English words, most frequent first: the head of the
// Zipf curve, stop words included as in real text.
const char* const kCommon[] = {
    "the",     "of",      "and",    "to",      "a",      "in",     "is",     "it",      "that",
    "was",     "for",     "on",     "with",    "as",     "he",     "be",     "at",      "by",
    "this",    "had",     "not",    "are",     "but",    "from",   "or",     "have",    "an",
    "they",    "which",   "you",    "were",    "her",    "all",    "she",    "there",   "would",
    "their",   "we",      "him",    "been",    "has",    "when",   "who",    "will",    "more",
    "no",      "if",      "out",    "so",      "said",   "what",   "up",     "its",     "about",
    "into",    "than",    "them",   "can",     "only",   "other",  "new",    "some",    "could",
    "time",    "these",   "two",    "may",     "then",   "do",     "first",  "any",     "my",
    "now",     "such",    "like",   "our",     "over",   "man",    "me",     "even",    "most",
    "made",    "after",   "also",   "did",     "many",   "before", "must",   "through", "back",
    "years",   "where",   "much",   "your",    "way",    "well",   "down",   "should",  "because",
    "each",    "just",    "those",  "people",  "how",    "too",    "little", "state",   "good",
    "very",    "make",    "world",  "still",   "own",    "see",    "work",   "long",    "get",
    "here",    "between", "both",   "life",    "being",  "under",  "never",  "day",     "same",
    "another", "know",    "while",  "last",    "might",  "us",     "great",  "old",     "year",
    "off",     "come",    "since",  "against", "go",     "came",   "right",  "used",    "take",
    "three",   "deploy",  "thread", "percept", "server", "build",  "review", "meeting", "message",
    "error",   "release", "branch", "memory",  "user",   "agent",  "task",   "issue",   "test",
    "query",   "index",   "search", "archive", "update"};

const char* const kSyllables[] = {"ka",  "lo",  "mi",  "ren", "tor", "sa", "vel", "den",
                                  "ri",  "po",  "lan", "ter", "ge",  "ba", "mon", "sti",
                                  "qua", "ex",  "or",  "un",  "fa",  "zu", "pre", "dol",
                                  "ni",  "cas", "tra", "bel", "hu",  "wen"};

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  uint64_t Next() { return g_(); }
  double Uniform() { return static_cast<double>(g_() >> 11) * 0x1.0p-53; }  // [0, 1), portable
  size_t Below(size_t n) { return static_cast<size_t>(g_() % n); }

 private:
  std::mt19937_64 g_;
};

std::vector<std::string> Vocabulary(size_t n, Rng& rng) {
  std::vector<std::string> words(std::begin(kCommon), std::end(kCommon));
  std::set<std::string> seen(words.begin(), words.end());
  while (words.size() < n) {
    std::string w;
    for (size_t s = 2 + rng.Below(3); s > 0; --s) w += kSyllables[rng.Below(std::size(kSyllables))];
    if (seen.insert(w).second) words.push_back(w);
  }
  words.resize(n);
  return words;
}

class Zipf {
 public:
  Zipf(size_t n, double s) : cdf_(n) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) cdf_[i] = sum += 1 / std::pow(static_cast<double>(i + 1), s);
    for (double& c : cdf_) c /= sum;
  }
  size_t Draw(Rng& rng) const {
    auto it = std::upper_bound(cdf_.begin(), cdf_.end(), rng.Uniform());
    return std::min(static_cast<size_t>(it - cdf_.begin()), cdf_.size() - 1);
  }

 private:
  std::vector<double> cdf_;
};

std::string DayText(size_t bytes, const std::vector<std::string>& words, const Zipf& zipf,
                    Rng& rng) {
  std::string text;
  text.reserve(bytes + 256);
  while (text.size() < bytes) {
    size_t n = 6 + rng.Below(15);
    for (size_t i = 0; i < n; ++i) {
      std::string w = words[zipf.Draw(rng)];
      if (i == 0) w[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(w[0])));
      text += w;
      text += i + 1 < n ? (rng.Below(12) == 0 ? ", " : " ") : ".";
    }
    text += rng.Below(6) == 0 ? "\n\n" : " ";
  }
  return text;
}

// YYYY-MM-DD of day 0 = 2023-01-01 and the days after it.
std::string Date(size_t day) {
  constexpr TimeMs kJan2023 = 1672531200000, kDay = 86400000;
  return FormatTime(kJan2023 + static_cast<TimeMs>(day) * kDay).substr(0, 10);
}

uint64_t DirBytes(const std::string& dir) {
  uint64_t n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) n += e.file_size();
  return n;
}

// Opens the index and runs `queries`, k = 10: the open time and latencies.
Result<json> TimeSearches(const archive::Bm25Options& options,
                          const std::vector<std::string>& queries) {
  auto t_open = SteadyClock::now();
  auto backend = archive::OpenBm25(options);
  if (!backend.ok()) return backend.status();
  const double open_ms = Ms(SteadyClock::now() - t_open);
  std::vector<double> ms;
  size_t hits = 0, empty = 0;
  for (const std::string& q : queries) {
    auto t0 = SteadyClock::now();
    auto r = (*backend)->Search(q, 10);
    ms.push_back(Ms(SteadyClock::now() - t0));
    if (!r.ok()) return r.status();
    hits += r->size();
    empty += r->empty();
  }
  return json{
      {"open_ms", open_ms},
      {"queries", queries.size()},
      {"k", 10},
      {"hits_per_query",
       queries.empty() ? 0 : static_cast<double>(hits) / static_cast<double>(queries.size())},
      {"queries_without_hits", empty},
      {"search_p50_ms", bench::Quantile(ms, 0.5)},
      {"search_p99_ms", bench::Quantile(ms, 0.99)},
      {"search_max_ms", bench::Quantile(ms, 1.0)}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "bench-search-data";
  size_t docs = 1000, doc_kb = 50, queries = 1000, vocab = 30000;
  uint64_t seed = 42;
  std::string command = argv[0];
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    command += " " + k + " " + v;
    if (k == "--dir")
      dir = v;
    else if (k == "--docs")
      docs = std::stoul(v);
    else if (k == "--doc-kb")
      doc_kb = std::stoul(v);
    else if (k == "--queries")
      queries = std::stoul(v);
    else if (k == "--vocab")
      vocab = std::stoul(v);
    else if (k == "--seed")
      seed = std::stoull(v);
    else {
      std::fprintf(stderr,
                   "usage: limbic_search_bench [--dir D] [--docs N] [--doc-kb KB] [--queries Q] "
                   "[--vocab V] [--seed S]\n");
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "%s: an option without a value\n", argv[0]);
    return 2;
  }
  std::filesystem::remove_all(dir);
  Rng rng(seed);
  const std::vector<std::string> words = Vocabulary(vocab, rng);
  const Zipf zipf(words.size(), 1.07);
  archive::Bm25Options options;
  options.path = dir;
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  };

  std::vector<std::string> query_list;
  for (size_t q = 0; q < queries; ++q) {
    std::string query;
    for (size_t n = 1 + rng.Below(4); n > 0;) {
      const std::string& w = words[zipf.Draw(rng)];
      if (archive::IsStopWord(w)) continue;
      query += (query.empty() ? "" : " ") + w;
      --n;
    }
    query_list.push_back(std::move(query));
  }
  json out = {{"command", command}, {"docs", docs}, {"vocab", words.size()}};

  // Index, one document at a time, as Refresh does.
  std::vector<double> index_ms;
  uint64_t text_bytes = 0;
  double total_index_ms = 0;
  {
    auto writer = archive::OpenBm25(options);
    if (!writer.ok()) return fail(writer.status());
    for (size_t d = 0; d < docs; ++d) {
      archive::SearchDoc doc{"archive:" + Date(d), DayText(doc_kb * 1024, words, zipf, rng),
                             Date(d), "1"};
      text_bytes += doc.text.size();
      auto t0 = SteadyClock::now();
      Status s = (*writer)->Index(doc);
      index_ms.push_back(Ms(SteadyClock::now() - t0));
      total_index_ms += index_ms.back();
      if (!s.ok()) return fail(s);
    }
    out["text_mb"] = static_cast<double>(text_bytes) / (1 << 20);
    out["index_total_s"] = total_index_ms / 1000;
    out["index_doc_p50_ms"] = bench::Quantile(index_ms, 0.5);
    out["index_doc_p99_ms"] = bench::Quantile(index_ms, 0.99);
    // A command's read-only open while `limbic run` holds the index open
    // with unflushed writes.
    archive::Bm25Options ro = options;
    ro.read_only = true;
    auto r = TimeSearches(ro, query_list);
    if (!r.ok()) return fail(r.status());
    out["read_only_while_writing"] = *r;
  }
  out["index_mb_on_disk"] = static_cast<double>(DirBytes(dir)) / (1 << 20);

  // The index reopened after the writer closed.
  auto r = TimeSearches(options, query_list);
  if (!r.ok()) return fail(r.status());
  out["reopened"] = *r;
  std::printf("%s\n", out.dump(2).c_str());
  std::filesystem::remove_all(dir);
  return 0;
}
