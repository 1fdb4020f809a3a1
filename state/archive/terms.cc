#include "state/archive/terms.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "state/archive/links.h"
#include "state/archive/text.h"

namespace limbic::archive {
namespace {

constexpr uint64_t kHighBits = 0x8080808080808080ull;
constexpr uint64_t kCaseBits = 0x2020202020202020ull;

// Little-endian loads, so term ids are the same on every machine.
uint64_t Load8(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}
uint64_t LoadPartial(const char* p, size_t n) {  // n < 8; the rest zero
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}
uint64_t LowBytes(size_t n) { return n >= 8 ? ~0ull : (1ull << (8 * n)) - 1; }

uint64_t HashStart(size_t size) { return 0x243F6A8885A308D3ull ^ (size * 0x9E3779B97F4A7C15ull); }
uint64_t HashMix(uint64_t h, uint64_t chunk) {
  h = (h ^ chunk) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}
uint64_t HashFinish(uint64_t h) {
  h ^= h >> 32;
  h *= 0xD6E8FEB86659FD93ull;
  return h ^ (h >> 32);
}

bool IsAsciiWordByte(unsigned char c) { return c < 0x80 && detail::IsAsciiWord(c); }

// Bit i set when p[i] can be part of a term: an ASCII letter or digit, or
// any byte >= 0x80 (whether that is UTF-8 is decided per run), for the 64
// bytes at p.
uint64_t RunMask64(const char* p) {
#if defined(__SSE2__)
  uint64_t mask = 0;
  for (int k = 0; k < 4; ++k) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    // x in [lo, lo + n] as unsigned bytes: min(x - lo, n) == x - lo.
    auto in_range = [](__m128i y, char n) {
      return _mm_cmpeq_epi8(_mm_min_epu8(y, _mm_set1_epi8(n)), y);
    };
    __m128i digit = in_range(_mm_sub_epi8(v, _mm_set1_epi8('0')), 9);
    __m128i letter =
        in_range(_mm_sub_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)), _mm_set1_epi8('a')), 25);
    uint32_t bits = static_cast<uint32_t>(_mm_movemask_epi8(_mm_or_si128(digit, letter)) |
                                          _mm_movemask_epi8(v));
    mask |= uint64_t{bits} << (16 * k);
  }
  return mask;
#else
  uint64_t mask = 0;
  for (int i = 0; i < 64; ++i) {
    unsigned char c = static_cast<unsigned char>(p[i]);
    if (c >= 0x80 || detail::IsAsciiWord(c)) mask |= 1ull << i;
  }
  return mask;
#endif
}

// IsStopWord with a per-thread memo for terms of up to 8 bytes (keyed by
// the bytes themselves, so exact): the same few hundred frequent words come
// up in every document, and the memo spares their binary search.
bool IsStopWordMemo(std::string_view term) {
  if (term.size() > 8) return IsStopWord(term);
  thread_local std::vector<uint64_t> keys(4096, 0);  // 0: empty (terms have no NUL)
  thread_local std::vector<bool> stop(4096);
  thread_local size_t used = 0;
  const uint64_t key = LoadPartial(term.data(), std::min<size_t>(term.size(), 7)) |
                       (term.size() == 8 ? uint64_t{static_cast<unsigned char>(term[7])} << 56 : 0);
  size_t i = HashFinish(key) & (keys.size() - 1);
  while (keys[i] != 0 && keys[i] != key) i = (i + 1) & (keys.size() - 1);
  if (keys[i] == key) return stop[i];
  bool is_stop = IsStopWord(term);
  if (2 * ++used > keys.size()) {  // full enough: start over
    std::fill(keys.begin(), keys.end(), 0);
    used = 1;
    i = HashFinish(key) & (keys.size() - 1);
  }
  keys[i] = key;
  stop[i] = is_stop;
  return is_stop;
}

}  // namespace

uint64_t TermId(std::string_view term) {
  uint64_t h = HashStart(term.size());
  size_t i = 0;
  for (; i + 8 <= term.size(); i += 8) h = HashMix(h, Load8(term.data() + i));
  if (i < term.size()) h = HashMix(h, LoadPartial(term.data() + i, term.size() - i));
  return HashFinish(h);
}

