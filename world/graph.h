// The relation graph: <state>/memory/graph.jsonl, one triplet per line,
// {"subject","predicate","object","date"} in that order (docs/world.md
// "Graph"; the grammar is at the top of graph.cc).
//
// Deduplicated by (NameKey(subject), predicate, NameKey(object)): the first
// observation's line is kept and later ones add nothing (entity pages keep
// the dated history). Lines are only ever appended, through an Env and
// holding the lock of the file the path names (world/files.h,
// LockNamedFile), after re-reading what other writers appended since this
// store last looked, so several processes can share one graph. A file
// replaced or cut shorter since (a rebuild) is read again from its start.
// A last line left without its '\n' by a crash is ended before appending.
// Not fsynced: the graph is derived data, like the entity pages.
//
// Lines that are not a JSON object with the four fields as Add would write
// them (strings, none empty, a real date; other fields are allowed) are a
// hand edit gone wrong: skipped and counted in bad_lines(), never
// rewritten or lost. Blank lines are skipped and not counted. Bytes that
// are not UTF-8 in an added triplet are written as U+FFFD.
//
// Traversal treats edges as undirected (A —p→ B links A and B both ways)
// and reports each edge as written; an entity is named as the graph first
// wrote it.
//
// Thread-safety: one GraphStore per thread.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/env.h"
#include "world/model.h"

namespace limbic::world {

class GraphStore {
 public:
  // Loads `path` (<state>/memory/graph.jsonl); a missing file is an empty
  // graph. Appends go through `env`.
  static Result<std::unique_ptr<GraphStore>> Open(const std::string& path, Env* env = Env::Default());
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
  // nearest distance (with the first edge that reached it, in file order),
  // hops 1..5 (InvalidArgument otherwise); NotFound when the entity is not
  // in the graph.
  Result<json> Neighbors(std::string_view name, int hops) const;
  // {"from", "to", "hops", "path": [edges]}: a shortest path, from `from`
  // to `to` (hops 0 and no edges when they are one entity); NotFound when
  // either end is unknown or they are not connected.
  Result<json> Path(std::string_view from, std::string_view to) const;

 private:
  GraphStore(std::string path, Env* env);
  // Loads the lines of the open graph file `fd` from `offset` to the last
  // '\n'. With `to_end` (under the lock, so no writer is mid-line) a last
  // line without '\n' is loaded too and *unterminated says so.
  Status ReadFrom(int fd, uint64_t offset, bool to_end, bool* unterminated);
  void Insert(Triplet t);
  void Reset();
  // The entity's name as the graph first wrote it.
  const std::string& NameOf(const std::string& key) const;

  std::string path_;
  Env* env_;
  uint64_t loaded_bytes_ = 0;
  uint64_t file_dev_ = 0, file_ino_ = 0;  // which file loaded_bytes_ is of
  size_t bad_lines_ = 0;
  std::vector<Triplet> edges_;
  std::vector<std::pair<std::string, std::string>> edge_ends_;  // NameKeys of subject and object
  std::unordered_set<std::string> edge_keys_;
  std::unordered_map<std::string, std::vector<size_t>> by_entity_;  // NameKey -> edge indexes
};

}  // namespace limbic::world
