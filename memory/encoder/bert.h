// A BERT-family encoder's forward pass, in f32, on the CPU: the sentence
// encoders MiniLM-L6/L12, BGE-small/base, E5-small/base and GTE-small are
// all this shape.
//
//   x   = LayerNorm(word[ids] + position[0..n) + token_type[0])
//   for each layer:
//     q,k,v = x Wq + bq, x Wk + bk, x Wv + bv         (heads of hidden/heads)
//     a     = softmax(q k^T / sqrt(d) + mask) v       (mask: padding = -inf)
//     x     = LayerNorm(x + a Wo + bo)
//     x     = LayerNorm(x + act(x Wi + bi) Wo2 + bo2) (act: gelu = erf form)
//   pooled  = mean of x over the real tokens, or x[CLS]; then L2-normalised.
//
// Weights come from a SafeTensors under HF's BERT names
// (embeddings.word_embeddings.weight, encoder.layer.N.attention.self.query.weight,
// ...), with or without a "bert." prefix; LayerNorm's gamma/beta are read
// as weight/bias. A missing tensor or a shape that disagrees with the config
// is InvalidArgument naming the file and the tensor. The pooler and any
// head are ignored.
//
// Matrix products go through BLAS (OpenBLAS, opened on first use: blas.h;
// Debian's build picks the CPU's kernels at run time -- bench/NOTES.md,
// "sentence encoder: BLAS"); Load fails with Unavailable without it;
// the elementwise steps are memory/encoder/bert_kernels.h. A batch's
// sequences are packed end to end rather than padded: the row-wise steps
// see only real tokens, and attention runs per sequence over its own keys
// (what a padded batch with -inf on the padding computes, without the
// padding's work). Long batches run in chunks of about 8192 tokens.
//
// Thread-safety: a BertModel is immutable after Load; Encode from many
// threads at once (each call has its own scratch). SetThreads is process-wide.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "memory/encoder/safetensors.h"

namespace limbic::memory::encoder {

struct BertConfig {
  size_t vocab_size = 0, hidden = 0, layers = 0, heads = 0, intermediate = 0;
  size_t max_position = 512, type_vocab = 2;
  double layer_norm_eps = 1e-12;
  std::string act = "gelu";  //!< gelu | gelu_new | gelu_pytorch_tanh | relu
  //! config.json's vocab_size, hidden_size, num_hidden_layers,
  //! num_attention_heads, intermediate_size, max_position_embeddings,
  //! type_vocab_size, layer_norm_eps, hidden_act. model_type must be bert
  //! (or absent); others are refused by name. Sizes are checked: positive,
  //! hidden divisible by heads, each at most 1<<20, the parameter count at most 2^31.
  static Result<BertConfig> FromJsonFile(const std::string& path);
  static Result<BertConfig> FromJson(const std::string& text, const std::string& path);
};

enum class Pooling { kMean, kCls };
struct Blas;  // blas.h

class BertModel {
 public:
  //! Reads and checks every weight; `file` is kept alive by the model.
  //! F32 weights are used in place in the mapping; F16/BF16 are converted
  //! once, into `file`.
  static Result<std::unique_ptr<BertModel>> Load(const BertConfig& config,
                                                 std::shared_ptr<const SafeTensors> file);
  ~BertModel();
  //! One unit-length vector per sequence, in order. Each sequence is
  //! non-empty token ids (below vocab_size; [CLS] ... [SEP] as the tokenizer
  //! made them) of at most config().max_position ids; InvalidArgument otherwise.
  Result<std::vector<std::vector<float>>> Encode(std::span<const std::vector<int32_t>> batch,
                                                 Pooling pooling) const;
  BertModel(const BertModel&) = delete;
  BertModel& operator=(const BertModel&) = delete;

  const BertConfig& config() const { return config_; }
  size_t dims() const { return config_.hidden; }
  //! Floating-point operations of Encode on one sequence of n tokens (the
  //! matrix products; the benchmark's GFLOP/s).
  double Flops(size_t n) const;
  //! Bounds BLAS's threads, process-wide (memory.embedder.threads).
  static void SetThreads(int n);

 private:
  BertModel() = default;
  struct Layer;
  //! Encodes `seqs` (checked; `tokens` ids in all) and appends their vectors
  //! to *out; Corruption when a vector comes out NaN or Inf (weights that
  //! hold such values).
  Status Forward(std::span<const std::vector<int32_t>> seqs, size_t tokens, Pooling pooling,
               std::vector<std::vector<float>>* out) const;

  BertConfig config_;
  std::shared_ptr<const SafeTensors> file_;
  const Blas* blas_ = nullptr;  //!< blas.h, loaded by Load
  std::span<const float> word_, position_, token_type_, ln_w_, ln_b_;
  std::vector<Layer> layers_;
};

}  // namespace limbic::memory::encoder
