// MemoryStore: long-term memory's operations, shared by the command line,
// the HTTP API and (through the API) MCP, so all three do the same thing
// and answer the same JSON (docs/memory.md, docs/api.md "Memory").
//
// Writes are planned here and committed by the caller: each write
// operation validates its request against the applied state, computes
// embeddings, and returns a MemoryPlan -- the events to submit and the
// answer to give once they are durable (the caller adds "seq" and
// "events"). Nothing is written when a plan fails. New memories get ids
// "m-<seq>", associations "as-<seq>" (seq: the event's), so a plan is only
// valid for the Engine::next_seq() it was made with: plan, then submit at
// once, on the Engine's owner thread.
//
// Recall (hybrid):
//   1. BM25 over memory texts (terms of the analyzer, memory.analyzer),
//      with each memory's context: its neighbours and its episode
//      (RecallIndex::Lexical) -> ranked list L
//   2. the query's vector (the configured embedder) against the vectors of
//      the same embedder, cosine >= vector_threshold -> ranked list V;
//      when the embedder fails, V is empty, the answer's "vector" says
//      why and a warning is logged ("falls back to BM25")
//   3. archive days and staged entries (ArchiveSearch, given by the caller
//      as `archive_hits`, already ranked) -> ranked list A
//   4. fused = sum over the lists holding the item of the list's weight x
//      its score over the list's best (fusion.method "score") or x
//      1 / (rrf_k + rank), rank from 1 ("rrf"): FusionParams;
//      score = fused * effective strength * recency, where
//      effective strength = strength * 0.5^(hours since last access /
//      half_life_hours) (1 for archive items) and recency =
//      1 / (1 + days since created / recency_days)
//   5. associations, one hop (as Conch's recall does): from each memory
//      among the best k so far, through the entities it names (its own
//      id; a fact's subject and object) and each association at one of
//      them, to the memories the association's other end names (the
//      memory of that id, the facts with it as subject or object). Such a
//      memory scores kAssociationFactor (0.8) x its source's score: the
//      best over its sources (the first found on a tie), and a direct hit
//      keeps its own score unless the link gives more. It must pass the
//      request's filters like any hit; with explain, its path.
//   6. the best k, ties by id; superseded facts only when asked for
//      (include_superseded). With reinforce (the default), one
//      memory_touched event for all k, associated ones too: strength =
//      min(max_strength, effective + 0.2 for episodes and chunks, + 0.1
//      for facts), access_count + 1, last_accessed_at = now.
// Candidates per list: max(50, 10 k).
//
// Decay is computed on read (above); a decay pass only deletes what has
// faded below min_strength (memory_forgotten, reason "decay"), and
// refuses (FailedPrecondition) when that would be more than half of all
// memories, unless forced.
//
// Thread-safety: the Engine's owner thread only. Open registers an Engine
// listener that keeps the recall index current; the Engine must outlive
// the store.
#pragma once

#include <spdlog/logger.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "memory/embedder.h"
#include "memory/ingest.h"
#include "memory/recall_index.h"
#include "state/engine.h"

