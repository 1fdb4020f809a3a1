#include "state/consolidate.h"

#include <map>
#include <set>

#include "state/provenance.h"

namespace limbic::state {
namespace {

std::string Field(const json& rec, const char* key) {
  auto it = rec.find(key);
  if (it == rec.end() || it->is_null()) return {};
  return it->is_string() ? it->get<std::string>() : it->dump();
}

TimeMs TimeOf(const json& rec, const char* key) { return TimeOrZero(Field(rec, key)); }

// "[ts] source/type (status): text"
void AppendPerceptLine(const json& p, std::string* out) {
  *out += "[" + Field(p, "ts") + "] " + Field(p, "source") + "/" + Field(p, "type") + " (" +
          Field(p, "status") + ")";
  std::string text = Field(p, "text");
  if (!text.empty()) *out += ": " + text;
  *out += "\n";
}

// "[updated_at] effector/type -> status (attempts N): result or error"
void AppendActionLine(const json& a, std::string* out) {
  *out += "[" + Field(a, "updated_at") + "] " + Field(a, "effector") + "/" + Field(a, "type") + " -> " +
          Field(a, "status");
  std::string detail = a.contains("result") && !a["result"].is_null() ? Field(a, "result")
                                                                       : Field(a, "last_error");
  if (!detail.empty()) *out += ": " + detail;
  *out += "\n";
}

json Ids(const std::vector<std::string>& ids) { return json(ids); }

Event Staged(const std::string& date, json entry, json consolidates) {
  Event e;
  e.type = EventType::kEntryStaged;
  e.fields = {{"date", date}, {"entry", std::move(entry)}, {"consolidates", std::move(consolidates)}};
  return e;
}

using ActionsByThread = std::map<std::string, std::vector<json>>;

// Finished actions (complete, dead, rejected) by thread, and those of no thread.
Status FinishedActions(const Projection& state, ActionsByThread* actions_of,
                       std::vector<json>* loose_actions) {
  for (std::string_view status : kFinishedActionStatuses) {
    auto actions = state.ListActions(std::string(status));
    if (!actions.ok()) return actions.status();
    for (json& a : *actions) {
      std::string thread = Field(a, "thread_id");
      if (!thread.empty()) (*actions_of)[thread].push_back(std::move(a));
      else loose_actions->push_back(std::move(a));
    }
  }
  return Status::OK();
}

// The episode of completed thread `t` (last active at `last`): its percepts
// and its finished actions (taken out of *actions_of), as one staged entry.
Status AddEpisode(const Projection& state, const json& t, TimeMs last, TimeMs now,
                  ActionsByThread* actions_of, ConsolidationPlan* plan) {
  const std::string id = Field(t, "id");
  PerceptQuery q;
  q.thread_id = id;
  q.limit = 0;
  auto percepts = state.QueryPercepts(q, now);
  if (!percepts.ok()) return percepts.status();
  std::string text = "[episode] " + Field(t, "goal") + "\n";
  text += "thread " + id + ", created " + Field(t, "created_at") + ", completed " +
          Field(t, "last_active") + "\n";
  if (!Field(t, "outcome").empty()) text += "outcome: " + Field(t, "outcome") + "\n";
  if (t.contains("state")) text += "state: " + t["state"].dump() + "\n";
  std::vector<std::string> percept_ids, action_ids;
  if (!percepts->empty()) text += "percepts:\n";
  // Oldest first reads like a story.
  for (auto it = percepts->rbegin(); it != percepts->rend(); ++it) {
    AppendPerceptLine(*it, &text);
    percept_ids.push_back(Field(*it, "id"));
  }
  auto acts = actions_of->find(id);
  if (acts != actions_of->end()) {
    text += "actions:\n";
    for (const json& a : acts->second) {
      AppendActionLine(a, &text);
      action_ids.push_back(Field(a, "id"));
    }
    actions_of->erase(acts);
  }
  json meta = {{"kind", "episode"},
               {"thread_id", id},
               {"goal", Field(t, "goal")},
               {"percepts", percept_ids.size()},
               {"actions", action_ids.size()}};
  json consolidates = {{"thread_ids", json::array({id})}};
  if (!percept_ids.empty()) consolidates["percept_ids"] = Ids(percept_ids);
  if (!action_ids.empty()) consolidates["action_ids"] = Ids(action_ids);
  plan->threads += 1;
  plan->percepts += percept_ids.size();
  plan->actions += action_ids.size();
  plan->events.push_back(Staged(FormatDate(last), MakeStagedEntry(last, std::move(text), std::move(meta)),
                                std::move(consolidates)));
  return Status::OK();
}

// What a day's digests hold: loose percepts and actions.
struct Day {
  std::vector<json> percepts, actions;
};

// The loose percepts (processed or dropped, old enough, of no thread still
// live or consolidated as an episode) and loose actions (old enough), by day.
Status LooseByDay(const Projection& state, const ConsolidationPolicy& policy, TimeMs now,
                  const std::set<std::string>& live_threads,
                  const std::set<std::string>& episode_threads, std::vector<json>& loose_actions,
                  std::map<std::string, Day>* days) {
  for (const char* status : {"processed", "dropped"}) {
    PerceptQuery q;
    q.status = status;
    q.min_age = policy.percepts_after;
    q.limit = 0;
    auto percepts = state.QueryPercepts(q, now);
    if (!percepts.ok()) return percepts.status();
    for (json& p : *percepts) {
      std::string thread = Field(p, "thread_id");
      // Those of a live thread wait for it; those of an episode above are in it.
      if (!thread.empty() && (live_threads.count(thread) || episode_threads.count(thread))) continue;
      (*days)[FormatDate(TimeOf(p, "ts"))].percepts.push_back(std::move(p));
    }
  }
  for (json& a : loose_actions) {
    TimeMs updated = TimeOf(a, "updated_at");
    if (now - updated < policy.actions_after) continue;
    (*days)[FormatDate(updated)].actions.push_back(std::move(a));
  }
  return Status::OK();
}

// The day's digests, in order, each at most policy.digest_items items,
// while the plan has room.
void AddDigests(const std::string& date, Day& day, const ConsolidationPolicy& policy,
                ConsolidationPlan* plan) {
  // Oldest first within the day (queries return newest first).
  std::sort(day.percepts.begin(), day.percepts.end(), [](const json& a, const json& b) {
    return std::make_pair(Field(a, "ts"), Field(a, "id")) < std::make_pair(Field(b, "ts"), Field(b, "id"));
  });
  size_t pi = 0, ai = 0;
  while ((pi < day.percepts.size() || ai < day.actions.size()) && plan->events.size() < policy.max_events) {
    std::string text = "[digest] " + date + "\n";
    std::vector<std::string> percept_ids, action_ids;
    TimeMs latest = 0;
    size_t n = 0;
    if (pi < day.percepts.size()) text += "percepts:\n";
    for (; pi < day.percepts.size() && n < policy.digest_items; ++pi, ++n) {
      AppendPerceptLine(day.percepts[pi], &text);
      percept_ids.push_back(Field(day.percepts[pi], "id"));
      latest = std::max(latest, TimeOf(day.percepts[pi], "ts"));
    }
    if (ai < day.actions.size() && n < policy.digest_items) text += "actions:\n";
    for (; ai < day.actions.size() && n < policy.digest_items; ++ai, ++n) {
      AppendActionLine(day.actions[ai], &text);
      action_ids.push_back(Field(day.actions[ai], "id"));
      latest = std::max(latest, TimeOf(day.actions[ai], "updated_at"));
    }
    json meta = {{"kind", "digest"}, {"percepts", percept_ids.size()}, {"actions", action_ids.size()}};
    json consolidates = json::object();
    if (!percept_ids.empty()) consolidates["percept_ids"] = Ids(percept_ids);
    if (!action_ids.empty()) consolidates["action_ids"] = Ids(action_ids);
    plan->percepts += percept_ids.size();
    plan->actions += action_ids.size();
    plan->events.push_back(
        Staged(date, MakeStagedEntry(latest, std::move(text), std::move(meta)), std::move(consolidates)));
  }
}

// percept_dropped (reason "expired") for each new percept at least
// expire_after old whose effective intensity is below expire_below, oldest
// first, at most max_events.
Result<Events> Expirations(const Projection& state, const ConsolidationPolicy& policy, TimeMs now) {
  Events drops;
  if (policy.expire_after <= 0) return drops;
  PerceptQuery q;
  q.status = "new";
  q.min_age = policy.expire_after;
  q.limit = 0;
  auto percepts = state.QueryPercepts(q, now);
  if (!percepts.ok()) return percepts.status();
  // Queries return newest first: the oldest leave first.
  for (auto it = percepts->rbegin(); it != percepts->rend() && drops.size() < policy.max_events; ++it) {
    json scored = PerceptWithRecency(*it, now, policy.recency);
    if (scored["effective_intensity"].get<double>() >= policy.expire_below) continue;
    auto drop = BuildPerceptDrop(Field(*it, "id"), json{{"reason", "expired"}});
    if (!drop.ok()) return drop.status();
    for (Event& e : *drop) drops.push_back(std::move(e));
  }
  return drops;
}

}  // namespace

Result<ConsolidationPlan> BuildConsolidation(const Projection& state, const ConsolidationPolicy& policy,
                                             TimeMs now) {
  ConsolidationPlan plan;
  // Finished actions by thread (and the loose ones), read once.
  ActionsByThread actions_of;
  std::vector<json> loose_actions;
  LIMBIC_RETURN_IF_ERROR(FinishedActions(state, &actions_of, &loose_actions));
  std::set<std::string> live_threads, episode_threads;
  auto threads = state.ListThreads(std::nullopt);
  if (!threads.ok()) return threads.status();

  // Episodes: one per completed, idle thread.
  for (const json& t : *threads) {
    std::string id = Field(t, "id");
    TimeMs last = TimeOf(t, "last_active");
    if (Field(t, "status") != "complete" || now - last < policy.threads_after ||
        plan.events.size() >= policy.max_events) {
      live_threads.insert(id);
      continue;
    }
    LIMBIC_RETURN_IF_ERROR(AddEpisode(state, t, last, now, &actions_of, &plan));
    episode_threads.insert(id);
  }

  // Actions of threads that were deleted are loose too.
  for (auto& [thread, list] : actions_of)
    if (!live_threads.count(thread))
      for (json& a : list) loose_actions.push_back(std::move(a));

  // Digests: loose percepts and actions, per day, in order.
  std::map<std::string, Day> days;
  LIMBIC_RETURN_IF_ERROR(
      LooseByDay(state, policy, now, live_threads, episode_threads, loose_actions, &days));
  for (auto& [date, day] : days) AddDigests(date, day, policy, &plan);

  // Expiries go first (their percepts are new, so no entry above holds them).
  auto drops = Expirations(state, policy, now);
  if (!drops.ok()) return drops.status();
  plan.expired = drops->size();
  plan.events.insert(plan.events.begin(), std::make_move_iterator(drops->begin()),
                     std::make_move_iterator(drops->end()));
  Attribute(plan.events, "consolidation");
  return plan;
}

}  // namespace limbic::state
