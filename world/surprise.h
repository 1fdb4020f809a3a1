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

#include <atomic>

#include <spdlog/logger.h>

#include <functional>
#include <memory>
#include <optional>
#include <unordered_set>
#include <string>
#include <vector>

#include "memory/embedder.h"
#include "base/chat.h"
#include "world/model.h"

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
  std::string memory_md;                              // MEMORY.md, for llm mode
};

class SurpriseScorer {
 public:
  SurpriseScorer(SurpriseSpec spec, std::shared_ptr<spdlog::logger> log);
  ~SurpriseScorer();
  // Texts the model already knows (earlier events, MEMORY.md items),
  // embedded once and kept for every later Score.
  void Remember(const std::vector<std::string>& texts);
  // How much is remembered; Rollback(mark) forgets what was remembered
  // since (a Score whose results could not be written).
  size_t Mark() const { return remembered_order_.size(); }
  void Rollback(size_t mark);
  // Once *stop (when given) is true, Score stops between two events and
  // stopping() says so: its caller writes nothing of it (Rollback). Each
  // event is compared with every one remembered, so a day of very many
  // events takes long; a stopping runtime must not wait for it.
  void set_stop(const std::atomic<bool>* stop) { stop_ = stop; }
  bool stopping() const { return stop_ && stop_->load(std::memory_order_relaxed); }
  // Scores the extraction's events in order; each scored event is then
  // remembered. `note` gets why llm mode fell back, if it did.
  std::vector<SurpriseScore> Score(const Extraction& x, const Known& known, const std::string& source,
                                   std::string* note);

 private:
  // Predictions of the day from MEMORY.md (llm mode); nullopt and *note on failure.
  std::optional<std::vector<memory::Vector>> Predict(const std::string& date, const Known& known,
                                                     std::string* note);
  memory::Vector Embed(const std::string& text);

  SurpriseSpec spec_;
  std::shared_ptr<spdlog::logger> log_;
  const std::atomic<bool>* stop_ = nullptr;
  std::unique_ptr<memory::Embedder> embedder_;
  // The largest cosine between `v` and a remembered vector.
  float BestRemembered(const memory::Vector& v);
  void Add(const memory::Vector& v);

  size_t dims_ = 0;
  // Remembered vectors as an inverted index over dimensions: texts of a few
  // words have features in a fifth of the hash embedder's dimensions, so
  // summing along the query's non-zero dimensions is several times less
  // work than a dense dot product with every remembered vector, and exact.
  std::vector<std::vector<std::pair<uint32_t, float>>> postings_;  // per dimension: (vector, value)
  uint32_t remembered_ = 0;
  std::vector<float> sums_;                // scratch: one partial dot product per remembered vector
  std::unordered_set<std::string> exact_;  // NameKey of remembered texts
  std::vector<std::string> remembered_order_;  // the same keys, in the order remembered
};

}  // namespace limbic::world
