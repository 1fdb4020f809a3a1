#include "runtime/api/api.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/input_json.h"
#include "base/json.h"
#include "runtime/archive_service.h"
#include "runtime/attention.h"
#include "runtime/config.h"
#include "runtime/metrics.h"
#include "runtime/api/openapi.h"
#include "runtime/api/operations.h"
#include "runtime/submit.h"
#include "state/engine.h"
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
    if (c < '0' || c > '9')
      return Status::InvalidArgument("query " + key + ": must be a non-negative integer");
    // Past any max: saturates (a larger count is read as the max).
    if (n <= (size_t{1} << 40)) n = n * 10 + static_cast<size_t>(c - '0');
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

bool QueryFlag(const HttpRequest& req, const std::string& key) { return Query(req, key) == "true"; }

const std::string& Param(const HttpRequest& req, const std::string& key) {
  static const std::string kEmpty;
  auto it = req.params.find(key);
  return it == req.params.end() ? kEmpty : it->second;
}

Api::Api(ApiServices services, std::shared_ptr<spdlog::logger> log)
    : svc_(std::move(services)), log_(std::move(log)) {
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

Result<std::string> ReasonOf(const HttpRequest& req) {
  std::string reason = req.Header("x-limbic-reason");
  if (reason.size() > kMaxReasonBytes)
    return Status::InvalidArgument("header X-Limbic-Reason: at most " + std::to_string(kMaxReasonBytes) +
                                   " bytes, got " + std::to_string(reason.size()));
  if (!IsValidUtf8(reason) || std::any_of(reason.begin(), reason.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      }))
    return Status::InvalidArgument("header X-Limbic-Reason: must be UTF-8 text without control characters");
  return reason;
}

void Api::Commit(const HttpRequest& req, Result<state::Events> events, const char* id_field,
                 bool created, Responder respond) {
  if (!events.ok()) return respond(ErrorResponse(events.status()));
  if (events->empty()) return respond(HttpResponse::Json(200, {{"events", json::array()}}));
  auto actor = ActorOf(req);
  if (!actor.ok()) return respond(ErrorResponse(actor.status()));
  auto reason = ReasonOf(req);
  if (!reason.ok()) return respond(ErrorResponse(reason.status()));
  Status s = SubmitCommand(
      svc_.engine, std::move(events), {*actor, &svc_.config.effectors, false, *reason},
      [respond, id_field, created](const Status& st, std::span<const Event> done) {
        if (!st.ok()) return respond(ErrorResponse(st));
        respond(HttpResponse::Json(created ? 201 : 200, CommitReceipt(done, id_field)));
      });
  if (!s.ok()) respond(ErrorResponse(s));
}

// ---- the router: one route per operation ------------------------------------

const Api::Binding* Api::BindingOf(std::string_view op) {
  for (auto area : {SystemBindings, PoolBindings, EventBindings, MemoryBindings, WorldBindings,
                    ArchiveBindings, StateBindings, MindBindings})
    for (const Binding& b : area())
      if (b.op == op) return &b;
  return nullptr;
}

std::vector<std::string_view> Api::BoundOperations() {
  std::vector<std::string_view> out;
  for (auto area : {SystemBindings, PoolBindings, EventBindings, MemoryBindings, WorldBindings,
                    ArchiveBindings, StateBindings, MindBindings})
    for (const Binding& b : area()) out.push_back(b.op);
  return out;
}

Router Api::MakeRouter() { return BindRoutes(this, svc_.config.ui); }

