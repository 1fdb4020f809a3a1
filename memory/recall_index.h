// RecallIndex: what recall searches, kept in memory beside the memory pool.
//
// It holds, for every memory record in the projection:
//   - what filtering and weighting need (MemoryMeta), without the text;
//   - the record's text in an in-memory BM25 index (terms of
//     archive::Tokenize; k1 and b configurable, b = 0.5 by default because
//     memories are short);
//   - its vector, when the record's embedding came from `embedder_id`, in a
//     VectorIndex (exact, or HNSW past its exact_limit).
// It is derived state: MemoryStore builds it from the pool on open and
// keeps it current from the applied events; nothing here is the truth.
//
// BM25 is archive::Bm25Scorer's formula (archive/search.h) over the live
// documents. Removed documents leave dead postings behind until they outnumber the
// live ones; then the postings are rebuilt without them.
//
// Thread-safety: one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memory/vector_index.h"
#include "base/time.h"

namespace limbic::memory {

using json = nlohmann::json;

struct MemoryMeta {
  std::string id;
  std::string kind;  // fact | episode | chunk
  std::string ns;
  std::string episode_id;
  std::string document;  // chunks: the document's sha256
  std::vector<std::string> tags;
  double strength = 1;  // as stored: at last_accessed
  double importance = 0.5;
  TimeMs created = 0;
  TimeMs last_accessed = 0;
  uint64_t access_count = 0;
  bool superseded = false;
  bool embedded = false;  // has a vector of this index's embedder
  std::string embedder;   // the record's embedder ("" = none)
};

struct Bm25Params {
  double k1 = 1.2;
  double b = 0.5;
};

using MetaFilter = std::function<bool(const MemoryMeta&)>;

class RecallIndex {
 public:
  RecallIndex(std::string embedder_id, VectorIndexOptions vectors, Bm25Params bm25);

  // Adds or updates from a memory record (reducer.h's shape).
  void Put(const json& record);
  void Remove(const std::string& id);
  const MemoryMeta* Find(const std::string& id) const;
  size_t size() const { return meta_.size(); }
  // How many memories are superseded (recall's default filter skips them;
  // with none, it need not filter at all).
  size_t superseded() const { return superseded_; }
  void ForEach(const std::function<void(const MemoryMeta&)>& fn) const;

  // The best `n` memories for `query` by BM25 that pass `filter`, best
  // first (ties by id). No terms, or none indexed: empty. Every posting of
  // the query's terms is scored (term at a time, into a dense array); the
  // filter is asked only of documents that would make the best n so far.
  std::vector<std::pair<std::string, double>> Bm25(std::string_view query, size_t n,
                                                   const MetaFilter& filter) const;
  // Nearest vectors with cosine >= threshold that pass `filter`.
  std::vector<VectorHit> Nearest(std::span<const float> query, size_t n, float threshold,
                                 const MetaFilter& filter) const;

  // Before the first vector: size the vector index for `dims` (the
  // embedder's, once known). No-op once it holds vectors.
  void EnsureDims(size_t dims);
  const std::string& embedder_id() const { return embedder_id_; }
  VectorIndex& vectors() { return *vectors_; }
  const VectorIndex& vectors() const { return *vectors_; }

 private:
  struct Term {
    uint32_t df = 0;                                      // live documents holding it
    std::vector<std::pair<uint32_t, uint32_t>> postings;  // (slot, tf), dead slots included
  };
  struct Doc {
    std::string id;
    uint32_t length = 0;
    bool alive = false;
    std::vector<uint32_t> terms;  // distinct term ids
  };
  void IndexText(const std::string& id, std::string_view text);
  void UnindexText(const std::string& id);
  void Compact();

  std::string embedder_id_;
  Bm25Params bm25_;
  VectorIndexOptions vector_options_;
  std::unordered_map<std::string, MemoryMeta> meta_;
  std::unordered_map<std::string, uint32_t> term_ids_;
  std::vector<Term> terms_;
  std::vector<Doc> docs_;
  // Per slot, the document's length in terms, kDead once removed: what
  // scoring reads for every posting, apart from the rest of Doc.
  static constexpr uint32_t kDead = UINT32_MAX;
  std::vector<uint32_t> lengths_;
  // Bm25's accumulator (one score per slot, zero between calls) and the
  // slots it touched: kept so that a query does not allocate them.
  mutable std::vector<double> scratch_;
  mutable std::vector<uint32_t> touched_;
  std::unordered_map<std::string, uint32_t> slot_of_;
  size_t live_ = 0, dead_ = 0;
  size_t superseded_ = 0;
  uint64_t total_length_ = 0;
  std::unique_ptr<VectorIndex> vectors_;
};

}  // namespace limbic::memory
