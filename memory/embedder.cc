// The hash, openai and local embedders, and EMBEDDING_MODEL.
//
// The hash embedder's vectors are stored beside records and compared with
// vectors computed years later, so its feature set is a format, written
// down here. Changing any of it needs a new id() (say "hash2-384"):
//
//   words    := maximal runs of bytes that are ASCII letters or digits or
//               >= 0x80 (so UTF-8 words stay whole), ASCII letters
//               lower-cased. No stop words and no length limit: the list
//               in archive/text.h may change with search, this must not.
//   features := for each word w:            "w:" w              weight 1
//               for each adjacent w1 w2:    "b:" w1 " " w2      weight 1
//               for each byte 3-gram g of " " w " ":  "c:" g    weight 0.5
//   h        := Mix64(FNV-1a-64(feature bytes))  (Mix64 = MurmurHash3 fmix64;
//               FNV's low bits are weak, and the bucket comes from them)
//   bucket   := (h & 0x7fffffffffffffff) % dims;  sign := h >> 63 ? -1 : +1
//   v        := sum of sign * weight per bucket (float, in feature order),
//               then L2-normalised (vector.cc, in double).
//
// 3-grams get half weight because a word of n bytes yields n of them: at
// full weight they would swamp the whole-word features they back up
// (plurals, typos, compounds).
#include "memory/embedder.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/input_json.h"
#include "base/http_client.h"
#include "base/sha256.h"
#include "memory/encoder/sentence_model.h"

namespace limbic::memory {

namespace {

using nlohmann::json;

class Fnv1a64 {
 public:
  Fnv1a64& Add(std::string_view bytes) {
    for (unsigned char c : bytes) {
      h_ ^= c;
      h_ *= 0x100000001b3ULL;
    }
    return *this;
  }
  uint64_t Mixed() const {
    uint64_t k = h_;
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
  }

