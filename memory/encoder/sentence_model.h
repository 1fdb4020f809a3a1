// A sentence-transformers model directory, loaded: the tokenizer, the BERT
// encoder and the pooling, as `SentenceTransformer(DIR).encode(texts,
// normalize_embeddings=True)` would run them.
//
// The directory, as people download it (`huggingface-cli download ORG/NAME`):
//   config.json                 the encoder's shape (bert.h BertConfig)
//   model.safetensors           the weights (safetensors.h); a
//                               pytorch_model.bin alone is refused, naming
//                               the conversion
//   tokenizer.json              the tokenizer, or else
//   vocab.txt [+ tokenizer_config.json]
//   modules.json                optional: Transformer, Pooling and Normalize
//                               modules only (another, e.g. Dense, is refused
//                               by name); the Transformer's path is where
//                               the files above are
//   1_Pooling/config.json       optional (the Pooling module's path):
//                               pooling_mode_mean_tokens or _cls_token; the
//                               other modes are refused by name. Without
//                               it, mean pooling (sentence-transformers'
//                               default for a plain encoder).
//   sentence_bert_config.json   optional: max_seq_length
// The longest input, in tokens with [CLS] and [SEP], is the least of
// max_seq_length, the tokenizer's limit, max_position_embeddings,
// kMaxSequenceTokens and the caller's max_tokens; longer texts are cut (as
// sentence-transformers does).
// Vectors are always L2-normalised: limbic compares unit vectors.
//
// Errors name the file, and the key or tensor: a model directory is input
// like any other, and a bad one never crashes the process.
//
// Thread-safety: Load from any thread; a SentenceModel is immutable and
// Encode runs on many threads at once. Load shares one model per directory
// and max_tokens across the process while anyone holds it: the weights are
// mapped, read and checked once.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "memory/encoder/bert.h"
#include "memory/encoder/wordpiece.h"

namespace limbic::memory::encoder {

//! The most tokens a text is encoded with, whatever the model allows: a
//! forward pass costs n^2 in the text's tokens, and a config.json may
//! claim max_position_embeddings of a million (with a tensor to match).
inline constexpr size_t kMaxSequenceTokens = 8192;

//! Where a model named by the user is.
struct ModelLocation {
  std::string dir;   //!< the model directory, absolute
  std::string name;  //!< "ORG/NAME" from the Hugging Face cache, else the directory's name
};

//! The Hugging Face hub cache directories FindModel looks in, in order:
//! $HF_HUB_CACHE, $HUGGINGFACE_HUB_CACHE, $HF_HOME/hub,
//! $XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub (each only
//! when its variable is set).
std::vector<std::string> HubCacheDirs();

//! `model` as a directory (absolute, or relative to the working directory),
//! or as a name in the Hugging Face cache layout:
//!   CACHE/models--ORG--NAME/snapshots/REV/ with REV from refs/main, or the
//!   only snapshot, or else the most recently written one;
//! a NAME without ORG/ is also looked for as sentence-transformers/NAME.
//! NotFound saying every place it looked.
Result<ModelLocation> FindModel(const std::string& model);

class SentenceModel {
 public:
  //! Loads (or shares) the model at `where`. max_tokens 0: the model's own limit.
  static Result<std::shared_ptr<const SentenceModel>> Load(const ModelLocation& where,
                                                           size_t max_tokens = 0);

  //! One unit vector per text, in order, encoded `batch` texts at a time
  //! (>= 1): a forward pass's scratch grows with its tokens.
  Result<std::vector<std::vector<float>>> Encode(std::span<const std::string> texts,
                                                 size_t batch) const;

  const ModelLocation& where() const { return where_; }
  //! SHA-256 (hex) of everything that decides a vector: the weights' file,
  //! the tokenizer's files, the pooling and the length limit.
  const std::string& hash() const { return hash_; }
  size_t dims() const { return model_->dims(); }
  size_t max_length() const { return tokenizer_.options().max_length; }
  Pooling pooling() const { return pooling_; }
  const WordPiece& tokenizer() const { return tokenizer_; }
  const BertModel& model() const { return *model_; }

 private:
  SentenceModel(ModelLocation where, WordPiece tokenizer) : where_(std::move(where)), tokenizer_(std::move(tokenizer)) {}
  static Result<std::shared_ptr<const SentenceModel>> LoadUncached(const ModelLocation& where,
                                                                   size_t max_tokens);
  ModelLocation where_;
  WordPiece tokenizer_;
  std::unique_ptr<BertModel> model_;
  Pooling pooling_ = Pooling::kMean;
  std::string hash_;
};

}  // namespace limbic::memory::encoder
