// MemoryStore::Recall: hybrid BM25 + vector + archive ranking fused with
// Reciprocal Rank Fusion, weighted by strength and recency (store.h).
#include <algorithm>
#include <map>

#include "memory/store.h"
#include "memory/store_util.h"

namespace limbic::memory {

Result<RecallRequest> ParseRecallRequest(const json& req) {
  LIMBIC_RETURN_IF_ERROR(CheckRequest(req, {"query", "k", "kind", "tag", "namespace", "episode_id",
                                            "explain", "reinforce", "include_superseded"}));
  RecallRequest r;
  auto q = req.find("query");
  if (q == req.end() || !q->is_string() || q->get_ref<const std::string&>().empty())
    return Status::InvalidArgument("field \"query\": must be a non-empty string");
  r.query = q->get<std::string>();
  if (auto k = req.find("k"); k != req.end()) {
    if (!k->is_number_unsigned() || k->get<uint64_t>() < 1 || k->get<uint64_t>() > 1000)
      return Status::InvalidArgument("field \"k\": must be an integer in [1, 1000]");
    r.k = k->get<size_t>();
  }
  auto text = [&](const char* key, std::optional<std::string>* out) -> Status {
    auto it = req.find(key);
    if (it == req.end() || it->is_null()) return Status::OK();
    if (!it->is_string() || it->get_ref<const std::string&>().empty())
      return Status::InvalidArgument(std::string("field \"") + key +
                                     "\": must be a non-empty string");
    *out = it->get<std::string>();
    return Status::OK();
  };
  LIMBIC_RETURN_IF_ERROR(text("kind", &r.kind));
  LIMBIC_RETURN_IF_ERROR(text("tag", &r.tag));
  LIMBIC_RETURN_IF_ERROR(text("namespace", &r.ns));
  LIMBIC_RETURN_IF_ERROR(text("episode_id", &r.episode_id));
  if (r.kind && *r.kind != "fact" && *r.kind != "episode" && *r.kind != "chunk" &&
      *r.kind != "archive" && *r.kind != "staged")
    return Status::InvalidArgument(
        "field \"kind\": must be one of fact, episode, chunk, archive, staged");
  auto flag = [&](const char* key, bool* out) -> Status {
    auto it = req.find(key);
    if (it == req.end()) return Status::OK();
    if (!it->is_boolean())
      return Status::InvalidArgument(std::string("field \"") + key + "\": must be true or false");
    *out = it->get<bool>();
    return Status::OK();
  };
  LIMBIC_RETURN_IF_ERROR(flag("explain", &r.explain));
  LIMBIC_RETURN_IF_ERROR(flag("reinforce", &r.reinforce));
  LIMBIC_RETURN_IF_ERROR(flag("include_superseded", &r.include_superseded));
  return r;
}

std::vector<ArchiveHit> ArchiveHitsFromSearch(const json& search) {
  std::vector<ArchiveHit> hits;
  for (const json& r : search.value("results", json::array()))
    hits.push_back({r.value("id", ""), r.value("kind", "") == "archived" ? "archive" : "staged",
                    r.value("date", ""), r.value("snippet", ""), r.value("score", 0.0)});
  return hits;
}

namespace {

struct Candidate {
  std::string kind;                                         // of the memory, or archive | staged
  size_t bm25_rank = 0, vector_rank = 0, archive_rank = 0;  // 0 = not in that list
  double bm25 = 0, cosine = 0, archive_score = 0;
  const ArchiveHit* archive = nullptr;
  double rrf = 0, strength = 1, recency = 1, score = 0;
};

double Recency(TimeMs created, TimeMs now, double days) {
  const double age_days = std::max<double>(0, static_cast<double>(now - created)) / 86400000.0;
  return days > 0 ? 1.0 / (1.0 + age_days / days) : 1.0;
}

// The request's filters on memories, or none when it would pass every
// memory (`skip_superseded` false): the lists then skip its lookups, and
// the vector index need not ask its graph for extra. Refers to `req`.
MetaFilter FilterOf(const RecallRequest& req, bool skip_superseded) {
  if (!skip_superseded && !req.kind && !req.ns && !req.episode_id && !req.tag) return {};
  return [&req](const MemoryMeta& m) {
    if (m.superseded && !req.include_superseded) return false;
    if (req.kind && m.kind != *req.kind) return false;
    if (req.ns && m.ns != *req.ns) return false;
    if (req.episode_id && m.episode_id != *req.episode_id) return false;
    if (req.tag && std::find(m.tags.begin(), m.tags.end(), *req.tag) == m.tags.end())
      return false;
    return true;
  };
}

// Archive hits of the wanted kind, ranked in the order given.
void AddArchiveCandidates(const RecallRequest& req, const std::vector<ArchiveHit>& archive_hits,
                          std::map<std::string, Candidate>* cands) {
  size_t rank = 0;
  for (const ArchiveHit& h : archive_hits) {
    if (req.kind && h.kind != *req.kind) continue;
    Candidate& c = (*cands)[h.id];
    c.archive_rank = ++rank;
    c.archive_score = h.score;
    c.archive = &h;
    c.kind = h.kind;
  }
}

// How a result's score came about (the request's "explain").
json Explain(const Candidate& c, decltype(MemoryOptions::rrf_k) rrf_k) {
  json e = {{"rrf", c.rrf}, {"strength", c.strength}, {"recency", c.recency}, {"rrf_k", rrf_k}};
  if (c.bm25_rank) e["bm25"] = {{"rank", c.bm25_rank}, {"score", c.bm25}};
  if (c.vector_rank) e["vector"] = {{"rank", c.vector_rank}, {"cosine", c.cosine}};
  if (c.archive_rank) e["archive"] = {{"rank", c.archive_rank}, {"score", c.archive_score}};
  return e;
}

}  // namespace

Result<MemoryPlan> MemoryStore::Recall(const RecallRequest& req, TimeMs now,
                                       const std::vector<ArchiveHit>& archive_hits) {
  const size_t depth = req.Depth();
  const bool memories_wanted = !req.kind || (*req.kind != "archive" && *req.kind != "staged");
  const bool skip_superseded = !req.include_superseded && index_->superseded() > 0;
  const MetaFilter filter = FilterOf(req, skip_superseded);
  std::map<std::string, Candidate> cands;
  json vector_info = {{"embedder", embedder_->id()}, {"used", false}};
  if (memories_wanted) {
    auto bm25 = index_->Bm25(req.query, depth, filter);
    for (size_t i = 0; i < bm25.size(); ++i) {
      Candidate& c = cands[bm25[i].first];
      c.bm25_rank = i + 1;
      c.bm25 = bm25[i].second;
    }
    std::string note;
    if (auto q = TryEmbed({req.query}, &note)) {
      vector_info["used"] = true;
      auto near = index_->Nearest((*q)[0], depth, options_.vector_threshold, filter);
      for (size_t i = 0; i < near.size(); ++i) {
        Candidate& c = cands[near[i].id];
        c.vector_rank = i + 1;
        c.cosine = near[i].score;
      }
    } else {
      vector_info["note"] = note + "; ranked by BM25 only";
    }
  }
  // Archive items, unless a memory-only filter excludes them.
  if (req.WantsArchive()) AddArchiveCandidates(req, archive_hits, &cands);
  const double k = static_cast<double>(options_.rrf_k);
  std::vector<std::pair<std::string, Candidate*>> ranked;
  for (auto& [id, c] : cands) {
    if (c.bm25_rank) c.rrf += 1 / (k + static_cast<double>(c.bm25_rank));
    if (c.vector_rank) c.rrf += 1 / (k + static_cast<double>(c.vector_rank));
    if (c.archive_rank) c.rrf += 1 / (k + static_cast<double>(c.archive_rank));
    if (c.archive) {
      auto day = ParseDate(c.archive->date);
      c.recency = Recency(day.ok() ? *day : now, now, options_.recency_days);
    } else if (const MemoryMeta* m = index_->Find(id)) {
      c.kind = m->kind;
      c.strength = Effective(*m, now);
      c.recency = Recency(m->created, now, options_.recency_days);
    } else {
      continue;
    }
    c.score = c.rrf * c.strength * c.recency;
    ranked.emplace_back(id, &c);
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second->score != b.second->score ? a.second->score > b.second->score
                                              : a.first < b.first;
  });
  if (ranked.size() > req.k) ranked.resize(req.k);

