#include "memory/encoder/bert.h"


#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/input_json.h"
#include "memory/encoder/bert_kernels.h"
#include "memory/encoder/blas.h"

namespace limbic::memory::encoder {

struct BertModel::Layer {
  // HF Linear weights are [out, in]; products are x W^T.
  std::span<const float> q_w, k_w, v_w, out_w, ffn_in_w, ffn_out_w;
  std::vector<float> qkv_b;  // q's, k's and v's biases side by side: [3 hidden]
  std::span<const float> out_b, ln1_w, ln1_b, ffn_in_b, ffn_out_b, ln2_w, ln2_b;
};

namespace {

using json = nlohmann::json;

constexpr uint64_t kMaxConfigBytes = 1 << 20;
constexpr size_t kMaxSize = size_t{1} << 20;
// Encode runs a batch in chunks of about this many tokens, which bounds its
// scratch (about 9 hidden floats a token: 64 MB for BERT-base's 768).
constexpr size_t kChunkTokens = 8192;
// Attention's scores are computed this many query rows at a time: a
// block of rows x n floats, not n x n (256 MB for one 8192-token text).
constexpr size_t kAttentionRows = 256;

Status ConfigError(const std::string& path, const std::string& what) {
  return Status::InvalidArgument(path + ": " + what);
}

// A positive size at `key`, or `fallback` when the key is absent and
// fallback is not 0.
Status ReadSize(const json& doc, const char* key, size_t fallback, size_t* out,
                const std::string& path) {
  auto it = doc.find(key);
  if (it == doc.end()) {
    if (fallback == 0) return ConfigError(path, std::string("no ") + key);
    *out = fallback;
    return Status::OK();
  }
  if (!it->is_number_unsigned() || it->get<uint64_t>() == 0 || it->get<uint64_t>() > kMaxSize)
    return ConfigError(path, std::string(key) + " is not an integer in [1, 2^20]");
  *out = it->get<size_t>();
  return Status::OK();
}

// Y[rows, out] = X[rows, in] W^T (+ Y when accumulate), W as HF stores it.
void Linear(const Blas& blas, const float* x, size_t rows, size_t in, std::span<const float> w,
            size_t out, float* y, size_t ldy, bool accumulate) {
  blas.sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows),
              static_cast<int>(out), static_cast<int>(in), 1.0f, x, static_cast<int>(in),
              w.data(), static_cast<int>(in), accumulate ? 1.0f : 0.0f, y,
              static_cast<int>(ldy));
}

}  // namespace

Result<BertConfig> BertConfig::FromJsonFile(const std::string& path) {
  // Not a FIFO or a device: opening a FIFO waits for a writer, forever.
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    return ConfigError(path, "not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open");
  std::string text;
  text.resize(kMaxConfigBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxConfigBytes) return ConfigError(path, "larger than 1 MB");
  return FromJson(text, path);
}

Result<BertConfig> BertConfig::FromJson(const std::string& text, const std::string& path) {
  auto parsed = ParseInputJson(text);
  if (!parsed.ok()) return ConfigError(path, parsed.status().message());
  const json& doc = *parsed;
  if (!doc.is_object()) return ConfigError(path, "not a JSON object");
  if (auto it = doc.find("model_type"); it != doc.end()) {
    if (!it->is_string()) return ConfigError(path, "model_type is not a string");
    if (*it != "bert")
      return ConfigError(path, "model_type " + it->get<std::string>() +
                                   " is not bert (only BERT-family encoders are read)");
  }
  if (auto it = doc.find("position_embedding_type");
      it != doc.end() && !(it->is_string() && *it == "absolute"))
    return ConfigError(path, "position_embedding_type " + it->dump() + " is not absolute");
  BertConfig c;
  LIMBIC_RETURN_IF_ERROR(ReadSize(doc, "vocab_size", 0, &c.vocab_size, path));
  LIMBIC_RETURN_IF_ERROR(ReadSize(doc, "hidden_size", 0, &c.hidden, path));
  LIMBIC_RETURN_IF_ERROR(ReadSize(doc, "num_hidden_layers", 0, &c.layers, path));
  LIMBIC_RETURN_IF_ERROR(ReadSize(doc, "num_attention_heads", 0, &c.heads, path));
  LIMBIC_RETURN_IF_ERROR(ReadSize(doc, "intermediate_size", 0, &c.intermediate, path));
  LIMBIC_RETURN_IF_ERROR(ReadSize(doc, "max_position_embeddings", 512, &c.max_position, path));
  LIMBIC_RETURN_IF_ERROR(ReadSize(doc, "type_vocab_size", 2, &c.type_vocab, path));
  if (auto it = doc.find("layer_norm_eps"); it != doc.end()) {
    if (!it->is_number() || !(it->get<double>() > 0) || it->get<double>() > 1)
      return ConfigError(path, "layer_norm_eps is not a number in (0, 1]");
    c.layer_norm_eps = it->get<double>();
  }
  if (auto it = doc.find("hidden_act"); it != doc.end()) {
    if (!it->is_string()) return ConfigError(path, "hidden_act is not a string");
    c.act = it->get<std::string>();
  }
  if (c.act != "gelu" && c.act != "gelu_new" && c.act != "gelu_pytorch_tanh" && c.act != "relu")
    return ConfigError(path, "hidden_act " + c.act + " is not gelu, gelu_new, gelu_pytorch_tanh or relu");
  if (c.hidden % c.heads != 0)
    return ConfigError(path, "hidden_size " + std::to_string(c.hidden) +
                                 " is not divisible by num_attention_heads " +
                                 std::to_string(c.heads));
  // Each factor is at most 2^20, so these products fit in a double exactly
  // enough to compare.
  double h = double(c.hidden), params = double(c.vocab_size + c.max_position + c.type_vocab) * h +
                                        double(c.layers) * (4 * h * h + 2 * h * double(c.intermediate));
  if (params > double(1ull << 31))
    return ConfigError(path, "more than 2^31 parameters (" + std::to_string(params) + ")");
  return c;
}

