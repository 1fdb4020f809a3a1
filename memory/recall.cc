// MemoryStore::Recall: the lexical list (BM25 with context), vectors and
// the archive, fused (FusionParams), weighted by strength and recency,
// then one hop over associations from the best hits (store.h).
#include <algorithm>
#include <map>
#include <optional>

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

// How an associated memory was reached from a direct hit: source --(the
// source names `through`)--> association (entity_a, relation, entity_b)
// --(its other end `reached`, which this memory names as `as`)--> here.
struct Link {
  std::string from;  // the source memory's id
  double from_score = 0;
  std::string association, entity_a, relation, entity_b;
  std::string through, reached;
  std::string as;    // id | subject | object
  double score = 0;  // kAssociationFactor * from_score
};

struct Candidate {
  std::string kind;                                         // of the memory, or archive | staged
  size_t bm25_rank = 0, vector_rank = 0, archive_rank = 0;  // 0 = not in that list
  LexicalHit lexical;                                       // when bm25_rank
  double cosine = 0, archive_score = 0;
  const ArchiveHit* archive = nullptr;
  double fused = 0, strength = 1, recency = 1;
  double lexical_part = 0, vector_part = 0, archive_part = 0;  // fused is their sum
  double direct = 0;         // fused * strength * recency: 0 when in no list
  std::optional<Link> link;  // the best association that reached it
  double score = 0;          // max(direct, link->score)
  bool Direct() const { return bm25_rank || vector_rank || archive_rank; }
  bool Associated() const { return link && link->score > direct; }
};

using Ranked = std::vector<std::pair<std::string, Candidate*>>;

// Best first, ties by id.
void Sort(Ranked* ranked) {
  std::sort(ranked->begin(), ranked->end(), [](const auto& a, const auto& b) {
    return a.second->score != b.second->score ? a.second->score > b.second->score
                                              : a.first < b.first;
  });
}

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

// Each list's best score, what "score" fusion divides by.
struct Best {
  double lexical = 0, cosine = 0, archive = 0;
};

Best BestOf(const std::map<std::string, Candidate>& cands) {
  Best b;
  for (const auto& [id, c] : cands) {
    if (c.bm25_rank) b.lexical = std::max(b.lexical, c.lexical.score);
    if (c.vector_rank) b.cosine = std::max(b.cosine, c.cosine);
    if (c.archive_rank) b.archive = std::max(b.archive, c.archive_score);
  }
  return b;
}

// One list's part of an item's fused score (FusionParams).
double Part(const FusionParams& f, double weight, size_t rank, double score, double best,
            size_t rrf_k) {
  if (!rank) return 0;
  if (f.rrf()) return weight / (static_cast<double>(rrf_k) + static_cast<double>(rank));
  return best > 0 ? weight * score / best : 0;
}

// Scores every candidate at `now` and ranks them (Sort): a direct hit by
// its lists (fused * effective strength * recency), an associated one by
// its link, whichever is more. Candidates that are neither archive items
// nor memories in the index, or score 0 (only in lists weighted 0), are
// left out.
Ranked Rank(std::map<std::string, Candidate>* cands, const RecallIndex& index,
            const MemoryOptions& o, TimeMs now) {
  const FusionParams& f = o.fusion;
  const Best best = BestOf(*cands);
  Ranked ranked;
  for (auto& [id, c] : *cands) {
    c.lexical_part = Part(f, f.lexical, c.bm25_rank, c.lexical.score, best.lexical, o.rrf_k);
    c.vector_part = Part(f, f.vector, c.vector_rank, c.cosine, best.cosine, o.rrf_k);
    c.archive_part = Part(f, f.archive, c.archive_rank, c.archive_score, best.archive, o.rrf_k);
    c.fused = c.lexical_part + c.vector_part + c.archive_part;
    if (c.archive) {
      auto day = ParseDate(c.archive->date);
      c.recency = Recency(day.ok() ? *day : now, now, o.recency_days);
    } else if (const MemoryMeta* m = index.Find(id)) {
      c.kind = m->kind;
      c.strength = EffectiveStrength(m->strength, m->last_accessed, now, o.half_life_hours);
      c.recency = Recency(m->created, now, o.recency_days);
    } else {
      continue;
    }
    c.direct = c.Direct() ? c.fused * c.strength * c.recency : 0;
    c.score = std::max(c.direct, c.link ? c.link->score : 0.0);
    if (c.score <= 0) continue;
    ranked.emplace_back(id, &c);
  }
  Sort(&ranked);
  return ranked;
}

// The memories that an association's end `name` names, in this order: the
// memory whose id it is, then the facts with it as subject, then as object
// (each in key order; superseded ones too: the caller filters).
Status NamedBy(const state::Projection& p, const RecallIndex& index, const std::string& name,
               std::vector<std::pair<std::string, const char*>>* out) {
  if (index.Find(name)) out->emplace_back(name, "id");
  for (const char* field : {"subject", "object"}) {
    auto facts = p.FactsWith(field, name);
    if (!facts.ok()) return facts.status();
    for (std::string& id : *facts) out->emplace_back(std::move(id), field);
  }
  return Status::OK();
}

