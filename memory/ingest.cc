#include "memory/ingest.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <system_error>

#include "base/env.h"
#include "base/sha256.h"
#include "memory/pdf.h"

namespace limbic::memory {

namespace fs = std::filesystem;

namespace {

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

// A descriptor closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = o.release();
    }
    return *this;
  }
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

// Folders nested deeper than this below the named path are skipped with a
// note: the walk recurses, holding a descriptor per level.
constexpr int kMaxDepth = 64;

std::string TooLarge(uint64_t bytes, uint64_t max) {
  return std::to_string(bytes) + " bytes, over memory.ingest_max_bytes (" + std::to_string(max) +
         ")";
}

// The real path of a configured root, or "" when it does not resolve.
std::string RealRoot(const std::string& root) {
  char* r = ::realpath(root.c_str(), nullptr);
  if (!r) return "";
  std::string out = r;
  ::free(r);
  return out;
}

// Whether `path` (absolute, normalised) is `root` or below it; *rel gets
// the part below ("" for the root itself).
bool Below(const std::string& path, const std::string& root, std::string* rel) {
  if (root.empty()) return false;
  if (path == root) {
    rel->clear();
    return true;
  }
  const std::string prefix = root == "/" ? root : root + "/";
  if (path.compare(0, prefix.size(), prefix) != 0) return false;
  *rel = path.substr(prefix.size());
  return true;
}

Status OpenError(const std::string& path, int e) {
  if (e == ENOENT) return Status::NotFound(path + ": no such file");
  if (e == ELOOP) return Status::InvalidArgument(path + ": a symlink (not followed)");
  return Status::IOError(path + ": " + std::strerror(e));
}

// Opens `path` for reading (O_NONBLOCK: a FIFO does not block the open).
// Unrestricted: as named. Restricted: the root holding it, then each
// component below with O_NOFOLLOW, so no symlink below a root is followed
// whatever changes meanwhile.
Result<Fd> OpenInScope(const std::string& path, const IngestScope& scope) {
  constexpr int kFlags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;
  if (!scope.restricted) {
    Fd fd(::open(path.c_str(), kFlags));
    if (fd.get() < 0) return OpenError(path, errno);
    return fd;
  }
  std::string root, rel;
  for (const std::string& r : scope.roots)
    if (Below(path, RealRoot(r), &rel)) {
      root = RealRoot(r);
      break;
    }
  if (root.empty()) return Status::InvalidArgument(path + ": outside memory.ingest_roots");
  Fd dir(::open(root.c_str(), kFlags | O_DIRECTORY));
  if (dir.get() < 0) return OpenError(root, errno);
  size_t at = 0;
  while (at < rel.size()) {
    size_t slash = rel.find('/', at);
    const bool last = slash == std::string::npos;
    std::string name = rel.substr(at, last ? std::string::npos : slash - at);
    at = last ? rel.size() : slash + 1;
    if (name.empty() || name == "." || name == "..")
      return Status::InvalidArgument(path + ": not a resolved path");
    Fd next(::openat(dir.get(), name.c_str(), kFlags | O_NOFOLLOW | (last ? 0 : O_DIRECTORY)));
    if (next.get() < 0) return OpenError(path, errno == ENOTDIR ? ELOOP : errno);
    dir = std::move(next);
  }
  return dir;
}

