// RecallIndex: what recall searches, kept in memory beside the memory pool.
//
// It holds, for every memory record in the projection:
//   - what filtering and weighting need (MemoryMeta), without the text;
//   - the record's text in an in-memory BM25 index (terms of the
//     analyzer, archive/analyzer.h; k1 and b configurable), with what
//     a memory's context needs: its episode (namespace + episode_id) and
//     its neighbours, the memories stored just before and after it in the
//     same episode (or, without an episode_id, in the same namespace and
//     within ContextParams::window). Facts stand alone: they have neither;
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
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "archive/analyzer.h"
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

// Chosen by measurement on bench/recall's tuning part (docs/memory.md,
// "Measuring recall"): memories are short, so length counts for little.
struct Bm25Params {
  double k1 = 0.9;
  double b = 0.3;
};

// What a memory's context adds to its lexical score (Lexical, below).
struct ContextParams {
  double neighbours = 0.2;  // x each neighbour's own score, over the best own score
  double episode = 0.5;     // x its episode's score, over the best episode's
  // Memories without an episode_id are neighbours only when stored within
  // this of each other (ms); 0: never.
  TimeMs window = 30 * 60 * 1000;
};

// How recall fuses its lists (docs/memory.md, "Recall"): each list's
// part is its weight x, for "score", the item's score over the list's best
// (lexical: Lexical's score; vector: the cosine; archive: its BM25) or,
// for "rrf", 1 / (rrf_k + its rank in the list).
struct FusionParams {
  std::string method = "score";  // score | rrf
  double lexical = 1.0;
  double vector = 0.2;
  double archive = 0.5;
  bool rrf() const { return method == "rrf"; }
};

// A memory of the lexical list and the parts of its score.
struct LexicalHit {
  std::string id;
  double score = 0;       // own + neighbours + episode: the list's order
  double bm25 = 0;        // its own BM25 score (0: reached by its context only)
  double own = 0;         // bm25 over the best own score of the query
  double neighbours = 0;  // the neighbours' part
  double episode = 0;     // the episode's part
};

using MetaFilter = std::function<bool(const MemoryMeta&)>;

class RecallIndex {
 public:
  RecallIndex(std::string embedder_id, VectorIndexOptions vectors, Bm25Params bm25,
              std::shared_ptr<const archive::Analyzer> analyzer, ContextParams context = {});

  // Adds or updates from a memory record (reducer.h's shape).
  void Put(const json& record);
  void Remove(const std::string& id);
  const MemoryMeta* Find(const std::string& id) const;
  size_t size() const { return meta_.size(); }
  // How many memories are superseded (recall's default filter skips them;
  // with none, it need not filter at all).
  size_t superseded() const { return superseded_; }
  void ForEach(const std::function<void(const MemoryMeta&)>& fn) const;

  // The best `n` memories for `query` by their words and their context,
  // that pass `filter`, best first (ties by id). With S(d) the BM25 score
  // of memory d and S* the best S of the query:
  //   score(d) = S(d)/S* + neighbours x (S(prev)+S(next))/S* + episode x E(e)/E*
  // where prev and next are d's neighbours, E(e) is the BM25 score (k1 1.2,
  // b 0.75) of d's episode e as one document of all its memories' terms
  // among the episodes, and E* the best E. Candidates are the memories
  // holding a query term, and the neighbours of the best n of those. No terms, or none
  // indexed: empty. Every posting of the query's terms is scored (term at
  // a time, into a dense array); the filter is asked only of memories
  // that would make the best n so far.
  std::vector<LexicalHit> Lexical(std::string_view query, size_t n, const MetaFilter& filter) const;
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
    uint32_t stream = 0;          // streams_ index; kNone for a fact
    TimeMs created = 0;
    uint64_t seq = 0;             // of its id m-<seq>: the order within a stream
  };
  // The memories of one namespace and episode_id ("" too), in the order
  // they were stored: what neighbours are; an episode when the id is set.
  struct Stream {
    bool episode = false;  // has an episode_id
    uint32_t live = 0;
    uint64_t length = 0;   // of its live memories, in terms
    // (created, seq, slot) -> slot: the order stored, the slot only
    // telling apart what the rest cannot.
    std::map<std::tuple<TimeMs, uint64_t, uint32_t>, uint32_t> order;
  };
  static constexpr uint32_t kNone = UINT32_MAX;
  void IndexText(const MemoryMeta& m, std::string_view text);
  // Whether two memories of stream `s` are near enough to be neighbours:
  // always in an episode; without one, within context_.window.
  bool Near(const Stream& s, uint32_t a, uint32_t b) const;
  // Makes `before` and `after` (either kNone) each other's neighbours if
  // they are Near, else neither's.
  void Pair(const Stream& s, uint32_t before, uint32_t after);
  // Relinks prev_/next_ around `at`'s place in its stream.
  void Link(const Stream& s,
            std::map<std::tuple<TimeMs, uint64_t, uint32_t>, uint32_t>::const_iterator at);
  // Accumulates the BM25 of `terms` into scratch_ (touched_), and with
  // episodes, E into episode_score_ (episodes_touched_).
  void Accumulate(const std::set<std::string>& terms, bool episodes) const;
  void UnindexText(const std::string& id);
  void Compact();

  std::string embedder_id_;
  Bm25Params bm25_;
  ContextParams context_;
  std::shared_ptr<const archive::Analyzer> analyzer_;
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
  // Per slot: its neighbours (kNone: none, or not Near) and its stream.
  std::vector<uint32_t> prev_, next_, stream_of_;
  std::vector<TimeMs> created_;
  std::vector<Stream> streams_;
  std::unordered_map<std::string, uint32_t> stream_ids_;  // ns \0 episode_id -> index
  size_t live_episodes_ = 0;
  uint64_t episode_length_ = 0;  // of the live memories with an episode_id
  // Lexical's per-query scratch: per episode, zero between calls like
  // scratch_; the memories reached only as neighbours.
  mutable std::vector<double> episode_score_, episode_tf_;
  mutable std::vector<uint32_t> episodes_touched_, term_episodes_, candidates_;
  std::unordered_map<std::string, uint32_t> slot_of_;
  size_t live_ = 0, dead_ = 0;
  size_t superseded_ = 0;
  uint64_t total_length_ = 0;
  std::unique_ptr<VectorIndex> vectors_;
};

}  // namespace limbic::memory
