// Env::Default(): the POSIX file layer.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/env.h"

namespace limbic {
namespace {

Status Errno(const std::string& what, int err) {
  return Status::IOError(what + ": " + std::strerror(err));
}

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Append(std::string_view data) override {
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return Errno("write " + path_, errno);
      }
      data.remove_prefix(static_cast<size_t>(n));
      size_ += static_cast<uint64_t>(n);
    }
    return Status::OK();
  }

  Status Sync() override {
    while (::fdatasync(fd_) != 0) {
      if (errno != EINTR) return Errno("fdatasync " + path_, errno);
    }
    return Status::OK();
  }

  Status Close() override {
    if (fd_ < 0) return Status::OK();
    int rc = ::close(fd_);
    fd_ = -1;
    return rc == 0 ? Status::OK() : Errno("close " + path_, errno);
  }

  uint64_t Size() const override { return size_; }

 private:
  std::string path_;
  int fd_;
  uint64_t size_;
};

class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixSequentialFile() override { ::close(fd_); }

  Status Read(size_t n, std::string* out) override {
    out->resize(n);
    for (;;) {
      ssize_t got = ::read(fd_, out->data(), n);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        out->clear();
        return Errno("read " + path_, errno);
      }
      out->resize(static_cast<size_t>(got));
      return Status::OK();
    }
  }

 private:
  std::string path_;
  int fd_;
};

class PosixFileLock final : public FileLock {
 public:
  PosixFileLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixFileLock() override {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }

  Result<bool> Names(const std::string& path) const override {
    struct stat held, named;
    if (::fstat(fd_, &held) != 0) return Errno("stat " + path_, errno);
    if (::stat(path.c_str(), &named) != 0) {
      if (errno == ENOENT) return false;
      return Errno("stat " + path, errno);
    }
    return held.st_dev == named.st_dev && held.st_ino == named.st_ino;
  }

  Status Rewrite(std::string_view contents) override {
    // Written over the old contents, then cut to size: a reader without the
    // lock never sees the file empty (the entity store's generation).
    for (size_t done = 0; done < contents.size();) {
      ssize_t n = ::pwrite(fd_, contents.data() + done, contents.size() - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Errno("write " + path_, n < 0 ? errno : EIO);
      done += static_cast<size_t>(n);
    }
    if (::ftruncate(fd_, static_cast<off_t>(contents.size())) != 0)
      return Errno("truncate " + path_, errno);
    return Status::OK();
  }

 private:
  std::string path_;
  int fd_;
};

// Replaces `to` with `from` for readers without a flush: ext4 writes out
// the data of a file renamed over another (auto_da_alloc, ~1 ms a page)
// but not of one exchanged with it. Falls back to rename(2) when there is
// no old file or the file system cannot exchange.
Status ReplaceWithoutFlush(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_EXCHANGE) == 0) {
    ::unlink(from.c_str());  // now the old version
    return Status::OK();
  }
  if (::rename(from.c_str(), to.c_str()) != 0) return Errno("rename " + from + " to " + to, errno);
  return Status::OK();
}

