// The layout of the pools in RocksDB: column families, the index key
// grammar, and the encodings both the write path (pools.cc) and the reads
// (pools_read.cc) use. Internal to state/.
//
// Index CF key grammar. TS8 is a timestamp in ms as 8 bytes big-endian with
// the sign bit flipped, so byte order is time order; RT8 is its complement,
// so byte order is newest first. Strings end at a 0x00 byte (names and ids
// never contain one). Values are empty except where given:
//
//   P|T|AT ID                  every percept, newest first
//   P|h|THREAD \0 AT ID        percepts by thread
//   P|a|THREAD \0 AT ID        percepts assigned to the thread and not yet
//                              processed or dropped (status "assigned")
//   P|s|SOURCE \0 AT ID        percepts by source
//   P|n|SOURCE \0 AT ID        new (unassigned) percepts by source
//   P|y|TYPE \0 AT ID          percepts by type
//   P|u|STATUS \0 AT ID        percepts by status
//   where AT = RT8 of the percept's ts, then the complement of its seq (8
//   bytes big-endian): newest first, and within one millisecond the later
//   arrival first
//   T|u|STATUS \0 ID           threads by status; value SAL8 LAST8: the
//                              thread's salience (IEEE double bits) and
//                              last_active (ms), both little-endian, so
//                              ranking threads needs no record reads
//   A|u|STATUS \0 TS8 ID       actions by status, oldest first
//   M|f|NS \0 SUBJECT \0 RELATION \0 ID   current (not superseded) facts
//   M|s|SUBJECT \0 ID          facts by subject, superseded ones too
//   M|o|OBJECT \0 ID           facts by object
//   M|c|TS8 ID                 every memory by created_at, oldest first
//   S|k|A \0 RELATION \0 B \0 ID   associations by their triple (a log may
//                              hold one triple twice: each has its entry)
//   S|e|ENTITY \0 ID           associations by either end
//   N|w|RT8 RSEQ8 ID           the mind's sessions, newest first (woken_at, then
//                              the seq of their mind_woken)
//   N|a|ID                     the mind's sessions still awake
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/slice_transform.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "state/projection.h"

