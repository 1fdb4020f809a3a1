// Replay's bulk load (see Projection::Apply and ProjectionOptions::
// bulk_load): reduced changes held in memory across calls, written every
// bulk_flush_records changed records as sorted table files that RocksDB
// takes in whole, on threads of their own while the next events are
// reduced. The constructor and destructor are here too: the load's
// parts they own are only whole here, and the destructor ends a load
// under way.
#include <rocksdb/db.h>
#include <rocksdb/sst_file_writer.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <optional>
#include <thread>
#include <unordered_map>

#include "state/pool_layout.h"
#include "state/projection.h"
#include "state/rocks.h"

namespace limbic::state {

// See pool_layout.h. Comparing whole keys is slow (index keys share long
// prefixes), so each key is cut where IndexPrefix cuts it: the prefixes
// are ranked once, and the sort compares the rank, then the 16 bytes after
// the prefix as two numbers, and only on a tie the rest (percepts of one
// millisecond share the 8 bytes of their time; the next 8 tell them
// apart). That is the bytewise order: keys with different prefixes differ
// inside the shorter prefix (which ends at the first 0x00 from byte 4, or
// is the whole key), so their prefixes order them; within a prefix,
// zero-padded big-endian bytes order as the bytes do, and equal numbers
// fall back to the bytes.
std::vector<uint32_t> KeyOrder(const PreparedWrite& write) {
  const std::vector<PreparedWrite::Op>& ops = write.ops;
  struct SortKey {
    uint64_t group;  // cf << 32 | prefix rank
    uint64_t next8;  // the 8 bytes after the prefix, big-endian, zero-padded
    uint64_t then8;  // the 8 after those, the same way
    uint32_t index;
  };
  static const IndexPrefix kPrefix;
  std::vector<size_t> prefix_len(ops.size());
  // Each op's prefix is looked up once: it keeps its rank's address (a
  // node's, stable), filled in once all prefixes are known.
  std::vector<const uint32_t*> rank_of(ops.size());
  std::unordered_map<std::string_view, uint32_t> ranks;  // of the index's prefixes
  static const uint32_t kNoPrefix = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    // Index keys: IndexPrefix's cut (a short key is its own prefix); other
    // column families: no prefix, one rank.
    if (ops[i].cf != kIndexCf) {
      prefix_len[i] = 0;
      rank_of[i] = &kNoPrefix;
      continue;
    }
    const std::string_view key = write.key(ops[i]);
    const size_t len = kPrefix.InDomain(key) ? kPrefix.Transform(key).size() : key.size();
    prefix_len[i] = len;
    rank_of[i] = &ranks.emplace(std::string_view(key.data(), len), 0).first->second;
  }
  {
    std::vector<std::string_view> prefixes;
    prefixes.reserve(ranks.size());
    for (const auto& [prefix, rank] : ranks) prefixes.push_back(prefix);
    std::sort(prefixes.begin(), prefixes.end());
    for (uint32_t r = 0; r < prefixes.size(); ++r) ranks[prefixes[r]] = r;
  }
  std::vector<SortKey> keys(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string_view key = write.key(ops[i]);
    const size_t len = prefix_len[i];
    auto bytes8 = [&key](size_t from) {
      uint64_t v = 0;
      for (size_t b = 0; b < 8; ++b) {
        const size_t at = from + b;
        v = (v << 8) | (at < key.size() ? static_cast<unsigned char>(key[at]) : 0u);
      }
      return v;
    };
    keys[i] = SortKey{uint64_t{ops[i].cf} << 32 | *rank_of[i], bytes8(len), bytes8(len + 8),
                      static_cast<uint32_t>(i)};
  }
  auto less = [&](const SortKey& a, const SortKey& b) {
    if (a.group != b.group) return a.group < b.group;
    if (a.next8 != b.next8) return a.next8 < b.next8;
    if (a.then8 != b.then8) return a.then8 < b.then8;
    const int c = write.key(ops[a.index]).compare(write.key(ops[b.index]));
    return c != 0 ? c < 0 : a.index < b.index;
  };
  // The ops come in runs already ordered: a write's records in the order
  // they were first changed (ids made one after the other), and each index
  // prefix's entries newest first, since those keys count time down. So
  // the ops are put in group order by counting (the index, the last column
  // family, takes one bucket per prefix rank), and a group left in order,
  // or in exactly the opposite one, costs a pass instead of a sort.
  {
    auto bucket = [](const SortKey& k) -> size_t {
      const auto cf = static_cast<uint8_t>(k.group >> 32);
      return cf != kIndexCf ? cf : kIndexCf + static_cast<uint32_t>(k.group);
    };
    std::vector<uint32_t> at(kIndexCf + ranks.size() + 1, 0);
    for (const SortKey& k : keys) ++at[bucket(k)];
    uint32_t sum = 0;
    for (uint32_t& a : at) sum += std::exchange(a, sum);
    std::vector<SortKey> grouped(keys.size());
    for (const SortKey& k : keys) grouped[at[bucket(k)]++] = k;
    keys.swap(grouped);
    for (size_t from = 0; from < keys.size();) {
      size_t to = from + 1;
      while (to < keys.size() && keys[to].group == keys[from].group) ++to;
      const auto first = keys.begin() + static_cast<std::ptrdiff_t>(from);
      const auto last = keys.begin() + static_cast<std::ptrdiff_t>(to);
      if (!std::is_sorted(first, last, less)) {
        // Strictly the other way round: no two ops on one key, whose
        // given order would be lost by reversing.
        bool reversed = true;
        for (auto it = first; reversed && it + 1 != last; ++it) reversed = less(*(it + 1), *it);
        if (reversed) std::reverse(first, last);
        else std::sort(first, last, less);
      }
      from = to;
    }
  }
  // Of the ops on one key (adjacent now, in the order given) the last wins;
  // whole keys are compared only where the sort keys leave it open.
  std::vector<uint32_t> order;
  order.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const SortKey& k = keys[i];
    if (i + 1 < keys.size()) {
      const SortKey& next = keys[i + 1];
      if (k.group == next.group && k.next8 == next.next8 && k.then8 == next.then8 &&
          write.key(ops[k.index]) == write.key(ops[next.index]))
        continue;
    }
    order.push_back(k.index);
  }
  return order;
}

