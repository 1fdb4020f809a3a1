#include "memory/recall_index.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "archive/search.h"
#include "archive/text.h"
#include "memory/embedder.h"

namespace limbic::memory {
namespace {

std::string Str(const json& rec, const char* key) {
  auto it = rec.find(key);
  return it != rec.end() && it->is_string() ? it->get<std::string>() : std::string();
}

TimeMs Time(const json& rec, const char* key) { return TimeOrZero(Str(rec, key)); }

}  // namespace

RecallIndex::RecallIndex(std::string embedder_id, VectorIndexOptions vectors, Bm25Params bm25)
    : embedder_id_(std::move(embedder_id)),
      bm25_(bm25),
      vector_options_(vectors),
      vectors_(std::make_unique<VectorIndex>(vectors)) {}

void RecallIndex::Put(const json& rec) {
  const std::string id = Str(rec, "id");
  if (id.empty()) return;
  MemoryMeta m;
  m.id = id;
  m.kind = Str(rec, "kind");
  m.ns = Str(rec, "namespace");
  m.episode_id = Str(rec, "episode_id");
  m.document = Str(rec, "document");
  if (auto t = rec.find("tags"); t != rec.end() && t->is_array())
    for (const json& x : *t)
      if (x.is_string()) m.tags.push_back(x.get<std::string>());
  m.strength = rec.value("strength", 1.0);
  m.importance = rec.value("importance", 0.5);
  m.created = Time(rec, "created_at");
  m.last_accessed = Time(rec, "last_accessed_at");
  m.access_count = rec.value("access_count", uint64_t{0});
  m.superseded = rec.contains("superseded_by");
  auto emb = rec.find("embedding");
  if (emb != rec.end() && emb->is_object()) m.embedder = emb->value("embedder", "");
  if (!m.embedder.empty() && m.embedder == embedder_id_) {
    auto v = DecodeVector(emb->value("vector", ""));
    if (v.ok()) EnsureDims(v->size());
    if (v.ok() && vectors_->Upsert(id, rec.value("vector_seq", uint64_t{0}), *v).ok())
      m.embedded = true;
  } else if (vectors_->Contains(id)) {
    vectors_->Remove(id);
  }
  // The text never changes after memory_stored: index it once.
  if (!slot_of_.count(id)) IndexText(id, Str(rec, "text"));
  superseded_ += m.superseded;
  auto [it, added] = meta_.try_emplace(id);
  if (!added) superseded_ -= it->second.superseded;
  it->second = std::move(m);
}

void RecallIndex::EnsureDims(size_t dims) {
  // An embedder's dimension is known once it has answered (openai models
  // differ); an empty index takes the dimension of the first vector.
  if (dims == 0 || dims == vector_options_.dims || vectors_->size() > 0) return;
  vector_options_.dims = dims;
  vectors_ = std::make_unique<VectorIndex>(vector_options_);
}

void RecallIndex::Remove(const std::string& id) {
  if (auto it = meta_.find(id); it != meta_.end()) {
    superseded_ -= it->second.superseded;
    meta_.erase(it);
  }
  vectors_->Remove(id);
  UnindexText(id);
}

const MemoryMeta* RecallIndex::Find(const std::string& id) const {
  auto it = meta_.find(id);
  return it == meta_.end() ? nullptr : &it->second;
}

void RecallIndex::ForEach(const std::function<void(const MemoryMeta&)>& fn) const {
  for (const auto& [id, m] : meta_) fn(m);
}

void RecallIndex::IndexText(const std::string& id, std::string_view text) {
  std::unordered_map<uint32_t, uint32_t> tf;
  uint32_t length = 0;
  archive::ForEachTerm(text, [&](std::string_view term) {
    auto [it, added] =
        term_ids_.try_emplace(std::string(term), static_cast<uint32_t>(terms_.size()));
    if (added) terms_.emplace_back();
    ++tf[it->second];
    ++length;
  });
  const uint32_t slot = static_cast<uint32_t>(docs_.size());
  Doc doc{id, length, true, {}};
  doc.terms.reserve(tf.size());
  for (auto [term, count] : tf) {
    terms_[term].postings.emplace_back(slot, count);
    ++terms_[term].df;
    doc.terms.push_back(term);
  }
  docs_.push_back(std::move(doc));
  lengths_.push_back(length);
  slot_of_[id] = slot;
  ++live_;
  total_length_ += length;
}

void RecallIndex::UnindexText(const std::string& id) {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return;
  Doc& doc = docs_[it->second];
  for (uint32_t term : doc.terms) --terms_[term].df;
  doc.alive = false;
  lengths_[it->second] = kDead;
  doc.terms.clear();
  doc.terms.shrink_to_fit();
  total_length_ -= doc.length;
  --live_;
  ++dead_;
  slot_of_.erase(it);
  if (dead_ > 1024 && dead_ > live_) Compact();
}

void RecallIndex::Compact() {
  std::vector<uint32_t> remap(docs_.size(), UINT32_MAX);
  std::vector<Doc> kept;
  kept.reserve(live_);
  for (uint32_t i = 0; i < docs_.size(); ++i)
    if (docs_[i].alive) {
      remap[i] = static_cast<uint32_t>(kept.size());
      kept.push_back(std::move(docs_[i]));
    }
  for (Term& t : terms_) {
    std::vector<std::pair<uint32_t, uint32_t>> live;
    for (auto [slot, tf] : t.postings)
      if (remap[slot] != UINT32_MAX) live.emplace_back(remap[slot], tf);
    t.postings = std::move(live);
  }
  docs_ = std::move(kept);
  slot_of_.clear();
  lengths_.clear();
  for (uint32_t i = 0; i < docs_.size(); ++i) {
    slot_of_[docs_[i].id] = i;
    lengths_.push_back(docs_[i].length);
  }
  scratch_.clear();
  touched_.clear();
  dead_ = 0;
}

std::vector<std::pair<std::string, double>> RecallIndex::Bm25(std::string_view query, size_t n,
                                                              const MetaFilter& filter) const {
  std::vector<std::pair<std::string, double>> out;
  if (live_ == 0 || n == 0) return out;
  std::set<std::string> terms;  // distinct, in byte order: equal documents score equal
  archive::ForEachTerm(query, [&](std::string_view t) { terms.emplace(t); });
  const double N = static_cast<double>(live_);
  const double avgdl = std::max(1.0, static_cast<double>(total_length_) / N);
  const archive::Bm25Scorer scorer(bm25_.k1, bm25_.b, N, avgdl);
  // Norm depends only on dl: computed once per length this query meets.
  constexpr uint32_t kTable = 512;
  double norm_of[kTable];
  std::fill(std::begin(norm_of), std::end(norm_of), -1.0);
  auto norm = [&](uint32_t dl) {
    if (dl < kTable && norm_of[dl] >= 0) return norm_of[dl];
    const double v = scorer.Norm(dl);
    if (dl < kTable) norm_of[dl] = v;
    return v;
  };
  // Term at a time into one dense accumulator (scratch_, all zero between
  // calls); touched_ lists the slots it holds scores for.
  scratch_.resize(docs_.size(), 0.0);
  for (uint32_t slot : touched_) scratch_[slot] = 0;  // left by a call that threw
  touched_.clear();
  for (const std::string& t : terms) {
    auto it = term_ids_.find(t);
    if (it == term_ids_.end()) continue;
    const Term& term = terms_[it->second];
    if (term.df == 0) continue;
    const double idf = scorer.Idf(term.df);
    for (auto [slot, tf] : term.postings) {
      const uint32_t dl = lengths_[slot];
      if (dl == kDead) continue;
      double& acc = scratch_[slot];
      if (acc == 0) touched_.push_back(slot);
      acc += idf * scorer.TfPart(tf, norm(dl));
    }
  }
  // The best n, kept in a bounded heap whose top is the worst kept: most
  // documents fail the one comparison against it, and only those that
  // would enter pay for the filter's lookup.
  using Hit = std::pair<double, uint32_t>;  // (score, slot)
  auto better = [this](const Hit& a, const Hit& b) {
    return a.first != b.first ? a.first > b.first : docs_[a.second].id < docs_[b.second].id;
  };
  std::vector<Hit> heap;  // a max-heap under `better`: its front is the worst kept
  heap.reserve(std::min(n, touched_.size()) + 1);
  for (uint32_t slot : touched_) {
    const Hit h{scratch_[slot], slot};
    scratch_[slot] = 0;
    if (heap.size() == n && !better(h, heap.front())) continue;
    if (filter) {
      const MemoryMeta* m = Find(docs_[slot].id);
      if (!m || !filter(*m)) continue;
    }
    heap.push_back(h);
    std::push_heap(heap.begin(), heap.end(), better);
    if (heap.size() > n) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.pop_back();
    }
  }
  std::sort(heap.begin(), heap.end(), better);
  out.reserve(heap.size());
  for (const auto& [s, slot] : heap) out.emplace_back(docs_[slot].id, s);
  return out;
}

std::vector<VectorHit> RecallIndex::Nearest(std::span<const float> query, size_t n, float threshold,
                                            const MetaFilter& filter) const {
  if (!filter) return vectors_->Search(query, n, threshold);
  return vectors_->Search(query, n, threshold, [&](const std::string& id) {
    const MemoryMeta* m = Find(id);
    return m && filter(*m);
  });
}

}  // namespace limbic::memory
