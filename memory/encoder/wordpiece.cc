// Tokenizing: basic tokenization streamed over the text one code point at
// a time, then WordPiece per word. Loading is in wordpiece_files.cc.
#include "memory/encoder/wordpiece.h"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <utility>

namespace limbic::memory::encoder {

namespace {

bool IsWhitespace(int32_t c) {
  if (c < 0x80) return c == ' ' || (c >= '\t' && c <= '\r');
  if (c == 0x85) return true;  // Rust's char::is_whitespace, what HF splits on
  const auto cat = utf8proc_category(c);
  return cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP;
}

// BERT's _is_control: every C* category, so unassigned code points (Cn) go
// too. \t \n \r are whitespace instead.
bool IsControl(int32_t c) {
  if (c < 0x80) return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
      return true;
    default:
      return false;
  }
}

bool IsPunctuation(int32_t c) {
  // All non-alphanumeric ASCII, though "$+<=>^`|~" are not Unicode P*.
  if (c < 0x80)
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
           (c >= 123 && c <= 126);
  const auto cat = utf8proc_category(c);
  return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
}

bool IsChinese(int32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

int CombiningClass(int32_t c) { return c < 0x300 ? 0 : utf8proc_get_property(c)->combining_class; }

void AppendUtf8(int32_t c, std::string* out) {
  std::array<utf8proc_uint8_t, 4> buf;
  const auto n = utf8proc_encode_char(c, buf.data());
  out->append(reinterpret_cast<const char*>(buf.data()), static_cast<size_t>(n));
}

// Buffers one call reuses from word to word (and, thread_local, from call
// to call): no allocation per character once they have grown.
struct Scratch {
  std::vector<int32_t> raw;      // a run of kept code points between spaces
  std::vector<int32_t> norm;     // the run after NFD, stripping, lower-casing
  std::string word;              // one word, UTF-8
  std::vector<uint32_t> starts;  // the byte offset of each of its code points, then its size
  std::string key;               // a piece with the continuing prefix
};

// The most code points (or bytes) of scratch a thread keeps between calls.
constexpr size_t kKeepScratch = 1 << 16;

struct Steps {
  bool clean, chinese, strip, lower;
};

// Step 4 on one run, then step 5's split on punctuation: calls
// emit(word, starts) per word; false when emit did.
template <typename Emit>
bool NormalizeAndSplit(const Steps& steps, Scratch* s, Emit& emit) {
  std::vector<int32_t>& norm = s->norm;
  norm.clear();
  if (steps.strip) {
    for (int32_t c : s->raw) {
      if (c < 0x80) {
        norm.push_back(c);
        continue;
      }
      std::array<utf8proc_int32_t, 8> buf;
      int boundclass = UTF8PROC_BOUNDCLASS_START;
      const auto n =
          utf8proc_decompose_char(c, buf.data(), buf.size(), UTF8PROC_DECOMPOSE, &boundclass);
      if (n <= 0 || static_cast<size_t>(n) > buf.size())
        norm.push_back(c);
      else
        norm.insert(norm.end(), buf.begin(), buf.begin() + n);
    }
    // NFD's canonical ordering: each run of marks of non-zero class sorted,
    // stably, by class. Before the marks are dropped: a dropped class-0 mark
    // ends a run. A stable sort per run, not insertion: a text may hold a
    // run of 500k marks (insertion took minutes on one of 1 MB).
    for (size_t i = 0; i < norm.size();) {
      if (CombiningClass(norm[i]) == 0) {
        ++i;
        continue;
      }
      size_t end = i + 1;
      while (end < norm.size() && CombiningClass(norm[end]) != 0) ++end;
      if (end - i > 1)
        std::stable_sort(norm.begin() + static_cast<ptrdiff_t>(i),
                         norm.begin() + static_cast<ptrdiff_t>(end),
                         [](int32_t a, int32_t b) { return CombiningClass(a) < CombiningClass(b); });
      i = end;
    }
    std::erase_if(
        norm, [](int32_t c) { return c >= 0x300 && utf8proc_category(c) == UTF8PROC_CATEGORY_MN; });
  } else {
    norm = s->raw;
  }

  std::string& word = s->word;
  std::vector<uint32_t>& starts = s->starts;
  word.clear();
  starts.clear();
  auto flush = [&]() -> bool {
    if (word.empty()) return true;
    starts.push_back(static_cast<uint32_t>(word.size()));
    const bool more = emit(std::string_view(word), starts);
    word.clear();
    starts.clear();
    return more;
  };
  for (int32_t c : norm) {
    if (steps.lower) {
      if (c < 0x80) {
        if (c >= 'A' && c <= 'Z') c += 'a' - 'A';
      } else if (c == 0x130) {  // İ: the one code point whose full lower-case mapping is two
        starts.push_back(static_cast<uint32_t>(word.size()));
        word.push_back('i');
        c = 0x307;
      } else {
        c = utf8proc_tolower(c);
      }
    }
    if (IsPunctuation(c)) {
      if (!flush()) return false;
      starts.push_back(0);
      AppendUtf8(c, &word);
      if (!flush()) return false;
      continue;
    }
    starts.push_back(static_cast<uint32_t>(word.size()));
    AppendUtf8(c, &word);
  }
  return flush();
}

// Steps 1-5 over `text`: calls emit(word, starts) per word until it
// returns false.
template <typename Emit>
void ForEachWord(std::string_view text, const Steps& steps, Scratch* s, Emit&& emit) {
  s->raw.clear();
  auto flush = [&]() -> bool {
    if (s->raw.empty()) return true;
    const bool more = NormalizeAndSplit(steps, s, emit);
    s->raw.clear();
    return more;
  };
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    int32_t c = p[i];
    if (c < 0x80) {
      ++i;
    } else {
      const auto len = utf8proc_iterate(p + i, static_cast<utf8proc_ssize_t>(n - i), &c);
      if (len <= 0) c = 0xFFFD;
      i += len <= 0 ? 1 : static_cast<size_t>(len);
    }
    if (steps.clean && (c == 0 || c == 0xFFFD || IsControl(c))) continue;
    if (IsWhitespace(c)) {
      if (!flush()) return;
    } else if (steps.chinese && IsChinese(c)) {
      if (!flush()) return;
      s->raw.push_back(c);
      if (!flush()) return;
    } else {
      s->raw.push_back(c);
    }
  }
  flush();
}

Steps StepsOf(const WordPieceOptions& o) {
  return Steps{o.clean_text, o.chinese_chars, o.strip_accents.value_or(o.lower_case), o.lower_case};
}

}  // namespace

