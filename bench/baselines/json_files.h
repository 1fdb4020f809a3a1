// The file layer of the JSON-files baseline (json_store.h): POSIX calls
// turned into Status, and JSON text written without throwing.
//
// Errors are IOError naming the path and the call ("dir/percepts.json.tmp:
// fdatasync: No space left on device"). `sync` = false skips every
// fdatasync/fsync, for the store's no-durability mode.
//
// Thread-safety: plain functions; a UniqueFd belongs to one owner.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "bench/store.h"
#include "base/status.h"

namespace limbic::bench {

// Owns a file descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  // Closes now, reporting close()'s error (errno set) as -1.
  int Close();

 private:
  int fd_ = -1;
};

// open(path, flags | O_CLOEXEC, 0644) into *fd.
Status OpenFd(const std::string& path, int flags, UniqueFd* fd);

// The whole file, or nullopt when it does not exist.
Result<std::optional<std::string>> ReadFile(const std::string& path);

// Creates or truncates `path`, writes `data`, fdatasyncs when `sync`, closes.
Status WriteWholeFile(const std::string& path, std::string_view data, bool sync);

// Writes `data` to `fd` (opened O_APPEND) in one go; fdatasync when `sync`.
Status AppendFile(int fd, std::string_view data, const std::string& path, bool sync);

// rename(2): atomically replaces `to`.
Status RenameFile(const std::string& from, const std::string& to);

// fsync(2) of a file or directory descriptor.
Status SyncFd(int fd, const std::string& path);

// Cuts a final line that lacks its '\n' (an append torn by a crash) off the
// file open read-write as `fd`.
Status TrimTornTail(int fd, const std::string& path);

// Compact JSON. DumpLine adds '\n' and refuses text that is not UTF-8
// (InvalidArgument); DumpCompact replaces such bytes, so it never fails: it
// is used for documents whose strings all came through DumpLine first.
Result<std::string> DumpLine(const json& j);
std::string DumpCompact(const json& j);

}  // namespace limbic::bench
