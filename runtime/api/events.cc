// Handlers for events (long-poll, SSE), reflex rules and webhook sensors
// (operations_events.cc).
#include <charconv>
#include <limits>

#include "base/json.h"
#include "reflexes/rule.h"
#include "runtime/api/api.h"
#include "runtime/archive_service.h"
#include "runtime/config.h"
#include "runtime/event_hub.h"
#include "state/engine.h"
#include "sensors/builtin.h"
#include "state/why.h"

namespace limbic::runtime {

using nlohmann::json;
using state::Event;
using state::EventType;

namespace {

Result<uint64_t> QueryNumber(const HttpRequest& req, const std::string& key, uint64_t dflt) {
  auto v = Query(req, key);
  if (!v) return dflt;
  uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || ptr != v->data() + v->size())
    return Status::InvalidArgument("query " + key + ": must be a non-negative integer, got \"" +
                                   *v + "\"");
  return n;
}

// ?type=a,b&type=c -> [a, b, c], each checked.
Result<EventHub::Types> QueryTypes(const HttpRequest& req) {
  EventHub::Types types;
  auto v = Query(req, "type");
  if (!v) return types;
  size_t start = 0;
  while (start <= v->size()) {
    size_t comma = v->find(',', start);
    std::string name = v->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!name.empty()) {
      auto t = state::ParseEventType(name);
      if (!t) return Status::InvalidArgument("query type: unknown event type \"" + name + "\"");
      types.push_back(*t);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return types;
}

// Events a request looks at per answer when it filters by actor, id or
// time (each is parsed to check): a filter that matches little pages
// through the log, the client going on from "scanned_to".
constexpr uint64_t kMaxFilterScan = 100000;

// ?actor=&id=&since=&until= as a test on an event's line; nullptr when
// none is given. The substring tests are a prefilter: the parsed event
// decides (a percept's text may quote an actor or an id).
Result<EventHub::Keep> QueryFilter(const HttpRequest& req) {
  auto actor = Query(req, "actor");
  auto id = Query(req, "id");
  std::optional<TimeMs> since, until;
  for (const char* key : {"since", "until"}) {
    auto v = Query(req, key);
    if (!v) continue;
    auto t = ParseTime(*v);
    if (!t.ok()) return t.status().WithContext(std::string("query ") + key);
    (std::string_view(key) == "since" ? since : until) = *t;
  }
  if (!actor && !id && !since && !until) return EventHub::Keep();
  // As the log writes them (the values are valid UTF-8: Dispatch checked).
  const std::string actor_text = actor ? CompactJson(json(*actor)) : "";
  const std::string id_text = id ? CompactJson(json(*id)) : "";
  return EventHub::Keep([=](const EventHub::Item& item) {
    if (actor && item.line.find(actor_text) == std::string::npos) return false;
    if (id && item.line.find(id_text) == std::string::npos) return false;
    json e = json::parse(item.line, nullptr, false);
    if (!e.is_object()) return false;
    if (actor && e.value("actor", std::string()) != *actor) return false;
    if (since || until) {
      TimeMs ts = TimeOrZero(e.value("ts", std::string()));
      if ((since && ts < *since) || (until && ts > *until)) return false;
    }
    if (id) {
      // Named in a field: as its value, or in a list of ids.
      bool named = false;
      for (const auto& [key, v] : e.items()) {
        if (key == "seq" || key == "ts" || key == "type") continue;
        if (v.is_string() && v.get_ref<const std::string&>() == *id) named = true;
        if (v.is_array())
          for (const json& x : v)
            if (x.is_string() && x.get_ref<const std::string&>() == *id) named = true;
        if (named) break;
      }
      if (!named) return false;
    }
    return true;
  });
}

// {"events": [...], "last_seq": N, "scanned_to": S}. The items are already
// encoded: they are spliced into the body, not parsed and serialised again.
HttpResponse EventsResponse(const std::vector<EventHub::Item>& items, uint64_t last_seq,
                            uint64_t scanned_to) {
  HttpResponse res;
  res.status = 200;
  std::string& body = res.body;
  body = "{\"events\":[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) body += ',';
    body += items[i].line;
  }
  body += "],\"last_seq\":" + std::to_string(last_seq) +
          ",\"scanned_to\":" + std::to_string(scanned_to) + "}";
  return res;
}

}  // namespace

std::span<const Api::Binding> Api::EventBindings() {
  static const Binding kBindings[] = {
      {"why", &Api::Why},
      {"events_since", &Api::EventsSince},
      {"event_stream", nullptr, &Api::EventStream},
      {"list_reflexes", &Api::ListReflexes},
      {"get_reflex", &Api::GetReflex},
      {"put_reflex", &Api::PutReflex},
      {"delete_reflex", &Api::DeleteReflex},
      {"enable_reflex", &Api::EnableReflex},
      {"disable_reflex", &Api::DisableReflex},
      {"sensor_webhook", &Api::SensorWebhook, nullptr, &Api::SensorSigns},
  };
  return kBindings;
}

