// The relation graph: <state>/memory/graph.jsonl, one triplet per line,
// {"subject","predicate","object","date"} (docs/world.md "Graph").
//
// Deduplicated by (NameKey(subject), predicate, NameKey(object)): the first
// observation's line is kept and later ones add nothing (entity pages keep
// the dated history). Lines are only ever appended, under an exclusive
// flock on the file, after re-reading what other writers appended since
// this store last looked, so several processes can share one graph.
//
// Lines that are not a JSON object with four strings (a hand edit gone
// wrong) are skipped and counted in bad_lines(), never rewritten or lost.
//
// Traversal treats edges as undirected (A —p→ B links A and B both ways)
// and reports each edge as written.
//
// Thread-safety: one GraphStore per thread.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "state/memory/world/model.h"

namespace limbic::world {

class GraphStore {
 public:
  // Loads `path` (<state>/memory/graph.jsonl); a missing file is an empty graph.
  static Result<std::unique_ptr<GraphStore>> Open(const std::string& path);
  ~GraphStore();

  // Appends the triplets not already in the graph; returns how many. A
  // triplet with an empty field or a date that is not YYYY-MM-DD is
  // InvalidArgument (naming it) and nothing is written.
  Result<size_t> Add(const std::vector<Triplet>& triplets);

  bool HasEntity(std::string_view name) const;
  bool HasEdge(std::string_view subject, std::string_view predicate, std::string_view object) const;
  size_t size() const { return edges_.size(); }
  size_t bad_lines() const { return bad_lines_; }

  // {"entity", "hops", "neighbors": [{"entity", "hops", "edge": {subject,
  // predicate, object, date}}]}: breadth first, each entity once at its
  // nearest distance, hops 1..5; NotFound when the entity is not in the graph.
  Result<json> Neighbors(std::string_view name, int hops) const;
  // {"from", "to", "hops", "path": [edges]}: a shortest path; NotFound when
  // either end is unknown or they are not connected.
  Result<json> Path(std::string_view from, std::string_view to) const;

 private:
  explicit GraphStore(std::string path);
  Status ReadFrom(uint64_t offset);  // loads lines from `offset` to the end
  void Insert(Triplet t);

  std::string path_;
  uint64_t loaded_bytes_ = 0;
  size_t bad_lines_ = 0;
  std::vector<Triplet> edges_;
  std::unordered_set<std::string> edge_keys_;
  std::unordered_map<std::string, std::vector<size_t>> by_entity_;  // NameKey -> edge indexes
};

}  // namespace limbic::world
