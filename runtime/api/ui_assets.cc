#include "runtime/api/ui_assets.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

#include "base/sha256.h"

namespace limbic::runtime {

std::span<const UiFile> UiFiles() { return {kUiFiles, kUiFileCount}; }

const UiFile* FindUiFile(std::string_view path) {
  if (path.empty()) path = "index.html";
  for (const UiFile& f : UiFiles())
    if (f.path == path) return &f;
  return nullptr;
}

std::string_view UiContentType(std::string_view path) {
  auto ends = [&](std::string_view ext) { return path.ends_with(ext); };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js") || ends(".mjs")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  if (ends(".json")) return "application/json";
  if (ends(".ico")) return "image/x-icon";
  if (ends(".txt")) return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

bool IsUiPath(std::string_view path) {
  if (path.empty() || path.size() > 200) return false;
  size_t depth = 0, start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view seg = path.substr(start, slash - start);
    if (seg.empty() || seg.front() == '.' || ++depth > 8) return false;
    for (char c : seg)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
        return false;
    start = slash + 1;
  }
  return true;
}

namespace {

// Opens `path` (IsUiPath) under the directory `dir_fd` for reading, never
// leaving that directory: openat2(2) with RESOLVE_BENEATH refuses ".." and
// symlinks that lead out (one that stays inside is followed) and magic
// links. Where the kernel has no openat2 (before Linux 5.6), each
// component is opened with O_NOFOLLOW: no symlink is followed at all.
// -1 with errno set (EXDEV, ELOOP: it would have left the directory).
int OpenBeneath(int dir_fd, const std::string& path) {
  open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  long fd = ::syscall(SYS_openat2, dir_fd, path.c_str(), &how, sizeof how);
  if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
  int at = dir_fd;
  size_t start = 0;
  for (;;) {
    const size_t slash = path.find('/', start);
    const bool last = slash == std::string::npos;
    const std::string part = path.substr(start, last ? std::string::npos : slash - start);
    const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW |
                      (last ? 0 : O_DIRECTORY);
    const int next = ::openat(at, part.c_str(), flags);
    const int saved = errno;
    if (at != dir_fd) ::close(at);
    errno = saved;
    if (next < 0 || last) return next;
    at = next;
    start = slash + 1;
  }
}

}  // namespace

Result<UiDiskFile> ReadUiFile(const std::string& dir, std::string_view path) {
  if (path.empty()) path = "index.html";
  if (!IsUiPath(path))
    return Status::InvalidArgument("not a file name: \"" + std::string(path) + "\"");
  const std::string full = dir + "/" + std::string(path);
  auto not_found = [&] { return Status::NotFound("no file " + std::string(path) + " in api.ui_dir"); };
  // The directory itself may be a symlink (the operator named it); nothing
  // under it may lead out of it.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return not_found();
  const int fd = OpenBeneath(dir_fd, std::string(path));
  ::close(dir_fd);
  if (fd < 0) return not_found();
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return not_found();
  constexpr off_t kMax = 8 << 20;
  if (st.st_size > kMax) return Status::InvalidArgument(full + ": larger than 8 MiB");
  UiDiskFile f;
  f.body.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < f.body.size()) {
    const ssize_t n = ::read(fd, f.body.data() + got, f.body.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError(full + ": cannot be read");
    if (n == 0) break;  // it shrank meanwhile: what is there now
    got += static_cast<size_t>(n);
  }
  f.body.resize(got);
  f.etag = "\"" + Sha256::Hex(f.body).substr(0, 16) + "\"";
  return f;
}

}  // namespace limbic::runtime
