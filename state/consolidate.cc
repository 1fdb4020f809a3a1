#include "state/consolidate.h"

#include <algorithm>
#include <limits>

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
  *out += "[" + Field(a, "updated_at") + "] " + Field(a, "effector") + "/" + Field(a, "type") +
          " -> " + Field(a, "status");
  std::string detail =
      a.contains("result") && !a["result"].is_null() ? Field(a, "result") : Field(a, "last_error");
  if (!detail.empty()) *out += ": " + detail;
  *out += "\n";
}

Event Staged(const std::string& date, json entry, json consolidates) {
  Event e;
  e.type = EventType::kEntryStaged;
  e.fields = {
      {"date", date}, {"entry", std::move(entry)}, {"consolidates", std::move(consolidates)}};
  return e;
}

// The episode of completed thread `t` (last active at `last`): its percepts
// and its finished actions, as one staged entry.
Event Episode(const json& t, TimeMs last, const std::vector<json>& percepts,
              const std::vector<json>& actions) {
  const std::string id = Field(t, "id");
  std::string text = "[episode] " + Field(t, "goal") + "\n";
  text += "thread " + id + ", created " + Field(t, "created_at") + ", completed " +
          Field(t, "last_active") + "\n";
  if (!Field(t, "outcome").empty()) text += "outcome: " + Field(t, "outcome") + "\n";
  if (t.contains("state")) text += "state: " + t["state"].dump() + "\n";
  std::vector<std::string> percept_ids, action_ids;
  if (!percepts.empty()) text += "percepts:\n";
  // Oldest first reads like a story (queries return newest first).
  for (auto it = percepts.rbegin(); it != percepts.rend(); ++it) {
    AppendPerceptLine(*it, &text);
    percept_ids.push_back(Field(*it, "id"));
  }
  if (!actions.empty()) text += "actions:\n";
  for (const json& a : actions) {
    AppendActionLine(a, &text);
    action_ids.push_back(Field(a, "id"));
  }
  json meta = {{"kind", "episode"},
               {"thread_id", id},
               {"goal", Field(t, "goal")},
               {"percepts", percept_ids.size()},
               {"actions", action_ids.size()}};
  json consolidates = {{"thread_ids", json::array({id})}};
  if (!percept_ids.empty()) consolidates["percept_ids"] = json(percept_ids);
  if (!action_ids.empty()) consolidates["action_ids"] = json(action_ids);
  return Staged(FormatDate(last), MakeStagedEntry(last, std::move(text), std::move(meta)),
                std::move(consolidates));
}

// At most this many index entries read per step, whatever is passed over
// (percepts that wait for their thread): a step answers in bounded time.
constexpr size_t kVisitsPerItem = 16;
// Records read ahead of the oldest, per status.
constexpr size_t kAhead = 64;

const char* const kLooseStatuses[] = {"processed", "dropped"};

// The digest of `date` over `percepts` and `actions` (oldest first).
Event Digest(const std::string& date, std::span<const json> percepts,
             std::span<const json> actions) {
  std::string text = "[digest] " + date + "\n";
  std::vector<std::string> percept_ids, action_ids;
  TimeMs latest = 0;
  if (!percepts.empty()) text += "percepts:\n";
  for (const json& p : percepts) {
    AppendPerceptLine(p, &text);
    percept_ids.push_back(Field(p, "id"));
    latest = std::max(latest, TimeOf(p, "ts"));
  }
  if (!actions.empty()) text += "actions:\n";
  for (const json& a : actions) {
    AppendActionLine(a, &text);
    action_ids.push_back(Field(a, "id"));
    latest = std::max(latest, TimeOf(a, "updated_at"));
  }
  json meta = {
      {"kind", "digest"}, {"percepts", percept_ids.size()}, {"actions", action_ids.size()}};
  json consolidates = json::object();
  if (!percept_ids.empty()) consolidates["percept_ids"] = json(percept_ids);
  if (!action_ids.empty()) consolidates["action_ids"] = json(action_ids);
  return Staged(date, MakeStagedEntry(latest, std::move(text), std::move(meta)),
                std::move(consolidates));
}