Router Api::BindRoutes(Api* api, bool ui) {
  Router r(&ApiQueries());
  for (const Operation& op : Operations()) {
    if (op.media == Media::kFile && !ui) continue;  // the inspector is off
    const Binding* b = BindingOf(op.name);
    if (!b) {  // a test keeps this from happening (every operation is bound)
      if (api) api->log_->error("http: operation {} has no handler", op.name);
      continue;
    }
    if (b->sse) {
      r.AddSse(op.method, op.path,
               [api, fn = b->sse](HttpRequest& req, std::shared_ptr<SseStream> stream) {
                 (api->*fn)(req, std::move(stream));
               });
      continue;
    }
    Handler handler = [api, fn = b->handler](HttpRequest& req, Responder respond) {
      (api->*fn)(req, std::move(respond));
    };
    if (op.access == Access::kPublic) {
      r.AddPublic(op.method, op.path, std::move(handler));
      continue;
    }
    SignedBy signed_by;
    if (b->signed_by)
      signed_by = [api, fn = b->signed_by](const HttpRequest& req) { return (api->*fn)(req); };
    r.Add(op.method, op.path, std::move(handler), std::move(signed_by));
  }
  return r;
}

// ---- the runtime itself -----------------------------------------------------

std::span<const Api::Binding> Api::SystemBindings() {
  static const Binding kBindings[] = {
      {"health", &Api::Health},
      {"promote", &Api::Promote},
      {"metrics", &Api::MetricsText},
      {"openapi", &Api::OpenApi},
  };
  return kBindings;
}

void Api::Health(HttpRequest&, Responder respond) {
  // 503 while writes fail (a full disk), until one gets through; the
  // archive's unreadable days degrade the status but not the answer code:
  // the loop itself works.
  const Status& health = svc_.engine.error().ok() ? svc_.engine.health() : svc_.engine.error();
  const auto& unreadable = svc_.archive.unreadable();
  json archive = {{"status", unreadable.empty() ? "ok" : "degraded"}};
  if (!unreadable.empty()) {
    json days = json::array();
    for (const auto& p : unreadable) days.push_back({{"date", p.date}, {"what", p.what}});
    archive["unreadable"] = std::move(days);
  }
  // Replication: a closed write gate (fenced, quorum without NATS) is a
  // 503 like a full disk; an async primary lagging past max_lag, or a
  // standby that cannot follow, is degraded.
  ReplicationHealth replication = svc_.replication();
  const Status& gate = replication.gate;
  const Status& lagging = replication.lagging;
  const bool ok = health.ok() && gate.ok();
  json out = {{"status", ok && lagging.ok() && unreadable.empty() ? "ok" : "degraded"},
              {"applied_seq", svc_.engine.applied_seq()},
              {"version", LIMBIC_VERSION},
              {"archive", std::move(archive)}};
  out["embedder"] = svc_.memory.embedder().id();
  if (!replication.report.is_null()) out["replication"] = std::move(replication.report);
  if (json sandbox = svc_.sandbox(); !sandbox.is_null()) out["sandbox"] = std::move(sandbox);
  if (!health.ok())
    out["reason"] = health.message();
  else if (!gate.ok())
    out["reason"] = gate.message();
  else if (!lagging.ok())
    out["reason"] = lagging.message();
  else if (!unreadable.empty())
    out["reason"] = "archive days cannot be read";
  respond(HttpResponse::Json(ok ? 200 : 503, out));
}

void Api::Promote(HttpRequest&, Responder respond) {
  svc_.promote([respond](Status s, json result) {
    if (!s.ok()) return respond(ErrorResponse(s));
    respond(HttpResponse::Json(200, result));
  });
}

void Api::MetricsText(HttpRequest&, Responder respond) {
  HttpResponse res;
  res.content_type = "text/plain; version=0.0.4";
  res.body = svc_.metrics.Render();
  respond(std::move(res));
}

void Api::OpenApi(HttpRequest&, Responder respond) {
  respond(HttpResponse::Json(200, OpenApiDocument()));
}

// ---- percepts, threads, attention, arousal, the outbox ----------------------

