// The world model: extraction and consolidation of a 30-day synthetic
// daily log with the heuristic extractor (target: the month in under 2 s).
// Prints one JSON object.
//
// Each day is a Markdown file of --lines lines (default 200): bullets about
// a cast of people, companies, repositories, tools, #tags and [[links]],
// with structure the heuristic rules know ("X joined Y", "deployed R using
// T", @handles, URLs) and plain lines with no entity. Most lines repeat the
// cast in new combinations; a few per day bring a new person or company,
// so pages, graph and surprise all see both the known and the novel. One
// seeded generator: runs are repeatable.
//
// Timed: WorldModel::Extract of each day in order (FileInput included),
// then one Consolidate (MEMORY.md and entity decay), on a fresh memory dir.
//
//   limbic_world_bench [--dir D] [--days N] [--lines L] [--seed S]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench/report.h"
#include "world/day_input.h"
#include "world/world.h"
#include "base/time.h"

using namespace limbic;
using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

namespace {

double Ms(SteadyClock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

const char* kFirst[] = {"Alice", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas",
                        "Keiko", "Lars", "Maya", "Nikos", "Olga", "Pavel", "Quinn", "Rosa", "Sven", "Tara"};
const char* kLast[] = {"Chen", "Okafor", "Rossi", "Ivanov", "Garcia", "Haddad", "Hopper", "Tanaka", "Silva", "Berg"};
const char* kCompanies[] = {"Acme Corp", "Globex Inc", "Initech Labs", "Umbrella Group", "Hooli Technologies",
                            "Stark Systems", "Wayne Software", "Tyrell Corp"};
const char* kTools[] = {"PostgreSQL", "Redis", "Kafka", "Docker", "Kubernetes", "Terraform", "Python", "Rust",
                        "GitHub", "Slack", "Grafana", "RocksDB"};
const char* kRepos[] = {"acme/billing", "acme/gateway", "globex/search", "initech/tps", "limbic/core",
                        "limbic/mcp", "hooli/nucleus", "stark/armor"};
const char* kTags[] = {"incident", "release", "oncall", "perf", "security", "hiring", "roadmap", "budget"};
const char* kConcepts[] = {"Event Sourcing", "Backpressure", "Consensus", "Rate Limiting", "Vector Search"};
const char* kPlain[] = {"Spent the afternoon on code review.", "Lunch break, then back to the queue.",
                        "Inbox zero before the weekly sync.", "Quiet day, mostly reading.",
                        "Cleaned up old branches and notes."};

template <size_t N>
const char* Pick(std::mt19937_64& rng, const char* (&arr)[N]) {
  return arr[std::uniform_int_distribution<size_t>(0, N - 1)(rng)];
}

std::string Person(std::mt19937_64& rng) { return std::string(Pick(rng, kFirst)) + " " + Pick(rng, kLast); }

std::string Line(std::mt19937_64& rng, int day, int i) {
  std::string p = Person(rng), q = Person(rng);
  std::string repo = Pick(rng, kRepos);
  switch (std::uniform_int_distribution<int>(0, 11)(rng)) {
    case 0: return "- Met with " + p + " about " + repo + ".";
    case 1: return "- " + p + " joined " + Pick(rng, kCompanies) + " as a consultant.";
    case 2: return "- " + p + " fixed the flaky test in " + repo + " #" + Pick(rng, kTags);
    case 3: return "- Deployed " + repo + " using " + Pick(rng, kTools) + " after review.";
    case 4: {
      std::string handle = std::string(Pick(rng, kFirst)) + "_" + std::to_string(i % 7);
      for (char& c : handle) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return "- @" + handle + " asked about [[" + Pick(rng, kConcepts) + "]] in the standup.";
    }
    case 5: return "- Read https://github.com/" + repo + "/pull/" + std::to_string(100 + day * 10 + i % 10);
    case 6: return "- " + p + " reviewed the migration plan with " + q + ".";
    case 7: return "- " + std::string(Pick(rng, kCompanies)) + " uses " + Pick(rng, kTools) + " for " + repo + ".";
    case 8: {
      // Someone new: a person never seen before.
      std::string who = std::string("Newcomer") + static_cast<char>('A' + day % 26) + std::to_string(i) + " " +
                        Pick(rng, kLast);
      return "- Met with " + who + " from " + Pick(rng, kCompanies) + " about the #" + Pick(rng, kTags) + " plan.";
    }
    case 9: return "- " + p + " said the " + Pick(rng, kTools) + " upgrade is done.";
    case 10: return std::string(Pick(rng, kPlain));
    default: return "- Worked on " + repo + " with " + p + " #" + Pick(rng, kTags);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "bench-world-data";
  int days = 30, lines = 200;
  uint64_t seed = 42;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--dir")) dir = argv[i + 1];
    else if (!std::strcmp(argv[i], "--days")) days = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--lines")) lines = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seed")) seed = std::strtoull(argv[i + 1], nullptr, 10);
    else {
      std::fprintf(stderr, "usage: limbic_world_bench [--dir D] [--days N] [--lines L] [--seed S]\n");
      return 2;
    }
  }
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/logs");
  std::mt19937_64 rng(seed);
  TimeMs first = *ParseDate("2026-10-01");
  std::vector<std::string> files;
  uint64_t bytes = 0;
  for (int d = 0; d < days; ++d) {
    std::string date = FormatDate(first + TimeMs{d} * 86400000);
    std::string path = dir + "/logs/" + date + ".md";
    std::ofstream out(path);
    out << "# " << date << "\n\n## Morning\n";
    for (int i = 0; i < lines; ++i) {
      if (i == lines / 2) out << "\n## Afternoon\n";
      out << Line(rng, d, i) << "\n";
    }
    out.flush();
    bytes += std::filesystem::file_size(path);
    files.push_back(path);
  }

