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

RecallIndex::RecallIndex(std::string embedder_id, VectorIndexOptions vectors, Bm25Params bm25,
                         std::shared_ptr<const archive::Analyzer> analyzer, ContextParams context)
    : embedder_id_(std::move(embedder_id)),
      bm25_(bm25),
      context_(context),
      analyzer_(analyzer ? std::move(analyzer) : archive::Analyzer::Default()),
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
  if (!slot_of_.count(id)) IndexText(m, Str(rec, "text"));
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

namespace {

// The seq of an id "m-<seq>" (0 for another shape): a stream's order
// among memories created in the same millisecond.
uint64_t SeqOf(const std::string& id) {
  if (id.size() < 3 || id.compare(0, 2, "m-") != 0) return 0;
  uint64_t v = 0;
  for (size_t i = 2; i < id.size(); ++i) {
    if (id[i] < '0' || id[i] > '9' || v > UINT64_MAX / 10 - 10) return 0;
    v = v * 10 + static_cast<uint64_t>(id[i] - '0');
  }
  return v;
}

}  // namespace

void RecallIndex::IndexText(const MemoryMeta& m, std::string_view text) {
  std::unordered_map<uint32_t, uint32_t> tf;
  std::vector<std::string> all;
  analyzer_->Terms(text, &all);
  for (std::string& term : all) {
    auto [it, added] = term_ids_.try_emplace(std::move(term), static_cast<uint32_t>(terms_.size()));
    if (added) terms_.emplace_back();
    ++tf[it->second];
  }
  const uint32_t length = static_cast<uint32_t>(all.size());
  const uint32_t slot = static_cast<uint32_t>(docs_.size());
  // Facts stand alone: no stream, no neighbours, no episode.
  uint32_t stream_id = kNone;
  if (m.kind != "fact") {
    auto [sit, new_stream] = stream_ids_.try_emplace(m.ns + '\0' + m.episode_id,
                                                     static_cast<uint32_t>(streams_.size()));
    if (new_stream) streams_.push_back(Stream{!m.episode_id.empty(), 0, 0, {}});
    stream_id = sit->second;
  }
  Doc doc{m.id, length, true, {}, stream_id, m.created, SeqOf(m.id)};
  doc.terms.reserve(tf.size());
  for (auto [term, count] : tf) {
    terms_[term].postings.emplace_back(slot, count);
    ++terms_[term].df;
    doc.terms.push_back(term);
  }
  docs_.push_back(std::move(doc));
  lengths_.push_back(length);
  prev_.push_back(kNone);
  next_.push_back(kNone);
  stream_of_.push_back(stream_id);
  created_.push_back(m.created);
  if (stream_id != kNone) {
    Stream& stream = streams_[stream_id];
    if (stream.episode) {
      live_episodes_ += stream.live == 0;
      episode_length_ += length;
    }
    ++stream.live;
    stream.length += length;
    Link(stream, stream.order.emplace(std::make_tuple(m.created, docs_.back().seq, slot), slot).first);
  }
  slot_of_[m.id] = slot;
  ++live_;
  total_length_ += length;
}

bool RecallIndex::Near(const Stream& s, uint32_t a, uint32_t b) const {
  if (s.episode) return true;
  const TimeMs gap = created_[a] > created_[b] ? created_[a] - created_[b] : created_[b] - created_[a];
  return context_.window > 0 && gap <= context_.window;
}

void RecallIndex::Pair(const Stream& s, uint32_t before, uint32_t after) {
  const bool near = before != kNone && after != kNone && Near(s, before, after);
  if (before != kNone) next_[before] = near ? after : kNone;
  if (after != kNone) prev_[after] = near ? before : kNone;
}

void RecallIndex::Link(
    const Stream& s, std::map<std::tuple<TimeMs, uint64_t, uint32_t>, uint32_t>::const_iterator at) {
  const uint32_t slot = at->second;
  uint32_t before = kNone, after = kNone;
  if (at != s.order.begin()) before = std::prev(at)->second;
  if (auto n = std::next(at); n != s.order.end()) after = n->second;
  Pair(s, before, slot);
  Pair(s, slot, after);
}

