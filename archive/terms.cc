#include "archive/terms.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "archive/links.h"
#include "archive/text.h"

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

constexpr uint64_t HashStart(size_t size) { return 0x243F6A8885A308D3ull ^ (size * 0x9E3779B97F4A7C15ull); }
uint64_t HashMix(uint64_t h, uint64_t chunk) {
  h = (h ^ chunk) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}
uint64_t HashFinish(uint64_t h) {
  h ^= h >> 32;
  h *= 0xD6E8FEB86659FD93ull;
  return h ^ (h >> 32);
}

// By a term's length (2..16): its masks and the start of its hash, looked
// up rather than computed: they take a dozen instructions per term.
struct ShortTerm {
  uint64_t start;   // HashStart(size)
  uint64_t m0, m1;  // the bytes of each 8-byte chunk that are the term's
  uint64_t two;     // all ones when there is a second chunk
};
constexpr std::array<ShortTerm, 17> MakeShortTerms() {
  std::array<ShortTerm, 17> t{};
  for (size_t size = 2; size <= 16; ++size) {
    t[size].start = HashStart(size);
    t[size].m0 = size >= 8 ? ~0ull : (1ull << (8 * size)) - 1;
    t[size].m1 = size <= 8 ? 0 : size == 16 ? ~0ull : (1ull << (8 * (size - 8))) - 1;
    t[size].two = size > 8 ? ~0ull : 0;
  }
  return t;
}
constexpr std::array<ShortTerm, 17> kShortTerms = MakeShortTerms();

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

// A filter of the stop words' TermIds: bit (id >> 50) is set for each. A
// term whose bit is clear is not a stop word; one whose bit is set is
// looked up by its bytes (the stop words and ~1 in 250 other terms).
class StopFilter {
 public:
  StopFilter() {
    for (std::string_view w : StopWords()) {
      const uint64_t bit = TermId(w) >> 50;
      bits_[bit / 64] |= 1ull << (bit % 64);
    }
  }
  bool MayBeStop(uint64_t id) const {
    const uint64_t bit = id >> 50;
    return (bits_[bit / 64] >> (bit % 64)) & 1;
  }

 private:
  std::array<uint64_t, (1 << 14) / 64> bits_{};
};

}  // namespace

uint64_t TermId(std::string_view term) {
  uint64_t h = HashStart(term.size());
  size_t i = 0;
  for (; i + 8 <= term.size(); i += 8) h = HashMix(h, Load8(term.data() + i));
  if (i < term.size()) h = HashMix(h, LoadPartial(term.data() + i, term.size() - i));
  return HashFinish(h);
}

TermCounter::TermCounter(std::string_view content) : content_(content) {
  // A 50 KB day holds ~2,000 distinct terms: room for them at a quarter
  // full, so that few terms share a first slot, without growing.
  slots_.resize(std::bit_ceil(std::clamp<size_t>(content.size() / 8, 1024, size_t{1} << 20)));
  order_.resize(slots_.size() / 2 + 1);
}