// Walks the folder open as `fd` (taken) depth-first, with O_NOFOLLOW at
// every step. Errors below the top are notes, not failures: one unreadable
// subfolder should not stop the rest of a folder from ingesting.
void Walk(Fd fd, const std::string& dir, int depth, const IngestScope& scope,
          std::vector<std::string>* files, std::vector<SkippedFile>* skipped) {
  DIR* d = ::fdopendir(fd.get());
  if (!d) {
    skipped->push_back({dir, std::string("unreadable directory: ") + std::strerror(errno)});
    return;
  }
  fd.release();  // d owns it now
  for (;;) {
    errno = 0;
    dirent* e = ::readdir(d);
    if (!e) {
      if (errno) skipped->push_back({dir, std::string("directory listing stopped: ") + std::strerror(errno)});
      break;
    }
    const std::string name = e->d_name;
    if (name.empty() || name[0] == '.') continue;  // hidden, "." and ".."
    const std::string p = dir + "/" + name;
    struct stat st;
    if (::fstatat(::dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      skipped->push_back({p, std::string("cannot stat: ") + std::strerror(errno)});
    } else if (S_ISLNK(st.st_mode)) {
      skipped->push_back({p, "symlink"});
    } else if (S_ISDIR(st.st_mode)) {
      if (depth >= kMaxDepth) {
        skipped->push_back({p, "nested deeper than " + std::to_string(kMaxDepth) + " folders"});
        continue;
      }
      Fd sub(::openat(::dirfd(d), name.c_str(),
                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub.get() < 0)
        skipped->push_back({p, std::string("unreadable directory: ") + std::strerror(errno)});
      else
        Walk(std::move(sub), p, depth + 1, scope, files, skipped);
    } else if (!S_ISREG(st.st_mode)) {
      skipped->push_back({p, "not a regular file"});
    } else if (IngestExtension(p).empty()) {
      skipped->push_back({p, UnsupportedReason(p)});
    } else if (static_cast<uint64_t>(st.st_size) > scope.max_bytes) {
      skipped->push_back({p, TooLarge(static_cast<uint64_t>(st.st_size), scope.max_bytes)});
    } else {
      files->push_back(p);
    }
  }
  ::closedir(d);
}

// Regular file, supported type, not too large: the checks LoadFile and
// ListIngestable share.
Status CheckFile(const std::string& path, const struct stat& st, const IngestScope& scope) {
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(path + ": not a regular file");
  if (IngestExtension(path).empty())
    return Status::InvalidArgument(path + ": " + UnsupportedReason(path) +
                                   " (supported: " + SupportedList() + ")");
  if (static_cast<uint64_t>(st.st_size) > scope.max_bytes)
    return Status::InvalidArgument(path + ": " +
                                   TooLarge(static_cast<uint64_t>(st.st_size), scope.max_bytes));
  return Status::OK();
}

// At most `max` + 1 bytes of `fd`, so a file that grew past the limit
// after its size was checked is caught without reading it all.
Result<std::string> ReadAll(int fd, const std::string& path, uint64_t max) {
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError(path + ": read: " + std::strerror(errno));
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max)
      return Status::InvalidArgument(path + ": grew to over memory.ingest_max_bytes (" +
                                     std::to_string(max) + ") while it was read");
  }
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

std::string ScopeRefusal(const std::string& path, const IngestScope& scope, std::string* real) {
  *real = path;
  if (!scope.restricted) return "";
  if (scope.roots.empty())
    return "ingest over the API is off: no memory.ingest_roots configured (the directories it "
           "may read); the local command line `limbic memory ingest` reads any path";
  std::string roots;
  for (const std::string& r : scope.roots) roots += (roots.empty() ? "" : ", ") + r;
  const std::string outside = path + " is outside memory.ingest_roots [" + roots +
                              "] (symlinks and .. are resolved first)";
  std::string rel;
  if (char* r = ::realpath(path.c_str(), nullptr)) {
    *real = r;
    ::free(r);
    for (const std::string& root : scope.roots)
      if (Below(*real, RealRoot(root), &rel)) return "";
    return outside;
  }
  // It does not resolve (missing): NotFound only if it would be inside.
  std::error_code ec;
  std::string lexical = fs::absolute(path, ec).lexically_normal().string();
  while (lexical.size() > 1 && lexical.back() == '/') lexical.pop_back();
  for (const std::string& root : scope.roots)
    if (Below(lexical, RealRoot(root), &rel) ||
        Below(lexical, fs::path(root).lexically_normal().string(), &rel))
      return "";
  return outside;
}

Status ListIngestable(const std::string& path, std::vector<std::string>* files,
                      std::vector<SkippedFile>* skipped, const IngestScope& scope) {
  files->clear();
  skipped->clear();
  auto fd = OpenInScope(path, scope);
  if (!fd.ok()) return fd.status();
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return Status::IOError(path + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) {
    LIMBIC_RETURN_IF_ERROR(CheckFile(path, st, scope));
    files->push_back(path);
    return Status::OK();
  }
  std::string top = path;
  while (top.size() > 1 && top.back() == '/') top.pop_back();
  Walk(std::move(*fd), top, 0, scope, files, skipped);
  // std::string's operator< compares as unsigned char: byte order.
  std::sort(files->begin(), files->end());
  std::sort(skipped->begin(), skipped->end(),
            [](const SkippedFile& a, const SkippedFile& b) { return a.path < b.path; });
  return Status::OK();
}

Result<std::string> ReadIngestFile(const std::string& path, const IngestScope& scope) {
  auto fd = OpenInScope(path, scope);
  if (!fd.ok()) return fd.status();
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return Status::IOError(path + ": " + std::strerror(errno));
  LIMBIC_RETURN_IF_ERROR(CheckFile(path, st, scope));
  return ReadAll(fd->get(), path, scope.max_bytes);
}

Result<LoadedFile> LoadContent(const std::string& name, std::string raw, uint64_t max_bytes) {
  LoadedFile f;
  f.path = name;
  f.ext = IngestExtension(name);
  if (f.ext.empty())
    return Status::InvalidArgument(name + ": " + UnsupportedReason(name) +
                                   " (supported: " + SupportedList() + ")");
  if (raw.size() > max_bytes) return Status::InvalidArgument(name + ": " + TooLarge(raw.size(), max_bytes));
  f.raw = std::move(raw);
  f.bytes = f.raw.size();
  f.sha256 = Sha256::Hex(f.raw);

  if (f.ext == ".pdf") {
    auto text = PdfText(name, f.raw);
    if (!text.ok()) return text.status();
    if (InvalidUtf8Offset(*text) != std::string_view::npos)
      return Status::InvalidArgument(name + ": not a readable PDF (text is not UTF-8)");
    f.text = std::move(*text);
    return f;
  }
  size_t bad = InvalidUtf8Offset(f.raw);
  if (bad != std::string_view::npos)
    return Status::InvalidArgument(name + ": not UTF-8 at byte offset " + std::to_string(bad));
  f.text = f.raw;
  return f;
}

Result<LoadedFile> LoadFile(const std::string& path, const IngestScope& scope) {
  auto raw = ReadIngestFile(path, scope);
  if (!raw.ok()) return raw.status();
  return LoadContent(path, std::move(*raw), scope.max_bytes);
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

  Env* env = Env::Default();
  std::string name = file.sha256 + file.ext;
  std::string dest = raw_dir + "/" + name;
  LIMBIC_RETURN_IF_ERROR(env->CreateDirs(raw_dir));
  if (env->FileExists(dest)) return dest;  // same name, same bytes

  // Env::WriteFileAtomic uses the fixed name TempPathFor(dest): two threads keeping
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
