#include "runtime/api/api.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/input_json.h"
#include "runtime/attention.h"
#include "runtime/runtime.h"
#include "runtime/submit.h"
#include "state/provenance.h"
#include "state/recency.h"

namespace limbic::runtime {

using nlohmann::json;
using state::Event;

int HttpStatusFor(const Status& s) {
  switch (s.code()) {
    case Status::Code::kOk:
      return 200;
    case Status::Code::kInvalidArgument:
      return 400;
    case Status::Code::kNotFound:
      return 404;
    case Status::Code::kAlreadyExists:
    case Status::Code::kFailedPrecondition:
      return 409;
    case Status::Code::kBusy:
    case Status::Code::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

HttpResponse ErrorResponse(const Status& s) {
  // Nesting past api.max_json_depth has its own code, so a client can tell
  // it from a syntax error without reading the message.
  std::string code =
      IsJsonTooDeep(s) ? "json_too_deep" : std::string(Status::CodeName(s.code()));
  return HttpResponse::Error(HttpStatusFor(s), std::move(code), s.message());
}

std::function<void(Result<json>)> AnswerJson(Responder respond) {
  return [respond](Result<json> r) {
    if (!r.ok()) return respond(ErrorResponse(r.status()));
    respond(HttpResponse::Json(200, *r));
  };
}

json CommitReceipt(std::span<const Event> done, const char* id_field) {
  json out = {{"seq", done.front().seq}, {"events", json::array()}};
  if (id_field) out["id"] = done.front().Str(id_field);
  for (const Event& e : done) out["events"].push_back(state::EventToJson(e));
  return out;
}

// The request body as JSON; an empty body is an empty object.
Result<json> Body(HttpRequest& req) {
  if (req.body.empty()) return json::object();
  return req.JsonBody();
}

std::optional<std::string> Query(const HttpRequest& req, const std::string& key) {
  auto it = req.query.find(key);
  if (it == req.query.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

Result<size_t> QueryCount(const HttpRequest& req, const std::string& key, size_t dflt, size_t max) {
  auto v = Query(req, key);
  if (!v) return dflt;
  size_t n = 0;
  for (char c : *v) {
    if (c < '0' || c > '9' || n > (size_t{1} << 40))
      return Status::InvalidArgument("query " + key + ": must be a non-negative integer");
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  return std::min(n, max);
}

Result<std::optional<TimeMs>> QueryDuration(const HttpRequest& req, const std::string& key) {
  auto v = Query(req, key);
  if (!v) return std::optional<TimeMs>();
  auto d = ParseDuration(*v);
  if (!d.ok()) return d.status().WithContext("query " + key);
  return std::optional<TimeMs>(*d);
}

const std::string& Param(const HttpRequest& req, const std::string& key) {
  static const std::string kEmpty;
  auto it = req.params.find(key);
  return it == req.params.end() ? kEmpty : it->second;
}

Api::Api(Runtime& runtime, std::shared_ptr<spdlog::logger> log)
    : rt_(runtime), log_(std::move(log)) {
  replay_worker_.Start();
}

Api::~Api() { replay_worker_.Stop(); }

Result<std::string> ActorOf(const HttpRequest& req) {
  std::string actor = req.Header("x-limbic-actor");
  if (actor.empty()) return std::string("http");
  Status s = state::CheckActor(actor);
  if (!s.ok()) return s.WithContext("header X-Limbic-Actor");
  return actor;
}

void Api::Commit(const HttpRequest& req, Result<state::Events> events, const char* id_field,
                 bool created, Responder respond) {
  if (!events.ok()) return respond(ErrorResponse(events.status()));
  if (events->empty()) return respond(HttpResponse::Json(200, {{"events", json::array()}}));
  auto actor = ActorOf(req);
  if (!actor.ok()) return respond(ErrorResponse(actor.status()));
  Status s = SubmitCommand(
      rt_.engine(), std::move(events), {*actor, &rt_.config().effectors},
      [respond, id_field, created](const Status& st, std::span<const Event> done) {
        if (!st.ok()) return respond(ErrorResponse(st));
        respond(HttpResponse::Json(created ? 201 : 200, CommitReceipt(done, id_field)));
      });
  if (!s.ok()) respond(ErrorResponse(s));
}

Router Api::MakeRouter() {
  Router r(&ApiQueries());
  r.Add("GET", "/healthz", [this](HttpRequest&, Responder respond) {
    // 503 while writes fail (a full disk), until one gets through; the
    // archive's unreadable days degrade the status but not the answer code:
    // the loop itself works.
    const Status& health =
        rt_.engine().error().ok() ? rt_.engine().health() : rt_.engine().error();
    const auto& unreadable = rt_.archive().unreadable();
    json archive = {{"status", unreadable.empty() ? "ok" : "degraded"}};
    if (!unreadable.empty()) {
      json days = json::array();
      for (const auto& p : unreadable) days.push_back({{"date", p.date}, {"what", p.what}});
      archive["unreadable"] = std::move(days);
    }
    // Replication: a closed write gate (fenced, quorum without NATS) is a
    // 503 like a full disk; an async primary lagging past max_lag, or a
    // standby that cannot follow, is degraded.
    Status gate = rt_.following() ? Status::OK() : rt_.engine().write_gate();
    Status lagging;
    json replication;
    if (Replicator* r = rt_.replicator()) {
      Replicator::Snapshot s = r->snapshot();
      replication = {{"role", "primary"},
                     {"mode", s.mode},
                     {"connected", s.connected},
                     {"durable_seq", s.durable_seq},
                     {"replicated_seq", s.replicated_seq},
                     {"lag", s.lag()},
                     {"stream_seq", s.stream_seq},
                     {"stream_last_seq", s.stream_last_seq}};
      if (!s.fenced.empty()) replication["fenced"] = s.fenced;
      if (!s.error.empty()) replication["error"] = s.error;
      lagging = r->health();
    } else if (Follower* f = rt_.follower()) {
      Follower::Snapshot s = f->snapshot();
      replication = {{"role", "standby"},
                     {"connected", s.connected},
                     {"applied_seq", s.applied_seq},
                     {"stream_last_seq", s.stream_last_seq},
                     {"lag", s.lag()}};
      if (!s.error.empty()) {
        replication["error"] = s.error;
        lagging = Status::Unavailable("the standby cannot follow: " + s.error);
      }
    }
    const bool ok = health.ok() && gate.ok();
    json out = {{"status", ok && lagging.ok() && unreadable.empty() ? "ok" : "degraded"},
                {"applied_seq", rt_.engine().applied_seq()},
                {"version", LIMBIC_VERSION},
                {"archive", std::move(archive)}};
    out["embedder"] = rt_.memory().embedder().id();
    if (!rt_.memory().embedder_note().empty()) out["embedder_note"] = rt_.memory().embedder_note();
    if (!replication.is_null()) out["replication"] = std::move(replication);
    if (rt_.sandbox()) out["sandbox"] = rt_.sandbox()->ToJson();
    if (!health.ok())
      out["reason"] = health.message();
    else if (!gate.ok())
      out["reason"] = gate.message();
    else if (!lagging.ok())
      out["reason"] = lagging.message();
    else if (!unreadable.empty())
      out["reason"] = "archive days cannot be read";
    respond(HttpResponse::Json(ok ? 200 : 503, out));
  });
  r.Add("POST", "/v1/promote", [this](HttpRequest&, Responder respond) {
    rt_.Promote([respond](Status s, json result) {
      if (!s.ok()) return respond(ErrorResponse(s));
      respond(HttpResponse::Json(200, result));
    });
  });
  r.Add("GET", "/metrics", [this](HttpRequest&, Responder respond) {
    HttpResponse res;
    res.content_type = "text/plain; version=0.0.4";
    res.body = rt_.metrics().Render();
    respond(std::move(res));
  });
  AddPerceptRoutes(r);
  AddThreadRoutes(r);
  AddOutboxRoutes(r);
  AddEventRoutes(r);
  AddReflexRoutes(r);
  AddSensorRoutes(r);
  AddArchiveRoutes(r);
  AddMemoryRoutes(r);
  AddWorldRoutes(r);
  AddStateRoutes(r);
  AddUiRoutes(r);
  return r;
}

void Api::AddPerceptRoutes(Router& r) {
  r.Add("POST", "/v1/percepts", [this](HttpRequest& req, Responder respond) {
    auto body = req.JsonBody();
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    Commit(req, state::BuildPerceptAdd(*body, rt_.engine().next_seq()), "percept_id", true,
           respond);
  });
  r.Add("GET", "/v1/percepts", [this](HttpRequest& req, Responder respond) {
    state::PerceptQuery q;
    q.thread_id = Query(req, "thread_id");
    q.source = Query(req, "source");
    q.type = Query(req, "type");
    q.status = Query(req, "status");
    auto min_age = QueryDuration(req, "min_age");
    auto max_age = QueryDuration(req, "max_age");
    auto limit = QueryCount(req, "limit", 50, 10000);
    for (const Status& s : {min_age.status(), max_age.status(), limit.status()})
      if (!s.ok()) return respond(ErrorResponse(s));
    q.min_age = *min_age;
    q.max_age = *max_age;
    q.limit = *limit;
    TimeMs now = rt_.engine().clock().Now();
    auto percepts = rt_.engine().projection().QueryPercepts(q, now);
    if (!percepts.ok()) return respond(ErrorResponse(percepts.status()));
    json out = json::array();
    for (const json& p : *percepts)
      out.push_back(state::PerceptWithRecency(p, now, rt_.config().recency));
    respond(HttpResponse::Json(200, {{"percepts", std::move(out)}}));
  });
  r.Add("GET", "/v1/percepts/{id}", [this](HttpRequest& req, Responder respond) {
    auto p = rt_.engine().projection().Get(state::Pool::kPercepts, Param(req, "id"));
    if (!p.ok()) return respond(ErrorResponse(p.status()));
    if (!p->has_value())
      return respond(ErrorResponse(Status::NotFound("percept " + Param(req, "id") + " not found")));
    respond(HttpResponse::Json(
        200, state::PerceptWithRecency(**p, rt_.engine().clock().Now(), rt_.config().recency)));
  });
  r.Add("POST", "/v1/percepts/{id}/assign", [this](HttpRequest& req, Responder respond) {
    auto body = Body(req);
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    Commit(req, state::BuildPerceptAssign(Param(req, "id"), *body), "percept_id", false, respond);
  });
  r.Add("POST", "/v1/percepts/{id}/process", [this](HttpRequest& req, Responder respond) {
    // {reason?}; a body, when sent, must be a JSON object.
    auto body = Body(req);
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    Commit(req, state::BuildPerceptProcess(Param(req, "id"), *body), "percept_id", false, respond);
  });
  r.Add("POST", "/v1/percepts/{id}/drop", [this](HttpRequest& req, Responder respond) {
    auto body = Body(req);
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    Commit(req, state::BuildPerceptDrop(Param(req, "id"), *body), "percept_id", false, respond);
  });
  r.Add("DELETE", "/v1/percepts/{id}", [this](HttpRequest& req, Responder respond) {
    auto body = Body(req);
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    Commit(req, state::BuildPerceptRemove(Param(req, "id"), *body), "percept_id", false, respond);
  });
}

void Api::AddThreadRoutes(Router& r) {
  r.Add("POST", "/v1/threads", [this](HttpRequest& req, Responder respond) {
    auto body = req.JsonBody();
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    Commit(req, state::BuildThreadCreate(*body, rt_.engine().next_seq()), "thread_id", true,
           respond);
  });
  r.Add("GET", "/v1/threads", [this](HttpRequest& req, Responder respond) {
    std::optional<std::string> status = Query(req, "status");
    if (!status) status = "active";
    if (*status == "all") status.reset();
    auto limit = QueryCount(req, "limit", std::numeric_limits<size_t>::max(),
                            std::numeric_limits<size_t>::max());
    if (!limit.ok()) return respond(ErrorResponse(limit.status()));
    auto threads = state::ThreadsBySalience(rt_.engine().projection(), status,
                                            rt_.engine().clock().Now(), rt_.config().recency);
    if (!threads.ok()) return respond(ErrorResponse(threads.status()));
    if (threads->size() > *limit) threads->erase(threads->begin() + *limit, threads->end());
    respond(HttpResponse::Json(200, {{"threads", std::move(*threads)}}));
  });
  r.Add("GET", "/v1/threads/{id}", [this](HttpRequest& req, Responder respond) {
    const std::string& id = Param(req, "id");
    auto t = rt_.engine().projection().Get(state::Pool::kThreads, id);
    if (!t.ok()) return respond(ErrorResponse(t.status()));
    if (!t->has_value())
      return respond(ErrorResponse(Status::NotFound("thread " + id + " not found")));
    auto n = rt_.engine().projection().CountUnprocessed(id);
    if (!n.ok()) return respond(ErrorResponse(n.status()));
    respond(HttpResponse::Json(
        200, state::ThreadWithRecency(**t, *n, rt_.engine().clock().Now(), rt_.config().recency)));
  });
  r.Add("PATCH", "/v1/threads/{id}", [this](HttpRequest& req, Responder respond) {
    auto body = req.JsonBody();
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    Commit(req, state::BuildThreadUpdate(Param(req, "id"), *body), "thread_id", false, respond);
  });
  r.Add("DELETE", "/v1/threads/{id}", [this](HttpRequest& req, Responder respond) {
    auto body = Body(req);
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    Commit(req, state::BuildThreadDelete(Param(req, "id"), *body), "thread_id", false, respond);
  });
}

void Api::AddOutboxRoutes(Router& r) {
  r.Add("GET", "/v1/arousal", [this](HttpRequest&, Responder respond) {
    auto a = rt_.engine().projection().GetArousal();
    if (!a.ok()) return respond(ErrorResponse(a.status()));
    json out = *a;
    out["effective"] = rt_.EffectiveArousal();
    respond(HttpResponse::Json(200, out));
  });
  for (const char* method : {"PATCH", "PUT"}) {
    r.Add(method, "/v1/arousal", [this](HttpRequest& req, Responder respond) {
      auto body = req.JsonBody();
      if (!body.ok()) return respond(ErrorResponse(body.status()));
      Commit(req, state::BuildArousalSet(*body), nullptr, false, respond);
    });
  }
  r.Add("POST", "/v1/actions", [this](HttpRequest& req, Responder respond) {
    auto body = req.JsonBody();
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    Commit(req, state::BuildActionEnqueue(*body, rt_.engine().next_seq()), "action_id", true,
           respond);
  });
  // A pending_approval action goes on to delivery, or never goes.
  for (bool approve : {true, false}) {
    r.Add("POST", std::string("/v1/actions/{id}/") + (approve ? "approve" : "reject"),
          [this, approve](HttpRequest& req, Responder respond) {
            auto body = Body(req);
            if (!body.ok()) return respond(ErrorResponse(body.status()));
            const std::string& id = Param(req, "id");
            Commit(req,
                   approve ? state::BuildActionApprove(id, *body)
                           : state::BuildActionReject(id, *body),
                   "action_id", false, respond);
          });
  }
  // A dead action is sent again (a human decided its cause is mended).
  r.Add("POST", "/v1/actions/{id}/retry", [this](HttpRequest& req, Responder respond) {
    auto body = Body(req);
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    Commit(req, state::BuildActionRetry(Param(req, "id"), *body), "action_id", false, respond);
  });
  r.Add("GET", "/v1/actions", [this](HttpRequest& req, Responder respond) {
    auto actions = rt_.engine().projection().ListActions(Query(req, "status"));
    if (!actions.ok()) return respond(ErrorResponse(actions.status()));
    respond(HttpResponse::Json(200, {{"actions", *actions}}));
  });
  r.Add("POST", "/v1/actions/prune", [this](HttpRequest& req, Responder respond) {
    // {"older_than": "24h"}: complete and dead actions last updated before
    // now - older_than (default: outbox.retention) leave the pool.
    auto body = Body(req);
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    TimeMs older_than = rt_.config().outbox.retention;
    if (body->contains("older_than")) {
      const json& v = (*body)["older_than"];
      auto d = v.is_string() ? ParseDuration(v.get<std::string>())
                             : Result<TimeMs>(Status::InvalidArgument("must be a duration string"));
      if (!d.ok()) return respond(ErrorResponse(d.status().WithContext("field \"older_than\"")));
      older_than = *d;
    }
    for (auto it = body->begin(); it != body->end(); ++it)
      if (it.key() != "older_than")
        return respond(
            ErrorResponse(Status::InvalidArgument("field \"" + it.key() + "\": unknown")));
    Commit(
        req,
        state::BuildActionsPrune(rt_.engine().projection(), older_than, rt_.engine().clock().Now()),
        nullptr, false, respond);
  });
  r.Add("GET", "/v1/state/digest", [this](HttpRequest&, Responder respond) {
    // Of the applied state; compare with `limbic replay --verify`.
    auto digest = rt_.engine().projection().Digest();
    if (!digest.ok()) return respond(ErrorResponse(digest.status()));
    respond(HttpResponse::Json(200,
                               {{"applied_seq", rt_.engine().applied_seq()}, {"digest", *digest}}));
  });
  r.Add("GET", "/v1/actions/{id}", [this](HttpRequest& req, Responder respond) {
    const std::string& id = Param(req, "id");
    auto a = rt_.engine().projection().Get(state::Pool::kActions, id);
    if (!a.ok()) return respond(ErrorResponse(a.status()));
    if (!a->has_value())
      return respond(ErrorResponse(Status::NotFound("action " + id + " not found")));
    respond(HttpResponse::Json(200, **a));
  });
  r.Add("GET", "/v1/attention", [this](HttpRequest&, Responder respond) {
    auto a = Attention();
    if (!a.ok()) return respond(ErrorResponse(a.status()));
    respond(HttpResponse::Json(200, *a));
  });
}

Result<json> Api::Attention() {
  const Config& c = rt_.config();
  return BuildAttention(rt_.engine().projection(), rt_.engine().clock().Now(),
                        {c.recency, c.attention_threshold, c.attention_limit},
                        rt_.EffectiveArousal());
}

std::unique_ptr<Routes> MakeApi(Runtime& runtime, std::shared_ptr<spdlog::logger> log) {
  return std::make_unique<Api>(runtime, std::move(log));
}

}  // namespace limbic::runtime