  MemoryPlan plan;
  json results = json::array(), touches = json::array();
  for (const auto& [id, c] : ranked) {
    json item;
    if (c->archive) {
      item = {{"id", id},
              {"kind", c->kind},
              {"date", c->archive->date},
              {"text", c->archive->text},
              {"source", id}};
    } else {
      auto rec = engine_.projection().Get(state::Pool::kMemories, id);
      if (!rec.ok()) return rec.status();
      if (!rec->has_value()) continue;
      item = Answer(**rec, now);
      if (item.contains("source_uri"))
        item["source"] = item["source_uri"].get<std::string>() + "#" +
                         std::to_string(item.value("chunk_index", 0));
      if (req.reinforce) {
        const double boost = c->kind == "fact" ? options_.fact_boost : options_.episode_boost;
        touches.push_back({{"memory_id", id},
                           {"strength", std::min(options_.max_strength, c->strength + boost)}});
      }
    }
    item["score"] = c->score;
    if (req.explain) item["explain"] = Explain(*c, options_.rrf_k);
    results.push_back(std::move(item));
  }
  if (!touches.empty())
    plan.events.push_back(
        MakeEvent(state::EventType::kMemoryTouched, {{"touches", touches}, {"reason", "recall"}}));
  plan.answer = {{"query", req.query},
                 {"vector", vector_info},
                 {"results", results},
                 {"reinforced", !touches.empty()}};
  return plan;
}

}  // namespace limbic::memory
