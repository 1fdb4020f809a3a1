#include "state/archive/links.h"

#include <algorithm>
#include <cmath>

#include "state/archive/text.h"

namespace limbic::archive {
namespace {

double Round4(double x) { return std::round(x * 10000.0) / 10000.0; }

bool IsHeader(std::string_view line) {
  return line.size() == 27 && line.starts_with("## ") && line[7] == '-' && line[10] == '-' &&
         line[13] == 'T' && line[16] == ':' && line[19] == ':' && line[22] == '.' &&
         line[26] == 'Z';
}

std::string_view Trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Bytes of the "[name]" tag that starts `line`, or 0 when it has none.
size_t TagLength(std::string_view line) {
  if (line.empty() || line[0] != '[') return 0;
  for (size_t i = 1; i < line.size() && i <= 33; ++i) {
    char c = line[i];
    if (c == ']') return i > 1 ? i + 1 : 0;
    if (c == '[' || c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') return 0;
  }
  return 0;
}

// Term id -> count, open addressing: a document has a few thousand
// distinct terms and this is the inner loop of Verify.
class TermCounter {
 public:
  TermCounter() : slots_(4096) {}
  void Add(uint64_t id) {
    if (2 * (used_ + 1) > slots_.size()) Grow();
    Slot& s = slots_[IndexOf(id)];
    if (s.count == 0) {
      s.id = id;
      ++used_;
    }
    ++s.count;
  }
  uint32_t Count(uint64_t id) const { return slots_[IndexOf(id)].count; }
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const Slot& s : slots_)
      if (s.count) fn(s.id, s.count);
  }
  size_t size() const { return used_; }

 private:
  struct Slot {
    uint64_t id = 0;
    uint32_t count = 0;  // 0: empty
  };
  // The slot holding `id`, or the empty one where it would go.
  size_t IndexOf(uint64_t id) const {
    size_t mask = slots_.size() - 1;
    size_t i = (id * 0x9E3779B97F4A7C15ull) >> 20 & mask;
    while (slots_[i].count != 0 && slots_[i].id != id) i = (i + 1) & mask;
    return i;
  }
  void Grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old)
      if (s.count) slots_[IndexOf(s.id)] = s;
  }
  std::vector<Slot> slots_;
  size_t used_ = 0;
};

template <size_t N>
std::array<uint64_t, N> Ids(const std::array<std::string_view, N>& words) {
  std::array<uint64_t, N> ids;
  for (size_t i = 0; i < N; ++i) ids[i] = TermId(words[i]);
  return ids;
}

// The best `k` candidates of one document, best first.
class TopK {
 public:
  explicit TopK(size_t k) : k_(k) {}
  // Higher `key` first, then the smaller index (the earlier date).
  void Offer(double key, uint32_t index, double value) {
    if (k_ == 0) return;
    auto better = [](const Item& a, const Item& b) {
      return a.key > b.key || (a.key == b.key && a.index < b.index);
    };
    Item item{key, index, value};
    if (items_.size() == k_ && !better(item, items_.back())) return;
    items_.insert(std::upper_bound(items_.begin(), items_.end(), item, better), item);
    if (items_.size() > k_) items_.pop_back();
  }
  struct Item {
    double key;
    uint32_t index;
    double value;
  };
  const std::vector<Item>& items() const { return items_; }

 private:
  size_t k_;
  std::vector<Item> items_;
};

}  // namespace

uint64_t TermId(std::string_view term) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : term) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

Features ComputeFeatures(std::string_view content) {
  static const auto kPositive = Ids(kPositiveWords);
  static const auto kNegative = Ids(kNegativeWords);
  TermCounter counter;
  uint64_t turns = 0, turn_bytes = 0, paragraphs = 0, paragraph_bytes = 0;
  bool in_turn = false, in_paragraph = false;
  size_t start = 0;
  while (start <= content.size()) {
    size_t nl = content.find('\n', start);
    if (nl == std::string_view::npos) nl = content.size();
    std::string_view line = content.substr(start, nl - start);
    start = nl + 1;
    if (IsHeader(line)) {
      in_turn = in_paragraph = false;
      continue;
    }
    ForEachTerm(line, [&](std::string_view term) { counter.Add(TermId(term)); });
    std::string_view trimmed = Trim(line);
    if (trimmed.empty()) {
      in_paragraph = false;  // a turn goes on over blank lines
      continue;
    }
    if (!in_paragraph) ++paragraphs;
    in_paragraph = true;
    paragraph_bytes += trimmed.size();
    if (size_t tag = TagLength(line)) {
      ++turns;
      in_turn = true;
      turn_bytes += Trim(line.substr(tag)).size();
    } else if (in_turn) {
      turn_bytes += trimmed.size();
    }
  }

  Features f;
  double avg = turns ? double(turn_bytes) / double(turns)
               : paragraphs ? double(paragraph_bytes) / double(paragraphs)
                            : 0.0;
  f.engagement = avg / (avg + kEngagementHalf);
  uint64_t pos = 0, neg = 0;
  for (uint64_t id : kPositive) pos += counter.Count(id);
  for (uint64_t id : kNegative) neg += counter.Count(id);
  f.sentiment = (double(pos) - double(neg)) / double(pos + neg + 2);

  f.terms.reserve(counter.size());
  counter.ForEach([&](uint64_t id, uint32_t n) { f.terms.emplace_back(id, n); });
  if (f.terms.size() > kTermCap) {
    auto more_frequent = [](const auto& a, const auto& b) {
      return a.second > b.second || (a.second == b.second && a.first < b.first);
    };
    std::nth_element(f.terms.begin(), f.terms.begin() + kTermCap, f.terms.end(), more_frequent);
    f.terms.resize(kTermCap);
  }
  std::sort(f.terms.begin(), f.terms.end());
  for (const auto& [id, n] : f.terms) f.norm2 += uint64_t{n} * n;
  return f;
}

