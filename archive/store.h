// ArchiveStore: everything the command line and the HTTP API do with the
// archive, in one place, so both front ends do it the same way and print
// the same JSON.
//
//   <state>/archive/staging/   staging files (archive.h)
//   <state>/archive/archive/   day documents (archive.h)
//   <state>/archive/search/    the BM25 index (search.h)
//   <state>/archive/staging/.followed  the last log seq copied to staging
//
// Staging follows the events log: every entry_staged event's entry is
// appended to its day's file with metadata.seq set to the event's seq.
// CatchUp copies what the log has and staging does not; it is idempotent
// (staging skips a seq it already holds), so a crash between the append
// and the .followed update only costs a re-read.
//
// Thread-safety: one thread at a time. A read-only store (another process
// owns the state dir) reads the files and the index as they are.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "archive/archive.h"
#include "archive/search.h"

namespace limbic::archive {

struct StoreOptions {
  std::string state_dir;
  bool read_only = false;
  size_t semantic_links = 5;
  size_t social_links = 5;
  // The search index's analyzer (memory.analyzer, archive/analyzer.h);
  // Open fails with InvalidArgument for an unknown one.
  std::string analyzer = "english";
  Env* env = nullptr;
};

class ArchiveStore {
 public:
  static Result<std::unique_ptr<ArchiveStore>> Open(const StoreOptions& options);

  // Copies entry_staged entries from the log (up to `up_to_seq`, 0 = its
  // end) into staging, then refreshes the search index. Returns how many
  // entries were appended.
  Result<size_t> CatchUp(uint64_t up_to_seq = 0);

  // Rollup of one day, or of every day before `today` with pending entries;
  // the search index follows.
  Result<json> Rollup(const std::string& date);
  Result<json> RollupBefore(const std::string& today);

  // {query, results: [{id, kind: archived|staged, date, score, snippet}]}
  Result<json> Search(const std::string& query, size_t k);
  // The document of a day, as stored.
  Result<json> Show(const std::string& date) const;
  // {date, direction, depth, visited: [{date, depth, score?}]}: temporal
  // walks prev and next up to `depth` days away; semantic follows semantic
  // links breadth first up to `depth` hops (score = the link's). A day
  // that cannot be read is visited with its "error" and not gone past.
  Result<json> Walk(const std::string& date, const std::string& direction, int depth) const;
  // {documents, content_bytes, ..., unreadable: [{date, what}]}
  Result<json> Stats() const;
  // {documents, bytes, ok, problems: [{date, what}], notes: [{date, what}]}
  Result<json> Verify() const;
  // Archive::Import, then the index: {imported, comb_links, relinked,
  // staged_days_left}.
  Result<json> Import(const std::string& comb_dir, bool relink);
  // Archive::Relink: {relinked: documents rewritten}.
  Result<json> Relink();

  // The days the last index refresh could not read (ArchiveSearch's
  // RefreshStats::unreadable): the archive is degraded while any is left.
  // Empty for a read-only store, which never refreshes.
  const std::vector<Problem>& unreadable() const { return unreadable_; }
  // The `k` most recent entries, staged (not yet rolled up) first, then
  // archived days, newest first: what an agent reads after a restart. Days
  // that cannot be read are skipped and listed under "unreadable".
  Result<json> Recall(size_t k) const;

  Archive& archive() { return *archive_; }

 private:
  ArchiveStore() = default;
  Status RefreshIndex();
  StoreOptions options_;
  std::unique_ptr<Archive> archive_;
  std::unique_ptr<SearchBackend> backend_;
  std::unique_ptr<ArchiveSearch> search_;
  std::vector<Problem> unreadable_;
};

}  // namespace limbic::archive