void RecallIndex::UnindexText(const std::string& id) {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return;
  const uint32_t slot = it->second;
  Doc& doc = docs_[slot];
  for (uint32_t term : doc.terms) --terms_[term].df;
  doc.alive = false;
  lengths_[slot] = kDead;
  doc.terms.clear();
  doc.terms.shrink_to_fit();
  if (doc.stream != kNone) {
    Stream& stream = streams_[doc.stream];
    // Its neighbours in the stream become each other's, if near enough.
    auto at = stream.order.find({doc.created, doc.seq, slot});
    uint32_t before = kNone, after = kNone;
    if (at != stream.order.begin()) before = std::prev(at)->second;
    if (auto n = std::next(at); n != stream.order.end()) after = n->second;
    stream.order.erase(at);
    Pair(stream, before, after);
    --stream.live;
    stream.length -= doc.length;
    if (stream.episode) {
      live_episodes_ -= stream.live == 0;
      episode_length_ -= doc.length;
    }
  }
  prev_[slot] = next_[slot] = kNone;
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
  stream_of_.clear();
  created_.clear();
  for (uint32_t i = 0; i < docs_.size(); ++i) {
    slot_of_[docs_[i].id] = i;
    lengths_.push_back(docs_[i].length);
    stream_of_.push_back(docs_[i].stream);
    created_.push_back(docs_[i].created);
  }
  prev_.assign(docs_.size(), kNone);
  next_.assign(docs_.size(), kNone);
  for (Stream& s : streams_) {
    decltype(s.order) order;  // the same order: slots keep theirs
    uint32_t before = kNone;
    for (const auto& [key, old] : s.order) {
      const uint32_t slot = remap[old];
      order.emplace_hint(order.end(), std::make_tuple(std::get<0>(key), std::get<1>(key), slot), slot);
      Pair(s, before, slot);
      before = slot;
    }
    s.order = std::move(order);
  }
  scratch_.clear();
  touched_.clear();
  dead_ = 0;
}

void RecallIndex::Accumulate(const std::set<std::string>& terms, bool episodes) const {
  const double N = static_cast<double>(live_);
  const double avgdl = std::max(1.0, static_cast<double>(total_length_) / N);
  const archive::Bm25Scorer scorer(bm25_.k1, bm25_.b, N, avgdl);
  // Episodes as documents: Okapi's k1 and b (an episode is long).
  const double E = static_cast<double>(std::max<size_t>(1, live_episodes_));
  const archive::Bm25Scorer episode_scorer(
      1.2, 0.75, E, std::max(1.0, static_cast<double>(episode_length_) / E));
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
  if (episodes) {
    episode_score_.resize(streams_.size(), 0.0);
    episode_tf_.resize(streams_.size(), 0.0);
    for (uint32_t e : episodes_touched_) episode_score_[e] = 0;
    episodes_touched_.clear();
  }
  for (const std::string& t : terms) {
    auto it = term_ids_.find(t);
    if (it == term_ids_.end()) continue;
    const Term& term = terms_[it->second];
    if (term.df == 0) continue;
    const double idf = scorer.Idf(term.df);
    term_episodes_.clear();
    for (auto [slot, tf] : term.postings) {
      const uint32_t dl = lengths_[slot];
      if (dl == kDead) continue;
      double& acc = scratch_[slot];
      if (acc == 0) touched_.push_back(slot);
      acc += idf * scorer.TfPart(tf, norm(dl));
      if (episodes && stream_of_[slot] != kNone && streams_[stream_of_[slot]].episode) {
        double& etf = episode_tf_[stream_of_[slot]];
        if (etf == 0) term_episodes_.push_back(stream_of_[slot]);
        etf += tf;
      }
    }
    if (!episodes || term_episodes_.empty()) continue;
    const double eidf = episode_scorer.Idf(static_cast<double>(term_episodes_.size()));
    for (uint32_t e : term_episodes_) {
      double& score = episode_score_[e];
      if (score == 0) episodes_touched_.push_back(e);
      score += eidf * episode_scorer.TfPart(episode_tf_[e],
                                            episode_scorer.Norm(static_cast<double>(streams_[e].length)));
      episode_tf_[e] = 0;
    }
  }
}

