#include "world/files.h"

#include <dirent.h>
#include <fcntl.h>
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

namespace {
// The byte at `size - 1` of `path`.
Result<char> ReadLastByte(const std::string& path, uint64_t size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open " + path, errno);
  char last = 0;
  ssize_t n;
  while ((n = ::pread(fd, &last, 1, static_cast<off_t>(size - 1))) < 0 && errno == EINTR) {
  }
  int err = errno;
  ::close(fd);
  if (n < 0) return ErrnoStatus("read " + path, err);
  return n == 1 ? last : '\n';  // cut shorter meanwhile: nothing to end
}
}  // namespace

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

Result<std::unique_ptr<FileLock>> LockNamedFile(Env* env, const std::string& path) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto lock = env->LockFile(path, LockWait::kYes);
    if (!lock.ok()) return lock.status();
    auto same = (*lock)->Names(path);
    if (!same.ok()) return same.status();
    if (*same) return lock;
  }
  return Status::Unavailable(path + " was replaced 100 times while waiting for its lock");
}

Status AppendLines(Env* env, const std::string& path, const std::vector<std::string>& lines) {
  if (lines.empty()) return Status::OK();
  auto lock = LockNamedFile(env, path);
  if (!lock.ok()) return lock.status();
  auto file = env->NewAppendableFile(path);
  if (!file.ok()) return file.status();
  std::string buf;
  if (const uint64_t size = (*file)->Size(); size > 0) {
    auto last = ReadLastByte(path, size);
    if (!last.ok()) return last.status();
    if (*last != '\n') buf += '\n';
  }
  for (const std::string& l : lines) buf.append(l).append("\n");
  Status s = (*file)->Append(buf);
  Status closed = (*file)->Close();
  return s.ok() ? closed : s;
}

Result<std::string> ReadWholeFile(const std::string& path, size_t max_bytes) {
  auto text = ReadFilePrefix(path, max_bytes);
  if (!text.ok()) return text.status().IsNotFound() ? Result<std::string>(std::string()) : text.status();
  if (!text->whole)
    return Status::FailedPrecondition(path + " is larger than " + std::to_string(max_bytes) + " bytes");
  return std::move(text->text);
}

}  // namespace limbic::world
