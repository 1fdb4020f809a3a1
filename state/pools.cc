// Projection's write path: opening RocksDB, turning reduced changes into
// WriteBatch operations, committing them, bulk loads. The key layout is in
// pool_layout.h; the reads are in pools_read.cc.
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <thread>

#include "state/json.h"
#include "state/pool_layout.h"
#include "state/projection.h"
#include "state/rocks.h"

namespace limbic::state {
namespace {

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

}  // namespace

Result<std::unique_ptr<Projection>> Projection::Open(const ProjectionOptions& options) {
  rocksdb::Options db_options;
  db_options.create_if_missing = options.create_if_missing;
  db_options.create_missing_column_families = true;
  db_options.atomic_flush = true;  // applied_seq and the records flush together
  db_options.max_background_jobs = 2;
  db_options.keep_log_file_num = 4;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  rocksdb::ColumnFamilyOptions cf_options;
  cf_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  // New ids are looked up before they are created: a memtable bloom filter
  // answers "absent" without walking the skiplist.
  cf_options.memtable_whole_key_filtering = true;
  cf_options.memtable_prefix_bloom_size_ratio = 0.05;
  // Smaller memtables keep skiplist inserts shallow (they dominate apply).
  cf_options.write_buffer_size = 16 << 20;
  cf_options.max_write_buffer_number = 4;
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const char* name : kCfNames) cfs.emplace_back(name, cf_options);
  cfs.back().options.memtable_insert_with_hint_prefix_extractor = std::make_shared<IndexPrefix>();
  // The index is read by iterators (and one rare Get, FindAssociation):
  // a memtable bloom filter there costs a cache miss per insert, for no read.
  cfs.back().options.memtable_prefix_bloom_size_ratio = 0;
  cfs.back().options.memtable_whole_key_filtering = false;
  if (options.bulk_load) {
    // One writer, nothing to recover: bigger memtables, fewer flushes.
    for (auto& cf : cfs) cf.options.write_buffer_size = 64 << 20;
  }

  std::unique_ptr<Projection> p(new Projection());
  p->cf_ = std::make_unique<Handles>();
  p->read_only_ = options.read_only;
  p->bulk_load_ = options.bulk_load;
  p->bulk_flush_records_ = std::max<size_t>(1, options.bulk_flush_records);
  rocksdb::DB* db = nullptr;
  rocksdb::Status s =
      options.read_only
          ? rocksdb::DB::OpenForReadOnly(db_options, options.path, cfs, &p->cf_->all, &db)
          : rocksdb::DB::Open(db_options, options.path, cfs, &p->cf_->all, &db);
  if (!s.ok()) return FromRocks(s, "opening " + options.path);
  p->db_.reset(db);
  std::string value;
  s = db->Get(rocksdb::ReadOptions(), p->cf_->meta(), std::string(kAppliedSeqKey), &value);
  if (s.ok()) p->applied_seq_ = std::stoull(value);
  else if (!s.IsNotFound()) return FromRocks(s, "reading applied_seq in " + options.path);
  std::string schema;
  s = db->Get(rocksdb::ReadOptions(), p->cf_->meta(), std::string(kSchemaKey), &schema);
  if (!s.ok() && !s.IsNotFound()) return FromRocks(s, "reading the schema in " + options.path);
  if (s.IsNotFound() && p->applied_seq_ == 0 && !options.read_only) {
    schema = std::string(kSchema);  // a new DB
    LIMBIC_RETURN_IF_ERROR(FromRocks(
        db->Put(rocksdb::WriteOptions(), p->cf_->meta(), std::string(kSchemaKey), schema),
        "writing the schema in " + options.path));
  }
  if (schema != kSchema) {
    p->outdated_ = "projections in " + options.path + " have layout \"" + schema +
                   "\", this limbic uses \"" + std::string(kSchema) + "\"";
    if (options.read_only)
      return Status::FailedPrecondition(p->outdated_ +
                                        "; a writing command (or limbic run) rebuilds them from the log");
    return p;  // the Engine rebuilds it
  }
  LIMBIC_RETURN_IF_ERROR(p->LoadThreadTable());
  return p;
}

// A bulk flush under way: writes `changes` on its own thread. Until the
// next one starts, it is the base of the new bulk overlay, which reads its
// changes (never changed while the write runs) and else the DB, where
// nothing else is being written.
class Projection::Flushing final : public RecordReader {
 public:
  Flushing(Projection* p, std::unique_ptr<Overlay> changes, uint64_t seq,
           std::unique_ptr<Flushing> previous)
      : p_(p), changes_(std::move(changes)) {
    thread_ = std::thread([this, seq, previous = std::move(previous)]() mutable {
      previous.reset();  // freeing the last flush's records is work too
      status_ = p_->WriteBulk(*changes_, seq);
    });
  }
  ~Flushing() override { (void)Wait(); }

