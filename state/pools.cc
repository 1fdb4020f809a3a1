// Projection: the pools in RocksDB.
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
//   A|u|STATUS \0 TS8 ID       actions by status, by enqueue time
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "state/json.h"
#include "state/projection.h"
#include "state/rocks.h"
#include "state/sha256.h"

namespace limbic::state {
namespace {

const char* const kCfNames[] = {"default", "percepts", "threads", "arousal",
                                "actions", "reflexes", "index"};
constexpr std::string_view kAppliedSeqKey = "applied_seq";
constexpr std::string_view kSchemaKey = "schema";
// The layout of records and indexes; a DB of another layout is rebuilt from
// the log (Engine) rather than read wrongly. 2: newest-first percept keys
// (AT), P|n|, P|a|, thread index values, the percept's seq.
constexpr std::string_view kSchema = "2";
std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string Ts8(TimeMs t) {
  uint64_t u = static_cast<uint64_t>(t) ^ (uint64_t{1} << 63);
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(u & 0xff);
    u >>= 8;
  }
  return out;
}

TimeMs FromTs8(std::string_view b) {
  uint64_t u = 0;
  for (size_t i = 0; i < 8; ++i) u = (u << 8) | static_cast<unsigned char>(b[i]);
  return static_cast<TimeMs>(u ^ (uint64_t{1} << 63));
}

// RT8: the complement of TS8, so byte order is newest first and queries
// read forward (a memtable skiplist has no back links: each step back is a
// search from the top).
std::string Rt8(TimeMs t) {
  std::string out = Ts8(t);
  for (char& c : out) c = static_cast<char>(~c);
  return out;
}

// The big-endian complement of a seq: newest first, like RT8.
std::string Rseq8(uint64_t seq) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(~(seq & 0xff));
    seq >>= 8;
  }
  return out;
}

TimeMs FromRt8(std::string_view b) {
  char buf[8];
  for (size_t i = 0; i < 8; ++i) buf[i] = static_cast<char>(~b[i]);
  return FromTs8(std::string_view(buf, 8));
}

TimeMs RecordTime(const json& rec, const char* field = "ts") {
  auto it = rec.find(field);
  if (it == rec.end() || !it->is_string()) return 0;
  auto t = ParseTime(it->get_ref<const std::string&>());
  return t.ok() ? *t : 0;
}

std::string StrOf(const json& rec, const char* key) {
  auto it = rec.find(key);
  return it != rec.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void PutLE64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t GetLE64(std::string_view b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[static_cast<size_t>(i)]);
  return v;
}

// SAL8 LAST8 (see the grammar above).
std::string ThreadIndexValue(const json& rec) {
  double salience = 0;
  auto it = rec.find("salience");
  if (it != rec.end() && it->is_number()) salience = it->get<double>();
  uint64_t bits;
  std::memcpy(&bits, &salience, sizeof bits);
  std::string v;
  PutLE64(&v, bits);
  PutLE64(&v, static_cast<uint64_t>(RecordTime(rec, "last_active")));
  return v;
}

ThreadSummary SummaryOf(const std::string& id, const json& rec) {
  ThreadSummary t;
  t.id = id;
  t.status = StrOf(rec, "status");
  auto it = rec.find("salience");
  if (it != rec.end() && it->is_number()) t.salience = it->get<double>();
  t.last_active = RecordTime(rec, "last_active");
  return t;
}

// The thread an assigned, unprocessed percept counts for ("" if none).
std::string UnprocessedFor(const json& percept) {
  return StrOf(percept, "status") == "assigned" ? StrOf(percept, "thread_id") : std::string();
}

// The index entries (key, value) a record implies.
using IndexEntry = std::pair<std::string, std::string>;
std::vector<IndexEntry> IndexEntries(Pool pool, const std::string& id, const json& rec) {
  std::vector<IndexEntry> out;
  auto key = [&out](std::string k) { out.emplace_back(std::move(k), std::string()); };
  if (pool == Pool::kPercepts) {
    auto seq = rec.find("seq");
    std::string tail = Rt8(RecordTime(rec)) +
                       Rseq8(seq != rec.end() && seq->is_number_unsigned() ? seq->get<uint64_t>() : 0) +
                       id;
    const std::string status = StrOf(rec, "status");
    const std::string source = StrOf(rec, "source");
    key("P|T|" + tail);
    key("P|s|" + source + '\0' + tail);
    key("P|y|" + StrOf(rec, "type") + '\0' + tail);
    key("P|u|" + status + '\0' + tail);
    if (status == "new") key("P|n|" + source + '\0' + tail);
    std::string thread = StrOf(rec, "thread_id");
    if (!thread.empty()) {
      key("P|h|" + thread + '\0' + tail);
      if (status == "assigned") key("P|a|" + thread + '\0' + tail);
    }
  } else if (pool == Pool::kThreads) {
    out.emplace_back("T|u|" + StrOf(rec, "status") + '\0' + id, ThreadIndexValue(rec));
  } else if (pool == Pool::kActions) {
    key("A|u|" + StrOf(rec, "status") + '\0' + Ts8(RecordTime(rec)) + id);
  }
  return out;
}

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