std::vector<LexicalHit> RecallIndex::Lexical(std::string_view query, size_t n,
                                             const MetaFilter& filter) const {
  std::vector<LexicalHit> out;
  if (live_ == 0 || n == 0) return out;
  std::vector<std::string> all = analyzer_->Terms(query);
  const std::set<std::string> terms(std::make_move_iterator(all.begin()),
                                    std::make_move_iterator(all.end()));
  const bool episodes = context_.episode > 0 && live_episodes_ > 0;
  Accumulate(terms, episodes);
  // Scores are kept in `unit`s of S*: with episodes, whose part is
  // relative to E*, S* is found first (unit 1/S*); without, scores stay in
  // BM25's units (unit 1) and S*, found on the way, scales the result.
  double best_own = 0, best_episode = 0;
  if (episodes) {
    for (uint32_t slot : touched_) best_own = std::max(best_own, scratch_[slot]);
    for (uint32_t e : episodes_touched_) best_episode = std::max(best_episode, episode_score_[e]);
  }
  const double unit = !episodes ? 1.0 : best_own > 0 ? 1 / best_own : 0;
  const double episode_scale = best_episode > 0 ? context_.episode / best_episode : 0;
  const bool neighbours = context_.neighbours > 0;
  const double neighbour_scale = context_.neighbours * unit;
  struct Parts {
    double neighbours = 0, episode = 0;
  };
  // A candidate's parts, gathered from its neighbours' own scores (zero
  // for the untouched; prev_/next_ hold only neighbours near enough) and
  // its episode's.
  auto parts = [&](uint32_t slot) {
    Parts p;
    if (neighbours) {
      if (const uint32_t o = prev_[slot]; o != kNone) p.neighbours += scratch_[o];
      if (const uint32_t o = next_[slot]; o != kNone) p.neighbours += scratch_[o];
      p.neighbours *= neighbour_scale;
    }
    if (episodes) {
      const uint32_t e = stream_of_[slot];
      if (e != kNone && streams_[e].episode) p.episode = episode_score_[e] * episode_scale;
    }
    return p;
  };
  auto better = [this](const std::pair<double, uint32_t>& a, const std::pair<double, uint32_t>& b) {
    return a.first != b.first ? a.first > b.first : docs_[a.second].id < docs_[b.second].id;
  };
  auto pass = [&](uint32_t slot) {
    if (!filter) return true;
    const MemoryMeta* m = Find(docs_[slot].id);
    return m && filter(*m);
  };
  // The best n, in a bounded heap whose front is the worst kept: first the
  // memories holding a query term.
  using Hit = std::pair<double, uint32_t>;
  std::vector<Hit> heap;
  heap.reserve(n + 1);
  auto offer = [&](double score, uint32_t slot) {
    const Hit h{score, slot};
    if (heap.size() == n && !better(h, heap.front())) return;
    if (!pass(slot)) return;
    heap.push_back(h);
    std::push_heap(heap.begin(), heap.end(), better);
    if (heap.size() > n) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.pop_back();
    }
  };
  for (uint32_t slot : touched_) {
    const double own = scratch_[slot];
    if (!episodes) best_own = std::max(best_own, own);
    const Parts p = parts(slot);
    offer(own * unit + p.neighbours + p.episode, slot);
  }
  // What context alone can give a memory at most, in units.
  const double reach = (neighbours ? 2 * context_.neighbours * (episodes ? 1 : best_own) : 0) +
                       (episodes ? context_.episode : 0);
  // Then the neighbours of the best n so far that hold no query term:
  // they score by their context alone.
  if (neighbours && (heap.size() < n || heap.front().first <= reach)) {
    candidates_.clear();
    for (const auto& [score, slot] : heap)
      for (uint32_t other : {prev_[slot], next_[slot]})
        if (other != kNone && scratch_[other] == 0) candidates_.push_back(other);
    std::sort(candidates_.begin(), candidates_.end());
    candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());
    for (uint32_t slot : candidates_) {
      const Parts p = parts(slot);
      offer(p.neighbours + p.episode, slot);
    }
    candidates_.clear();
  }
  std::sort(heap.begin(), heap.end(), better);
  // To the scale of S* = 1.
  const double to_one = episodes ? 1.0 : best_own > 0 ? 1 / best_own : 0;
  out.reserve(heap.size());
  for (const auto& [score, slot] : heap) {
    const Parts p = parts(slot);
    LexicalHit h;
    h.id = docs_[slot].id;
    h.score = score * to_one;
    h.bm25 = scratch_[slot];
    h.own = best_own > 0 ? scratch_[slot] / best_own : 0;
    h.neighbours = p.neighbours * to_one;
    h.episode = p.episode;
    out.push_back(std::move(h));
  }
  for (uint32_t slot : touched_) scratch_[slot] = 0;
  for (uint32_t e : episodes_touched_) episode_score_[e] = 0;
  touched_.clear();
  episodes_touched_.clear();
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