std::span<const Api::Binding> Api::PoolBindings() {
  static const Binding kBindings[] = {
      {"add_percept", &Api::AddPercept},
      {"add_percepts", &Api::AddPercepts},
      {"list_percepts", &Api::ListPercepts},
      {"get_percept", &Api::GetPercept},
      {"assign_percept", &Api::AssignPercept},
      {"process_percept", &Api::ProcessPercept},
      {"drop_percept", &Api::DropPercept},
      {"remove_percept", &Api::RemovePercept},
      {"create_thread", &Api::CreateThread},
      {"list_threads", &Api::ListThreads},
      {"get_thread", &Api::GetThread},
      {"update_thread", &Api::UpdateThread},
      {"delete_thread", &Api::DeleteThread},
      {"attention", &Api::GetAttention},
      {"get_arousal", &Api::GetArousal},
      {"set_arousal", &Api::SetArousal},
      {"put_arousal", &Api::SetArousal},
      {"enqueue_action", &Api::EnqueueAction},
      {"approve_action", &Api::ApproveAction},
      {"reject_action", &Api::RejectAction},
      {"retry_action", &Api::RetryAction},
      {"list_actions", &Api::ListActions},
      {"prune_actions", &Api::PruneActions},
      {"state_digest", &Api::StateDigest},
      {"get_action", &Api::GetAction},
  };
  return kBindings;
}

void Api::AddPercept(HttpRequest& req, Responder respond) {
  auto body = req.JsonBody();
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  Commit(req, state::BuildPerceptAdd(*body, svc_.engine.next_seq()), "percept_id", true, respond);
}

// Each percept is its own command, submitted back to back: the engine
// validates each alone (a refused one leaves the others be) and the log's
// group commit writes what is queued together with one write and fsync.
// The answer waits for the last to be durable.
void Api::AddPercepts(HttpRequest& req, Responder respond) {
  auto body = req.JsonBody();
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  if (!body->is_object() || body->size() != 1 || !body->contains("percepts") ||
      !(*body)["percepts"].is_array())
    return respond(ErrorResponse(Status::InvalidArgument("the body is {percepts: [...]}")));
  json& items = (*body)["percepts"];
  if (items.empty())
    return respond(ErrorResponse(Status::InvalidArgument("percepts: the list is empty")));
  if (items.size() > svc_.config.batch_limit)
    return respond(HttpResponse::Error(
        413, "batch_too_large",
        "percepts: " + std::to_string(items.size()) + " items, more than api.batch_limit (" +
            std::to_string(svc_.config.batch_limit) + ")"));
  auto actor = ActorOf(req);
  if (!actor.ok()) return respond(ErrorResponse(actor.status()));
  auto reason = ReasonOf(req);
  if (!reason.ok()) return respond(ErrorResponse(reason.status()));
  struct Batch {
    json results;
    size_t waiting = 1;  // the loop's own hold, let go after the last Submit
    size_t accepted = 0;
    Responder respond;
    void Done() {
      if (--waiting > 0) return;
      const size_t n = results.size();
      respond(HttpResponse::Json(
          200, {{"results", std::move(results)}, {"accepted", accepted}, {"refused", n - accepted}}));
    }
  };
  auto batch = std::make_shared<Batch>();
  batch->results = json::array();
  batch->respond = std::move(respond);
  auto refuse = [](const Status& s, size_t i) {
    return json{{"error",
                 {{"code", Status::CodeName(s.code())},
                  {"message", "percepts[" + std::to_string(i) + "]: " + s.message()}}},
                {"status", HttpStatusFor(s)}};
  };
  for (size_t i = 0; i < items.size(); ++i) {
    batch->results.push_back(nullptr);
    Status s = items[i].is_object() ? Status::OK() : Status::InvalidArgument("not an object");
    if (s.ok()) {
      ++batch->waiting;
      s = SubmitCommand(svc_.engine, state::BuildPerceptAdd(items[i], svc_.engine.next_seq()),
                        {*actor, &svc_.config.effectors, false, *reason},
                        [batch, i, refuse](const Status& st, std::span<const Event> done) {
                          if (st.ok()) {
                            batch->results[i] = {{"id", done.front().Str("percept_id")},
                                                 {"seq", done.front().seq}};
                            ++batch->accepted;
                          } else {
                            batch->results[i] = refuse(st, i);
                          }
                          batch->Done();
                        });
      if (!s.ok()) --batch->waiting;  // refused at once: no answer will come
    }
    if (!s.ok()) batch->results[i] = refuse(s, i);
  }
  batch->Done();
}

