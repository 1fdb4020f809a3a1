// Projection's memory lookups: scans of the M| and S| index entries
// (grammar in pool_layout.h).
#include <rocksdb/db.h>

#include "state/pool_layout.h"
#include "state/projection.h"
#include "state/rocks.h"

namespace limbic::state {
namespace {

// The ids that end the keys under `prefix` (after `skip` more bytes).
Result<std::vector<std::string>> IdsUnder(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                                          const std::string& prefix, size_t skip = 0,
                                          std::string_view upper = {}) {
  std::vector<std::string> out;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), cf));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    std::string_view key = it->key().ToStringView();
    if (!upper.empty() && key.substr(prefix.size(), upper.size()) >= upper) break;
    out.emplace_back(key.substr(prefix.size() + skip));
  }
  LIMBIC_RETURN_IF_ERROR(FromRocks(it->status(), "scanning the memory index"));
  return out;
}

std::string Key(std::initializer_list<std::string_view> parts) {
  std::string k;
  for (auto p : parts) {
    k.append(p);
    k.push_back('\0');
  }
  return k;
}

}  // namespace

Result<std::vector<std::string>> Projection::CurrentFacts(std::string_view ns,
                                                          std::string_view subject,
                                                          std::string_view relation) const {
  return IdsUnder(db_.get(), cf_->index(), "M|f|" + Key({ns, subject, relation}));
}

Result<std::vector<std::string>> Projection::FactsWith(std::string_view field,
                                                       std::string_view value) const {
  const char* tag = field == "object" ? "M|o|" : "M|s|";
  return IdsUnder(db_.get(), cf_->index(), tag + Key({value}));
}

Result<std::vector<std::string>> Projection::MemoriesCreatedBefore(TimeMs t) const {
  return IdsUnder(db_.get(), cf_->index(), "M|c|", 8, Ts8(t));
}

Result<std::optional<std::string>> Projection::FindAssociation(std::string_view a,
                                                               std::string_view relation,
                                                               std::string_view b) const {
  // The first of the triple's associations in byte order of their ids:
  // the same answer whatever order they were applied in.
  std::string prefix = "S|k|" + Key({a, relation, b});
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf_->index()));
  it->Seek(prefix);
  if (it->Valid() && it->key().starts_with(prefix))
    return std::optional<std::string>(it->key().ToString().substr(prefix.size()));
  LIMBIC_RETURN_IF_ERROR(FromRocks(it->status(), "reading the association index"));
  return std::optional<std::string>();
}

Result<std::vector<std::string>> Projection::AssociationsOf(std::string_view entity) const {
  return IdsUnder(db_.get(), cf_->index(), "S|e|" + Key({entity}));
}

}  // namespace limbic::state
