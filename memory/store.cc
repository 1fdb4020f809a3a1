// MemoryStore: opening, the recall index's upkeep, and the operations on
// facts, episodes and associations. Recall is in recall.cc; embed, export,
// import and ingest in store_io.cc.
#include "memory/store.h"

#include <cmath>
#include <deque>
#include <filesystem>
#include <set>

#include "memory/store_util.h"

namespace limbic::memory {

using state::Event;
using state::EventType;
using state::Pool;

MemoryStore::MemoryStore(state::Engine& engine, MemoryOptions options,
                         std::shared_ptr<spdlog::logger> log, std::unique_ptr<Embedder> embedder)
    : engine_(engine),
      options_(std::move(options)),
      log_(std::move(log)),
      embedder_(std::move(embedder)),
      alive_(std::make_shared<bool>(true)) {}

MemoryStore::~MemoryStore() {
  *alive_ = false;
  if (Status s = SaveIndex(); !s.ok() && log_)
    log_->warn("memory: saving the vector index: {}", s.ToString());
}

Result<std::unique_ptr<MemoryStore>> MemoryStore::Open(state::Engine& engine, MemoryOptions options,
                                                       std::shared_ptr<spdlog::logger> log,
                                                       std::unique_ptr<Embedder> embedder) {
  auto analyzer = archive::Analyzer::Make(options.analyzer);
  if (!analyzer.ok()) return analyzer.status().WithContext("memory.analyzer");
  if (!embedder) {
    auto spec = ApplyEmbeddingEnv(options.embedder);
    if (!spec.ok()) return spec.status().WithContext("memory.embedder");
    auto made = MakeEmbedder(*spec);
    if (!made.ok()) return made.status().WithContext("memory.embedder");
    embedder = std::move(*made);
    options.embedder = std::move(*spec);  // what the runtime's workers make theirs of
  }
  std::unique_ptr<MemoryStore> store(
      new MemoryStore(engine, std::move(options), std::move(log), std::move(embedder)));
  store->analyzer_ = std::move(*analyzer);
  LIMBIC_RETURN_IF_ERROR(store->Load());
  std::weak_ptr<bool> alive = store->alive_;
  MemoryStore* self = store.get();
  engine.AddListener([alive, self](std::span<const Event> events) {
    if (auto a = alive.lock(); a && *a) self->OnApplied(events);
  });
  return store;
}

std::string MemoryStore::dir() const { return engine_.state_dir() + "/memory"; }

std::string MemoryStore::HnswPath() const {
  std::string slug;
  for (char c : embedder_->id())
    slug += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '_';
  return dir() + "/vectors-" + slug + ".idx";
}

Status MemoryStore::Load() {
  VectorIndexOptions vo = options_.vectors;
  if (options_.embedder.kind == "hash") vo.dims = options_.embedder.dims;
  index_ = std::make_unique<RecallIndex>(embedder_->id(), vo, options_.bm25, analyzer_, options_.context);
  // A saved index spares rebuilding the HNSW graph; the records then bring
  // it up to date (unchanged entries are no-ops).
  bool loaded = false;
  if (std::filesystem::exists(HnswPath())) {
    Status s = index_->vectors().Load(HnswPath());
    if (s.ok()) {
      loaded = true;
    } else {
      if (log_) log_->warn("memory: {}; rebuilding the vector index", s.ToString());
      index_ = std::make_unique<RecallIndex>(embedder_->id(), vo, options_.bm25, analyzer_, options_.context);
    }
  }
  std::vector<std::string> with_vectors;
  Status s = engine_.projection().ForEach(Pool::kMemories, [&](std::string_view, const json& rec) {
    index_->Put(rec);
    if (const MemoryMeta* m = index_->Find(rec.value("id", "")); m && m->embedded)
      with_vectors.push_back(m->id);
    return true;
  });
  LIMBIC_RETURN_IF_ERROR(s);
  if (loaded) {
    std::sort(with_vectors.begin(), with_vectors.end());
    index_->vectors().RetainOnly(with_vectors);
  }
  return Status::OK();
}

size_t MemoryStore::IndexBacklog() const { return index_ ? index_->vectors().graph_backlog() : 0; }

Status MemoryStore::IndexStep(size_t max) {
  return index_ ? index_->vectors().GraphStep(max) : Status::OK();
}

Status MemoryStore::SaveIndex() {
  // Exact search needs no saved state: the vectors are in the records.
  if (engine_.read_only() || !index_ || !index_->vectors().approximate() ||
      !index_->vectors().dirty())
    return Status::OK();
  if (const size_t waiting = IndexBacklog(); waiting > kSaveCatchUp) {
    if (log_)
      log_->info("memory: {} vectors are not in the HNSW graph yet; it is not saved (the next "
                 "start builds what it lacks again, in the background)",
                 waiting);
    return Status::OK();
  } else if (waiting > 0) {
    LIMBIC_RETURN_IF_ERROR(IndexStep(waiting));
  }
  std::error_code ec;
  std::filesystem::create_directories(dir(), ec);
  return index_->vectors().Save(HnswPath());
}

// The ids of memories an event changed or removed.
void MemoryStore::OnApplied(std::span<const Event> events) {
  std::set<std::string> changed, removed;
  for (const Event& e : events) {
    const json& f = e.fields;
    switch (e.type) {
      case EventType::kMemoryStored:
        changed.insert(f["memory"]["id"].get<std::string>());
        break;
      case EventType::kMemorySuperseded:
        changed.insert(e.Str("memory_id"));
        break;
      case EventType::kMemoryTouched:
        for (const json& t : f["touches"]) changed.insert(t["memory_id"].get<std::string>());
        break;
      case EventType::kMemoryEmbedded:
        for (const json& t : f["vectors"]) changed.insert(t["memory_id"].get<std::string>());
        break;
      case EventType::kMemoryForgotten:
        for (const json& id : f["memory_ids"]) {
          changed.erase(id.get<std::string>());
          removed.insert(id.get<std::string>());
        }
        break;
      default:
        break;
    }
  }
  for (const std::string& id : removed) index_->Remove(id);
  for (const std::string& id : changed) {
    auto rec = engine_.projection().Get(Pool::kMemories, id);
    if (!rec.ok()) {
      if (log_)
        log_->error("memory: reading {} for the recall index: {}", id, rec.status().ToString());
      continue;
    }
    if (rec->has_value())
      index_->Put(**rec);
    else
      index_->Remove(id);
  }
}

double MemoryStore::Effective(const MemoryMeta& m, TimeMs now) const {
  return EffectiveStrength(m.strength, m.last_accessed, now, options_.half_life_hours);
}

json MemoryStore::Answer(const json& record, TimeMs now) const {
  json out = record;
  out.erase("seq");
  out.erase("vector_seq");
  auto emb = out.find("embedding");
  if (emb != out.end()) {
    out["embedder"] = (*emb)["embedder"];
    out.erase(emb);
  }
  auto last = ParseTime(record.value("last_accessed_at", ""), TimeRule::kLogged);
  out["effective_strength"] = EffectiveStrength(
      record.value("strength", 1.0), last.ok() ? *last : now, now, options_.half_life_hours);
  return out;
}

Result<json> MemoryStore::Get(const std::string& id, TimeMs now) const {
  auto rec = engine_.projection().Get(Pool::kMemories, id);
  if (!rec.ok()) return rec.status();
  if (!rec->has_value()) return Status::NotFound("memory " + id + " not found");
  return Answer(**rec, now);
}

std::optional<std::vector<Vector>> MemoryStore::TryEmbed(const std::vector<std::string>& texts,
                                                         EmbedRole role, const Embedded* given,
                                                         std::string* note) {
  Result<std::vector<Vector>> v = Status::Internal("");
  if (given != nullptr && given->embedder_id == embedder_->id()) {
    v = given->vectors;
    if (v.ok() && v->size() != texts.size())
      v = Status::Internal("embedded " + std::to_string(v->size()) + " vectors for " +
                           std::to_string(texts.size()) + " texts");
  } else {
    v = embedder_->Embed(texts, role);
  }
  if (v.ok()) return std::move(*v);
  *note = "embedder " + embedder_->id() + " unavailable: " + v.status().message();
  if (log_) log_->warn("memory: {}; falling back to BM25 / storing without a vector", *note);
  return std::nullopt;
}

Result<json> MemoryStore::NewMemory(const json& req, const std::string& kind, uint64_t seq) {
  json m = {{"id", "m-" + std::to_string(seq)},
            {"kind", kind},
            {"importance", req.value("importance", json(0.5))},
            {"tags", req.value("tags", json::array())},
            {"namespace", req.value("namespace", json("default"))},
            {"strength", 1.0}};
  for (const char* key : {"subject", "relation", "object", "text", "episode_id"})
    if (req.contains(key)) m[key] = req[key];
  if (auto why = RequestError(m); !why.empty()) return Status::InvalidArgument(why);
  return m;
}

std::string FactText(const json& fact) {
  auto part = [&](const char* key) {
    return fact.contains(key) && fact[key].is_string() ? fact[key].get<std::string>() : "";
  };
  return part("subject") + " " + part("relation") + " " + part("object");
}

std::string EpisodeText(const json& episode) {
  return episode.contains("text") && episode["text"].is_string() ? episode["text"].get<std::string>()
                                                                 : "";
}

Result<MemoryPlan> MemoryStore::RememberFact(const json& req, const Embedded* embedded) {
  LIMBIC_RETURN_IF_ERROR(
      CheckRequest(req, {"subject", "relation", "object", "importance", "tags", "namespace"}));
  const uint64_t seq = engine_.next_seq();
  auto m = NewMemory(req, "fact", seq);
  if (!m.ok()) return m.status();
  const std::string subject = (*m)["subject"], relation = (*m)["relation"], object = (*m)["object"];
  auto current =
      engine_.projection().CurrentFacts((*m)["namespace"].get<std::string>(), subject, relation);
  if (!current.ok()) return current.status();
  MemoryPlan plan;
  // The same fact again: reinforce it rather than supersede it with itself.
  for (const std::string& id : *current) {
    auto rec = engine_.projection().Get(Pool::kMemories, id);
    if (!rec.ok()) return rec.status();
    if (rec->has_value() && (**rec).value("object", "") == object) {
      const MemoryMeta* meta = index_->Find(id);
      double eff = meta ? Effective(*meta, engine_.clock().Now()) : 1.0;
      plan.events.push_back(
          MakeEvent(EventType::kMemoryTouched,
                    {{"touches",
                      {{{"memory_id", id},
                        {"strength", std::min(options_.max_strength, eff + options_.fact_boost)}}}},
                     {"reason", "remembered again"}}));
      plan.answer = {{"id", id}, {"reinforced", true}, {"superseded", json::array()}};
      return plan;
    }
  }
  std::string note;
  if (auto v = TryEmbed({FactText(*m)}, EmbedRole::kPassage, embedded, &note))
    (*m)["embedding"] = {{"embedder", embedder_->id()}, {"vector", EncodeVector((*v)[0])}};
  const std::string id = (*m)["id"];
  plan.events.push_back(MakeEvent(EventType::kMemoryStored, {{"memory", std::move(*m)}}));
  json superseded = json::array();
  for (const std::string& old : *current) {
    plan.events.push_back(
        MakeEvent(EventType::kMemorySuperseded, {{"memory_id", old}, {"by", id}}));
    superseded.push_back(old);
  }
  plan.answer = {{"id", id}, {"reinforced", false}, {"superseded", superseded}};
  if (!note.empty()) plan.answer["note"] = note;
  plan.created = true;
  return plan;
}

Result<MemoryPlan> MemoryStore::RememberEpisode(const json& req, TimeMs now,
                                                const Embedded* embedded) {
  LIMBIC_RETURN_IF_ERROR(
      CheckRequest(req, {"text", "importance", "tags", "namespace", "episode_id"}));
  auto m = NewMemory(req, "episode", engine_.next_seq());
  if (!m.ok()) return m.status();
  MemoryPlan plan;
  std::string note;
  if (auto v = TryEmbed({EpisodeText(*m)}, EmbedRole::kPassage, embedded, &note)) {
    const std::string ns = (*m)["namespace"];
    auto near =
        index_->Nearest((*v)[0], 1, static_cast<float>(options_.duplicate_cosine),
                        [&](const MemoryMeta& x) { return x.kind == "episode" && x.ns == ns; });
    if (!near.empty() && near[0].score > options_.duplicate_cosine) {
      const MemoryMeta* meta = index_->Find(near[0].id);
      double eff = meta ? Effective(*meta, now) : 1.0;
      plan.events.push_back(MakeEvent(
          EventType::kMemoryTouched,
          {{"touches",
            {{{"memory_id", near[0].id},
              {"strength", std::min(options_.max_strength, eff + options_.episode_boost)}}}},
           {"reason", "near-duplicate episode"}}));
      plan.answer = {{"id", near[0].id}, {"reinforced", true}, {"similarity", near[0].score}};
      return plan;
    }
    (*m)["embedding"] = {{"embedder", embedder_->id()}, {"vector", EncodeVector((*v)[0])}};
  }
  plan.answer = {{"id", (*m)["id"]}, {"reinforced", false}};
  if (!note.empty()) plan.answer["note"] = note;
  plan.events.push_back(MakeEvent(EventType::kMemoryStored, {{"memory", std::move(*m)}}));
  plan.created = true;
  return plan;
}

Result<MemoryPlan> MemoryStore::Relate(const json& req) {
  LIMBIC_RETURN_IF_ERROR(CheckRequest(req, {"entity_a", "relation", "entity_b"}));
  for (const char* key : {"entity_a", "relation", "entity_b"}) {
    if (!req.contains(key))
      return Status::InvalidArgument(std::string("field \"") + key + "\": required");
    if (std::string why = state::NameError(key, req[key]); !why.empty())
      return Status::InvalidArgument(why);
  }
  const std::string a = req["entity_a"], rel = req["relation"], b = req["entity_b"];
  auto found = engine_.projection().FindAssociation(a, rel, b);
  if (!found.ok()) return found.status();
  MemoryPlan plan;
  if (found->has_value()) {
    plan.answer = {{"id", **found}, {"created", false}};
    return plan;
  }
  const std::string id = "as-" + std::to_string(engine_.next_seq());
  plan.events.push_back(
      MakeEvent(EventType::kAssociationAdded,
                {{"association_id", id}, {"entity_a", a}, {"relation", rel}, {"entity_b", b}}));
  plan.answer = {{"id", id}, {"created", true}};
  plan.created = true;
  return plan;
}

Result<json> MemoryStore::Related(const std::string& entity, int depth) const {
  if (entity.empty()) return Status::InvalidArgument("field \"entity\": required");
  if (depth < 1 || depth > 3) return Status::InvalidArgument("field \"depth\": must be 1, 2 or 3");
  const auto& p = engine_.projection();
  json related = json::array();
  std::set<std::string> seen_entities{entity}, seen_edges;
  std::deque<std::pair<std::string, int>> queue{{entity, 0}};
  auto edge = [&](const std::string& via, const std::string& id, const std::string& from,
                  const std::string& relation, const std::string& to, const std::string& here,
                  int d) {
    if (!seen_edges.insert(via + ":" + id).second) return;
    const std::string other = from == here ? to : from;
    related.push_back({{"entity", other},
                       {"relation", relation},
                       {"from", from},
                       {"to", to},
                       {"depth", d},
                       {"via", via},
                       {"id", id}});
    if (d < depth && seen_entities.insert(other).second) queue.emplace_back(other, d);
  };
  while (!queue.empty()) {
    auto [here, d0] = queue.front();
    queue.pop_front();
    const int d = d0 + 1;
    auto assocs = p.AssociationsOf(here);
    if (!assocs.ok()) return assocs.status();
    for (const std::string& id : *assocs) {
      auto rec = p.Get(Pool::kAssociations, id);
      if (!rec.ok()) return rec.status();
      if (!rec->has_value()) continue;
      const json& r = **rec;
      edge("association", id, r["entity_a"], r["relation"], r["entity_b"], here, d);
    }
    for (const char* field : {"subject", "object"}) {
      auto facts = p.FactsWith(field, here);
      if (!facts.ok()) return facts.status();
      for (const std::string& id : *facts) {
        auto rec = p.Get(Pool::kMemories, id);
        if (!rec.ok()) return rec.status();
        if (!rec->has_value() || (**rec).contains("superseded_by")) continue;
        const json& r = **rec;
        edge("fact", id, r["subject"], r["relation"], r["object"], here, d);
      }
    }
  }
  return json{{"entity", entity}, {"depth", depth}, {"related", related}};
}

Result<MemoryPlan> MemoryStore::Forget(const json& req, TimeMs now) {
  LIMBIC_RETURN_IF_ERROR(CheckRequest(req, {"id", "subject", "older_than", "force"}));
  const auto force = req.find("force");
  if (force != req.end() && !force->is_boolean())
    return Status::InvalidArgument("field \"force\": must be true or false");
  if (req.size() - (force != req.end() ? 1 : 0) != 1)
    return Status::InvalidArgument("give exactly one of id, subject, older_than");
  std::vector<std::string> ids;
  const auto& p = engine_.projection();
  if (req.contains("id")) {
    if (!req["id"].is_string()) return Status::InvalidArgument("field \"id\": must be a string");
    if (!index_->Find(req["id"]))
      return Status::NotFound("memory " + req["id"].get<std::string>() + " not found");
    ids.push_back(req["id"]);
  } else if (req.contains("subject")) {
    if (!req["subject"].is_string())
      return Status::InvalidArgument("field \"subject\": must be a string");
    auto r = p.FactsWith("subject", req["subject"].get<std::string>());
    if (!r.ok()) return r.status();
    ids = std::move(*r);
  } else {
    auto d = req["older_than"].is_string()
                 ? ParseDuration(req["older_than"].get<std::string>())
                 : Result<TimeMs>(Status::InvalidArgument("not a string"));
    if (!d.ok())
      return Status::InvalidArgument("field \"older_than\": must be a duration like 30d, 12h: " +
                                     d.status().message());
    auto r = p.MemoriesCreatedBefore(now - *d);
    if (!r.ok()) return r.status();
    ids = std::move(*r);
    // The sweep by age has decay's guard: "0s" would empty every namespace.
    const size_t total = index_->size();
    if (ids.size() * 2 > total && !(force != req.end() && force->get<bool>()))
      return Status::FailedPrecondition(
          "forget would delete " + std::to_string(ids.size()) + " of " + std::to_string(total) +
          " memories (more than half); send it again with force: true (--force) to proceed");
  }
  MemoryPlan plan;
  plan.answer = {{"forgotten", ids.size()}, {"ids", ids}};
  if (!ids.empty()) plan.events.push_back(ForgetEvent(*index_, ids, "forget"));
  return plan;
}

Result<MemoryPlan> MemoryStore::Decay(bool force, TimeMs now) {
  size_t total = 0, decayed = 0;
  std::vector<std::string> dead;
  index_->ForEach([&](const MemoryMeta& m) {
    ++total;
    const double eff = Effective(m, now);
    if (eff < m.strength) ++decayed;
    if (eff < options_.min_strength) dead.push_back(m.id);
  });
  std::sort(dead.begin(), dead.end());
  if (dead.size() * 2 > total && !force)
    return Status::FailedPrecondition(
        "decay would delete " + std::to_string(dead.size()) + " of " + std::to_string(total) +
        " memories (more than half); run it again with force (--force) to proceed");
  MemoryPlan plan;
  plan.answer = {
      {"decayed", decayed}, {"deleted", dead.size()}, {"remaining", total - dead.size()}};
  if (!dead.empty()) plan.events.push_back(ForgetEvent(*index_, dead, "decay"));
  return plan;
}

Result<json> MemoryStore::Stats(TimeMs now) const {
  size_t facts = 0, superseded = 0, episodes = 0, chunks = 0, embedded = 0;
  double strength = 0;
  index_->ForEach([&](const MemoryMeta& m) {
    if (m.kind == "fact") ++facts;
    if (m.kind == "episode") ++episodes;
    if (m.kind == "chunk") ++chunks;
    if (m.superseded) ++superseded;
    if (m.embedded) ++embedded;
    strength += Effective(m, now);
  });
  auto docs = engine_.projection().Count(Pool::kDocuments);
  if (!docs.ok()) return docs.status();
  auto assocs = engine_.projection().Count(Pool::kAssociations);
  if (!assocs.ok()) return assocs.status();
  const size_t n = index_->size();
  json out{{"memories", n},
              {"facts", facts},
              {"superseded", superseded},
              {"episodes", episodes},
              {"chunks", chunks},
              {"documents", *docs},
              {"associations", *assocs},
              {"embedded", embedded},
              {"embedder", embedder_->id()},
              {"vector_index", index_->vectors().approximate() ? "approximate" : "exact"},
              {"avg_strength", n ? strength / static_cast<double>(n) : 0.0}};
  return out;
}

}  // namespace limbic::memory
