// The local sentence encoder (memory/encoder/): sentences per second per
// core, the GFLOP/s that is against the core's measured peak, and recall
// latency at 100,000 memories with `local` vectors. Prints one JSON object.
//
// The model is MiniLM-L6-shaped (6 layers, hidden 384, 12 heads,
// intermediate 1536, 30,522 pieces, mean pooling) with seeded random
// weights, written by this program as a real sentence-transformers
// directory (--model-dir; kept and reused). Speed does not depend on the
// weights' values; no trained model can be downloaded here.
//
//   throughput  texts of exactly 16 and 128 tokens ([CLS] and [SEP]
//               included: whole words of the vocabulary), at batch 1 and 32,
//               one BLAS thread: tokeniser + encoder + pooling, as the
//               embedder runs them. GFLOP/s counts the matrix products
//               (BertModel::Flops).
//   peak        one core's FMA throughput in f32, measured by a loop of
//               independent fused multiply-adds of the widest vectors the CPU
//               has (AVX-512, else AVX2+FMA): the roof the 128-token case is
//               compared with.
//   recall      --memories facts of 4-10 words, embedded with the model
//               (--threads threads, batch 32) and remembered through
//               MemoryStore::RememberFact with those vectors (no fsync);
//               then --queries recalls of 2-4 words through
//               MemoryStore::Recall, the query's embedding (batch 1, one
//               thread) included, HNSW past the default exact limit.
//
//   limbic_encoder_bench [--model-dir D] [--dir D] [--memories N] [--queries Q]
//                        [--threads T] [--parts throughput,recall] [--seconds S]
#include <immintrin.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "bench/report.h"
#include "memory/encoder/sentence_model.h"
#include "memory/store.h"
#include "state/engine.h"

using namespace limbic;
using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

double Seconds(SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); }

constexpr size_t kLayers = 6, kHidden = 384, kHeads = 12, kInter = 1536, kVocab = 30522,
                 kMaxPos = 512;

// The vocabulary: specials, then made-up lower-case words (whole pieces),
// then "##" forms of some of them.
std::vector<std::string> Vocabulary() {
  std::vector<std::string> v = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  const char* syll[] = {"ka", "lo", "mi", "ne", "ru", "ta", "vo", "zen", "pri", "sto", "gel", "dar",
                        "bo", "fi", "gu", "ho", "ji", "le", "mo", "pa"};
  std::set<std::string> seen;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> n(1, 4), s(0, 19);
  while (v.size() < kVocab * 3 / 4) {
    std::string w;
    for (int i = n(rng); i > 0; --i) w += syll[s(rng)];
    if (seen.insert(w).second) v.push_back(w);
  }
  for (size_t i = 5; v.size() < kVocab; ++i) v.push_back("##" + v[i]);
  return v;
}

