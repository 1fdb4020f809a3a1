// The mind's thinking budget (docs/mind.md): the day's use, counted from
// the sessions pool at start and at each new day and then from the mind's
// own events; the refusals it gives; budget_pressure, the arousal factor
// set as the budget runs out; and its part of GET /v1/mind.
#include <algorithm>
#include <chrono>

#include "runtime/metrics.h"
#include "runtime/mind/mind.h"
#include "runtime/mind/session.h"
#include "runtime/submit.h"
#include "state/commands.h"

namespace limbic::runtime {

using nlohmann::json;
using state::Event;
using state::EventType;

namespace {

TimeMs DayStart(TimeMs t) { return t - ((t % 86400000) + 86400000) % 86400000; }

}  // namespace

void Mind::ScheduleDayTurn() {
  const TimeMs now = Now();
  day_timer_.expires_after(std::chrono::milliseconds(DayStart(now) + 86400000 - now + 1));
  day_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopping_) return;
    // A new day: the budget is whole again, budget_pressure goes.
    if (Status s = Recount(Now()); !s.ok()) log_->warn("mind: counting the day's use: {}", s.message());
    UpdatePressure(Now());
    check_at_ = -1;
    check_timer_.cancel();
    PostCheck();
    ScheduleDayTurn();
  });
}

Status Mind::Recount(TimeMs now) {
  Use use;
  use.day = FormatDate(now);
  const TimeMs day_start = DayStart(now);
  // Sessions woken since the day before began cover every step and end of today.
  auto sessions = deps_.engine.projection().ListSessions(day_start - 86400000, 0);
  if (!sessions.ok()) return sessions.status();
  for (const json& s : *sessions) {
    const TimeMs woken = TimeOrZero(s.value("woken_at", ""));
    if (s.value("trigger", "") != "explicit") use.last_autonomous_at = std::max(use.last_autonomous_at, woken);
    if (woken >= day_start) ++use.sessions;
    for (const json& st : s.value("steps", json::array()))
      if (TimeOrZero(st.value("ts", "")) >= day_start)
        use.tokens += st.value("tokens_in", uint64_t{0}) + st.value("tokens_out", uint64_t{0});
    if (s.value("status", "") == "asleep" && TimeOrZero(s.value("slept_at", "")) >= day_start)
      use.time += s.value("duration_ms", TimeMs{0});
  }
  use_ = use;
  return Status::OK();
}

void Mind::CountEvent(const Event& e) {
  if (e.type == EventType::kMindStep && session_ && e.Str("session") == session_->id) {
    const uint64_t t =
        e.fields.value("tokens_in", uint64_t{0}) + e.fields.value("tokens_out", uint64_t{0});
    session_->uncounted -= std::min(session_->uncounted, t);
  }
  if (FormatDate(e.ts) != use_.day) {
    if (Status s = Recount(e.ts); !s.ok()) log_->warn("mind: counting the day's use: {}", s.message());
    return;  // the pool has the event already
  }
  switch (e.type) {
    case EventType::kMindWoken:
      ++use_.sessions;
      if (e.Str("trigger") != "explicit") use_.last_autonomous_at = e.ts;
      break;
    case EventType::kMindStep:
      use_.tokens += e.fields.value("tokens_in", uint64_t{0}) + e.fields.value("tokens_out", uint64_t{0});
      break;
    case EventType::kMindSlept:
      use_.time += e.fields.value("duration_ms", TimeMs{0});
      break;
    default:
      break;
  }
}

Status Mind::Refusal(bool autonomous, TimeMs now, TimeMs* retry_at) {
  const MindBudgetConfig& b = config_.budget;
  *retry_at = -1;
  if (FormatDate(now) != use_.day) (void)Recount(now);
  const TimeMs tomorrow = DayStart(now) + 86400000;
  if (b.daily_tokens > 0 && use_.tokens >= b.daily_tokens) {
    *retry_at = tomorrow;
    return Status::FailedPrecondition("budget: daily_tokens used (" + std::to_string(use_.tokens) +
                                     " of " + std::to_string(b.daily_tokens) + "); resets at " +
                                     FormatTime(tomorrow));
  }
  if (b.daily_time > 0 && use_.time >= b.daily_time) {
    *retry_at = tomorrow;
    return Status::FailedPrecondition("budget: daily_minutes used (" + std::to_string(use_.time / 60000) +
                                     " of " + std::to_string(b.daily_time / 60000) +
                                     " min); resets at " + FormatTime(tomorrow));
  }
  if (autonomous && use_.last_autonomous_at >= 0 && b.min_interval > 0 &&
      now < use_.last_autonomous_at + b.min_interval) {
    *retry_at = use_.last_autonomous_at + b.min_interval;
    return Status::FailedPrecondition("budget: min_interval (" + std::to_string(b.min_interval) +
                                     " ms) since the last autonomous wake at " +
                                     FormatTime(use_.last_autonomous_at) + "; next at " +
                                     FormatTime(*retry_at));
  }
  return Status::OK();
}

