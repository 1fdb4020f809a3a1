// The archive's figures, printed as one JSON line:
//
//   rollup    a year of days (--days, 365) created one at a time: each day's
//             entries (--entries per day, ~--doc-kb KB in all) are staged,
//             then the day is rolled up; seconds in Rollup, in total and
//             the slowest one, and documents written. Staging is timed
//             apart (each append is fsynced).
//   rerollup  one more entry for day 10, rolled up: every later day is
//             re-hashed and rewritten.
//   verify    Verify of the whole archive by a freshly opened Archive
//             (--runs times; the files are in the page cache after the
//             first): MB/s = document bytes / seconds, the median run; and
//             MB per CPU second, which the machine's load changes less.
//   one_thread_*, links_cpu_ms
//             Verify's parts one at a time, in CPU time: reading and
//             parsing the files, SHA-256, the features links need, and the
//             links from those features.
//
// Text is synthetic: "[user]" / "[assistant]" turns of words drawn from a
// Zipf distribution over 20,000 made-up words plus the English stop words
// and the sentiment words of links.h, so term vectors and links do real
// work. The archive lives in --dir (default: a fresh dir under /tmp,
// removed afterwards unless --keep).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <time.h>
#include <vector>

#include "archive/archive.h"
#include "archive/doc_files.h"
#include "archive/links.h"

using namespace limbic;
using namespace limbic::archive;
using SteadyClock = std::chrono::steady_clock;

namespace {

double Seconds(SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); }

// CPU seconds of this process (or thread) so far, user and system, to the
// nanosecond (getrusage may count in scheduler ticks).
double CpuSeconds(clockid_t clock = CLOCK_PROCESS_CPUTIME_ID) {
  timespec t;
  clock_gettime(clock, &t);
  return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}
double ThreadCpuSeconds() { return CpuSeconds(CLOCK_THREAD_CPUTIME_ID); }

struct Flags {
  int days = 365;
  int entries = 25;
  int doc_kb = 50;
  int runs = 5;
  std::string dir;
  bool keep = false;
  bool verify_only = false;  // --dir holds an archive already: only verify it
};

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--days") f.days = std::stoi(value());
    else if (a == "--entries") f.entries = std::stoi(value());
    else if (a == "--doc-kb") f.doc_kb = std::stoi(value());
    else if (a == "--runs") f.runs = std::stoi(value());
    else if (a == "--dir") f.dir = value();
    else if (a == "--keep") f.keep = true;
    else if (a == "--verify-only") f.verify_only = true;
    else {
      std::fprintf(stderr,
                   "usage: limbic_archive_bench [--days N] [--entries N] [--doc-kb N] [--runs N] "
                   "[--dir DIR] [--keep] [--verify-only]\n");
      std::exit(2);
    }
  }
  return f;
}

// Words with Zipf(1) frequencies.
class Words {
 public:
  explicit Words(uint32_t seed) : rng_(seed) {
    static const char* kSyllables[] = {"ka", "lo", "mi", "ren", "to", "sa", "vu", "ne",
                                       "dri", "po", "qua", "zel", "fi", "gor", "hu", "bel"};
    for (const char* w : {"the", "and", "of", "to", "in", "is", "it", "that", "for", "with"})
      words_.push_back(w);
    for (std::string_view w : kPositiveWords) words_.emplace_back(w);
    for (std::string_view w : kNegativeWords) words_.emplace_back(w);
    std::shuffle(words_.begin(), words_.end(), rng_);
    for (uint32_t i = 0; words_.size() < 20000; ++i) {
      std::string w;
      for (uint32_t n = i + 1; n; n /= 16) w += kSyllables[n % 16];
      words_.push_back(w);
    }
    double sum = 0;
    for (size_t r = 0; r < words_.size(); ++r) cumulative_.push_back(sum += 1.0 / double(r + 1));
  }
  const std::string& Next() {
    double x = std::uniform_real_distribution<double>(0, cumulative_.back())(rng_);
    size_t r = std::lower_bound(cumulative_.begin(), cumulative_.end(), x) - cumulative_.begin();
    return words_[std::min(r, words_.size() - 1)];
  }
  std::mt19937& rng() { return rng_; }