// Writes the model directory unless it is there already.
void WriteModel(const fs::path& dir, const std::vector<std::string>& vocab) {
  if (fs::exists(dir / "model.safetensors")) return;
  fs::create_directories(dir / "1_Pooling");
  std::ofstream(dir / "config.json") << json{{"model_type", "bert"},
                                             {"architectures", {"BertModel"}},
                                             {"vocab_size", kVocab},
                                             {"hidden_size", kHidden},
                                             {"num_hidden_layers", kLayers},
                                             {"num_attention_heads", kHeads},
                                             {"intermediate_size", kInter},
                                             {"max_position_embeddings", kMaxPos},
                                             {"type_vocab_size", 2},
                                             {"layer_norm_eps", 1e-12},
                                             {"hidden_act", "gelu"}}
                                            .dump(1);
  {
    std::ofstream out(dir / "vocab.txt");
    for (const std::string& p : vocab) out << p << "\n";
  }
  std::ofstream(dir / "tokenizer_config.json")
      << json{{"do_lower_case", true}, {"model_max_length", kMaxPos}}.dump();
  std::ofstream(dir / "modules.json") << json::array(
      {{{"idx", 0}, {"name", "0"}, {"path", ""}, {"type", "sentence_transformers.models.Transformer"}},
       {{"idx", 1}, {"name", "1"}, {"path", "1_Pooling"}, {"type", "sentence_transformers.models.Pooling"}},
       {{"idx", 2}, {"name", "2"}, {"path", "2_Normalize"}, {"type", "sentence_transformers.models.Normalize"}}})
                                             .dump(1);
  std::ofstream(dir / "1_Pooling" / "config.json")
      << json{{"word_embedding_dimension", kHidden}, {"pooling_mode_mean_tokens", true},
              {"pooling_mode_cls_token", false}}
             .dump(1);
  // The tensors, HF BERT names, random N(0, 0.05) (LayerNorm weights 1).
  std::vector<std::pair<std::string, std::vector<uint64_t>>> shapes = {
      {"embeddings.word_embeddings.weight", {kVocab, kHidden}},
      {"embeddings.position_embeddings.weight", {kMaxPos, kHidden}},
      {"embeddings.token_type_embeddings.weight", {2, kHidden}},
      {"embeddings.LayerNorm.weight", {kHidden}},
      {"embeddings.LayerNorm.bias", {kHidden}}};
  for (size_t l = 0; l < kLayers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    for (const char* m : {"attention.self.query", "attention.self.key", "attention.self.value",
                          "attention.output.dense"}) {
      shapes.push_back({p + m + ".weight", {kHidden, kHidden}});
      shapes.push_back({p + m + ".bias", {kHidden}});
    }
    shapes.push_back({p + "attention.output.LayerNorm.weight", {kHidden}});
    shapes.push_back({p + "attention.output.LayerNorm.bias", {kHidden}});
    shapes.push_back({p + "intermediate.dense.weight", {kInter, kHidden}});
    shapes.push_back({p + "intermediate.dense.bias", {kInter}});
    shapes.push_back({p + "output.dense.weight", {kHidden, kInter}});
    shapes.push_back({p + "output.dense.bias", {kHidden}});
    shapes.push_back({p + "output.LayerNorm.weight", {kHidden}});
    shapes.push_back({p + "output.LayerNorm.bias", {kHidden}});
  }
  json header = json::object();
  uint64_t offset = 0;
  for (const auto& [name, shape] : shapes) {
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {offset, offset + 4 * n}}};
    offset += 4 * n;
  }
  std::string h = header.dump();
  while (h.size() % 8 != 0) h += ' ';
  std::ofstream out(dir / "model.safetensors.tmp", std::ios::binary);
  const uint64_t len = h.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  std::mt19937_64 rng(11);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  for (const auto& [name, shape] : shapes) {
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    const bool ln_weight = name.find("LayerNorm.weight") != std::string::npos;
    std::vector<float> values(n);
    for (float& x : values) x = ln_weight ? 1.0f : normal(rng);
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(4 * n));
  }
  out.close();
  fs::rename(dir / "model.safetensors.tmp", dir / "model.safetensors");
}

// A text of `words` whole-vocabulary words (each one token).
std::string Text(const std::vector<std::string>& vocab, size_t words, std::mt19937_64& rng) {
  std::uniform_int_distribution<size_t> pick(5, kVocab * 3 / 4 - 1);
  std::string t;
  for (size_t i = 0; i < words; ++i) t += (i ? " " : "") + vocab[pick(rng)];
  return t;
}