void Api::Why(HttpRequest& req, Responder respond) {
  // Two reads of the log: on the archive's worker, off the io thread.
  svc_.archive.Run([dir = state::EventsDirPath(svc_.config.state_dir), id = Param(req, "id")](
                       archive::ArchiveStore&) { return state::Why(dir, id); },
                   [respond](Result<json> why) {
                     if (!why.ok()) return respond(ErrorResponse(why.status()));
                     respond(HttpResponse::Json(200, *why));
                   });
}

void Api::EventsSince(HttpRequest& req, Responder respond) {
  auto after = QueryNumber(req, "after", 0);
  auto limit = QueryNumber(req, "limit", 100);
  auto wait = QueryNumber(req, "wait", 0);
  auto types = QueryTypes(req);
  auto keep = QueryFilter(req);
  for (const Status& s :
       {after.status(), limit.status(), wait.status(), types.status(), keep.status()})
    if (!s.ok()) return respond(ErrorResponse(s));
  size_t n = std::min<uint64_t>(std::max<uint64_t>(*limit, 1), 10000);
  const int64_t wait_ms = static_cast<int64_t>(std::min<uint64_t>(*wait, 60)) * 1000;
  const TimeMs deadline = svc_.engine.clock().Now() + wait_ms;
  // Answers when there are matching events, or at the deadline; events of
  // other types only move the point to wait from.
  auto poll = std::make_shared<std::function<void(uint64_t)>>();
  *poll = [this, after = *after, n, types = *types, keep = *keep, respond, deadline, wait_ms,
           weak = std::weak_ptr<std::function<void(uint64_t)>>(poll)](uint64_t seen) {
    uint64_t scanned_to = 0;
    auto items =
        svc_.hub.Read(after, n, types, keep,
                      keep ? kMaxFilterScan : std::numeric_limits<uint64_t>::max(), &scanned_to);
    if (!items.ok()) return respond(ErrorResponse(items.status()));
    TimeMs left = deadline - svc_.engine.clock().Now();
    uint64_t last = svc_.hub.last_seq();
    if (!items->empty() || wait_ms == 0 || left <= 0 || last <= seen || scanned_to < last)
      return respond(EventsResponse(*items, last, scanned_to));
    auto again = weak.lock();
    if (!again) return respond(EventsResponse(*items, last, scanned_to));
    svc_.hub.Wait(last, left, [again, last] { (*again)(last); });
  };
  if (*wait == 0) return (*poll)(0);
  // The first wait holds the only strong reference; each later one the next.
  svc_.hub.Wait(*after, wait_ms, [poll, a = *after] { (*poll)(a); });
}

void Api::EventStream(HttpRequest& req, std::shared_ptr<SseStream> stream) {
  // Resume from ?after=, else from the Last-Event-ID a reconnecting client sends.
  uint64_t after = 0;
  auto q = QueryNumber(req, "after", 0);
  std::string last_id = req.Header("Last-Event-ID");
  if (q.ok()) after = *q;
  if (!Query(req, "after") && !last_id.empty()) {
    uint64_t n = 0;
    auto [ptr, ec] = std::from_chars(last_id.data(), last_id.data() + last_id.size(), n);
    if (ec == std::errc()) after = n;
  }
  auto types = QueryTypes(req);
  for (const Status& bad : {q.status(), types.status()}) {
    if (bad.ok()) continue;
    HttpResponse err = ErrorResponse(bad);
    return stream->Reject(err.status, std::string(Status::CodeName(bad.code())), bad.message());
  }
  // The backlog is read a page at a time as the client drains it; live
  // events follow without a gap (event_hub.h).
  EventHub& hub = svc_.hub;
  auto id = hub.Subscribe(after, *types, [stream](const EventHub::Item& item) {
    if (!stream->Send(state::EventTypeName(item.type), std::to_string(item.seq), item.line))
      return EventHub::Take::kStop;
    return stream->backlogged() ? EventHub::Take::kPause : EventHub::Take::kMore;
  });
  if (!id.ok()) {
    HttpResponse err = ErrorResponse(id.status());
    stream->Reject(err.status, std::string(Status::CodeName(id.status().code())),
                   id.status().message());
    stream->Close();  // when events were already streamed, Reject cannot answer
    return;
  }
  std::weak_ptr<void> alive = hub.alive();
  std::weak_ptr<SseStream> weak = stream;  // the stream holds this callback
  stream->OnDrained([log = log_, &hub, alive, id = *id, weak] {
    if (alive.expired()) return;
    Status s = hub.Resume(id);
    if (s.ok()) return;
    log->error("http: event stream: cannot read the backlog: {}", s.message());
    if (auto stream = weak.lock()) stream->Close();
  });
  stream->OnClosed([&hub, alive, id = *id] {
    if (!alive.expired()) hub.Unsubscribe(id);
  });
}