TermCounter::TermCounter(std::string_view content) : content_(content), index_(8192, 0) {
  terms_.reserve(std::max<size_t>(1024, content.size() / 16));
}

// The common case inline: a term of 2..16 ASCII bytes, one or two loads.
inline void TermCounter::OnRun(size_t begin, size_t end) {
  const size_t size = end - begin;
  if (size - 2 <= 14 && begin + 16 <= content_.size()) {
    const char* p = content_.data() + begin;
    if (size <= 8) {
      const uint64_t low = ~0ull >> (64 - 8 * size);
      const uint64_t c = Load8(p) & low;
      if ((c & kHighBits) == 0) {
        Add(HashFinish(HashMix(HashStart(size), (c | kCaseBits) & low)), begin);
        return;
      }
    } else {
      const uint64_t low = ~0ull >> (128 - 8 * size);
      const uint64_t c0 = Load8(p), c1 = Load8(p + 8) & low;
      if (((c0 | c1) & kHighBits) == 0) {
        uint64_t h = HashMix(HashStart(size), c0 | kCaseBits);
        Add(HashFinish(HashMix(h, (c1 | kCaseBits) & low)), begin);
        return;
      }
    }
  }
  if (size >= 2) Run(begin, end);
}

void TermCounter::Scan(size_t begin, size_t end) {
  const char* p = content_.data();
  size_t term = SIZE_MAX;  // start of the run that goes on past the chunk
  for (size_t base = begin; base < end; base += 64) {
    const size_t n = std::min<size_t>(64, end - base);
    uint64_t run;
    if (n == 64) {
      run = RunMask64(p + base);
    } else {
      char tail[64] = {};  // no reading past the end
      std::memcpy(tail, p + base, n);
      run = RunMask64(tail) & ((1ull << n) - 1);
    }
    // Walk the runs of set bits; a clear bit ends a run.
    for (;;) {
      if (term == SIZE_MAX) {
        if (run == 0) break;
        int s = std::countr_zero(run);
        term = base + static_cast<size_t>(s);
        run |= (1ull << s) - 1;  // so the end search starts after s
      }
      uint64_t stop = ~run;
      if (stop == 0) break;  // the run goes on into the next chunk
      int e = std::countr_zero(stop);
      OnRun(term, base + static_cast<size_t>(e));
      term = SIZE_MAX;
      run &= e == 63 ? 0 : ~0ull << (e + 1);
    }
  }
  if (term != SIZE_MAX) OnRun(term, end);
}

