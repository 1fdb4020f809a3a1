// The pools, projected from the events log into RocksDB.
//
// Column families:
//   default   meta: "applied_seq" (decimal) -- last event applied; "schema"
//             (the layout version, see kSchema in pool_layout.h)
//   percepts  id -> percept record (JSON)
//   threads   id -> thread record
//   arousal   "arousal" -> arousal record
//   actions   id -> action record
//   reflexes  id -> reflex record
//   memories, associations, documents: the memory pools (memory_schema.h)
//   dedup     id -> dedup record (dedup.h)
//   index     secondary indexes, derived from the records (key grammar in
//             pool_layout.h); never part of the digest, checked by fsck
//
// Writing is two steps, so the expensive half can run off the owner thread:
//   Prepare()  turns an Overlay of reduced changes into a PreparedWrite: the
//              serialised records and the index entries to add and remove
//              (needs the records as they were before the changes);
//   Commit()   writes a group of PreparedWrites and the new applied_seq in
//              one WriteBatch.
// Apply() does both for a span of logged events (recovery; replay's bulk
// load prepares and writes table files instead, see WriteBulk in
// pools_bulk.cc).
// RocksDB's own WAL is written but not synced: the events log is the
// durability point, and after a crash Engine re-applies the events after
// applied_seq.
//
// Thread-safety: Commit/Apply are called by one thread at a time (the log's
// writer thread in the live engine); Prepare and the reads may run on another
// thread at the same time (RocksDB is thread-safe, applied_seq is atomic). A
// reader sees every committed group, whole.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "state/event.h"
#include "state/fresh_table.h"
#include "state/reducer.h"
#include "state/resident_records.h"
#include "state/thread_table.h"

namespace rocksdb {
class DB;
class Env;
}