void Api::ListReflexes(HttpRequest&, Responder respond) {
  json out = json::array();
  Status s = svc_.engine.projection().ForEach(state::Pool::kReflexes,
                                              [&](std::string_view, const json& rec) {
                                                out.push_back(rec);
                                                return true;
                                              });
  if (!s.ok()) return respond(ErrorResponse(s));
  respond(HttpResponse::Json(200, {{"reflexes", std::move(out)}}));
}

void Api::GetReflex(HttpRequest& req, Responder respond) {
  const std::string& id = Param(req, "id");
  auto rec = svc_.engine.projection().Get(state::Pool::kReflexes, id);
  if (!rec.ok()) return respond(ErrorResponse(rec.status()));
  if (!rec->has_value())
    return respond(ErrorResponse(Status::NotFound("reflex " + id + " not found")));
  respond(HttpResponse::Json(200, **rec));
}

void Api::PutReflex(HttpRequest& req, Responder respond) {
  const std::string& id = Param(req, "id");
  if (!state::IsValidId(id)) return respond(ErrorResponse(state::CheckId("reflex id", id)));
  auto body = req.JsonBody();
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  if (!body->is_object())
    return respond(ErrorResponse(Status::InvalidArgument("a rule must be a JSON object")));
  if (body->contains("id") && (*body)["id"] != id)
    return respond(ErrorResponse(Status::InvalidArgument(
        "field \"id\": " + (*body)["id"].dump() + " does not match the path's \"" + id + "\"")));
  (*body)["id"] = id;
  auto rule = reflexes::ParseRule(*body, svc_.rule_context());
  if (!rule.ok()) return respond(ErrorResponse(rule.status()));
  // ?dry_run=true: checked exactly as a save would be, and not saved.
  if (QueryFlag(req, "dry_run"))
    return respond(HttpResponse::Json(200, {{"valid", true}, {"rule", rule->source_json}}));
  Commit(req,
         state::Events{Event{0,
                             0,
                             EventType::kReflexPut,
                             {{"reflex_id", id}, {"rule", rule->source_json}, {"origin", "api"}}}},
         "reflex_id", false, respond);
}

void Api::DeleteReflex(HttpRequest& req, Responder respond) {
  const std::string& id = Param(req, "id");
  if (auto body = Body(req); !body.ok()) return respond(ErrorResponse(body.status()));
  if (!state::IsValidId(id)) return respond(ErrorResponse(state::CheckId("reflex id", id)));
  Commit(req, state::Events{Event{0, 0, EventType::kReflexDeleted, {{"reflex_id", id}}}},
         "reflex_id", false, respond);
}

void Api::EnableReflexAs(HttpRequest& req, Responder respond, bool enable) {
  const std::string& id = Param(req, "id");
  if (auto body = Body(req); !body.ok()) return respond(ErrorResponse(body.status()));
  if (!state::IsValidId(id)) return respond(ErrorResponse(state::CheckId("reflex id", id)));
  Commit(req,
         state::Events{
             Event{0, 0, EventType::kReflexEnabled, {{"reflex_id", id}, {"enabled", enable}}}},
         "reflex_id", false, respond);
}
void Api::EnableReflex(HttpRequest& req, Responder respond) { EnableReflexAs(req, respond, true); }
void Api::DisableReflex(HttpRequest& req, Responder respond) {
  EnableReflexAs(req, respond, false);
}

void Api::SensorWebhook(HttpRequest& req, Responder respond) {
  const std::string& name = Param(req, "name");
  sensors::Sensor* sensor = svc_.sensor(name);
  if (!sensor) return respond(ErrorResponse(Status::NotFound("no sensor named \"" + name + "\"")));
  auto* http = dynamic_cast<sensors::HttpSensor*>(sensor);
  if (!http)
    return respond(ErrorResponse(Status::InvalidArgument(
        "sensor \"" + name + "\" (" + sensor->kind() + ") does not take HTTP requests")));
  Result<json> request = http->MapRequest(
      {req.body, [&req](const std::string& header) { return req.Header(header); }});
  if (!request.ok() && request.status().IsFailedPrecondition())
    return respond(HttpResponse::Error(401, "unauthorized", request.status().message()));
  if (!request.ok()) return respond(ErrorResponse(request.status()));
  // Waits in the sensor's bounded queue; 503 when the overflow policy drops it.
  http->Enqueue(std::move(request).value(), [respond](const Status& s, std::span<const Event> done) {
    if (!s.ok()) return respond(ErrorResponse(s));
    respond(HttpResponse::Json(202, CommitReceipt(done, "percept_id")));
  });
}

// A sensor that checks a signature of its own (github) is reached without
// the token, whatever Host the sender used (docs/api.md).
bool Api::SensorSigns(const HttpRequest& req) {
  auto* http = dynamic_cast<sensors::HttpSensor*>(svc_.sensor(Param(req, "name")));
  return http && http->signs_requests();
}

}  // namespace limbic::runtime
