// Projection's checks: the digest of every pool, and that the indexes and
// the in-memory tables hold exactly what the records imply (fsck, tests).
#include <rocksdb/db.h>

#include <map>

#include "base/sha256.h"
#include "state/pool_layout.h"
#include "state/projection.h"
#include "state/rocks.h"

namespace limbic::state {

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
  // One pass over everything: read ahead, and leave the block cache to
  // the records that are read again.
  ro.fill_cache = false;
  ro.readahead_size = size_t{2} << 20;
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

Status Projection::VerifyChecksums() const {
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.readahead_size = size_t{2} << 20;
  return FromRocks(db_->VerifyChecksum(ro), "checking the table files' checksums");
}

Status Projection::CheckIndexes() const {
  std::map<std::string, std::string> expected;
  std::map<std::string, ThreadSummary> threads;  // what the thread table should hold
  std::map<std::string, size_t> unprocessed;     // by thread id, existing or not
  std::map<std::string, FreshPercept> fresh;     // what the new percepts' table should hold
  for (Pool pool : {Pool::kThreads, Pool::kPercepts, Pool::kActions, Pool::kMemories,
                    Pool::kAssociations, Pool::kSessions}) {
    Status s = ForEach(pool, [&](std::string_view id, const json& rec) {
      for (auto& [k, v] : IndexEntries(pool, std::string(id), rec)) expected.emplace(std::move(k), std::move(v));
      if (pool == Pool::kThreads) threads.emplace(std::string(id), SummaryOf(std::string(id), rec));
      if (pool == Pool::kPercepts) {
        std::string owner = UnprocessedFor(rec);
        if (!owner.empty()) ++unprocessed[owner];
        if (auto f = FreshOf(rec)) fresh.emplace(std::string(id), *f);
      }
      return true;
    });
    LIMBIC_RETURN_IF_ERROR(s);
  }
  if (has_thread_table_) {
    std::lock_guard<std::mutex> lock(threads_mu_);
    if (threads_.size() != threads.size())
      return Status::Corruption("thread table holds " + std::to_string(threads_.size()) +
                                " threads, the pool " + std::to_string(threads.size()));
    for (const auto& [id, want] : threads) {
      auto t = threads_.Find(id);
      if (!t || t->status != want.status || t->salience != want.salience ||
          t->last_active != want.last_active)
        return Status::Corruption("thread table entry of " + id + " does not match its record");
    }
    if (threads_.unprocessed_ids() != unprocessed.size())
      return Status::Corruption(
          "unprocessed counts held for " + std::to_string(threads_.unprocessed_ids()) +
          " thread ids, the percepts count " + std::to_string(unprocessed.size()));
    for (const auto& [id, n] : unprocessed)
      if (threads_.Unprocessed(id) != n)
        return Status::Corruption("unprocessed count of " + id + " is " +
                                  std::to_string(threads_.Unprocessed(id)) +
                                  ", its percepts count " + std::to_string(n));
    if (counts_) {
      RecordCounts want;
      for (size_t i = 0; i < std::size(kAllPools); ++i) {
        auto n = Count(kAllPools[i]);
        if (!n.ok()) return n.status();
        want.pools[i] = *n;
      }
      for (size_t i = 0; i < kActionStatuses.size(); ++i) {
        const std::string prefix = "A|u|" + std::string(kActionStatuses[i]) + '\0';
        for (const auto& [key, v] : expected)
          if (key.starts_with(prefix)) ++want.actions[i];
      }
      if (!(*counts_ == want))
        return Status::Corruption("the record counts kept do not match the pools");
    }
    if (fresh_.built()) {
      if (fresh_.size() != fresh.size())
        return Status::Corruption("the new percepts' table holds " + std::to_string(fresh_.size()) +
                                  ", the pool " + std::to_string(fresh.size()));
      for (const auto& [id, want] : fresh) {
        const FreshPercept* f = fresh_.Find(id);
        if (!f || f->ts != want.ts || f->seq != want.seq || f->intensity != want.intensity)
          return Status::Corruption("the new percepts' table entry of " + id +
                                    " does not match its record");
      }
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

}  // namespace limbic::state
