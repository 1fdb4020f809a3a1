// Ingest: files and folders in, text chunks out.
//
// What is read:
//   .md .txt .py .csv .yaml .yml .json   the bytes, which must be UTF-8
//   .pdf                                 the text of every page, through
//                                        poppler's C++ library (pages
//                                        joined by "\n\n")
// Extensions compare case-insensitively. A folder is walked recursively
// (symlinks inside it are not followed but noted; hidden entries, names
// starting with '.', are skipped silently), files in byte order of their
// path; other types are skipped with a note, never an error, and so is a
// subfolder that cannot be read. A path named by the caller is followed
// even when it is a symlink.
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
// supported ones; text that is not UTF-8 is InvalidArgument naming the
// byte offset; a PDF poppler cannot open (damaged, or encrypted with a
// password; one encrypted with an empty user password is read) is
// InvalidArgument ("not a readable PDF"); a read error is IOError.
//
// Thread-safety: pure functions, file reads and KeepRaw's write; any
// thread (two KeepRaw calls for the same file at once are safe).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "state/status.h"

namespace limbic::memory {

// ".md", ".txt", ".py", ".csv", ".yaml", ".yml", ".json", ".pdf"
const std::vector<std::string>& IngestExtensions();
// The lower-cased extension of `path` if it is one of them, else "".
std::string IngestExtension(std::string_view path);

struct SkippedFile {
  std::string path;
  std::string reason;  // "unsupported type .png", "symlink", ...
};
// The ingestable files under `path` (or `path` itself when it is a file of
// a supported type). NotFound when `path` does not exist; InvalidArgument
// when it is a file of another type.
Status ListIngestable(const std::string& path, std::vector<std::string>* files,
                      std::vector<SkippedFile>* skipped);

struct LoadedFile {
  std::string path;    // as given
  std::string ext;     // lower case, with the dot
  std::string sha256;  // hex, of the file's bytes
  uint64_t bytes = 0;  // the file's size
  std::string raw;     // the file's bytes
  std::string text;    // extracted text, valid UTF-8
};
// Reads, hashes and extracts one file. A folder or other non-regular file
// is InvalidArgument.
Result<LoadedFile> LoadFile(const std::string& path);

// The chunks of `text` (valid UTF-8). chars >= 1, overlap < chars.
std::vector<std::string> ChunkText(std::string_view text, size_t chars = 1000, size_t overlap = 500);

// Writes file.raw as <raw_dir>/<sha256><ext> unless it exists; creates
// raw_dir. Returns the path.
Result<std::string> KeepRaw(const std::string& raw_dir, const LoadedFile& file);

}  // namespace limbic::memory