// Independent chains of fused multiply-adds, kept in registers: 24 for
// AVX-512's 32 registers, 12 for AVX2's 16 -- more than the FMA latency
// times the FMA ports of any current core. Written out: a loop over an
// array of vectors is not kept in registers at -O2.
__attribute__((target("avx512f"))) double FmaLoop512(size_t iters) {
  __m512 b = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  __m512 a0 = _mm512_set1_ps(0.f);
  __m512 a1 = _mm512_set1_ps(1.f);
  __m512 a2 = _mm512_set1_ps(2.f);
  __m512 a3 = _mm512_set1_ps(3.f);
  __m512 a4 = _mm512_set1_ps(4.f);
  __m512 a5 = _mm512_set1_ps(5.f);
  __m512 a6 = _mm512_set1_ps(6.f);
  __m512 a7 = _mm512_set1_ps(7.f);
  __m512 a8 = _mm512_set1_ps(8.f);
  __m512 a9 = _mm512_set1_ps(9.f);
  __m512 a10 = _mm512_set1_ps(10.f);
  __m512 a11 = _mm512_set1_ps(11.f);
  __m512 a12 = _mm512_set1_ps(12.f);
  __m512 a13 = _mm512_set1_ps(13.f);
  __m512 a14 = _mm512_set1_ps(14.f);
  __m512 a15 = _mm512_set1_ps(15.f);
  __m512 a16 = _mm512_set1_ps(16.f);
  __m512 a17 = _mm512_set1_ps(17.f);
  __m512 a18 = _mm512_set1_ps(18.f);
  __m512 a19 = _mm512_set1_ps(19.f);
  __m512 a20 = _mm512_set1_ps(20.f);
  __m512 a21 = _mm512_set1_ps(21.f);
  __m512 a22 = _mm512_set1_ps(22.f);
  __m512 a23 = _mm512_set1_ps(23.f);
  for (size_t n = 0; n < iters; ++n) {
    a0 = _mm512_fmadd_ps(a0, b, c);
    a1 = _mm512_fmadd_ps(a1, b, c);
    a2 = _mm512_fmadd_ps(a2, b, c);
    a3 = _mm512_fmadd_ps(a3, b, c);
    a4 = _mm512_fmadd_ps(a4, b, c);
    a5 = _mm512_fmadd_ps(a5, b, c);
    a6 = _mm512_fmadd_ps(a6, b, c);
    a7 = _mm512_fmadd_ps(a7, b, c);
    a8 = _mm512_fmadd_ps(a8, b, c);
    a9 = _mm512_fmadd_ps(a9, b, c);
    a10 = _mm512_fmadd_ps(a10, b, c);
    a11 = _mm512_fmadd_ps(a11, b, c);
    a12 = _mm512_fmadd_ps(a12, b, c);
    a13 = _mm512_fmadd_ps(a13, b, c);
    a14 = _mm512_fmadd_ps(a14, b, c);
    a15 = _mm512_fmadd_ps(a15, b, c);
    a16 = _mm512_fmadd_ps(a16, b, c);
    a17 = _mm512_fmadd_ps(a17, b, c);
    a18 = _mm512_fmadd_ps(a18, b, c);
    a19 = _mm512_fmadd_ps(a19, b, c);
    a20 = _mm512_fmadd_ps(a20, b, c);
    a21 = _mm512_fmadd_ps(a21, b, c);
    a22 = _mm512_fmadd_ps(a22, b, c);
    a23 = _mm512_fmadd_ps(a23, b, c);
  }
  a0 = _mm512_fmadd_ps(a0, b, a1);
  a0 = _mm512_fmadd_ps(a0, b, a2);
  a0 = _mm512_fmadd_ps(a0, b, a3);
  a0 = _mm512_fmadd_ps(a0, b, a4);
  a0 = _mm512_fmadd_ps(a0, b, a5);
  a0 = _mm512_fmadd_ps(a0, b, a6);
  a0 = _mm512_fmadd_ps(a0, b, a7);
  a0 = _mm512_fmadd_ps(a0, b, a8);
  a0 = _mm512_fmadd_ps(a0, b, a9);
  a0 = _mm512_fmadd_ps(a0, b, a10);
  a0 = _mm512_fmadd_ps(a0, b, a11);
  a0 = _mm512_fmadd_ps(a0, b, a12);
  a0 = _mm512_fmadd_ps(a0, b, a13);
  a0 = _mm512_fmadd_ps(a0, b, a14);
  a0 = _mm512_fmadd_ps(a0, b, a15);
  a0 = _mm512_fmadd_ps(a0, b, a16);
  a0 = _mm512_fmadd_ps(a0, b, a17);
  a0 = _mm512_fmadd_ps(a0, b, a18);
  a0 = _mm512_fmadd_ps(a0, b, a19);
  a0 = _mm512_fmadd_ps(a0, b, a20);
  a0 = _mm512_fmadd_ps(a0, b, a21);
  a0 = _mm512_fmadd_ps(a0, b, a22);
  a0 = _mm512_fmadd_ps(a0, b, a23);
  return _mm512_cvtss_f32(a0);
}
__attribute__((target("avx2,fma"))) double FmaLoop256(size_t iters) {
  __m256 b = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  __m256 a0 = _mm256_set1_ps(0.f);
  __m256 a1 = _mm256_set1_ps(1.f);
  __m256 a2 = _mm256_set1_ps(2.f);
  __m256 a3 = _mm256_set1_ps(3.f);
  __m256 a4 = _mm256_set1_ps(4.f);
  __m256 a5 = _mm256_set1_ps(5.f);
  __m256 a6 = _mm256_set1_ps(6.f);
  __m256 a7 = _mm256_set1_ps(7.f);
  __m256 a8 = _mm256_set1_ps(8.f);
  __m256 a9 = _mm256_set1_ps(9.f);
  __m256 a10 = _mm256_set1_ps(10.f);
  __m256 a11 = _mm256_set1_ps(11.f);
  for (size_t n = 0; n < iters; ++n) {
    a0 = _mm256_fmadd_ps(a0, b, c);
    a1 = _mm256_fmadd_ps(a1, b, c);
    a2 = _mm256_fmadd_ps(a2, b, c);
    a3 = _mm256_fmadd_ps(a3, b, c);
    a4 = _mm256_fmadd_ps(a4, b, c);
    a5 = _mm256_fmadd_ps(a5, b, c);
    a6 = _mm256_fmadd_ps(a6, b, c);
    a7 = _mm256_fmadd_ps(a7, b, c);
    a8 = _mm256_fmadd_ps(a8, b, c);
    a9 = _mm256_fmadd_ps(a9, b, c);
    a10 = _mm256_fmadd_ps(a10, b, c);
    a11 = _mm256_fmadd_ps(a11, b, c);
  }
  a0 = _mm256_fmadd_ps(a0, b, a1);
  a0 = _mm256_fmadd_ps(a0, b, a2);
  a0 = _mm256_fmadd_ps(a0, b, a3);
  a0 = _mm256_fmadd_ps(a0, b, a4);
  a0 = _mm256_fmadd_ps(a0, b, a5);
  a0 = _mm256_fmadd_ps(a0, b, a6);
  a0 = _mm256_fmadd_ps(a0, b, a7);
  a0 = _mm256_fmadd_ps(a0, b, a8);
  a0 = _mm256_fmadd_ps(a0, b, a9);
  a0 = _mm256_fmadd_ps(a0, b, a10);
  a0 = _mm256_fmadd_ps(a0, b, a11);
  return _mm256_cvtss_f32(a0);
}

