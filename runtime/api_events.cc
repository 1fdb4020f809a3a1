// Routes for events (long-poll, SSE), reflex rules and webhook sensors.
#include <charconv>

#include "reflexes/rule.h"
#include "runtime/api.h"
#include "runtime/runtime.h"
#include "sensors/builtin.h"

namespace limbic::runtime {

using nlohmann::json;
using state::Event;
using state::EventType;

namespace {

std::optional<std::string> Query(const HttpRequest& req, const std::string& key) {
  auto it = req.query.find(key);
  if (it == req.query.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

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

const std::string& Param(const HttpRequest& req, const std::string& key) {
  static const std::string kEmpty;
  auto it = req.params.find(key);
  return it == req.params.end() ? kEmpty : it->second;
}

json EventsBody(const std::vector<EventHub::Item>& items, uint64_t last_seq) {
  // The items are already encoded: splice them instead of re-serialising.
  std::string body = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) body += ',';
    body += items[i].line;
  }
  body += "]";
  return {{"events", json::parse(body, nullptr, false)}, {"last_seq", last_seq}};
}

}  // namespace

void Api::AddEventRoutes(Router& r) {
  r.Add("GET", "/v1/events", [this](HttpRequest& req, Responder respond) {
    auto after = QueryNumber(req, "after", 0);
    auto limit = QueryNumber(req, "limit", 100);
    auto wait = QueryNumber(req, "wait", 0);
    auto types = QueryTypes(req);
    for (const Status& s : {after.status(), limit.status(), wait.status(), types.status()})
      if (!s.ok()) return respond(ErrorResponse(s));
    size_t n = std::min<uint64_t>(std::max<uint64_t>(*limit, 1), 10000);
    auto answer = [this, after = *after, n, types = *types, respond]() {
      auto items = rt_.hub().Read(after, n, types);
      if (!items.ok()) return respond(ErrorResponse(items.status()));
      respond(HttpResponse::Json(200, EventsBody(*items, rt_.hub().last_seq())));
    };
    if (*wait == 0) return answer();
    rt_.hub().Wait(*after, static_cast<int64_t>(std::min<uint64_t>(*wait, 60)) * 1000, answer);
  });

  r.AddSse("GET", "/v1/events/stream", [this](HttpRequest& req, std::shared_ptr<SseStream> stream) {
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
    if (!q.ok() || !types.ok()) {
      stream->Send("error", "", (q.ok() ? types.status() : q.status()).message());
      return stream->Close();
    }
    Status s = rt_.hub().Subscribe(after, *types, [stream](const EventHub::Item& item) {
      return stream->Send(state::EventTypeName(item.type), std::to_string(item.seq), item.line);
    });
    if (!s.ok()) {
      stream->Send("error", "", s.message());
      stream->Close();
    }
  });
}

void Api::AddReflexRoutes(Router& r) {
  r.Add("GET", "/v1/reflexes", [this](HttpRequest&, Responder respond) {
    json out = json::array();
    Status s = rt_.engine().projection().ForEach(state::Pool::kReflexes,
                                                 [&](std::string_view, const json& rec) {
                                                   out.push_back(rec);
                                                   return true;
                                                 });
    if (!s.ok()) return respond(ErrorResponse(s));
    respond(HttpResponse::Json(200, {{"reflexes", std::move(out)}}));
  });
  r.Add("GET", "/v1/reflexes/{id}", [this](HttpRequest& req, Responder respond) {
    const std::string& id = Param(req, "id");
    auto rec = rt_.engine().projection().Get(state::Pool::kReflexes, id);
    if (!rec.ok()) return respond(ErrorResponse(rec.status()));
    if (!rec->has_value()) return respond(ErrorResponse(Status::NotFound("reflex " + id + " not found")));
    respond(HttpResponse::Json(200, **rec));
  });
  r.Add("PUT", "/v1/reflexes/{id}", [this](HttpRequest& req, Responder respond) {
    const std::string& id = Param(req, "id");
    auto body = req.JsonBody();
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    if (!body->is_object())
      return respond(ErrorResponse(Status::InvalidArgument("a rule must be a JSON object")));
    if (body->contains("id") && (*body)["id"] != id)
      return respond(ErrorResponse(Status::InvalidArgument(
          "field \"id\": " + (*body)["id"].dump() + " does not match the path's \"" + id + "\"")));
    (*body)["id"] = id;
    reflexes::RuleContext ctx;
    for (const auto& name : rt_.effector_names()) ctx.effectors.insert(name);
    auto rule = reflexes::ParseRule(*body, ctx);
    if (!rule.ok()) return respond(ErrorResponse(rule.status()));
    Commit(state::Events{Event{0, 0, EventType::kReflexPut,
                               {{"reflex_id", id}, {"rule", rule->source_json}}}},
           "reflex_id", false, respond);
  });
  r.Add("DELETE", "/v1/reflexes/{id}", [this](HttpRequest& req, Responder respond) {
    const std::string& id = Param(req, "id");
    if (!state::IsValidId(id)) return respond(ErrorResponse(state::CheckId("reflex id", id)));
    Commit(state::Events{Event{0, 0, EventType::kReflexDeleted, {{"reflex_id", id}}}}, "reflex_id",
           false, respond);
  });
  for (bool enable : {true, false}) {
    r.Add("POST", std::string("/v1/reflexes/{id}/") + (enable ? "enable" : "disable"),
          [this, enable](HttpRequest& req, Responder respond) {
            const std::string& id = Param(req, "id");
            if (!state::IsValidId(id)) return respond(ErrorResponse(state::CheckId("reflex id", id)));
            Commit(state::Events{Event{0, 0, EventType::kReflexEnabled,
                                       {{"reflex_id", id}, {"enabled", enable}}}},
                   "reflex_id", false, respond);
          });
  }
}

void Api::AddSensorRoutes(Router& r) {
  r.Add("POST", "/v1/sensors/{name}", [this](HttpRequest& req, Responder respond) {
    const std::string& name = Param(req, "name");
    sensors::Sensor* sensor = rt_.sensor(name);
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
    http->Enqueue(std::move(request).value(),
                  [respond](const Status& s, std::span<const Event> done) {
                    if (!s.ok()) return respond(ErrorResponse(s));
                    respond(HttpResponse::Json(202, CommitReceipt(done, "percept_id")));
                  });
  });
}

}  // namespace limbic::runtime
