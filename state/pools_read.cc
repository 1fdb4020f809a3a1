// Projection's reads: records, queries and walks over the index CF, the
// in-memory tables (threads, new percepts). The digest and the index check
// are in pools_check.cc; the key layout is in pool_layout.h.
#include <rocksdb/db.h>

#include <algorithm>

#include "base/json.h"
#include "state/pool_layout.h"
#include "state/projection.h"
#include "state/recency.h"
#include "state/rocks.h"

namespace limbic::state {

namespace {

Result<std::optional<json>> ParseRecord(Pool pool, std::string_view id, std::string_view stored) {
  std::optional<json> rec = ParseJson(stored);
  if (!rec)
    return Status::Corruption("record " + std::string(PoolName(pool)) + "/" + std::string(id) +
                              " is not valid JSON");
  return rec;
}

// The stored record in the form T, through From(stored); a record that
// does not read so is named in the error.
template <typename T, typename From>
Result<std::optional<T>> Convert(Pool pool, std::string_view id, std::string_view stored, From from) {
  auto rec = from(stored);
  if (!rec.ok())
    return Status::Corruption("record " + std::string(PoolName(pool)) + "/" + std::string(id) + ": " +
                              rec.status().message());
  return std::optional<T>(std::move(*rec));
}

}  // namespace

template <typename Fn>
auto Projection::WithStored(Pool pool, std::string_view id, bool written, Fn fn) const
    -> decltype(fn(std::optional<std::string_view>())) {
  if (written && resident_) {
    std::string_view stored;
    switch (resident_->Find(pool, id, &stored)) {
      case ResidentRecords::Found::kHere: return fn(stored);
      case ResidentRecords::Found::kAbsent: return fn(std::nullopt);
      case ResidentRecords::Found::kAsk: break;
    }
  }
  rocksdb::PinnableSlice value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cf_->pool(pool), rocksdb::Slice(id.data(), id.size()), &value);
  if (s.IsNotFound()) return fn(std::nullopt);
  if (!s.ok()) return FromRocks(s, "reading " + std::string(PoolName(pool)) + "/" + std::string(id));
  return fn(value.ToStringView());
}

namespace {

// Reading a record as JSON, flat, typed or not at all, from its stored bytes.
auto AsJson(Pool pool, std::string_view id) {
  return [=](std::optional<std::string_view> stored) -> Result<std::optional<json>> {
    if (!stored) return std::optional<json>();
    return ParseRecord(pool, id, *stored);
  };
}
auto AsFlat(Pool pool, std::string_view id) {
  return [=](std::optional<std::string_view> stored) -> Result<std::optional<FlatRecord>> {
    if (!stored) return std::optional<FlatRecord>();
    return Convert<FlatRecord>(pool, id, *stored, FlatRecord::FromStored);
  };
}
auto AsPercept(std::string_view id) {
  return [=](std::optional<std::string_view> stored) -> Result<std::optional<PerceptRecord>> {
    if (!stored) return std::optional<PerceptRecord>();
    return Convert<PerceptRecord>(Pool::kPercepts, id, *stored, PerceptRecord::FromStored);
  };
}
Result<bool> Exists(std::optional<std::string_view> stored) { return stored.has_value(); }

}  // namespace

Result<std::optional<json>> Projection::Get(Pool pool, std::string_view id) const {
  return WithStored(pool, id, false, AsJson(pool, id));
}
Result<std::optional<json>> Projection::GetWritten(Pool pool, std::string_view id) const {
  return WithStored(pool, id, true, AsJson(pool, id));
}
Result<std::optional<FlatRecord>> Projection::GetFlat(Pool pool, std::string_view id) const {
  return WithStored(pool, id, false, AsFlat(pool, id));
}
Result<std::optional<FlatRecord>> Projection::GetWrittenFlat(Pool pool, std::string_view id) const {
  return WithStored(pool, id, true, AsFlat(pool, id));
}
Result<std::optional<PerceptRecord>> Projection::GetPercept(std::string_view id) const {
  return WithStored(Pool::kPercepts, id, false, AsPercept(id));
}
Result<std::optional<PerceptRecord>> Projection::GetWrittenPercept(std::string_view id) const {
  return WithStored(Pool::kPercepts, id, true, AsPercept(id));
}
Result<bool> Projection::Contains(Pool pool, std::string_view id) const {
  return WithStored(pool, id, false, Exists);
}
Result<bool> Projection::ContainsWritten(Pool pool, std::string_view id) const {
  return WithStored(pool, id, true, Exists);
}

Result<json> Projection::GetArousal() const {
  auto r = Get(Pool::kArousal, kArousalId);
  if (!r.ok()) return r.status();
  return r->has_value() ? std::move(**r) : DefaultArousal();
}