BertModel::~BertModel() = default;

Result<std::unique_ptr<BertModel>> BertModel::Load(const BertConfig& config,
                                                   std::shared_ptr<const SafeTensors> file) {
  auto blas = LoadBlas();
  if (!blas.ok()) return blas.status();
  std::unique_ptr<BertModel> m(new BertModel());
  m->config_ = config;
  m->blas_ = *blas;
  const std::string prefix = file->Has("bert.embeddings.word_embeddings.weight") ? "bert." : "";
  const uint64_t h = config.hidden, i = config.intermediate;
  // A missing tensor is the file's fault (InvalidArgument), not a lookup's.
  auto get = [&](const std::string& name, std::initializer_list<uint64_t> shape,
                 std::span<const float>* out) -> Status {
    auto r = file->Floats(prefix + name, std::vector<uint64_t>(shape));
    if (!r.ok()) return Status::InvalidArgument(r.status().message());
    *out = *r;
    return Status::OK();
  };
  // LayerNorm at `base`: weight/bias, or the gamma/beta of older checkpoints.
  auto get_norm = [&](const std::string& base, std::span<const float>* w,
                      std::span<const float>* b) -> Status {
    bool old = !file->Has(prefix + base + ".weight") && file->Has(prefix + base + ".gamma");
    LIMBIC_RETURN_IF_ERROR(get(base + (old ? ".gamma" : ".weight"), {h}, w));
    return get(base + (old ? ".beta" : ".bias"), {h}, b);
  };
  LIMBIC_RETURN_IF_ERROR(get("embeddings.word_embeddings.weight", {config.vocab_size, h}, &m->word_));
  LIMBIC_RETURN_IF_ERROR(
      get("embeddings.position_embeddings.weight", {config.max_position, h}, &m->position_));
  LIMBIC_RETURN_IF_ERROR(
      get("embeddings.token_type_embeddings.weight", {config.type_vocab, h}, &m->token_type_));
  LIMBIC_RETURN_IF_ERROR(get_norm("embeddings.LayerNorm", &m->ln_w_, &m->ln_b_));
  m->layers_.resize(config.layers);
  for (size_t n = 0; n < config.layers; ++n) {
    Layer& l = m->layers_[n];
    const std::string p = "encoder.layer." + std::to_string(n) + ".";
    std::span<const float> qb, kb, vb;
    LIMBIC_RETURN_IF_ERROR(get(p + "attention.self.query.weight", {h, h}, &l.q_w));
    LIMBIC_RETURN_IF_ERROR(get(p + "attention.self.query.bias", {h}, &qb));
    LIMBIC_RETURN_IF_ERROR(get(p + "attention.self.key.weight", {h, h}, &l.k_w));
    LIMBIC_RETURN_IF_ERROR(get(p + "attention.self.key.bias", {h}, &kb));
    LIMBIC_RETURN_IF_ERROR(get(p + "attention.self.value.weight", {h, h}, &l.v_w));
    LIMBIC_RETURN_IF_ERROR(get(p + "attention.self.value.bias", {h}, &vb));
    l.qkv_b.insert(l.qkv_b.end(), qb.begin(), qb.end());
    l.qkv_b.insert(l.qkv_b.end(), kb.begin(), kb.end());
    l.qkv_b.insert(l.qkv_b.end(), vb.begin(), vb.end());
    LIMBIC_RETURN_IF_ERROR(get(p + "attention.output.dense.weight", {h, h}, &l.out_w));
    LIMBIC_RETURN_IF_ERROR(get(p + "attention.output.dense.bias", {h}, &l.out_b));
    LIMBIC_RETURN_IF_ERROR(get_norm(p + "attention.output.LayerNorm", &l.ln1_w, &l.ln1_b));
    LIMBIC_RETURN_IF_ERROR(get(p + "intermediate.dense.weight", {i, h}, &l.ffn_in_w));
    LIMBIC_RETURN_IF_ERROR(get(p + "intermediate.dense.bias", {i}, &l.ffn_in_b));
    LIMBIC_RETURN_IF_ERROR(get(p + "output.dense.weight", {h, i}, &l.ffn_out_w));
    LIMBIC_RETURN_IF_ERROR(get(p + "output.dense.bias", {h}, &l.ffn_out_b));
    LIMBIC_RETURN_IF_ERROR(get_norm(p + "output.LayerNorm", &l.ln2_w, &l.ln2_b));
  }
  m->file_ = std::move(file);
  return m;
}

