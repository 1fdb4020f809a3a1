// Routes for the world model (docs/api.md "World", docs/world.md). Each one
// is one WorldModel call run on the world service's worker, so the HTTP
// API and `limbic memory extract|entities|graph|surprise|consolidate`
// answer with the same JSON.
#include "runtime/api/api.h"
#include "runtime/config.h"
#include "state/engine.h"
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

std::span<const Api::Binding> Api::WorldBindings() {
  static const Binding kBindings[] = {
      {"world_extract", &Api::WorldExtract},
      {"world_consolidate", &Api::WorldConsolidate},
      {"world_memory", &Api::WorldMemory},
      {"world_entities", &Api::WorldEntities},
      {"world_entity", &Api::WorldEntity},
      {"world_neighbors", &Api::WorldNeighbors},
      {"world_path", &Api::WorldPath},
      {"world_surprise", &Api::WorldSurprise},
  };
  return kBindings;
}

void Api::WorldExtract(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  if (!body->is_object()) return respond(ErrorResponse(Status::InvalidArgument("the body must be a JSON object")));
  std::string today = FormatDate(svc_.engine.clock().Now());
  std::string state_dir = svc_.config.state_dir;
  // The day's input is read on the worker too: it reads the log.
  svc_.world.Run(
      [body = *body, state_dir, today](world::WorldModel& w) -> Result<json> {
        bool force = false;
        auto input = ExtractRequest(body, state_dir, today, &force);
        if (!input.ok()) return input.status();
        return w.Extract(*input, force);
      },
      AnswerJson(respond));
}

void Api::WorldConsolidate(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  if (!body->is_object() || !body->empty())
    return respond(ErrorResponse(Status::InvalidArgument("this route takes no fields: send {}")));
  std::string today = FormatDate(svc_.engine.clock().Now());
  svc_.world.Run([today](world::WorldModel& w) { return w.Consolidate(today); }, AnswerJson(respond));
}

void Api::WorldMemory(HttpRequest&, Responder respond) {
  svc_.world.Run([](world::WorldModel& w) { return w.MemoryMd(); }, AnswerJson(respond));
}

void Api::WorldEntities(HttpRequest& req, Responder respond) {
  std::optional<world::EntityType> type;
  if (auto t = Query(req, "type")) {
    auto parsed = world::ParseType(*t);
    if (!parsed.ok()) return respond(ErrorResponse(parsed.status().WithContext("query type")));
    type = *parsed;
  }
  const bool stale = QueryFlag(req, "stale");
  std::string today = FormatDate(svc_.engine.clock().Now());
  svc_.world.Run([type, stale, today](
                      world::WorldModel& w) { return w.Entities(type, stale, today); },
                  AnswerJson(respond));
}

// The name goes in the query: entity names hold '/' (owner/repo).
void Api::WorldEntity(HttpRequest& req, Responder respond) {
  auto name = Query(req, "name");
  if (!name) return respond(ErrorResponse(Status::InvalidArgument("query name: the entity is required")));
  svc_.world.Run([name = *name](world::WorldModel& w) { return w.Page(name); }, AnswerJson(respond));
}

void Api::WorldNeighbors(HttpRequest& req, Responder respond) {
  auto name = Query(req, "name");
  if (!name) return respond(ErrorResponse(Status::InvalidArgument("query name: the entity is required")));
  auto hops = QueryCount(req, "hops", 1, 5);
  if (!hops.ok()) return respond(ErrorResponse(hops.status()));
  svc_.world.Run([name = *name, hops = static_cast<int>(*hops)](
                      world::WorldModel& w) { return w.Neighbors(name, hops); },
                  AnswerJson(respond));
}

void Api::WorldPath(HttpRequest& req, Responder respond) {
  auto from = Query(req, "from"), to = Query(req, "to");
  if (!from || !to)
    return respond(ErrorResponse(Status::InvalidArgument("query from and to: both entities are required")));
  svc_.world.Run([from = *from, to = *to](world::WorldModel& w) { return w.Path(from, to); },
                  AnswerJson(respond));
}

void Api::WorldSurprise(HttpRequest& req, Responder respond) {
  svc_.world.Run([date = Query(req, "date").value_or("")](world::WorldModel& w) { return w.Surprise(date); },
                  AnswerJson(respond));
}

}  // namespace limbic::runtime
