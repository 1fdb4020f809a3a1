// What every RocksDB user in limbic shares: RocksDB statuses as limbic
// Statuses, and keys made printable for error messages.
//
// Include only from .cc files of targets that link RocksDB (privately).
// Thread-safety: pure functions.
#pragma once

#include <rocksdb/env.h>
#include <rocksdb/status.h>

#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace limbic::state {

// OK stays OK; corruption is kCorruption, anything else kIOError; the
// message is "<what>: <RocksDB's message>".
inline Status FromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return Status::OK();
  if (s.IsCorruption()) return Status::Corruption(what + ": " + s.ToString());
  return Status::IOError(what + ": " + s.ToString());
}

// RocksDB's info log as limbic keeps it: warnings and errors appended to
// <dir>/LOG.limbic, and a failed write (a full disk) dropped. RocksDB's own
// file logger asserts when it is written after a failed write, which took
// the process down at the next flush once a disk had filled up. Read-only
// opens (and a dir that cannot be made) log nothing.
class TolerantInfoLog final : public rocksdb::Logger {
 public:
  static std::shared_ptr<rocksdb::Logger> Open(const std::string& dir, bool read_only) {
    std::FILE* f = nullptr;
    std::error_code ec;
    if (!read_only && (std::filesystem::create_directories(dir, ec), !ec))
      f = std::fopen((dir + "/LOG.limbic").c_str(), "a");
    return std::make_shared<TolerantInfoLog>(f);
  }
  explicit TolerantInfoLog(std::FILE* f) : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL), f_(f) {}
  ~TolerantInfoLog() override {
    if (f_) std::fclose(f_);
  }
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    if (!f_) return;
    std::vfprintf(f_, format, ap);  // errors are dropped: see above
    std::fputc('\n', f_);
    std::fflush(f_);
  }

 private:
  std::FILE* f_;
};

// `key` with bytes outside printable ASCII as \xNN.
inline std::string Printable(std::string_view key) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : key) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace limbic::state
