#include "state/memory/ingest.h"

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <system_error>

#include "state/env.h"
#include "state/sha256.h"

namespace limbic::memory {

namespace fs = std::filesystem;

namespace {

bool IsHidden(const fs::path& p) {
  std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

std::string SupportedList() {
  std::string out;
  for (const std::string& e : IngestExtensions()) out += (out.empty() ? "" : " ") + e;
  return out;
}

// The extension as written (not lower-cased), for notes and errors.
std::string RawExtension(std::string_view path) {
  std::string_view name = path.substr(path.rfind('/') + 1);
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return "";
  return std::string(name.substr(dot));
}

std::string UnsupportedReason(std::string_view path) {
  std::string ext = RawExtension(path);
  return ext.empty() ? "unsupported type (no extension)" : "unsupported type " + ext;
}

// Offset of the first byte that does not start a well-formed UTF-8 sequence
// (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF), or npos.
size_t InvalidUtf8Offset(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return i + k < n && p[i + k] >= lo && p[i + k] <= hi;
  };
  while (i < n) {
    unsigned char c = p[i];
    size_t len = 0;
    if (c < 0x80) {
      len = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = cont(1) ? 2 : 0;
    } else if (c >= 0xE0 && c <= 0xEF) {
      unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
      len = cont(1, lo, hi) && cont(2) ? 3 : 0;
    } else if (c >= 0xF0 && c <= 0xF4) {
      unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
      len = cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
    }
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

void SilencePoppler() {
  // poppler reports damaged files on stderr by default; the caller gets a
  // Status instead, so its chatter is noise. The hook is process-wide.
  static std::once_flag once;
  std::call_once(
      once, [] { poppler::set_debug_error_function([](const std::string&, void*) {}, nullptr); });
}

Result<std::string> PdfText(const std::string& path, const std::string& raw) {
  SilencePoppler();
  const Status unreadable = Status::InvalidArgument(path + ": not a readable PDF");
  if (raw.size() > static_cast<size_t>(INT_MAX)) return unreadable;
  // poppler-cpp is not documented to throw, but it allocates; nothing it
  // throws may leave this module.
  try {
    // load_from_raw_data does not copy: `raw` outlives `doc` here.
    std::unique_ptr<poppler::document> doc(
        poppler::document::load_from_raw_data(raw.data(), static_cast<int>(raw.size())));
    // A PDF encrypted with an empty user password opens unlocked and is read;
    // only one that needs a password we do not have is refused.
    if (!doc || doc->is_locked()) return unreadable;
    std::string text;
    for (int i = 0; i < doc->pages(); ++i) {
      if (i > 0) text += "\n\n";
      std::unique_ptr<poppler::page> page(doc->create_page(i));
      if (!page)
        return unreadable.WithMessage(path + ": not a readable PDF (page " + std::to_string(i + 1) +
                                      ")");
      poppler::byte_array utf8 = page->text().to_utf8();
      text.append(utf8.data(), utf8.size());
    }
    if (InvalidUtf8Offset(text) != std::string_view::npos)
      return unreadable.WithMessage(path + ": not a readable PDF (text is not UTF-8)");
    return text;
  } catch (const std::exception& e) {
    return unreadable.WithMessage(path + ": not a readable PDF (" + e.what() + ")");
  }
}

// Walks `dir` depth-first. Errors below the top are notes, not failures: one
// unreadable subfolder should not stop the rest of a folder from ingesting.
void Walk(const fs::path& dir, std::vector<std::string>* files, std::vector<SkippedFile>* skipped) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  if (ec) {
    skipped->push_back({dir.string(), "unreadable directory: " + ec.message()});
    return;
  }
  for (; it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (IsHidden(p)) continue;
    fs::file_status st = it->symlink_status(ec);
    if (ec) {
      skipped->push_back({p.string(), "cannot stat: " + ec.message()});
    } else if (fs::is_symlink(st)) {
      skipped->push_back({p.string(), "symlink"});
    } else if (fs::is_directory(st)) {
      Walk(p, files, skipped);
    } else if (!fs::is_regular_file(st)) {
      skipped->push_back({p.string(), "not a regular file"});
    } else if (IngestExtension(p.string()).empty()) {
      skipped->push_back({p.string(), UnsupportedReason(p.string())});
    } else {
      files->push_back(p.string());
    }
  }
  if (ec) skipped->push_back({dir.string(), "directory listing stopped: " + ec.message()});
}

// Regular file and supported type; the checks LoadFile and ListIngestable share.
Status CheckFile(const std::string& path, const fs::file_status& st) {
  if (!fs::is_regular_file(st)) return Status::InvalidArgument(path + ": not a regular file");
  if (IngestExtension(path).empty())
    return Status::InvalidArgument(path + ": " + UnsupportedReason(path) +
                                   " (supported: " + SupportedList() + ")");
  return Status::OK();
}

Result<fs::file_status> Stat(const std::string& path) {
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);  // follows symlinks: the path was named
  if (st.type() == fs::file_type::not_found) return Status::NotFound(path + ": no such file");
  if (ec) return Status::IOError(path + ": " + ec.message());
  return st;
}

bool IsLowerHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

const std::vector<std::string>& IngestExtensions() {
  static const std::vector<std::string> kExtensions = {".md",   ".txt", ".py",   ".csv",
                                                       ".yaml", ".yml", ".json", ".pdf"};
  return kExtensions;
}

std::string IngestExtension(std::string_view path) {
  std::string ext = RawExtension(path);
  for (char& c : ext)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  const auto& all = IngestExtensions();
  return std::find(all.begin(), all.end(), ext) != all.end() ? ext : "";
}

Status ListIngestable(const std::string& path, std::vector<std::string>* files,
                      std::vector<SkippedFile>* skipped) {
  files->clear();
  skipped->clear();
  auto st = Stat(path);
  if (!st.ok()) return st.status();
  if (!fs::is_directory(*st)) {
    LIMBIC_RETURN_IF_ERROR(CheckFile(path, *st));
    files->push_back(path);
    return Status::OK();
  }
  std::error_code ec;
  fs::directory_iterator probe(path, ec);  // the top folder unreadable is an error
  if (ec) return Status::IOError(path + ": " + ec.message());
  Walk(path, files, skipped);
  // std::string's operator< compares as unsigned char: byte order.
  std::sort(files->begin(), files->end());
  std::sort(skipped->begin(), skipped->end(),
            [](const SkippedFile& a, const SkippedFile& b) { return a.path < b.path; });
  return Status::OK();
}

Result<LoadedFile> LoadFile(const std::string& path) {
  auto st = Stat(path);
  if (!st.ok()) return st.status();
  LIMBIC_RETURN_IF_ERROR(CheckFile(path, *st));

  LoadedFile f;
  f.path = path;
  f.ext = IngestExtension(path);
  auto raw = state::Env::Default()->ReadFileToString(path);
  if (!raw.ok()) return raw.status();
  f.raw = std::move(*raw);
  f.bytes = f.raw.size();
  f.sha256 = state::Sha256::Hex(f.raw);

  if (f.ext == ".pdf") {
    auto text = PdfText(path, f.raw);
    if (!text.ok()) return text.status();
    f.text = std::move(*text);
    return f;
  }
  size_t bad = InvalidUtf8Offset(f.raw);
  if (bad != std::string_view::npos)
    return Status::InvalidArgument(path + ": not UTF-8 at byte offset " + std::to_string(bad));
  f.text = f.raw;
  return f;
}

std::vector<std::string> ChunkText(std::string_view text, size_t chars, size_t overlap) {
  assert(chars >= 1 && overlap < chars);
  if (chars == 0) chars = 1;  // keep a release build out of an endless loop
  if (overlap >= chars) overlap = chars - 1;
  const size_t step = chars - overlap;
  const size_t n = text.size();
  auto next = [&](size_t b) {  // byte offset of the next code point
    ++b;
    while (b < n && (static_cast<unsigned char>(text[b]) & 0xC0) == 0x80) ++b;
    return b;
  };
  // Two cursors that only move forward, counted in code points: every byte
  // is stepped over at most twice, whatever chars and overlap are.
  std::vector<std::string> chunks;
  size_t start_b = 0, start_cp = 0, end_b = 0, end_cp = 0;
  while (n > 0) {
    for (; end_cp < start_cp + chars && end_b < n; ++end_cp) end_b = next(end_b);
    chunks.emplace_back(text.substr(start_b, end_b - start_b));
    if (end_b == n) break;
    for (const size_t to = start_cp + step; start_cp < to; ++start_cp) start_b = next(start_b);
  }
  return chunks;
}

Result<std::string> KeepRaw(const std::string& raw_dir, const LoadedFile& file) {
  // The name becomes a path: refuse anything that could leave raw_dir.
  if (file.sha256.size() != 64 || !IsLowerHex(file.sha256))
    return Status::InvalidArgument("KeepRaw " + file.path + ": sha256 is not 64 hex digits");
  const auto& exts = IngestExtensions();
  if (std::find(exts.begin(), exts.end(), file.ext) == exts.end())
    return Status::InvalidArgument("KeepRaw " + file.path + ": extension " + file.ext);

  state::Env* env = state::Env::Default();
  std::string name = file.sha256 + file.ext;
  std::string dest = raw_dir + "/" + name;
  LIMBIC_RETURN_IF_ERROR(env->CreateDirs(raw_dir));
  if (env->FileExists(dest)) return dest;  // same name, same bytes

  // Env::WriteFileAtomic uses the fixed name "<dest>.tmp": two threads keeping
  // the same file would write one temp file at once, and a crash then could
  // leave a short file under the final name that is kept forever after. A
  // unique temp name avoids that; hidden, so a walk of raw_dir skips it.
  std::string tmp = raw_dir + "/." + name + ".XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return Status::IOError("mkstemp " + tmp + ": " + std::strerror(errno));
  ::close(fd);
  Status s = [&]() -> Status {
    auto out = env->NewAppendableFile(tmp);
    if (!out.ok()) return out.status();
    LIMBIC_RETURN_IF_ERROR((*out)->Append(file.raw));
    LIMBIC_RETURN_IF_ERROR((*out)->Sync());
    LIMBIC_RETURN_IF_ERROR((*out)->Close());
    // rename(2) over a file another writer just put there replaces equal
    // bytes with equal bytes: harmless.
    LIMBIC_RETURN_IF_ERROR(env->RenameFile(tmp, dest));
    return env->SyncDir(raw_dir);
  }();
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  return dest;
}

}  // namespace limbic::memory
