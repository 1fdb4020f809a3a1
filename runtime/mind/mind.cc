#include "runtime/mind/mind.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <mutex>
#include <thread>

#include "base/chat.h"
#include "base/env.h"
#include "base/input_json.h"
#include "base/json.h"
#include "base/subprocess.h"
#include "runtime/attention.h"
#include "runtime/mcp/tools.h"
#include "runtime/mind/session.h"
#include "runtime/metrics.h"
#include "runtime/runtime.h"
#include "runtime/submit.h"
#include "state/commands.h"

namespace limbic::runtime {

using nlohmann::json;
using state::Event;
using state::EventType;

namespace {

bool IsAttentionEvent(EventType t) {
  switch (t) {
    case EventType::kPerceptArrived:
    case EventType::kPerceptAssigned:
    case EventType::kArousalSet:
    case EventType::kArousalFactorSet:
    case EventType::kThreadCreated:
    case EventType::kThreadUpdated:
      return true;
    default:
      return false;
  }
}

}  // namespace

// ---- set-up ------------------------------------------------------------------

Mind::Mind(Deps deps, std::shared_ptr<spdlog::logger> log)
    : deps_(std::move(deps)), config_(deps_.config.mind), log_(std::move(log)),
      check_timer_(deps_.ioc), day_timer_(deps_.ioc) {
  Metrics& m = deps_.metrics;
  using T = Metrics::Type;
  m.Declare("limbic_mind_wakes_total", T::kCounter, "mind sessions woken, by trigger");
  m.Declare("limbic_mind_refusals_total", T::kCounter, "wakes the budget or a session refused, by reason");
  m.Declare("limbic_mind_steps_total", T::kCounter, "model calls (or exec steps) recorded");
  m.Declare("limbic_mind_tokens_total", T::kCounter, "model tokens, by direction");
  m.Declare("limbic_mind_session_seconds_total", T::kCounter, "time the mind was awake");
  m.Declare("limbic_mind_tool_calls_total", T::kCounter, "the model's tool calls, by outcome");
  m.Declare("limbic_mind_awake", T::kGauge, "1 while a session runs");
  m.Set("limbic_mind_awake", "", 0);
}

Mind::~Mind() {
  check_timer_.cancel();
  day_timer_.cancel();
  if (session_ && session_->call) session_->call->Cancel();
  session_.reset();  // an exec mind's group is killed, its reader joined
}

void Mind::CheckConfig(const MindConfig& config, std::vector<std::string>* errors) {
  for (size_t i = 0; i < config.tools.size(); ++i)
    if (!FindMcpTool(config.tools[i])) {
      std::string known;
      for (const McpTool& t : McpTools()) known += (known.empty() ? "" : ", ") + t.name;
      errors->push_back("mind.tools[" + std::to_string(i) + "]: unknown tool \"" + config.tools[i] +
                        "\" (the MCP tools: " + known + ")");
    }
}

TimeMs Mind::Now() const { return deps_.engine.clock().Now(); }

Status Mind::Start(Router router) {
  router_.emplace(std::move(router));
  if (!config_.enabled) return Status::OK();
  for (const std::string& name : config_.tools) {
    const McpTool* t = FindMcpTool(name);
    if (!t) continue;
    tools_json_.push_back({{"type", "function"},
                           {"function",
                            {{"name", t->name},
                             {"description", t->description},
                             {"parameters", t->input_schema}}}});
  }
  // A session the log leaves awake ended with the process that ran it.
  const TimeMs now = Now();
  auto sessions = deps_.engine.projection().AwakeSessions();
  if (!sessions.ok()) return sessions.status().WithContext("reading the mind's sessions");
  std::vector<Event> ended;
  for (const json& s : *sessions) {
    TimeMs woken = TimeOrZero(s.value("woken_at", ""));
    TimeMs last = woken;
    for (const json& st : s.value("steps", json::array()))
      last = std::max(last, TimeOrZero(st.value("ts", "")));
    ended.push_back(Event{0, 0, EventType::kMindSlept,
                          {{"session", s["id"]},
                           {"outcome", "interrupted"},
                           {"steps", s.value("steps", json::array()).size()},
                           {"tokens", s.value("tokens", uint64_t{0})},
                           {"duration_ms", static_cast<uint64_t>(std::max<TimeMs>(0, last - woken))},
                           {"error", "limbic stopped during the session (never resumed)"},
                           {"actor", "executive"}}});
    log_->warn("mind: session {} was awake when limbic stopped: interrupted", s["id"].get<std::string>());
  }
  if (!ended.empty()) {
    LIMBIC_RETURN_IF_ERROR(deps_.engine.Submit(std::move(ended), nullptr));
    LIMBIC_RETURN_IF_ERROR(deps_.engine.Flush());
  }
  LIMBIC_RETURN_IF_ERROR(Recount(now));
  auto arousal = deps_.engine.projection().GetArousal();
  if (arousal.ok()) pressure_ = (*arousal)["factors"].value("budget_pressure", false) == true;
  started_ = true;
  log_->info("mind: {} ({}, {}) watching attention; budget today: {} tokens, {} ms used",
             config_.name, config_.kind, config_.kind == "openai" ? config_.model : config_.command[0],
             use_.tokens, use_.time);
  UpdatePressure(now);
  ScheduleDayTurn();
  PostCheck();
  return Status::OK();
}

// ---- when it wakes -----------------------------------------------------------

void Mind::OnApplied(std::span<const Event> events) {
  if (!started_) return;
  bool attention = false, mind = false;
  for (const Event& e : events) {
    if (e.type == EventType::kMindWoken || e.type == EventType::kMindStep ||
        e.type == EventType::kMindSlept) {
      CountEvent(e);
      mind = true;
      if (e.type == EventType::kMindWoken) {
        deps_.metrics.Add("limbic_mind_wakes_total", "trigger=\"" + e.Str("trigger") + "\"");
      } else if (e.type == EventType::kMindStep) {
        deps_.metrics.Add("limbic_mind_steps_total");
        deps_.metrics.Add("limbic_mind_tokens_total", "direction=\"in\"",
                          static_cast<double>(e.fields.value("tokens_in", uint64_t{0})));
        deps_.metrics.Add("limbic_mind_tokens_total", "direction=\"out\"",
                          static_cast<double>(e.fields.value("tokens_out", uint64_t{0})));
      } else {
        deps_.metrics.Add("limbic_mind_session_seconds_total", "",
                          static_cast<double>(e.fields.value("duration_ms", uint64_t{0})) / 1000.0);
      }
    } else if (e.type == EventType::kReflexFired && e.fields.contains("wake_mind")) {
      const json& w = e.fields["wake_mind"];
      WakeRequest wake;
      wake.trigger = "reflex";
      wake.actor = "reflex:" + e.Str("reflex_id");
      wake.reason = w.value("reason", json()).is_string() ? w["reason"].get<std::string>() : "";
      wake.thread_id = w.value("thread_id", json()).is_string() ? w["thread_id"].get<std::string>() : "";
      if (std::string p = e.Str("percept_id"); !p.empty()) wake.percept_ids = {p};
      boost::asio::post(deps_.ioc, [this, wake = std::move(wake)]() mutable { Wake(std::move(wake), nullptr); });
    } else if (IsAttentionEvent(e.type)) {
      attention = true;
    }
  }
  if (mind) UpdatePressure(Now());
  if (attention) PostCheck();
}

void Mind::PostCheck() {
  if (check_posted_ || session_ || stopping_ || !started_) return;
  // Waiting out min_interval or a spent budget: the timer looks again.
  if (check_at_ >= 0 && Now() < check_at_) return;
  check_posted_ = true;
  boost::asio::post(deps_.ioc, [this] {
    check_posted_ = false;
    CheckAttention();
  });
}

void Mind::ScheduleCheck(TimeMs at) {
  if (check_at_ >= 0 && check_at_ <= at) return;
  check_at_ = at;
  check_timer_.expires_after(std::chrono::milliseconds(std::max<TimeMs>(0, at - Now()) + 1));
  check_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    check_at_ = -1;
    CheckAttention();
  });
}