constexpr uint8_t kIndexCf = 6;  // position of "index" in kCfNames

struct Projection::Handles {
  std::vector<rocksdb::ColumnFamilyHandle*> all;
  rocksdb::ColumnFamilyHandle* meta() const { return all[0]; }
  rocksdb::ColumnFamilyHandle* index() const { return all[6]; }
  rocksdb::ColumnFamilyHandle* pool(Pool p) const { return all[1 + static_cast<size_t>(p)]; }
};

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

Projection::~Projection() {
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
  rocksdb::WriteBatch batch;
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
    return bulk_->changes().size() >= bulk_flush_records_ ? FlushBulk() : Status::OK();
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

Status Projection::FlushBulk() {
  if (!bulk_) return Status::OK();
  PreparedWrite write;
  LIMBIC_RETURN_IF_ERROR(Prepare(*bulk_, *this, &write));
  const PreparedWrite* writes[] = {&write};
  LIMBIC_RETURN_IF_ERROR(Commit(writes, bulk_seq_));
  bulk_.reset();
  return Status::OK();
}

Result<std::optional<json>> Projection::Get(Pool pool, std::string_view id) const {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cf_->pool(pool), rocksdb::Slice(id.data(), id.size()), &value);
  if (s.IsNotFound()) return std::optional<json>();
  if (!s.ok()) return FromRocks(s, "reading " + std::string(PoolName(pool)) + "/" + std::string(id));
  std::optional<json> rec = ParseJson(value);
  if (!rec)
    return Status::Corruption("record " + std::string(PoolName(pool)) + "/" + std::string(id) +
                              " is not valid JSON");
  return rec;
}

Result<json> Projection::GetArousal() const {
  auto r = Get(Pool::kArousal, kArousalId);
  if (!r.ok()) return r.status();
  return r->has_value() ? std::move(**r) : DefaultArousal();
}

namespace {

// Filters name a status the pool knows, or the query is refused.
Status CheckStatusFilter(std::string_view what, const std::optional<std::string>& status,
                         std::initializer_list<std::string_view> allowed) {
  if (!status) return Status::OK();
  std::string list;
  for (std::string_view a : allowed) {
    if (*status == a) return Status::OK();
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  return Status::InvalidArgument(std::string(what) + " status \"" + *status +
                                 "\": must be one of " + list);
}

}  // namespace

Result<std::vector<json>> Projection::QueryPercepts(const PerceptQuery& q, TimeMs now) const {
  LIMBIC_RETURN_IF_ERROR(
      CheckStatusFilter("percept", q.status, {"new", "assigned", "processed", "dropped"}));
  std::string prefix = "P|T|";
  if (q.thread_id && q.status == "assigned") prefix = "P|a|" + *q.thread_id + '\0';
  else if (q.thread_id) prefix = "P|h|" + *q.thread_id + '\0';
  else if (q.source && q.status == "new") prefix = "P|n|" + *q.source + '\0';
  else if (q.source) prefix = "P|s|" + *q.source + '\0';
  else if (q.type) prefix = "P|y|" + *q.type + '\0';
  else if (q.status) prefix = "P|u|" + *q.status + '\0';
  std::vector<json> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf_->index()));
  // Newest first; min_age skips straight past everything younger.
  it->Seek(q.min_age ? prefix + Rt8(now - *q.min_age) : prefix);
  for (; it->Valid(); it->Next()) {
    rocksdb::Slice key = it->key();
    if (!key.starts_with(prefix) || key.size() < prefix.size() + 16) break;
    std::string_view rest(key.data() + prefix.size(), key.size() - prefix.size());
    TimeMs ts = FromRt8(rest);
    if (q.max_age && ts < now - *q.max_age) break;
    auto rec = Get(Pool::kPercepts, rest.substr(16));
    if (!rec.ok()) return rec.status();
    if (!rec->has_value()) continue;
    const json& p = **rec;
    if ((q.thread_id && StrOf(p, "thread_id") != *q.thread_id) ||
        (q.source && StrOf(p, "source") != *q.source) || (q.type && StrOf(p, "type") != *q.type) ||
        (q.status && StrOf(p, "status") != *q.status))
      continue;
    out.push_back(std::move(**rec));
    if (q.limit && out.size() >= q.limit) break;
  }
  LIMBIC_RETURN_IF_ERROR(FromRocks(it->status(), "querying percepts"));
  return out;
}

