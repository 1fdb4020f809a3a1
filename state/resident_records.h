// A bulk load's written records, kept in memory as stored.
//
// Replay reduces each event over the records as they are so far, and many
// of those records were written to RocksDB by an earlier bulk write: a
// thread touched again, a percept assigned long after it arrived, and, for
// every new id, the check that it does not exist yet. Reading them back
// from RocksDB (asking each table file's bloom filter, finding, reading and
// decompressing a block) was a fifth of the reducing thread's time on a
// long log. ResidentRecords keeps what the bulk writes wrote, serialised
// exactly as RocksDB holds it, so such a read is a hash table probe.
//
// It is complete while it knows every record the DB holds (a load into an
// empty DB): then a record it does not know does not exist. Past its
// budget it lets go of the records written longest ago (a replay comes
// back to recent ones: the thread being worked on, the percept that just
// arrived), and of each record it lets go it keeps the 64-bit hash of its
// key: a record whose hash it kept is asked of RocksDB, one it has no
// trace of is still known to be absent. Only when those hashes would take
// more than half the budget does it drop them and stop being complete. A
// record larger than the whole budget is let go alone. Each bulk write
// passes through Add once RocksDB has it, before the next write starts:
// until then the write's own records are read from the write (see
// Projection::Flushing), never from here, so what it answers is never
// older than what the reader would find.
//
// A bulk write's records are gathered into a Batch on the writing thread
// (hashed, allocated and copied from the write's buffer there); Add
// links a batch in with one probe per record, on the owner thread, between
// writes.
//
// Thread-safety: none of its own. Projection changes it only between bulk
// writes, when no other thread reads it; Find may run on several threads
// at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "state/reducer.h"

namespace limbic::state {

class ResidentRecords {
 public:
  // `complete`: the DB holds no records yet.
  ResidentRecords(size_t budget_bytes, bool complete)
      : budget_(budget_bytes), complete_(complete) {}

  // One bulk write's records, in the order written.
  class Batch {
   public:
    // A record RocksDB now holds as `value`, or (nullopt) no longer holds.
    void Add(Pool pool, std::string id, std::optional<std::string> value);
    size_t size() const { return entries_.size(); }

   private:
    friend class ResidentRecords;
    struct Entry {
      Pool pool;
      uint64_t hash;
      std::string id;
      std::optional<std::string> value;  // nullopt: deleted
      Entry* older = nullptr;  // the order written in (ResidentRecords' list)
      Entry* newer = nullptr;
    };
    std::vector<std::unique_ptr<Entry>> entries_;
  };

  enum class Found {
    kHere,    // *value is the record as stored (valid until the next Add)
    kAbsent,  // the record does not exist
    kAsk,     // not held here: read RocksDB
  };
  Found Find(Pool pool, std::string_view id, std::string_view* value) const;

  // Links `batch` in: its records are now the newest.
  void Add(Batch batch);

  ResidentRecords(const ResidentRecords&) = delete;
  ResidentRecords& operator=(const ResidentRecords&) = delete;
  ~ResidentRecords();

  bool complete() const { return complete_; }
  // Memory held, as charged against the budget: the entries, their
  // strings' capacities, the table and the hashes of the records let go
  // (not the allocator's own overhead).
  size_t bytes() const {
    return bytes_ + slots_.size() * sizeof(Slot) + let_go_.size() * sizeof(uint64_t);
  }
  // The smallest table: a budget below this holds nothing.
  static constexpr size_t kMinTableBytes = 1024 * 2 * sizeof(uint64_t);

 private:
  using Entry = Batch::Entry;
  // The hash is kept here too, so a probe passes other ids without
  // touching their entries (a cache miss each).
  struct Slot {
    uint64_t hash = 0;
    Entry* entry = nullptr;  // owned; nullptr: empty
  };
  static_assert(sizeof(Slot) == 2 * sizeof(uint64_t));
  static uint64_t Hash(Pool pool, std::string_view id);
  static size_t Cost(const Entry& e);
  // The slot holding (pool, id), or the empty slot where it would go.
  Slot& Probe(uint64_t hash, Pool pool, std::string_view id);
  const Slot& Probe(uint64_t hash, Pool pool, std::string_view id) const;
  // Rehashes into `size` slots (a power of two).
  void Grow(size_t size);
  // Empties `slot`, moving back the slots after it that probed past it.
  void Unlink(Slot& slot);
  // The order written in: `e` becomes the newest / leaves it.
  void PushNewest(Entry* e);
  void Detach(Entry* e);
  // Lets go of the record in `slot` (keeping its hash), or of the oldest
  // records until the budget holds.
  void Remove(Slot& slot);
  void LetGoOldest();
  // The hashes of the records let go (complete_ only): open addressing,
  // 0 = empty (a hash of 0 is kept as 1). They take at most half the
  // budget; past that, GiveUpComplete drops them.
  void KeepLetGo(uint64_t hash);
  bool WasLetGo(uint64_t hash) const;
  void GiveUpComplete();
  static constexpr size_t kMinSlots = kMinTableBytes / sizeof(Slot);

  std::vector<Slot> slots_;  // open addressing, linear probing; a power of two
  size_t used_ = 0;
  Entry* oldest_ = nullptr;
  Entry* newest_ = nullptr;
  std::vector<uint64_t> let_go_;  // a power of two, at most half full
  size_t let_go_used_ = 0;
  size_t budget_;
  size_t bytes_ = 0;
  bool complete_;
};

}  // namespace limbic::state
