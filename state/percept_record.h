// A percept record in typed form: what the write path (reducer, overlays,
// Projection::Prepare) holds instead of a JSON tree.
//
// A percept's JSON shape is docs/events.md, "Pools":
//   {data, drop_reason?, id, intensity, seq, source, status, text?, thread_id, ts, type}
// Of these only status, thread_id and drop_reason ever change after
// percept_arrived. Everything else lives in one immutable block, already
// serialised, shared by every version of the record: copying a record is a
// reference count and three short strings (a JSON tree was about twenty
// allocations, 3 KB resident), and writing one is concatenation.
//
// Guarantees (tests/state/percept_record_test.cc):
//   - AppendJson writes exactly Dump(ToJson()), the bytes stored in RocksDB;
//   - FromJson(j).ToJson() == j for a percept read back from RocksDB (any
//     object whose status is a string and thread_id null or a string, as
//     Dump wrote it), keys the write path does not know included, and
//     FromStored(Dump(j)) is that same record, cut from the bytes (through
//     FlatRecord's members) without a JSON tree;
//   - ts(), seq(), source(), type() are what pool_layout's RecordTime/StrOf
//     read from the JSON form, so the index entries of both forms agree;
//     intensity() what recency.h reads.
//
// Thread-safety: a value type; the shared block is immutable, so copies may
// live on different threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "state/event.h"
#include "state/flat_record.h"
#include "base/status.h"
#include "base/time.h"

namespace limbic::state {

class PerceptRecord {
 public:
  // The record percept_arrived creates: `fields` are the event's (validated),
  // `ts_text` its time as FormatTime writes it, `seq` its seq. status "new",
  // thread_id null.
  static PerceptRecord Arrived(const std::string& id, const json& fields, const std::string& ts_text,
                               uint64_t seq);
  // `rec` (a percept's JSON object) in typed form. InvalidArgument naming
  // the field when it is not an object, its status is not a string or its
  // thread_id neither null nor a string.
  static Result<PerceptRecord> FromJson(const json& rec);
  // The same from the record as stored (RocksDB's bytes), without a JSON
  // tree; InvalidArgument also when they are not a JSON object.
  static Result<PerceptRecord> FromStored(std::string_view stored);

  // The fixed fields as the index reads them: "" for a source or type that
  // is not a string, 0 for a ts that is not an RFC 3339 time or a seq that
  // is not an unsigned integer.
  const std::string& source() const;
  const std::string& type() const;
  TimeMs ts() const;
  uint64_t seq() const;
  // The intensity as recency.h reads it from the JSON form: the number, or
  // 0 when it is not one.
  double intensity() const;

  const std::string& status() const { return status_; }
  // The thread the percept is assigned to, if any.
  const std::optional<std::string>& thread_id() const { return thread_id_; }

  void set_status(std::string status) { status_ = std::move(status); }
  void set_thread_id(std::string thread_id) { thread_id_ = std::move(thread_id); }
  void clear_thread_id() { thread_id_.reset(); }
  // drop_reason: percept_dropped's reason, as given.
  void set_drop_reason(const json& reason);

  // Appends the record as stored: compact JSON, keys in order.
  void AppendJson(std::string* out) const;
  json ToJson() const;

 private:
  struct Fixed;
  PerceptRecord() = default;
  // FromJson and FromStored: the record's members, as stored.
  static Result<PerceptRecord> FromFlat(const FlatRecord& rec);
  std::shared_ptr<const Fixed> fixed_;
  std::string status_;
  std::optional<std::string> thread_id_;
  std::string drop_reason_;  // the value serialised; empty = absent
};

}  // namespace limbic::state