namespace limbic::state {

inline const char* const kCfNames[] = {"default",   "percepts", "threads",  "arousal",
                                       "actions",   "reflexes", "memories", "associations",
                                       "documents", "dedup",    "sessions", "index"};
inline constexpr uint8_t kIndexCf = 11;  // position of "index" in kCfNames
// A pool's records live in column family 1 + its position in Pool.
inline constexpr uint8_t RecordCf(Pool p) { return static_cast<uint8_t>(1 + static_cast<size_t>(p)); }
// The pool whose records column family `cf` holds (nullopt: meta or index).
inline std::optional<Pool> PoolOfCf(uint8_t cf) {
  if (cf == 0 || cf >= kIndexCf) return std::nullopt;
  return static_cast<Pool>(cf - 1);
}
inline constexpr std::string_view kAppliedSeqKey = "applied_seq";
inline constexpr std::string_view kSchemaKey = "schema";
// A bulk load's table files before RocksDB takes them in: "bulk-N-CF.sst"
// in the DB dir (removed by the next writable open if a crash left them).
inline constexpr std::string_view kBulkFilePrefix = "bulk-";
// The layout of records and indexes; a DB of another layout is rebuilt from
// the log (Engine) rather than read wrongly. 2: newest-first percept keys
// (AT), P|n|, P|a|, thread index values, the percept's seq. 3: the memory
// pools and their indexes. 4: the dedup pool (rebuilt from the log, so ids
// removed before it existed are remembered too). 5: S|k| keys end with the
// association's id (one key per triple held whichever association was
// applied last, and a check of the indexes from the records disagreed). 6:
// the mind's sessions pool and its N|w| index.
inline constexpr std::string_view kSchema = "6";

struct Projection::Handles {
  std::vector<rocksdb::ColumnFamilyHandle*> all;
  rocksdb::ColumnFamilyHandle* meta() const { return all[0]; }
  rocksdb::ColumnFamilyHandle* index() const { return all[kIndexCf]; }
  rocksdb::ColumnFamilyHandle* pool(Pool p) const { return all[RecordCf(p)]; }
};

// A record as stored: compact JSON, invalid UTF-8 replaced.
std::string Dump(const json& j);
std::string Dump(const Record& record);
// Dump's bytes appended to *out.
void AppendStored(const Record& record, std::string* out);

// TS8: ms as 8 bytes big-endian, sign bit flipped (byte order = time order).
std::string Ts8(TimeMs t);
TimeMs FromTs8(std::string_view b);
// RT8: the complement of TS8 (byte order = newest first).
std::string Rt8(TimeMs t);
TimeMs FromRt8(std::string_view b);
// The complement of a seq, 8 bytes big-endian (later arrival first).
std::string Rseq8(uint64_t seq);
// A record's time field (RFC 3339) in ms; 0 when absent or malformed.
TimeMs RecordTime(const json& rec, const char* field = "ts");
// A string field, or "".
std::string StrOf(const json& rec, const char* key);
void PutLE64(std::string* out, uint64_t v);
uint64_t GetLE64(std::string_view b);
// SAL8 LAST8: a thread index entry's value.
ThreadSummary SummaryOf(const std::string& id, const json& rec);
ThreadSummary SummaryOf(const std::string& id, const Record& rec);
// A percept's place among the new ones (FreshTable), or nullopt when its
// status is not "new".
std::optional<FreshPercept> FreshOf(const json& percept);
std::optional<FreshPercept> FreshOf(const Record& percept);
// The position of an action's status (or of an action record's) in
// kActionStatuses; nullopt for another.
std::optional<size_t> ActionStatusIndex(std::string_view status);
std::optional<size_t> ActionStatusIndexOf(const Record& action);
// The thread an assigned, unprocessed percept counts for ("" if none).
std::string UnprocessedFor(const json& percept);
std::string UnprocessedFor(const Record& percept);
// The part of an index key before its TS8/id tail: "P|T|", or the
// "X|y|NAME\0" of a named index. Keys of one prefix mostly arrive in time
// order, so RocksDB inserts each next to the previous one of its prefix
// instead of searching the skiplist from the top.
class IndexPrefix final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "limbic.IndexPrefix"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    if (key.size() >= 4 && key[2] == 'T' && key[0] == 'P') return rocksdb::Slice(key.data(), 4);
    for (size_t i = 4; i < key.size(); ++i)
      if (key[i] == '\0') return rocksdb::Slice(key.data(), i + 1);
    return key;
  }
  bool InDomain(const rocksdb::Slice& key) const override { return key.size() >= 4; }
};

// The ops a bulk write puts in its table files, in the order it writes
// them: positions in `write.ops` sorted by column family, then key
// (bytewise, RocksDB's order); of several ops on one key, only the last
// one given.
std::vector<uint32_t> KeyOrder(const PreparedWrite& write);

// Index entries (key, value), one after another in one buffer that is
// cleared and reused from record to record: Prepare makes each changed
// record's old and new entries to compare them, and a string per entry
// was an allocation and a free each.
class IndexEntryList {
 public:
  size_t size() const { return entries_.size(); }
  std::string_view key(size_t i) const {
    return {bytes_.data() + entries_[i].at, entries_[i].key_size};
  }
  std::string_view value(size_t i) const {
    const Entry& e = entries_[i];
    return {bytes_.data() + e.at + e.key_size, e.value_size};
  }
  bool HasKey(std::string_view key) const;
  bool Has(std::string_view key, std::string_view value) const;
  void clear() {
    bytes_.clear();
    entries_.clear();
  }
  // Adds an entry whose key is `key_pieces` one after another.
  void Add(std::initializer_list<std::string_view> key_pieces, std::string_view value = {});

 private:
  struct Entry {
    size_t at, key_size, value_size;
  };
  std::string bytes_;
  std::vector<Entry> entries_;
};
// Appends the index entries a record implies; a typed percept's or a flat
// record's are those of its JSON form.
void AppendIndexEntries(Pool pool, std::string_view id, const json& rec, IndexEntryList* out);
void AppendIndexEntries(Pool pool, std::string_view id, const Record& rec, IndexEntryList* out);
// The same as (key, value) strings, for checks that collect them.
using IndexEntry = std::pair<std::string, std::string>;
std::vector<IndexEntry> IndexEntries(Pool pool, std::string_view id, const json& rec);
std::vector<IndexEntry> IndexEntries(Pool pool, std::string_view id, const Record& rec);

}  // namespace limbic::state