Result<std::vector<json>> Projection::ListThreads(std::optional<std::string> status,
                                                  size_t limit) const {
  LIMBIC_RETURN_IF_ERROR(
      CheckStatusFilter("thread", status, {"active", "paused", "frozen", "complete"}));
  std::vector<json> out;
  if (!status) {
    Status s = ForEach(Pool::kThreads, [&](std::string_view, const json& rec) {
      out.push_back(rec);
      return limit == 0 || out.size() < limit;
    });
    if (!s.ok()) return s;
    return out;
  }
  std::string prefix = "T|u|" + *status + '\0';
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf_->index()));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto rec = Get(Pool::kThreads, it->key().ToStringView().substr(prefix.size()));
    if (!rec.ok()) return rec.status();
    if (rec->has_value()) out.push_back(std::move(**rec));
    if (limit && out.size() >= limit) break;
  }
  LIMBIC_RETURN_IF_ERROR(FromRocks(it->status(), "listing threads"));
  return out;
}

Result<size_t> Projection::CountUnprocessed(std::string_view thread_id) const {
  std::lock_guard<std::mutex> lock(threads_mu_);
  auto it = thread_table_.find(std::string(thread_id));
  return it == thread_table_.end() ? 0 : it->second.unprocessed;
}

Result<std::vector<ThreadSummary>> Projection::ThreadSummaries(
    std::optional<std::string> status) const {
  LIMBIC_RETURN_IF_ERROR(
      CheckStatusFilter("thread", status, {"active", "paused", "frozen", "complete"}));
  std::vector<ThreadSummary> out;
  {
    std::lock_guard<std::mutex> lock(threads_mu_);
    for (const auto& [id, t] : thread_table_)
      if (!status || t.status == *status) out.push_back(t);
  }
  std::sort(out.begin(), out.end(),
            [](const ThreadSummary& a, const ThreadSummary& b) { return a.id < b.id; });
  return out;
}

// The thread table from the thread index (status, salience, last_active)
// and one scan of the P|a| index (unprocessed counts).
Status Projection::LoadThreadTable() {
  std::unordered_map<std::string, ThreadSummary> table;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf_->index()));
  const std::string threads = "T|u|";
  for (it->Seek(threads); it->Valid() && it->key().starts_with(threads); it->Next()) {
    std::string_view key = it->key().ToStringView();
    size_t nul = key.find('\0', 4);
    std::string_view v = it->value().ToStringView();
    if (nul == std::string_view::npos || v.size() != 16)
      return Status::Corruption("thread index entry " + Printable(key) + " is malformed");
    ThreadSummary t;
    t.id = std::string(key.substr(nul + 1));
    t.status = std::string(key.substr(4, nul - 4));
    uint64_t bits = GetLE64(v);
    std::memcpy(&t.salience, &bits, sizeof t.salience);
    t.last_active = static_cast<TimeMs>(GetLE64(v.substr(8)));
    table.emplace(t.id, std::move(t));
  }
  const std::string assigned = "P|a|";
  for (it->Seek(assigned); it->Valid() && it->key().starts_with(assigned); it->Next()) {
    std::string_view key = it->key().ToStringView();
    size_t nul = key.find('\0', 4);
    if (nul == std::string_view::npos) continue;
    auto t = table.find(std::string(key.substr(4, nul - 4)));
    if (t != table.end()) ++t->second.unprocessed;
  }
  LIMBIC_RETURN_IF_ERROR(FromRocks(it->status(), "loading the thread table"));
  std::lock_guard<std::mutex> lock(threads_mu_);
  thread_table_ = std::move(table);
  return Status::OK();
}

Result<std::vector<json>> Projection::ListActions(std::optional<std::string> status,
                                                  size_t limit) const {
  LIMBIC_RETURN_IF_ERROR(CheckStatusFilter(
      "action", status, {"pending", "inflight", "complete", "failed", "dead"}));
  std::vector<json> out;
  if (!status) {
    Status s = ForEach(Pool::kActions, [&](std::string_view, const json& rec) {
      out.push_back(rec);
      return true;
    });
    if (!s.ok()) return s;
    std::stable_sort(out.begin(), out.end(), [](const json& a, const json& b) {
      return RecordTime(a) < RecordTime(b);
    });
    if (limit && out.size() > limit) out.resize(limit);
    return out;
  }
  std::string prefix = "A|u|" + *status + '\0';
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf_->index()));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto rec = Get(Pool::kActions, it->key().ToStringView().substr(prefix.size() + 8));
    if (!rec.ok()) return rec.status();
    if (rec->has_value()) out.push_back(std::move(**rec));
    if (limit && out.size() >= limit) break;
  }
  LIMBIC_RETURN_IF_ERROR(FromRocks(it->status(), "listing actions"));
  return out;
}

