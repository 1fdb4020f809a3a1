// Projection's write path: opening RocksDB, turning reduced changes into
// WriteBatch operations, committing them. The key layout is in
// pool_layout.h, the reads in pools_read.cc, replay's bulk load in
// pools_bulk.cc.
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "state/pool_layout.h"
#include "state/projection.h"
#include "state/rocks.h"

namespace limbic::state {
namespace {

// Table files of a bulk load that died before RocksDB took them in (RocksDB
// leaves files it does not know alone).
Status RemoveBulkLeftovers(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(kBulkFilePrefix) && name.ends_with(".sst"))
      std::filesystem::remove(entry.path(), ec);
    if (ec) return Status::IOError("removing " + entry.path().string() + ": " + ec.message());
  }
  if (ec) return Status::IOError("listing " + dir + ": " + ec.message());
  return Status::OK();
}

// RocksDB recovers from some write errors (a full disk) on a thread of its
// own, retrying every few seconds, and refuses a manual DB::Resume while it
// does. The Engine resumes it itself, before the next write (see
// Projection::Resume): one way to recover, at a known moment.
class NoAutoRecovery final : public rocksdb::EventListener {
 public:
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status,
                            bool* auto_recovery) override {
    *auto_recovery = false;
  }
};

}  // namespace

Result<std::unique_ptr<Projection>> Projection::Open(const ProjectionOptions& options) {
  rocksdb::Options db_options;
  db_options.create_if_missing = options.create_if_missing;
  db_options.create_missing_column_families = true;
  // applied_seq and the records flush together (a bulk load ingests them
  // together instead: see WriteBulk).
  db_options.atomic_flush = true;
  db_options.max_background_jobs = 2;
  db_options.keep_log_file_num = 4;
  db_options.info_log = TolerantInfoLog::Open(options.path, options.read_only);
  if (options.rocks_env) db_options.env = options.rocks_env;
  db_options.listeners.push_back(std::make_shared<NoAutoRecovery>());
  db_options.max_bgerror_resume_count = 0;
  // A command reads a few table files: the 16 threads RocksDB would start
  // to open them cost more than they save.
  if (options.read_only || options.short_lived) db_options.max_file_opening_threads = 1;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  // A bulk load over a checkpoint (time travel, a fork) reads records
  // scattered over the whole DB, each block many times: a cache that
  // holds what it reads (the default 8 MiB one evicted and decompressed
  // them again and again). Short-lived: freed with the Projection.
  if (options.bulk_load) table.block_cache = rocksdb::NewLRUCache(size_t{256} << 20);
  rocksdb::ColumnFamilyOptions cf_options;
  cf_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  // New ids are looked up before they are created: a memtable bloom filter
  // answers "absent" without walking the skiplist.
  cf_options.memtable_whole_key_filtering = true;
  cf_options.memtable_prefix_bloom_size_ratio = 0.05;
  if (options.read_only || options.short_lived) {
    // Nothing, or a few records, inserted: the filters would mostly be
    // allocated and zeroed (0.8 MB per column family, most of a command's
    // start).
    cf_options.memtable_whole_key_filtering = false;
    cf_options.memtable_prefix_bloom_size_ratio = 0;
  }
  // Smaller memtables keep skiplist inserts shallow (they dominate apply).
  cf_options.write_buffer_size = 16 << 20;
  cf_options.max_write_buffer_number = 4;
  if (options.bulk_load) {
    // Each bulk write lands in level 0, overlapping the ones before (it
    // rewrites their records); compacting every 4 of them, as live state
    // does, rewrote the same records again and again while the load ran,
    // on the core the load needs (a tenth of a long replay's CPU). A load
    // compacts every 32 instead, and the DB it leaves is compacted by
    // the next open with the usual options.
    cf_options.level0_file_num_compaction_trigger = 32;
    cf_options.level0_slowdown_writes_trigger = 64;
    cf_options.level0_stop_writes_trigger = 96;
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const char* name : kCfNames) cfs.emplace_back(name, cf_options);
  cfs.back().options.memtable_insert_with_hint_prefix_extractor = std::make_shared<IndexPrefix>();
  // The index is read by iterators (and one rare Get, FindAssociation):
  // a memtable bloom filter there costs a cache miss per insert, for no read.
  cfs.back().options.memtable_prefix_bloom_size_ratio = 0;
  cfs.back().options.memtable_whole_key_filtering = false;

  std::unique_ptr<Projection> p(new Projection());
  p->cf_ = std::make_unique<Handles>();
  p->read_only_ = options.read_only;
  if (options.bulk_load) p->StartBulkLoad(options);
  p->path_ = options.path;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s =
      options.read_only
          ? rocksdb::DB::OpenForReadOnly(db_options, options.path, cfs, &p->cf_->all, &db)
          : rocksdb::DB::Open(db_options, options.path, cfs, &p->cf_->all, &db);
  if (!s.ok()) return FromRocks(s, "opening " + options.path);
  p->db_.reset(db);
  if (!options.read_only) LIMBIC_RETURN_IF_ERROR(RemoveBulkLeftovers(options.path));
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
  if (options.thread_table && !options.bulk_load) {
    LIMBIC_RETURN_IF_ERROR(p->LoadThreadTable());
    p->has_thread_table_ = true;
  }
  return p;
}