class Projection::BulkBase final : public RecordReader {
 public:
  explicit BulkBase(const Projection* p) : p_(p) {}
  Result<std::optional<json>> Get(Pool pool, std::string_view id) const override {
    return p_->GetWritten(pool, id);
  }
  Result<std::optional<FlatRecord>> GetFlat(Pool pool, std::string_view id) const override {
    return p_->GetWrittenFlat(pool, id);
  }
  Result<std::optional<PerceptRecord>> GetPercept(std::string_view id) const override {
    return p_->GetWrittenPercept(id);
  }
  Result<bool> Contains(Pool pool, std::string_view id) const override {
    return p_->ContainsWritten(pool, id);
  }

 private:
  const Projection* p_;
};

void Projection::StartBulkLoad(const ProjectionOptions& options) {
  bulk_load_ = true;
  bulk_flush_records_ = std::max<size_t>(1, options.bulk_flush_records);
  bulk_resident_bytes_ = options.bulk_resident_bytes;
  bulk_base_ = std::make_unique<BulkBase>(this);
}

// A bulk flush under way: writes `changes` on its own thread. Until the
// next one starts, it is the base of the new bulk overlay, which reads its
// changes (never changed while the write runs) and else what the writes
// before it left (BulkBase), where nothing else is being written; Flush
// prepares the last write over it.
class Projection::Flushing final : public RecordReader {
 public:
  Flushing(Projection* p, std::unique_ptr<Overlay> changes, uint64_t seq,
           std::unique_ptr<Flushing> previous)
      : p_(p), changes_(std::move(changes)) {
    ResidentRecords::Batch* written = p_->resident_ ? &written_ : nullptr;
    thread_ = std::thread([this, seq, written, previous = std::move(previous)]() mutable {
      previous.reset();  // freeing the last flush's records is work too
      status_ = p_->WriteBulk(*changes_, seq, written);
    });
  }
  ~Flushing() override { (void)Wait(); }

  // Waits for the write; its status.
  Status Wait() {
    if (thread_.joinable()) thread_.join();
    return status_;
  }
  // After Wait: the records it wrote, for the caller to move away.
  ResidentRecords::Batch& written() { return written_; }

  // Its change of the record if it has one, else what the writes before
  // it left.
  Result<std::optional<json>> Get(Pool pool, std::string_view id) const override {
    const Overlay::Change* c = Find(pool, id);
    return c ? JsonOf(c->record) : p_->bulk_base_->Get(pool, id);
  }
  Result<std::optional<PerceptRecord>> GetPercept(std::string_view id) const override {
    const Overlay::Change* c = Find(Pool::kPercepts, id);
    return c ? PerceptOf(c->record, id) : p_->bulk_base_->GetPercept(id);
  }
  Result<std::optional<FlatRecord>> GetFlat(Pool pool, std::string_view id) const override {
    const Overlay::Change* c = Find(pool, id);
    return c ? FlatOf(c->record, id) : p_->bulk_base_->GetFlat(pool, id);
  }
  Result<bool> Contains(Pool pool, std::string_view id) const override {
    const Overlay::Change* c = Find(pool, id);
    return c ? Result<bool>(c->record.has_value()) : p_->bulk_base_->Contains(pool, id);
  }

