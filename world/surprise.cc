#include "world/surprise.h"

#include <algorithm>
#include <unordered_map>

#include "base/input_json.h"
#include "base/time.h"

namespace limbic::world {
namespace {

constexpr double kTextWeight = 0.5, kEntityWeight = 0.3, kRelationWeight = 0.2;

// A model's list of predictions: {"predictions": ["...", ...]}, possibly
// fenced in ```json.
Result<std::vector<std::string>> ParsePredictions(std::string_view answer) {
  size_t open = answer.find('{'), close = answer.rfind('}');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return Status::InvalidArgument("the answer holds no JSON object");
  auto parsed = ParseInputJson(answer.substr(open, close - open + 1));
  if (!parsed.ok()) return Status::InvalidArgument("the answer " + AnswerRefusal(parsed.status()));
  json doc = std::move(*parsed);
  if (!doc.is_object()) return Status::InvalidArgument("the answer is not a JSON object");
  auto it = doc.find("predictions");
  if (it == doc.end() || !it->is_array()) return Status::InvalidArgument("predictions: must be an array");
  std::vector<std::string> out;
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string()) return Status::InvalidArgument("predictions[" + std::to_string(i) + "]: must be a string");
    out.push_back((*it)[i].get<std::string>());
  }
  return out;
}

}  // namespace

json ScoreToJson(const SurpriseScore& s) {
  json j = {{"date", s.date},
            {"text", s.text},
            {"source", s.source},
            {"entities", s.entities},
            {"score", s.score},
            {"text_novelty", s.text_novelty},
            {"entity_novelty", s.entity_novelty},
            {"mode", s.mode}};
  if (s.relation_novelty >= 0) j["relation_novelty"] = s.relation_novelty;
  return j;
}

