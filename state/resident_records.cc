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
  entries_.push_back(std::make_unique<Entry>(Entry{pool, hash, std::move(id), std::move(value)}));
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

void ResidentRecords::Unlink(Slot& slot) {
  // Linear probing's deletion, without tombstones: a later slot fills the
  // hole unless its home lies cyclically in (hole, j].
  const size_t mask = slots_.size() - 1;
  size_t hole = static_cast<size_t>(&slot - slots_.data());
  slots_[hole] = Slot();
  for (size_t j = (hole + 1) & mask; slots_[j].entry; j = (j + 1) & mask) {
    const size_t home = slots_[j].hash & mask;
    const bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (stays) continue;
    slots_[hole] = slots_[j];
    slots_[j] = Slot();
    hole = j;
  }
}

void ResidentRecords::PushNewest(Entry* e) {
  e->older = newest_;
  e->newer = nullptr;
  if (newest_) newest_->newer = e;
  else oldest_ = e;
  newest_ = e;
}

void ResidentRecords::Detach(Entry* e) {
  if (e->older) e->older->newer = e->newer;
  else oldest_ = e->newer;
  if (e->newer) e->newer->older = e->older;
  else newest_ = e->older;
  e->older = e->newer = nullptr;
}

void ResidentRecords::KeepLetGo(uint64_t hash) {
  if (!complete_) return;
  hash = hash ? hash : 1;
  if ((let_go_used_ + 1) * 2 > let_go_.size()) {
    const size_t size = std::max<size_t>(64, let_go_.size() * 2);
    if (size * sizeof(uint64_t) > budget_ / 2) {
      // The hashes would take more than half the budget: the records are
      // worth more. RocksDB answers for every record not held from now on.
      GiveUpComplete();
      return;
    }
    std::vector<uint64_t> old = std::exchange(let_go_, std::vector<uint64_t>(size));
    let_go_used_ = 0;
    for (uint64_t h : old)
      if (h) KeepLetGo(h);
  }
  const size_t mask = let_go_.size() - 1;
  size_t i = hash & mask;
  for (; let_go_[i]; i = (i + 1) & mask)
    if (let_go_[i] == hash) return;
  let_go_[i] = hash;
  ++let_go_used_;
}

void ResidentRecords::GiveUpComplete() {
  complete_ = false;
  std::vector<uint64_t>().swap(let_go_);
  let_go_used_ = 0;
}

bool ResidentRecords::WasLetGo(uint64_t hash) const {
  if (let_go_.empty()) return false;
  hash = hash ? hash : 1;
  const size_t mask = let_go_.size() - 1;
  for (size_t i = hash & mask; let_go_[i]; i = (i + 1) & mask)
    if (let_go_[i] == hash) return true;
  return false;
}

ResidentRecords::Found ResidentRecords::Find(Pool pool, std::string_view id,
                                              std::string_view* value) const {
  const uint64_t hash = Hash(pool, id);
  const Entry* e = slots_.empty() ? nullptr : Probe(hash, pool, id).entry;
  if (e) {
    if (!e->value) return Found::kAbsent;
    *value = *e->value;
    return Found::kHere;
  }
  // A hash kept may be another key's too: then RocksDB answers "absent".
  return complete_ && !WasLetGo(hash) ? Found::kAbsent : Found::kAsk;
}

void ResidentRecords::Remove(Slot& slot) {
  Entry* e = slot.entry;
  // Its hash first: should keeping it fail, nothing has changed yet. A
  // deleted record leaves no trace: absent here is absent there.
  if (e->value) KeepLetGo(e->hash);
  Detach(e);
  Unlink(slot);
  --used_;
  bytes_ -= Cost(*e);
  delete e;
}

void ResidentRecords::LetGoOldest() {
  while (bytes() > budget_) {
    if (!oldest_) {
      // Nothing left to let go but the hashes: the DB alone knows.
      GiveUpComplete();
      if (bytes() > budget_) std::vector<Slot>().swap(slots_);
      return;
    }
    Remove(Probe(oldest_->hash, oldest_->pool, oldest_->id));
  }
}

void ResidentRecords::Add(Batch batch) {
  if (budget_ < kMinTableBytes) {
    // Too small to hold even the table: every read goes to RocksDB.
    complete_ = false;
    return;
  }
  for (std::unique_ptr<Entry>& e : batch.entries_) {
    // At most half full: a probe for an id that is not here stops soon.
    if ((used_ + 1) * 2 > slots_.size()) Grow(std::max<size_t>(kMinSlots, slots_.size() * 2));
    Slot& s = Probe(e->hash, e->pool, e->id);
    const size_t cost = Cost(*e);
    if (cost + slots_.size() * sizeof(Slot) + let_go_.size() * sizeof(uint64_t) > budget_) {
      // Larger than the whole budget: let go of it alone, not of every
      // record before it.
      if (s.entry) Remove(s);
      if (e->value) KeepLetGo(e->hash);
      LetGoOldest();
      continue;
    }
    if (s.entry) {
      // A newer version: it takes the old one's place, as the newest.
      Detach(s.entry);
      bytes_ -= Cost(*s.entry);
      delete s.entry;
      s.entry = e.release();
    } else {
      s = Slot{e->hash, e.release()};
      ++used_;
    }
    bytes_ += cost;
    PushNewest(s.entry);
    LetGoOldest();
  }
}

}  // namespace limbic::state
