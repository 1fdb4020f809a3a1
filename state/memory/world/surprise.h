// Surprise: how badly the current world model predicted each new event
// (docs/world.md "Surprise").
//
// heuristic (the default): for an event e of an extraction, scored in
// order, against what the model knew before it (earlier scored events,
// MEMORY.md items, entity pages, the graph, and the events of the same
// extraction scored before e):
//   text      = 1 - max cosine(v(e), v(m)) over the remembered texts m,
//               v = the hash embedder (lexical, 384 dims); 1 when nothing
//               is remembered; 0 for a text remembered word for word
//   entities  = the share of e's entities with no page and not seen earlier
//               in the extraction
//   relations = the share of the extraction's triplets between e's
//               entities that are not in the graph (absent when there are
//               none)
//   surprise  = (0.5 text + 0.3 entities + 0.2 relations) / (sum of the
//               weights present), in [0, 1]
// llm: the model is shown MEMORY.md and asked to predict the events of the
// day (JSON {"predictions": [text]}); `text` is then 1 - max cosine
// against the predictions instead of the remembered texts (entities and
// relations as above). On any failure the heuristic score is used and the
// reason is noted once per extraction.
//
// Thread-safety: one scorer per thread.
#pragma once

#include <spdlog/logger.h>

#include <functional>
#include <memory>
#include <unordered_set>
#include <string>
#include <vector>

#include "state/memory/embedder.h"
#include "state/memory/world/chat.h"
#include "state/memory/world/model.h"

namespace limbic::world {

struct SurpriseScore {
  std::string date, text, source;
  std::vector<std::string> entities;
  double score = 0;
  double text_novelty = 0, entity_novelty = 0;
  double relation_novelty = -1;  // -1: no relation among the event's entities
  std::string mode;              // heuristic | llm
};
json ScoreToJson(const SurpriseScore& s);
// Errors name the missing or mistyped field.
Result<SurpriseScore> ScoreFromJson(const json& j);

struct SurpriseSpec {
  std::string mode = "heuristic";  // heuristic | llm
  ChatSpec llm;
};

// What the model knew before an extraction.
struct Known {
  std::function<bool(std::string_view name)> entity;  // a page exists
  std::function<bool(const Triplet&)> edge;           // in the graph
  std::vector<std::string> texts;                     // earlier events, MEMORY.md items
  std::string memory_md;                              // MEMORY.md, for llm mode
};

class SurpriseScorer {
 public:
  SurpriseScorer(SurpriseSpec spec, std::shared_ptr<spdlog::logger> log);
  ~SurpriseScorer();
  // Remembers `known.texts` (embedded once; later calls add to them).
  void Remember(const std::vector<std::string>& texts);
  // Scores the extraction's events in order; each scored event is then
  // remembered. `note` gets why llm mode fell back, if it did.
  std::vector<SurpriseScore> Score(const Extraction& x, const Known& known, const std::string& source,
                                   std::string* note);

 private:
  double TextNovelty(const memory::Vector& v, const std::vector<memory::Vector>& against) const;
  SurpriseSpec spec_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<memory::Embedder> embedder_;
  std::vector<memory::Vector> memory_;
  std::unordered_set<std::string> exact_;  // NameKey of remembered texts
};

}  // namespace limbic::world