namespace {

constexpr std::array<std::string_view, 4> kPerceptStatuses = {"new", "assigned", "processed",
                                                              "dropped"};
constexpr std::array<std::string_view, 4> kThreadStatuses = {"active", "paused", "frozen",
                                                             "complete"};

// Filters name a status the pool knows, or the query is refused.
Status CheckStatusFilter(std::string_view what, const std::optional<std::string>& status,
                         std::span<const std::string_view> allowed) {
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
  LIMBIC_RETURN_IF_ERROR(CheckStatusFilter("percept", q.status, kPerceptStatuses));
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
  LIMBIC_RETURN_IF_ERROR(CheckStatusFilter("thread", status, kThreadStatuses));
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

namespace {
Status NoThreadTable() {
  return Status::FailedPrecondition("the thread table was not loaded (ProjectionOptions::thread_table)");
}
}  // namespace

Result<size_t> Projection::CountUnprocessed(std::string_view thread_id) const {
  if (!has_thread_table_) return NoThreadTable();
  std::lock_guard<std::mutex> lock(threads_mu_);
  auto t = threads_.Find(std::string(thread_id));
  return t ? t->unprocessed : 0;
}

Result<std::vector<ThreadSummary>> Projection::ThreadSummaries(
    std::optional<std::string> status) const {
  LIMBIC_RETURN_IF_ERROR(CheckStatusFilter("thread", status, kThreadStatuses));
  if (!has_thread_table_) return NoThreadTable();
  std::lock_guard<std::mutex> lock(threads_mu_);
  return threads_.List(status);
}

Result<std::vector<ThreadSummary>> Projection::TopThreads(std::optional<std::string> status,
                                                          TimeMs now, const RecencyParams& p,
                                                          size_t limit) const {
  LIMBIC_RETURN_IF_ERROR(CheckStatusFilter("thread", status, kThreadStatuses));
  if (!has_thread_table_) return NoThreadTable();
  std::lock_guard<std::mutex> lock(threads_mu_);
  return threads_.Top(status, now, p, limit);
}

Result<std::vector<json>> Projection::TopNewPercepts(TimeMs now, const RecencyParams& p,
                                                     double threshold, size_t limit) const {
  if (p.percept_half_life <= 0 || limit == 0)
    return Status::InvalidArgument("ranking new percepts needs a half-life and a limit");
  LIMBIC_RETURN_IF_ERROR(EnsureFresh());
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> lock(threads_mu_);
    ids = fresh_.Top(now, p, threshold, limit);
  }
  std::vector<json> out;
  out.reserve(ids.size());
  for (const std::string& id : ids) {
    auto rec = Get(Pool::kPercepts, id);
    if (!rec.ok()) return rec.status();
    if (rec->has_value() && StrOf(**rec, "status") == "new") out.push_back(std::move(**rec));
  }
  return out;
}

Result<std::vector<std::string>> Projection::ExpiredPercepts(TimeMs now, const ExpiryRule& rule,
                                                             size_t limit) const {
  LIMBIC_RETURN_IF_ERROR(EnsureFresh());
  std::lock_guard<std::mutex> lock(threads_mu_);
  return fresh_.Expired(now, rule, limit);
}

// Every new percept, from the P|u| index and each one's record, read from
// a snapshot without holding threads_mu_: commits go on meanwhile (a
// million new percepts take seconds to read), and what they change in the
// table is kept in fresh_during_ and set over the snapshot's rows after,
// in commit order. A commit both in the snapshot and in fresh_during_ is
// set twice, which is harmless (FreshTable::Set is idempotent).
Status Projection::EnsureFresh() const {
  const rocksdb::Snapshot* snapshot = nullptr;
  {
    std::unique_lock<std::mutex> lock(threads_mu_);
    tables_cv_.wait(lock, [this] { return !fresh_building_; });
    if (fresh_.built()) return Status::OK();
    fresh_building_ = true;
    fresh_during_.clear();
    snapshot = db_->GetSnapshot();
  }
  std::unordered_map<std::string, FreshPercept> fresh;
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  const std::string prefix = std::string("P|u|new") + '\0';
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf_->index()));
  Status status;
  for (it->Seek(prefix); status.ok() && it->Valid() && it->key().starts_with(prefix); it->Next()) {
    std::string_view key = it->key().ToStringView();
    if (key.size() < prefix.size() + 16) continue;
    std::string id(key.substr(prefix.size() + 16));
    rocksdb::PinnableSlice value;
    rocksdb::Status got = db_->Get(ro, cf_->pool(Pool::kPercepts), id, &value);
    if (got.IsNotFound()) continue;
    if (!got.ok()) {
      status = FromRocks(got, "reading percepts/" + id);
      break;
    }
    auto rec = AsPercept(id)(value.ToStringView());
    if (!rec.ok()) status = rec.status();
    else if (rec->has_value())
      if (auto f = FreshOf(Record(std::move(**rec)))) fresh.emplace(std::move(id), *f);
  }
  if (status.ok()) status = FromRocks(it->status(), "reading the new percepts");
  it.reset();
  db_->ReleaseSnapshot(snapshot);
  std::lock_guard<std::mutex> lock(threads_mu_);
  if (status.ok()) {
    fresh_.Build(std::move(fresh));
    for (const auto& [id, percept] : fresh_during_) fresh_.Set(id, percept);
  }
  fresh_during_ = {};
  fresh_building_ = false;
  tables_cv_.notify_all();
  return status;
}