namespace limbic::memory {

//! What an associated memory scores, as a share of its source's score.
inline constexpr double kAssociationFactor = 0.8;

struct MemoryOptions {
  EmbedderSpec embedder;
  double half_life_hours = 24;
  double min_strength = 0.01;
  double max_strength = 1.0;
  double episode_boost = 0.2;  // episodes and chunks
  double fact_boost = 0.1;
  double recency_days = 30;
  float vector_threshold = 0.3f;
  double duplicate_cosine = 0.95;  // a new episode this close reinforces instead
  size_t rrf_k = 60;
  // How memory texts and queries become terms, and the archive's search
  // too: none or a Snowball language (archive/analyzer.h).
  std::string analyzer = "english";
  Bm25Params bm25;
  ContextParams context;
  FusionParams fusion;
  VectorIndexOptions vectors;  // dims are the embedder's
  size_t chunk_chars = 1000;
  size_t chunk_overlap = 500;
  // Over HTTP and MCP, ingest reads only under these directories (none:
  // it is refused); the local command line reads any path.
  std::vector<std::string> ingest_roots;
  uint64_t ingest_max_bytes = kDefaultIngestMaxBytes;  // per file, everywhere
};

struct MemoryPlan {
  std::vector<state::Event> events;  // may be empty: nothing to write
  json answer;                       // the reply; "seq" and "events" are added on commit
  bool created = false;              // HTTP 201
};

// Archive hits for recall, best first.
struct ArchiveHit {
  std::string id;    // "archive:DATE" / "staging:DATE:N"
  std::string kind;  // archive | staged
  std::string date;
  std::string text;  // the snippet
  double score = 0;
};

struct RecallRequest {
  std::string query;
  size_t k = 5;
  std::optional<std::string> kind, tag, ns, episode_id;
  bool explain = false;
  bool reinforce = true;
  bool include_superseded = false;

  // Whether archive items can be in the answer: kind archive/staged or no
  // kind, and no memory-only filter (tag, namespace, episode_id).
  bool WantsArchive() const {
    return (!kind || *kind == "archive" || *kind == "staged") && !tag && !ns && !episode_id;
  }
  // Candidates taken from each ranked list: max(50, 10 k).
  size_t Depth() const { return std::max<size_t>(50, k * 10); }
};
// Archive hits from ArchiveStore::Search's answer (kind "archived" becomes
// "archive"), in its order.
std::vector<ArchiveHit> ArchiveHitsFromSearch(const json& search);
// {query, k?, kind?, tag?, namespace?, episode_id?, explain?, reinforce?,
//  include_superseded?}; errors name the field.
Result<RecallRequest> ParseRecallRequest(const json& req);

// An ingest's file work, done before its plan (PrepareIngest): read,
// checked, chunked, embedded, the original kept. No events yet.
struct PreparedFile {
  std::string path;        // as listed, or the name it was sent with
  std::string source_uri;  // the document's: the absolute path, or the name sent
  std::string sha256;      // of the bytes
  std::string ext;
  uint64_t bytes = 0;
  std::string raw;  // where the original is kept
  std::vector<std::string> chunks;
  std::optional<std::vector<Vector>> vectors;  // nullopt: the embedder failed (note says why)
  std::string note;
};
struct PreparedIngest {
  std::string refusal;  // not empty: the scope refuses the path (HTTP 403); nothing else is set
  std::optional<std::string> episode_id;
  std::string embedder_id;  // the vectors' embedder
  std::vector<PreparedFile> files;
  json skipped = json::array();  // [{path, reason}]
  json errors = json::array();   // [{path, error}]
};

// A request's "files": at most this many, each name at most this long.
inline constexpr size_t kMaxIngestFiles = 1000;
inline constexpr size_t kMaxIngestNameBytes = 4096;

// The file work of an ingest request {path | files, episode_id?}. `path`:
// lists and reads under `scope` (ingest.h). `files`: [{name, content}]
// (content: the file's bytes, base64) or [{name, sha256}] (the file's
// original, already kept as raw_dir/<sha256><ext>: `limbic memory ingest`
// puts a file too big for one request there); the name's extension
// decides how it is read, up to scope.max_bytes, and the name becomes the
// document's source (made absolute and normal when it is a path, "/...").
// Every sent file that cannot be read is listed in `errors`. Then: chunks
// with options' chunk sizes, embeds with
// `embedder` (which the caller owns: not the store's, so this may run on a
// worker thread while the store serves its owner thread), keeps originals
// under raw_dir. Any thread. Errors name the field or the file; a single
// named file that fails is the request's error, a file in a folder that
// fails is listed in errors.
Result<PreparedIngest> PrepareIngest(const json& req, const IngestScope& scope,
                                     const MemoryOptions& options, Embedder& embedder,
                                     const std::string& raw_dir,
                                     const std::shared_ptr<spdlog::logger>& log);

// Vectors made before a plan, off the thread that plans (the runtime's
// embed worker): for the texts FactText, EpisodeText or the recall query
// name, by the embedder `embedder_id`. A store whose embedder has another
// id ignores them and embeds itself.
struct Embedded {
  std::string embedder_id;
  Result<std::vector<Vector>> vectors = std::vector<Vector>{};  // an error: the embedder failed
};
// The text a fact's vector is made of: "subject relation object".
std::string FactText(const json& fact);
// An episode's text ("" when it has none).
std::string EpisodeText(const json& episode);

// Memories to (re-)embed: their ids and texts (EmbedTodo), then the vectors
// (Embed or the runtime's worker), then the events (PlanEmbedded).
struct EmbedWork {
  std::vector<std::string> ids;
  std::vector<std::string> texts;
};

class MemoryStore {
 public:
  // `embedder` nullptr = MakeEmbedder(options.embedder). Builds the recall
  // index from the pool (and <state>/memory/vectors-*.hnsw when present).
  static Result<std::unique_ptr<MemoryStore>> Open(state::Engine& engine, MemoryOptions options,
                                                   std::shared_ptr<spdlog::logger> log,
                                                   std::unique_ptr<Embedder> embedder = nullptr);
  ~MemoryStore();