void Mind::CheckAttention() {
  if (session_ || stopping_ || !started_) return;
  const TimeMs now = Now();
  const state::Projection& pool = deps_.engine.projection();
  const state::RecencyParams& recency = deps_.config.recency;
  // This runs after every group that can change attention: under a steady
  // ingest of mild percepts, hundreds of times a second. So it reads only
  // what the policy needs, as attention (runtime/attention.cc) ranks it,
  // not the whole view. Effective arousal is at most 1, so no percept below
  // `lowest` can wake the mind: the ranking stops there without reading a
  // record, and arousal (a read of up to 1000 recent percepts) is computed
  // only for a percept above it (bench/mind_bench.cc, ingest).
  const double lowest = std::max(0.0, config_.wake_threshold - config_.arousal_gain * 0.5);
  auto top = pool.TopNewPercepts(now, recency, lowest, 1);
  if (!top.ok()) return log_->warn("mind: reading attention: {}", top.status().message());
  WakeRequest wake;
  wake.actor = "executive";
  if (!top->empty()) {
    const json p = state::PerceptWithRecency(top->front(), now, recency);
    const double arousal = deps_.effective_arousal();
    const double threshold =
        std::max(0.0, config_.wake_threshold - config_.arousal_gain * std::max(0.0, arousal - 0.5));
    if (p.value("effective_intensity", 0.0) >= threshold) {
      wake.trigger = "percept";
      wake.percept_ids = {p.value("id", "")};
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    " at effective intensity %.3f >= threshold %.3f (arousal %.2f)",
                    p.value("effective_intensity", 0.0), threshold, arousal);
      wake.reason = "percept " + p.value("id", "") + " from " + p.value("source", "") + "/" +
                    p.value("type", "") + buf;
    }
  }
  if (wake.trigger.empty() && config_.focused_thread) {
    // Attention's focused thread (the most salient active one) and its
    // unprocessed percepts: the wake names up to 20.
    auto threads = state::ThreadsBySalience(pool, std::string("active"), now, recency, 1);
    if (!threads.ok())
      return log_->warn("mind: reading attention: {}", threads.status().message());
    if (threads->empty()) return;
    state::PerceptQuery q;
    q.thread_id = threads->front().value("id", "");
    q.status = "assigned";
    q.limit = 21;
    auto assigned = pool.QueryPercepts(q, now);
    if (!assigned.ok())
      return log_->warn("mind: reading attention: {}", assigned.status().message());
    if (assigned->empty()) return;
    std::vector<std::string> open;
    for (const json& p : *assigned) open.push_back(p.value("id", ""));
    wake.trigger = "thread";
    wake.thread_id = *q.thread_id;
    wake.reason = "focused thread " + wake.thread_id + " has " +
                  (open.size() > 20 ? std::string("more than 20") : std::to_string(open.size())) +
                  " unprocessed percept" + (open.size() == 1 ? "" : "s");
    if (open.size() > 20) open.resize(20);
    wake.percept_ids = std::move(open);
  }
  if (wake.trigger.empty()) return;
  // What the last autonomous session was woken for is not woken for again:
  // the mind has seen it (a mind that leaves it as it was would otherwise
  // be woken for it every min_interval). Something new -- another percept
  // on top, another percept in the thread -- wakes it.
  std::string key = wake.trigger + "|" + wake.thread_id;
  for (const std::string& id : wake.percept_ids) key += "|" + id;
  if (key == last_autonomous_key_) return;
  TimeMs retry_at = -1;
  if (Status why = Refusal(true, now, &retry_at); !why.ok()) {
    Refused(wake.trigger, why);
    if (retry_at >= 0) ScheduleCheck(retry_at);
    return;
  }
  last_autonomous_key_ = std::move(key);
  Begin(std::move(wake), nullptr);
}

