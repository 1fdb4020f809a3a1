#include "bench/baselines/json_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace limbic::bench {
namespace {

Status Errno(const std::string& path, const char* call) {
  return Status::IOError(path + ": " + call + ": " + std::strerror(errno));
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(path, "write");
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    Close();
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

UniqueFd::~UniqueFd() { Close(); }

int UniqueFd::Close() {
  if (fd_ < 0) return 0;
  return ::close(std::exchange(fd_, -1));
}

Status OpenFd(const std::string& path, int flags, UniqueFd* fd) {
  int raw = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (raw < 0) return Errno(path, "open");
  *fd = UniqueFd(raw);
  return Status::OK();
}

Result<std::optional<std::string>> ReadFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return Errno(path, "open");
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Errno(path, "fstat");
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::read(fd.get(), out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(path, "read");
    if (n == 0) break;  // shrank under us
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return std::optional<std::string>(std::move(out));
}

Status WriteWholeFile(const std::string& path, std::string_view data, bool sync) {
  UniqueFd fd;
  LIMBIC_RETURN_IF_ERROR(OpenFd(path, O_WRONLY | O_CREAT | O_TRUNC, &fd));
  LIMBIC_RETURN_IF_ERROR(WriteAll(fd.get(), data, path));
  if (sync && ::fdatasync(fd.get()) != 0) return Errno(path, "fdatasync");
  if (fd.Close() != 0) return Errno(path, "close");
  return Status::OK();
}

Status AppendFile(int fd, std::string_view data, const std::string& path, bool sync) {
  LIMBIC_RETURN_IF_ERROR(WriteAll(fd, data, path));
  if (sync && ::fdatasync(fd) != 0) return Errno(path, "fdatasync");
  return Status::OK();
}

Status RenameFile(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) return Errno(from, "rename");
  return Status::OK();
}

Status SyncFd(int fd, const std::string& path) {
  if (::fsync(fd) != 0) return Errno(path, "fsync");
  return Status::OK();
}

Status TrimTornTail(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Errno(path, "fstat");
  // Look backwards for the last '\n'; everything after it is torn.
  off_t end = st.st_size;
  char buf[4096];
  while (end > 0) {
    off_t start = std::max<off_t>(0, end - static_cast<off_t>(sizeof buf));
    size_t len = static_cast<size_t>(end - start);
    if (::pread(fd, buf, len, start) != static_cast<ssize_t>(len)) return Errno(path, "pread");
    const char* nl = static_cast<const char*>(memrchr(buf, '\n', len));
    if (nl) {
      end = start + (nl - buf) + 1;
      break;
    }
    end = start;
  }
  if (end == st.st_size) return Status::OK();
  if (::ftruncate(fd, end) != 0) return Errno(path, "ftruncate");
  return Status::OK();
}

Result<std::string> DumpLine(const json& j) {
  try {
    return j.dump() + '\n';
  } catch (const json::exception& e) {
    return Status::InvalidArgument(std::string("not UTF-8 text: ") + e.what());
  }
}

std::string DumpCompact(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace limbic::bench