class PosixEnv final : public Env {
 public:
  Result<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return Errno("open " + path, errno);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      return Errno("stat " + path, err);
    }
    return std::unique_ptr<WritableFile>(
        new PosixWritableFile(path, fd, static_cast<uint64_t>(st.st_size)));
  }

  Result<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Errno("open " + path, errno);
    return std::unique_ptr<SequentialFile>(new PosixSequentialFile(path, fd));
  }

  bool FileExists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }

  Result<uint64_t> GetFileSize(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return Errno("stat " + path, errno);
    return static_cast<uint64_t>(st.st_size);
  }

  Result<std::vector<std::string>> GetChildren(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return Errno("opendir " + dir, errno);
    std::vector<std::string> out;
    while (struct dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") out.push_back(std::move(name));
    }
    ::closedir(d);
    return out;
  }

  Status CreateDirs(const std::string& dir) override {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::IOError("mkdir " + dir + ": " + ec.message());
    return Status::OK();
  }

  Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return Errno("unlink " + path, errno);
    return Status::OK();
  }

  Status RenameFile(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return Errno("rename " + from + " to " + to, errno);
    return Status::OK();
  }

  Status TruncateFile(const std::string& path, uint64_t size) override {
    if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0) return Errno("truncate " + path, errno);
    return Status::OK();
  }

  Status SyncDir(const std::string& dir) override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return Errno("open " + dir, errno);
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    return rc == 0 ? Status::OK() : Errno("fsync " + dir, err);
  }

  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path, LockWait wait) override {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Errno("open " + path, errno);
    if (wait == LockWait::kYes) {
      while (::flock(fd, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::close(fd);
        return Errno("flock " + path, err);
      }
      return std::unique_ptr<FileLock>(new PosixFileLock(path, fd));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      char buf[32] = {0};
      ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      ::close(fd);
      if (err != EWOULDBLOCK) return Errno("flock " + path, err);
      std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "unknown";
      while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
      return Status::Busy("state dir is in use by another limbic process (pid " + pid +
                          "; lock file " + path + ")");
    }
    auto lock = std::make_unique<PosixFileLock>(path, fd);
    LIMBIC_RETURN_IF_ERROR(lock->Rewrite(std::to_string(::getpid()) + "\n"));
    return std::unique_ptr<FileLock>(std::move(lock));
  }

  Result<std::string> ReadFileToString(const std::string& path) override {
    auto file = NewSequentialFile(path);
    if (!file.ok()) return file.status();
    std::string out, chunk;
    for (;;) {
      // Read() sizes (and so zeroes) its buffer first: small chunks keep a
      // small file (a seal, a lock) from costing a megabyte of memset.
      LIMBIC_RETURN_IF_ERROR((*file)->Read(64 << 10, &chunk));
      if (chunk.empty()) return out;
      out += chunk;
    }
  }

  Status WriteFileAtomic(const std::string& path, std::string_view data, FileDurability durability) override {
    const std::string tmp = TempPathFor(path);
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Errno("open " + tmp, errno);
    PosixWritableFile f(tmp, fd, 0);
    Status s = f.Append(data);
    if (s.ok() && durability == FileDurability::kSynced) s = f.Sync();
    if (s.ok()) s = f.Close();
    if (s.ok() && durability == FileDurability::kDerived) s = ReplaceWithoutFlush(tmp, path);
    if (s.ok() && durability == FileDurability::kSynced) {
      s = RenameFile(tmp, path);
      if (s.ok()) return SyncDir(std::filesystem::path(path).parent_path().string());
    }
    if (!s.ok()) ::unlink(tmp.c_str());  // never leave a half-written temp file behind
    return s;
  }
};

}  // namespace

Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  // Non-blocking: opening a FIFO with no writer would wait for one.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Errno("open " + path, errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return Errno("stat " + path, errno);
  if (!S_ISREG(st.st_mode)) {
    const char* what = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a file";
    return Status::Corruption(path + ": " + what + ", not a regular file");
  }
  auto too_big = [&](uint64_t size) {
    return Status::Corruption(path + ": " + std::to_string(size) + " bytes, more than " +
                              std::to_string(max_bytes));
  };
  if (static_cast<uint64_t>(st.st_size) > max_bytes) return too_big(st.st_size);
  std::string out(max_bytes + 1, '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("read " + path, errno);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > max_bytes) return too_big(got);  // grew since the stat
  out.resize(got);
  return out;
}

std::string TempPathFor(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "." + path + ".tmp";
  return path.substr(0, slash + 1) + "." + path.substr(slash + 1) + ".tmp";
}

Env* Env::Default() {
  static PosixEnv env;
  return &env;
}

std::vector<std::string> ChildEnvironment(const std::vector<std::string>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    std::string_view var(*e);
    bool overridden = false;
    for (const std::string& mine : overrides) {
      size_t eq = mine.find('=');
      if (eq != std::string::npos && var.size() > eq && var.compare(0, eq + 1, mine, 0, eq + 1) == 0)
        overridden = true;
    }
    if (!overridden) out.emplace_back(var);
  }
  out.insert(out.end(), overrides.begin(), overrides.end());
  return out;
}

}  // namespace limbic