 private:
  const Overlay::Change* Find(Pool pool, std::string_view id) const {
    const auto& changes = changes_->changes();
    auto it = changes.Find(pool, id);
    return it == changes.end() ? nullptr : &it->second;
  }

  Projection* p_;
  std::unique_ptr<Overlay> changes_;
  Status status_;
  ResidentRecords::Batch written_;
  std::thread thread_;
};

namespace {

// A bulk load's overlay over `base`: it remembers what it reads for
// Prepare, but not records found absent (its base answers that from
// memory, and remembering would cost memory for every new record).
std::unique_ptr<Overlay> NewBulkOverlay(const RecordReader* base) {
  auto overlay = std::make_unique<Overlay>(base);
  overlay->remember_base_reads(true);
  overlay->remember_absent(false);
  return overlay;
}

}  // namespace

Projection::Projection() = default;

Projection::~Projection() {
  bulk_.reset();
  flushing_.reset();  // waits for its write
  if (freeing_.joinable()) freeing_.join();
  if (write_failed_ && db_ && !Resume().ok()) {
    // Closing would abort the process (see write_failed_). Left open, the
    // DB is as after a crash, which RocksDB recovers from; what it lost of
    // the log's events is re-applied at the next open.
    (void)db_.release();
    return;
  }
  if (db_ && cf_)
    for (auto* h : cf_->all) db_->DestroyColumnFamilyHandle(h);
}

Status Projection::ApplyBulk(std::span<const Event> events, size_t* failed_at) {
  // Records stay in memory across calls: a record touched by many events
  // is read, parsed and written once per flush instead of once per chunk.
  if (!bulk_) {
    bulk_ = NewBulkOverlay(bulk_base_.get());
    // A DB that has applied nothing holds no records.
    if (!resident_ && bulk_resident_bytes_ > 0)
      resident_ = std::make_unique<ResidentRecords>(bulk_resident_bytes_, applied_seq() == 0);
  }
  for (size_t i = 0; i < events.size(); ++i) {
    Status s = Reduce(events[i], bulk_.get());
    if (!s.ok()) {
      // bulk_ may now hold this event's partial changes: it is never written.
      bulk_error_ = s;
      if (failed_at) *failed_at = i;
      return s;
    }
  }
  bulk_seq_ = events.back().seq;
  return bulk_->changes().size() >= bulk_flush_records_ ? StartBulkFlush() : Status::OK();
}

// A bulk write's table files, made and not yet handed to RocksDB. Files
// left behind (an error, or the links a moved ingestion leaves) are
// removed with it.
struct Projection::BulkFiles {
  PreparedWrite writes[2];  // the changes' two halves; the thread table follows them once ingested
  uint64_t last_seq = 0;
  std::vector<rocksdb::IngestExternalFileArg> args;
  std::vector<std::string> written;
  ~BulkFiles() {
    std::error_code ec;
    for (const std::string& f : written) std::filesystem::remove(f, ec);
  }
};

namespace {

// One half of a bulk write's ops, in key order (KeyOrder), walked one
// column family at a time.
struct SortedOps {
  const PreparedWrite* write = nullptr;
  const std::vector<uint32_t>* order = nullptr;  // of write->ops
  size_t at = 0;                                 // next in order
  const PreparedWrite::Op* Peek(uint8_t cf) const {
    if (at == order->size()) return nullptr;
    const PreparedWrite::Op& op = write->ops[(*order)[at]];
    return op.cf == cf ? &op : nullptr;
  }
  // Moves on to the next op. Key order is a random walk through the ops
  // and the bytes they point to: waiting for each from memory was a tenth
  // of a replay's time. The walk asks for the ops it will reach in a
  // while, and for the keys and values of those it will reach sooner
  // (their ops are in cache by then), so memory fetches them meanwhile.
  void Advance() {
    ++at;
    constexpr size_t kOpsAhead = 16, kBytesAhead = 8;
    if (at + kOpsAhead < order->size()) __builtin_prefetch(&write->ops[(*order)[at + kOpsAhead]]);
    if (at + kBytesAhead < order->size()) {
      const PreparedWrite::Op& op = write->ops[(*order)[at + kBytesAhead]];
      const char* bytes = write->bytes.data() + op.at;
      __builtin_prefetch(bytes);
      if (op.key_size + op.value_size > 1)
        __builtin_prefetch(bytes + op.key_size + op.value_size - 1);
    }
  }
};

}  // namespace

