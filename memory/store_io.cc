// MemoryStore: embed, export, import and ingest -- the operations that move
// many memories at once.
#include <filesystem>
#include <optional>
#include <set>

#include "base/base64.h"
#include "base/json.h"
#include "base/name.h"
#include "base/sha256.h"
#include "memory/ingest.h"
#include "memory/store.h"
#include "memory/store_util.h"

namespace limbic::memory {

using state::EventType;
using state::Pool;

EmbedWork MemoryStore::EmbedIds(bool all) const {
  EmbedWork work;
  index_->ForEach([&](const MemoryMeta& m) {
    if (all || !m.embedded) work.ids.push_back(m.id);
  });
  std::sort(work.ids.begin(), work.ids.end());
  return work;
}

Status MemoryStore::ReadEmbedTexts(EmbedWork* work, size_t end) const {
  end = std::min(end, work->ids.size());
  work->texts.reserve(work->ids.size());
  for (size_t i = work->texts.size(); i < end; ++i) {
    auto rec = engine_.projection().Get(Pool::kMemories, work->ids[i]);
    if (!rec.ok()) return rec.status();
    if (!rec->has_value()) {
      work->texts.emplace_back();
      continue;
    }
    const json& m = **rec;
    work->texts.push_back(m.value("kind", "") == "fact" ? FactText(m) : EpisodeText(m));
  }
  return Status::OK();
}

Result<EmbedWork> MemoryStore::EmbedTodo(bool all) const {
  EmbedWork work = EmbedIds(all);
  LIMBIC_RETURN_IF_ERROR(ReadEmbedTexts(&work, work.ids.size()));
  return work;
}

Result<MemoryPlan> MemoryStore::PlanEmbedded(const EmbedWork& work,
                                             const std::vector<Vector>& vectors,
                                             const std::string& embedder_id, size_t begin,
                                             size_t end) const {
  if (embedder_id != embedder_->id())
    return Status::FailedPrecondition("the vectors are " + embedder_id +
                                      "'s, the store's embedder is " + embedder_->id());
  if (vectors.size() != work.ids.size())
    return Status::Internal(std::to_string(vectors.size()) + " vectors for " +
                            std::to_string(work.ids.size()) + " memories");
  MemoryPlan plan;
  json batch = json::array();
  size_t embedded = 0;
  end = std::min(end, work.ids.size());
  for (size_t i = begin; i < end; ++i) {
    // Forgotten while the vectors were made (on a worker): nothing to embed.
    if (index_->Find(work.ids[i]) == nullptr) continue;
    ++embedded;
    batch.push_back({{"memory_id", work.ids[i]},
                     {"embedder", embedder_id},
                     {"vector", EncodeVector(vectors[i])}});
    if (batch.size() == kVectorsPerEvent) {
      plan.events.push_back(MakeEvent(EventType::kMemoryEmbedded, {{"vectors", std::move(batch)}}));
      batch = json::array();
    }
  }
  if (!batch.empty())
    plan.events.push_back(MakeEvent(EventType::kMemoryEmbedded, {{"vectors", std::move(batch)}}));
  plan.answer = {{"embedded", embedded}, {"embedder", embedder_id}};
  return plan;
}

Result<MemoryPlan> MemoryStore::Embed(bool all,
                                      const std::function<void(size_t, size_t)>& progress) {
  auto work = EmbedTodo(all);
  if (!work.ok()) return work.status();
  std::vector<Vector> vectors;
  vectors.reserve(work->ids.size());
  // Pieces of a few batches: a progress report between them, and the model
  // sorts each piece by length.
  const size_t piece = std::max<size_t>(1, options_.embedder.batch) * 4;
  for (size_t i = 0; i < work->texts.size(); i += piece) {
    const size_t end = std::min(work->texts.size(), i + piece);
    auto v = embedder_->Embed(std::span(work->texts).subspan(i, end - i), EmbedRole::kPassage);
    if (!v.ok()) return v.status().WithContext("embedding with " + embedder_->id());
    for (Vector& x : *v) vectors.push_back(std::move(x));
    if (progress) progress(end, work->texts.size());
  }
  return PlanEmbedded(*work, vectors, embedder_->id());
}

Result<json> MemoryStore::Export() const {
  json out = {{"version", 1},
              {"memories", json::array()},
              {"associations", json::array()},
              {"documents", json::array()}};
  const auto& p = engine_.projection();
  auto collect = [&](Pool pool, const char* key, std::initializer_list<const char*> drop) {
    return p.ForEach(pool, [&](std::string_view, const json& rec) {
      json r = rec;
      for (const char* d : drop) r.erase(d);
      out[key].push_back(std::move(r));
      return true;
    });
  };
  LIMBIC_RETURN_IF_ERROR(collect(Pool::kMemories, "memories", {"seq", "vector_seq", "valid_from"}));
  LIMBIC_RETURN_IF_ERROR(collect(Pool::kAssociations, "associations", {}));
  LIMBIC_RETURN_IF_ERROR(collect(Pool::kDocuments, "documents", {"ingested_at"}));
  // Facts carry their triple; their text is derived again on import.
  for (json& m : out["memories"])
    if (m.value("kind", "") == "fact") m.erase("text");
  return out;
}

Result<MemoryPlan> MemoryStore::Import(const json& doc) {
  LIMBIC_RETURN_IF_ERROR(CheckRequest(doc, {"version", "memories", "associations", "documents"}));
  if (!doc.contains("version") || doc["version"] != 1)
    return Status::InvalidArgument("field \"version\": must be 1");
  for (const char* key : {"memories", "associations", "documents"})
    if (doc.contains(key) && !doc[key].is_array())
      return Status::InvalidArgument(std::string("field \"") + key + "\": must be an array");
  const json empty = json::array();
  const json& memories = doc.contains("memories") ? doc["memories"] : empty;
  const json& assocs = doc.contains("associations") ? doc["associations"] : empty;
  const json& docs = doc.contains("documents") ? doc["documents"] : empty;
  const auto& p = engine_.projection();
  // Validate everything first: nothing is planned from a bad file.
  for (size_t i = 0; i < memories.size(); ++i)
    if (auto why = state::CheckMemoryObject(memories[i]); !why.empty())
      return Status::InvalidArgument("memories[" + std::to_string(i) + "]: " + why);
  for (size_t i = 0; i < assocs.size(); ++i) {
    const json& a = assocs[i];
    for (const char* key : {"entity_a", "relation", "entity_b"}) {
      const std::string field = "associations[" + std::to_string(i) + "]." + key;
      if (!a.is_object() || !a.contains(key))
        return Status::InvalidArgument(field + ": must be " + std::string(kNameRule));
      if (std::string why = state::NameError(field, a[key]); !why.empty())
        return Status::InvalidArgument(why);
    }
  }
  for (size_t i = 0; i < docs.size(); ++i)
    if (auto why = state::CheckDocument(docs[i]); !why.empty())
      return Status::InvalidArgument("documents[" + std::to_string(i) + "]: " + why);

  MemoryPlan plan;
  uint64_t seq = engine_.next_seq();
  size_t imported = 0, skipped = 0;
  std::map<std::string, std::string> renamed;  // imported id -> id here, on a clash
  std::set<std::string> taken;
  for (const json& d : docs) {
    auto have = p.Get(Pool::kDocuments, d["sha256"].get<std::string>());
    if (!have.ok()) return have.status();
    if (have->has_value() || !taken.insert("doc:" + d["sha256"].get<std::string>()).second) {
      ++skipped;
      continue;
    }
    plan.events.push_back(MakeEvent(EventType::kDocumentIngested, {{"document", d}}));
    ++seq;
    ++imported;
  }
  std::vector<json> stored;
  for (const json& m : memories) {
    const std::string id = m["id"];
    auto have = p.Get(Pool::kMemories, id);
    if (!have.ok()) return have.status();
    json mine = m;
    if (have->has_value() || taken.count(id)) {
      const json& old = have->has_value() ? **have : json::object();
      // The same memory (kind and content): already here.
      if (have->has_value() && old.value("kind", "") == m["kind"] &&
          old.value("text", "") == m.value("text", old.value("text", "")) &&
          old.value("subject", "") == m.value("subject", "") &&
          old.value("object", "") == m.value("object", "")) {
        ++skipped;
        continue;
      }
      mine["id"] = renamed[id] = "m-" + std::to_string(seq);
    }
    taken.insert(mine["id"].get<std::string>());
    stored.push_back(std::move(mine));
    ++seq;
  }
  for (json& m : stored) {
    if (m.contains("superseded_by") && renamed.count(m["superseded_by"]))
      m["superseded_by"] = renamed[m["superseded_by"]];
    plan.events.push_back(MakeEvent(EventType::kMemoryStored, {{"memory", std::move(m)}}));
    ++imported;
  }
  for (const json& a : assocs) {
    const std::string ea = a["entity_a"], rel = a["relation"], eb = a["entity_b"];
    auto have = p.FindAssociation(ea, rel, eb);
    if (!have.ok()) return have.status();
    if (have->has_value() || !taken.insert("as:" + ea + '\0' + rel + '\0' + eb).second) {
      ++skipped;
      continue;
    }
    plan.events.push_back(
        MakeEvent(EventType::kAssociationAdded, {{"association_id", "as-" + std::to_string(seq)},
                                                 {"entity_a", ea},
                                                 {"relation", rel},
                                                 {"entity_b", eb}}));
    ++seq;
    ++imported;
  }
  plan.answer = {{"imported", imported}, {"skipped", skipped}};
  return plan;
}

namespace {

// A file of a request's "files", its content decoded (or the name of its
// kept original).
struct SentFile {
  std::string name;
  std::optional<std::string> content;
  std::string sha256;  // when content is absent
};

// "" when `name` may name a sent file; otherwise what is wrong with it:
// the characters of a name (base/name.h), on up to kMaxIngestNameBytes.
std::string BadName(const std::string& name) {
  if (name.empty()) return "empty";
  std::string fault = TextFault(name, kMaxIngestNameBytes, false);
  if (fault.empty()) return "";
  return "must be 1-" + std::to_string(kMaxIngestNameBytes) +
         " bytes of UTF-8 without control or bidi-control characters; " + fault;
}

// The shape of "files": errors name the field ("field \"files[2].content\"").
Result<std::vector<SentFile>> ParseSentFiles(const json& files) {
  if (!files.is_array() || files.empty() || files.size() > kMaxIngestFiles)
    return Status::InvalidArgument("field \"files\": must be a list of 1-" +
                                   std::to_string(kMaxIngestFiles) + " {name, content} objects");
  std::vector<SentFile> out;
  for (size_t i = 0; i < files.size(); ++i) {
    const json& f = files[i];
    const std::string field = "field \"files[" + std::to_string(i) + "]";
    if (!f.is_object()) return Status::InvalidArgument(field + "\": must be an object");
    for (auto it = f.begin(); it != f.end(); ++it)
      if (it.key() != "name" && it.key() != "content" && it.key() != "sha256")
        return Status::InvalidArgument(field + "." + it.key() +
                                       "\": unknown (name, content, sha256)");
    SentFile sent;
    if (!f.contains("name") || !f["name"].is_string())
      return Status::InvalidArgument(field +
                                     ".name\": required, a string (the file's path or name)");
    sent.name = f["name"].get<std::string>();
    if (std::string bad = BadName(sent.name); !bad.empty())
      return Status::InvalidArgument(field + ".name\": " + bad);
    if (f.contains("content") == f.contains("sha256"))
      return Status::InvalidArgument(field + "\": give one of content (base64) and sha256");
    if (f.contains("content")) {
      if (!f["content"].is_string())
        return Status::InvalidArgument(field + ".content\": must be a base64 string");
      auto bytes = Base64Decode(f["content"].get_ref<const std::string&>());
      if (!bytes.ok()) return bytes.status().WithContext(field + ".content\"");
      sent.content = std::move(*bytes);
    } else {
      const json& sha = f["sha256"];
      if (!sha.is_string() || sha.get_ref<const std::string&>().size() != 64 ||
          sha.get_ref<const std::string&>().find_first_not_of("0123456789abcdef") !=
              std::string::npos)
        return Status::InvalidArgument(field + ".sha256\": must be 64 lower-case hex digits");
      sent.sha256 = sha.get<std::string>();
    }
    out.push_back(std::move(sent));
  }
  return out;
}

// The bytes of a sent file: its content, or its original as kept in
// raw_dir (read below raw_dir only, without following a symlink, and
// checked against its name).
Result<std::string> SentBytes(SentFile& f, const std::string& raw_dir, uint64_t max_bytes) {
  if (f.content) return std::move(*f.content);
  const std::string ext = IngestExtension(f.name);
  if (ext.empty()) return LoadContent(f.name, "", max_bytes).status();  // names the type
  const std::string kept = raw_dir + "/" + f.sha256 + ext;
  IngestScope raw_scope{true, {raw_dir}, max_bytes};
  auto raw = ReadIngestFile(kept, raw_scope);
  if (!raw.ok())
    return raw.status().WithContext(f.name + ": its original " + f.sha256 + ext +
                                    " is not kept in " + raw_dir);
  if (Sha256::Hex(*raw) != f.sha256)
    return Status::InvalidArgument(f.name + ": the kept original " + kept +
                                   " does not hash to its name");
  return raw;
}

// The source_uri of a document: a path made absolute and normal (a sent
// name that is not a path is kept as sent).
std::string SourceUri(const std::string& path, bool sent) {
  if (sent && (path.empty() || path.front() != '/')) return path;
  return std::filesystem::absolute(path).lexically_normal().string();
}

}  // namespace

Result<PreparedIngest> PrepareIngest(const json& req, const IngestScope& scope,
                                     const MemoryOptions& options, Embedder& embedder,
                                     const std::string& raw_dir,
                                     const std::shared_ptr<spdlog::logger>& log) {
  LIMBIC_RETURN_IF_ERROR(CheckRequest(req, {"path", "files", "episode_id"}));
  if (req.contains("path") == req.contains("files"))
    return Status::InvalidArgument(
        "give one of \"path\" (a file or folder the runtime reads) and \"files\" (their "
        "content, sent)");
  std::optional<std::vector<SentFile>> sent;
  if (req.contains("files")) {
    auto parsed = ParseSentFiles(req["files"]);
    if (!parsed.ok()) return parsed.status();
    sent = std::move(*parsed);
  } else if (!req["path"].is_string() || req["path"].get_ref<const std::string&>().empty()) {
    return Status::InvalidArgument("field \"path\": must be a file or folder path");
  }
  PreparedIngest out;
  if (req.contains("episode_id")) {
    if (!req["episode_id"].is_string() || !state::IsValidId(req["episode_id"].get<std::string>()))
      return Status::InvalidArgument(
          "field \"episode_id\": must be an id (1-128 characters of [A-Za-z0-9._:-])");
    out.episode_id = req["episode_id"].get<std::string>();
  }
  out.embedder_id = embedder.id();
  std::set<std::string> kept;
  // Chunks, embeds and keeps one loaded file.
  auto prepare = [&](LoadedFile loaded, bool from_request) -> Status {
    PreparedFile f;
    f.path = loaded.path;
    f.source_uri = SourceUri(loaded.path, from_request);
    f.sha256 = loaded.sha256;
    f.ext = loaded.ext;
    f.bytes = loaded.bytes;
    // The same bytes twice in one request are one document: PlanIngest
    // reports the second as a duplicate; no need to chunk it again.
    if (kept.insert(f.sha256).second) {
      f.chunks = ChunkText(loaded.text, options.chunk_chars, options.chunk_overlap);
      auto v = embedder.Embed(f.chunks);
      if (v.ok()) {
        f.vectors = std::move(*v);
      } else {
        f.note = "embedder " + embedder.id() + " unavailable: " + v.status().message();
        if (log) log->warn("memory: {}; storing without a vector", f.note);
      }
      auto raw = KeepRaw(raw_dir, loaded);
      if (!raw.ok()) return raw.status();
      f.raw = *raw;
    }
    out.files.push_back(std::move(f));
    return Status::OK();
  };

  // Sent files: every one that cannot be read is listed in errors, as in
  // a folder; nothing of the runtime's machine is read but kept originals.
  if (sent) {
    for (SentFile& f : *sent) {
      auto bytes = SentBytes(f, raw_dir, scope.max_bytes);
      auto loaded = bytes.ok() ? LoadContent(f.name, std::move(*bytes), scope.max_bytes)
                               : Result<LoadedFile>(bytes.status());
      if (!loaded.ok()) {
        out.errors.push_back({{"path", f.name}, {"error", loaded.status().ToString()}});
        continue;
      }
      LIMBIC_RETURN_IF_ERROR(prepare(std::move(*loaded), true));
    }
    return out;
  }

  std::string path;
  out.refusal = ScopeRefusal(req["path"], scope, &path);
  if (!out.refusal.empty()) return out;
  std::vector<std::string> files;
  std::vector<SkippedFile> skipped;
  LIMBIC_RETURN_IF_ERROR(ListIngestable(path, &files, &skipped, scope));
  const bool single = !std::filesystem::is_directory(path);
  for (const SkippedFile& sk : skipped)
    out.skipped.push_back({{"path", sk.path}, {"reason", sk.reason}});
  for (const std::string& file : files) {
    auto loaded = LoadFile(file, scope);
    if (!loaded.ok()) {
      if (single) return loaded.status();
      out.errors.push_back({{"path", file}, {"error", loaded.status().ToString()}});
      continue;
    }
    LIMBIC_RETURN_IF_ERROR(prepare(std::move(*loaded), false));
  }
  return out;
}

Result<MemoryPlan> MemoryStore::Ingest(const json& req) {
  IngestScope scope;
  scope.max_bytes = options_.ingest_max_bytes;
  auto prepared = PrepareIngest(req, scope, options_, *embedder_, dir() + "/raw", log_);
  if (!prepared.ok()) return prepared.status();
  return PlanIngest(std::move(*prepared));
}

Result<MemoryPlan> MemoryStore::PlanIngest(PreparedIngest prepared) {
  if (!prepared.refusal.empty()) return Status::InvalidArgument(prepared.refusal);
  MemoryPlan plan;
  json done = json::array();
  uint64_t seq = engine_.next_seq();
  std::set<std::string> seen;
  for (PreparedFile& f : prepared.files) {
    auto have = engine_.projection().Get(Pool::kDocuments, f.sha256);
    if (!have.ok()) return have.status();
    if (have->has_value() || !seen.insert(f.sha256).second) {
      done.push_back(
          {{"path", f.path}, {"sha256", f.sha256}, {"status", "duplicate"}, {"chunks", 0}});
      continue;
    }
    // Vectors of another embedder than the store's are not stored.
    const bool embedded = f.vectors && f.vectors->size() == f.chunks.size() &&
                          prepared.embedder_id == embedder_->id();
    const std::string& uri = f.source_uri;
    json document = {{"sha256", f.sha256}, {"source_uri", uri},         {"ext", f.ext},
                     {"bytes", f.bytes},   {"chunks", f.chunks.size()}, {"raw", f.raw}};
    if (prepared.episode_id) document["episode_id"] = *prepared.episode_id;
    plan.events.push_back(MakeEvent(EventType::kDocumentIngested, {{"document", document}}));
    ++seq;
    for (size_t i = 0; i < f.chunks.size(); ++i) {
      json m = {{"id", "m-" + std::to_string(seq)},
                {"kind", "chunk"},
                {"importance", 0.5},
                {"tags", json::array()},
                {"namespace", "default"},
                {"strength", 1.0},
                {"text", std::move(f.chunks[i])},
                {"source_uri", uri},
                {"chunk_index", i},
                {"document", f.sha256}};
      if (prepared.episode_id) m["episode_id"] = *prepared.episode_id;
      if (embedded)
        m["embedding"] = {{"embedder", embedder_->id()}, {"vector", EncodeVector((*f.vectors)[i])}};
      plan.events.push_back(MakeEvent(EventType::kMemoryStored, {{"memory", std::move(m)}}));
      ++seq;
    }
    json entry = {{"path", f.path},
                  {"sha256", f.sha256},
                  {"status", "ingested"},
                  {"chunks", f.chunks.size()}};
    if (!f.note.empty()) entry["note"] = f.note;
    done.push_back(std::move(entry));
  }
  plan.answer = {{"files", done}, {"skipped", prepared.skipped}, {"errors", prepared.errors}};
  plan.created = !plan.events.empty();
  return plan;
}

}  // namespace limbic::memory
