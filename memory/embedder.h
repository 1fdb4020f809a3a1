// Embedders: text in, unit-length f32 vectors out.
//
// Three implementations, chosen by EmbedderSpec::kind:
//
//   hash    the built-in default. Deterministic feature hashing of word
//           unigrams and bigrams and of character 3-grams (of each word
//           padded with spaces) into `dims` (384) buckets, each feature
//           signed by one more hash bit, then L2-normalised. No model
//           files, no network, the same vector on every machine and
//           version. It is LEXICAL, not semantic: "car" and "automobile"
//           share nothing; texts sharing words and word pieces are close.
//   openai  any OpenAI-compatible POST {url}/v1/embeddings endpoint (OpenAI,
//           Ollama, llama.cpp server, vLLM, Text Embeddings Inference):
//           body {"model": M, "input": [texts]}, answer {"data": [{"index",
//           "embedding": [floats]}]}. Texts are sent in batches of
//           `batch`; each request has `timeout_ms`; `api_key` (if any) goes
//           in "Authorization: Bearer". Vectors are L2-normalised here.
//   local   a sentence-transformers model directory run in this process
//           (memory/encoder/sentence_model.h): `model` is the directory or a
//           name in the Hugging Face cache; `batch` texts per forward pass,
//           `threads` for the matrix products. Semantic, and no server.
//
// id() is the embedder's identity, stored beside every vector: "hash-384"
// for the hash embedder with 384 dims; "openai:" + model; "local:" + the
// model's name + "@" + the first 12 hex digits of its hash (the weights,
// tokenizer, pooling and length limit) + a "+p" and 8 hex digits of the
// passage prefix when there is one. Vectors with different ids are never
// compared.
//
// Prefixes: some models are trained to see "query: " before a question and
// "passage: " before what is stored (E5), or an instruction before a query
// (BGE). query_prefix is put before recall queries, passage_prefix before
// every text stored; they apply to openai and local (a hash spec refuses
// them).
//
// Errors: an unreachable endpoint, a timeout, a non-2xx answer or an answer
// of the wrong shape is Unavailable naming the URL and what went wrong
// (the caller then falls back to BM25 and says so); a vector count or
// dimension that does not match the input is Corruption.
//
// cheap() says whether vectors cost microseconds (hash): the runtime then
// embeds in place; other kinds run on its embed worker, never the io thread.
//
// Thread-safety: Embed may be called from one thread at a time. local
// embedders made from one spec share one loaded model (read-only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace limbic::memory {

using Vector = std::vector<float>;

struct EmbedderSpec {
  std::string kind = "hash";  // hash | openai | local
  size_t dims = 384;          // hash: the number of buckets (>= 8)
  // openai:
  std::string url;            // base URL, e.g. http://127.0.0.1:11434 or
                              // https://api.openai.com/v1 (http_client.h's
                              // OpenAiEndpoint completes it); http or https
  std::string model;          // openai: required; local: a directory or a
                              // Hugging Face cache name (required)
  std::string api_key;        // optional
  int timeout_ms = 10000;     // per request: connect + send + answer
  size_t batch = 64;          // openai: texts per request; local: per
                              // forward pass (>= 1)
  // local:
  size_t threads = 1;         // the matrix products' threads (>= 1)
  size_t max_tokens = 0;      // cut texts at this many tokens (0: the model's limit)
  // openai and local:
  std::string query_prefix, passage_prefix;
};

//! What a text is embedded for: stored (a passage) or searched with (a query).
enum class EmbedRole { kPassage, kQuery };

class Embedder {
 public:
  virtual ~Embedder() = default;
  virtual const std::string& id() const = 0;
  // One unit-length vector per text, in order (an empty text, or one with
  // no features, gives the zero vector). openai does not send empty texts
  // (some servers reject them); their zero vector has the length of the
  // call's other vectors, or of the last call's, or is empty when the
  // embedder has not seen a vector yet.
  // Each text gets the role's prefix first.
  virtual Result<std::vector<Vector>> Embed(std::span<const std::string> texts,
                                            EmbedRole role = EmbedRole::kPassage) = 0;
  virtual bool cheap() const { return false; }
};

// InvalidArgument naming the field for a bad spec (unknown kind, openai
// without url or model, dims < 8, batch 0, timeout <= 0, prefixes on hash);
// for local, FindModel's NotFound (saying where it looked) or the model
// files' own errors (naming the file and tensor).
Result<std::unique_ptr<Embedder>> MakeEmbedder(const EmbedderSpec& spec);

// The EMBEDDING_MODEL environment variable applied over a configured spec
// (call it before MakeEmbedder). The rule:
//   unset or empty  the spec is returned unchanged;
//   "hash"          kind becomes "hash" and the prefixes are dropped (the
//                   other fields are kept);
//   a directory, or a name found in the Hugging Face cache (FindModel),
//                   when the spec is not an openai one with a url: kind
//                   becomes "local" and model the value;
//   anything else   with spec.url set: kind becomes "openai" and model the
//                   value (a name for the server);
//                   without a url: NotFound naming the value and every place
//                   looked -- never a silent fallback to another embedder.
// Reads the environment: not safe concurrently with setenv.
Result<EmbedderSpec> ApplyEmbeddingEnv(EmbedderSpec spec);

// Cosine of two vectors of equal length (dot product; both unit length).
float Cosine(std::span<const float> a, std::span<const float> b);
// The dot product of a[0, n) and b[0, n): AVX2 and FMA where the CPU has
// them (chosen once, at start), portable code elsewhere. Every score the
// vector index computes or compares goes through it, so the graph's
// distances and the exact scan's cosines agree on one machine.
float Dot(const float* a, const float* b, size_t n);
// Scalar quantisation for scans: codes[i] = round(v[i] / scale) in
// [-127, 127] with scale = max |v[i]| / 127 (returned). `error` gets
// ||v - scale * codes|| plus an allowance for float rounding, rounded up,
// so that for any query q of the same size
//   |Dot(q, v) - scale * DotCodes(codes, q)| <= ||q|| * error.
float QuantizeVector(std::span<const float> v, int8_t* codes, float* error);
// sum of codes[i] * q[i] over [0, n) (AVX2 where the CPU has it).
float DotCodes(const int8_t* codes, const float* q, size_t n);
// L2-normalises in place (the zero vector stays zero).
void Normalize(Vector* v);

// A vector as stored in a record: little-endian f32, base64 (RFC 4648, with
// padding). DecodeVector fails (InvalidArgument) on bad base64 or a byte
// count that is not a multiple of 4.
std::string EncodeVector(std::span<const float> v);
Result<Vector> DecodeVector(std::string_view base64);

}  // namespace limbic::memory
