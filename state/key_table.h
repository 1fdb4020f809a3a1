// KeyTable: a hash map from (pool, id) to V, for an Overlay's changes and
// the reads it remembers.
//
// Those maps hold tens of thousands of records in a replay's bulk load, and
// most of the reducer's lookups in them miss (a record read from below).
// An ordered tree walked twenty nodes per lookup, most of them cache misses;
// here a lookup is a probe of a slot array (with the key's hash, so other
// keys are passed without touching them) and one entry.
//
// It offers the part of std::map's interface the overlay uses: find, end,
// emplace, operator[], erase (by key or iterator), at, size, empty, clear,
// and iteration, which visits each entry once in no particular order
// (insertion order while nothing is erased: records created one after the
// other stay side by side). Entries live in a deque: a reference to one
// stays valid while entries are added, until any entry is erased (the
// last entry moves into an erased one's place).
//
// Thread-safety: none; const members may run on several threads at once.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace limbic::state {

// The hash of a (pool, id) key, for the tables keyed by them (KeyTable,
// ResidentRecords).
template <typename PoolT>
uint64_t PoolIdHash(PoolT pool, std::string_view id) {
  return std::hash<std::string_view>()(id) ^
         (uint64_t{static_cast<uint8_t>(pool)} * 0x9E3779B97F4A7C15ull);
}

template <typename PoolT, typename V>
class KeyTable {
 public:
  using Key = std::pair<PoolT, std::string>;
  using value_type = std::pair<Key, V>;
  using iterator = typename std::deque<value_type>::iterator;
  using const_iterator = typename std::deque<value_type>::const_iterator;

  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void clear() {
    entries_.clear();
    slots_.clear();
  }

  iterator find(const Key& key) { return Find(key.first, key.second); }
  const_iterator find(const Key& key) const { return const_cast<KeyTable*>(this)->find(key); }
  iterator Find(PoolT pool, std::string_view id) {
    if (slots_.empty()) return end();
    const uint32_t h = Hash(pool, id);
    for (size_t i = h & mask(); slots_[i].entry != 0; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.hash != h) continue;
      value_type& e = entries_[s.entry - 1];
      if (e.first.first == pool && e.first.second == id) return entries_.begin() + (s.entry - 1);
    }
    return end();
  }
  const_iterator Find(PoolT pool, std::string_view id) const {
    return const_cast<KeyTable*>(this)->Find(pool, id);
  }

  const V& at(const Key& key) const {
    auto it = find(key);
    if (it == end()) throw std::out_of_range("KeyTable::at");
    return it->second;
  }

  // Adds `value` under `key` unless the key is there; the entry, and
  // whether it was added.
  std::pair<iterator, bool> emplace(Key key, V value) {
    auto it = find(key);
    if (it != end()) return {it, false};
    return {Add(std::move(key), std::move(value)), true};
  }
  V& operator[](Key key) {
    auto it = find(key);
    if (it != end()) return it->second;
    return Add(std::move(key), V())->second;
  }

  // Removes the entry; the iterator to go on from (the entry moved into
  // its place, or end).
  iterator erase(iterator it) {
    const size_t at = static_cast<size_t>(it - entries_.begin());
    Unlink(at);
    const size_t last = entries_.size() - 1;
    if (at != last) {
      // The last entry moves into the hole; its slot follows it.
      Slot& moved = slots_[SlotOf(last)];
      moved.entry = static_cast<uint32_t>(at + 1);
      entries_[at] = std::move(entries_[last]);
    }
    entries_.pop_back();
    return entries_.begin() + static_cast<std::ptrdiff_t>(at);
  }

 private:
  struct Slot {
    uint32_t entry = 0;  // index + 1 in entries_; 0 = empty
    uint32_t hash = 0;
  };
  size_t mask() const { return slots_.size() - 1; }

  static uint32_t Hash(PoolT pool, std::string_view id) {
    const uint64_t h = PoolIdHash(pool, id);
    return static_cast<uint32_t>(h ^ (h >> 32));
  }

  iterator Add(Key key, V value) {
    if ((entries_.size() + 1) * 2 > slots_.size()) Grow();
    const uint32_t h = Hash(key.first, key.second);
    entries_.emplace_back(std::move(key), std::move(value));
    Link(entries_.size() - 1, h);
    return entries_.end() - 1;
  }

  void Link(size_t entry, uint32_t h) {
    size_t i = h & mask();
    while (slots_[i].entry != 0) i = (i + 1) & mask();
    slots_[i] = Slot{static_cast<uint32_t>(entry + 1), h};
  }

  // Twice the slots, each entry linked again from the hash its slot kept.
  void Grow() {
    std::vector<Slot> old(slots_.empty() ? 64 : slots_.size() * 2, Slot());
    old.swap(slots_);
    for (const Slot& s : old)
      if (s.entry != 0) Link(s.entry - 1, s.hash);
  }

  // The slot holding entry `entry` (found from its key's hash: erasing is
  // rare, lookups are not).
  size_t SlotOf(size_t entry) const {
    const auto& key = entries_[entry].first;
    size_t i = Hash(key.first, key.second) & mask();
    while (slots_[i].entry != entry + 1) i = (i + 1) & mask();
    return i;
  }

  // Empties entry `entry`'s slot, shifting back the slots after it that
  // probed past it (linear probing's deletion: no tombstones).
  void Unlink(size_t entry) {
    size_t hole = SlotOf(entry);
    slots_[hole] = Slot();
    for (size_t j = (hole + 1) & mask(); slots_[j].entry != 0; j = (j + 1) & mask()) {
      const size_t home = slots_[j].hash & mask();
      // Slot j may fill the hole unless its home lies cyclically in (hole, j].
      const bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
      if (stays) continue;
      slots_[hole] = slots_[j];
      slots_[j] = Slot();
      hole = j;
    }
  }

  std::deque<value_type> entries_;
  std::vector<Slot> slots_;  // a power of two, at most half full; each keeps its entry's hash
};

}  // namespace limbic::state
