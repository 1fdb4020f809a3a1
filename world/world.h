// WorldModel: the files-first world model under <state>/memory/
// (docs/world.md):
//
//   entities/<Name>.md           one wiki page per entity (entity_store.h)
//   entities/archive/<Name>.md   pages not referenced for decay_days
//   graph.jsonl                  relation triplets (graph.h)
//   surprise-scores.jsonl        one scored event per line (surprise.h)
//   MEMORY.md                    the long-term summary, by section
//   extracted.jsonl              the ledger: one line per input extracted
//                                {source, date, sha256, at, extractor, counts}
//   .world.lock, MEMORY.md.lock  flock targets (Extract; Consolidate)
//
// Extract runs one input through the pipeline: extractor -> surprise
// (against the model as it was before this input) -> entity pages, graph,
// surprise scores -> ledger. An input whose source and SHA-256 are already
// in the ledger is skipped (answer "skipped": true) unless forced; events
// already scored (same date and text) are not scored again, so a forced
// re-extraction adds no duplicates anywhere. Each Extract holds a flock on
// .world.lock and first reads what other processes scored since, so a
// `limbic memory extract` beside a running limbic scores nothing twice.
// Every entity of an extraction gets at least one timeline line of its
// date ("mentioned in SOURCE" when no event named it): its last reference.
//
// Consolidate appends every scored event above the threshold that is not
// yet in MEMORY.md (by NameKey of its text) under the section of its first
// entity's type (People, Companies, Projects, Tools, Concepts; Events when
// it has none), writing MEMORY.md through a temp file and rename; then it
// runs entity decay. Hand edits to MEMORY.md are kept.
//
// Everything here is a file: `cat` and `grep` are valid queries, and the
// files are derived from the events log, the archive and daily logs, so a
// lost world model is rebuilt by extracting again.
//
// Thread-safety: one WorldModel per thread; several processes may share
// one memory dir (each file is appended or replaced under a flock).
#pragma once

#include <spdlog/logger.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>

#include "world/entity_store.h"
#include "world/extract.h"
#include "world/graph.h"
#include "world/surprise.h"

namespace limbic::world {

struct WorldOptions {
  bool daily = true;  // the runtime extracts each past day once, then consolidates
  ExtractorSpec extractor;
  SurpriseSpec surprise;
  double threshold = 0.5;       // surprise above which an event goes to MEMORY.md
  int decay_days = 30;          // entities not referenced this long are archived
  std::set<EntityType> protected_types;
  size_t max_file_bytes = 64 << 20;  // larger daily-log files are refused
};

class WorldModel {
 public:
  // `memory_dir` is <state>/memory (created if missing). Every change to
  // its files goes through `env` (world/files.h).
  static Result<std::unique_ptr<WorldModel>> Open(const std::string& memory_dir, WorldOptions options,
                                                  std::shared_ptr<spdlog::logger> log,
                                                  Env* env = Env::Default());
  ~WorldModel();

  // {source, date, sha256, skipped, extractor, note?, entities, triplets,
  //  events, pages_created, pages_updated, lines_added, restored,
  //  graph_added, scored, surprising}
  Result<json> Extract(const ExtractInput& input, bool force = false);
  // Once *stop is true, an extraction scoring its events gives up with
  // Unavailable, writing nothing of its input (the next pass extracts it
  // again): what a stopping runtime sets. `stop` must outlive this model.
  void set_stop(const std::atomic<bool>* stop) { scorer_->set_stop(stop); }
  // {added, sections{...}, decayed[names], memory_md}
  Result<json> Consolidate(const std::string& today);
  // {entities: [PageInfo as JSON + stale]}, filtered by type; stale: only
  // entities last referenced more than decay_days before today.
  Result<json> Entities(std::optional<EntityType> type, bool stale, const std::string& today) const;
  // graph.h's Neighbors and Path, over the graph file as it is now.
  Result<json> Neighbors(std::string_view name, int hops) const;
  Result<json> Path(std::string_view from, std::string_view to) const;
  // {name, markdown}: one entity's page (active or archived); NotFound
  // naming it.
  Result<json> Page(std::string_view name) const;
  // {path, markdown}: MEMORY.md ("" before the first consolidation).
  Result<json> MemoryMd() const;
  // {entities: [ContextText], memory_md: [ContextText]} (context.h) for a
  // prompt: the pages, active or archived, of the entities that `query` or
  // `focus` names (NamedIn; the query's mentions first; at most 16), and
  // MEMORY.md's sections for `query` (MemorySections).
  Result<json> Context(std::string_view query, std::string_view focus) const;
  // {scores: [...]} of one date (all dates when empty), highest first.
  Result<json> Surprise(const std::string& date) const;
  // The dates already in the ledger (sources "day:YYYY-MM-DD").
  Result<std::set<std::string>> ExtractedDays() const;

  const std::string& dir() const { return dir_; }
  const WorldOptions& options() const { return options_; }

 private:
  WorldModel(std::string dir, WorldOptions options, std::shared_ptr<spdlog::logger> log, Env* env);
  Result<std::vector<SurpriseScore>> LoadScores() const;
  // Entity pages, relations and timeline lines for one extraction of
  // `source`, about `date`.
  std::vector<PageUpdate> PageUpdates(const Extraction& x, const std::string& date,
                                      const std::string& source) const;
  // Reads the scores other processes (or this one) appended since the last
  // look: their events count as scored and their texts as known.
  Status CatchUpScores();
  std::string PathOf(std::string_view file) const { return dir_ + "/" + std::string(file); }

  std::string dir_;
  WorldOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  Env* env_;
  std::unique_ptr<Extractor> extractor_;
  std::unique_ptr<SurpriseScorer> scorer_;
  std::unique_ptr<EntityStore> entities_;
  std::unique_ptr<GraphStore> graph_;
  uint64_t scores_offset_ = 0;  // bytes of surprise-scores.jsonl read so far
  std::unordered_set<std::string> scored_;  // date + '\x1f' + NameKey(text) of every scored event
};

// Files of the world model, relative to the memory dir.
inline constexpr std::string_view kScoresFile = "surprise-scores.jsonl";
inline constexpr std::string_view kLedgerFile = "extracted.jsonl";
inline constexpr std::string_view kMemoryFile = "MEMORY.md";
inline constexpr std::string_view kGraphFile = "graph.jsonl";
inline constexpr std::string_view kLockFile = ".world.lock";  // held by each Extract

// The text of one MEMORY.md item line ("- DATE: text (surprise 0.71)" ->
// "text"); lines that are not items give "".
std::string MemoryItemText(std::string_view line);


}  // namespace limbic::world