Status Projection::Prepare(const Overlay& changes, const RecordReader& before,
                           PreparedWrite* out) const {
  return PrepareRange(changes, 0, changes.changes().size(), before, out);
}

Status Projection::PrepareRange(const Overlay& changes, size_t first, size_t last,
                                const RecordReader& before, PreparedWrite* out) const {
  // A change makes its record's op and a percept's up to seven index ops
  // (five on average in a replay), about 600 bytes in all: growing the
  // buffers instead copied them into fresh blocks twice their size.
  out->ops.reserve(out->ops.size() + (last - first) * 6);
  out->bytes.reserve(out->bytes.size() + (last - first) * 640);
  IndexEntryList was, now;  // reused: no allocation per record
  const auto from = changes.changes().begin();
  for (auto it = from + static_cast<std::ptrdiff_t>(first);
       it != from + static_cast<std::ptrdiff_t>(last); ++it) {
    const auto& [key, change] = *it;
    const auto& [pool, id] = key;
    const uint8_t record_cf = RecordCf(pool);
    {
      // The reducer read every record it changed; reuse what it found.
      const std::optional<Record>* old = changes.BaseRead(key);
      std::optional<Record> fetched;
      if (!old) {
        auto r = before.GetRecord(pool, id);
        if (!r.ok()) return r.status();
        fetched = std::move(*r);
        old = &fetched;
      }
      was.clear();
      now.clear();
      if (old->has_value()) AppendIndexEntries(pool, id, **old, &was);
      if (change.record) AppendIndexEntries(pool, id, *change.record, &now);
      for (size_t i = 0; i < was.size(); ++i)
        if (!now.HasKey(was.key(i))) out->Add(kIndexCf, true, was.key(i));
      for (size_t i = 0; i < now.size(); ++i)
        if (!was.Has(now.key(i), now.value(i))) out->Add(kIndexCf, false, now.key(i), now.value(i));
      // The record counts and the in-memory tables follow the same changes.
      const int gained = (change.record ? 1 : 0) - (old->has_value() ? 1 : 0);
      out->deltas.pools[static_cast<size_t>(pool)] += gained;
      if (pool == Pool::kActions) {
        if (auto was = old->has_value() ? ActionStatusIndexOf(**old) : std::nullopt)
          out->deltas.actions[*was] -= 1;
        if (auto is = change.record ? ActionStatusIndexOf(*change.record) : std::nullopt)
          out->deltas.actions[*is] += 1;
      }
      if (pool == Pool::kThreads) {
        out->threads.emplace_back(
            id, change.record ? std::optional<ThreadSummary>(SummaryOf(id, *change.record)) : std::nullopt);
      } else if (pool == Pool::kPercepts) {
        std::optional<FreshPercept> was_new = old->has_value() ? FreshOf(**old) : std::nullopt;
        std::optional<FreshPercept> is_new = change.record ? FreshOf(*change.record) : std::nullopt;
        if (was_new || is_new) out->fresh.emplace_back(id, is_new);
        std::string from = old->has_value() ? UnprocessedFor(**old) : std::string();
        std::string to = change.record ? UnprocessedFor(*change.record) : std::string();
        if (from != to) {
          if (!from.empty()) out->unprocessed.emplace_back(from, -1);
          if (!to.empty()) out->unprocessed.emplace_back(to, +1);
        }
      }
    }
    if (change.record)
      out->AddPut(record_cf, id,
                  [&record = *change.record](std::string* bytes) { AppendStored(record, bytes); });
    else
      out->Add(record_cf, true, id);
  }
  return Status::OK();
}