// One core's f32 FMA peak in GFLOP/s (best of 5) at each width the CPU has:
// "avx512" (16 lanes) and "avx2" (8 lanes, FMA). The core's peak is the widest.
json Peak() {
  json out = json::object();
  const size_t iters = 50'000'000;
  double sink = 0;
  auto measure = [&](double (*loop)(size_t), double lanes, double chains) {
    double best = 0;
    for (int r = 0; r < 5; ++r) {
      auto t0 = SteadyClock::now();
      sink += loop(iters);
      best = std::max(best, chains * iters * lanes * 2 / Seconds(SteadyClock::now() - t0) / 1e9);
    }
    return best;
  };
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    out["avx2"] = measure(FmaLoop256, 8, 12);
  if (__builtin_cpu_supports("avx512f")) out["avx512"] = measure(FmaLoop512, 16, 24);
  out["gflops"] = out.contains("avx512") ? out["avx512"] : out.value("avx2", json(nullptr));
  out["sink"] = sink != 0;
  return out;
}

json Throughput(const memory::encoder::SentenceModel& model, const std::vector<std::string>& vocab,
                double seconds, double peak) {
  json rows = json::array();
  std::mt19937_64 rng(3);
  for (size_t tokens : {16, 128}) {
    for (size_t batch : {1, 32}) {
      std::vector<std::string> texts;
      for (size_t i = 0; i < batch * 4; ++i) texts.push_back(Text(vocab, tokens - 2, rng));
      if (model.tokenizer().Encode(texts[0]).size() != tokens)
        throw std::runtime_error("a bench text is not " + std::to_string(tokens) + " tokens");
      (void)model.Encode(std::span(texts).subspan(0, batch), batch);  // warm up
      size_t done = 0;
      auto t0 = SteadyClock::now();
      while (Seconds(SteadyClock::now() - t0) < seconds) {
        auto v = model.Encode(texts, batch);
        if (!v.ok()) throw std::runtime_error(v.status().ToString());
        done += texts.size();
      }
      const double s = Seconds(SteadyClock::now() - t0);
      const double gflops = model.model().Flops(tokens) * static_cast<double>(done) / s / 1e9;
      json row = {{"tokens", tokens}, {"batch", batch}, {"sentences_per_s", done / s},
                  {"gflops", gflops}};
      if (peak > 0) row["of_peak"] = gflops / peak;
      rows.push_back(row);
      std::fprintf(stderr, "  %zu tokens, batch %zu: %.0f sentences/s, %.1f GFLOP/s\n", tokens,
                   batch, done / s, gflops);
    }
  }
  return rows;
}