Status Projection::ForEach(Pool pool,
                           const std::function<bool(std::string_view, const json&)>& fn) const {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf_->pool(pool)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::optional<json> rec = ParseJson(it->value().ToStringView());
    if (!rec)
      return Status::Corruption("record " + std::string(PoolName(pool)) + "/" +
                                it->key().ToString() + " is not valid JSON");
    if (!fn(it->key().ToStringView(), *rec)) break;
  }
  return FromRocks(it->status(), std::string("reading ") + std::string(PoolName(pool)));
}

Result<size_t> Projection::Count(Pool pool) const {
  size_t n = 0;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf_->pool(pool)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  LIMBIC_RETURN_IF_ERROR(FromRocks(it->status(), "counting"));
  return n;
}

Result<std::string> Projection::Digest() const {
  // One consistent view, though the writer thread may commit meanwhile.
  const rocksdb::Snapshot* snapshot = db_->GetSnapshot();
  struct Release {
    rocksdb::DB* db;
    const rocksdb::Snapshot* s;
    ~Release() { db->ReleaseSnapshot(s); }
  } release{db_.get(), snapshot};
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  std::string seq_text = "0";
  rocksdb::Status gs = db_->Get(ro, cf_->meta(), std::string(kAppliedSeqKey), &seq_text);
  if (!gs.ok() && !gs.IsNotFound()) return FromRocks(gs, "digest");
  if (gs.IsNotFound()) seq_text = "0";
  Sha256 sha;
  // Fed in large pieces: each Update call has a fixed cost.
  std::string buf;
  auto feed = [&](std::string_view s) {
    buf.append(s);
    if (buf.size() >= (1 << 16)) {
      sha.Update(buf);
      buf.clear();
    }
  };
  feed("applied_seq " + seq_text + "\n");
  for (Pool pool : kAllPools) {
    feed("pool " + std::string(PoolName(pool)) + "\n");
    // Stored values are already canonical: compact, keys sorted.
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf_->pool(pool)));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      feed(it->key().ToStringView());
      feed("\t");
      feed(it->value().ToStringView());
      feed("\n");
    }
    LIMBIC_RETURN_IF_ERROR(FromRocks(it->status(), "digest"));
  }
  sha.Update(buf);
  return sha.HexDigest();
}

Status Projection::CheckIndexes() const {
  std::map<std::string, std::string> expected;
  std::map<std::string, ThreadSummary> threads;  // what the thread table should hold
  for (Pool pool : {Pool::kThreads, Pool::kPercepts, Pool::kActions}) {
    Status s = ForEach(pool, [&](std::string_view id, const json& rec) {
      for (auto& [k, v] : IndexEntries(pool, std::string(id), rec)) expected.emplace(std::move(k), std::move(v));
      if (pool == Pool::kThreads) threads.emplace(std::string(id), SummaryOf(std::string(id), rec));
      if (pool == Pool::kPercepts) {
        auto t = threads.find(UnprocessedFor(rec));
        if (t != threads.end()) ++t->second.unprocessed;
      }
      return true;
    });
    LIMBIC_RETURN_IF_ERROR(s);
  }
  {
    std::lock_guard<std::mutex> lock(threads_mu_);
    if (thread_table_.size() != threads.size())
      return Status::Corruption("thread table holds " + std::to_string(thread_table_.size()) +
                                " threads, the pool " + std::to_string(threads.size()));
    for (const auto& [id, want] : threads) {
      auto it = thread_table_.find(id);
      if (it == thread_table_.end() || it->second.status != want.status ||
          it->second.salience != want.salience || it->second.last_active != want.last_active ||
          it->second.unprocessed != want.unprocessed)
        return Status::Corruption("thread table entry of " + id + " does not match its record");
    }
  }
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf_->index()));
  auto want = expected.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string key = it->key().ToString();
    if (want != expected.end() && want->first < key)
      return Status::Corruption("index entry missing: " + Printable(want->first));
    if (want == expected.end() || want->first != key)
      return Status::Corruption("index entry without a record: " + Printable(key));
    if (it->value() != rocksdb::Slice(want->second))
      return Status::Corruption("index entry with a stale value: " + Printable(key));
    ++want;
  }
  LIMBIC_RETURN_IF_ERROR(FromRocks(it->status(), "checking indexes"));
  if (want != expected.end()) return Status::Corruption("index entry missing: " + Printable(want->first));
  return Status::OK();
}

Status Projection::Flush() {
  if (read_only_) return Status::OK();
  LIMBIC_RETURN_IF_ERROR(FlushBulk());
  rocksdb::FlushOptions fo;
  return FromRocks(db_->Flush(fo, cf_->all), "flushing the projections");
}

}  // namespace limbic::state