void Mind::Wake(WakeRequest wake, Done done) {
  auto refuse = [&](Status s) {
    Refused(wake.trigger, s);
    if (done) done(std::move(s), json());
  };
  if (!config_.enabled)
    return refuse(Status::FailedPrecondition("off: the mind is not enabled (mind.enabled, docs/mind.md)"));
  if (!started_ || stopping_) return refuse(Status::Unavailable("the mind is not running (a standby, or shutting down)"));
  if (session_)
    return refuse(Status::FailedPrecondition("busy: session " + session_->id +
                                             " is running (one session at a time)"));
  TimeMs retry_at = -1;
  if (Status why = Refusal(wake.trigger != "explicit", Now(), &retry_at); !why.ok()) return refuse(why);
  Begin(std::move(wake), std::move(done));
}

void Mind::Sleep(std::string actor, Done done) {
  if (!session_ || session_->ended)
    return done(Status::FailedPrecondition("asleep: no session runs"), json());
  Session& s = *session_;
  if (s.slept_by.empty()) s.slept_by = std::move(actor);
  if (s.in_tool) {
    // A tool call of the session is in the API -- maybe this very request
    // (the model's sleep_mind), and the session ends only once it returns:
    // waiting for that end would wait on itself. The answer comes now.
    End("slept");
    return done(Status::OK(), json{{"session", s.id}, {"outcome", s.ending}});
  }
  s.on_end.push_back(std::move(done));
  End("slept");
}