 private:
  std::mt19937 rng_;
  std::vector<std::string> words_;
  std::vector<double> cumulative_;
};

// One entry of about `bytes`: alternating turns of varying length, a fifth
// of the words from the day's topic (so some days are alike and others
// not, and semantic links have something to find).
std::string EntryText(Words& words, const std::vector<std::string>& topic, size_t bytes) {
  std::string text;
  bool user = true;
  while (text.size() < bytes) {
    if (!text.empty()) text += '\n';
    text += user ? "[user]" : "[assistant]";
    size_t turn = 40 + words.rng()() % (user ? 200 : 600);
    for (size_t start = text.size(); text.size() - start < turn;) {
      text += ' ';
      text += words.rng()() % 5 == 0 ? topic[words.rng()() % topic.size()] : words.Next();
    }
    user = !user;
  }
  return text;
}

// Twelve topics of 30 words each; a day draws from one of them.
std::vector<std::string> Topic(Words& words, int day) {
  std::mt19937 rng(static_cast<uint32_t>(day % 12));
  std::vector<std::string> topic;
  for (int i = 0; i < 30; ++i) topic.push_back("topic" + std::to_string(day % 12) + "w" + std::to_string(rng() % 1000));
  return topic;
}

template <typename T>
T Check(Result<T> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, r.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags = ParseFlags(argc, argv);
  bool made_dir = flags.dir.empty();
  if (made_dir) {
    char tmpl[] = "/tmp/limbic-archive-bench-XXXXXX";
    flags.dir = mkdtemp(tmpl);
  }
  ArchiveOptions options;
  options.dir = flags.dir + "/archive";
  if (flags.verify_only) flags.days = 0;
  auto archive = Check(Archive::Open(options), "open");

  const TimeMs start = 1767225600000;  // 2026-01-01
  const TimeMs kDay = 86400000;
  // Headers, JSON escapes and links add ~6%: aim the text a little lower.
  const size_t entry_bytes = size_t(flags.doc_kb) * 900 / size_t(flags.entries);
  Words words(42);
  double staging_s = 0, rollup_s = 0, slowest_s = 0;
  size_t written = 0;
  for (int d = 0; d < flags.days; ++d) {
    const std::string date = FormatDate(start + d * kDay);
    auto t0 = SteadyClock::now();
    const std::vector<std::string> topic = Topic(words, d);
    for (int e = 0; e < flags.entries; ++e) {
      Entry entry = MakeEntry(start + d * kDay + e * 60000, EntryText(words, topic, entry_bytes),
                              json{{"seq", uint64_t(d) * 1000 + uint64_t(e)}});
      if (Status s = archive->staging().Append(date, entry); !s.ok()) {
        std::fprintf(stderr, "stage: %s\n", s.ToString().c_str());
        return 1;
      }
    }
    auto t1 = SteadyClock::now();
    RollupResult r = Check(archive->Rollup(date), "rollup");
    auto t2 = SteadyClock::now();
    staging_s += Seconds(t1 - t0);
    rollup_s += Seconds(t2 - t1);
    slowest_s = std::max(slowest_s, Seconds(t2 - t1));
    written += r.rewritten;
  }

  // One late entry for an early day: everything after it is re-hashed.
  RollupResult re;
  double rerollup_s = 0;
  if (!flags.verify_only) {
  const std::string early = FormatDate(start + 9 * kDay);
  if (Status s = archive->staging().Append(early, MakeEntry(start + 9 * kDay + 86000000,
                                                            EntryText(words, Topic(words, 9), entry_bytes)));
      !s.ok()) {
    std::fprintf(stderr, "stage: %s\n", s.ToString().c_str());
    return 1;
  }
  auto t0 = SteadyClock::now();
  re = Check(archive->Rollup(early), "re-rollup");
  rerollup_s = Seconds(SteadyClock::now() - t0);
  }
  archive.reset();

  std::vector<double> mbps, secs, cpu;
  VerifyReport report;
  for (int run = 0; run < flags.runs; ++run) {
    options.read_only = true;
    auto fresh = Check(Archive::Open(options), "open");
    auto t = SteadyClock::now();
    double c = CpuSeconds();
    report = Check(fresh->Verify(), "verify");
    double s = Seconds(SteadyClock::now() - t);
    cpu.push_back(CpuSeconds() - c);
    secs.push_back(s);
    mbps.push_back(double(report.bytes) / 1e6 / s);
    if (!report.ok()) {
      std::fprintf(stderr, "verify found %zu problems, first: %s %s\n", report.problems.size(),
                   report.problems[0].date.c_str(), report.problems[0].what.c_str());
      return 1;
    }
  }

  // Where Verify's time goes, one thread, in CPU seconds: reading and
  // parsing the files (page cache), SHA-256 of the contents, the features
  // links need (terms, engagement, mood), and the links of all documents
  // from those features (on all cores: CPU seconds of the process).
  std::vector<std::string> dates, contents;
  {
    options.read_only = true;
    auto fresh = Check(Archive::Open(options), "open");
    dates = Check(fresh->Dates(), "dates");
    for (const std::string& date : dates) contents.push_back(Check(fresh->Load(date), "load").content);
  }
  uint64_t content_bytes = 0;
  for (const std::string& c : contents) content_bytes += c.size();
  DocFiles files(options.dir + "/archive", Env::Default());
  DocReader reader(&files);
  double c0 = ThreadCpuSeconds();
  for (const std::string& date : dates) Check(reader.Read(files.PathOf(date), nullptr), "read");
  double read_s = ThreadCpuSeconds() - c0;
  c0 = ThreadCpuSeconds();
  std::string digest;
  for (const std::string& c : contents) digest = ChainHash(digest, c);
  double sha_s = ThreadCpuSeconds() - c0;
  c0 = ThreadCpuSeconds();
  std::vector<Features> features;
  for (const std::string& c : contents) features.push_back(ComputeFeatures(c));
  double features_s = ThreadCpuSeconds() - c0;
  std::vector<const Features*> feature_ptrs;
  for (const Features& f : features) feature_ptrs.push_back(&f);
  c0 = CpuSeconds();
  ComputeLinks(dates, feature_ptrs, LinkOptions{options.semantic_k, options.semantic_min, options.social_k});
  double links_s = CpuSeconds() - c0;

  json out = {
      {"bench", "archive"},
      {"days", flags.days},
      {"entries_per_day", flags.entries},
      {"document_bytes", report.bytes},
      {"avg_document_kb", double(report.bytes) / 1024 / double(std::max<size_t>(1, report.documents))},
      {"staging_s", staging_s},
      {"rollup_s", rollup_s},
      {"rollup_avg_ms", rollup_s * 1000 / std::max(1, flags.days)},
      {"rollup_slowest_ms", slowest_s * 1000},
      {"rollup_documents_written", written},
      {"rerollup_s", rerollup_s},
      {"rerollup_documents_written", re.rewritten},
      {"verify_runs_s", secs},
      {"verify_median_s", Median(secs)},
      {"verify_mb_per_s", Median(mbps)},
      // What the machine's load does not change: document MB per CPU second.
      {"verify_mb_per_cpu_s", double(report.bytes) / 1e6 / Median(cpu)},
      {"threads", std::thread::hardware_concurrency()},
      {"one_thread_read_parse_mb_per_s", double(report.bytes) / 1e6 / read_s},
      {"one_thread_sha256_mb_per_s", double(content_bytes) / 1e6 / sha_s},
      {"one_thread_features_mb_per_s", double(content_bytes) / 1e6 / features_s},
      {"links_cpu_ms", links_s * 1000},
  };
  std::printf("%s\n", out.dump().c_str());
  if (made_dir && !flags.keep && !flags.verify_only) std::filesystem::remove_all(flags.dir);
  return 0;
}