namespace {
double Cosine(uint64_t dot, const Features& a, const Features& b) {
  if (dot == 0) return 0;
  return Round4(double(dot) / std::sqrt(double(a.norm2) * double(b.norm2)));
}
}  // namespace

double SemanticScore(const Features& a, const Features& b) {
  uint64_t dot = 0;
  auto i = a.terms.begin(), j = b.terms.begin();
  while (i != a.terms.end() && j != b.terms.end()) {
    if (i->first < j->first) {
      ++i;
    } else if (j->first < i->first) {
      ++j;
    } else {
      dot += uint64_t{i->second} * j->second;
      ++i, ++j;
    }
  }
  return Cosine(dot, a, b);
}

double SocialDelta(const Features& from, const Features& to) {
  double d = 0.6 * (to.engagement - from.engagement) + 0.4 * (to.sentiment - from.sentiment);
  return Round4(std::clamp(d, -1.0, 1.0));
}

std::vector<Links> ComputeLinks(const std::vector<std::string>& dates,
                                const std::vector<const Features*>& features,
                                const LinkOptions& options) {
  const size_t n = dates.size();
  std::vector<Links> links(n);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) links[i].prev = dates[i - 1];
    if (i + 1 < n) links[i].next = dates[i + 1];
  }

  // Semantic, through an inverted index: each pair sharing a term is met
  // once per shared term, and pairs sharing none are never met.
  struct Posting {
    uint64_t id;
    uint32_t doc, count;
  };
  std::vector<Posting> postings;
  for (size_t d = 0; d < n; ++d) {
    if (!features[d]) continue;
    for (const auto& [id, count] : features[d]->terms)
      postings.push_back({id, static_cast<uint32_t>(d), count});
  }
  std::sort(postings.begin(), postings.end(), [](const Posting& a, const Posting& b) {
    return a.id < b.id || (a.id == b.id && a.doc < b.doc);
  });
  std::vector<uint32_t> group_end(postings.size());
  std::vector<std::vector<uint32_t>> own(n);  // doc -> its postings
  for (size_t p = postings.size(); p-- > 0;) {
    bool last = p + 1 == postings.size() || postings[p + 1].id != postings[p].id;
    group_end[p] = last ? static_cast<uint32_t>(p + 1) : group_end[p + 1];
    own[postings[p].doc].push_back(static_cast<uint32_t>(p));
  }
  std::vector<TopK> semantic(n, TopK(options.semantic_k));
  std::vector<uint64_t> dot(n, 0);
  std::vector<uint32_t> touched;
  for (size_t i = 0; i < n; ++i) {
    for (uint32_t p : own[i]) {
      const uint64_t ci = postings[p].count;
      for (uint32_t q = p + 1; q < group_end[p]; ++q) {
        uint32_t j = postings[q].doc;
        if (dot[j] == 0) touched.push_back(j);
        dot[j] += ci * postings[q].count;
      }
    }
    for (uint32_t j : touched) {
      double score = Cosine(dot[j], *features[i], *features[j]);
      dot[j] = 0;
      if (score < options.semantic_min || score <= 0) continue;
      semantic[i].Offer(score, j, score);
      semantic[j].Offer(score, static_cast<uint32_t>(i), score);
    }
    touched.clear();
  }

  std::vector<TopK> social(n, TopK(options.social_k));
  for (size_t i = 0; i < n; ++i) {
    if (!features[i]) continue;
    for (size_t j = 0; j < n; ++j) {
      if (j == i || !features[j]) continue;
      double delta = SocialDelta(*features[i], *features[j]);
      if (delta != 0) social[i].Offer(std::fabs(delta), static_cast<uint32_t>(j), delta);
    }
  }

  for (size_t i = 0; i < n; ++i) {
    for (const auto& item : semantic[i].items())
      links[i].semantic.push_back({dates[item.index], item.value});
    for (const auto& item : social[i].items())
      links[i].social.push_back(
          {dates[item.index], item.value > 0 ? "inward" : "outward", item.value});
  }
  return links;
}

}  // namespace limbic::archive