// ---- a session's course -------------------------------------------------------

void Mind::Begin(WakeRequest wake, Done done) {
  auto s = std::make_unique<Session>(deps_.ioc);
  s->seq = deps_.engine.next_seq();
  s->id = "m-" + std::to_string(s->seq);
  s->woken_at = Now();
  s->started = std::chrono::steady_clock::now();
  s->wake = wake;
  const TimeMs now = s->woken_at;
  json budget = BudgetJson(now);
  json fields = {{"session", s->id},
                 {"mind", config_.name},
                 {"reason", Bounded(wake.reason.empty() ? wake.trigger : wake.reason, 1000)},
                 {"trigger", wake.trigger},
                 {"budget",
                  {{"day", budget["day"]},
                   {"tokens_used", budget["tokens"]["used"]},
                   {"tokens_left", budget["tokens"]["left"]},
                   {"minutes_used", budget["minutes"]["used"]},
                   {"minutes_left", budget["minutes"]["left"]}}}};
  if (!wake.thread_id.empty()) fields["thread_id"] = wake.thread_id;
  if (!wake.percept_ids.empty()) fields["percept_ids"] = wake.percept_ids;
  std::vector<Event> events{Event{0, 0, EventType::kMindWoken, std::move(fields)}};
  const uint64_t gen = ++generation_;
  Status st = SubmitCommand(
      deps_.engine, std::move(events), {wake.actor.empty() ? "executive" : wake.actor, nullptr},
      [this, gen, done](const Status& status, std::span<const Event> committed) {
        if (!session_ || generation_ != gen) return;
        if (!status.ok()) {
          log_->error("mind: mind_woken not written: {}", status.message());
          session_.reset();
          deps_.metrics.Set("limbic_mind_awake", "", 0);
          if (done) done(status, json());
          return;
        }
        session_->woken = true;
        if (done) done(Status::OK(), json{{"session", session_->id}, {"seq", committed.front().seq}});
        Ready();
      });
  if (!st.ok()) {
    log_->warn("mind: not woken: {}", st.message());
    if (done) done(st, json());
    return;
  }
  session_ = std::move(s);
  deps_.metrics.Set("limbic_mind_awake", "", 1);
  log_->info("mind: {} woken ({}): {}", session_->id, wake.trigger, ForLog(wake.reason));
  // The deadline: max_session, or what is left of the day's minutes.
  TimeMs limit = config_.budget.max_session;
  if (config_.budget.daily_time > 0)
    limit = std::min(limit, std::max<TimeMs>(0, config_.budget.daily_time - use_.time));
  session_->deadline.expires_after(std::chrono::milliseconds(limit));
  session_->deadline.async_wait([this, gen](const boost::system::error_code& ec) {
    if (!ec && session_ && generation_ == gen) OnDeadline();
  });
  // The context, fetched while mind_woken is written.
  // Recalled for what woke it: the first percept's text, else the reason.
  std::string query = session_->wake.reason;
  for (const json& p : WokenPercepts())
    if (p.contains("text") && p["text"].is_string()) {
      query = p["text"].get<std::string>();
      break;
    }
  std::string target = "/v1/context?budget_tokens=" + std::to_string(config_.context_tokens) +
                       "&query=" + UrlEncode(Bounded(ToValidUtf8(query), 500));
  CallApi("GET", target, "", "session " + session_->id, [this, gen](HttpResponse r) {
    if (!session_ || generation_ != gen) return;
    auto parsed = ParseInputJson(r.body);
    if (r.status == 200 && parsed.ok()) session_->context = std::move(*parsed);
    else session_->context = {{"error", "the context could not be built: HTTP " + std::to_string(r.status) + " " + Bounded(r.body, 300)}};
    session_->context_done = true;
    Ready();
  });
}

