#include "archive/links.h"

#include <algorithm>
#include <bit>
#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/parallel.h"
#include "archive/terms.h"

namespace limbic::archive {
namespace {

double Round4(double x) { return std::round(x * 10000.0) / 10000.0; }

// The sum of a[t] * b[t] for t < size (a multiple of 4), in 64 bits.
uint64_t Dot(const uint32_t* a, const uint32_t* b, size_t size) {
#if defined(__SSE2__)
  // Two 32 x 32 -> 64-bit products per multiply: the even lanes, then the
  // odd ones shifted down.
  __m128i sum = _mm_setzero_si128();
  for (size_t t = 0; t < size; t += 4) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + t));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + t));
    sum = _mm_add_epi64(sum, _mm_mul_epu32(x, y));
    sum = _mm_add_epi64(sum, _mm_mul_epu32(_mm_srli_epi64(x, 32), _mm_srli_epi64(y, 32)));
  }
  return static_cast<uint64_t>(_mm_cvtsi128_si64(sum)) +
         static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sum, sum)));
#else
  uint64_t sum = 0;
  for (size_t t = 0; t < size; ++t) sum += uint64_t{a[t]} * b[t];
  return sum;
#endif
}

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

Features ComputeFeatures(std::string_view content) {
  static const auto kPositive = Ids(kPositiveWords);
  static const auto kNegative = Ids(kNegativeWords);
  TermCounter counter(content);
  size_t body = 0;  // start of the text since the last header
  uint64_t turns = 0, turn_bytes = 0, paragraphs = 0, paragraph_bytes = 0;
  bool in_turn = false, in_paragraph = false;
  size_t start = 0;
  while (start <= content.size()) {
    size_t nl = content.find('\n', start);
    if (nl == std::string_view::npos) nl = content.size();
    std::string_view line = content.substr(start, nl - start);
    start = nl + 1;
    if (IsHeader(line)) {
      const size_t at = static_cast<size_t>(line.data() - content.data());
      counter.Scan(body, at);
      body = std::min(start, content.size());
      in_turn = in_paragraph = false;
      continue;
    }
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

  counter.Scan(body, content.size());

  Features f;
  double avg = turns ? double(turn_bytes) / double(turns)
               : paragraphs ? double(paragraph_bytes) / double(paragraphs)
                            : 0.0;
  f.engagement = avg / (avg + kEngagementHalf);
  uint64_t pos = 0, neg = 0;
  for (uint64_t id : kPositive) pos += counter.Count(id);
  for (uint64_t id : kNegative) neg += counter.Count(id);
  f.sentiment = (double(pos) - double(neg)) / double(pos + neg + 2);

  f.terms = counter.Top(kTermCap);
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

namespace {

// The semantic index: postings grouped by term, in document order within a
// group; each pair sharing a term is met once per shared term, and pairs
// sharing none are never met. Terms most documents share are columns of a
// dense matrix instead (see PostingIndex::Build).
struct PostingIndex {
  struct Posting {
    uint32_t doc, count;
  };
  std::vector<Posting> postings;   // grouped by term
  std::vector<uint32_t> group_end;  // per posting: the end of its term's group
  std::vector<std::vector<uint32_t>> own;  // doc -> its postings of terms not in `dense`
  size_t stride = 0;  // dense columns, rounded up to 4
  std::vector<uint32_t> dense;  // [doc * stride + column]: the term's count

  static PostingIndex Build(const std::vector<const Features*>& features);
};

// Groups the postings by term (a flat id -> group table and a counting
// sort). *group_of: each posting's group, in (doc, term) order; returns
// each group's start, and one more entry: the end of the last.
std::vector<uint32_t> GroupByTerm(const std::vector<const Features*>& features,
                                  std::vector<uint32_t>* group_of) {
  const size_t n = features.size();
  // Sized for the distinct terms, not the postings (documents share most
  // of their terms: a table for every posting would be megabytes to zero).
  std::vector<uint64_t> table_id(1024);
  std::vector<uint32_t> table_group(table_id.size(), UINT32_MAX);
  std::vector<uint64_t> group_id;  // group -> its term
  auto slot_of = [&](uint64_t id) {
    const size_t mask = table_id.size() - 1;
    size_t slot = (id >> 20) & mask;
    while (table_group[slot] != UINT32_MAX && table_id[slot] != id) slot = (slot + 1) & mask;
    return slot;
  };
  std::vector<uint32_t> group_start;  // sizes first, then starts
  for (size_t d = 0; d < n; ++d) {
    if (!features[d]) continue;
    for (const auto& [id, count] : features[d]->terms) {
      size_t slot = slot_of(id);
      if (table_group[slot] == UINT32_MAX) {
        if (2 * (group_id.size() + 1) > table_id.size()) {  // at most half full
          table_id.assign(table_id.size() * 2, 0);
          table_group.assign(table_id.size(), UINT32_MAX);
          for (uint32_t g = 0; g < group_id.size(); ++g) {
            const size_t at = slot_of(group_id[g]);
            table_id[at] = group_id[g];
            table_group[at] = g;
          }
          slot = slot_of(id);
        }
        table_id[slot] = id;
        table_group[slot] = static_cast<uint32_t>(group_id.size());
        group_id.push_back(id);
        group_start.push_back(0);
      }
      group_of->push_back(table_group[slot]);
      ++group_start[table_group[slot]];
    }
  }
  group_start.push_back(0);
  for (size_t g = 0, sum = 0; g < group_start.size(); ++g) {
    size_t size = group_start[g];
    group_start[g] = static_cast<uint32_t>(sum);
    sum += size;
  }
  return group_start;
}

PostingIndex PostingIndex::Build(const std::vector<const Features*>& features) {
  const size_t n = features.size();
  size_t total = 0;
  for (size_t d = 0; d < n; ++d) total += features[d] ? features[d]->terms.size() : 0;
  std::vector<uint32_t> group_of;  // per posting, in (doc, term) order
  group_of.reserve(total);
  const std::vector<uint32_t> group_start = GroupByTerm(features, &group_of);
  // A term most documents share is met by nearly every pair: its pairs are
  // cheaper as a column of a dense matrix (a row of counts per document; a
  // pair's share of its dot product is a vectorised dot product of rows,
  // which costs every pair one multiply per column but runs several times
  // faster than the scattered adds of postings, which cost df^2 / 2): the
  // terms of a third of the documents or more. Which terms go where
  // changes only the order of the additions, and integer sums do not
  // depend on it.
  size_t known = 0;
  for (size_t d = 0; d < n; ++d) known += features[d] != nullptr;
  std::vector<uint32_t> column(group_start.size() - 1, UINT32_MAX);  // group -> dense column
  size_t columns = 0;
  for (size_t g = 0; g + 1 < group_start.size(); ++g) {
    const size_t df = group_start[g + 1] - group_start[g];
    if (known >= 16 && 3 * df >= known) column[g] = static_cast<uint32_t>(columns++);
  }
  PostingIndex index;
  index.stride = (columns + 3) / 4 * 4;  // at most 600: 200 terms a document
  index.dense.assign(n * index.stride, 0);
  index.postings.resize(total);
  index.group_end.resize(total);
  index.own.resize(n);
  std::vector<uint32_t> next(group_start.begin(), group_start.end() - 1);
  size_t k = 0;
  for (size_t d = 0; d < n; ++d) {
    if (!features[d]) continue;
    index.own[d].reserve(features[d]->terms.size());
    for (const auto& term : features[d]->terms) {
      uint32_t g = group_of[k++];
      uint32_t p = next[g]++;
      index.postings[p] = {static_cast<uint32_t>(d), term.second};
      index.group_end[p] = group_start[g + 1];
      if (column[g] != UINT32_MAX) {
        index.dense[d * index.stride + column[g]] = term.second;
      } else {
        index.own[d].push_back(p);
      }
    }
  }
  return index;
}

// Each document's best semantic and social targets, by index.
struct BestTargets {
  std::vector<TopK> semantic;
  std::vector<TopK> social;
};

// Rows run in parallel. A pair is met in the row of its earlier document
// and offered to both documents' best-k lists of that worker; the workers'
// lists are merged after (the order is total, so the best k of a union are
// the best k of the parts' best k).
BestTargets ScoreRows(const std::vector<const Features*>& features, const PostingIndex& index,
                      const LinkOptions& options) {
  const size_t n = features.size();
  struct Worker {
    std::vector<uint64_t> dot;  // row i's dot products with the later documents
    std::vector<TopK> semantic;
  };
  std::vector<Worker> workers(ParallelWorkers(n));
  for (Worker& w : workers) {
    w.dot.assign(n, 0);
    w.semantic.assign(n, TopK(options.semantic_k));
  }
  BestTargets best{std::vector<TopK>(n, TopK(options.semantic_k)),
                   std::vector<TopK>(n, TopK(options.social_k))};
  const auto& postings = index.postings;
  const auto& group_end = index.group_end;
  const auto& dense = index.dense;
  const size_t stride = index.stride;
  ParallelForWorkers(n, [&](size_t i, size_t worker) {
    if (!features[i]) return;
    Worker& w = workers[worker];
    // The inner loop of the whole archive's links: keep it branch-free.
    uint64_t* dot = w.dot.data();
    for (uint32_t p : index.own[i]) {
      const uint64_t ci = postings[p].count;
      for (uint32_t q = p + 1; q < group_end[p]; ++q) dot[postings[q].doc] += ci * postings[q].count;
    }
    if (stride > 0) {
      const uint32_t* row = dense.data() + i * stride;
      for (size_t j = i + 1; j < n; ++j) dot[j] += Dot(row, dense.data() + j * stride, stride);
    }
    for (size_t j = i + 1; j < n; ++j) {
      if (dot[j] == 0) continue;
      double score = Cosine(dot[j], *features[i], *features[j]);
      dot[j] = 0;
      if (score < options.semantic_min || score <= 0) continue;
      w.semantic[i].Offer(score, static_cast<uint32_t>(j), score);
      w.semantic[j].Offer(score, static_cast<uint32_t>(i), score);
    }

    // Social links need the whole row, so each row is its own.
    for (size_t j = 0; j < n; ++j) {
      if (j == i || !features[j]) continue;
      // COMB's sign: the document's change since its target (links.h).
      double delta = SocialDelta(*features[j], *features[i]);
      if (delta != 0) best.social[i].Offer(std::fabs(delta), static_cast<uint32_t>(j), delta);
    }
  });
  for (const Worker& w : workers)
    for (size_t i = 0; i < n; ++i)
      for (const auto& item : w.semantic[i].items()) best.semantic[i].Offer(item.key, item.index, item.value);
  return best;
}

}  // namespace

std::vector<Links> ComputeLinks(const std::vector<std::string>& dates,
                                const std::vector<const Features*>& features,
                                const LinkOptions& options) {
  const size_t n = dates.size();
  std::vector<Links> links(n);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) links[i].prev = dates[i - 1];
    if (i + 1 < n) links[i].next = dates[i + 1];
  }
  const BestTargets best = ScoreRows(features, PostingIndex::Build(features), options);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& item : best.semantic[i].items())
      links[i].semantic.push_back({dates[item.index], item.value});
    for (const auto& item : best.social[i].items())
      links[i].social.push_back(
          {dates[item.index], item.value > 0 ? "inward" : "outward", item.value});
  }
  return links;
}

}  // namespace limbic::archive
