// Api: the routes of docs/api.md on top of HttpServer.
//
// Writes go through the same state::Build* functions as the command line
// and answer only once their events are durable and applied (the Responder
// is called from the Engine's `done`). Reads come from the applied state,
// with recency computed at the time of the request.
//
// Thread-safety: io thread only. The Runtime must outlive the Api.
#pragma once

#include <spdlog/logger.h>

#include <memory>
#include <optional>
#include <span>

#include "base/worker.h"
#include "memory/store.h"
#include "runtime/http/server.h"
#include "runtime/runtime.h"
#include "state/commands.h"

namespace limbic::runtime {

// The HTTP status for a Status code (InvalidArgument 400, NotFound 404, ...).
int HttpStatusFor(const Status& status);
HttpResponse ErrorResponse(const Status& status);
// The answer to a durable write: {seq, events, id?}; `id_field` names the id
// in the first event (nullptr: no id). `done` is not empty.
// A worker job's reply (the archive's, the world model's) as the answer: 200
// with its JSON, or the error.
std::function<void(Result<nlohmann::json>)> AnswerJson(Responder respond);
nlohmann::json CommitReceipt(std::span<const state::Event> done, const char* id_field);

// Request helpers shared by the route files.
// The body as JSON; an empty body is an empty object.
Result<nlohmann::json> Body(HttpRequest& req);
// Query helpers read values Dispatch has already checked against the
// route's declared parameters (ApiQueries, runtime/http/query.h).
// A query parameter; nullopt when absent or empty.
std::optional<std::string> Query(const HttpRequest& req, const std::string& key);
// A count (capped at `max`), `dflt` when absent; InvalidArgument naming the key.
Result<size_t> QueryCount(const HttpRequest& req, const std::string& key, size_t dflt, size_t max);
Result<std::optional<TimeMs>> QueryDuration(const HttpRequest& req, const std::string& key);
// The query parameters of every route (api_query.cc): MakeRouter's table.
const std::vector<RouteQueries>& ApiQueries();
// A route parameter ({id}); "" when absent.
const std::string& Param(const HttpRequest& req, const std::string& key);
// Who a request's changes are attributed to (state/provenance.h): its
// X-Limbic-Actor header, else "http". InvalidArgument naming the header when
// the value is not a name.
Result<std::string> ActorOf(const HttpRequest& req);

class Api : public Routes {
 public:
  Api(Runtime& runtime, std::shared_ptr<spdlog::logger> log);
  ~Api() override;  // waits for a replay in progress
  Router MakeRouter() override;

 private:
  // Submits `events` and answers `created ? 201 : 200` with {id, seq, events}
  // once durable; `id_field` names the id in the first event. The events are
  // attributed to the request's actor (ActorOf) and pass the effectors'
  // policy (effectors::PrepareEnqueued) first.
  void Commit(const HttpRequest& req, Result<state::Events> events, const char* id_field,
              bool created, Responder respond);

  void AddPerceptRoutes(Router& r);
  void AddThreadRoutes(Router& r);
  void AddOutboxRoutes(Router& r);  // arousal, actions, attention
  void AddEventRoutes(Router& r);
  void AddReflexRoutes(Router& r);
  void AddSensorRoutes(Router& r);
  void AddArchiveRoutes(Router& r);  // consolidate, archive (api_archive.cc)
  void AddMemoryRoutes(Router& r);   // memory, context (api_memory.cc)
  void AddWorldRoutes(Router& r);    // the world model (api_world.cc)
  void AddUiRoutes(Router& r);       // the inspector's files at /ui/ (api_ui.cc)
  void AddStateRoutes(Router& r);    // time travel and forks (api_state.cc)
  // What GET /v1/attention answers (also the start of GET /v1/context).
  Result<nlohmann::json> Attention();
  // Submits a memory plan's events and answers (201 when it created
  // something) once they are durable, with "seq" (the last event's) and
  // "events_written" added; a plan without events answers at once.
  void CommitPlan(Result<memory::MemoryPlan> plan, Responder respond);
  // Recall, with archive hits fetched from the archive's worker first when
  // the request may want them; `done` runs on the loop.
  void RecallWithArchive(memory::RecallRequest req,
                         std::function<void(Result<memory::MemoryPlan>)> done);

  // Runs `job` (a replay of the log: time travel, a fork) on the replay
  // worker; `reply` gets its result on the io thread. Unavailable at once
  // when kMaxReplays are already waiting or running (api_state.cc).
  void Replay(std::function<Result<nlohmann::json>()> job,
              std::function<void(Result<nlohmann::json>)> reply);

  Runtime& rt_;
  std::shared_ptr<spdlog::logger> log_;
  size_t replays_ = 0;  // jobs posted to replay_worker_ and not yet answered
  Worker replay_worker_{"replay"};
};

// The Runtime's ApiFactory: the routes of docs/api.md.
std::unique_ptr<Routes> MakeApi(Runtime& runtime, std::shared_ptr<spdlog::logger> log);

}  // namespace limbic::runtime