Result<SurpriseScore> ScoreFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("must be a JSON object");
  SurpriseScore s;
  for (auto [key, out] : {std::pair{"date", &s.date}, {"text", &s.text}, {"source", &s.source}, {"mode", &s.mode}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return Status::InvalidArgument(std::string(key) + ": must be a string");
    *out = it->get<std::string>();
  }
  for (auto [key, out] : {std::pair{"score", &s.score}, {"text_novelty", &s.text_novelty},
                          {"entity_novelty", &s.entity_novelty}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return Status::InvalidArgument(std::string(key) + ": must be a number");
    *out = it->get<double>();
  }
  if (auto it = j.find("relation_novelty"); it != j.end()) {
    if (!it->is_number()) return Status::InvalidArgument("relation_novelty: must be a number");
    s.relation_novelty = it->get<double>();
  }
  if (auto it = j.find("entities"); it != j.end()) {
    if (!it->is_array()) return Status::InvalidArgument("entities: must be an array of strings");
    for (const json& e : *it) {
      if (!e.is_string()) return Status::InvalidArgument("entities: must be an array of strings");
      s.entities.push_back(e.get<std::string>());
    }
  }
  return s;
}

SurpriseScorer::SurpriseScorer(SurpriseSpec spec, std::shared_ptr<spdlog::logger> log)
    : spec_(std::move(spec)), log_(std::move(log)) {
  // The hash embedder cannot fail to build with its default spec.
  auto embedder = memory::MakeEmbedder(memory::EmbedderSpec{});
  embedder_ = std::move(*embedder);
  dims_ = memory::EmbedderSpec{}.dims;
}

SurpriseScorer::~SurpriseScorer() = default;

memory::Vector SurpriseScorer::Embed(const std::string& text) {
  auto v = embedder_->Embed(std::span<const std::string>(&text, 1));
  if (!v.ok() || v->empty() || (*v)[0].size() != dims_) return memory::Vector(dims_, 0.0f);
  return std::move((*v)[0]);
}

void SurpriseScorer::Add(const memory::Vector& v) {
  postings_.resize(dims_);
  for (size_t d = 0; d < v.size() && d < dims_; ++d)
    if (v[d] != 0.0f) postings_[d].emplace_back(remembered_, v[d]);
  ++remembered_;
}

float SurpriseScorer::BestRemembered(const memory::Vector& v) {
  if (remembered_ == 0) return 0;
  sums_.assign(remembered_, 0.0f);
  postings_.resize(dims_);
  for (size_t d = 0; d < v.size() && d < dims_; ++d) {
    float q = v[d];
    if (q == 0.0f) continue;
    for (const auto& [id, value] : postings_[d]) sums_[id] += q * value;
  }
  return *std::max_element(sums_.begin(), sums_.end());
}

void SurpriseScorer::Remember(const std::vector<std::string>& texts) {
  for (const std::string& t : texts) {
    std::string key = NameKey(t);
    if (!exact_.insert(key).second) continue;
    remembered_order_.push_back(std::move(key));
    Add(Embed(t));
  }
}

void SurpriseScorer::Rollback(size_t mark) {
  if (mark >= remembered_order_.size()) return;
  for (size_t i = mark; i < remembered_order_.size(); ++i) exact_.erase(remembered_order_[i]);
  remembered_order_.resize(mark);
  // Vector ids are assigned in order, so each posting list ends with the
  // ones to forget.
  for (auto& list : postings_)
    while (!list.empty() && list.back().first >= mark) list.pop_back();
  remembered_ = static_cast<uint32_t>(mark);
}

std::optional<std::vector<memory::Vector>> SurpriseScorer::Predict(const std::string& date, const Known& known,
                                                                   std::string* note) {
  std::string system =
      "You predict an AI agent's day from its long-term memory. Answer with JSON only: "
      "{\"predictions\": [\"one event per string\", ...]}, at most 50 short events.";
  std::string user = "Long-term memory (MEMORY.md):\n\n" +
                     (known.memory_md.empty() ? std::string("(empty)") : known.memory_md) +
                     "\n\nPredict what happens on " + date + ".";
  auto answer = Complete(spec_.llm, system, user);
  Result<std::vector<std::string>> predictions =
      answer.ok() ? ParsePredictions(*answer) : Result<std::vector<std::string>>(answer.status());
  if (!predictions.ok()) {
    *note = "surprise: llm prediction failed (" + predictions.status().message() + "); heuristic scores used";
    if (log_) log_->warn("world: {}", *note);
    return std::nullopt;
  }
  std::vector<memory::Vector> out;
  for (const std::string& p : *predictions) out.push_back(Embed(p));
  return out;
}

std::vector<SurpriseScore> SurpriseScorer::Score(const Extraction& x, const Known& known,
                                                 const std::string& source, std::string* note) {
  std::vector<SurpriseScore> out;
  if (x.events.empty()) return out;
  // llm mode predicts each date of the extraction once.
  std::unordered_map<std::string, std::optional<std::vector<float>>> predicted;
  bool llm = spec_.mode == "llm";

  // Triplets by the entities they join, to find an event's relations.
  std::unordered_map<std::string, std::vector<const Triplet*>> triplets_of;
  for (const Triplet& t : x.triplets) triplets_of[NameKey(t.subject)].push_back(&t);
  std::unordered_set<std::string> seen_entities, seen_edges;

  for (const WorldEvent& e : x.events) {
    if (stopping()) break;
    SurpriseScore s;
    s.date = e.date;
    s.text = e.text;
    s.source = source;
    s.entities = e.entities;
    s.mode = "heuristic";

    memory::Vector v = Embed(e.text);
    const std::vector<float>* against = nullptr;  // predictions, in llm mode
    bool exact = exact_.count(NameKey(e.text)) > 0;
    if (llm) {
      auto it = predicted.find(e.date);
      if (it == predicted.end()) {
        auto p = Predict(e.date, known, note);
        std::optional<std::vector<float>> flat;
        if (p) {
          flat.emplace();
          for (const auto& pv : *p) flat->insert(flat->end(), pv.begin(), pv.end());
        }
        it = predicted.emplace(e.date, std::move(flat)).first;
      }
      if (it->second) {
        against = &*it->second;
        exact = false;
        s.mode = "llm";
      }
    }
    float best = 0;
    if (against) {
      for (size_t off = 0; off + dims_ <= against->size(); off += dims_)
        best = std::max(best, memory::Cosine(v, std::span<const float>(against->data() + off, dims_)));
    } else if (!exact) {
      best = BestRemembered(v);
    }
    s.text_novelty = exact ? 0.0 : std::clamp(1.0 - best, 0.0, 1.0);

    std::unordered_set<std::string> keys;
    size_t novel = 0;
    for (const std::string& name : e.entities) {
      std::string key = NameKey(name);
      if (!keys.insert(key).second) continue;
      if (!seen_entities.count(key) && !(known.entity && known.entity(name))) ++novel;
    }
    s.entity_novelty = keys.empty() ? 0.0 : static_cast<double>(novel) / keys.size();

    size_t relations = 0, novel_relations = 0;
    for (const std::string& key : keys) {
      auto it = triplets_of.find(key);
      if (it == triplets_of.end()) continue;
      for (const Triplet* t : it->second) {
        if (!keys.count(NameKey(t->object))) continue;
        ++relations;
        std::string edge = key + "\x1f" + t->predicate + "\x1f" + NameKey(t->object);
        if (!seen_edges.count(edge) && !(known.edge && known.edge(*t))) ++novel_relations;
      }
    }
    double sum = kTextWeight * s.text_novelty, weights = kTextWeight;
    if (!keys.empty()) {
      sum += kEntityWeight * s.entity_novelty;
      weights += kEntityWeight;
    }
    if (relations > 0) {
      s.relation_novelty = static_cast<double>(novel_relations) / relations;
      sum += kRelationWeight * s.relation_novelty;
      weights += kRelationWeight;
    }
    s.score = std::clamp(sum / weights, 0.0, 1.0);

    // What this event taught the model counts for the next one.
    for (const std::string& key : keys) {
      seen_entities.insert(key);
      auto it = triplets_of.find(key);
      if (it == triplets_of.end()) continue;
      for (const Triplet* t : it->second)
        if (keys.count(NameKey(t->object))) seen_edges.insert(key + "\x1f" + t->predicate + "\x1f" + NameKey(t->object));
    }
    if (std::string key = NameKey(e.text); exact_.insert(key).second) {
      remembered_order_.push_back(std::move(key));
      Add(v);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace limbic::world