Status Projection::Commit(std::span<const PreparedWrite* const> writes, uint64_t last_seq) {
  if (read_only_) return Status::FailedPrecondition("the projections are open read-only");
  // Sized up front: recovery's batches are megabytes, and growing one by
  // doubling copies it over and over.
  size_t bytes = 64;
  for (const PreparedWrite* w : writes) bytes += w->bytes.size() + 16 * w->ops.size();
  rocksdb::WriteBatch batch(bytes);
  for (const PreparedWrite* w : writes) {
    for (const PreparedWrite::Op& o : w->ops) {
      if (o.erase)
        batch.Delete(cf_->all[o.cf], w->key(o));
      else
        batch.Put(cf_->all[o.cf], w->key(o), w->value(o));
    }
  }
  batch.Put(cf_->meta(), std::string(kAppliedSeqKey), std::to_string(last_seq));
  rocksdb::WriteOptions wo;
  wo.sync = false;  // the events log is the durability point
  rocksdb::Status written = db_->Write(wo, &batch);
  if (!written.ok()) {
    write_failed_ = true;
    return FromRocks(written, "writing the projections");
  }
  UpdateThreadTable(writes, last_seq);
  applied_seq_.store(last_seq, std::memory_order_release);
  return Status::OK();
}

void Projection::UpdateThreadTable(std::span<const PreparedWrite* const> writes, uint64_t last_seq) {
  std::lock_guard<std::mutex> lock(threads_mu_);
  // Past the snapshot of counts_ only: a LoadCounts can snapshot and
  // count this commit between its write and here.
  if ((counts_ && last_seq > counts_seq_) || counts_loading_) {
    RecordDeltas sum;
    for (const PreparedWrite* w : writes) sum.Add(w->deltas);
    if (counts_) {
      counts_->Add(sum);
      counts_seq_ = last_seq;
    } else {
      counts_during_.emplace_back(last_seq, sum);
    }
  }
  for (const PreparedWrite* w : writes) {
    if (has_thread_table_) {
      for (const auto& [id, summary] : w->threads) {
        if (summary)
          threads_.Set(*summary);
        else
          threads_.Erase(id);
      }
      for (const auto& [id, delta] : w->unprocessed) threads_.AddUnprocessed(id, delta);
    }
    if (fresh_.built())
      for (const auto& [id, percept] : w->fresh) fresh_.Set(id, percept);
    else if (fresh_building_)
      fresh_during_.insert(fresh_during_.end(), w->fresh.begin(), w->fresh.end());
  }
}

Status Projection::Apply(std::span<const Event> events, size_t* failed_at) {
  if (events.empty()) return Status::OK();
  if (read_only_) return Status::FailedPrecondition("the projections are open read-only");
  if (!bulk_error_.ok()) return bulk_error_;
  uint64_t next = (bulk_ ? bulk_seq_ : applied_seq()) + 1;
  for (const Event& e : events)
    if (e.seq != next++)
      return Status::Internal("apply: seq " + std::to_string(e.seq) + " where " +
                              std::to_string(next - 1) + " was due");
  if (bulk_load_) return ApplyBulk(events, failed_at);
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

Status Projection::Resume() {
  if (read_only_ || !write_failed_) return Status::OK();
  LIMBIC_RETURN_IF_ERROR(FromRocks(db_->Resume(), "resuming the projections after a failed write"));
  write_failed_ = false;
  return Status::OK();
}

Status Projection::Flush() {
  if (read_only_) return Status::OK();
  if (bulk_load_) LIMBIC_RETURN_IF_ERROR(FinishBulkLoad());
  rocksdb::FlushOptions fo;
  rocksdb::Status s = db_->Flush(fo, cf_->all);
  if (!s.ok()) write_failed_ = true;  // see the destructor
  return FromRocks(s, "flushing the projections");
}

Status Projection::CreateCheckpoint(const std::string& dir) const {
  if (bulk_load_) return Status::FailedPrecondition("a bulk load is not checkpointed");
  rocksdb::Checkpoint* raw = nullptr;
  LIMBIC_RETURN_IF_ERROR(FromRocks(rocksdb::Checkpoint::Create(db_.get(), &raw),
                                   "checkpointing " + path_));
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  // log_size_for_flush 0: the memtables are flushed first, so the
  // checkpoint is table files (hard links) and a short WAL; RocksDB copies
  // the WAL as it stands, and a WriteBatch (a group, with its applied_seq)
  // is in it whole or not at all.
  return FromRocks(checkpoint->CreateCheckpoint(dir, /*log_size_for_flush=*/0),
                   "checkpointing " + path_ + " into " + dir);
}

}  // namespace limbic::state
