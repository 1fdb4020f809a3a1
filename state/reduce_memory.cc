// ReduceMemory(): what the memory events do to the memory, association and
// document pools (reducer.h; shapes in memory_schema.h; docs/events.md).
#include "state/reducer.h"

namespace limbic::state {
namespace {

class MemoryStep {
 public:
  MemoryStep(const Event& e, Overlay* o) : e_(e), o_(o), ts_(FormatTime(e.ts)) {}

  Result<json> Need(Pool pool, const std::string& id, std::string_view what) {
    auto r = o_->Get(pool, id);
    if (!r.ok()) return r.status();
    if (!r->has_value())
      return Status::NotFound(Where() + ": " + std::string(what) + " " + id + " not found");
    return std::move(**r);
  }
  Status MustNotExist(Pool pool, const std::string& id, std::string_view what) {
    auto r = o_->Contains(pool, id);
    if (!r.ok()) return r.status();
    if (*r)
      return Status::AlreadyExists(Where() + ": " + std::string(what) + " " + id +
                                   " already exists");
    return Status::OK();
  }
  void Put(Pool pool, const std::string& id, json rec) {
    o_->Put(pool, id, std::move(rec), e_.seq);
  }
  void Delete(Pool pool, const std::string& id) { o_->Delete(pool, id, e_.seq); }
  std::string Where() const {
    return std::string(EventTypeName(e_.type)) + " seq " + std::to_string(e_.seq);
  }
  const std::string& ts() const { return ts_; }
  const Event& e() const { return e_; }

 private:
  const Event& e_;
  Overlay* o_;
  std::string ts_;
};

Status Stored(MemoryStep& s) {
  json rec = s.e().fields["memory"];
  const std::string id = rec["id"].get<std::string>();
  LIMBIC_RETURN_IF_ERROR(s.MustNotExist(Pool::kMemories, id, "memory"));
  if (rec["kind"] == "fact")
    rec["text"] = rec["subject"].get<std::string>() + " " + rec["relation"].get<std::string>() +
                  " " + rec["object"].get<std::string>();
  if (!rec.contains("created_at")) rec["created_at"] = s.ts();
  if (!rec.contains("last_accessed_at")) rec["last_accessed_at"] = rec["created_at"];
  if (!rec.contains("access_count")) rec["access_count"] = 0;
  if (rec["kind"] == "fact" && !rec.contains("valid_from")) rec["valid_from"] = rec["created_at"];
  rec["seq"] = s.e().seq;
  if (rec.contains("embedding")) rec["vector_seq"] = s.e().seq;
  s.Put(Pool::kMemories, id, std::move(rec));
  return Status::OK();
}

Status Superseded(MemoryStep& s) {
  const std::string id = s.e().Str("memory_id"), by = s.e().Str("by");
  auto old = s.Need(Pool::kMemories, id, "memory");
  if (!old.ok()) return old.status();
  auto now = s.Need(Pool::kMemories, by, "memory");
  if (!now.ok()) return now.status();
  if ((*old)["kind"] != "fact" || (*now)["kind"] != "fact")
    return Status::FailedPrecondition(s.Where() + ": only a fact supersedes a fact");
  if (old->contains("superseded_by"))
    return Status::FailedPrecondition(s.Where() + ": memory " + id + " is already superseded by " +
                                      (*old)["superseded_by"].get<std::string>());
  (*old)["superseded_by"] = by;
  (*old)["valid_until"] = s.ts();
  s.Put(Pool::kMemories, id, std::move(*old));
  return Status::OK();
}

Status Touched(MemoryStep& s) {
  for (const json& t : s.e().fields["touches"]) {
    const std::string id = t["memory_id"].get<std::string>();
    auto rec = s.Need(Pool::kMemories, id, "memory");
    if (!rec.ok()) return rec.status();
    (*rec)["strength"] = t["strength"];
    (*rec)["last_accessed_at"] = s.ts();
    (*rec)["access_count"] = rec->value("access_count", uint64_t{0}) + 1;
    s.Put(Pool::kMemories, id, std::move(*rec));
  }
  return Status::OK();
}

Status Forgotten(MemoryStep& s) {
  for (const json& v : s.e().fields["memory_ids"]) {
    const std::string id = v.get<std::string>();
    LIMBIC_RETURN_IF_ERROR(s.Need(Pool::kMemories, id, "memory").status());
    s.Delete(Pool::kMemories, id);
  }
  auto docs = s.e().fields.find("document_ids");
  if (docs != s.e().fields.end())
    for (const json& v : *docs) {
      const std::string id = v.get<std::string>();
      LIMBIC_RETURN_IF_ERROR(s.Need(Pool::kDocuments, id, "document").status());
      s.Delete(Pool::kDocuments, id);
    }
  return Status::OK();
}

Status Embedded(MemoryStep& s) {
  for (const json& v : s.e().fields["vectors"]) {
    const std::string id = v["memory_id"].get<std::string>();
    auto rec = s.Need(Pool::kMemories, id, "memory");
    if (!rec.ok()) return rec.status();
    (*rec)["embedding"] = {{"embedder", v["embedder"]}, {"vector", v["vector"]}};
    (*rec)["vector_seq"] = s.e().seq;
    s.Put(Pool::kMemories, id, std::move(*rec));
  }
  return Status::OK();
}

Status AssociationAdded(MemoryStep& s) {
  const json& f = s.e().fields;
  const std::string id = f["association_id"].get<std::string>();
  LIMBIC_RETURN_IF_ERROR(s.MustNotExist(Pool::kAssociations, id, "association"));
  s.Put(Pool::kAssociations, id,
        {{"id", id},
         {"entity_a", f["entity_a"]},
         {"relation", f["relation"]},
         {"entity_b", f["entity_b"]},
         {"created_at", s.ts()}});
  return Status::OK();
}

Status DocumentIngested(MemoryStep& s) {
  json doc = s.e().fields["document"];
  const std::string id = doc["sha256"].get<std::string>();
  LIMBIC_RETURN_IF_ERROR(s.MustNotExist(Pool::kDocuments, id, "document"));
  doc["ingested_at"] = s.ts();
  s.Put(Pool::kDocuments, id, std::move(doc));
  return Status::OK();
}

}  // namespace

Status ReduceMemory(const Event& event, Overlay* overlay) {
  MemoryStep s(event, overlay);
  switch (event.type) {
    case EventType::kMemoryStored:
      return Stored(s);
    case EventType::kMemorySuperseded:
      return Superseded(s);
    case EventType::kMemoryTouched:
      return Touched(s);
    case EventType::kMemoryForgotten:
      return Forgotten(s);
    case EventType::kMemoryEmbedded:
      return Embedded(s);
    case EventType::kAssociationAdded:
      return AssociationAdded(s);
    case EventType::kDocumentIngested:
      return DocumentIngested(s);
    default:
      return Status::Internal("ReduceMemory: not a memory event");
  }
}

}  // namespace limbic::state