Status Projection::LoadTables() const {
  LIMBIC_RETURN_IF_ERROR(EnsureFresh());
  return LoadCounts();
}

std::optional<RecordCounts> Projection::Counts() const {
  std::lock_guard<std::mutex> lock(threads_mu_);
  return counts_;
}

// Counted from a snapshot without holding threads_mu_, as EnsureFresh
// builds its table; the commits that land meanwhile leave their deltas with
// their last seq, and those past the snapshot's applied_seq are added.
Status Projection::LoadCounts() const {
  const rocksdb::Snapshot* snapshot = nullptr;
  {
    std::unique_lock<std::mutex> lock(threads_mu_);
    tables_cv_.wait(lock, [this] { return !counts_loading_; });
    if (counts_) return Status::OK();
    counts_loading_ = true;
    counts_during_.clear();
    snapshot = db_->GetSnapshot();
  }
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  RecordCounts counted;
  uint64_t at_seq = 0;
  Status status;
  std::string value;
  rocksdb::Status got = db_->Get(ro, cf_->meta(), std::string(kAppliedSeqKey), &value);
  if (got.ok()) at_seq = std::stoull(value);
  else if (!got.IsNotFound()) status = FromRocks(got, "reading applied_seq");
  for (size_t i = 0; status.ok() && i < std::size(kAllPools); ++i) {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf_->pool(kAllPools[i])));
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++counted.pools[i];
    status = FromRocks(it->status(), "counting " + std::string(PoolName(kAllPools[i])));
  }
  if (status.ok()) {
    // A|u|STATUS \0 TS8 ID: the status is in the key.
    const std::string prefix = "A|u|";
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf_->index()));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      std::string_view key = it->key().ToStringView();
      size_t nul = key.find('\0', prefix.size());
      if (nul == std::string_view::npos) continue;
      if (auto i = ActionStatusIndex(key.substr(prefix.size(), nul - prefix.size())))
        ++counted.actions[*i];
    }
    status = FromRocks(it->status(), "counting actions by status");
  }
  db_->ReleaseSnapshot(snapshot);
  std::lock_guard<std::mutex> lock(threads_mu_);
  if (status.ok()) {
    counts_seq_ = at_seq;
    for (const auto& [last_seq, deltas] : counts_during_)
      if (last_seq > at_seq) {
        counted.Add(deltas);
        counts_seq_ = last_seq;
      }
    counts_ = counted;
  }
  counts_during_ = {};
  counts_loading_ = false;
  tables_cv_.notify_all();
  return status;
}

// The thread table from the thread index (status, salience, last_active)
// and one scan of the P|a| index (unprocessed counts, by thread id).
Status Projection::LoadThreadTable() {
  std::unordered_map<std::string, ThreadSummary> table;
  std::unordered_map<std::string, size_t> unprocessed;
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
    ++unprocessed[std::string(key.substr(4, nul - 4))];
  }
  LIMBIC_RETURN_IF_ERROR(FromRocks(it->status(), "loading the thread table"));
  std::lock_guard<std::mutex> lock(threads_mu_);
  threads_.Reset(std::move(table), std::move(unprocessed));
  return Status::OK();
}

