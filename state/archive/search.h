// Full-text search over the archive: a SearchBackend interface, a BM25
// backend kept incrementally in RocksDB, and ArchiveSearch, which keeps a
// backend in step with the archive's files.
//
// What is searchable: every archived day document (id "archive:DATE") and
// every staged entry not yet rolled up into its day's document (id
// "staging:DATE:N", N = the entry's line number from 1). After a rollup the
// day's staged entries leave the index and the document's new version
// takes their place.
//
// Thread-safety: a backend is used by one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "state/archive/archive.h"
#include "state/archive/text.h"

namespace limbic::archive {

struct SearchDoc {
  std::string id;
  std::string text;
  std::string date;     // YYYY-MM-DD
  std::string version;  // opaque: what Refresh compares to decide re-indexing
};

struct SearchHit {
  std::string id;
  std::string date;
  double score = 0;
  std::string snippet;  // up to ~200 bytes of the text around the best match, cut on UTF-8 boundaries
};

class SearchBackend {
 public:
  virtual ~SearchBackend() = default;
  // Adds `doc`, replacing any document with the same id.
  virtual Status Index(const SearchDoc& doc) = 0;
  // Removes a document; an unknown id is not an error.
  virtual Status Remove(std::string_view id) = 0;
  // The best `k` documents for `query`, best first; ties by id.
  virtual Result<std::vector<SearchHit>> Search(std::string_view query, size_t k) const = 0;
  // id -> version of everything indexed.
  virtual Result<std::map<std::string, std::string>> Versions() const = 0;
};

struct Bm25Options {
  std::string path;        // a RocksDB directory, normally <state>/archive/search
  double k1 = 1.5;
  double b = 0.75;
  bool read_only = false;  // another process owns the state dir
};
// BM25 over postings in RocksDB: term -> (doc, term frequency), with
// document lengths and the corpus totals kept so nothing is recomputed from
// the documents on open or on a query.
Result<std::unique_ptr<SearchBackend>> OpenBm25(const Bm25Options& options);

// Keeps `backend` in step with `archive`.
class ArchiveSearch {
 public:
  ArchiveSearch(Archive& archive, SearchBackend& backend);
  struct RefreshStats {
    size_t indexed = 0, removed = 0, unchanged = 0;
  };
  // Indexes what changed since the last refresh and removes what is gone or
  // was rolled up. Costs one stat per file plus the changed files' reading:
  // document versions are "size:mtime" of the file, staging versions the
  // day file's size.
  Result<RefreshStats> Refresh();
  Result<std::vector<SearchHit>> Search(std::string_view query, size_t k) const;

 private:
  Archive& archive_;
  SearchBackend& backend_;
};

}  // namespace limbic::archive