void Api::ListPercepts(HttpRequest& req, Responder respond) {
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
  TimeMs now = svc_.engine.clock().Now();
  auto percepts = svc_.engine.projection().QueryPercepts(q, now);
  if (!percepts.ok()) return respond(ErrorResponse(percepts.status()));
  json out = json::array();
  for (const json& p : *percepts)
    out.push_back(state::PerceptWithRecency(p, now, svc_.config.recency));
  respond(HttpResponse::Json(200, {{"percepts", std::move(out)}}));
}

void Api::GetPercept(HttpRequest& req, Responder respond) {
  auto p = svc_.engine.projection().Get(state::Pool::kPercepts, Param(req, "id"));
  if (!p.ok()) return respond(ErrorResponse(p.status()));
  if (!p->has_value())
    return respond(ErrorResponse(Status::NotFound("percept " + Param(req, "id") + " not found")));
  respond(HttpResponse::Json(
      200, state::PerceptWithRecency(**p, svc_.engine.clock().Now(), svc_.config.recency)));
}

void Api::AssignPercept(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  Commit(req, state::BuildPerceptAssign(Param(req, "id"), *body), "percept_id", false, respond);
}

void Api::ProcessPercept(HttpRequest& req, Responder respond) {
  // {reason?}; a body, when sent, must be a JSON object.
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  Commit(req, state::BuildPerceptProcess(Param(req, "id"), *body), "percept_id", false, respond);
}

void Api::DropPercept(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  Commit(req, state::BuildPerceptDrop(Param(req, "id"), *body), "percept_id", false, respond);
}

void Api::RemovePercept(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  Commit(req, state::BuildPerceptRemove(Param(req, "id"), *body), "percept_id", false, respond);
}

void Api::CreateThread(HttpRequest& req, Responder respond) {
  auto body = req.JsonBody();
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  Commit(req, state::BuildThreadCreate(*body, svc_.engine.next_seq()), "thread_id", true,
         respond);
}

void Api::ListThreads(HttpRequest& req, Responder respond) {
  std::optional<std::string> status = Query(req, "status");
  if (!status) status = "active";
  if (*status == "all") status.reset();
  auto limit = QueryCount(req, "limit", std::numeric_limits<size_t>::max(),
                          std::numeric_limits<size_t>::max());
  if (!limit.ok()) return respond(ErrorResponse(limit.status()));
  auto threads = state::ThreadsBySalience(svc_.engine.projection(), status,
                                          svc_.engine.clock().Now(), svc_.config.recency);
  if (!threads.ok()) return respond(ErrorResponse(threads.status()));
  if (threads->size() > *limit) threads->erase(threads->begin() + *limit, threads->end());
  respond(HttpResponse::Json(200, {{"threads", std::move(*threads)}}));
}

void Api::GetThread(HttpRequest& req, Responder respond) {
  const std::string& id = Param(req, "id");
  auto t = svc_.engine.projection().Get(state::Pool::kThreads, id);
  if (!t.ok()) return respond(ErrorResponse(t.status()));
  if (!t->has_value())
    return respond(ErrorResponse(Status::NotFound("thread " + id + " not found")));
  auto n = svc_.engine.projection().CountUnprocessed(id);
  if (!n.ok()) return respond(ErrorResponse(n.status()));
  respond(HttpResponse::Json(
      200, state::ThreadWithRecency(**t, *n, svc_.engine.clock().Now(), svc_.config.recency)));
}

void Api::UpdateThread(HttpRequest& req, Responder respond) {
  auto body = req.JsonBody();
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  Commit(req, state::BuildThreadUpdate(Param(req, "id"), *body), "thread_id", false, respond);
}

