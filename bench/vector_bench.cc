// The vector index (memory/vector_index.h): exact and HNSW search
// latency, HNSW build time and recall, save and load, as Markdown tables.
//
// For each size N of --sizes, one index (exact_limit = N - 1) is filled with
// N - 1 entries and timed for exact search (p50/p99 of --queries searches,
// k = 10) and an exact-mode Save and Load. The N-th Upsert then builds the
// graph (timed: "build"); then HNSW search p50/p99 unfiltered and with a
// filter that half the entries pass, recall@10 of the unfiltered searches
// against SearchExact, and an approximate-mode Save and Load.
//
// The vectors are synthetic, as the embedders are not in this benchmark:
// --clusters centres drawn uniformly on the unit sphere, each entry a
// centre plus gaussian noise of norm ~--spread, normalised (spread 1 gives
// a cosine of ~0.7 to its centre and ~0.5 to its cluster's other entries,
// near what text embeddings of related texts show). Queries are fresh
// draws from the same distribution. One seeded generator (Box-Muller over
// mt19937_64) makes runs repeatable.
//
//   limbic_vector_bench [--dir D] [--sizes 10000,100000] [--dims 384]
//                       [--queries 200] [--clusters 200] [--spread 1.0]
//                       [--ef-search E] [--seed S]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench/report.h"
#include "memory/embedder.h"
#include "memory/vector_index.h"

using namespace limbic;
using namespace limbic::memory;
using SteadyClock = std::chrono::steady_clock;

namespace {

double Ms(SteadyClock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

class Gaussian {
 public:
  explicit Gaussian(uint64_t seed) : g_(seed) {}
  float Next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = (static_cast<double>(g_() >> 11) + 1) * 0x1.0p-53;  // (0, 1]
    double u2 = static_cast<double>(g_() >> 11) * 0x1.0p-53;
    double r = std::sqrt(-2 * std::log(u1));
    spare_ = static_cast<float>(r * std::sin(2 * M_PI * u2));
    has_spare_ = true;
    return static_cast<float>(r * std::cos(2 * M_PI * u2));
  }
  size_t Below(size_t n) { return static_cast<size_t>(g_() % n); }

 private:
  std::mt19937_64 g_;
  bool has_spare_ = false;
  float spare_ = 0;
};

class Clusters {
 public:
  Clusters(size_t dims, size_t clusters, double spread, Gaussian* rng)
      : dims_(dims), scale_(static_cast<float>(spread / std::sqrt(static_cast<double>(dims)))), rng_(rng) {
    for (size_t c = 0; c < clusters; ++c) {
      Vector v(dims);
      for (float& x : v) x = rng_->Next();
      Normalize(&v);
      centres_.push_back(std::move(v));
    }
  }
  Vector Next() {
    Vector v = centres_[rng_->Below(centres_.size())];
    for (float& x : v) x += scale_ * rng_->Next();
    Normalize(&v);
    return v;
  }

