// The long-term archive: daily staging files and a hash-chained document per
// day, in the COMB format.
//
//   <state>/archive/staging/YYYY-MM-DD.jsonl  append-only entries, one per line:
//       {"timestamp","text","byte_size","est_tokens","metadata"}
//   <state>/archive/archive/YYYY-MM-DD.json   one document per rolled-up day:
//       {"date","content","hash","prev_hash","metadata",
//        "links":{"temporal":{"prev","next"},
//                 "semantic":[{"target","score"}],
//                 "social":[{"target","direction","delta"}]}}
//
// Content: a day's entries in staging order, each a block headed by its
// timestamp, blocks separated by a blank line:
//
//   content = block *("\n\n" block)
//   block   = "## " timestamp "\n" text
//
// where timestamp is the entry's, in UTC with milliseconds (24 bytes,
// "2026-03-01T09:30:00.000Z", whatever offset the entry was written with).
//
// Texts are taken as they are (not escaped): the headers are for a reader,
// and only links.h looks at lines (it skips lines that are exactly a
// header). A re-rollup appends "\n\n" and the new blocks to what is there,
// so a document's content only ever grows.
//
// hash = hex(SHA-256((prev_hash or "") + content)); the first day's
// prev_hash is null. Documents are in date order; each one's prev_hash is
// the hash of the one before, so changing any content breaks every later
// link of the chain.
//
// Rollup moves a day's staged entries into its document. Staging files are
// never rewritten (only a torn last line is cut): a document's
// metadata.staged_entries counts the staged lines it holds, so a second
// rollup of the same day appends only what was staged since, and every
// later document is re-hashed. Those lines' blocks are therefore the end of
// the content, after whatever it held before (an imported COMB content).
// A staging file with fewer lines than the count, or a count that is not
// the one the content ends with, is reported by Verify; Rollup refuses the
// first rather than skip or append twice. Links are a function
// of all documents' content (see links.h), recomputed on every rollup and
// checked by Verify, which must be given the options the archive was
// rolled up with (semantic_k, semantic_min, social_k).
//
// Crash safety: every file is written to a temp file, fsynced, renamed and
// the directory fsynced. A rollup that rewrites several documents first
// writes all of them as temp files, then a journal naming them (the commit
// point), then renames; Open finishes a journaled rollup and removes temp
// files of one that never reached its journal. A crash at any point leaves
// the archive as it was before or after the rollup, never between. Readers
// (Dates, Load, Verify, Stats) see a journaled rollup as done even before
// Open finishes it, so a read-only process never sees the middle of one.
//
// Thread-safety: an Archive is used by one thread at a time; several
// processes must not write one archive dir at once (the state dir lock
// makes sure of that).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "base/time.h"

namespace limbic::archive {

class DocFiles;  // doc_files.h

using json = nlohmann::json;
using limbic::Result;
using limbic::Status;
using limbic::Clock;
using limbic::TimeMs;

// One staged entry.
struct Entry {
  std::string timestamp;   // RFC 3339 UTC, milliseconds
  std::string text;
  uint64_t byte_size = 0;  // bytes of text (UTF-8)
  uint64_t est_tokens = 0; // (byte_size + 3) / 4
  json metadata = json::object();  // consolidation sets "seq", "kind", ids
};
// An entry with byte_size and est_tokens filled in. Bytes of `text` that are
// not valid UTF-8 become U+FFFD (JSON cannot hold them).
Entry MakeEntry(TimeMs ts, std::string text, json metadata = json::object());
json EntryToJson(const Entry& entry);
// Errors name the field that is missing or of the wrong type.
Result<Entry> EntryFromJson(const json& j);

// Dates are limbic's calendar days (base/time.h): IsValidDate,
// FormatDate (the UTC day of a time), ParseDate.
using limbic::FormatDate;
using limbic::IsValidDate;
// OK, or InvalidArgument naming the text when it is not a date.
Status CheckDate(std::string_view date);

// The staging directory: one append-only JSON-lines file per day.
class Staging {
 public:
  Staging(std::string dir, Env* env);