namespace limbic::state {

struct ProjectionOptions {
  std::string path;             // the RocksDB directory (normally <state>/db)
  bool read_only = false;       // open a DB another process may be writing
  bool create_if_missing = true;
  // A command's open (a few reads or writes, then exit), not a run's: no
  // memtable bloom filters and table files opened on one thread, which
  // cost more to set up than they save. Always so when read_only.
  bool short_lived = false;
  // Replay's bulk load: changed records are written as sorted table files
  // that RocksDB ingests, with applied_seq, in one step (no WAL, no
  // memtable). Never for live state.
  bool bulk_load = false;
  // In a bulk load, changed records are kept in memory and written once
  // this many have accumulated (and by Flush). Each such write runs on a
  // thread of its own while Apply goes on reducing the next events.
  size_t bulk_flush_records = 200000;
  // In a bulk load, the records written so far stay in memory, as stored,
  // up to this many bytes (see ResidentRecords): reading one back, or
  // finding that a new id is new, then needs no RocksDB read. 0 = none.
  size_t bulk_resident_bytes = size_t{256} << 20;
  // RocksDB's file layer; nullptr = its default. Tests pass
  // FaultInjectionEnv::rocks_env() to make RocksDB's writes fail.
  rocksdb::Env* rocks_env = nullptr;
  // false: the thread table (one scan of every thread and assigned
  // percept: a fifth of a second at 5M events) is neither loaded nor kept,
  // and the reads that need it (CountUnprocessed, ThreadSummaries,
  // TopThreads) fail. For an open that only applies events or checks the
  // applied_seq; a bulk load never has it.
  bool thread_table = true;
};

// Filters for QueryPercepts; all given filters must match.
struct PerceptQuery {
  std::optional<std::string> thread_id;
  std::optional<std::string> source;
  std::optional<std::string> type;
  std::optional<std::string> status;  // new | assigned | processed | dropped
  std::optional<TimeMs> min_age;      // age = now - ts >= min_age
  std::optional<TimeMs> max_age;      // age <= max_age
  size_t limit = 100;                 // 0 = no limit
};

// An action's statuses: pending_approval -> pending (approved) or rejected;
// pending -> inflight -> complete, or failed -> inflight again, or dead.
inline constexpr std::array<std::string_view, 7> kActionStatuses = {
    "pending_approval", "pending", "inflight", "failed", "complete", "dead", "rejected"};
// The finished ones: what prune and consolidation take out of the pool.
inline constexpr std::array<std::string_view, 3> kFinishedActionStatuses = {"complete", "dead",
                                                                            "rejected"};

// Changes to RecordCounts.
struct RecordDeltas {
  std::array<int64_t, std::size(kAllPools)> pools{};
  std::array<int64_t, kActionStatuses.size()> actions{};
  void Add(const RecordDeltas& d) {
    for (size_t i = 0; i < pools.size(); ++i) pools[i] += d.pools[i];
    for (size_t i = 0; i < actions.size(); ++i) actions[i] += d.actions[i];
  }
};
// How many records each pool holds (kAllPools order) and how many actions
// each status (kActionStatuses order).
struct RecordCounts {
  std::array<uint64_t, std::size(kAllPools)> pools{};
  std::array<uint64_t, kActionStatuses.size()> actions{};
  void Add(const RecordDeltas& d) {
    for (size_t i = 0; i < pools.size(); ++i) pools[i] += static_cast<uint64_t>(d.pools[i]);
    for (size_t i = 0; i < actions.size(); ++i) actions[i] += static_cast<uint64_t>(d.actions[i]);
  }
  bool operator==(const RecordCounts&) const = default;
};

// The RocksDB operations that carry one set of changes. Built by Prepare on
// the owner thread, written by Commit on the log's writer thread.
//
// Every op's key and value are kept one after another in one buffer, not
// as strings of their own: a replay's bulk write makes about two million
// index ops, and a string each was an allocation, a free and a cache miss
// apart from its op.
struct PreparedWrite {
  struct Op {
    size_t at = 0;  // where its key starts in `bytes`; its value follows the key
    size_t key_size = 0;
    size_t value_size = 0;  // the record, serialised (0 for an erase)
    uint8_t cf = 0;         // column family (internal numbering)
    bool erase = false;
  };
  std::vector<Op> ops;
  std::string bytes;
  std::string_view key(const Op& op) const { return {bytes.data() + op.at, op.key_size}; }
  std::string_view value(const Op& op) const {
    return {bytes.data() + op.at + op.key_size, op.value_size};
  }
  // Adds an op on `key`, its value `value` (a put) or none (an erase).
  // Neither may point into `bytes` (appending may move it).
  void Add(uint8_t cf, bool erase, std::string_view key, std::string_view value = {}) {
    AddPut(cf, key, [value](std::string* out) { out->append(value); });
    ops.back().erase = erase;
  }
  // A put whose value `append(&bytes)` appends, written in place.
  template <typename AppendValue>
  void AddPut(uint8_t cf, std::string_view key, AppendValue append) {
    Op op;
    op.at = bytes.size();
    op.key_size = key.size();
    op.cf = cf;
    bytes.append(key);
    append(&bytes);
    op.value_size = bytes.size() - op.at - key.size();
    ops.push_back(op);
  }
  // For the in-memory thread table: threads changed (nullopt = deleted) and
  // changes to threads' unprocessed counts.
  std::vector<std::pair<std::string, std::optional<ThreadSummary>>> threads;
  std::vector<std::pair<std::string, int>> unprocessed;
  // For the in-memory table of new percepts: percepts that were or became
  // new, as they are now (nullopt = no longer new, or deleted).
  std::vector<std::pair<std::string, std::optional<FreshPercept>>> fresh;
  // For the record counts (RecordCounts): what the changes add to or take
  // from each pool (kAllPools order) and each action status.
  RecordDeltas deltas;
};

class Projection final : public RecordReader {
 public:
  static Result<std::unique_ptr<Projection>> Open(const ProjectionOptions& options);
  ~Projection() override;

  // Last event applied (0 for a new DB).
  uint64_t applied_seq() const { return applied_seq_.load(std::memory_order_acquire); }

  // Not empty when the DB was written by a limbic with another layout of
  // records and indexes: nothing may be read from or applied to it; it is
  // to be removed and rebuilt from the log (Engine does). Read-only opens of
  // such a DB fail instead.
  const std::string& outdated() const { return outdated_; }

  // The writes that turn `before` + `changes` into the new records: each
  // changed record serialised (or deleted) and its index entries replaced.
  // `changes` must have been reduced over `before` with remember_base_reads
  // (records it never read are fetched from `before`). Appends to *out.
  Status Prepare(const Overlay& changes, const RecordReader& before, PreparedWrite* out) const;

  // Writes `writes` in order, then applied_seq = `last_seq`, in one
  // WriteBatch. The writes must carry the events after applied_seq up to
  // last_seq, prepared in seq order.
  Status Commit(std::span<const PreparedWrite* const> writes, uint64_t last_seq);

  // After a failed write (RocksDB then refuses every write until told to
  // go on): asks RocksDB to recover (DB::Resume, which flushes the
  // memtables), so writes can go on. OK when no write has failed. Called
  // by the thread that commits.
  Status Resume();

