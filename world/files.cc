#include "world/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace limbic::world {

Status ErrnoStatus(const std::string& what, int err) {
  if (err == ENOENT) return Status::NotFound(what + ": " + std::strerror(err));
  return Status::IOError(what + ": " + std::strerror(err));
}

Status LockExclusive(int fd, const std::string& path) {
  while (::flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) return ErrnoStatus("flock " + path, errno);
  return Status::OK();
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  for (size_t done = 0; done < data.size();) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("write " + path, errno);
    if (n == 0) return Status::IOError("write " + path + ": no progress");
    done += static_cast<size_t>(n);
  }
  return Status::OK();
}

Result<std::unique_ptr<ExclusiveLock>> ExclusiveLock::Acquire(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("open " + path, errno);
  if (Status s = LockExclusive(fd, path); !s.ok()) {
    ::close(fd);
    return s;
  }
  return std::unique_ptr<ExclusiveLock>(new ExclusiveLock(fd));
}

ExclusiveLock::~ExclusiveLock() { ::close(fd_); }  // closing drops the flock

Result<FileText> ReadFilePrefix(const std::string& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open " + path, errno);
  FileText out;
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoStatus("stat " + path, err);
  }
  out.mtime_ms = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
  // The size is a hint: the file may grow while it is read.
  size_t want = std::min<size_t>(static_cast<size_t>(st.st_size), max_bytes);
  out.text.resize(want + 1);
  size_t got = 0;
  while (got < out.text.size()) {
    ssize_t n = ::read(fd, out.text.data() + got, out.text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return ErrnoStatus("read " + path, err);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
    if (got == out.text.size() && got <= max_bytes)
      out.text.resize(std::min(got * 2, max_bytes + 1));
  }
  ::close(fd);
  out.whole = got <= max_bytes;
  out.text.resize(std::min(got, max_bytes));
  return out;
}

Status WriteFileByRename(const std::string& path, std::string_view data) {
  size_t slash = path.rfind('/');
  std::string tmp = slash == std::string::npos
                        ? "." + path + ".tmp"
                        : path.substr(0, slash + 1) + "." + path.substr(slash + 1) + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("open " + tmp, errno);
  if (Status s = WriteAll(fd, data, tmp); !s.ok()) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoStatus("close " + tmp, err);
  }
  // Swapping the new file with the old one is as atomic for readers as
  // rename(2), but ext4 flushes the data of a file renamed over another
  // (auto_da_alloc, ~1 ms a page) and does not for an exchange.
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE) == 0) {
    ::unlink(tmp.c_str());  // now the old page
    return Status::OK();
  }
  if (::rename(tmp.c_str(), path.c_str()) !=
      0) {  // no old file, or no exchange on this file system
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoStatus("rename " + tmp + " to " + path, err);
  }
  return Status::OK();
}

Result<std::vector<std::string>> ListDir(const std::string& dir, bool files_only) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return ErrnoStatus("opendir " + dir, errno);
  std::vector<std::string> out;
  while (struct dirent* e = ::readdir(d)) {
    std::string_view name(e->d_name);
    if (name == "." || name == "..") continue;
    if (files_only && e->d_type != DT_REG) {
      if (e->d_type != DT_UNKNOWN && e->d_type != DT_LNK) continue;
      struct stat st;  // file systems that do not fill d_type; links to files count
      std::string p = dir + "/" + std::string(name);
      if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    }
    out.emplace_back(name);
  }
  ::closedir(d);
  return out;
}

Status AppendLines(const std::string& path, const std::vector<std::string>& lines) {
  if (lines.empty()) return Status::OK();
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("open " + path, errno);
  Status s = LockExclusive(fd, path);
  if (s.ok()) {
    std::string buf;
    off_t end = ::lseek(fd, 0, SEEK_END);
    char last = '\n';
    if (end > 0 && ::pread(fd, &last, 1, end - 1) != 1) last = '\n';
    if (last != '\n') buf += '\n';
    for (const std::string& l : lines) buf.append(l).append("\n");
    s = WriteAll(fd, buf, path);
  }
  ::close(fd);  // releases the lock
  return s;
}

Result<std::string> ReadWholeFile(const std::string& path, size_t max_bytes) {
  auto text = ReadFilePrefix(path, max_bytes);
  if (!text.ok()) return text.status().IsNotFound() ? Result<std::string>(std::string()) : text.status();
  if (!text->whole)
    return Status::FailedPrecondition(path + " is larger than " + std::to_string(max_bytes) + " bytes");
  return std::move(text->text);
}

}  // namespace limbic::world