void Mind::Ready() {
  if (!session_ || !session_->woken || !session_->context_done || session_->ended) return;
  if (!session_->ending.empty()) return End(session_->ending, session_->ending_error);
  if (config_.kind == "exec") return StartExec();
  StartOpenai();
}

void Mind::OnDeadline() {
  const bool day = config_.budget.daily_time > 0 &&
                   use_.time + session_->Elapsed() >= config_.budget.daily_time;
  End(day ? "budget" : "max_session", day ? "daily_minutes used" : "");
}

void Mind::End(std::string outcome, std::string error) {
  if (!session_ || session_->ended) return;
  Session& s = *session_;
  if (!s.woken || !s.context_done || s.in_tool) {
    // mind_woken first; a tool call in the API is not cut off.
    if (s.ending.empty()) {
      s.ending = std::move(outcome);
      s.ending_error = std::move(error);
    }
    return;
  }
  if (s.exec && outcome != "exited" && outcome != "error_exit") {
    // The program's exit ends the session: stop it and wait for that.
    if (s.ending.empty()) {
      s.ending = outcome;
      s.ending_error = error;
      if (outcome == "slept") {
        s.exec->Kill(SIGTERM);
        s.retry.expires_after(std::chrono::milliseconds(kExecGrace));
        s.retry.async_wait([exec = s.exec](const boost::system::error_code& ec) {
          if (!ec) exec->Kill(SIGKILL);
        });
      } else {
        s.exec->Kill(SIGKILL);
      }
    }
    return;
  }
  if (outcome == "error_exit") outcome = "error";
  s.ended = true;
  if (s.call) s.call->Cancel();
  s.deadline.cancel();
  s.retry.cancel();
  const TimeMs duration = s.Elapsed();
  json fields = {{"session", s.id},
                 {"outcome", outcome},
                 {"steps", s.steps},
                 {"tokens", s.tokens},
                 {"duration_ms", static_cast<uint64_t>(duration)}};
  if (!error.empty()) fields["error"] = Bounded(ToValidUtf8(error), kMaxErrorBytes);
  fields["actor"] = outcome == "slept" && !s.slept_by.empty() ? s.slept_by : std::string("executive");
  log_->info("mind: {} asleep: {} after {} steps, {} tokens, {} ms{}{}", s.id, outcome, s.steps,
             s.tokens, duration, error.empty() ? "" : ": ", ForLog(error));
  const uint64_t gen = generation_;
  Status st = deps_.engine.Submit({Event{0, 0, EventType::kMindSlept, std::move(fields)}},
                                  [this, gen, outcome](const Status& status, std::span<const Event>) {
                                    if (!session_ || generation_ != gen) return;
                                    if (!status.ok())
                                      log_->error("mind: mind_slept not written: {}", status.message());
                                    Finish(outcome);
                                  });
  if (!st.ok()) {
    log_->error("mind: mind_slept refused: {}", st.message());
    Finish(outcome);
  }
}