size_t IdsIn(const json& consolidates, const char* key) {
  auto it = consolidates.find(key);
  return it == consolidates.end() ? 0 : it->size();
}

}  // namespace

void ConsolidationCounts::Add(const Event& e) {
  if (e.type == EventType::kPerceptDropped) {
    ++expired;
  } else if (e.type == EventType::kEntryStaged) {
    ++entries;
    auto c = e.fields.find("consolidates");
    if (c == e.fields.end()) return;
    threads += IdsIn(*c, "thread_ids");
    percepts += IdsIn(*c, "percept_ids");
    actions += IdsIn(*c, "action_ids");
  }
}

json ConsolidationCounts::ToJson() const {
  return {{"entries", entries},
          {"threads", threads},
          {"percepts", percepts},
          {"actions", actions},
          {"expired", expired}};
}

ConsolidationPass::ConsolidationPass(const Projection& state, ConsolidationPolicy policy,
                                     TimeMs now)
    : state_(state),
      policy_(std::move(policy)),
      now_(now),
      step_items_(std::max<size_t>(1, policy_.step_items)) {
  if (policy_.expire_after <= 0) phase_ = Phase::kEpisodes;
  for (const char* status : kLooseStatuses) percepts_.push_back(Source{status, {}, {}, false});
  for (std::string_view status : kFinishedActionStatuses)
    actions_.push_back(Source{std::string(status), {}, {}, false});
}

bool ConsolidationPass::Full(const ConsolidationPlan& plan) const {
  const ConsolidationCounts& c = plan.counts;
  return c.expired + c.threads + c.percepts + c.actions >= step_items_ ||
         step_bytes_ >= policy_.step_bytes;
}

void ConsolidationPass::Push(ConsolidationPlan* plan, Event e) {
  if (auto entry = e.fields.find("entry"); entry != e.fields.end())
    step_bytes_ += entry->value("byte_size", size_t{0});
  plan->counts.Add(e);
  plan->events.push_back(std::move(e));
}

Result<ConsolidationPlan> ConsolidationPass::Next() {
  ConsolidationPlan plan;
  step_bytes_ = 0;
  Status s;
  switch (phase_) {
    case Phase::kExpire:
      s = Expire(&plan);
      break;
    case Phase::kEpisodes:
      s = Episodes(&plan);
      break;
    case Phase::kPercepts:
      s = LoosePercepts(&plan);
      break;
    case Phase::kActions:
      s = LooseActions(&plan);
      break;
    case Phase::kDone:
      break;
  }
  if (!s.ok()) return s;
  Attribute(plan.events, "consolidation");
  return plan;
}

// Expired percepts, earliest due first, a step's worth; the phase is over
// when none is left.
Status ConsolidationPass::Expire(ConsolidationPlan* plan) {
  ExpiryRule rule{policy_.expire_after, policy_.expire_below, policy_.recency.percept_half_life};
  auto ids = state_.ExpiredPercepts(now_, rule, step_items_);
  if (!ids.ok()) return ids.status();
  if (ids->empty()) {
    phase_ = Phase::kEpisodes;
    return Status::OK();
  }
  for (const std::string& id : *ids) {
    auto drop = BuildPerceptDrop(id, json{{"reason", "expired"}});
    if (!drop.ok()) return drop.status();
    for (Event& e : *drop) Push(plan, std::move(e));
  }
  return Status::OK();
}

