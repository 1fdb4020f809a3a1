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

#include <cmath>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "archive/analyzer.h"
#include "archive/archive.h"
#include "archive/text.h"

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
  // Up to ~200 bytes of the text around the first query term it holds, cut
  // on UTF-8 boundaries.
  std::string snippet;
};

class SearchBackend {
 public:
  virtual ~SearchBackend() = default;
  // Adds `doc`, replacing any document with the same id (non-empty,
  // without NUL bytes, or InvalidArgument).
  virtual Status Index(const SearchDoc& doc) = 0;
  // Removes a document; an unknown id is not an error.
  virtual Status Remove(std::string_view id) = 0;
  // The best `k` documents for `query`, best first; ties by id.
  virtual Result<std::vector<SearchHit>> Search(std::string_view query, size_t k) const = 0;
  // id -> version of everything indexed.
  virtual Result<std::map<std::string, std::string>> Versions() const = 0;
};

// The BM25 formula, one for the archive's index (RocksDB, below) and the
// memory's recall index (RAM, memory/recall_index.h); each use picks its
// k1 and b. With N documents, avgdl their mean length (in terms, repeats
// counted), n the documents holding term t, tf its count in document d and
// dl the length of d:
//
//   idf(t)      = ln(1 + (N - n + 0.5) / (n + 0.5))
//   score(d, q) = sum over distinct t in q of idf(t) * TfPart(tf, Norm(dl))
//   Norm(dl)    = k1 * (1 - b + b * dl / avgdl)
//   TfPart      = tf * (k1 + 1) / (tf + Norm(dl))
//
// Norm depends on dl alone, so a query may compute it once per length.
class Bm25Scorer {
 public:
  Bm25Scorer(double k1, double b, double docs, double avgdl)
      : k1_(k1), b_(b), docs_(docs), avgdl_(avgdl) {}
  double Idf(double n) const { return std::log(1 + (docs_ - n + 0.5) / (n + 0.5)); }
  double Norm(double dl) const { return k1_ * (1 - b_ + b_ * dl / avgdl_); }
  double TfPart(double tf, double norm) const { return tf * (k1_ + 1) / (tf + norm); }

 private:
  double k1_, b_, docs_, avgdl_;
};

struct Bm25Options {
  std::string path;        // a RocksDB directory, normally <state>/archive/search
  double k1 = 1.5;         // term-frequency saturation, >= 0
  double b = 0.75;         // length normalisation, in [0, 1]
  bool read_only = false;  // another process owns the state dir
  // How documents and queries become terms; null: Analyzer::Default().
  std::shared_ptr<const Analyzer> analyzer;
};
// BM25 (Bm25Scorer) over postings in RocksDB, kept incrementally: nothing
// is rebuilt from the documents on open or on a query.
//
// Terms are those of the analyzer (analyzer.h), for documents and queries
// alike; a query's repeated terms count once. The index records the
// analyzer's id(): opened for writing with another analyzer (another
// memory.analyzer, or an index from before analyzers), it empties itself
// and ArchiveSearch's next Refresh indexes every document again; opened
// read-only, it queries with the analyzer it was built by
// (FailedPrecondition when this limbic cannot make that one). Scores are summed in term byte order, so equal documents score exactly equal. Hits
// are the documents holding at least one term, best first, ties by id.
// A query without terms (empty, stop words only), k = 0 or an empty index
// give no hits and no error. A snippet is Snippet(text, the query terms
// the document holds).
//
// Layout: column families of one RocksDB (the byte grammar is in bm25.cc).
//
//   default   "schema" -> "1"; "totals" -> N and the sum of lengths
//   postings  TERM \0 ID -> tf, dl          one key per (term, document)
//   docs      ID -> date, version, dl       what Versions() scans
//   terms     ID -> the document's distinct terms: what Remove deletes
//   text      ID -> the whole text, uncompressed: the snippets
//
// Index (which replaces a document of the same id) and Remove are one
// WriteBatch each: postings, records and totals change together or not at
// all. Totals are cached after open (one writer). Writes are not synced:
// the archive's files are the truth, and a batch lost to a power cut
// leaves the older version in Versions(), which ArchiveSearch re-indexes.
// The writer flushes at close so that the next open reads tables instead
// of replaying the log; the log is flushed past ~4 MB so a read-only open
// while the writer runs replays little.
//
// Why one key per posting: a query reads each term's postings as one
// prefix scan (a prefix bloom filter answers for absent terms), and dl in
// the posting spares a record read per candidate; only the k hits read
// their record and text. A packed list per term would read faster but
// makes indexing a document rewrite the list of each of its terms:
// measured on 1,000 days of 50 KB (bench/search_bench.cc: 2,500 distinct
// terms a day, 2.5 M postings) that is ~4e8 posting copies, ~8 GB written,
// against 75 MB for one key per posting, while searches already take
// ~0.8 ms (p50), ~1.5 ms (p99). The text is stored uncompressed: reading
// ten 50 KB texts a query was a third of its time when Snappy-compressed.
//
// read_only: OpenForReadOnly, safe beside a running writer (an open that
// meets a file the writer just deleted is retried); it sees what was
// written before the open. Index and Remove are then FailedPrecondition.
// A read-only open of a missing index is NotFound. A layout of another
// version is FailedPrecondition (delete the directory and refresh).
// Values that do not decode are Corruption naming their key; RocksDB's
// errors are IOError or Corruption naming the operation and the path.
Result<std::unique_ptr<SearchBackend>> OpenBm25(const Bm25Options& options);
// Keeps `backend` in step with `archive`.
class ArchiveSearch {
 public:
  ArchiveSearch(Archive& archive, SearchBackend& backend);
  struct RefreshStats {
    size_t indexed = 0, removed = 0, unchanged = 0;
    // Documents that do not read as documents, and days whose staged
    // entries cannot be told apart from their document's (a bad staging
    // line, a count the staging file does not reach): left out of the
    // index (and taken out if they were in it), read again next time.
    std::vector<Problem> unreadable;
  };
  // Indexes what changed since the last refresh and removes what is gone or
  // was rolled up. Costs one stat per file plus the changed files' reading:
  // document versions are "size:mtime" of the file, staging versions the
  // day file's size. One unreadable day does not stop the others.
  Result<RefreshStats> Refresh();
  Result<std::vector<SearchHit>> Search(std::string_view query, size_t k) const;

 private:
  Archive& archive_;
  SearchBackend& backend_;
};

}  // namespace limbic::archive
