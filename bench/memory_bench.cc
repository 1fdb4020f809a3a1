// Long-term memory: remember throughput, recall latency at 10,000 and
// 100,000 memories (hash embedder; exact vectors, and HNSW past the exact
// limit), HNSW recall@10 against exact on the same text vectors, and ingest
// of 1 MB of Markdown. Prints one JSON object.
//
// Memories are English-like episodes of 12-30 words drawn with a Zipf
// distribution (s = 1.07) from a --vocab word list (common English words,
// then made-up ones); queries are 2-4 words from the same distribution.
// One seeded generator: runs are repeatable.
//
// Loading: memories are remembered through MemoryStore::RememberEpisode
// and Engine::Submit, pipelined (the runtime's path) with durability
// `none`, so the figure is limbic's own cost, not the disk's; remember
// throughput with fsync (one commit per memory, the CLI's path) is timed
// separately on --fsync-count memories.
//
// The HNSW part can sweep the graph's search breadth (--ef-search, a list)
// and be run alone (--parts hnsw) to tune memory.vectors.
//
//   limbic_memory_bench [--dir D] [--sizes 10000,100000] [--queries Q] [--seed S]
//                       [--parts store,hnsw,ingest] [--ef-search E,E] [--m M]
//                       [--keep true]   (keep the stores; a later run reuses them)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "bench/report.h"
#include "state/engine.h"
#include "memory/store.h"

using namespace limbic;
using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