  // Waits for the write; its status.
  Status Wait() {
    if (thread_.joinable()) thread_.join();
    return status_;
  }

  Result<std::optional<json>> Get(Pool pool, std::string_view id) const override {
    const auto& changes = changes_->changes();
    auto it = changes.find(Overlay::Key(pool, std::string(id)));
    if (it != changes.end()) return it->second.record;
    return p_->Get(pool, id);
  }

 private:
  Projection* p_;
  std::unique_ptr<Overlay> changes_;
  Status status_;
  std::thread thread_;
};

Projection::~Projection() {
  bulk_.reset();
  flushing_.reset();  // waits for its write
  if (db_ && cf_)
    for (auto* h : cf_->all) db_->DestroyColumnFamilyHandle(h);
}

Status Projection::Prepare(const Overlay& changes, const RecordReader& before,
                           PreparedWrite* out) const {
  out->ops.reserve(out->ops.size() + changes.changes().size() * 4);
  auto op = [out](uint8_t cf, bool erase, std::string key, std::string value = {}) {
    out->ops.push_back(PreparedWrite::Op{cf, erase, std::move(key), std::move(value)});
  };
  for (const auto& [key, change] : changes.changes()) {
    const auto& [pool, id] = key;
    const uint8_t record_cf = static_cast<uint8_t>(1 + static_cast<size_t>(pool));
    {
      // The reducer read every record it changed; reuse what it found.
      const std::optional<json>* old = changes.BaseRead(key);
      std::optional<json> fetched;
      if (!old) {
        auto r = before.Get(pool, id);
        if (!r.ok()) return r.status();
        fetched = std::move(*r);
        old = &fetched;
      }
      std::vector<IndexEntry> was, now;
      if (old->has_value()) was = IndexEntries(pool, id, **old);
      if (change.record) now = IndexEntries(pool, id, *change.record);
      auto has_key = [](const std::vector<IndexEntry>& v, const std::string& k) {
        return std::any_of(v.begin(), v.end(), [&](const IndexEntry& e) { return e.first == k; });
      };
      for (IndexEntry& e : was)
        if (!has_key(now, e.first)) op(kIndexCf, true, std::move(e.first));
      for (IndexEntry& e : now)
        if (std::find(was.begin(), was.end(), e) == was.end())
          op(kIndexCf, false, std::move(e.first), std::move(e.second));
      // The thread table follows the same changes.
      if (pool == Pool::kThreads) {
        out->threads.emplace_back(id, change.record ? std::optional<ThreadSummary>(
                                                          SummaryOf(id, *change.record))
                                                    : std::nullopt);
      } else if (pool == Pool::kPercepts) {
        std::string from = old->has_value() ? UnprocessedFor(**old) : std::string();
        std::string to = change.record ? UnprocessedFor(*change.record) : std::string();
        if (from != to) {
          if (!from.empty()) out->unprocessed.emplace_back(from, -1);
          if (!to.empty()) out->unprocessed.emplace_back(to, +1);
        }
      }
    }
    if (change.record) op(record_cf, false, id, Dump(*change.record));
    else op(record_cf, true, id);
  }
  return Status::OK();
}

Status Projection::Commit(std::span<const PreparedWrite* const> writes, uint64_t last_seq) {
  if (read_only_) return Status::FailedPrecondition("the projections are open read-only");
  // Sized up front: a bulk load's batch is tens of MB, and growing it by
  // doubling copied it over and over.
  size_t bytes = 64;
  for (const PreparedWrite* w : writes)
    for (const PreparedWrite::Op& o : w->ops) bytes += o.key.size() + o.value.size() + 16;
  rocksdb::WriteBatch batch(bytes);
  for (const PreparedWrite* w : writes) {
    for (const PreparedWrite::Op& o : w->ops) {
      if (o.erase) batch.Delete(cf_->all[o.cf], o.key);
      else batch.Put(cf_->all[o.cf], o.key, o.value);
    }
  }
  batch.Put(cf_->meta(), std::string(kAppliedSeqKey), std::to_string(last_seq));
  rocksdb::WriteOptions wo;
  wo.sync = false;  // the events log is the durability point
  wo.disableWAL = bulk_load_;
  LIMBIC_RETURN_IF_ERROR(FromRocks(db_->Write(wo, &batch), "writing the projections"));
  {
    std::lock_guard<std::mutex> lock(threads_mu_);
    for (const PreparedWrite* w : writes) {
      for (const auto& [id, summary] : w->threads) {
        if (!summary) {
          thread_table_.erase(id);
          continue;
        }
        ThreadSummary& row = thread_table_[id];
        size_t unprocessed = row.unprocessed;  // kept: percept changes maintain it
        row = *summary;
        row.unprocessed = unprocessed;
      }
      for (const auto& [id, delta] : w->unprocessed) {
        auto it = thread_table_.find(id);
        if (it == thread_table_.end()) continue;
        it->second.unprocessed = static_cast<size_t>(static_cast<int64_t>(it->second.unprocessed) + delta);
      }
    }
  }
  applied_seq_.store(last_seq, std::memory_order_release);
  return Status::OK();
}