double BertModel::Flops(size_t n) const {
  const double t = double(n), h = double(config_.hidden), i = double(config_.intermediate);
  const double per_layer = 2 * t * h * 3 * h + 2 * 2 * t * t * h + 2 * t * h * h + 2 * 2 * t * h * i;
  return per_layer * double(config_.layers);
}

void BertModel::SetThreads(int n) {
  if (auto blas = LoadBlas(); blas.ok()) (*blas)->set_num_threads(std::max(1, n));
}

Result<std::vector<std::vector<float>>> BertModel::Encode(
    std::span<const std::vector<int32_t>> batch, Pooling pooling) const {
  for (size_t s = 0; s < batch.size(); ++s) {
    const auto& seq = batch[s];
    std::string where = "sequence " + std::to_string(s);
    if (seq.empty()) return Status::InvalidArgument(where + " is empty");
    if (seq.size() > config_.max_position)
      return Status::InvalidArgument(where + " has " + std::to_string(seq.size()) +
                                     " tokens, more than max_position_embeddings " +
                                     std::to_string(config_.max_position));
    for (size_t t = 0; t < seq.size(); ++t)
      if (seq[t] < 0 || size_t(seq[t]) >= config_.vocab_size)
        return Status::InvalidArgument(where + ": token id " + std::to_string(seq[t]) + " at " +
                                       std::to_string(t) + " is outside [0, vocab_size " +
                                       std::to_string(config_.vocab_size) + ")");
  }
  std::vector<std::vector<float>> out;
  out.reserve(batch.size());
  for (size_t begin = 0; begin < batch.size();) {
    size_t end = begin, tokens = 0;
    while (end < batch.size() && (end == begin || tokens + batch[end].size() <= kChunkTokens))
      tokens += batch[end++].size();
    try {
      LIMBIC_RETURN_IF_ERROR(Forward(batch.subspan(begin, end - begin), tokens, pooling, &out));
    } catch (const std::bad_alloc&) {
      return Status::Unavailable("out of memory encoding " + std::to_string(tokens) +
                                 " tokens (memory.embedder.batch and max_tokens bound it)");
    }
    begin = end;
  }
  return out;
}