  // Appends `entry` to the day's file and fsyncs it. Idempotent by
  // metadata.seq: when the entry has one and the file's last entry has a
  // seq >= it, nothing is written (so a catch-up after a crash may offer
  // the same entries again). A torn last line (a crash mid-append) is cut
  // before appending; an unterminated last line that is a whole entry (the
  // crash hit between the text and its newline) is kept and terminated.
  // Text that is not valid UTF-8 is InvalidArgument (use MakeEntry).
  Status Append(std::string_view date, const Entry& entry);
  // The day's entries in order; a missing file is an empty day. A line that
  // is not an entry is Corruption naming the file and line number; an
  // unterminated last line that is not one is a torn append and skipped.
  Result<std::vector<Entry>> Read(std::string_view date) const;
  // Days with a staging file, sorted; names that are not DATE.jsonl of a
  // real date are ignored.
  Result<std::vector<std::string>> Days() const;
  std::string PathOf(std::string_view date) const;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  Env* env_;
  // The last file appended to, so appends do not re-read a growing day
  // file: trusted while the file still has the size we left it with.
  struct Tail {
    std::string path;
    uint64_t size = 0;
    std::optional<uint64_t> last_seq;
  };
  Tail tail_;
};

// Appends the blocks of `entries` to `content` (see "Content" above).
void AppendToContent(std::string* content, const std::vector<Entry>& entries);

struct SemanticLink {
  std::string target;  // a date
  double score = 0;    // cosine similarity, rounded to 4 decimals
  bool operator==(const SemanticLink&) const = default;
};
struct SocialLink {
  std::string target;     // a date
  std::string direction;  // "inward" (delta > 0) or "outward" (delta < 0)
  double delta = 0;       // in [-1, 1], rounded to 4 decimals
  bool operator==(const SocialLink&) const = default;
};
struct Links {
  std::optional<std::string> prev, next;  // temporal: neighbouring dates
  std::vector<SemanticLink> semantic;     // best first
  std::vector<SocialLink> social;         // largest |delta| first
  bool operator==(const Links&) const = default;
};

struct Document {
  std::string date;
  std::string content;
  std::string hash;
  std::optional<std::string> prev_hash;  // null for the first day
  json metadata = json::object();        // staged_entries, entries, byte_size, est_tokens, rolled_up_at
  Links links;
};
json DocumentToJson(const Document& doc);
// `where` (a file name) prefixes errors.
Result<Document> DocumentFromJson(const json& j, std::string_view where);
// The same, moving the (large) content out of `j` instead of copying it.
Result<Document> DocumentFromJson(json&& j, std::string_view where);

// hex(SHA-256((prev_hash or "") + content))
std::string ChainHash(const std::optional<std::string>& prev_hash, std::string_view content);

struct ArchiveOptions {
  std::string dir;           // <state>/archive
  Env* env = nullptr;        // nullptr = Env::Default()
  size_t semantic_k = 5;     // semantic links kept per document
  double semantic_min = 0.1; // weaker similarities are not links
  size_t social_k = 5;       // social links kept per document
  bool read_only = false;    // no journal recovery, no writes
  const Clock* clock = nullptr;  // metadata.rolled_up_at; nullptr = the wall clock
};

struct RollupResult {
  std::string date;
  size_t added = 0;     // staged entries moved into the document
  bool created = false; // the day had no document before
  size_t rewritten = 0; // documents written (re-hashed or re-linked)
};

// One thing wrong with one document; a document can have several.
struct Problem {
  std::string date;  // from the file name
  std::string what;  // "hash does not match content", "prev_hash ...", "semantic links ..."
};
struct VerifyReport {
  size_t documents = 0;
  uint64_t bytes = 0;             // bytes of document files read
  std::vector<Problem> problems;  // everything wrong with every document, in date order
  // Links that are not limbic's but were computed by a known rule (COMB's,
  // or limbic's own before it took COMB's social sign): not problems, as
  // links are outside the hash and Relink() recomputes them.
  std::vector<Problem> notes;
  bool ok() const { return problems.empty(); }
};

//! What Import did.
struct ImportResult {
  size_t documents = 0;   //!< documents brought in
  size_t comb_links = 0;  //!< documents whose links COMB computed (kept, or recomputed)
  bool relinked = false;  //!< links recomputed by limbic's rules
  std::vector<std::string> staged_days;  //!< COMB staging files left behind (not rolled up in COMB)
};

struct ArchiveStats {
  size_t documents = 0;
  std::optional<std::string> first, last;  // dates
  uint64_t content_bytes = 0;
  uint64_t est_tokens = 0;
  size_t staged_days = 0;
  size_t staged_pending = 0;  // staged entries not yet rolled up
  std::vector<Problem> unreadable;  // documents that are not documents (not counted above)
};

class Archive {
 public:
  // Creates the directories when missing (unless read_only) and finishes
  // or discards an interrupted rollup.
  static Result<std::unique_ptr<Archive>> Open(const ArchiveOptions& options);
  ~Archive();

