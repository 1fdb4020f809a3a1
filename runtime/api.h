// Api: the routes of docs/api.md on top of HttpServer.
//
// Writes go through the same state::Build* functions as the command line
// and answer only once their events are durable and applied (the Responder
// is called from the Engine's `done`). Reads come from the applied state,
// with recency computed at the time of the request.
//
// Thread-safety: io thread only. The Runtime must outlive the Api.
#pragma once

#include <memory>
#include <span>
#include <spdlog/logger.h>

#include "runtime/http_server.h"
#include "state/commands.h"

namespace limbic::runtime {

class Runtime;

// The HTTP status for a Status code (InvalidArgument 400, NotFound 404, ...).
int HttpStatusFor(const Status& status);
HttpResponse ErrorResponse(const Status& status);
// The answer to a durable write: {seq, events, id?}; `id_field` names the id
// in the first event (nullptr: no id). `done` is not empty.
nlohmann::json CommitReceipt(std::span<const state::Event> done, const char* id_field);

class Api {
 public:
  Api(Runtime& runtime, std::shared_ptr<spdlog::logger> log);
  Router MakeRouter();

 private:
  // Submits `events` and answers `created ? 201 : 200` with {id, seq, events}
  // once durable; `id_field` names the id in the first event.
  void Commit(Result<state::Events> events, const char* id_field, bool created, Responder respond);

  void AddPerceptRoutes(Router& r);
  void AddThreadRoutes(Router& r);
  void AddOutboxRoutes(Router& r);  // arousal, actions, attention
  void AddEventRoutes(Router& r);
  void AddReflexRoutes(Router& r);
  void AddSensorRoutes(Router& r);

  Runtime& rt_;
  std::shared_ptr<spdlog::logger> log_;
};

}  // namespace limbic::runtime