json Recall(const std::string& model_dir, const std::vector<std::string>& vocab,
            const std::string& dir, size_t memories, size_t queries, size_t threads) {
  fs::remove_all(dir);
  state::EngineOptions eo;
  eo.state_dir = dir;
  eo.durability = state::Durability::kNone;
  auto engine = state::Engine::Open(eo);
  if (!engine.ok()) throw std::runtime_error(engine.status().ToString());
  memory::MemoryOptions mo;
  mo.embedder.kind = "local";
  mo.embedder.model = model_dir;
  mo.embedder.batch = 32;
  mo.embedder.threads = threads;
  auto store = memory::MemoryStore::Open(**engine, mo, nullptr);
  if (!store.ok()) throw std::runtime_error(store.status().ToString());
  auto embedder = memory::MakeEmbedder(mo.embedder);  // shares the store's model
  if (!embedder.ok()) throw std::runtime_error(embedder.status().ToString());

  std::mt19937_64 rng(5);
  std::uniform_int_distribution<size_t> len(4, 10);
  json out = {{"memories", memories}, {"threads_loading", threads}};
  auto t0 = SteadyClock::now();
  const size_t piece = 4096;
  for (size_t start = 0; start < memories; start += piece) {
    std::vector<json> facts;
    std::vector<std::string> texts;
    for (size_t i = start; i < std::min(memories, start + piece); ++i) {
      std::string words = Text(vocab, len(rng), rng);
      const size_t cut = words.find(' ');
      json f = {{"subject", "s" + std::to_string(i)}, {"relation", words.substr(0, cut)},
                {"object", words.substr(cut + 1)}};
      texts.push_back(memory::FactText(f));
      facts.push_back(std::move(f));
    }
    auto vectors = (*embedder)->Embed(texts, memory::EmbedRole::kPassage);
    if (!vectors.ok()) throw std::runtime_error(vectors.status().ToString());
    for (size_t i = 0; i < facts.size(); ++i) {
      memory::Embedded e{(*embedder)->id(), std::vector<memory::Vector>{(*vectors)[i]}};
      auto plan = (*store)->RememberFact(facts[i], &e);
      if (!plan.ok()) throw std::runtime_error(plan.status().ToString());
      if (!(*engine)->Submit(std::move(plan->events), nullptr).ok()) throw std::runtime_error("submit");
      if ((*engine)->pending_batches() > 512) (void)(*engine)->Poll(true);
    }
    if (!(*engine)->WaitIdle().ok()) throw std::runtime_error("commit");
  }
  out["load_s"] = Seconds(SteadyClock::now() - t0);
  out["load_per_s"] = memories / Seconds(SteadyClock::now() - t0);
  // Reopen: past the exact limit the HNSW graph is built, as a runtime would.
  store->reset();
  memory::encoder::BertModel::SetThreads(1);
  mo.embedder.threads = 1;
  auto reopened = memory::MemoryStore::Open(**engine, mo, nullptr);
  if (!reopened.ok()) throw std::runtime_error(reopened.status().ToString());
  out["vector_index"] = (*(*reopened)->Stats(0))["vector_index"];
  out["embedder"] = (*reopened)->embedder().id();
  std::vector<double> ms, embed_ms;
  for (size_t i = 0; i < queries; ++i) {
    memory::RecallRequest r;
    r.query = Text(vocab, 2 + i % 3, rng);
    r.k = 10;
    r.reinforce = false;
    auto e0 = SteadyClock::now();
    (void)(*embedder)->Embed(std::vector<std::string>{r.query}, memory::EmbedRole::kQuery);
    embed_ms.push_back(Seconds(SteadyClock::now() - e0) * 1000);
    auto q0 = SteadyClock::now();
    auto plan = (*reopened)->Recall(r, 0);  // embeds the query itself
    ms.push_back(Seconds(SteadyClock::now() - q0) * 1000);
    if (!plan.ok()) throw std::runtime_error(plan.status().ToString());
    if (!plan->answer["vector"]["used"].get<bool>()) throw std::runtime_error("no vector used");
  }
  out["recall"] = {{"queries", queries},
                   {"p50_ms", bench::Quantile(ms, 0.5)},
                   {"p99_ms", bench::Quantile(ms, 0.99)},
                   {"max_ms", *std::max_element(ms.begin(), ms.end())}};
  out["query_embedding"] = {{"p50_ms", bench::Quantile(embed_ms, 0.5)},
                            {"p99_ms", bench::Quantile(embed_ms, 0.99)}};
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_dir = "/tmp/limbic-encoder-bench/minilm-l6-random";
  std::string dir = "/tmp/limbic-encoder-bench/state";
  size_t memories = 100000, queries = 200;
  size_t threads = std::max<size_t>(1, std::thread::hardware_concurrency());
  std::string parts = "throughput,recall";
  double seconds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--model-dir") model_dir = v;
    else if (k == "--dir") dir = v;
    else if (k == "--memories") memories = std::stoul(v);
    else if (k == "--queries") queries = std::stoul(v);
    else if (k == "--threads") threads = std::stoul(v);
    else if (k == "--parts") parts = v;
    else if (k == "--seconds") seconds = std::stod(v);
    else {
      std::fprintf(stderr,
                   "usage: limbic_encoder_bench [--model-dir D] [--dir D] [--memories N] "
                   "[--queries Q]\n                            [--threads T] "
                   "[--parts throughput,recall] [--seconds S]\n");
      return 2;
    }
  }
  try {
    const std::vector<std::string> vocab = Vocabulary();
    WriteModel(model_dir, vocab);
    memory::encoder::BertModel::SetThreads(1);
    auto loaded = memory::encoder::SentenceModel::Load(
        {fs::absolute(model_dir).string(), "minilm-l6-random"});
    if (!loaded.ok()) throw std::runtime_error(loaded.status().ToString());
    json out = {{"bench", "encoder"},
                {"model", {{"layers", kLayers}, {"hidden", kHidden}, {"heads", kHeads},
                           {"intermediate", kInter}, {"vocab", kVocab}}}};
    if (parts.find("throughput") != std::string::npos) {
      out["peak"] = Peak();
      const double peak = out["peak"]["gflops"].is_number() ? out["peak"]["gflops"].get<double>() : 0;
      std::fprintf(stderr, "encoder: one core's peak %.1f GFLOP/s (%s)\n", peak,
                   out["peak"].dump().c_str());
      const char* core = std::getenv("OPENBLAS_CORETYPE");
      out["openblas_coretype"] = core ? core : "(chosen by OpenBLAS)";
      out["throughput"] = Throughput(**loaded, vocab, seconds, peak);
    }
    if (parts.find("recall") != std::string::npos)
      out["recall"] = Recall(model_dir, vocab, dir, memories, queries, threads);
    std::printf("%s\n", out.dump(2).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "limbic_encoder_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