  // {subject, relation, object, importance?, tags?, namespace?}. The
  // vector from `embedded` when it is this store's embedder's, else made
  // here (so: on the caller's thread).
  Result<MemoryPlan> RememberFact(const json& req, const Embedded* embedded = nullptr);
  // {text, importance?, tags?, namespace?, episode_id?}; `embedded` as above.
  Result<MemoryPlan> RememberEpisode(const json& req, TimeMs now,
                                     const Embedded* embedded = nullptr);
  // {entity_a, relation, entity_b}
  Result<MemoryPlan> Relate(const json& req);
  // {entity, depth, related: [{entity, relation, from, to, depth, via}]}:
  // breadth first over associations and current facts, depth 1..3.
  Result<json> Related(const std::string& entity, int depth) const;
  // {query, vector: {used, embedder, note?}, reinforced, results: [the
  // memory + {score, source?, via?, explain?}]}, best first (the steps
  // above). `via`: an associated hit's source id. explain: the lists'
  // components {fused, fusion, parts, strength, recency, rrf_k?, bm25?,
  // lexical?, vector?, archive?}
  // of a direct hit; an associated one's {association: {from,
  // from_score, factor, id, entity_a, relation, entity_b, through,
  // reached, as}, direct_score?}.
  // The query's vector from `embedded` (EmbedRole::kQuery), as above.
  Result<MemoryPlan> Recall(const RecallRequest& req, TimeMs now,
                            const std::vector<ArchiveHit>& archive_hits = {},
                            const Embedded* embedded = nullptr);
  // Exactly one of {id}, {subject}, {older_than: duration}, and force?.
  // older_than takes the memories created before now - older_than (the
  // creation time, not the last access); like decay it refuses
  // (FailedPrecondition) to delete more than half of all memories unless
  // force is true.
  Result<MemoryPlan> Forget(const json& req, TimeMs now);
  Result<MemoryPlan> Decay(bool force, TimeMs now);
  Result<json> Stats(TimeMs now) const;
  // Vectors for memories without one of this embedder (all: every memory):
  // EmbedTodo, the embedder on this thread `batch` texts at a time
  // (progress(done, total) after each), PlanEmbedded.
  Result<MemoryPlan> Embed(bool all, const std::function<void(size_t, size_t)>& progress = nullptr);
  // The memories Embed would embed, by id, with their texts. Owner thread.
  Result<EmbedWork> EmbedTodo(bool all) const;
  // The same in two steps, so a large embed reads its texts a slice at a
  // time between other requests: the ids (texts empty), then the texts of
  // ids[texts.size(), end) appended (a memory forgotten meanwhile gets "").
  // Owner thread.
  EmbedWork EmbedIds(bool all) const;
  Status ReadEmbedTexts(EmbedWork* work, size_t end) const;
  // memory_embedded events for `work`'s vectors (one per id, in order),
  // made by `embedder_id`: FailedPrecondition when that is not this store's
  // embedder (the configuration changed meanwhile). Only the ids in
  // [begin, end) of work.ids (the vectors are all of them, in order): a
  // large embed is planned and committed a piece at a time. Owner thread.
  Result<MemoryPlan> PlanEmbedded(const EmbedWork& work, const std::vector<Vector>& vectors,
                                  const std::string& embedder_id, size_t begin = 0,
                                  size_t end = SIZE_MAX) const;
  // Vectors per memory_embedded event (keeps its line near 0.5 MB).
  static constexpr size_t kVectorsPerEvent = 256;
  Result<json> Export() const;
  // An Export; validated whole before anything is planned.
  Result<MemoryPlan> Import(const json& doc);
  // {path, episode_id?}: files and folders (ingest.h), unrestricted (the
  // local command line) but for memory.ingest_max_bytes; originals under
  // <state>/memory/raw/. PrepareIngest then PlanIngest, on this thread.
  Result<MemoryPlan> Ingest(const json& req);
  // The scope of ingest requests from the HTTP API and MCP: restricted to
  // memory.ingest_roots, memory.ingest_max_bytes per file.
  IngestScope ApiIngestScope() const {
    return {true, options_.ingest_roots, options_.ingest_max_bytes};
  }
  // The plan for a prepared ingest: documents already in the pool (or twice
  // in the request) are reported as duplicates, the rest become
  // document_ingested + memory_stored events. Owner thread.
  Result<MemoryPlan> PlanIngest(PreparedIngest prepared);
  // The memory as answered (with effective_strength), NotFound if absent.
  Result<json> Get(const std::string& id, TimeMs now) const;

