// The document directory (<state>/archive/archive), how a set of its files
// is replaced at once, and how Verify reads them (DocReader, at the end).
// Internal to limbic_archive.
//
//   DATE.json        a document
//   DATE.json.tmp    its next version, written during a rollup
//   ROLLUP.journal   {"dates":[DATE,...]} "\n": the commit record of a
//                    rollup that replaces several documents: each listed
//                    DATE.json.tmp replaces DATE.json
//   *.tmp            anything else ending in .tmp is an unfinished write
//
// A batch of one file is written as DATE.json.tmp, fsynced, renamed over
// DATE.json, and the directory fsynced: rename is atomic. A batch of
// several writes every temp file (each fsynced), fsyncs the directory,
// writes the journal the same way (ROLLUP.journal.tmp, rename: the commit
// point), renames the temp files, fsyncs the directory and removes the
// journal (fsynced again, so an old journal can never adopt the temp files
// of a later batch). Recover() finishes a batch whose journal exists and
// removes the temp files of one whose journal does not.
//
// Thread-safety: one writer (the process holding the state dir); List() may
// run in other processes at the same time.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "archive/archive.h"

namespace limbic::archive {

// A hash or a date link as a message shows it: "null" when there is none.
inline std::string OrNull(const std::optional<std::string>& s) { return s ? *s : "null"; }

class DocFiles {
 public:
  DocFiles(std::string dir, Env* env) : dir_(std::move(dir)), env_(env) {}

  const std::string& dir() const { return dir_; }
  std::string PathOf(std::string_view date) const { return dir_ + "/" + std::string(date) + ".json"; }

  struct Listing {
    // date -> file to read: DATE.json, or DATE.json.tmp while a journal
    // names it (the batch is committed, its renames not all done).
    std::map<std::string, std::string> paths;
    // "NAME.json" files whose NAME is not a date.
    std::vector<std::string> bad_names;
  };
  // A missing directory lists nothing.
  Result<Listing> List() const;

  // The file to read for `date` (see Listing), without listing the
  // directory unless a journal exists.
  std::string PathToRead(std::string_view date) const;
  // The document in `path`; Corruption naming the file when it does not
  // parse or is not a document. *bytes (when given) gets the file size.
  Result<Document> Read(const std::string& path, uint64_t* bytes = nullptr) const;

  Status Recover();

  // Writes a batch: Add() each file (written and fsynced as a temp file),
  // then Commit(). A batch that is not committed leaves only temp files,
  // which the next Recover() removes.
  class Batch {
   public:
    explicit Batch(DocFiles* files) : files_(files) {}
    Status Add(const std::string& date, std::string_view data);
    Status Commit();

   private:
    DocFiles* files_;
    std::vector<std::string> dates_;
  };

 private:
  friend class DocReader;

  std::string JournalPath() const { return dir_ + "/ROLLUP.journal"; }
  // Dates named by the journal; nullopt when there is none.
  Result<std::optional<std::vector<std::string>>> ReadJournal() const;
  // The whole file into *out, whose capacity is kept for the next file.
  Status ReadAll(const std::string& path, std::string* out) const;
  // The document in `text`, read from `path`.
  static Result<Document> Parse(std::string_view text, const std::string& path);
  // Writes `path` (replacing what is there), fsyncs and closes it.
  Status WriteSynced(const std::string& path, std::string_view data);

  std::string dir_;
  Env* env_;
};

// A document as Verify reads it: all of it but the metadata (which must
// still be an object) other than what staged_entries and rolled_up_at
// say, the content a view into the DocReader's buffers.
struct DocumentView {
  std::string date;
  std::string_view content;  // valid until the reader's next Read
  std::string hash;
  std::optional<std::string> prev_hash;
  Links links;
  //! metadata.staged_entries: absent (nullopt), or its JSON text when it is
  //! not a count (staged_entries_bad), else the count.
  std::optional<uint64_t> staged_entries;
  std::string staged_entries_bad;
  //! metadata.rolled_up_at is there: limbic rolled the document up (COMB
  //! writes created_at instead).
  bool rolled_up_by_limbic = false;
};

// Reads documents one after another without copying their content, for
// Verify, which must run at the speed of SHA-256 and the disk: the file is
// read into a buffer kept from the last one, parsed by simdjson, and the
// fields taken from the parsed tree. A file that is not a well-formed
// document (or is unusual: a key given twice, say) is parsed as
// DocFiles::Read parses it, so values and errors are exactly its own.
//
// Thread-safety: a DocReader belongs to one thread; `files` must outlive it.
class DocReader {
 public:
  explicit DocReader(const DocFiles* files);
  ~DocReader();
  DocReader(DocReader&&) noexcept;

  // What DocFiles::Read(path, bytes) gives, as a view.
  Result<DocumentView> Read(const std::string& path, uint64_t* bytes);

 private:
  struct Impl;  // doc_reader.cc: the buffers and the simdjson parser
  const DocFiles* files_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace limbic::archive
