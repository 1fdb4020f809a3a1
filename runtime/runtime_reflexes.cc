// The runtime's reflexes: the pool made to match the rules file, firing on
// percepts, and the reflex cursor that makes every acknowledged percept meet
// its rules exactly once (docs/reflexes.md).
#include <algorithm>

#include "runtime/runtime.h"
#include "runtime/submit.h"
#include "state/event_log.h"

namespace limbic::runtime {

using nlohmann::json;
using state::Event;
using state::EventType;

// The pool holds every rule; the rules file owns the rules that came from it
// (origin "file"). On start the pool is made to match the file: new and
// changed file rules are put, and file rules no longer in the file are
// deleted. Rules put through the API (origin "api") are left alone.
Status Runtime::LoadReflexes(const std::vector<reflexes::Rule>& file_rules, bool sync_file) {
  const reflexes::RuleContext ctx = MakeRuleContext();
  std::set<std::string> in_file;
  for (const reflexes::Rule& rule : file_rules) in_file.insert(rule.id);
  std::vector<Event> changes;
  Status s = engine_->projection().ForEach(state::Pool::kReflexes, [&](std::string_view id,
                                                                       const json& rec) {
    if (sync_file && rec.value("origin", "") == "file" && !in_file.count(std::string(id))) {
      changes.push_back(Event{0, 0, EventType::kReflexDeleted,
                              {{"reflex_id", std::string(id)},
                               {"reason", "no longer in " + config_.reflexes_file}}});
      return true;
    }
    auto rule = reflexes::ParseRule(rec["rule"], ctx);
    if (!rule.ok()) {
      log_->warn("reflex {} in the pool no longer loads ({}); it stays disabled",
                 std::string(id), rule.status().message());
      return true;
    }
    rule->enabled = rec.value("enabled", true);
    (void)reflexes_.Put(std::move(rule).value());
    if (rec["last_fired_at"].is_string()) {
      auto t = ParseTime(rec["last_fired_at"].get<std::string>(), TimeRule::kLogged);
      if (t.ok()) reflexes_.RestoreHistory(std::string(id), *t);
    }
    return true;
  });
  LIMBIC_RETURN_IF_ERROR(s);
  for (const reflexes::Rule& rule : sync_file ? file_rules : std::vector<reflexes::Rule>{}) {
    auto existing = engine_->projection().Get(state::Pool::kReflexes, rule.id);
    if (!existing.ok()) return existing.status();
    if (existing->has_value() && (**existing)["rule"] == rule.source_json &&
        (**existing).value("origin", "") == "file")
      continue;
    changes.push_back(Event{0, 0, EventType::kReflexPut,
                            {{"reflex_id", rule.id}, {"rule", rule.source_json}, {"origin", "file"}}});
    (void)reflexes_.Put(rule);
  }
  for (const Event& e : changes)
    if (e.type == EventType::kReflexDeleted) reflexes_.Remove(e.Str("reflex_id"));
  if (!changes.empty()) {
    log_->debug("reflexes: {} changes to make the pool match {}", changes.size(),
               config_.reflexes_file);
    LIMBIC_RETURN_IF_ERROR(SubmitCommand(*engine_, std::move(changes), {"rules-file"}, nullptr));
    // Durable and applied before the API answers its first request.
    LIMBIC_RETURN_IF_ERROR(engine_->Flush());
  }
  return Status::OK();
}

void Runtime::OnAppliedReflexes(std::span<const Event> events) {
  std::vector<std::string> arrived;
  uint64_t last_arrived = 0;
  for (const Event& e : events) {
    if (e.type == EventType::kPerceptArrived) {
      arrived.push_back(e.Str("percept_id"));
      last_arrived = e.seq;
    } else if (reflexes::ReflexEngine::ChangesRules(e.type)) {
      Status s = reflexes_.ApplyRuleEvent(e, MakeRuleContext());
      if (!s.ok()) log_->warn("reflex {} is not loaded: {}", e.Str("reflex_id"), s.message());
    }
  }
  // Every acknowledged percept is evaluated, during a shutdown too (its
  // reactions are flushed before the exit, see FlushForExit).
  for (const std::string& id : arrived) FireReflexes(id);
  if (last_arrived) evaluated_through_ = last_arrived;
}

void Runtime::FireReflexes(const std::string& percept_id, const FiredPairs* already) {
  if (reflexes_.empty()) return;
  auto percept = engine_->pending_view().Get(state::Pool::kPercepts, percept_id);
  if (!percept.ok() || !percept->has_value()) return;
  TimeMs now = engine_->clock().Now();
  auto matches = reflexes_.MatchPercept(**percept, EffectiveArousal(), now);
  if (matches.empty()) return;
  for (const auto& match : matches) {
    if (already && already->count({percept_id, match.rule->id})) continue;
    auto planned = reflexes_.Plan(match, **percept, engine_->pending_view(), engine_->next_seq());
    if (!planned.ok()) {
      log_->warn("reflex {} on percept {}: {}", match.rule->id, percept_id,
                 planned.status().message());
      continue;
    }
    Status s = SubmitCommand(*engine_, std::move(planned),
                             {"reflex:" + match.rule->id, &config_.effectors}, nullptr);
    if (!s.ok()) {
      log_->warn("reflex {} on percept {} not fired: {}", match.rule->id, percept_id, s.message());
      continue;
    }
    // Count the firing now so cooldowns hold for the rest of this group.
    reflexes_.RecordFire(match.rule->id, now);
    // A later rule sees the effects of an earlier one (e.g. a dropped percept).
    percept = engine_->pending_view().Get(state::Pool::kPercepts, percept_id);
    if (!percept.ok() || !percept->has_value()) return;
  }
}

// The reflex cursor is the `through_seq` of the last reflexes_evaluated
// event: every percept up to it had its reflexes evaluated and their
// firings submitted before that event, so they are in the log before it.
// Percepts after it may or may not have been evaluated (a crash, a
// write made while no runtime ran): each is evaluated now, skipping every
// rule that already fired on it after the cursor, so each percept meets
// each rule once. Runs before anything is served; the firings are durable
// before the first request.
Status Runtime::CatchUpReflexes(uint64_t* read_after) {
  uint64_t read = 0;
  auto last =
      state::FindLastEvent(nullptr, engine_->events_dir(), EventType::kReflexesEvaluated, &read);
  if (!last.ok()) return last.status().WithContext("finding the reflex cursor");
  const uint64_t end = engine_->applied_seq();
  *read_after = end;
  if (!last->has_value()) {
    // A new state dir, or a log from before the cursor: its past is not
    // evaluated again.
    evaluated_through_ = cursor_submitted_ = end;
    if (end == 0) return Status::OK();
    return RecordCursor(end);
  }
  const uint64_t cursor = (**last).fields.value("through_seq", uint64_t{0});
  evaluated_through_ = cursor_submitted_ = cursor;
  *read_after = std::min(cursor, end);
  state::LogReader::Options ro;
  ro.from_seq = cursor + 1;
  auto reader = state::LogReader::Open(engine_->events_dir(), ro);
  if (!reader.ok()) return reader.status();
  std::vector<std::string> percepts;
  FiredPairs fired;
  Event e;
  for (;;) {
    auto more = (*reader)->Next(&e);
    if (!more.ok()) return more.status().WithContext("reading the log after the reflex cursor");
    if (!*more || e.seq > end) break;
    if (e.type == EventType::kPerceptArrived) percepts.push_back(e.Str("percept_id"));
    if (e.type == EventType::kReflexFired) fired.insert({e.Str("percept_id"), e.Str("reflex_id")});
  }
  // A long scan back is worth a fresh cursor even when nothing arrived.
  if (percepts.empty() && read < (size_t{1} << 20)) return Status::OK();
  const uint64_t before = engine_->next_seq();
  for (const std::string& id : percepts) FireReflexes(id, &fired);
  evaluated_through_ = end;
  LIMBIC_RETURN_IF_ERROR(RecordCursor(end));
  if (!percepts.empty())
    log_->info("reflexes: caught up {} percepts after seq {} ({} events of firings)",
               percepts.size(), cursor, engine_->next_seq() - before - 1);
  return Status::OK();
}

// Submits reflexes_evaluated {through_seq: evaluated_through_}.
Status Runtime::SubmitCursor() {
  const uint64_t through = evaluated_through_;
  LIMBIC_RETURN_IF_ERROR(engine_->Submit(
      {Event{0, 0, EventType::kReflexesEvaluated, {{"through_seq", through}}}}, nullptr));
  cursor_submitted_ = through;
  return Status::OK();
}

// The cursor at `through`, durable before this returns.
Status Runtime::RecordCursor(uint64_t through) {
  evaluated_through_ = through;
  LIMBIC_RETURN_IF_ERROR(SubmitCursor());
  return engine_->Flush();
}

// While running, the cursor follows the evaluated percepts at most once a
// second (kCursorInterval): a crash re-evaluates at most that much at the
// next start, and a quiet agent writes nothing.
void Runtime::ScheduleCursor() {
  cursor_timer_.expires_after(std::chrono::milliseconds(kCursorIntervalMs));
  cursor_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopping_) return;
    if (evaluated_through_ > cursor_submitted_)
      if (Status s = SubmitCursor(); !s.ok())
        log_->warn("reflexes: recording the cursor: {}", s.message());
    ScheduleCursor();
  });
}

// Flushes until nothing is pending: what completes may fire reflexes, whose
// events are submitted and flushed in turn, and the cursor is recorded last.
Status Runtime::FlushForExit() {
  for (int round = 0; round < 16; ++round) {
    bool refused = false;  // e.g. a full disk: the next start catches up instead
    if (evaluated_through_ > cursor_submitted_ && engine_->error().ok()) {
      if (Status s = SubmitCursor(); !s.ok()) {
        refused = true;
        log_->warn("reflexes: the cursor was not recorded ({}); the next start evaluates the "
                   "percepts after seq {} again, skipping rules that fired",
                   s.message(), cursor_submitted_);
      }
    }
    LIMBIC_RETURN_IF_ERROR(engine_->Flush());
    if (engine_->pending_batches() == 0 && (evaluated_through_ <= cursor_submitted_ || refused))
      return Status::OK();
  }
  return Status::Internal("reflexes kept firing while the runtime stopped");
}

}  // namespace limbic::runtime
