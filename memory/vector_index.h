// Nearest neighbours over the unit vectors of one embedder: exact up to a
// size, approximate (HNSW, hnswlib) beyond it.
//
// Entries are (id, version, vector); the version is the seq of the event
// that set the vector, so re-adding an unchanged entry is a no-op and a
// saved index can be brought up to date by offering it every current
// entry (Upsert) and then dropping the rest (RetainOnly).
//
// Search is exact while size() <= exact_limit: a scan over the vectors
// quantised to int8 (a quarter of the bytes, which is what limits a scan of
// many rows) gives each row an interval that holds its exact cosine; only
// rows whose interval reaches into the best k so far are scored exactly,
// so the answer is the full scan's, ids and scores. Beyond it an HNSW graph (inner-product space, M = `m`,
// ef_construction, ef_search) answers; it is built from all entries the
// first time the size passes the limit and kept up to date by later
// Upserts and Removes after that (removed entries are marked deleted, and
// their slots reused), also should the size fall back under the limit.
// Scores are always recomputed from the stored vectors, so the graph can
// miss a neighbour but never misreport a score. Filtered searches on the
// graph ask it for k * 4 candidates; when fewer than k pass and the graph
// may hold more above the threshold, the exact scan answers (asking the
// graph for "all" would visit every node anyway, more slowly). ef_search is
// raised to at least the number of candidates asked for.
//
// Persistence: Save writes <path> (the graph, hnswlib's format) and
// <path>.ids (id, version and label of each entry) through temp files and
// rename; Load reads them back. A missing pair is NotFound (build from the
// entries instead); a damaged or mismatching pair (other dims, ids that do
// not match the graph, a graph from another Save) is Corruption: the
// caller deletes it and rebuilds. An exact-mode index saves only its ids
// file with the vectors in it (no graph), so Load restores it whole; an
// approximate one reads its vectors back from the graph.
//
// With defer_graph (the runtime's), the graph is brought up to date in
// steps (GraphStep) instead of within Upsert: an entry waits in a queue,
// the searches score the queued entries exactly beside the graph's (or
// scan everything exactly while more than half are queued), and Save
// writes a graph only once nothing is queued.
//
// Memory: 5 * dims + 8 bytes per entry for the vectors and their int8
// codes, plus in approximate mode the graph's own copy of the vectors and
// its links and bookkeeping: ~ (4 * dims + m * 8 + 100) bytes per entry.
//
// Thread-safety: one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace limbic::memory {

// The graph's defaults were chosen on hash-embedder vectors of short texts
// (nearly equidistant: the hard case for a graph), 100,000 of them:
// recall@10 against exact 0.968 (M 32, ef_search 400) where M 16 needs
// ef_search 800 and more time for the same (docs/performance.md).
struct VectorIndexOptions {
  size_t dims = 384;
  size_t exact_limit = 20000;  // exact search up to this many entries
  size_t m = 32;               // graph links per node (applies when a graph is built)
  size_t ef_construction = 200;
  size_t ef_search = 400;  // candidates a graph search keeps (at least k)
  // false: an Upsert past exact_limit goes into the graph at once (and the
  // one that crosses it builds the graph from every entry), however long
  // that takes. true (the runtime's): Upsert only queues it, and
  // GraphStep inserts what is queued a few at a time, so no call holds
  // its thread for longer than a few graph inserts; searches meanwhile
  // score the queued entries exactly, so no answer misses one.
  bool defer_graph = false;
};

struct VectorHit {
  std::string id;
  float score = 0;  // cosine
};

class VectorIndex {
 public:
  explicit VectorIndex(VectorIndexOptions options);
  ~VectorIndex();
  VectorIndex(const VectorIndex&) = delete;
  VectorIndex& operator=(const VectorIndex&) = delete;

  // Adds or replaces `id`; no-op when it is present with this version.
  // InvalidArgument when v.size() != dims or a component is NaN or
  // infinite. Internal when the graph could not be built or updated (hnswlib failed, e.g. out of memory): the entry
  // is stored all the same, searches are exact, and a later Upsert past
  // the limit builds the graph again.
  Status Upsert(const std::string& id, uint64_t version, std::span<const float> v);
  void Remove(const std::string& id);
  // Removes every entry whose id is not in `keep` (sorted).
  void RetainOnly(const std::vector<std::string>& keep);
  bool Contains(const std::string& id) const;
  size_t size() const;
  // True when Search uses the graph: size() > exact_limit (and the graph
  // was built).
  bool approximate() const;
  // The graph's search breadth from now on (at least the k asked for).
  void set_ef_search(size_t ef);
  // With defer_graph: the entries queued for the graph (0 without one).
  size_t graph_backlog() const;
  // Inserts up to `max` queued entries into the graph. Internal when
  // hnswlib fails: the graph and its queue are dropped (searches are
  // exact) and the next Upsert past the limit starts a new one.
  Status GraphStep(size_t max);

  // The best k entries with cosine >= threshold that pass `filter` (when
  // given), best first; ties by id. A query whose size is not dims, or
  // with a component that is not finite, finds nothing. `filter` is called only for entries that would make the cut.
  std::vector<VectorHit> Search(std::span<const float> query, size_t k, float threshold,
                                const std::function<bool(const std::string& id)>& filter = {}) const;
  // Always exact, whatever the size (the benchmark's reference).
  std::vector<VectorHit> SearchExact(std::span<const float> query, size_t k, float threshold,
                                     const std::function<bool(const std::string& id)>& filter = {}) const;

  // IOError when a file cannot be written; a pair left half-replaced by a
  // failure or a crash is Corruption to Load, never a wrong index.
  // FailedPrecondition, writing nothing, while graph_backlog() > 0.
  Status Save(const std::string& path) const;
  // Replaces the contents with the saved ones; on any error the index is
  // left as it was. A saved exact-mode index larger than this exact_limit
  // gets its graph built here (with defer_graph: queued for it).
  Status Load(const std::string& path);
  // True when something changed since the last Save or Load.
  bool dirty() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace limbic::memory
