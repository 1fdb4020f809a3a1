// What every RocksDB user in limbic shares: RocksDB statuses as limbic
// Statuses, and keys made printable for error messages.
//
// Include only from .cc files of targets that link RocksDB (privately).
// Thread-safety: pure functions.
#pragma once

#include <rocksdb/status.h>

#include <string>
#include <string_view>

#include "state/status.h"

namespace limbic::state {

// OK stays OK; corruption is kCorruption, anything else kIOError; the
// message is "<what>: <RocksDB's message>".
inline Status FromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return Status::OK();
  if (s.IsCorruption()) return Status::Corruption(what + ": " + s.ToString());
  return Status::IOError(what + ": " + s.ToString());
}

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