Status Projection::Apply(std::span<const Event> events, size_t* failed_at) {
  if (events.empty()) return Status::OK();
  if (read_only_) return Status::FailedPrecondition("the projections are open read-only");
  uint64_t next = (bulk_ ? bulk_seq_ : applied_seq()) + 1;
  for (const Event& e : events)
    if (e.seq != next++)
      return Status::Internal("apply: seq " + std::to_string(e.seq) + " where " +
                              std::to_string(next - 1) + " was due");
  if (bulk_load_) {
    // Records stay in memory across calls: a record touched by many events
    // is read, parsed and written once per flush instead of once per chunk.
    if (!bulk_) {
      bulk_ = std::make_unique<Overlay>(this);
      bulk_->remember_base_reads(true);
    }
    for (size_t i = 0; i < events.size(); ++i) {
      Status s = Reduce(events[i], bulk_.get());
      if (!s.ok()) {
        if (failed_at) *failed_at = i;
        return s;
      }
    }
    bulk_seq_ = events.back().seq;
    return bulk_->changes().size() >= bulk_flush_records_ ? StartBulkFlush() : Status::OK();
  }
  Overlay overlay(this);
  overlay.remember_base_reads(true);
  for (size_t i = 0; i < events.size(); ++i) {
    Status s = Reduce(events[i], &overlay);
    if (!s.ok()) {
      if (failed_at) *failed_at = i;
      return s;
    }
  }
  PreparedWrite write;
  LIMBIC_RETURN_IF_ERROR(Prepare(overlay, *this, &write));
  const PreparedWrite* writes[] = {&write};
  return Commit(writes, events.back().seq);
}

Status Projection::WriteBulk(const Overlay& changes, uint64_t last_seq) {
  PreparedWrite write;
  LIMBIC_RETURN_IF_ERROR(Prepare(changes, *this, &write));
  // Index keys come out in record order, not key order: inserted as they
  // come, each walks the memtable's skiplist from the top (a third of
  // replay's time). In key order each lands next to the one before. The
  // sort is stable, so ops on one key keep their order.
  std::stable_sort(write.ops.begin(), write.ops.end(),
                   [](const PreparedWrite::Op& a, const PreparedWrite::Op& b) {
                     return a.cf != b.cf ? a.cf < b.cf : a.key < b.key;
                   });
  const PreparedWrite* writes[] = {&write};
  return Commit(writes, last_seq);
}

Status Projection::StartBulkFlush() {
  // The previous write first: the records about to be written were reduced
  // over it, and Prepare reads what it wrote.
  if (flushing_) LIMBIC_RETURN_IF_ERROR(flushing_->Wait());  // kept: bulk_ reads through it
  std::unique_ptr<Flushing> previous = std::move(flushing_);
  flushing_ = std::make_unique<Flushing>(this, std::move(bulk_), bulk_seq_, std::move(previous));
  bulk_ = std::make_unique<Overlay>(flushing_.get());
  bulk_->remember_base_reads(true);
  return Status::OK();
}

Status Projection::FinishBulkFlush() { return flushing_ ? flushing_->Wait() : Status::OK(); }

Status Projection::Flush() {
  if (read_only_) return Status::OK();
  LIMBIC_RETURN_IF_ERROR(FinishBulkFlush());
  if (bulk_) LIMBIC_RETURN_IF_ERROR(WriteBulk(*bulk_, bulk_seq_));
  bulk_.reset();
  flushing_.reset();
  rocksdb::FlushOptions fo;
  return FromRocks(db_->Flush(fo, cf_->all), "flushing the projections");
}

}  // namespace limbic::state
