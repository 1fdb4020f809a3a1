// Pool names, the default arousal record, Record conversions and Overlay:
// the record access the reducer works through (see reducer.h).
#include "state/reducer.h"

namespace limbic::state {

std::string_view PoolName(Pool pool) {
  switch (pool) {
    case Pool::kPercepts: return "percepts";
    case Pool::kThreads: return "threads";
    case Pool::kArousal: return "arousal";
    case Pool::kActions: return "actions";
    case Pool::kReflexes: return "reflexes";
    case Pool::kMemories: return "memories";
    case Pool::kAssociations: return "associations";
    case Pool::kDocuments: return "documents";
    case Pool::kDedup: return "dedup";
    case Pool::kSessions: return "sessions";
  }
  return "?";
}

std::optional<Pool> ParsePool(std::string_view name) {
  for (Pool p : kAllPools)
    if (PoolName(p) == name) return p;
  return std::nullopt;
}

json DefaultArousal() {
  return {{"level", 0.5},
          {"factors", {{"user_waiting", false}, {"recent_errors", 0}, {"budget_pressure", false}}},
          {"updated_at", nullptr}};
}

json RecordJson(const Record& record) {
  if (const json* j = std::get_if<json>(&record)) return *j;
  if (const FlatRecord* f = std::get_if<FlatRecord>(&record)) return f->ToJson();
  return std::get<PerceptRecord>(record).ToJson();
}

Result<PerceptRecord> PerceptOf(const Record& record, std::string_view id) {
  if (const PerceptRecord* p = std::get_if<PerceptRecord>(&record)) return *p;
  const json* j = std::get_if<json>(&record);
  auto p = j ? PerceptRecord::FromJson(*j) : PerceptRecord::FromJson(RecordJson(record));
  if (!p.ok()) return Status::Corruption("percept " + std::string(id) + ": " + p.status().message());
  return p;
}

Result<FlatRecord> FlatOf(const Record& record, std::string_view id) {
  if (const FlatRecord* f = std::get_if<FlatRecord>(&record)) return *f;
  auto flat = [id](const json& j) -> Result<FlatRecord> {
    if (!j.is_object())
      return Status::Corruption("record " + std::string(id) + ": not a JSON object");
    return FlatRecord::FromJson(j);
  };
  if (const json* j = std::get_if<json>(&record)) return flat(*j);
  return flat(RecordJson(record));
}

Result<std::optional<FlatRecord>> FlatOf(const std::optional<Record>& record, std::string_view id) {
  if (!record) return std::optional<FlatRecord>();
  auto f = FlatOf(*record, id);
  if (!f.ok()) return f.status();
  return std::optional<FlatRecord>(std::move(*f));
}

std::optional<json> JsonOf(const std::optional<Record>& record) {
  if (!record) return std::nullopt;
  return RecordJson(*record);
}

Result<std::optional<PerceptRecord>> PerceptOf(const std::optional<Record>& record, std::string_view id) {
  if (!record) return std::optional<PerceptRecord>();
  auto p = PerceptOf(*record, id);
  if (!p.ok()) return p.status();
  return std::optional<PerceptRecord>(std::move(*p));
}

Result<std::optional<PerceptRecord>> RecordReader::GetPercept(std::string_view id) const {
  auto r = Get(Pool::kPercepts, id);
  if (!r.ok()) return r.status();
  if (!r->has_value()) return std::optional<PerceptRecord>();
  return PerceptOf(std::optional<Record>(std::in_place, std::in_place_type<json>, std::move(**r)), id);
}

Result<std::optional<FlatRecord>> RecordReader::GetFlat(Pool pool, std::string_view id) const {
  auto r = Get(pool, id);
  if (!r.ok()) return r.status();
  if (!r->has_value()) return std::optional<FlatRecord>();
  return FlatOf(std::optional<Record>(std::in_place, std::in_place_type<json>, std::move(**r)), id);
}

namespace {

// A record read in form T, held as a Record.
template <typename T>
Result<std::optional<Record>> AsRecord(Result<std::optional<T>> r) {
  if (!r.ok()) return r.status();
  if (!r->has_value()) return std::optional<Record>();
  return std::optional<Record>(std::in_place, std::in_place_type<T>, std::move(**r));
}

}  // namespace

Result<std::optional<Record>> RecordReader::GetRecord(Pool pool, std::string_view id) const {
  if (pool == Pool::kPercepts) return AsRecord(GetPercept(id));
  if (IsFlatPool(pool)) return AsRecord(GetFlat(pool, id));
  return AsRecord(Get(pool, id));
}

Result<bool> RecordReader::Contains(Pool pool, std::string_view id) const {
  auto r = GetRecord(pool, id);
  if (!r.ok()) return r.status();
  return r->has_value();
}

Result<bool> Overlay::Contains(Pool pool, std::string_view id) const {
  Key key(pool, std::string(id));
  auto it = changes_.find(key);
  if (it != changes_.end()) return it->second.record.has_value();
  if (remember_) {
    auto seen = base_reads_.find(key);
    if (seen != base_reads_.end()) return seen->second.has_value();
  }
  Result<bool> found = base_ ? base_->Contains(pool, id) : Result<bool>(false);
  // An absent record is remembered as read (Prepare need not look for it
  // again); a present one is not read, so not remembered.
  if (remember_ && remember_absent_ && found.ok() && !*found) base_reads_.emplace(std::move(key), std::nullopt);
  return found;
}

Result<std::optional<json>> Overlay::Get(Pool pool, std::string_view id) const {
  Key key(pool, std::string(id));
  auto it = changes_.find(key);
  if (it != changes_.end()) return JsonOf(it->second.record);
  return BaseGet(std::move(key));
}

Result<std::optional<json>> Overlay::BaseGet(Key key) const {
  if (!remember_) return base_ ? base_->Get(key.first, key.second) : std::optional<json>();
  auto seen = base_reads_.find(key);
  if (seen != base_reads_.end()) return JsonOf(seen->second);
  std::optional<Record> found;
  if (base_) {
    // Remembered as the write path holds it (a percept typed), for Prepare.
    auto r = base_->GetRecord(key.first, key.second);
    if (!r.ok()) return r.status();
    found = std::move(*r);
  }
  return JsonOf(base_reads_.emplace(std::move(key), std::move(found)).first->second);
}

// Percepts and flat records are read and taken the same way, each in its
// own form: `read` asks the base for it, `of` converts a held Record.
namespace {

auto ReadPercept = [](const RecordReader& base, const Overlay::Key& key) {
  return base.GetPercept(key.second);
};
auto ReadFlat = [](const RecordReader& base, const Overlay::Key& key) {
  return base.GetFlat(key.first, key.second);
};
auto PerceptForm = [](const std::optional<Record>& r, std::string_view id) { return PerceptOf(r, id); };
auto FlatForm = [](const std::optional<Record>& r, std::string_view id) { return FlatOf(r, id); };

}  // namespace

template <typename T, typename Read, typename Of>
Result<std::optional<T>> Overlay::GetAs(Key key, Read read, Of of) const {
  auto it = changes_.find(key);
  if (it != changes_.end()) return of(it->second.record, key.second);
  return BaseGetAs<T>(std::move(key), read, of);
}

template <typename T, typename Read, typename Of>
Result<std::optional<T>> Overlay::BaseGetAs(Key key, Read read, Of of) const {
  if (remember_) {
    auto seen = base_reads_.find(key);
    if (seen != base_reads_.end()) return of(seen->second, key.second);
  }
  if (!base_) return std::optional<T>();
  Result<std::optional<T>> r = read(*base_, key);
  if (remember_ && r.ok())
    base_reads_.emplace(std::move(key), *r ? std::optional<Record>(**r) : std::nullopt);
  return r;
}

template <typename T, typename Read, typename Of>
Result<std::optional<T>> Overlay::TakeAs(Key key, Read read, Of of) {
  auto it = changes_.find(key);
  if (it == changes_.end()) return BaseGetAs<T>(std::move(key), read, of);
  std::optional<Record>& record = it->second.record;
  if (!record) return std::optional<T>();
  // Leaves a moved-from record until Put or Delete.
  if (T* held = std::get_if<T>(&*record)) return std::optional<T>(std::move(*held));
  return of(record, key.second);
}

Result<std::optional<PerceptRecord>> Overlay::GetPercept(std::string_view id) const {
  return GetAs<PerceptRecord>(Key(Pool::kPercepts, std::string(id)), ReadPercept, PerceptForm);
}

Result<std::optional<FlatRecord>> Overlay::GetFlat(Pool pool, std::string_view id) const {
  return GetAs<FlatRecord>(Key(pool, std::string(id)), ReadFlat, FlatForm);
}

Result<std::optional<json>> Overlay::Take(Pool pool, std::string_view id) {
  Key key(pool, std::string(id));
  auto it = changes_.find(key);
  if (it == changes_.end()) return BaseGet(std::move(key));
  std::optional<Record>& record = it->second.record;
  if (!record) return std::optional<json>();
  // Leaves a moved-from record until Put or Delete.
  if (json* j = std::get_if<json>(&*record)) return std::optional<json>(std::move(*j));
  return JsonOf(record);
}

Result<std::optional<PerceptRecord>> Overlay::TakePercept(std::string_view id) {
  return TakeAs<PerceptRecord>(Key(Pool::kPercepts, std::string(id)), ReadPercept, PerceptForm);
}

Result<std::optional<FlatRecord>> Overlay::TakeFlat(Pool pool, std::string_view id) {
  return TakeAs<FlatRecord>(Key(pool, std::string(id)), ReadFlat, FlatForm);
}

void Overlay::Put(Pool pool, std::string id, json record, uint64_t seq) {
  changes_[Key(pool, std::move(id))] = Change{Record(std::in_place_type<json>, std::move(record)), seq};
}

void Overlay::PutPercept(std::string id, PerceptRecord record, uint64_t seq) {
  changes_[Key(Pool::kPercepts, std::move(id))] =
      Change{Record(std::in_place_type<PerceptRecord>, std::move(record)), seq};
}

void Overlay::PutFlat(Pool pool, std::string id, FlatRecord record, uint64_t seq) {
  changes_[Key(pool, std::move(id))] = Change{Record(std::in_place_type<FlatRecord>, std::move(record)), seq};
}

void Overlay::Delete(Pool pool, std::string id, uint64_t seq) {
  changes_[Key(pool, std::move(id))] = Change{std::nullopt, seq};
}

void Overlay::Absorb(Overlay&& child) {
  for (auto& [key, change] : child.changes_) changes_[key] = std::move(change);
  child.changes_.clear();
}

void Overlay::DropUpTo(uint64_t seq) {
  for (auto it = changes_.begin(); it != changes_.end();) {
    if (it->second.seq <= seq) it = changes_.erase(it);
    else ++it;
  }
}

void Overlay::Forget(const Key& key, uint64_t seq) {
  auto it = changes_.find(key);
  if (it != changes_.end() && it->second.seq <= seq) changes_.erase(it);
}

}  // namespace limbic::state