  // Reduces `events` (seqs must continue applied_seq contiguously) onto the
  // current records and commits the result. On error nothing is written, the
  // error names the event's seq and type, and *failed_at (if given) is the
  // index of that event. In a bulk load, records are kept in memory across
  // calls and written every bulk_flush_records changed records and by Flush;
  // an error of such a write is returned by a later Apply or by Flush, and
  // after an event fails to reduce, Apply and Flush return that error.
  Status Apply(std::span<const Event> events, size_t* failed_at = nullptr);

  // RecordReader: the applied record, or nullopt.
  Result<std::optional<json>> Get(Pool pool, std::string_view id) const override;
  // The record flat, or a percept typed, from its stored bytes (no JSON tree).
  Result<std::optional<FlatRecord>> GetFlat(Pool pool, std::string_view id) const override;
  Result<std::optional<PerceptRecord>> GetPercept(std::string_view id) const override;
  // Whether the record exists, without parsing it.
  Result<bool> Contains(Pool pool, std::string_view id) const override;
  // The arousal record (DefaultArousal() before any arousal event).
  Result<json> GetArousal() const;

  // Newest first (by ts; within one millisecond by id), at most q.limit.
  Result<std::vector<json>> QueryPercepts(const PerceptQuery& q, TimeMs now) const;
  // Threads, optionally only those with `status`, ordered by id.
  Result<std::vector<json>> ListThreads(std::optional<std::string> status, size_t limit = 0) const;
  // Percepts assigned to `thread_id` and not yet processed or dropped.
  Result<size_t> CountUnprocessed(std::string_view thread_id) const;
  // Threads with `status` (or all) and what ranking them needs, by id.
  // Served from a table the projection keeps in memory, in step with its
  // commits (built at open from the thread index and the P|a| index): no
  // RocksDB reads. Any thread may call it.
  Result<std::vector<ThreadSummary>> ThreadSummaries(std::optional<std::string> status) const;
  // The `limit` threads with `status` (or all) of highest effective
  // salience at `now` (recency.h; ties: lower id first), 0 = all. From the
  // same table, without computing every thread's effective salience
  // (thread_table.h says why the answer is exact).
  Result<std::vector<ThreadSummary>> TopThreads(std::optional<std::string> status, TimeMs now,
                                                const RecencyParams& p, size_t limit) const;
  // The `limit` (> 0) new percepts of highest effective intensity at `now`
  // that is at least `threshold`, strongest first (ties: newer first, then
  // the later arrival), with p.percept_half_life > 0: what attention lists
  // as unassigned. From a table of the new percepts kept in memory
  // (fresh_table.h says why the answer is exact), built on the first call
  // from the records (one read of each new percept) and then kept in step
  // with the commits. A percept changed between the ranking and the read
  // of its record is left out. Any thread may call it.
  Result<std::vector<json>> TopNewPercepts(TimeMs now, const RecencyParams& p, double threshold,
                                           size_t limit) const;
  // Builds the in-memory tables reads use beside RocksDB, when they are
  // not built yet: the new percepts (TopNewPercepts and ExpiredPercepts
  // build it on first use otherwise, and a caller that comes while it is
  // built waits) and the record counts (Counts). Each takes one pass over
  // what it covers, read from a snapshot while commits go on. The runtime
  // calls it on a worker at start, so that no request does the work.
  Status LoadTables() const;
  // How many records each pool holds and how many actions each status,
  // kept in step with the commits once LoadTables has counted them
  // (nullopt before): what /metrics reports, read without touching
  // RocksDB. Any thread may call it.
  std::optional<RecordCounts> Counts() const;
  // The ids of up to `limit` new percepts that have expired at `now` under
  // `rule`, the earliest due first (FreshTable::Expired: the walk costs
  // the percepts it returns, not the pool's size). From the same table as
  // TopNewPercepts. Any thread may call it.
  Result<std::vector<std::string>> ExpiredPercepts(TimeMs now, const ExpiryRule& rule,
                                                   size_t limit) const;
  // Calls fn with each percept of `status` (a percept status) oldest first
  // (by ts, then the earlier arrival) whose ts is at most `until`, after
  // the one *cursor names ("" = from the oldest), until fn returns false or
  // `limit` percepts were passed (0 = no limit); *cursor is left naming
  // the last one passed, so a later call goes on from there. Reads the
  // status index (P|u|), never the whole pool. Any thread may call it.
  Status WalkPerceptsOldestFirst(std::string_view status, TimeMs until, std::string* cursor,
                                 size_t limit, const std::function<bool(json&&)>& fn) const;
  // The same for actions of `status` (kActionStatuses), oldest ts first.
  Status WalkActionsOldestFirst(std::string_view status, TimeMs until, std::string* cursor,
                                size_t limit, const std::function<bool(json&&)>& fn) const;
  // The mind's sessions newest first (woken_at, then seq) whose woken_at is
  // at least `since`, at most `limit` (0 = no limit); from the N|w| index.
  Result<std::vector<json>> ListSessions(TimeMs since, size_t limit) const;
  // The sessions still awake (a crash leaves one so), from the N|a| index.
  Result<std::vector<json>> AwakeSessions() const;
  // Actions, optionally only those with `status` (kActionStatuses), oldest first.
  Result<std::vector<json>> ListActions(std::optional<std::string> status, size_t limit = 0) const;
  // Memory lookups over the index (grammar in pool_layout.h); ids in key
  // order. Current facts of (namespace, subject, relation):
  Result<std::vector<std::string>> CurrentFacts(std::string_view ns, std::string_view subject,
                                                std::string_view relation) const;
  // Facts, current or superseded, whose `field` ("subject" or "object") is `value`.
  Result<std::vector<std::string>> FactsWith(std::string_view field, std::string_view value) const;
  // Memories created before `t`, oldest first.
  Result<std::vector<std::string>> MemoriesCreatedBefore(TimeMs t) const;
  // The association (a, relation, b), if any; of two (a log may hold a
  // triple twice), the one whose id is first in byte order.
  Result<std::optional<std::string>> FindAssociation(std::string_view a, std::string_view relation,
                                                     std::string_view b) const;
  // Associations with `entity` at either end.
  Result<std::vector<std::string>> AssociationsOf(std::string_view entity) const;

