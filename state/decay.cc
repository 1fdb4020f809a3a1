// The recency formulas of recency.h (documented in docs/events.md).
#include <algorithm>
#include <cmath>

#include "state/recency.h"

namespace limbic::state {
namespace {

double Clamp01(double v) { return std::clamp(v, 0.0, 1.0); }

TimeMs TimeOf(const json& rec, const char* key) {
  auto it = rec.find(key);
  return it == rec.end() || !it->is_string() ? 0 : TimeOrZero(it->get_ref<const std::string&>());
}

double NumberOf(const json& rec, const char* key, double dflt) {
  auto it = rec.find(key);
  return it != rec.end() && it->is_number() ? it->get<double>() : dflt;
}

}  // namespace

double Decay(TimeMs age, TimeMs half_life) {
  if (half_life <= 0) return age > 0 ? 0.0 : 1.0;
  return std::exp2(-static_cast<double>(std::max<TimeMs>(age, 0)) / static_cast<double>(half_life));
}

double EffectiveIntensity(double intensity, TimeMs age, const RecencyParams& p) {
  return intensity * Decay(age, p.percept_half_life);
}

double EffectiveSalience(double salience, TimeMs idle, size_t unprocessed, const RecencyParams& p) {
  double boost = std::min(0.3, 0.1 * static_cast<double>(unprocessed));
  return Clamp01(salience * (0.5 + 0.5 * Decay(idle, p.thread_half_life)) + boost);
}

double EffectiveArousal(const json& arousal, const std::vector<json>& recent_percepts, TimeMs now,
                        const RecencyParams& p) {
  double v = NumberOf(arousal, "level", 0.5);
  const json empty = json::object();
  const json& factors = arousal.contains("factors") && arousal["factors"].is_object()
                            ? arousal["factors"]
                            : empty;
  for (auto it = factors.begin(); it != factors.end(); ++it) {
    const std::string& name = it.key();
    const json& f = *it;
    if (name == "user_waiting") {
      if (f.is_boolean() && f.get<bool>()) v += 0.25;
    } else if (name == "recent_errors") {
      if (f.is_number()) v += 0.05 * std::clamp(f.get<double>(), 0.0, 5.0);
    } else if (name == "budget_pressure") {
      if (f.is_boolean() && f.get<bool>()) v -= 0.15;
    } else if (f.is_number()) {
      v += 0.1 * std::clamp(f.get<double>(), -1.0, 1.0);
    } else if (f.is_boolean() && f.get<bool>()) {
      v += 0.1;
    }
  }
  double calm = 1.0;  // probability that no recent percept is stimulating
  for (const json& percept : recent_percepts) {
    TimeMs age = now - TimeOf(percept, "ts");
    if (age > p.arousal_window) continue;
    calm *= 1.0 - Clamp01(EffectiveIntensity(NumberOf(percept, "intensity", 0), age, p));
  }
  return Clamp01(v + 0.3 * (1.0 - calm));
}

json PerceptWithRecency(const json& percept, TimeMs now, const RecencyParams& p) {
  json out = percept;
  TimeMs age = std::max<TimeMs>(0, now - TimeOf(percept, "ts"));
  out["age_ms"] = age;
  out["effective_intensity"] = EffectiveIntensity(NumberOf(percept, "intensity", 0), age, p);
  return out;
}

json ThreadWithRecency(const json& thread, size_t unprocessed, TimeMs now, const RecencyParams& p) {
  json out = thread;
  TimeMs idle = std::max<TimeMs>(0, now - TimeOf(thread, "last_active"));
  out["idle_ms"] = idle;
  out["unprocessed"] = unprocessed;
  out["effective_salience"] =
      EffectiveSalience(NumberOf(thread, "salience", 0), idle, unprocessed, p);
  return out;
}

Result<std::vector<json>> ThreadsBySalience(const Projection& projection,
                                            std::optional<std::string> status, TimeMs now,
                                            const RecencyParams& p, size_t limit) {
  // Rank from the projection's thread table; read only the records that
  // are returned.
  auto top = projection.TopThreads(std::move(status), now, p, limit);
  if (!top.ok()) return top.status();
  std::vector<json> out;
  out.reserve(top->size());
  for (const ThreadSummary& t : *top) {
    auto rec = projection.Get(Pool::kThreads, t.id);
    if (!rec.ok()) return rec.status();
    if (!rec->has_value()) continue;  // removed meanwhile
    out.push_back(ThreadWithRecency(**rec, t.unprocessed, now, p));
  }
  return out;
}

}  // namespace limbic::state