namespace {

double Ms(SteadyClock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

const char* kCommon[] = {
    "the",    "deploy",  "server",   "database", "user",     "request", "error",    "cache",
    "queue",  "build",   "release",  "test",     "review",   "meeting", "customer", "invoice",
    "backup", "network", "latency",  "memory",   "thread",   "agent",   "model",    "prompt",
    "token",  "budget",  "schedule", "report",   "incident", "alert",   "config",   "migration"};

class Words {
 public:
  Words(size_t vocab, uint64_t seed) : rng_(seed) {
    const char* syll[] = {"ka", "lo",  "mi",  "ne",  "ru",  "ta",
                          "vo", "zen", "pri", "sto", "gel", "dar"};
    for (const char* w : kCommon) words_.emplace_back(w);
    std::uniform_int_distribution<int> n(2, 4), s(0, 11);
    while (words_.size() < vocab) {
      std::string w;
      for (int i = n(rng_); i > 0; --i) w += syll[s(rng_)];
      words_.push_back(w);
    }
    std::vector<double> weights;
    for (size_t i = 0; i < words_.size(); ++i) weights.push_back(1.0 / std::pow(i + 1, 1.07));
    zipf_ = std::discrete_distribution<size_t>(weights.begin(), weights.end());
  }
  std::string Text(int lo, int hi) {
    std::uniform_int_distribution<int> len(lo, hi);
    std::string t;
    for (int i = len(rng_); i > 0; --i) t += (t.empty() ? "" : " ") + words_[zipf_(rng_)];
    return t;
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
  std::vector<std::string> words_;
  std::discrete_distribution<size_t> zipf_;
};

struct Opened {
  std::unique_ptr<state::Engine> engine;
  std::unique_ptr<memory::MemoryStore> store;
};

Opened Open(const std::string& dir, state::Durability durability, size_t exact_limit) {
  state::EngineOptions o;
  o.state_dir = dir;
  o.durability = durability;
  auto e = state::Engine::Open(o);
  if (!e.ok()) throw std::runtime_error(e.status().ToString());
  memory::MemoryOptions mo;
  mo.vectors.exact_limit = exact_limit;
  auto s = memory::MemoryStore::Open(**e, mo, nullptr);
  if (!s.ok()) throw std::runtime_error(s.status().ToString());
  return {std::move(*e), std::move(*s)};
}

json Quantiles(std::vector<double> v) {
  return {{"p50_ms", bench::Quantile(v, 0.5)},
          {"p99_ms", bench::Quantile(v, 0.99)},
          {"max_ms", *std::max_element(v.begin(), v.end())}};
}

// Recall latency of `queries` on an opened store (no reinforcement).
json TimeRecall(memory::MemoryStore& store, const std::vector<std::string>& queries) {
  std::vector<double> ms;
  for (const std::string& q : queries) {
    memory::RecallRequest r;
    r.query = q;
    r.k = 10;
    r.reinforce = false;
    auto t0 = SteadyClock::now();
    auto plan = store.Recall(r, 0);
    ms.push_back(Ms(SteadyClock::now() - t0));
    if (!plan.ok()) throw std::runtime_error(plan.status().ToString());
  }
  return Quantiles(ms);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "/tmp/limbic-memory-bench";
  std::vector<size_t> sizes = {10000, 100000};
  size_t queries = 200, vocab = 20000, fsync_count = 300;
  uint64_t seed = 42;
  std::string parts = "store,hnsw,ingest";
  bool keep = false;
  const memory::VectorIndexOptions defaults;
  std::vector<size_t> efs = {defaults.ef_search};
  size_t m = defaults.m;
  auto list = [](const std::string& v) {
    std::vector<size_t> out;
    std::stringstream ss(v);
    for (std::string x; std::getline(ss, x, ',');) out.push_back(std::stoul(x));
    return out;
  };
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--dir")
      dir = v;
    else if (k == "--queries")
      queries = std::stoul(v);
    else if (k == "--seed")
      seed = std::stoull(v);
    else if (k == "--sizes")
      sizes = list(v);
    else if (k == "--parts")
      parts = v;
    else if (k == "--ef-search")
      efs = list(v);
    else if (k == "--m")
      m = std::stoul(v);
    else if (k == "--keep")
      keep = v == "1" || v == "true";
    else {
      std::fprintf(stderr,
                   "usage: limbic_memory_bench [--dir D] [--sizes N,N] [--queries Q] [--seed S]\n"
                   "                           [--parts store,hnsw,ingest] [--ef-search E,E] [--m M]\n"
                   "                           [--keep true]\n");
      return 2;
    }
  }
  json out = {{"bench", "memory"}, {"embedder", "hash-384"}};
  Words words(vocab, seed);
  std::vector<std::string> qs;
  for (size_t i = 0; i < queries; ++i) qs.push_back(words.Text(2, 4));

  auto wanted = [&](const char* part) { return parts.find(part) != std::string::npos; };

  // Remember with fsync: one durable commit per memory.
  if (!keep) std::filesystem::remove_all(dir);
  if (wanted("store")) {
    std::filesystem::remove_all(dir + "/fsync");
    Opened o = Open(dir + "/fsync", state::Durability::kFsync, 20000);
    auto t0 = SteadyClock::now();
    for (size_t i = 0; i < fsync_count; ++i) {
      auto plan = o.store->RememberEpisode({{"text", words.Text(12, 30)}}, 0);
      if (!plan.ok() || !o.engine->Commit(std::move(plan->events)).ok()) return 1;
    }
    double s = Ms(SteadyClock::now() - t0) / 1000;
    out["remember_fsync"] = {{"memories", fsync_count}, {"per_second", fsync_count / s}};
  }

  for (size_t n : wanted("store") ? sizes : std::vector<size_t>{}) {
    const std::string state_dir = dir + "/state-" + std::to_string(n);
    const bool reuse = keep && std::filesystem::exists(state_dir);
    json row = {{"memories", n}, {"reused", reuse}};
    {
      Opened o = Open(state_dir, state::Durability::kNone, SIZE_MAX);
      auto t0 = SteadyClock::now();
      for (size_t i = 0; i < (reuse ? 0 : n); ++i) {
        auto plan = o.store->RememberEpisode({{"text", words.Text(12, 30)}}, 0);
        if (!plan.ok()) return 1;
        if (!o.engine->Submit(std::move(plan->events), nullptr).ok()) return 1;
        if (o.engine->pending_batches() > 512) (void)o.engine->Poll(true);
      }
      if (!o.engine->WaitIdle().ok()) return 1;
      double s = Ms(SteadyClock::now() - t0) / 1000;
      if (!reuse) row["remember_pipelined_per_second"] = n / s;
      row["recall_exact"] = TimeRecall(*o.store, qs);
    }
    {
      // Reopen with the default exact limit: past it, the HNSW graph is built
      // (timed: the first open) and then saved for the next opens.
      auto t0 = SteadyClock::now();
      Opened o = Open(state_dir, state::Durability::kNone, 20000);
      row[reuse ? "reopen_ms" : "open_ms"] = Ms(SteadyClock::now() - t0);
      auto st = o.store->Stats(0);
      row["vector_index"] = (*st)["vector_index"];
      if ((*st)["vector_index"] == "approximate") row["recall_hnsw"] = TimeRecall(*o.store, qs);
    }
    if (n >= 20000) {
      auto t0 = SteadyClock::now();
      Opened o = Open(state_dir, state::Durability::kNone, 20000);
      row["reopen_with_saved_index_ms"] = Ms(SteadyClock::now() - t0);
    }
    out["sizes"].push_back(row);
  }

  // HNSW recall@10 against exact on hash-embedder vectors of texts, for
  // each search breadth asked for.
  if (wanted("hnsw")) {
    const size_t n = sizes.back();
    auto emb = memory::MakeEmbedder({});
    memory::VectorIndexOptions vo;
    vo.exact_limit = 0;
    vo.m = m;
    memory::VectorIndex index(vo);
    std::vector<std::string> texts;
    for (size_t i = 0; i < n; ++i) texts.push_back(words.Text(12, 30));
    auto t0 = SteadyClock::now();
    for (size_t i = 0; i < n; i += 1000) {
      std::vector<std::string> batch(texts.begin() + i, texts.begin() + std::min(n, i + 1000));
      auto v = (*emb)->Embed(batch);
      for (size_t j = 0; j < v->size(); ++j)
        (void)index.Upsert("m-" + std::to_string(i + j), 1, (*v)[j]);
    }
    json section = {{"vectors", n}, {"m", m}, {"embed_and_build_ms", Ms(SteadyClock::now() - t0)}};
    std::vector<std::vector<memory::VectorHit>> exact;
    std::vector<double> exact_ms;
    std::vector<memory::Vector> qvs;
    for (const std::string& q : qs) {
      qvs.push_back((*(*emb)->Embed(std::vector<std::string>{q}))[0]);
      auto e0 = SteadyClock::now();
      exact.push_back(index.SearchExact(qvs.back(), 10, -1));
      exact_ms.push_back(Ms(SteadyClock::now() - e0));
    }
    section["exact"] = Quantiles(exact_ms);
    for (size_t ef : efs) {
      index.set_ef_search(ef);
      double hit = 0, total = 0;
      std::vector<double> approx_ms;
      for (size_t i = 0; i < qvs.size(); ++i) {
        auto a0 = SteadyClock::now();
        auto approx = index.Search(qvs[i], 10, -1);
        approx_ms.push_back(Ms(SteadyClock::now() - a0));
        for (const auto& e : exact[i]) {
          ++total;
          for (const auto& a : approx) hit += a.id == e.id;
        }
      }
      section["ef_search"].push_back(
          {{"ef", ef}, {"recall_at_10", total ? hit / total : 0}, {"search", Quantiles(approx_ms)}});
    }
    out["hnsw_text_vectors"] = std::move(section);
  }

  // Ingest of 1 MB of Markdown.
  if (wanted("ingest")) {
    const std::string ingest_dir = dir + "/ingest";
    std::filesystem::remove_all(ingest_dir);
    std::filesystem::create_directories(ingest_dir);
    std::string path = ingest_dir + "/doc.md";
    {
      std::ofstream md(path);
      size_t bytes = 0;
      for (int s = 1; bytes < (1 << 20); ++s) {
        std::string section =
            "## Section " + std::to_string(s) + "\n\n" + words.Text(80, 200) + ".\n\n";
        md << section;
        bytes += section.size();
      }
    }
    Opened o = Open(ingest_dir + "/state", state::Durability::kFsync, 20000);
    auto t0 = SteadyClock::now();
    auto plan = o.store->Ingest({{"path", path}});
    if (!plan.ok() || !o.engine->Commit(std::move(plan->events)).ok()) return 1;
    out["ingest_1mb_markdown"] = {{"ms", Ms(SteadyClock::now() - t0)},
                                  {"chunks", plan->answer["files"][0]["chunks"]}};
  }
  if (!keep) std::filesystem::remove_all(dir);
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