  // Every record of `pool` in key order; stop early by returning false.
  Status ForEach(Pool pool, const std::function<bool(std::string_view id, const json&)>& fn) const;
  // Number of records in `pool`.
  Result<size_t> Count(Pool pool) const;

  // SHA-256 (hex) over a canonical serialisation of every pool in key
  // order, and applied_seq, all read from one snapshot:
  //   "applied_seq " N "\n" then for each pool in kAllPools order:
  //   "pool " NAME "\n" then per record: ID "\t" compact-sorted-JSON "\n"
  Result<std::string> Digest() const;

  // Checks that the index CF holds exactly the entries (keys and values) the
  // records imply, and that the thread table matches the records.
  // Returns the first difference as Corruption.
  Status CheckIndexes() const;
  // Reads every block of every table file and checks its checksum (all
  // column families, the indexes too): Corruption naming the file when one
  // is damaged. For a copy about to be trusted whole (a checkpoint restored
  // at start or into a fork); ordinary reads check only the blocks they read.
  Status VerifyChecksums() const;

  // Writes what a bulk load holds in memory, then flushes memtables to SST
  // files (on clean shutdown; at the end of a bulk load).
  Status Flush();
  // A consistent copy of the DB as of some committed group, made by
  // RocksDB's Checkpoint into `dir` (which must not exist): table files
  // hard-linked where the file system allows, the rest copied. Any thread,
  // while commits go on; not on a bulk load. The copy's applied_seq says
  // which group it holds (state/checkpoint.h).
  Status CreateCheckpoint(const std::string& dir) const;

 private:
  Projection();  // with the destructor, in pools_bulk.cc: they own the bulk load's parts
  struct Handles;
  std::unique_ptr<rocksdb::DB> db_;
  std::unique_ptr<Handles> cf_;
  Status LoadThreadTable();
  // Prepare for the changes at positions [first, last) of changes.changes().
  Status PrepareRange(const Overlay& changes, size_t first, size_t last, const RecordReader& before,
                      PreparedWrite* out) const;
  // The in-memory tables follow committed writes, through `last_seq`.
  void UpdateThreadTable(std::span<const PreparedWrite* const> writes, uint64_t last_seq);
  Status LoadCounts() const;
  class Flushing;
  // Bulk load: hands bulk_ to a thread that writes it (after the previous
  // one is written) and starts a new bulk_ over it.
  Status StartBulkFlush();
  // A bulk write's table files, not yet ingested.
  struct BulkFiles;
  // Prepares a bulk load's changes over `before` and writes them, with
  // applied_seq = last_seq, as one table file per column family: the
  // changes' halves prepared, and the index's file written, on a helper
  // thread beside the caller's. Any thread; table files are named apart
  // by bulk_files_.
  Status MakeBulkFiles(const Overlay& changes, const RecordReader& before, uint64_t last_seq,
                       BulkFiles* out);
  // Hands the files to RocksDB in one step (atomically), then moves the
  // thread table and applied_seq on. Writes are ingested in seq order.
  Status IngestBulkFiles(const BulkFiles& files);
  // MakeBulkFiles over what the writes before left, then IngestBulkFiles;
  // the records written are copied to *written (unless null).
  Status WriteBulk(const Overlay& changes, uint64_t last_seq, ResidentRecords::Batch* written);
  // Bulk load (pools_bulk.cc): set up by Open; Apply's and Flush's part.
  void StartBulkLoad(const ProjectionOptions& options);
  Status ApplyBulk(std::span<const Event> events, size_t* failed_at);
  // Writes what the load holds (the last write made while the one before
  // it runs), waits for every write, and lets go of the load's memory.
  Status FinishBulkLoad();