  auto model = world::WorldModel::Open(dir + "/memory", world::WorldOptions{}, nullptr);
  if (!model.ok()) {
    std::fprintf(stderr, "open: %s\n", model.status().ToString().c_str());
    return 1;
  }
  std::vector<double> per_day;
  size_t entities = 0, events = 0, surprising = 0;
  auto start = SteadyClock::now();
  for (const std::string& f : files) {
    auto t0 = SteadyClock::now();
    auto input = world::FileInput(f, "", 64 << 20);
    auto r = input.ok() ? (*model)->Extract(*input) : Result<json>(input.status());
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", f.c_str(), r.status().ToString().c_str());
      return 1;
    }
    per_day.push_back(Ms(SteadyClock::now() - t0));
    entities += (*r)["entities"].get<size_t>();
    events += (*r)["events"].get<size_t>();
    surprising += (*r)["surprising"].get<size_t>();
  }
  double extract_ms = Ms(SteadyClock::now() - start);
  auto t0 = SteadyClock::now();
  std::string last = FormatDate(first + TimeMs{days} * 86400000);
  auto c = (*model)->Consolidate(last);
  double consolidate_ms = Ms(SteadyClock::now() - t0);
  if (!c.ok()) {
    std::fprintf(stderr, "consolidate: %s\n", c.status().ToString().c_str());
    return 1;
  }
  double total_ms = extract_ms + consolidate_ms;
  auto pages = (*model)->Entities(std::nullopt, false, last);
  json out = {{"bench", "world"},
              {"days", days},
              {"lines_per_day", lines},
              {"log_bytes", bytes},
              {"entities_extracted", entities},
              {"pages", pages.ok() ? (*pages)["entities"].size() : 0},
              {"events", events},
              {"surprising", surprising},
              {"memory_md_added", (*c)["added"]},
              {"extract_ms", extract_ms},
              {"extract_day_p50_ms", bench::Quantile(per_day, 0.5)},
              {"extract_day_max_ms", *std::max_element(per_day.begin(), per_day.end())},
              {"consolidate_ms", consolidate_ms},
              {"total_ms", total_ms},
              {"lines_per_s", days * lines / (total_ms / 1000.0)},
              {"target_total_ms", 2000},
              {"met", total_ms < 2000}};
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