Status ConsolidationPass::FindEpisodes() {
  episodes_found_ = true;
  auto complete = state_.ThreadSummaries(std::string("complete"));
  if (!complete.ok()) return complete.status();
  std::vector<std::pair<TimeMs, std::string>> idle;
  for (const ThreadSummary& t : *complete)
    if (now_ - t.last_active >= policy_.threads_after) idle.emplace_back(t.last_active, t.id);
  std::sort(idle.begin(), idle.end());
  for (auto& [last, id] : idle) {
    actions_of_[id];  // each has an entry, so the walk below knows which to keep
    episodes_.push_back(std::move(id));
  }
  if (episodes_.empty()) return Status::OK();
  // Their finished actions: by status, oldest first, as an episode lists them.
  for (std::string_view status : kFinishedActionStatuses) {
    std::string cursor;
    Status s = state_.WalkActionsOldestFirst(status, std::numeric_limits<TimeMs>::max(), &cursor, 0,
                                             [&](json&& a) {
                                               auto it = actions_of_.find(Field(a, "thread_id"));
                                               if (it != actions_of_.end())
                                                 it->second.push_back(Field(a, "id"));
                                               return true;
                                             });
    LIMBIC_RETURN_IF_ERROR(s);
  }
  return Status::OK();
}

// Episodes of completed threads idle long enough, oldest first.
Status ConsolidationPass::Episodes(ConsolidationPlan* plan) {
  if (!episodes_found_) LIMBIC_RETURN_IF_ERROR(FindEpisodes());
  while (next_episode_ < episodes_.size() && !Full(*plan)) {
    const std::string& id = episodes_[next_episode_++];
    auto t = state_.Get(Pool::kThreads, id);
    if (!t.ok()) return t.status();
    // Changed since the pass began: reopened, deleted or active again.
    if (!t->has_value() || Field(**t, "status") != "complete") continue;
    const TimeMs last = TimeOf(**t, "last_active");
    if (now_ - last < policy_.threads_after) continue;
    PerceptQuery q;
    q.thread_id = id;
    q.limit = 0;
    auto percepts = state_.QueryPercepts(q, now_);
    if (!percepts.ok()) return percepts.status();
    std::vector<json> actions;
    for (const std::string& action_id : actions_of_[id]) {
      auto a = state_.Get(Pool::kActions, action_id);
      if (!a.ok()) return a.status();
      if (!a->has_value()) continue;
      const std::string status = Field(**a, "status");
      if (std::find(kFinishedActionStatuses.begin(), kFinishedActionStatuses.end(), status) !=
          kFinishedActionStatuses.end())
        actions.push_back(std::move(**a));
    }
    actions_of_.erase(id);
    Push(plan, Episode(**t, last, *percepts, actions));
  }
  if (next_episode_ >= episodes_.size()) {
    actions_of_.clear();
    phase_ = Phase::kPercepts;
  }
  return Status::OK();
}

Result<bool> ConsolidationPass::ThreadLives(const std::string& id) const {
  if (id.empty()) return false;
  return state_.Contains(Pool::kThreads, id);
}

Result<json*> ConsolidationPass::Oldest(std::vector<Source>& sources, TimeMs until, bool percepts) {
  json* oldest = nullptr;
  for (Source& src : sources) {
    if (src.ahead.empty() && !src.exhausted) {
      const std::string was = src.cursor;
      auto push = [&src](json&& rec) {
        src.ahead.push_back(std::move(rec));
        return true;
      };
      Status s = percepts
                     ? state_.WalkPerceptsOldestFirst(src.status, until, &src.cursor, kAhead, push)
                     : state_.WalkActionsOldestFirst(src.status, until, &src.cursor, kAhead, push);
      LIMBIC_RETURN_IF_ERROR(s);
      if (src.cursor == was) src.exhausted = true;
    }
    if (src.ahead.empty()) continue;
    json& head = src.ahead.front();
    if (!oldest || std::make_pair(TimeOf(head, "ts"), Field(head, "id")) <
                       std::make_pair(TimeOf(*oldest, "ts"), Field(*oldest, "id")))
      oldest = &head;
  }
  return oldest;
}

