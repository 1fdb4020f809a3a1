// Routes for the world model (docs/api.md "World", docs/world.md). Each one
// is one WorldModel call run on the world service's worker, so the HTTP
// API and `limbic memory extract|entities|graph|surprise|consolidate`
// answer with the same JSON.
#include "runtime/api/api.h"
#include "runtime/runtime.h"
#include "runtime/world_service.h"
#include "world/day_input.h"

namespace limbic::runtime {

using nlohmann::json;

namespace {

// POST /v1/world/extract's body: {date?, force?} for a day of the state
// dir, or {text, date, source?, force?} for a daily log sent whole.
Result<world::ExtractInput> ExtractRequest(const json& body, const std::string& state_dir,
                                           const std::string& today, bool* force) {
  for (auto it = body.begin(); it != body.end(); ++it) {
    const std::string& k = it.key();
    if (k != "date" && k != "text" && k != "source" && k != "force")
      return Status::InvalidArgument("unknown field \"" + k + "\" (known: date, text, source, force)");
    if (k == "force" ? !it->is_boolean() : !it->is_string())
      return Status::InvalidArgument("field \"" + k + "\": must be " + (k == "force" ? "true or false" : "a string"));
  }
  *force = body.value("force", false);
  std::string date = body.value("date", "");
  if (!date.empty() && !IsValidDate(date))
    return Status::InvalidArgument("field \"date\": \"" + date + "\" is not a date (YYYY-MM-DD)");
  if (!body.contains("text")) {
    if (body.contains("source")) return Status::InvalidArgument("field \"source\": only with \"text\"");
    return world::DayInput(state_dir, date.empty() ? today : date);
  }
  if (date.empty()) return Status::InvalidArgument("field \"date\": required with \"text\"");
  world::ExtractInput input;
  input.date = date;
  input.source = "api:" + body.value("source", date);
  input.text = body["text"].get<std::string>();
  return input;
}

}  // namespace

void Api::AddWorldRoutes(Router& r) {
  r.Add("POST", "/v1/world/extract", [this](HttpRequest& req, Responder respond) {
    auto body = Body(req);
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    if (!body->is_object()) return respond(ErrorResponse(Status::InvalidArgument("the body must be a JSON object")));
    std::string today = FormatDate(rt_.engine().clock().Now());
    std::string state_dir = rt_.config().state_dir;
    // The day's input is read on the worker too: it reads the log.
    rt_.world().Run(
        [body = *body, state_dir, today](world::WorldModel& w) -> Result<json> {
          bool force = false;
          auto input = ExtractRequest(body, state_dir, today, &force);
          if (!input.ok()) return input.status();
          return w.Extract(*input, force);
        },
        AnswerJson(respond));
  });
  r.Add("POST", "/v1/world/consolidate", [this](HttpRequest& req, Responder respond) {
    auto body = Body(req);
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    if (!body->is_object() || !body->empty())
      return respond(ErrorResponse(Status::InvalidArgument("this route takes no fields: send {}")));
    std::string today = FormatDate(rt_.engine().clock().Now());
    rt_.world().Run([today](world::WorldModel& w) { return w.Consolidate(today); }, AnswerJson(respond));
  });
  r.Add("GET", "/v1/world/memory", [this](HttpRequest&, Responder respond) {
    rt_.world().Run([](world::WorldModel& w) { return w.MemoryMd(); }, AnswerJson(respond));
  });
  r.Add("GET", "/v1/world/entities", [this](HttpRequest& req, Responder respond) {
    std::optional<world::EntityType> type;
    if (auto t = Query(req, "type")) {
      auto parsed = world::ParseType(*t);
      if (!parsed.ok()) return respond(ErrorResponse(parsed.status().WithContext("query type")));
      type = *parsed;
    }
    std::string stale = Query(req, "stale").value_or("false");
    if (stale != "true" && stale != "false")
      return respond(ErrorResponse(Status::InvalidArgument("query stale: must be true or false")));
    std::string today = FormatDate(rt_.engine().clock().Now());
    rt_.world().Run([type, stale = stale == "true", today](
                        world::WorldModel& w) { return w.Entities(type, stale, today); },
                    AnswerJson(respond));
  });
  // The name goes in the query: entity names hold '/' (owner/repo).
  r.Add("GET", "/v1/world/entity", [this](HttpRequest& req, Responder respond) {
    auto name = Query(req, "name");
    if (!name) return respond(ErrorResponse(Status::InvalidArgument("query name: the entity is required")));
    rt_.world().Run([name = *name](world::WorldModel& w) { return w.Page(name); }, AnswerJson(respond));
  });
  r.Add("GET", "/v1/world/graph/neighbors", [this](HttpRequest& req, Responder respond) {
    auto name = Query(req, "name");
    if (!name) return respond(ErrorResponse(Status::InvalidArgument("query name: the entity is required")));
    auto hops = QueryCount(req, "hops", 1, 5);
    if (!hops.ok()) return respond(ErrorResponse(hops.status()));
    rt_.world().Run([name = *name, hops = static_cast<int>(*hops)](
                        world::WorldModel& w) { return w.Neighbors(name, hops); },
                    AnswerJson(respond));
  });
  r.Add("GET", "/v1/world/graph/path", [this](HttpRequest& req, Responder respond) {
    auto from = Query(req, "from"), to = Query(req, "to");
    if (!from || !to)
      return respond(ErrorResponse(Status::InvalidArgument("query from and to: both entities are required")));
    rt_.world().Run([from = *from, to = *to](world::WorldModel& w) { return w.Path(from, to); },
                    AnswerJson(respond));
  });
  r.Add("GET", "/v1/world/surprise", [this](HttpRequest& req, Responder respond) {
    rt_.world().Run([date = Query(req, "date").value_or("")](world::WorldModel& w) { return w.Surprise(date); },
                    AnswerJson(respond));
  });
}

}  // namespace limbic::runtime