 private:
  size_t dims_;
  float scale_;
  Gaussian* rng_;
  std::vector<Vector> centres_;
};

struct Latency {
  double p50 = 0, p99 = 0;
};

template <typename F>
Latency Time(const std::vector<Vector>& queries, F&& search) {
  std::vector<double> ms;
  for (const Vector& q : queries) {
    auto t0 = SteadyClock::now();
    search(q);
    ms.push_back(Ms(SteadyClock::now() - t0));
  }
  return {bench::Quantile(ms, 0.5), bench::Quantile(ms, 0.99)};
}

struct Row {
  size_t n = 0;
  double fill_ms = 0;
  Latency exact;
  double save_exact_ms = 0, load_exact_ms = 0;
  double build_ms = 0;
  Latency hnsw, filtered;
  double recall = 0;
  double save_hnsw_ms = 0, load_hnsw_ms = 0;
  uint64_t exact_bytes = 0, hnsw_bytes = 0;
};

uint64_t FileBytes(const std::string& path) {
  std::error_code ec;
  uint64_t n = std::filesystem::file_size(path, ec);
  return ec ? 0 : n;
}

bool Check(const Status& s, const char* what) {
  if (!s.ok()) std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  return s.ok();
}

// Times Save then Load of `index` at `path`; false on an error.
bool SaveLoad(const VectorIndex& index, const VectorIndexOptions& options, const std::string& path,
              double* save_ms, double* load_ms) {
  auto t0 = SteadyClock::now();
  if (!Check(index.Save(path), "save")) return false;
  *save_ms = Ms(SteadyClock::now() - t0);
  VectorIndex back(options);
  t0 = SteadyClock::now();
  if (!Check(back.Load(path), "load")) return false;
  *load_ms = Ms(SteadyClock::now() - t0);
  if (back.size() != index.size()) {
    std::fprintf(stderr, "load: %zu entries, not %zu\n", back.size(), index.size());
    return false;
  }
  return true;
}

std::string F(double v, int decimals = 2) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "bench-vector-data";
  std::vector<size_t> sizes = {10000, 100000};
  size_t dims = 384, queries = 200, clusters = 200;
  double spread = 1.0;
  uint64_t seed = 42;
  VectorIndexOptions defaults;
  size_t ef_search = defaults.ef_search;
  std::string command = "limbic_vector_bench";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    command += " " + k + " " + v;
    if (k == "--dir") {
      dir = v;
    } else if (k == "--sizes") {
      sizes.clear();
      std::stringstream in(v);
      for (std::string s; std::getline(in, s, ',');) sizes.push_back(std::stoul(s));
    } else if (k == "--dims") {
      dims = std::stoul(v);
    } else if (k == "--queries") {
      queries = std::stoul(v);
    } else if (k == "--clusters") {
      clusters = std::stoul(v);
    } else if (k == "--spread") {
      spread = std::stod(v);
    } else if (k == "--ef-search") {
      ef_search = std::stoul(v);
    } else if (k == "--seed") {
      seed = std::stoull(v);
    } else {
      argc = 0;  // usage below
      break;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr,
                 "usage: limbic_vector_bench [--dir D] [--sizes N,N] [--dims D] [--queries Q] "
                 "[--clusters C] [--spread S] [--ef-search E] [--seed S]\n");
    return 2;
  }
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);

  std::vector<Row> rows;
  for (size_t n : sizes) {
    if (n < 2) continue;
    Gaussian rng(seed);
    Clusters points(dims, clusters, spread, &rng);
    std::vector<Vector> qs;
    for (size_t i = 0; i < queries; ++i) qs.push_back(points.Next());
    std::vector<Vector> entries;
    entries.reserve(n);
    for (size_t i = 0; i < n; ++i) entries.push_back(points.Next());
    auto half = [](const std::string& id) { return id.back() % 2 == 0; };

    Row row;
    row.n = n;
    VectorIndexOptions options;
    options.dims = dims;
    options.exact_limit = n - 1;
    options.ef_search = ef_search;
    VectorIndex index(options);
    auto t0 = SteadyClock::now();
    for (size_t i = 0; i + 1 < n; ++i)
      if (!Check(index.Upsert("e" + std::to_string(i), 1, entries[i]), "upsert")) return 1;
    row.fill_ms = Ms(SteadyClock::now() - t0);
    row.exact = Time(qs, [&](const Vector& q) { index.Search(q, 10, -1); });
    const std::string path = dir + "/index-" + std::to_string(n);
    if (!SaveLoad(index, options, path + "-exact", &row.save_exact_ms, &row.load_exact_ms)) return 1;
    row.exact_bytes = FileBytes(path + "-exact.ids");

    t0 = SteadyClock::now();
    if (!Check(index.Upsert("e" + std::to_string(n - 1), 1, entries[n - 1]), "build")) return 1;
    row.build_ms = Ms(SteadyClock::now() - t0);
    if (!index.approximate()) {
      std::fprintf(stderr, "the index did not turn approximate at %zu entries\n", n);
      return 1;
    }
    row.hnsw = Time(qs, [&](const Vector& q) { index.Search(q, 10, -1); });
    row.filtered = Time(qs, [&](const Vector& q) { index.Search(q, 10, -1, half); });
    for (const Vector& q : qs) {
      std::set<std::string> want;
      for (const VectorHit& h : index.SearchExact(q, 10, -1)) want.insert(h.id);
      size_t found = 0;
      for (const VectorHit& h : index.Search(q, 10, -1)) found += want.count(h.id);
      row.recall += static_cast<double>(found) / static_cast<double>(want.size());
    }
    row.recall /= static_cast<double>(qs.size());
    if (!SaveLoad(index, options, path + "-hnsw", &row.save_hnsw_ms, &row.load_hnsw_ms)) return 1;
    row.hnsw_bytes = FileBytes(path + "-hnsw") + FileBytes(path + "-hnsw.ids");
    rows.push_back(row);
    std::fprintf(stderr, "%zu entries done\n", n);
  }

  std::printf("`%s` (dims %zu, %zu queries, k = 10, %zu clusters, spread %.2f, m %zu, "
              "ef_construction %zu, ef_search %zu, seed %llu)\n\n",
              command.c_str(), dims, queries, clusters, spread, defaults.m, defaults.ef_construction,
              ef_search, static_cast<unsigned long long>(seed));
  std::printf("| entries | exact p50 ms | exact p99 ms | HNSW build s | HNSW p50 ms | HNSW p99 ms "
              "| filtered p50 ms | filtered p99 ms | recall@10 |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows)
    std::printf("| %zu | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.n, F(r.exact.p50).c_str(),
                F(r.exact.p99).c_str(), F(r.build_ms / 1000, 1).c_str(), F(r.hnsw.p50, 3).c_str(),
                F(r.hnsw.p99, 3).c_str(), F(r.filtered.p50, 3).c_str(), F(r.filtered.p99, 3).c_str(),
                F(r.recall, 3).c_str());
  std::printf("\n| entries | fill ms | exact save ms | exact load ms | exact MB | HNSW save ms "
              "| HNSW load ms | HNSW MB |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows)
    std::printf("| %zu | %s | %s | %s | %s | %s | %s | %s |\n", r.n, F(r.fill_ms, 0).c_str(),
                F(r.save_exact_ms, 0).c_str(), F(r.load_exact_ms, 0).c_str(),
                F(static_cast<double>(r.exact_bytes) / 1e6, 1).c_str(), F(r.save_hnsw_ms, 0).c_str(),
                F(r.load_hnsw_ms, 0).c_str(), F(static_cast<double>(r.hnsw_bytes) / 1e6, 1).c_str());
  std::filesystem::remove_all(dir);
  return 0;
}
