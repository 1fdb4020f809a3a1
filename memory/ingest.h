// Ingest: files and folders in, text chunks out.
//
// What is read:
//   .md .txt .py .csv .yaml .yml .json   the bytes, which must be UTF-8
//   .pdf                                 the text of every page, through
//                                        poppler's C++ library (pages
//                                        joined by "\n\n", memory/pdf.h:
//                                        loaded on the first PDF)
// Extensions compare case-insensitively. A folder is walked recursively
// (symlinks inside it are not followed but noted; hidden entries, names
// starting with '.', are skipped silently), files in byte order of their
// path; other types are skipped with a note, never an error, and so is a
// subfolder that cannot be read. Files larger than the scope's max_bytes
// are skipped with a note naming the size, never read.
//
// Scope (IngestScope): who may read what.
//   unrestricted (the local CLI): a path named by the caller is followed
//     even when it is a symlink; below it, the walk opens every folder and
//     file with O_NOFOLLOW, so a symlink inside a folder is never followed
//     (a file or folder swapped for a symlink between the listing and the
//     read fails to open instead).
//   restricted (the HTTP API, MCP): only under `roots` (memory.ingest_roots;
//     none: nothing). The named path is resolved to its real path (every
//     symlink and "..", realpath(3)) and must lie inside a root's real
//     path; then the root is opened and every component below it is opened
//     with openat(2) and O_NOFOLLOW, for the listing and again for each
//     read. Guaranteed: no symlink below a root is followed, even one
//     swapped in during the ingest (TOCTOU), and no file outside the roots'
//     real paths is opened through a path. Not guaranteed: a root itself
//     is resolved at each request (whoever can change a configured root's
//     own path components decides where it is), and a hard link or a bind
//     mount inside a root is read like any file there.
//
// Chunks: windows of `chars` Unicode code points starting every
// `chars - overlap` code points (1,000 and 500 by default), so a cut never
// splits a UTF-8 sequence; a text no longer than `chars` is one chunk; the
// last window ends at the end of the text (no window lies entirely inside
// the one before it); an empty text has no chunks.
//
// The original is kept as <raw_dir>/<sha256><ext> (ext in lower case), the
// SHA-256 of the file's bytes, written crash-safely (a uniquely named
// hidden temp file in raw_dir, fsync, rename, fsync the directory); an
// existing file of that name is kept. A crash may leave a temp file behind.
//
// Errors name the path: a missing path is NotFound; an unsupported type
// (asked for by name, not met in a folder) is InvalidArgument listing the
// supported ones, and so is a file named directly that is over max_bytes;
// text that is not UTF-8 is InvalidArgument naming the byte offset; a PDF
// poppler cannot open (damaged, or encrypted with a password; one
// encrypted with an empty user password is read) is InvalidArgument ("not
// a readable PDF"); a symlink met below a restricted root is
// InvalidArgument; a read error is IOError. A path outside the scope is
// not an error of these functions: callers check ScopeRefusal first.
//
// Thread-safety: pure functions, file reads and KeepRaw's write; any
// thread (two KeepRaw calls for the same file at once are safe).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace limbic::memory {

// ".md", ".txt", ".py", ".csv", ".yaml", ".yml", ".json", ".pdf"
const std::vector<std::string>& IngestExtensions();
// The lower-cased extension of `path` if it is one of them, else "".
std::string IngestExtension(std::string_view path);

//! The default of memory.ingest_max_bytes: 64 MiB.
inline constexpr uint64_t kDefaultIngestMaxBytes = uint64_t{64} << 20;

//! Where ingest may read, and how much (see the file comment).
struct IngestScope {
  bool restricted = false;         //!< true: only under `roots`
  std::vector<std::string> roots;  //!< directories (memory.ingest_roots)
  uint64_t max_bytes = kDefaultIngestMaxBytes;  //!< per file (memory.ingest_max_bytes)
};

//! For a restricted scope: "" when `path` may be read, and *real gets its
//! real path (what ListIngestable and LoadFile must then be given);
//! otherwise why not, naming memory.ingest_roots ("no memory.ingest_roots
//! configured: ...", "... is outside memory.ingest_roots [...]"). A path
//! that does not exist is "" with *real = path (ListIngestable then says
//! NotFound). Unrestricted: always "", *real = path.
std::string ScopeRefusal(const std::string& path, const IngestScope& scope, std::string* real);

struct SkippedFile {
  std::string path;
  std::string reason;  // "unsupported type .png", "symlink", ...
};
// The ingestable files under `path` (or `path` itself when it is a file of
// a supported type). NotFound when `path` does not exist; InvalidArgument
// when it is a file of another type.
Status ListIngestable(const std::string& path, std::vector<std::string>* files,
                      std::vector<SkippedFile>* skipped, const IngestScope& scope = {});

struct LoadedFile {
  std::string path;    // as given
  std::string ext;     // lower case, with the dot
  std::string sha256;  // hex, of the file's bytes
  uint64_t bytes = 0;  // the file's size
  std::string raw;     // the file's bytes
  std::string text;    // extracted text, valid UTF-8
};
// Reads, hashes and extracts one file: ReadIngestFile, then LoadContent.
Result<LoadedFile> LoadFile(const std::string& path, const IngestScope& scope = {});
// The bytes of one file under `scope`: a folder or other non-regular file
// is InvalidArgument, and so are a type not ingested and a file over
// scope.max_bytes (not read).
Result<std::string> ReadIngestFile(const std::string& path, const IngestScope& scope = {});
// Hashes and extracts `raw`, the bytes of a file called `name` (a path, or
// any name sent with the content): its extension decides how it is read.
// InvalidArgument naming `name` for an unsupported type, more than
// `max_bytes`, text that is not UTF-8, a PDF that cannot be read.
Result<LoadedFile> LoadContent(const std::string& name, std::string raw,
                               uint64_t max_bytes = kDefaultIngestMaxBytes);

// The chunks of `text` (valid UTF-8). chars >= 1, overlap < chars.
std::vector<std::string> ChunkText(std::string_view text, size_t chars = 1000, size_t overlap = 500);

// Writes file.raw as <raw_dir>/<sha256><ext> unless it exists; creates
// raw_dir. Returns the path.
Result<std::string> KeepRaw(const std::string& raw_dir, const LoadedFile& file);

}  // namespace limbic::memory