Result<std::vector<json>> Projection::ListActions(std::optional<std::string> status,
                                                  size_t limit) const {
  LIMBIC_RETURN_IF_ERROR(CheckStatusFilter("action", status, kActionStatuses));
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

namespace {

// Reads `rec` of the index key `key` (whose id starts at `id_at`) and hands
// it to fn; a record gone since the key was read is passed over.
template <typename Fn>
Result<bool> PassRecord(const Projection& p, Pool pool, std::string_view key, size_t id_at, Fn& fn) {
  auto rec = p.Get(pool, key.substr(id_at));
  if (!rec.ok()) return rec.status();
  if (!rec->has_value()) return true;
  return fn(std::move(**rec));
}

}  // namespace

Status Projection::WalkPerceptsOldestFirst(std::string_view status, TimeMs until, std::string* cursor,
                                           size_t limit, const std::function<bool(json&&)>& fn) const {
  LIMBIC_RETURN_IF_ERROR(CheckStatusFilter("percept", std::string(status), kPerceptStatuses));
  // P|u|STATUS \0 RT8 RSEQ8 ID is newest first: walk it backwards.
  const std::string prefix = "P|u|" + std::string(status) + '\0';
  std::string upper = prefix;
  upper.back() = '\1';
  rocksdb::ReadOptions ro;
  rocksdb::Slice lower_bound(prefix), upper_bound(upper);
  ro.iterate_lower_bound = &lower_bound;
  ro.iterate_upper_bound = &upper_bound;
  ro.total_order_seek = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf_->index()));
  if (cursor->empty()) {
    it->SeekToLast();
  } else {
    it->SeekForPrev(*cursor);
    if (it->Valid() && it->key().ToStringView() == *cursor) it->Prev();
  }
  size_t passed = 0;
  for (; it->Valid(); it->Prev()) {
    std::string_view key = it->key().ToStringView();
    if (key.size() < prefix.size() + 16) continue;
    if (FromRt8(key.substr(prefix.size(), 8)) > until) break;
    *cursor = std::string(key);
    auto more = PassRecord(*this, Pool::kPercepts, key, prefix.size() + 16, fn);
    if (!more.ok()) return more.status();
    if (!*more || (limit && ++passed >= limit)) break;
  }
  return FromRocks(it->status(), "walking the percepts");
}

Status Projection::WalkActionsOldestFirst(std::string_view status, TimeMs until, std::string* cursor,
                                          size_t limit, const std::function<bool(json&&)>& fn) const {
  LIMBIC_RETURN_IF_ERROR(CheckStatusFilter("action", std::string(status), kActionStatuses));
  // A|u|STATUS \0 TS8 ID is oldest first.
  const std::string prefix = "A|u|" + std::string(status) + '\0';
  std::string upper = prefix;
  upper.back() = '\1';
  rocksdb::ReadOptions ro;
  rocksdb::Slice upper_bound(upper);
  ro.iterate_upper_bound = &upper_bound;
  ro.total_order_seek = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf_->index()));
  it->Seek(cursor->empty() ? prefix : *cursor);
  if (!cursor->empty() && it->Valid() && it->key().ToStringView() == *cursor) it->Next();
  size_t passed = 0;
  for (; it->Valid() && it->key().starts_with(prefix); it->Next()) {
    std::string_view key = it->key().ToStringView();
    if (key.size() < prefix.size() + 8) continue;
    if (FromTs8(key.substr(prefix.size(), 8)) > until) break;
    *cursor = std::string(key);
    auto more = PassRecord(*this, Pool::kActions, key, prefix.size() + 8, fn);
    if (!more.ok()) return more.status();
    if (!*more || (limit && ++passed >= limit)) break;
  }
  return FromRocks(it->status(), "walking the actions");
}

Result<std::vector<json>> Projection::ListSessions(TimeMs since, size_t limit) const {
  // N|w|RT8 RSEQ8 ID is newest first: read forward until woken_at < since.
  const std::string prefix = "N|w|";
  std::string upper = prefix;
  upper.back() = '}';
  rocksdb::ReadOptions ro;
  rocksdb::Slice upper_bound(upper);
  ro.iterate_upper_bound = &upper_bound;
  ro.total_order_seek = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf_->index()));
  std::vector<json> out;
  auto take = [&out](json&& rec) {
    out.push_back(std::move(rec));
    return true;
  };
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    std::string_view key = it->key().ToStringView();
    if (key.size() < prefix.size() + 16) continue;
    if (FromRt8(key.substr(prefix.size(), 8)) < since) break;
    auto more = PassRecord(*this, Pool::kSessions, key, prefix.size() + 16, take);
    if (!more.ok()) return more.status();
    if (limit && out.size() >= limit) break;
  }
  LIMBIC_RETURN_IF_ERROR(FromRocks(it->status(), "listing the mind's sessions"));
  return out;
}

Result<std::vector<json>> Projection::AwakeSessions() const {
  const std::string prefix = "N|a|";
  std::vector<json> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf_->index()));
  auto take = [&out](json&& rec) {
    out.push_back(std::move(rec));
    return true;
  };
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto more = PassRecord(*this, Pool::kSessions, it->key().ToStringView(), prefix.size(), take);
    if (!more.ok()) return more.status();
  }
  LIMBIC_RETURN_IF_ERROR(FromRocks(it->status(), "listing the mind's awake sessions"));
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

}  // namespace limbic::state
