// The mind over HTTP (docs/mind.md): its status, waking it, putting it to
// sleep, and its sessions, read from the sessions pool (state/reducer.h).
#include "runtime/api/api.h"
#include "runtime/executive.h"
#include "state/engine.h"

namespace limbic::runtime {

using nlohmann::json;

namespace {

// A refusal of the executive as its answer: 409 with code off, busy,
// budget or asleep (the message's prefix), 503 when the mind does not run here.
HttpResponse MindRefusal(const Status& s) {
  if (s.code() != Status::Code::kFailedPrecondition) return ErrorResponse(s);
  const std::string& m = s.message();
  std::string code = "failed_precondition";
  for (const char* prefix : {"off", "busy", "budget", "asleep"})
    if (m.starts_with(std::string(prefix) + ": ")) code = prefix;
  return HttpResponse::Error(409, code, m);
}

// A session as the list shows it: steps as a count, no texts.
json Summary(const json& s) {
  json out = json::object();
  for (const char* key : {"id", "mind", "trigger", "reason", "woken_at", "status", "outcome",
                          "tokens", "duration_ms", "slept_at", "thread_id"})
    if (s.contains(key)) out[key] = s[key];
  out["steps"] = s.value("steps", json::array()).size();
  return out;
}

}  // namespace

std::span<const Api::Binding> Api::MindBindings() {
  static const Binding kBindings[] = {
      {"get_mind", &Api::GetMind},
      {"wake_mind", &Api::WakeMind},
      {"sleep_mind", &Api::SleepMind},
      {"list_mind_sessions", &Api::ListMindSessions},
      {"get_mind_session", &Api::GetMindSession},
  };
  return kBindings;
}

void Api::GetMind(HttpRequest&, Responder respond) {
  Executive* mind = svc_.mind ? svc_.mind() : nullptr;
  if (mind) return respond(HttpResponse::Json(200, mind->StatusJson()));
  // No executive in this process (a standby, `limbic mcp`'s runtime).
  respond(HttpResponse::Json(200, {{"enabled", svc_.config.mind.enabled},
                                   {"name", svc_.config.mind.name},
                                   {"kind", svc_.config.mind.kind},
                                   {"status", "off"},
                                   {"session", nullptr},
                                   {"budget", json::object()},
                                   {"last_refusal", nullptr},
                                   {"last_session", nullptr},
                                   {"sessions_today", 0}}));
}

void Api::WakeMind(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  auto actor = ActorOf(req);
  if (!actor.ok()) return respond(ErrorResponse(actor.status()));
  Executive::WakeRequest wake;
  wake.trigger = "explicit";
  wake.actor = *actor;
  for (auto it = body->begin(); it != body->end(); ++it) {
    const std::string& key = it.key();
    if (key != "reason" && key != "thread_id")
      return respond(ErrorResponse(Status::InvalidArgument("field \"" + key + "\": unknown (known: reason, thread_id)")));
    if (!it->is_string())
      return respond(ErrorResponse(Status::InvalidArgument("field \"" + key + "\": must be a string, got " + it->dump())));
  }
  wake.reason = body->value("reason", "");
  if (wake.reason.size() > 1000)
    return respond(ErrorResponse(Status::InvalidArgument("field \"reason\": at most 1000 bytes")));
  if (wake.reason.empty()) wake.reason = "woken by " + *actor;
  wake.thread_id = body->value("thread_id", "");
  if (!wake.thread_id.empty()) {
    auto t = svc_.engine.projection().Get(state::Pool::kThreads, wake.thread_id);
    if (!t.ok()) return respond(ErrorResponse(t.status()));
    if (!t->has_value())
      return respond(ErrorResponse(Status::NotFound("thread " + wake.thread_id + " not found")));
  }
  Executive* mind = svc_.mind ? svc_.mind() : nullptr;
  if (!mind)
    return respond(ErrorResponse(Status::Unavailable("the mind does not run in this process")));
  mind->Wake(std::move(wake), [respond](Status s, json answer) {
    if (!s.ok()) return respond(MindRefusal(s));
    respond(HttpResponse::Json(202, answer));
  });
}

void Api::SleepMind(HttpRequest& req, Responder respond) {
  auto actor = ActorOf(req);
  if (!actor.ok()) return respond(ErrorResponse(actor.status()));
  Executive* mind = svc_.mind ? svc_.mind() : nullptr;
  if (!mind)
    return respond(ErrorResponse(Status::Unavailable("the mind does not run in this process")));
  mind->Sleep(*actor, [respond](Status s, json answer) {
    if (!s.ok()) return respond(MindRefusal(s));
    respond(HttpResponse::Json(200, answer));
  });
}

void Api::ListMindSessions(HttpRequest& req, Responder respond) {
  auto limit = QueryCount(req, "limit", 20, 1000);
  if (!limit.ok()) return respond(ErrorResponse(limit.status()));
  auto sessions = svc_.engine.projection().ListSessions(0, *limit);
  if (!sessions.ok()) return respond(ErrorResponse(sessions.status()));
  json list = json::array();
  for (const json& s : *sessions) list.push_back(Summary(s));
  respond(HttpResponse::Json(200, {{"sessions", std::move(list)}}));
}

void Api::GetMindSession(HttpRequest& req, Responder respond) {
  const std::string& id = Param(req, "id");
  auto rec = svc_.engine.projection().Get(state::Pool::kSessions, id);
  if (!rec.ok()) return respond(ErrorResponse(rec.status()));
  if (!rec->has_value()) return respond(ErrorResponse(Status::NotFound("session " + id + " not found")));
  respond(HttpResponse::Json(200, **rec));
}

}  // namespace limbic::runtime