void TermCounter::Run(size_t begin, size_t end) {
  const char* p = content_.data() + begin;
  const size_t size = end - begin;
  if (size <= 64) {
    // All ASCII, we hope: hash it in place, lower-cased by setting bit 5,
    // which letters need and digits have.
    uint64_t h = HashStart(size), high = 0;
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      uint64_t c = Load8(p + i);
      high |= c;
      h = HashMix(h, c | kCaseBits);
    }
    if (i < size) {
      uint64_t c = begin + i + 8 <= content_.size() ? Load8(p + i) & LowBytes(size - i)
                                                    : LoadPartial(p + i, size - i);
      high |= c;
      h = HashMix(h, (c | kCaseBits) & LowBytes(size - i));
    }
    if ((high & kHighBits) == 0) {
      Add(HashFinish(h), begin);
      return;
    }
  } else if (std::none_of(p, p + size, [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    return;  // longer than a term can be
  }
  // Non-ASCII bytes: byte by byte, as ForEachTerm does.
  std::string term;
  size_t start = begin;
  auto flush = [&](size_t next) {
    if (term.size() >= 2 && term.size() <= 64) Add(TermId(term), start);
    term.clear();
    start = next;
  };
  for (size_t i = begin; i < end;) {
    unsigned char c = static_cast<unsigned char>(content_[i]);
    if (c < 0x80) {
      term.push_back(static_cast<char>(c | 0x20 * (c >= 'A' && c <= 'Z')));
      ++i;
      continue;
    }
    size_t k = detail::Utf8SeqLen(content_, i);
    if (k == 0) {
      flush(i + 1);
      ++i;
      continue;
    }
    term.append(content_.data() + i, k);
    i += k;
  }
  flush(end);
}

inline void TermCounter::Add(uint64_t id, size_t first) {
  const size_t slot = SlotOf(id);
  if (index_[slot]) {
    ++terms_[index_[slot] - 1].count;
  } else {
    Insert(slot, id, first);
  }
}

void TermCounter::Insert(size_t slot, uint64_t id, size_t first) {
  terms_.push_back(Term{id, 1, static_cast<uint32_t>(first)});
  index_[slot] = static_cast<uint32_t>(terms_.size());
  if (2 * terms_.size() > index_.size()) Grow();  // short probes: at most half full
}

uint32_t TermCounter::Count(uint64_t id) const {
  uint32_t at = index_[SlotOf(id)];
  return at ? terms_[at - 1].count : 0;
}

inline size_t TermCounter::SlotOf(uint64_t id) const {
  const size_t mask = index_.size() - 1;
  size_t i = (id >> 20) & mask;  // ids are well mixed already
  while (index_[i] != 0 && terms_[index_[i] - 1].id != id) i = (i + 1) & mask;
  return i;
}

void TermCounter::Grow() {
  index_.assign(index_.size() * 2, 0);
  for (size_t t = 0; t < terms_.size(); ++t) index_[SlotOf(terms_[t].id)] = static_cast<uint32_t>(t + 1);
}

std::vector<std::pair<uint64_t, uint32_t>> TermCounter::Top(size_t cap) const {
  // Whether the term that starts at `first` (lower-cased, ending where
  // ForEachTerm would end it) is a stop word.
  auto is_stop = [&](uint32_t first) {
    std::string term;
    for (size_t i = first; i < content_.size() && term.size() <= 64;) {
      unsigned char c = static_cast<unsigned char>(content_[i]);
      if (c < 0x80) {
        if (!IsAsciiWordByte(c)) break;
        term.push_back(static_cast<char>(c | 0x20 * (c >= 'A' && c <= 'Z')));
        ++i;
        continue;
      }
      size_t k = detail::Utf8SeqLen(content_, i);
      if (k == 0) break;
      term.append(content_.data() + i, k);
      i += k;
    }
    return IsStopWordMemo(term);
  };
  auto more_frequent = [](const Term& a, const Term& b) {
    return a.count > b.count || (a.count == b.count && a.id < b.id);
  };
  // Sorting every distinct term would cost more than counting them: take
  // those at or above the count that a few more than `cap` terms reach
  // (stop words are few), and look further only when stop words crowd
  // them out.
  std::array<size_t, 256> at_least{};  // [c]: terms counted min(count, 255) == c
  for (const Term& t : terms_) ++at_least[std::min<uint32_t>(t.count, 255)];
  for (size_t c = 254; c > 0; --c) at_least[c] += at_least[c + 1];  // now: count >= c
  std::vector<std::pair<uint64_t, uint32_t>> top;
  std::vector<Term> candidates;
  for (size_t want = cap + 64;; want *= 2) {
    uint32_t threshold = 1;
    while (threshold < 255 && at_least[threshold + 1] >= want) ++threshold;
    candidates.clear();
    for (const Term& t : terms_)
      if (t.count >= threshold) candidates.push_back(t);
    if (candidates.size() > want)
      std::nth_element(candidates.begin(), candidates.begin() + static_cast<ptrdiff_t>(want),
                       candidates.end(), more_frequent);
    std::sort(candidates.begin(),
              candidates.begin() + static_cast<ptrdiff_t>(std::min(want, candidates.size())),
              more_frequent);
    top.clear();
    const size_t sorted = std::min(want, candidates.size());
    for (size_t i = 0; i < sorted && top.size() < cap; ++i)
      if (!is_stop(candidates[i].first)) top.emplace_back(candidates[i].id, candidates[i].count);
    if (top.size() == cap || (threshold == 1 && sorted == candidates.size())) break;
  }
  std::sort(top.begin(), top.end());
  return top;
}

}  // namespace limbic::archive