Status Projection::MakeBulkFiles(const Overlay& changes, const RecordReader& before, uint64_t last_seq,
                                 BulkFiles* out) {
  // A bulk write is most of a replay's work, and its last one is all there
  // is left to do at the end: its two halves are prepared and put in key
  // order at once, the second on a helper thread, and its table files are
  // written two at once (the index's, the largest, on the helper). Reading
  // `before` from two threads is safe: its records do not change while a
  // write is made.
  const size_t n = changes.changes().size();
  out->last_seq = last_seq;
  std::vector<uint32_t> orders[2];
  Status prepared[2];
  auto prepare = [&](int h) {
    PreparedWrite& write = out->writes[h];
    prepared[h] = PrepareRange(changes, h == 0 ? 0 : n / 2, h == 0 ? n / 2 : n, before, &write);
    // applied_seq goes in with the records, so a DB left by a replay that
    // died part way never holds records its applied_seq does not cover.
    if (h == 1) write.Add(0, false, kAppliedSeqKey, std::to_string(last_seq));
    // A table file is written in key order, one op per key.
    if (prepared[h].ok()) orders[h] = KeyOrder(write);
  };
  {
    std::jthread helper(prepare, 1);  // joined on the way out, whatever happens
    prepare(0);
  }
  LIMBIC_RETURN_IF_ERROR(prepared[0]);
  LIMBIC_RETURN_IF_ERROR(prepared[1]);
  // The thread table takes a write's thread rows before its count changes
  // (a percept in the first half may count for a thread made in the
  // second): both halves' go with the first write, as one Prepare's would.
  PreparedWrite& first = out->writes[0];
  PreparedWrite& second = out->writes[1];
  std::move(second.threads.begin(), second.threads.end(), std::back_inserter(first.threads));
  std::move(second.unprocessed.begin(), second.unprocessed.end(),
            std::back_inserter(first.unprocessed));
  second.threads.clear();
  second.unprocessed.clear();

  // One table file per column family, written straight to disk and then
  // ingested, all column families at once (atomically): no memtable
  // inserts and no flush of them later (together half of replay's cost
  // when the records went through a WriteBatch). A column family's file
  // takes both halves' ops merged in key order; of two on one key, the
  // second half's (the later change) wins.
  const uint64_t file_no = bulk_files_++;
  auto write_cf = [&](uint8_t cf, SortedOps(&h)[2], std::string* file) -> Status {
    if (!h[0].Peek(cf) && !h[1].Peek(cf)) return Status::OK();
    rocksdb::ColumnFamilyHandle* handle = cf_->all[cf];
    // Uncompressed: snappy was 6% of a replay's CPU, and the files are
    // rewritten (compressed, with the column family's options) by the
    // first compaction anyway. Readers take blocks either way.
    rocksdb::Options table_options = db_->GetOptions(handle);
    table_options.compression = rocksdb::kNoCompression;
    rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), table_options, handle);
    *file = path_ + "/" + std::string(kBulkFilePrefix) + std::to_string(file_no) + "-" +
            std::to_string(cf) + ".sst";
    rocksdb::Status s = writer.Open(*file);
    for (;;) {
      if (!s.ok()) break;
      const PreparedWrite::Op* a = h[0].Peek(cf);
      const PreparedWrite::Op* b = h[1].Peek(cf);
      if (!a && !b) break;
      const int c = !a ? 1 : !b ? -1 : h[0].write->key(*a).compare(h[1].write->key(*b));
      const PreparedWrite& from = *h[c < 0 ? 0 : 1].write;
      const PreparedWrite::Op* op = c < 0 ? a : b;
      if (c <= 0) h[0].Advance();
      if (c >= 0) h[1].Advance();
      s = op->erase ? writer.Delete(from.key(*op)) : writer.Put(from.key(*op), from.value(*op));
    }
    if (s.ok()) s = writer.Finish();
    return FromRocks(s, "writing " + *file);
  };
  // The halves' ops are in column family order: the helper writes the
  // index (the last column family) from where it starts, this thread the
  // others before it.
  SortedOps halves[2], index_halves[2];
  for (int h = 0; h < 2; ++h) {
    const PreparedWrite& write = out->writes[h];
    const auto first_index =
        std::partition_point(orders[h].begin(), orders[h].end(),
                             [&write](uint32_t i) { return write.ops[i].cf != kIndexCf; });
    halves[h] = SortedOps{&write, &orders[h], 0};
    index_halves[h] =
        SortedOps{&write, &orders[h], static_cast<size_t>(first_index - orders[h].begin())};
  }
  std::string index_file;
  Status index_status;
  std::vector<std::pair<uint8_t, std::string>> files;
  Status status;
  {
    std::jthread index_writer(
        [&] { index_status = write_cf(kIndexCf, index_halves, &index_file); });
    for (uint8_t cf = 0; cf < kIndexCf && status.ok(); ++cf) {
      std::string file;
      status = write_cf(cf, halves, &file);
      if (!file.empty()) files.emplace_back(cf, std::move(file));
    }
  }
  if (!index_file.empty()) files.emplace_back(kIndexCf, std::move(index_file));
  for (auto& [cf, file] : files) out->written.push_back(file);
  LIMBIC_RETURN_IF_ERROR(status);
  LIMBIC_RETURN_IF_ERROR(index_status);
  for (auto& [cf, file] : files) {
    rocksdb::IngestExternalFileArg arg;
    arg.column_family = cf_->all[cf];
    arg.external_files.push_back(std::move(file));
    arg.options.move_files = true;
    arg.options.write_global_seqno = false;  // kept in the MANIFEST instead of rewriting the file
    out->args.push_back(std::move(arg));
  }
  return Status::OK();
}