void Mind::Refused(const std::string& trigger, const Status& why) {
  const std::string reason = why.message();
  std::string kind = reason.starts_with("budget: ") ? reason.substr(8, reason.find(' ', 8) - 8)
                     : why.IsFailedPrecondition()   ? reason.substr(0, reason.find(':'))
                                                    : "unavailable";
  deps_.metrics.Add("limbic_mind_refusals_total", "reason=\"" + kind + "\"");
  // Logged once per reason in a row: attention may ask again and again.
  const bool again = last_refusal_.is_object() && last_refusal_.value("reason", "") == reason &&
                     last_refusal_.value("trigger", "") == trigger;
  last_refusal_ = {{"at", FormatTime(Now())}, {"trigger", trigger}, {"reason", reason}};
  if (!again) log_->info("mind: not woken ({}): {}", trigger, ForLog(reason));
}

void Mind::UpdatePressure(TimeMs now) {
  const MindBudgetConfig& b = config_.budget;
  double used = 0;
  if (b.daily_tokens > 0) used = std::max(used, static_cast<double>(use_.tokens) / b.daily_tokens);
  if (b.daily_time > 0) {
    TimeMs t = use_.time + (session_ ? session_->Elapsed() : 0);
    used = std::max(used, static_cast<double>(t) / b.daily_time);
  }
  const bool want = (b.daily_tokens > 0 || b.daily_time > 0) && used >= b.pressure_at;
  if (want == pressure_ || stopping_) return;
  pressure_ = want;
  Status s = SubmitCommand(deps_.engine, state::BuildArousalSet({{"factors", {{"budget_pressure", want}}}}),
                           {"executive", nullptr}, nullptr);
  if (!s.ok()) log_->warn("mind: setting budget_pressure: {}", s.message());
  (void)now;
}

json Mind::BudgetJson(TimeMs now) {
  const MindBudgetConfig& b = config_.budget;
  if (FormatDate(now) != use_.day) (void)Recount(now);
  const TimeMs awake = use_.time + (session_ ? session_->Elapsed() : 0);
  const uint64_t tokens = use_.tokens + (session_ ? session_->uncounted : 0);
  auto left = [](uint64_t limit, uint64_t used) -> json {
    if (limit == 0) return nullptr;
    return used >= limit ? 0 : limit - used;
  };
  const uint64_t minutes_used = static_cast<uint64_t>(awake / 60000);
  json out = {{"day", use_.day},
              {"resets_at", FormatTime(DayStart(now) + 86400000)},
              {"tokens", {{"limit", b.daily_tokens ? json(b.daily_tokens) : json()},
                          {"used", tokens},
                          {"left", left(b.daily_tokens, tokens)}}},
              {"minutes",
               {{"limit", b.daily_time ? json(b.daily_time / 60000) : json()},
                {"used", minutes_used},
                {"used_ms", awake},
                {"left", b.daily_time ? json(static_cast<uint64_t>(std::max<TimeMs>(0, b.daily_time - awake) / 60000)) : json()}}},
              {"max_session_ms", b.max_session},
              {"max_steps", b.max_steps},
              {"min_interval_ms", b.min_interval},
              {"pressure", pressure_},
              {"next_wake_at", nullptr}};
  if (use_.last_autonomous_at >= 0 && b.min_interval > 0 && now < use_.last_autonomous_at + b.min_interval)
    out["next_wake_at"] = FormatTime(use_.last_autonomous_at + b.min_interval);
  return out;
}

}  // namespace limbic::runtime