 private:
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (unsigned char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80) {
      word.push_back(static_cast<char>(c));
    } else if (c >= 'A' && c <= 'Z') {
      word.push_back(static_cast<char>(c + 32));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

class HashEmbedder final : public Embedder {
 public:
  explicit HashEmbedder(size_t dims) : dims_(dims), id_("hash-" + std::to_string(dims)) {}
  const std::string& id() const override { return id_; }

  Result<std::vector<Vector>> Embed(std::span<const std::string> texts, EmbedRole) override {
    std::vector<Vector> out;
    out.reserve(texts.size());
    for (const std::string& text : texts) out.push_back(EmbedOne(text));
    return out;
  }
  bool cheap() const override { return true; }

 private:
  Vector EmbedOne(std::string_view text) const {
    Vector v(dims_, 0.0f);
    auto add = [&](const Fnv1a64& f, float weight) {
      const uint64_t h = f.Mixed();
      v[(h & 0x7fffffffffffffffULL) % dims_] += (h >> 63) ? -weight : weight;
    };
    const std::vector<std::string> words = Words(text);
    for (size_t i = 0; i < words.size(); ++i) {
      add(Fnv1a64().Add("w:").Add(words[i]), 1.0f);
      if (i > 0) add(Fnv1a64().Add("b:").Add(words[i - 1]).Add(" ").Add(words[i]), 1.0f);
      const std::string padded = " " + words[i] + " ";
      for (size_t j = 0; j + 3 <= padded.size(); ++j)
        add(Fnv1a64().Add("c:").Add(std::string_view(padded).substr(j, 3)), 0.5f);
    }
    Normalize(&v);
    return v;
  }

  size_t dims_;
  std::string id_;
};

class OpenAiEmbedder final : public Embedder {
 public:
  OpenAiEmbedder(EmbedderSpec spec, std::string endpoint)
      : spec_(std::move(spec)), endpoint_(std::move(endpoint)), id_("openai:" + spec_.model) {}
  const std::string& id() const override { return id_; }

  Result<std::vector<Vector>> Embed(std::span<const std::string> texts, EmbedRole role) override {
    std::vector<Vector> out(texts.size());
    std::vector<size_t> todo;  // indexes of the texts to send
    for (size_t i = 0; i < texts.size(); ++i)
      if (!texts[i].empty()) todo.push_back(i);
    const std::string& prefix =
        role == EmbedRole::kQuery ? spec_.query_prefix : spec_.passage_prefix;
    size_t dims = 0;
    for (size_t start = 0; start < todo.size(); start += spec_.batch) {
      const size_t n = std::min(spec_.batch, todo.size() - start);
      json input = json::array();
      for (size_t k = 0; k < n; ++k) input.push_back(prefix + texts[todo[start + k]]);
      auto vectors = Request(input, &dims);
      if (!vectors.ok()) return vectors.status();
      for (size_t k = 0; k < n; ++k) out[todo[start + k]] = std::move((*vectors)[k]);
    }
    if (dims != 0) last_dims_ = dims;
    for (size_t i = 0; i < texts.size(); ++i)
      if (texts[i].empty()) out[i].assign(last_dims_, 0.0f);
    return out;
  }

 private:
  // One POST for `input`; `*dims` is the dimension seen so far in this
  // Embed call (0: none yet), and is set from this answer.
  Result<std::vector<Vector>> Request(const json& input, size_t* dims) {
    HttpCall call;
    call.method = "POST";
    call.url = endpoint_;
    call.timeout_ms = spec_.timeout_ms;
    // Texts are not always valid UTF-8; replacing bad bytes beats failing.
    call.body = json{{"model", spec_.model}, {"input", input}}.dump(-1, ' ', false,
                                                                   json::error_handler_t::replace);
    call.headers.emplace_back("Accept", "application/json");
    if (!spec_.api_key.empty()) call.headers.emplace_back("Authorization", "Bearer " + spec_.api_key);
    auto res = Fetch(call);
    if (!res.ok()) return res.status();
    const std::string where = "POST " + endpoint_;
    if (res->status < 200 || res->status > 299)
      return Status::Unavailable(where + ": HTTP " + std::to_string(res->status) + ": " +
                                 res->body.substr(0, 200));
    auto shape = [&](const std::string& why) { return Status::Unavailable(where + ": the answer " + why); };
    auto parsed = ParseInputJson(res->body);
    if (!parsed.ok()) return shape(AnswerRefusal(parsed.status()));
    const json answer = std::move(*parsed);
    if (!answer.is_object() || !answer.contains("data") || !answer["data"].is_array())
      return shape("has no data array");
    const json& data = answer["data"];
    const size_t n = input.size();
    if (data.size() != n)
      return Status::Corruption(where + ": " + std::to_string(data.size()) + " embeddings for " +
                                std::to_string(n) + " texts");
    std::vector<Vector> vectors(n);
    for (size_t k = 0; k < n; ++k) {
      const json& item = data[k];
      const std::string name = "data[" + std::to_string(k) + "]";
      if (!item.is_object() || !item.contains("embedding") || !item["embedding"].is_array())
        return shape(name + " has no embedding array");
      // "index" places the vector; servers that omit it answer in order.
      size_t index = k;
      if (item.contains("index")) {
        if (!item["index"].is_number_unsigned()) return shape(name + ".index is not a count");
        index = item["index"].get<size_t>();
      }
      if (index >= n || !vectors[index].empty())
        return Status::Corruption(where + ": " + name + ".index " + std::to_string(index) +
                                  " is out of range or repeated");
      const json& e = item["embedding"];
      if (e.empty()) return shape(name + ".embedding is empty");
      if (*dims == 0) *dims = e.size();
      if (e.size() != *dims)
        return Status::Corruption(where + ": " + name + " has " + std::to_string(e.size()) +
                                  " dimensions, the others " + std::to_string(*dims));
      Vector& v = vectors[index];
      v.reserve(e.size());
      for (const json& x : e) {
        if (!x.is_number()) return shape(name + ".embedding has a non-number");
        const float f = static_cast<float>(x.get<double>());
        if (!std::isfinite(f)) return shape(name + ".embedding has a number out of float range");
        v.push_back(f);
      }
      Normalize(&v);
    }
    return vectors;
  }

  EmbedderSpec spec_;
  std::string endpoint_;  // spec_.url + "/v1/embeddings"
  std::string id_;
  size_t last_dims_ = 0;
};

// A sentence encoder in this process. The texts of one call are encoded
// spec.batch at a time; the model is shared with every other local
// embedder of the same directory.
class LocalEmbedder final : public Embedder {
 public:
  LocalEmbedder(EmbedderSpec spec, std::shared_ptr<const encoder::SentenceModel> model)
      : spec_(std::move(spec)), model_(std::move(model)) {
    id_ = "local:" + model_->where().name + "@" + model_->hash().substr(0, 12);
    if (!spec_.passage_prefix.empty()) id_ += "+p" + Sha256::Hex(spec_.passage_prefix).substr(0, 8);
  }
  const std::string& id() const override { return id_; }

  // A text with no tokens of its own ("", whitespace, control characters)
  // gets the zero vector, as the contract says, not the model's vector of
  // "[CLS] [SEP]" (or of the prefix alone): that one is the same for every
  // such text, so each would be a "near-duplicate" of the first.
  Result<std::vector<Vector>> Embed(std::span<const std::string> texts, EmbedRole role) override {
    const std::string& prefix =
        role == EmbedRole::kQuery ? spec_.query_prefix : spec_.passage_prefix;
    std::vector<size_t> kept;
    std::vector<std::string> input;
    for (size_t i = 0; i < texts.size(); ++i) {
      if (model_->tokenizer().Encode(texts[i]).size() <= 2) continue;  // [CLS] [SEP]
      kept.push_back(i);
      input.push_back(prefix + texts[i]);
    }
    auto encoded = model_->Encode(input, spec_.batch);
    if (!encoded.ok()) return encoded.status();
    std::vector<Vector> out(texts.size(), Vector(model_->dims(), 0.0f));
    for (size_t k = 0; k < kept.size(); ++k) out[kept[k]] = std::move((*encoded)[k]);
    return out;
  }

 private:
  EmbedderSpec spec_;
  std::shared_ptr<const encoder::SentenceModel> model_;
  std::string id_;
};

Result<std::unique_ptr<Embedder>> MakeLocal(const EmbedderSpec& spec) {
  if (spec.model.empty())
    return Status::InvalidArgument("embedder model: required for local (a model directory or a "
                                   "Hugging Face name)");
  if (spec.batch == 0) return Status::InvalidArgument("embedder batch: must be >= 1");
  if (spec.threads == 0) return Status::InvalidArgument("embedder threads: must be >= 1");
  if (spec.max_tokens == 1)
    return Status::InvalidArgument("embedder max_tokens: must be 0 (the model's limit) or >= 2 "
                                   "([CLS] and [SEP])");
  auto where = encoder::FindModel(spec.model);
  if (!where.ok()) return where.status().WithContext("embedder model");
  auto model = encoder::SentenceModel::Load(*where, spec.max_tokens);
  if (!model.ok()) return model.status().WithContext("embedder model " + where->dir);
  encoder::BertModel::SetThreads(static_cast<int>(spec.threads));
  return std::unique_ptr<Embedder>(new LocalEmbedder(spec, std::move(*model)));
}

}  // namespace

Result<std::unique_ptr<Embedder>> MakeEmbedder(const EmbedderSpec& spec) {
  if (spec.kind == "hash") {
    if (spec.dims < 8) return Status::InvalidArgument("embedder dims: must be >= 8");
    if (!spec.query_prefix.empty() || !spec.passage_prefix.empty())
      return Status::InvalidArgument(
          "embedder query_prefix/passage_prefix: only for the local and openai kinds (the hash "
          "embedder would only hash the prefix's words into every vector)");
    return std::unique_ptr<Embedder>(new HashEmbedder(spec.dims));
  }
  if (spec.kind == "local") return MakeLocal(spec);
  if (spec.kind != "openai")
    return Status::InvalidArgument("embedder kind \"" + spec.kind +
                                   "\": must be hash, openai or local");
  if (spec.url.empty()) return Status::InvalidArgument("embedder url: required for openai");
  if (spec.model.empty()) return Status::InvalidArgument("embedder model: required for openai");
  if (spec.batch == 0) return Status::InvalidArgument("embedder batch: must be >= 1");
  if (spec.timeout_ms <= 0) return Status::InvalidArgument("embedder timeout_ms: must be > 0");
  if (spec.api_key.find_first_of("\r\n") != std::string::npos)
    return Status::InvalidArgument("embedder api_key: has a line break");
  std::string endpoint = OpenAiEndpoint(spec.url, "/embeddings");
  auto parsed = ParseUrl(endpoint);
  if (!parsed.ok()) return parsed.status().WithContext("embedder url");
  return std::unique_ptr<Embedder>(new OpenAiEmbedder(spec, std::move(endpoint)));
}

Result<EmbedderSpec> ApplyEmbeddingEnv(EmbedderSpec spec) {
  const char* value = std::getenv("EMBEDDING_MODEL");
  if (value == nullptr || *value == '\0') return spec;
  const std::string name = value;
  if (name == "hash") {
    // A model's prefixes ("query: ") would only be hashed into every vector.
    spec.kind = "hash";
    spec.query_prefix.clear();
    spec.passage_prefix.clear();
    return spec;
  }
  const bool server = !spec.url.empty();
  if (spec.kind != "openai" || !server) {
    auto found = encoder::FindModel(name);
    if (found.ok()) {
      spec.kind = "local";
      spec.model = name;
      return spec;
    }
    if (!server)
      return Status::NotFound("EMBEDDING_MODEL=" + name + ": " + found.status().message() +
                              "; for a model an OpenAI-compatible server runs, set "
                              "memory.embedder.url");
  }
  spec.kind = "openai";
  spec.model = name;
  return spec;
}

}  // namespace limbic::memory
