// A JSON object record held as it is stored: the compact JSON Dump writes
// (keys in order, nothing between tokens), and where each top-level
// member's key and value lie in it. What the write path holds threads and
// actions as, instead of a JSON tree.
//
// A thread or action read back (from RocksDB, or from the records a replay
// keeps resident) is checked and indexed, not parsed into a tree; copying
// one is two allocations; changing a member splices its bytes; writing one
// is its bytes. The reducer reads the few members it decides on (status,
// a thread's percepts) in place.
//
// Guarantees (tests/state/flat_record_test.cc):
//   - bytes() is exactly Dump(ToJson()), whatever was set or erased, so a
//     record written from this form is the record the JSON form would write;
//   - FromJson(j).bytes() == Dump(j) for any object j;
//   - FromStored(Dump(j)) holds j; bytes that are not exactly Dump's form
//     at any depth (spaces, keys out of order, repeated or escaped, other
//     string escapes, other number forms) are parsed and re-serialised, so
//     the guarantee above holds for them too, and a member compared as
//     bytes (a string, an array's elements) compares as its value; bytes
//     that are not a JSON object are refused with an error saying so.
//
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "state/event.h"
#include "base/status.h"

namespace limbic::state {

class FlatRecord {
 public:
  // `object` must be a JSON object.
  static FlatRecord FromJson(const json& object);
  // The record RocksDB stores as `stored`; InvalidArgument when it is not
  // a JSON object.
  static Result<FlatRecord> FromStored(std::string_view stored);

  // The record as stored.
  const std::string& bytes() const { return bytes_; }
  json ToJson() const;

  // Calls fn(key, value) for each member in key order: the key between
  // its quotes and the value, both as stored.
  template <typename Fn>
  void ForEachMember(Fn fn) const {
    for (const Member& m : members_)
      fn(KeyOf(m), std::string_view(bytes_).substr(m.value_at, m.value_end - m.value_at));
  }
  // A stored JSON string's text (`raw` with its quotes), or nullopt when
  // `raw` is not a string.
  static std::optional<std::string> StringOf(std::string_view raw);

  bool Has(std::string_view key) const { return FindMember(key) != nullptr; }
  // The member's value as stored (compact JSON), or nullopt.
  std::optional<std::string_view> Raw(std::string_view key) const;
  // The member's value; null when absent.
  json Get(std::string_view key) const;
  // The member's string, or nullopt when absent or not a string.
  std::optional<std::string> String(std::string_view key) const;
  // Whether the member is the string `value`.
  bool IsString(std::string_view key, std::string_view value) const;
  // The member's number, or nullopt when absent or not a number.
  std::optional<double> Number(std::string_view key) const;

  // Sets the member (added in key order when absent). Keys are names
  // without quotes, backslashes or control characters.
  void Set(std::string_view key, const json& value);
  void SetString(std::string_view key, const std::string& value);
  void Erase(std::string_view key);

  // A member that is an array (a thread's percepts): whether it holds the
  // string `s`; adding `s` at the end unless it holds it already (an array
  // of just `s` when the member is absent or not an array); removing every
  // `s` (nothing when it is not an array).
  bool ArrayHas(std::string_view key, const std::string& s) const;
  void ArrayAddUnique(std::string_view key, const std::string& s);
  void ArrayRemove(std::string_view key, const std::string& s);

 private:
  // Offsets into bytes_: the key with its quotes, then the value.
  struct Member {
    uint32_t key_at, key_end, value_at, value_end;
  };
  FlatRecord() = default;
  // Finds the members of bytes_. False when bytes_ is not a compact JSON
  // object; with `canonical`, also when anything in it is not as Dump
  // writes it (keys out of order, repeated or escaped at any depth, other
  // escapes or number forms), which Dump never writes.
  bool Index(bool canonical);
  const Member* FindMember(std::string_view key) const;
  std::string_view KeyOf(const Member& m) const;  // between the quotes, as stored
  void SetRaw(std::string_view key, std::string_view value);
  // Moves the offsets of members_[first...] by `delta` bytes.
  void Shift(size_t first, int64_t delta);

  std::string bytes_;
  std::vector<Member> members_;
};

}  // namespace limbic::state