  // Bulk load: records changed since the last flush, and the last seq in
  // it. bulk_ reads through flushing_ (records being written, read-only
  // while the write runs) to the DB.
  size_t bulk_flush_records_ = 0;  // ProjectionOptions::bulk_flush_records, at least 1
  size_t bulk_resident_bytes_ = 0;
  // What the bulk writes wrote (null with a budget of 0); changed only by
  // the owner thread between bulk writes (StartBulkFlush), freed by Flush.
  std::unique_ptr<ResidentRecords> resident_;
  // A bulk load's reads below its overlays: the record as the bulk writes
  // left it, from resident_, else RocksDB. Only the load reads this way:
  // its overlays read the write under way first, so they never ask here
  // for a record that write changes. Get reads RocksDB alone.
  Result<std::optional<json>> GetWritten(Pool pool, std::string_view id) const;
  Result<std::optional<FlatRecord>> GetWrittenFlat(Pool pool, std::string_view id) const;
  Result<std::optional<PerceptRecord>> GetWrittenPercept(std::string_view id) const;
  Result<bool> ContainsWritten(Pool pool, std::string_view id) const;
  // fn(the record's stored bytes), or fn(nullopt) when there is none; with
  // `written`, the resident records are asked first (GetWritten). Errors
  // of the read are returned as they are.
  template <typename Fn>
  auto WithStored(Pool pool, std::string_view id, bool written, Fn fn) const
      -> decltype(fn(std::optional<std::string_view>()));
  class BulkBase;  // a RecordReader over GetWritten
  std::unique_ptr<BulkBase> bulk_base_;
  std::atomic<uint64_t> bulk_files_{0};  // bulk writes made, for their files' names
  std::string path_;
  std::unique_ptr<Overlay> bulk_;
  uint64_t bulk_seq_ = 0;
  Status bulk_error_;  // an event bulk_ failed to reduce: the load is over
  std::thread freeing_;  // frees what Flush let go of
  std::unique_ptr<Flushing> flushing_;
  std::atomic<uint64_t> applied_seq_{0};
  std::string outdated_;
  bool read_only_ = false;
  // A write failed and no Resume has succeeded since. RocksDB cannot close
  // such a DB cleanly (its WAL writer asserts on a file that saw an error),
  // so the destructor tries Resume once more and else leaves it open.
  std::atomic<bool> write_failed_{false};
  // The thread table: written by Commit (the writer thread), read anywhere;
  // TopThreads changes its ranking order, hence mutable.
  mutable std::mutex threads_mu_;
  mutable ThreadTable threads_;
  bool has_thread_table_ = false;  // loaded at open and kept (ProjectionOptions::thread_table)
  // The new percepts, under threads_mu_ too; built by the first
  // TopNewPercepts or ExpiredPercepts (EnsureFresh), followed by Commit
  // after that. While it is built (without the lock), commits leave their
  // changes to it in fresh_during_; other callers wait on tables_cv_.
  mutable FreshTable fresh_;
  mutable bool fresh_building_ = false;
  mutable std::vector<std::pair<std::string, std::optional<FreshPercept>>> fresh_during_;
  mutable std::condition_variable tables_cv_;
  Status EnsureFresh() const;
  // The record counts, under threads_mu_ too, once LoadCounts counted them
  // from a snapshot at `seq`; while it counts, commits leave their deltas,
  // with their last seq, in counts_during_, and those after the snapshot
  // are added when it is done. counts_seq_: the last commit counts_ hold;
  // a commit written before the snapshot but reaching UpdateThreadTable
  // only after the load is done is in them already.
  mutable std::optional<RecordCounts> counts_;
  mutable uint64_t counts_seq_ = 0;
  mutable bool counts_loading_ = false;
  mutable std::vector<std::pair<uint64_t, RecordDeltas>> counts_during_;
  bool bulk_load_ = false;
};

}  // namespace limbic::state