// The sequences are packed one after another (no padding): the row-wise
// steps run over all `tokens` rows at once, and attention runs per
// sequence over its own rows only, which is what a padded batch with
// -inf on the padding keys computes, without the padding's work.
Status BertModel::Forward(std::span<const std::vector<int32_t>> seqs, size_t tokens,
                        Pooling pooling, std::vector<std::vector<float>>* out) const {
  const size_t h = config_.hidden, i = config_.intermediate, heads = config_.heads;
  const size_t d = h / heads, h3 = 3 * h;
  size_t longest = 0;
  for (const auto& s : seqs) longest = std::max(longest, s.size());
  // Scratch, not zeroed: every element is written before it is read.
  auto scratch = [](size_t n) { return std::make_unique_for_overwrite<float[]>(n); };
  auto x = scratch(tokens * h), qkv = scratch(tokens * h3), ctx = scratch(tokens * h),
       ffn = scratch(tokens * i), scores = scratch(std::min(longest, kAttentionRows) * longest);
  const float eps = static_cast<float>(config_.layer_norm_eps);

  // 1. Embeddings: word + position + token type 0, then LayerNorm.
  for (size_t s = 0, row = 0; s < seqs.size(); ++s) {
    for (size_t t = 0; t < seqs[s].size(); ++t, ++row) {
      const float* w = word_.data() + size_t(seqs[s][t]) * h;
      const float* p = position_.data() + t * h;
      float* dst = x.get() + row * h;
      for (size_t c = 0; c < h; ++c) dst[c] = w[c] + p[c] + token_type_[c];
    }
  }
  kernels::LayerNorm(x.get(), tokens, h, nullptr, ln_w_.data(), ln_b_.data(), eps);

  const kernels::Act act = config_.act == "gelu" ? kernels::Act::kGelu
                           : config_.act == "relu" ? kernels::Act::kRelu
                                                   : kernels::Act::kGeluTanh;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (const Layer& l : layers_) {
    // 2. Q, K, V side by side in one [tokens, 3h] matrix, biases first.
    for (size_t r = 0; r < tokens; ++r)
      std::memcpy(qkv.get() + r * h3, l.qkv_b.data(), h3 * sizeof(float));
    Linear(*blas_, x.get(), tokens, h, l.q_w, h, qkv.get(), h3, true);
    Linear(*blas_, x.get(), tokens, h, l.k_w, h, qkv.get() + h, h3, true);
    Linear(*blas_, x.get(), tokens, h, l.v_w, h, qkv.get() + 2 * h, h3, true);

    // 3. Attention per sequence and head: softmax(q k^T / sqrt(d)) v, a
    // block of query rows at a time (each row's softmax is its own).
    for (size_t s = 0, row = 0; s < seqs.size(); row += seqs[s].size(), ++s) {
      const size_t n = seqs[s].size();
      for (size_t head = 0; head < heads; ++head) {
        const float* q = qkv.get() + row * h3 + head * d;  // k is at q + h, v at q + 2h
        for (size_t r0 = 0; r0 < n; r0 += kAttentionRows) {
          const size_t rows = std::min(kAttentionRows, n - r0);
          blas_->sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(rows), int(n), int(d), scale,
                       q + r0 * h3, int(h3), q + h, int(h3), 0.0f, scores.get(), int(n));
          kernels::Softmax(scores.get(), rows, n, n);
          blas_->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(rows), int(d), int(n), 1.0f,
                       scores.get(), int(n), q + 2 * h, int(h3), 0.0f,
                       ctx.get() + (row + r0) * h + head * d, int(h));
        }
      }
    }

    // 4. x = LayerNorm(x + ctx Wo^T + bo): the product accumulates into x.
    Linear(*blas_, ctx.get(), tokens, h, l.out_w, h, x.get(), h, true);
    kernels::LayerNorm(x.get(), tokens, h, l.out_b.data(), l.ln1_w.data(), l.ln1_b.data(), eps);

    // 5. x = LayerNorm(x + act(x Wi^T + bi) Wo2^T + bo2).
    Linear(*blas_, x.get(), tokens, h, l.ffn_in_w, i, ffn.get(), i, false);
    kernels::BiasAct(ffn.get(), tokens, i, l.ffn_in_b.data(), act);
    Linear(*blas_, ffn.get(), tokens, i, l.ffn_out_w, h, x.get(), h, true);
    kernels::LayerNorm(x.get(), tokens, h, l.ffn_out_b.data(), l.ln2_w.data(), l.ln2_b.data(),
                       eps);
  }

  // 6. Pooling, then unit length (a zero vector stays zero).
  for (size_t s = 0, row = 0; s < seqs.size(); row += seqs[s].size(), ++s) {
    std::vector<double> sum(h, 0.0);
    const size_t n = pooling == Pooling::kCls ? 1 : seqs[s].size();
    for (size_t t = 0; t < n; ++t)
      for (size_t c = 0; c < h; ++c) sum[c] += x[(row + t) * h + c];
    double norm = 0;
    for (double v : sum) norm += v * v;
    norm = std::sqrt(norm);
    if (!std::isfinite(norm))
      return Status::Corruption(file_->path() + ": the model gave a vector with NaN or Inf (its "
                                "weights hold non-finite values?)");
    std::vector<float> v(h, 0.0f);
    if (norm > 0)
      for (size_t c = 0; c < h; ++c) v[c] = static_cast<float>(sum[c] / norm);
    out->push_back(std::move(v));
  }
  return Status::OK();
}

}  // namespace limbic::memory::encoder
