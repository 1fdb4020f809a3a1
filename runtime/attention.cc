#include "runtime/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "state/commands.h"

namespace limbic::runtime {

using nlohmann::json;

Result<json> BuildAttention(const state::Projection& p, TimeMs now, const AttentionParams& params,
                            double effective_arousal) {
  const auto& recency = params.recency;
  auto threads = state::ThreadsBySalience(p, std::string("active"), now, recency, 1);
  auto arousal = p.GetArousal();
  if (!threads.ok() || !arousal.ok()) return threads.ok() ? arousal.status() : threads.status();
  json best = threads->empty() ? json(nullptr) : std::move(threads->front());
  json thread_percepts = json::array();
  if (!best.is_null()) {
    state::PerceptQuery q;
    q.thread_id = best["id"].get<std::string>();
    q.status = "assigned";
    q.limit = params.limit;
    auto ps = p.QueryPercepts(q, now);
    if (!ps.ok()) return ps.status();
    for (const json& x : *ps) thread_percepts.push_back(state::PerceptWithRecency(x, now, recency));
  }
  std::vector<json> unassigned;
  if (recency.percept_half_life > 0 && params.limit > 0) {
    // Ranked from the projection's table of new percepts: only the
    // strongest are read.
    auto top = p.TopNewPercepts(now, recency, params.threshold, params.limit);
    if (!top.ok()) return top.status();
    for (const json& x : *top) unassigned.push_back(state::PerceptWithRecency(x, now, recency));
  } else {
    // Intensity is at most 1, so nothing older than the age at which
    // decay alone falls below the threshold can qualify: stop the scan there.
    state::PerceptQuery q;
    q.status = "new";
    q.limit = 0;
    if (params.threshold > 0)
      q.max_age = static_cast<TimeMs>(static_cast<double>(recency.percept_half_life) *
                                      std::log2(1.0 / params.threshold)) +
                  1;
    auto fresh = p.QueryPercepts(q, now);
    if (!fresh.ok()) return fresh.status();
    for (const json& x : *fresh) {
      json scored = state::PerceptWithRecency(x, now, recency);
      if (scored["effective_intensity"].get<double>() >= params.threshold)
        unassigned.push_back(std::move(scored));
    }
    std::stable_sort(unassigned.begin(), unassigned.end(), [](const json& a, const json& b) {
      return a["effective_intensity"].get<double>() > b["effective_intensity"].get<double>();
    });
  }
  if (unassigned.size() > params.limit) unassigned.resize(params.limit);
  // Actions a human must approve or reject before they go (oldest first).
  auto waiting = p.ListActions(std::string("pending_approval"), params.limit);
  if (!waiting.ok()) return waiting.status();
  json arousal_out = {
      {"level", (*arousal)["level"]}, {"factors", (*arousal)["factors"]}, {"effective", effective_arousal}};
  return json{{"now", FormatTime(now)},   {"arousal", arousal_out},
              {"thread", best},           {"thread_percepts", thread_percepts},
              {"unassigned", unassigned}, {"pending_approval", std::move(*waiting)}};
}

Result<json> AttentionFromPools(const state::Projection& p, TimeMs now,
                                const AttentionParams& params) {
  auto arousal = EffectiveArousalNow(p, now, params.recency);
  if (!arousal.ok()) return arousal.status();
  return BuildAttention(p, now, params, *arousal);
}

Result<double> EffectiveArousalNow(const state::Projection& p, TimeMs now, const state::RecencyParams& recency) {
  auto arousal = p.GetArousal();
  if (!arousal.ok()) return arousal.status();
  state::PerceptQuery q;
  q.max_age = recency.arousal_window;
  q.limit = 1000;  // the most recent 1000 dominate the product anyway
  auto recent = p.QueryPercepts(q, now);
  if (!recent.ok()) return recent.status();
  return state::EffectiveArousal(*arousal, *recent, now, recency);
}

}  // namespace limbic::runtime