// The common case inline: a term of 2..16 ASCII bytes, hashed from two
// loads masked to its length. The hash is TermId's (one chunk for up to 8
// bytes, two for more), chosen by masks rather than a branch on the
// length: lengths vary from term to term and would be mispredicted (and
// the compiler makes a branch of ?: here).
inline void TermCounter::OnRun(size_t begin, size_t end) {
  const size_t size = end - begin;
  if (size - 2 <= 14 && begin + 16 <= content_.size()) {
    const char* p = content_.data() + begin;
    const uint64_t c0 = Load8(p), c1 = Load8(p + 8);
    const ShortTerm& t = kShortTerms[size];
    if ((((c0 & t.m0) | (c1 & t.m1)) & kHighBits) == 0) {
      const uint64_t h1 = HashMix(t.start, (c0 | kCaseBits) & t.m0);
      const uint64_t h2 = HashMix(h1, (c1 | kCaseBits) & t.m1);
      Add(HashFinish(h1 ^ ((h1 ^ h2) & t.two)), begin);
      return;
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
    // The run carried from the last chunk ends at the first clear bit:
    // adding 1 clears the set bits below it and sets it.
    if (term != SIZE_MAX) {
      const uint64_t x = run + 1;
      if (x == 0) continue;  // all 64 bytes are word bytes
      OnRun(term, base + static_cast<size_t>(std::countr_zero(x)));
      term = SIZE_MAX;
      run &= x;
    }
    // Each run of set bits, lowest first: adding its lowest bit clears the
    // run and sets the bit after it.
    while (run != 0) {
      const uint64_t x = run + (run & (0 - run));
      const size_t start = base + static_cast<size_t>(std::countr_zero(run));
      if (x == 0) {  // it goes on into the next chunk
        term = start;
        break;
      }
      OnRun(start, base + static_cast<size_t>(std::countr_zero(x)));
      run &= x;
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
  const size_t mask = slots_.size() - 1;
  for (size_t i = (id >> 20) & mask;; i = (i + 1) & mask) {  // ids are well mixed already
    Slot& s = slots_[i];
    // Counting a known term and taking an empty slot (whose id and first
    // are 0) are one path: which of the two it is cannot be predicted, so
    // it is told apart by arithmetic, not branches (which the compiler
    // makes of ?: and ||).
    const uint32_t empty = s.count == 0;
    if (((s.id ^ id) & (uint64_t{empty} - 1)) == 0) {
      s.id = id;
      s.first |= static_cast<uint32_t>(first) & (0u - empty);
      ++s.count;
      order_[used_] = static_cast<uint32_t>(i);
      used_ += empty;
      if (2 * used_ > slots_.size()) Grow();
      return;
    }
  }
}

uint32_t TermCounter::Count(uint64_t id) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = (id >> 20) & mask;; i = (i + 1) & mask) {
    if (slots_[i].count == 0) return 0;
    if (slots_[i].id == id) return slots_[i].count;
  }
}

void TermCounter::Grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  order_.resize(slots_.size() / 2 + 1);
  const size_t mask = slots_.size() - 1;
  for (size_t k = 0; k < used_; ++k) {
    const Slot& s = old[order_[k]];
    size_t i = (s.id >> 20) & mask;
    while (slots_[i].count != 0) i = (i + 1) & mask;
    slots_[i] = s;
    order_[k] = static_cast<uint32_t>(i);
  }
}

bool TermCounter::IsStopAt(uint32_t first) const {
  // The term as ForEachTerm would have it: lower-cased, up to the first
  // byte that is not part of one.
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
  return IsStopWord(term);
}

std::vector<std::pair<uint64_t, uint32_t>> TermCounter::Top(size_t cap) const {
  static const StopFilter kStopFilter;
  // The loops below write every term and advance by bools: which terms
  // are kept cannot be predicted, and a branch per term would cost more
  // than the rest of the loop. Their arrays are not zeroed first.
  struct Item {
    uint64_t id;
    uint32_t count;
  };
  // The terms that are not stop words, and how many have each count
  // (counts of 255 and more share the last bin).
  std::unique_ptr<Item[]> terms(new Item[used_ + 1]);
  std::array<size_t, 257> at_least{};
  size_t n = 0;
  for (size_t k = 0; k < used_; ++k) {
    const Slot& s = slots_[order_[k]];
    const bool stop = kStopFilter.MayBeStop(s.id) && IsStopAt(s.first);
    terms[n] = Item{s.id, s.count};
    n += !stop;
    at_least[std::min<uint32_t>(s.count, 255)] += !stop;
  }
  for (size_t c = 254; c > 0; --c) at_least[c] += at_least[c + 1];  // now: count >= c

  // Sorting them all would cost more than counting them: the `cap` most
  // frequent are those counted more than the count that `cap` of them
  // reach, and the ties at that count with the smallest ids.
  uint32_t threshold = 1;
  while (threshold < 255 && at_least[threshold + 1] >= cap) ++threshold;
  const uint32_t above = threshold < 255 ? threshold : UINT32_MAX;  // all of these are in
  std::unique_ptr<Item[]> top(new Item[n + 1]), ties(new Item[n + 1]);
  size_t in = 0, tied = 0;
  for (size_t k = 0; k < n; ++k) {
    top[in] = ties[tied] = terms[k];
    in += terms[k].count > above;
    tied += std::min<uint32_t>(terms[k].count, 255) == threshold;
  }
  const size_t room = std::min(cap - std::min(cap, in), tied);
  std::nth_element(ties.get(), ties.get() + room, ties.get() + tied, [](const Item& a, const Item& b) {
    return a.count > b.count || (a.count == b.count && a.id < b.id);
  });
  std::copy(ties.get(), ties.get() + room, top.get() + in);
  in += room;
  std::sort(top.get(), top.get() + in, [](const Item& a, const Item& b) { return a.id < b.id; });
  std::vector<std::pair<uint64_t, uint32_t>> out(in);
  for (size_t i = 0; i < in; ++i) out[i] = {top[i].id, top[i].count};
  return out;
}

}  // namespace limbic::archive