  Staging& staging() { return staging_; }
  const Staging& staging() const { return staging_; }
  const std::string& dir() const { return options_.dir; }

  // Archived dates, sorted.
  Result<std::vector<std::string>> Dates() const;
  // NotFound for a day without a document; a file that is not a document
  // is Corruption naming the file.
  Result<Document> Load(std::string_view date) const;
  std::string PathOf(std::string_view date) const;

  // Moves the day's staged entries that its document does not hold yet
  // into it (creating it when needed), re-hashes every later document and
  // recomputes links. A day with nothing new is left alone (added == 0).
  // An empty day (no staged entries, no document) is InvalidArgument; an
  // archive document that does not parse, or a staging file with fewer
  // entries than its document holds, is Corruption naming it, and nothing
  // is written. Links are computed from the documents' features
  // remembered from earlier calls while their files keep their size.
  Result<RollupResult> Rollup(std::string_view date);
  // Rolls up every staged day before `before` (exclusive) that has entries
  // not yet in its document: what the loop does at the day boundary. A day
  // that fails does not stop the others; the first error is returned after.
  Result<std::vector<RollupResult>> RollupBefore(std::string_view before);

  // Recomputes the chain and the links of every document; reports every
  // broken one (a file that does not parse is one problem, and the check
  // goes on with the next). Each document must satisfy
  //   hash == ChainHash(prev_hash, content)
  //   prev_hash == the previous document's stored hash (null for the first)
  //   links == what links.h computes from all documents
  // so changing a content, a hash or a prev_hash is reported where it was
  // made (a changed hash also at the next document, whose prev_hash no
  // longer matches it). The content of a document that does not parse, or
  // does not match its hash, is unknown: its own semantic and social links
  // are not checked, and the others' are checked as far as they can be
  // without it. Reads documents on all cores. Never writes.
  Result<VerifyReport> Verify() const;
  // Documents that are not readable as documents, counted in, the others
  // counted as usual.
  Result<ArchiveStats> Stats() const;

  // Recomputes every document's links (links.h) and rewrites the documents
  // whose stored links differ, in one crash-safe batch: what brings links
  // computed by another rule (COMB's, an older limbic's) in line. Hashes
  // do not change (links are outside them). Returns the documents written.
  // A document that does not parse is Corruption naming it; nothing is
  // written.
  Result<size_t> Relink();

  // Brings in the documents of a COMB archive: `comb_dir` is a COMB store
  // (its documents in comb_dir/archive/DATE.json) or that archive folder
  // itself. This archive must have no documents yet. Every file must be a
  // document named by its date, and the chain must hold by COMB's rule
  // (the same as ours: hash = hex(SHA-256((prev_hash or "") + content)),
  // each prev_hash the hash before, the first null); else Corruption
  // naming the file, and nothing is written. Content, hash, prev_hash and
  // COMB's metadata are kept; metadata gets staged_entries = 0 (no line
  // of our staging is in it). Semantic and social links that COMB's rules
  // computed are kept unless `relink`; links that are neither COMB's nor
  // ours, or temporal links that are wrong, are refused unless `relink`,
  // which recomputes every link by ours. Written in one crash-safe batch.
  Result<ImportResult> Import(const std::string& comb_dir, bool relink);

  // Staged entries of a day that its document does not hold yet. A
  // staging file with fewer entries than its document holds is Corruption
  // naming both.
  Result<std::vector<Entry>> Pending(std::string_view date) const;

 private:
  struct Memo;  // what Rollup remembers of each document (archive.cc)

  explicit Archive(ArchiveOptions options);
  DocFiles Files() const;
  Status Recover();
  // Brings the memo in step with the document files.
  Status RefreshMemo();
  // Rollup; nullopt for an empty day.
  Result<std::optional<RollupResult>> RollupDay(std::string_view date);

  ArchiveOptions options_;
  Staging staging_;
  std::unique_ptr<Memo> memo_;
};

}  // namespace limbic::archive
