#include "state/resident_records.h"

#include <algorithm>
#include <functional>
#include <utility>

namespace limbic::state {

uint64_t ResidentRecords::Hash(Pool pool, std::string_view id) { return PoolIdHash(pool, id); }

size_t ResidentRecords::Cost(const Entry& e) {
  // Short strings live inside the entry (their data inside the object).
  auto heap = [](const std::string& s) {
    const std::less<const char*> before;
    const char* d = s.data();
    const bool inside = !before(d, reinterpret_cast<const char*>(&s)) &&
                        before(d, reinterpret_cast<const char*>(&s + 1));
    return inside ? 0 : s.capacity() + 1;
  };
  return sizeof(Entry) + heap(e.id) + (e.value ? heap(*e.value) : 0);
}

void ResidentRecords::Batch::Add(Pool pool, std::string id, std::optional<std::string> value) {
  const uint64_t hash = Hash(pool, id);
  entries_.push_back(std::make_unique<Entry>(Entry{pool, true, hash, std::move(id), std::move(value)}));
}

ResidentRecords::~ResidentRecords() {
  for (Slot& s : slots_) delete s.entry;
}

const ResidentRecords::Slot& ResidentRecords::Probe(uint64_t hash, Pool pool, std::string_view id) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (!s.entry) return s;
    if (s.hash == hash && s.entry->pool == pool && s.entry->id == id) return s;
  }
}

ResidentRecords::Slot& ResidentRecords::Probe(uint64_t hash, Pool pool, std::string_view id) {
  return const_cast<Slot&>(std::as_const(*this).Probe(hash, pool, id));
}

void ResidentRecords::Grow(size_t size) {
  std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(size));
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (!s.entry) continue;
    size_t i = s.hash & mask;
    while (slots_[i].entry) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

ResidentRecords::Found ResidentRecords::Find(Pool pool, std::string_view id,
                                              std::string_view* value) const {
  const Entry* e = slots_.empty() ? nullptr : Probe(Hash(pool, id), pool, id).entry;
  if (!e) return complete_ ? Found::kAbsent : Found::kAsk;
  if (!e->known) return Found::kAsk;
  if (!e->value) return Found::kAbsent;
  *value = *e->value;
  return Found::kHere;
}

void ResidentRecords::Add(Batch batch) {
  for (std::unique_ptr<Entry>& e : batch.entries_) {
    Slot* s = slots_.empty() ? nullptr : &Probe(e->hash, e->pool, e->id);
    const size_t cost = Cost(*e);
    if (s && s->entry) {
      // A newer version; past the budget only its key stays, to say "ask".
      bytes_ -= Cost(*s->entry);
      delete s->entry;
      s->entry = e.release();
      if (bytes() + cost > budget_) {
        s->entry->known = false;
        s->entry->value.reset();
      }
      bytes_ += Cost(*s->entry);
      continue;
    }
    // At most half full: a probe for an id that is not here stops soon.
    const bool grow = (used_ + 1) * 2 > slots_.size();
    const size_t table = grow ? std::max<size_t>(kMinSlots, slots_.size() * 2) : slots_.size();
    if (bytes_ + cost + table * sizeof(Slot) > budget_) {
      // Not taken in: RocksDB alone has it from now on.
      complete_ = false;
      continue;
    }
    if (grow) {
      Grow(table);
      s = &Probe(e->hash, e->pool, e->id);
    }
    *s = Slot{e->hash, e.release()};
    ++used_;
    bytes_ += cost;
  }
}

}  // namespace limbic::state