  // Writes the HNSW graph when it changed (on close). Errors are logged by
  // the caller. With memory entries still queued for the graph
  // (options.vectors.defer_graph): up to kSaveCatchUp of them are
  // inserted first; with more, nothing is written (the saved graph, if
  // any, stays as it was, and the next open queues what it lacks again).
  Status SaveIndex();
  static constexpr size_t kSaveCatchUp = 2000;
  // With options.vectors.defer_graph (the runtime's): the memories whose
  // vectors wait to go into the HNSW graph, and a step that inserts up to
  // `max` of them (recall meanwhile scores the waiting ones exactly).
  // Owner thread.
  size_t IndexBacklog() const;
  Status IndexStep(size_t max);
  const Embedder& embedder() const { return *embedder_; }
  // As opened: options.embedder with EMBEDDING_MODEL applied (when Open made
  // the embedder).
  const MemoryOptions& options() const { return options_; }
  // The memory directory: <state>/memory.
  std::string dir() const;

 private:
  MemoryStore(state::Engine& engine, MemoryOptions options, std::shared_ptr<spdlog::logger> log,
              std::unique_ptr<Embedder> embedder);
  Status Load();
  void OnApplied(std::span<const state::Event> events);
  double Effective(const MemoryMeta& m, TimeMs now) const;
  json Answer(const json& record, TimeMs now) const;
  // One vector per text, or nullopt (and *note says why) when the embedder fails.
  std::optional<std::vector<Vector>> TryEmbed(const std::vector<std::string>& texts, EmbedRole role,
                                              const Embedded* given, std::string* note);
  Result<json> NewMemory(const json& req, const std::string& kind, uint64_t seq);
  std::string HnswPath() const;

  state::Engine& engine_;
  MemoryOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<Embedder> embedder_;
  std::shared_ptr<const archive::Analyzer> analyzer_;
  std::unique_ptr<RecallIndex> index_;
  std::shared_ptr<bool> alive_;  // the listener checks it: the Engine may outlive us
};

}  // namespace limbic::memory