// Loose percepts, processed and dropped together, oldest first: a digest
// per day of at most digest_items.
Status ConsolidationPass::LoosePercepts(ConsolidationPlan* plan) {
  const TimeMs until = now_ - policy_.percepts_after;
  const size_t max_visits = kVisitsPerItem * step_items_;
  std::vector<json> day;
  std::string date;
  for (size_t visits = 0;; ++visits) {
    auto oldest = Oldest(percepts_, until, true);
    if (!oldest.ok()) return oldest.status();
    json* p = *oldest;
    const std::string p_date = p ? FormatDate(TimeOf(*p, "ts")) : "";
    const bool enough = visits >= max_visits;
    if (!day.empty() && (!p || p_date != date || day.size() >= policy_.digest_items || enough)) {
      Push(plan, Digest(date, day, {}));
      day.clear();
      if (Full(*plan)) return Status::OK();
    }
    if (!p) break;
    if (enough) return Status::OK();  // the next step goes on from here
    json rec = std::move(*p);
    for (Source& src : percepts_)
      if (!src.ahead.empty() && &src.ahead.front() == p) src.ahead.pop_front();
    auto lives = ThreadLives(Field(rec, "thread_id"));
    if (!lives.ok()) return lives.status();
    if (*lives) continue;  // it waits for its thread's episode
    date = p_date;
    day.push_back(std::move(rec));
  }
  phase_ = Phase::kActions;
  return Status::OK();
}

// Loose finished actions, by status, oldest first; a step's worth is put
// in order of the day they were last updated, a digest per day.
Status ConsolidationPass::LooseActions(ConsolidationPlan* plan) {
  const TimeMs until = now_ - policy_.actions_after;
  const size_t step = step_items_;
  std::vector<json> taken;
  bool over = false;
  for (size_t visits = 0; taken.size() < step && visits < kVisitsPerItem * step; ++visits) {
    auto oldest = Oldest(actions_, until, false);
    if (!oldest.ok()) return oldest.status();
    json* a = *oldest;
    if (!a) {
      over = true;
      break;
    }
    json rec = std::move(*a);
    for (Source& src : actions_)
      if (!src.ahead.empty() && &src.ahead.front() == a) src.ahead.pop_front();
    if (TimeOf(rec, "updated_at") > until) continue;  // finished too recently
    auto lives = ThreadLives(Field(rec, "thread_id"));
    if (!lives.ok()) return lives.status();
    if (*lives) continue;  // it waits for its thread's episode
    taken.push_back(std::move(rec));
  }
  std::stable_sort(taken.begin(), taken.end(), [](const json& x, const json& y) {
    return std::make_pair(TimeOf(x, "updated_at"), Field(x, "id")) <
           std::make_pair(TimeOf(y, "updated_at"), Field(y, "id"));
  });
  for (size_t i = 0; i < taken.size();) {
    const std::string date = FormatDate(TimeOf(taken[i], "updated_at"));
    size_t j = i;
    while (j < taken.size() && j - i < policy_.digest_items &&
           FormatDate(TimeOf(taken[j], "updated_at")) == date)
      ++j;
    Push(plan, Digest(date, {}, std::span<const json>(taken.data() + i, j - i)));
    i = j;
  }
  if (over) phase_ = Phase::kDone;
  return Status::OK();
}

Result<size_t> DropStale(const RecordReader& view, Events* events) {
  size_t dropped = 0;
  std::vector<Event> kept;
  kept.reserve(events->size());
  for (Event& e : *events) {
    if (e.type == EventType::kPerceptDropped) {
      auto p = view.GetPercept(e.fields.value("percept_id", ""));
      if (!p.ok()) return p.status();
      if (!p->has_value() || (*p)->status() != "new") {
        ++dropped;
        continue;
      }
    }
    kept.push_back(std::move(e));
  }
  *events = std::move(kept);
  return dropped;
}

}  // namespace limbic::state