// Step 6 of store.h: one hop over associations from each memory among the
// best `k` of `ranked` (by direct score). A source names its own id and, a
// fact, its subject and object; each association with one of those at an
// end leads to the memories its other end names (NamedBy). Each of those
// that `pass`es (filters, superseded; forgotten ones are not in the index)
// gets a link worth kAssociationFactor * the source's direct score, unless
// it holds one at least as good: sources go best first and the first link
// found wins a tie, so the path is deterministic. A memory never links to
// itself. Sources beyond the best k cannot matter: their links score less
// than the k-th direct score.
Status AddAssociated(const state::Projection& p, const RecallIndex& index, const MetaFilter& pass,
                     const Ranked& ranked, size_t k, std::map<std::string, Candidate>* cands) {
  for (size_t i = 0; i < std::min(k, ranked.size()); ++i) {
    const auto& [src, c] = ranked[i];
    if (c->archive || c->direct <= 0) continue;
    auto rec = p.Get(state::Pool::kMemories, src);
    if (!rec.ok()) return rec.status();
    if (!rec->has_value()) continue;
    std::vector<std::string> names{src};
    for (const char* field : {"subject", "object"})
      if (auto it = (**rec).find(field); it != (**rec).end() && it->is_string() &&
                                         std::find(names.begin(), names.end(), *it) == names.end())
        names.push_back(it->get<std::string>());
    const double score = kAssociationFactor * c->direct;
    for (const std::string& through : names) {
      auto assocs = p.AssociationsOf(through);
      if (!assocs.ok()) return assocs.status();
      for (const std::string& aid : *assocs) {
        auto a = p.Get(state::Pool::kAssociations, aid);
        if (!a.ok()) return a.status();
        if (!a->has_value()) continue;
        const json& r = **a;
        const std::string ea = r.value("entity_a", ""), eb = r.value("entity_b", "");
        const std::string reached = ea == through ? eb : ea;
        std::vector<std::pair<std::string, const char*>> targets;
        LIMBIC_RETURN_IF_ERROR(NamedBy(p, index, reached, &targets));
        for (auto& [id, as] : targets) {
          if (id == src) continue;
          const MemoryMeta* m = index.Find(id);
          if (!m || !pass(*m)) continue;
          Candidate& t = (*cands)[id];
          if (t.link && t.link->score >= score) continue;
          t.link = Link{.from = src,
                        .from_score = c->direct,
                        .association = aid,
                        .entity_a = ea,
                        .relation = r.value("relation", ""),
                        .entity_b = eb,
                        .through = through,
                        .reached = reached,
                        .as = as,
                        .score = score};
        }
      }
    }
  }
  return Status::OK();
}

// How a result's score came about (the request's "explain"): the lists'
// components when it is a direct hit, and `association` (its path) when a
// link gave it its score.
json Explain(const Candidate& c, const MemoryOptions& o) {
  json e = json::object();
  if (c.Direct()) {
    e = {{"fused", c.fused},
         {"fusion", o.fusion.method},
         {"parts", {{"lexical", c.lexical_part}, {"vector", c.vector_part}, {"archive", c.archive_part}}},
         {"strength", c.strength},
         {"recency", c.recency}};
    if (o.fusion.rrf()) e["rrf_k"] = o.rrf_k;
    if (c.bm25_rank) {
      const LexicalHit& l = c.lexical;
      e["bm25"] = {{"rank", c.bm25_rank}, {"score", l.bm25}};
      e["lexical"] = {{"score", l.score}, {"own", l.own}, {"neighbours", l.neighbours},
                      {"episode", l.episode}};
    }
    if (c.vector_rank) e["vector"] = {{"rank", c.vector_rank}, {"cosine", c.cosine}};
    if (c.archive_rank) e["archive"] = {{"rank", c.archive_rank}, {"score", c.archive_score}};
  }
  if (c.Associated()) {
    const Link& l = *c.link;
    e["association"] = {{"from", l.from},
                        {"from_score", l.from_score},
                        {"factor", kAssociationFactor},
                        {"id", l.association},
                        {"entity_a", l.entity_a},
                        {"relation", l.relation},
                        {"entity_b", l.entity_b},
                        {"through", l.through},
                        {"reached", l.reached},
                        {"as", l.as}};
    if (c.Direct()) e["direct_score"] = c.direct;
  }
  return e;
}

}  // namespace

Result<MemoryPlan> MemoryStore::Recall(const RecallRequest& req, TimeMs now,
                                       const std::vector<ArchiveHit>& archive_hits,
                                       const Embedded* embedded) {
  const size_t depth = req.Depth();
  const bool memories_wanted = !req.kind || (*req.kind != "archive" && *req.kind != "staged");
  const bool skip_superseded = !req.include_superseded && index_->superseded() > 0;
  const MetaFilter filter = FilterOf(req, skip_superseded);
  std::map<std::string, Candidate> cands;
  json vector_info = {{"embedder", embedder_->id()}, {"used", false}};
  if (memories_wanted) {
    auto lexical = index_->Lexical(req.query, depth, filter);
    for (size_t i = 0; i < lexical.size(); ++i) {
      Candidate& c = cands[lexical[i].id];
      c.bm25_rank = i + 1;
      c.lexical = std::move(lexical[i]);
    }
    std::string note;
    if (auto q = TryEmbed({req.query}, EmbedRole::kQuery, embedded, &note)) {
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
  Ranked ranked = Rank(&cands, *index_, options_, now);
  if (memories_wanted) {
    LIMBIC_RETURN_IF_ERROR(
        AddAssociated(engine_.projection(), *index_, FilterOf(req, true), ranked, req.k, &cands));
    ranked = Rank(&cands, *index_, options_, now);
  }
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
    if (c->Associated()) item["via"] = c->link->from;
    if (req.explain) item["explain"] = Explain(*c, options_);
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
