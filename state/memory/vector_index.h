// Nearest neighbours over the unit vectors of one embedder: exact up to a
// size, approximate (HNSW, hnswlib) beyond it.
//
// Entries are (id, version, vector); the version is the seq of the event
// that set the vector, so re-adding an unchanged entry is a no-op and a
// saved index can be brought up to date by offering it every current
// entry (Upsert) and then dropping the rest (RetainOnly).
//
// Search is exact (a scan computing every dot product) while size() <=
// exact_limit. Beyond it an HNSW graph (inner-product space, M = `m`,
// ef_construction, ef_search) answers; it is built from all entries the
// first time the size passes the limit and kept up to date by later
// Upserts and Removes after that (removed entries are marked deleted, and
// their slots reused). Filtered searches on the graph ask it for more
// candidates (k * 4, then all) until k pass the filter or it has no more.
// ef_search is raised to at least k.
//
// Persistence: Save writes <path> (the graph, hnswlib's format) and
// <path>.ids (id, version and label of each entry) through temp files and
// rename; Load reads them back. A missing pair is NotFound (build from the
// entries instead); a damaged or mismatching pair (other dims, ids that do
// not match the graph) is Corruption: the caller deletes it and rebuilds.
// An exact-mode index saves only its ids file and vectors (no graph).
//
// Memory: 4 * dims bytes per entry for the vectors, plus the graph's
// ~ (m * 2 * 4 + 8) bytes per entry in approximate mode.
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

#include "state/status.h"

namespace limbic::memory {

struct VectorIndexOptions {
  size_t dims = 384;
  size_t exact_limit = 20000;  // exact search up to this many entries
  size_t m = 16;
  size_t ef_construction = 200;
  size_t ef_search = 128;
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
  // InvalidArgument when v.size() != dims.
  Status Upsert(const std::string& id, uint64_t version, std::span<const float> v);
  void Remove(const std::string& id);
  // Removes every entry whose id is not in `keep` (sorted).
  void RetainOnly(const std::vector<std::string>& keep);
  bool Contains(const std::string& id) const;
  size_t size() const;
  bool approximate() const;

  // The best k entries with cosine >= threshold that pass `filter` (when
  // given), best first; ties by id.
  std::vector<VectorHit> Search(std::span<const float> query, size_t k, float threshold,
                                const std::function<bool(const std::string& id)>& filter = {}) const;
  // Always exact, whatever the size (the benchmark's reference).
  std::vector<VectorHit> SearchExact(std::span<const float> query, size_t k, float threshold,
                                     const std::function<bool(const std::string& id)>& filter = {}) const;

  Status Save(const std::string& path) const;
  Status Load(const std::string& path);
  // True when something changed since the last Save or Load.
  bool dirty() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace limbic::memory