int32_t WordPiece::Id(std::string_view piece) const {
  auto it = ids_.find(piece);
  return it == ids_.end() ? -1 : it->second;
}

void WordPiece::WordPieces(std::string_view word, const std::vector<uint32_t>& starts,
                           std::vector<int32_t>* ids, std::string* key) const {
  const size_t chars = starts.size() - 1;
  if (chars > options_.max_chars_per_word) {
    ids->push_back(unk_);
    return;
  }
  const size_t mark = ids->size();
  size_t start = 0;
  while (start < chars) {
    // No piece is longer than max_piece_bytes_: start at the longest
    // candidate that can match, not at the word's end.
    const size_t most = starts[start] + std::min<size_t>(max_piece_bytes_, word.size());
    size_t end = static_cast<size_t>(
        std::upper_bound(starts.begin() + static_cast<ptrdiff_t>(start) + 1, starts.end(), most) -
        starts.begin() - 1);
    int32_t found = -1;
    for (; end > start; --end) {
      const std::string_view sub = word.substr(starts[start], starts[end] - starts[start]);
      if (start == 0) {
        found = Id(sub);
      } else {
        key->assign(options_.continuing_prefix);
        key->append(sub);
        found = Id(*key);
      }
      if (found >= 0) break;
    }
    if (found < 0) {  // the word does not split completely: one [UNK]
      ids->resize(mark);
      ids->push_back(unk_);
      return;
    }
    ids->push_back(found);
    start = end;
  }
}

void WordPiece::PieceIds(std::string_view text, size_t limit, std::vector<int32_t>* ids) const {
  thread_local Scratch scratch;
  const size_t end = ids->size() + limit;
  if (limit == 0) return;
  ForEachWord(text, StepsOf(options_), &scratch,
              [&](std::string_view word, const std::vector<uint32_t>& starts) {
                WordPieces(word, starts, ids, &scratch.key);
                return ids->size() < end;
              });
  if (ids->size() > end) ids->resize(end);
  // A huge text leaves huge buffers: give them back rather than keep them per thread.
  if (scratch.raw.capacity() > kKeepScratch || scratch.word.capacity() > kKeepScratch)
    scratch = Scratch();
}

std::vector<int32_t> WordPiece::Encode(std::string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(std::min<size_t>(options_.max_length, text.size() / 2 + 8));
  ids.push_back(cls_);
  PieceIds(text, options_.max_length - 2, &ids);
  ids.push_back(sep_);
  return ids;
}

std::vector<std::string> WordPiece::Tokenize(std::string_view text) const {
  std::vector<int32_t> ids;
  PieceIds(text, SIZE_MAX / 2, &ids);
  std::vector<std::string> pieces;
  pieces.reserve(ids.size());
  for (int32_t id : ids) pieces.push_back(Piece(id));
  return pieces;
}

std::vector<std::string> WordPiece::BasicTokens(std::string_view text) const {
  Scratch scratch;
  std::vector<std::string> words;
  ForEachWord(text, StepsOf(options_), &scratch,
              [&](std::string_view word, const std::vector<uint32_t>&) {
                words.emplace_back(word);
                return true;
              });
  return words;
}

}  // namespace limbic::memory::encoder