void Mind::Finish(const std::string& outcome) {
  std::unique_ptr<Session> s = std::move(session_);
  ++generation_;
  deps_.metrics.Set("limbic_mind_awake", "", 0);
  last_session_ = {{"id", s->id}, {"outcome", outcome}, {"at", FormatTime(Now())}};
  for (Done& d : s->on_end) d(Status::OK(), json{{"session", s->id}, {"outcome", outcome}});
  UpdatePressure(Now());
  // Attention may call again: a wake it asks for now is refused (the
  // reason kept) and looked at again once min_interval has passed.
  if (!stopping_) PostCheck();
  // An exec mind's reader thread is joined off the loop's critical path:
  // its program has exited already.
  s.reset();
}

// ---- what the mind is told and shows ------------------------------------------------

std::vector<json> Mind::WokenPercepts() const {
  std::vector<json> out;
  for (const std::string& id : session_->wake.percept_ids) {
    auto p = deps_.engine.projection().Get(state::Pool::kPercepts, id);
    if (p.ok() && p->has_value()) out.push_back(std::move(**p));
  }
  return out;
}

json Mind::WakeJson() const {
  const Session& s = *session_;
  return {{"session", s.id},
          {"mind", config_.name},
          {"trigger", s.wake.trigger},
          {"reason", s.wake.reason},
          {"thread_id", s.wake.thread_id.empty() ? json() : json(s.wake.thread_id)},
          {"percept_ids", s.wake.percept_ids},
          {"percepts", WokenPercepts()}};
}

json Mind::StatusJson() {
  const TimeMs now = Now();
  json out = {{"enabled", config_.enabled},
              {"name", config_.name},
              {"kind", config_.kind},
              {"model", config_.kind == "openai" ? json(config_.model) : json()},
              {"status", !config_.enabled ? "off" : session_ ? "awake" : "asleep"},
              {"session", nullptr},
              {"budget", BudgetJson(now)},
              {"last_refusal", last_refusal_},
              {"last_session", last_session_},
              {"sessions_today", use_.sessions},
              {"tools", config_.kind == "openai" ? json(config_.tools) : json()}};
  if (config_.kind == "exec") out["command"] = config_.command;
  if (session_) {
    auto rec = deps_.engine.projection().Get(state::Pool::kSessions, session_->id);
    if (rec.ok() && rec->has_value()) out["session"] = **rec;
    else out["session"] = {{"id", session_->id}, {"status", "awake"}, {"trigger", session_->wake.trigger}, {"reason", session_->wake.reason}};
  }
  return out;
}

void Mind::Stop() {
  stopping_ = true;
  check_timer_.cancel();
  day_timer_.cancel();
  if (!session_ || session_->ended) return;
  Session& s = *session_;
  if (s.exec) s.exec->Kill(SIGKILL);
  s.exec.reset();  // joins the reader: the group is dead, its pipes close
  s.ending.clear();
  s.in_tool = false;
  s.woken = s.woken || true;
  s.context_done = true;
  End("interrupted", "limbic stopped");
}

std::unique_ptr<Executive> MakeMind(Runtime& rt, std::shared_ptr<spdlog::logger> log) {
  return std::make_unique<Mind>(
      Mind::Deps{rt.engine(), rt.config(), rt.ioc(), rt.metrics(), [&rt] { return rt.EffectiveArousal(); },
                 [&rt] { return rt.api_url(); }},
      std::move(log));
}

}  // namespace limbic::runtime