Status Projection::IngestBulkFiles(const BulkFiles& files) {
  if (!files.args.empty())
    LIMBIC_RETURN_IF_ERROR(
        FromRocks(db_->IngestExternalFiles(files.args), "loading table files into the projections"));
  const PreparedWrite* writes[] = {&files.writes[0], &files.writes[1]};
  UpdateThreadTable(writes, files.last_seq);
  applied_seq_.store(files.last_seq, std::memory_order_release);
  return Status::OK();
}

Status Projection::WriteBulk(const Overlay& changes, uint64_t last_seq, ResidentRecords::Batch* written) {
  BulkFiles files;
  LIMBIC_RETURN_IF_ERROR(MakeBulkFiles(changes, *bulk_base_, last_seq, &files));
  LIMBIC_RETURN_IF_ERROR(IngestBulkFiles(files));
  if (!written) return Status::OK();
  for (const PreparedWrite& write : files.writes) {
    for (const PreparedWrite::Op& op : write.ops) {
      if (const std::optional<Pool> pool = PoolOfCf(op.cf))
        written->Add(*pool, std::string(write.key(op)),
                     op.erase ? std::nullopt : std::optional<std::string>(write.value(op)));
    }
  }
  return Status::OK();
}

Status Projection::StartBulkFlush() {
  // The previous write first: the records about to be written were reduced
  // over it, and Prepare reads what it wrote.
  if (flushing_) {
    LIMBIC_RETURN_IF_ERROR(flushing_->Wait());  // kept: bulk_ reads through it
    // RocksDB holds its records now, and no write runs: the resident
    // records follow them before the next write (and bulk_) reads them.
    if (resident_) resident_->Add(std::move(flushing_->written()));
  }
  std::unique_ptr<Flushing> previous = std::move(flushing_);
  flushing_ = std::make_unique<Flushing>(this, std::move(bulk_), bulk_seq_, std::move(previous));
  bulk_ = NewBulkOverlay(flushing_.get());
  return Status::OK();
}

Status Projection::FinishBulkLoad() {
  // The last write's files are made while the one before is still being
  // written: prepared over what that one holds (its records over the DB's),
  // and ingested after it, so theirs are the newer versions.
  std::optional<BulkFiles> last;
  Status made;
  if (bulk_ && bulk_error_.ok()) {
    last.emplace();
    const RecordReader& before = flushing_ ? static_cast<const RecordReader&>(*flushing_) : *bulk_base_;
    made = MakeBulkFiles(*bulk_, before, bulk_seq_, &*last);
  }
  if (flushing_) LIMBIC_RETURN_IF_ERROR(flushing_->Wait());
  LIMBIC_RETURN_IF_ERROR(bulk_error_);
  LIMBIC_RETURN_IF_ERROR(made);
  if (last) LIMBIC_RETURN_IF_ERROR(IngestBulkFiles(*last));
  // Freeing the records held for the last writes (tens of thousands of
  // JSON trees) and the resident records takes a while: a thread of its
  // own does it while the caller goes on (a replay computes its digest
  // meanwhile).
  if (bulk_ || flushing_ || resident_) {
    if (freeing_.joinable()) freeing_.join();
    freeing_ = std::thread([bulk = std::move(bulk_), flushing = std::move(flushing_),
                            resident = std::move(resident_)]() mutable {
      bulk.reset();  // first: it reads through flushing
      flushing.reset();
      resident.reset();
    });
  }
  return Status::OK();
}

}  // namespace limbic::state