void Api::DeleteThread(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  Commit(req, state::BuildThreadDelete(Param(req, "id"), *body), "thread_id", false, respond);
}

void Api::GetAttention(HttpRequest&, Responder respond) {
  auto a = Attention();
  if (!a.ok()) return respond(ErrorResponse(a.status()));
  respond(HttpResponse::Json(200, *a));
}

void Api::GetArousal(HttpRequest&, Responder respond) {
  auto a = svc_.engine.projection().GetArousal();
  if (!a.ok()) return respond(ErrorResponse(a.status()));
  json out = *a;
  out["effective"] = svc_.effective_arousal();
  respond(HttpResponse::Json(200, out));
}

void Api::SetArousal(HttpRequest& req, Responder respond) {
  auto body = req.JsonBody();
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  Commit(req, state::BuildArousalSet(*body), nullptr, false, respond);
}

void Api::EnqueueAction(HttpRequest& req, Responder respond) {
  auto body = req.JsonBody();
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  Commit(req, state::BuildActionEnqueue(*body, svc_.engine.next_seq()), "action_id", true,
         respond);
}

// A pending_approval action goes on to delivery, or never goes.
void Api::DecideAction(HttpRequest& req, Responder respond, bool approve) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  const std::string& id = Param(req, "id");
  Commit(req,
         approve ? state::BuildActionApprove(id, *body) : state::BuildActionReject(id, *body),
         "action_id", false, respond);
}
void Api::ApproveAction(HttpRequest& req, Responder respond) { DecideAction(req, respond, true); }
void Api::RejectAction(HttpRequest& req, Responder respond) { DecideAction(req, respond, false); }

// A dead action is sent again (a human decided its cause is mended).
void Api::RetryAction(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  Commit(req, state::BuildActionRetry(Param(req, "id"), *body), "action_id", false, respond);
}

void Api::ListActions(HttpRequest& req, Responder respond) {
  auto actions = svc_.engine.projection().ListActions(Query(req, "status"));
  if (!actions.ok()) return respond(ErrorResponse(actions.status()));
  respond(HttpResponse::Json(200, {{"actions", *actions}}));
}

void Api::PruneActions(HttpRequest& req, Responder respond) {
  // {"older_than": "24h"}: complete and dead actions last updated before
  // now - older_than (default: outbox.retention) leave the pool.
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  TimeMs older_than = svc_.config.outbox.retention;
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
  Commit(req,
         state::BuildActionsPrune(svc_.engine.projection(), older_than, svc_.engine.clock().Now()),
         nullptr, false, respond);
}

void Api::StateDigest(HttpRequest&, Responder respond) {
  // Of the applied state; compare with `limbic replay --verify`.
  auto digest = svc_.engine.projection().Digest();
  if (!digest.ok()) return respond(ErrorResponse(digest.status()));
  respond(HttpResponse::Json(200, {{"applied_seq", svc_.engine.applied_seq()}, {"digest", *digest}}));
}

void Api::GetAction(HttpRequest& req, Responder respond) {
  const std::string& id = Param(req, "id");
  auto a = svc_.engine.projection().Get(state::Pool::kActions, id);
  if (!a.ok()) return respond(ErrorResponse(a.status()));
  if (!a->has_value())
    return respond(ErrorResponse(Status::NotFound("action " + id + " not found")));
  respond(HttpResponse::Json(200, **a));
}

Result<json> Api::Attention() {
  const Config& c = svc_.config;
  return BuildAttention(svc_.engine.projection(), svc_.engine.clock().Now(),
                        {c.recency, c.attention_threshold, c.attention_limit},
                        svc_.effective_arousal());
}

std::unique_ptr<Routes> MakeApi(Runtime& runtime, std::shared_ptr<spdlog::logger> log) {
  return std::make_unique<Api>(ApiServicesOf(runtime), std::move(log));
}

}  // namespace limbic::runtime
