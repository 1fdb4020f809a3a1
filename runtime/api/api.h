// Api: the handlers of the operations of runtime/api/operations.h, on top of
// HttpServer. MakeRouter makes one route per operation, binding each to its
// handler by the operation's name; the handlers are named functions beside
// their area's binding table (api.cc, events.cc, memory.cc, ...).
//
// Writes go through the same state::Build* functions as the command line
// and answer only once their events are durable and applied (the Responder
// is called from the Engine's `done`). Reads come from the applied state,
// with recency computed at the time of the request.
//
// The handlers get what they use (ApiServices), not the whole Runtime.
//
// Thread-safety: io thread only. The services must outlive the Api.
#pragma once

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "base/worker.h"
#include "memory/store.h"
#include "runtime/http/server.h"
#include "runtime/runtime.h"
#include "state/commands.h"

namespace limbic::reflexes {
struct RuleContext;
}
namespace limbic::sensors {
class Sensor;
}
namespace limbic::state {
class Engine;
}

namespace limbic::runtime {

class Runtime;
class ArchiveService;
class EventHub;
class Executive;
class EmbedService;
class IngestService;
class Metrics;
class WorldService;
struct Config;

//! Replication as /healthz reports it.
struct ReplicationHealth {
  nlohmann::json report;  //!< {role, connected, lag, ...}; null without replication
  Status gate;            //!< a closed write gate (fenced; quorum without NATS): a 503
  Status lagging;         //!< a primary past max_lag, a standby that cannot follow: degraded
};

//! What the handlers use. References must outlive the Api; io thread only.
struct ApiServices {
  state::Engine& engine;
  const Config& config;
  ArchiveService& archive;
  memory::MemoryStore& memory;
  IngestService& ingest;
  //! Memory's vectors off the io thread (remember, recall, context, embed).
  EmbedService& embed;
  WorldService& world;
  EventHub& hub;
  Metrics& metrics;
  boost::asio::io_context& ioc;
  //! Effective arousal now (the runtime caches it briefly).
  std::function<double()> effective_arousal;
  //! What reflex rules may refer to: the configured effectors.
  std::function<reflexes::RuleContext()> rule_context;
  //! A configured sensor; nullptr when there is none of that name.
  std::function<sensors::Sensor*(const std::string& name)> sensor;
  //! Replication's state now.
  std::function<ReplicationHealth()> replication;
  //! A standby becomes the primary (Runtime::Promote).
  std::function<void(std::function<void(Status, nlohmann::json)>)> promote;
  //! The sandbox the state dir is (runtime/sandbox.h), or null.
  std::function<nlohmann::json()> sandbox;
  //! The mind's executive (runtime/executive.h); null when none runs.
  std::function<Executive*()> mind;
};

//! The services of `runtime` (services.cc).
ApiServices ApiServicesOf(Runtime& runtime);

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
// A kBool parameter: true when given as "true" (Dispatch refused anything
// but true and false), false when absent.
bool QueryFlag(const HttpRequest& req, const std::string& key);
// The query parameters of every operation (operations.h), derived from the
// operation table: MakeRouter's table.
const std::vector<RouteQueries>& ApiQueries();
// A route parameter ({id}); "" when absent.
const std::string& Param(const HttpRequest& req, const std::string& key);
// Who a request's changes are attributed to (state/provenance.h): its
// X-Limbic-Actor header, else "http". InvalidArgument naming the header when
// the value is not a name.
Result<std::string> ActorOf(const HttpRequest& req);
// Why (state/provenance.h `reason`): its X-Limbic-Reason header, "" when
// absent; set on each attributed event the request writes that gives no
// reason of its own. InvalidArgument naming the header when longer than
// kMaxReasonBytes or not text.
inline constexpr size_t kMaxReasonBytes = 1024;
Result<std::string> ReasonOf(const HttpRequest& req);

class Api : public Routes {
 public:
  Api(ApiServices services, std::shared_ptr<spdlog::logger> log);
  ~Api() override;  // waits for a replay in progress
  //! One route per operation (operations.h), in table order; the
  //! inspector's only when api.ui is on.
  Router MakeRouter() override;
  //! MakeRouter's routes bound to `api` (which may be null for a test that
  //! only lists them); `ui`: the inspector's too.
  static Router BindRoutes(Api* api, bool ui);
  //! The names of the operations that have a handler (for tests: every
  //! operation must).
  static std::vector<std::string_view> BoundOperations();

 private:
  using HandlerFn = void (Api::*)(HttpRequest&, Responder);
  using SseFn = void (Api::*)(HttpRequest&, std::shared_ptr<SseStream>);
  using SignedFn = bool (Api::*)(const HttpRequest&);
  //! An operation's handler; `signed_by` for Access::kSignedOrToken.
  struct Binding {
    std::string_view op;
    HandlerFn handler = nullptr;
    SseFn sse = nullptr;
    SignedFn signed_by = nullptr;
  };
  // Each area's bindings, beside its handlers.
  static std::span<const Binding> SystemBindings();   // api.cc
  static std::span<const Binding> PoolBindings();     // api.cc
  static std::span<const Binding> EventBindings();    // events.cc
  static std::span<const Binding> MemoryBindings();   // memory.cc
  static std::span<const Binding> WorldBindings();    // world.cc
  static std::span<const Binding> ArchiveBindings();  // archive.cc
  static std::span<const Binding> StateBindings();    // state.cc, ui.cc
  static std::span<const Binding> MindBindings();     // mind.cc
  static const Binding* BindingOf(std::string_view op);

  // The handlers, by area (each is its operation's: operations_*.cc).
  void GetMind(HttpRequest&, Responder);
  void WakeMind(HttpRequest&, Responder);
  void SleepMind(HttpRequest&, Responder);
  void ListMindSessions(HttpRequest&, Responder);
  void GetMindSession(HttpRequest&, Responder);

  void Health(HttpRequest&, Responder);
  void Promote(HttpRequest&, Responder);
  void MetricsText(HttpRequest&, Responder);
  void OpenApi(HttpRequest&, Responder);

  void AddPercept(HttpRequest&, Responder);
  void AddPercepts(HttpRequest&, Responder);
  void ListPercepts(HttpRequest&, Responder);
  void GetPercept(HttpRequest&, Responder);
  void AssignPercept(HttpRequest&, Responder);
  void ProcessPercept(HttpRequest&, Responder);
  void DropPercept(HttpRequest&, Responder);
  void RemovePercept(HttpRequest&, Responder);
  void CreateThread(HttpRequest&, Responder);
  void ListThreads(HttpRequest&, Responder);
  void GetThread(HttpRequest&, Responder);
  void UpdateThread(HttpRequest&, Responder);
  void DeleteThread(HttpRequest&, Responder);
  void GetAttention(HttpRequest&, Responder);
  void GetArousal(HttpRequest&, Responder);
  void SetArousal(HttpRequest&, Responder);  // PATCH and PUT
  void EnqueueAction(HttpRequest&, Responder);
  void ApproveAction(HttpRequest&, Responder);
  void RejectAction(HttpRequest&, Responder);
  void RetryAction(HttpRequest&, Responder);
  void ListActions(HttpRequest&, Responder);
  void PruneActions(HttpRequest&, Responder);
  void StateDigest(HttpRequest&, Responder);
  void GetAction(HttpRequest&, Responder);

  void Why(HttpRequest&, Responder);
  void EventsSince(HttpRequest&, Responder);
  void EventStream(HttpRequest&, std::shared_ptr<SseStream>);
  void ListReflexes(HttpRequest&, Responder);
  void GetReflex(HttpRequest&, Responder);
  void PutReflex(HttpRequest&, Responder);
  void DeleteReflex(HttpRequest&, Responder);
  void EnableReflex(HttpRequest&, Responder);
  void DisableReflex(HttpRequest&, Responder);
  void SensorWebhook(HttpRequest&, Responder);
  bool SensorSigns(const HttpRequest&);

  void RememberFact(HttpRequest&, Responder);
  void RememberEpisode(HttpRequest&, Responder);
  void Recall(HttpRequest&, Responder);
  void Relate(HttpRequest&, Responder);
  void Related(HttpRequest&, Responder);
  void Forget(HttpRequest&, Responder);
  void Decay(HttpRequest&, Responder);
  void MemoryStats(HttpRequest&, Responder);
  void Embed(HttpRequest&, Responder);
  void ExportMemory(HttpRequest&, Responder);
  void ImportMemory(HttpRequest&, Responder);
  void Ingest(HttpRequest&, Responder);
  void GetMemory(HttpRequest&, Responder);
  void GetContext(HttpRequest&, Responder);

  void WorldMemory(HttpRequest&, Responder);
  void WorldEntities(HttpRequest&, Responder);
  void WorldEntity(HttpRequest&, Responder);
  void WorldNeighbors(HttpRequest&, Responder);
  void WorldPath(HttpRequest&, Responder);
  void WorldSurprise(HttpRequest&, Responder);
  void WorldExtract(HttpRequest&, Responder);
  void WorldConsolidate(HttpRequest&, Responder);

  void Consolidate(HttpRequest&, Responder);
  void ArchiveRollup(HttpRequest&, Responder);
  void ArchiveVerify(HttpRequest&, Responder);
  void ArchiveSearch(HttpRequest&, Responder);
  void ArchiveStats(HttpRequest&, Responder);
  void ArchiveRecall(HttpRequest&, Responder);
  void ArchiveDay(HttpRequest&, Responder);
  void ArchiveWalk(HttpRequest&, Responder);
  void ArchiveBlink(HttpRequest&, Responder);

  void StateAt(HttpRequest&, Responder);
  void ForkState(HttpRequest&, Responder);
  void ServeUi(HttpRequest&, Responder);

  // Submits `events` and answers `created ? 201 : 200` with {id, seq, events}
  // once durable; `id_field` names the id in the first event. The events are
  // attributed to the request's actor (ActorOf) and pass the effectors'
  // policy (effectors::PrepareEnqueued) first.
  void Commit(const HttpRequest& req, Result<state::Events> events, const char* id_field,
              bool created, Responder respond);
  // approve_action and reject_action; enable_reflex and disable_reflex.
  void DecideAction(HttpRequest& req, Responder respond, bool approve);
  void EnableReflexAs(HttpRequest& req, Responder respond, bool enable);
  // What GET /v1/attention answers (also the start of GET /v1/context).
  Result<nlohmann::json> Attention();
  // Submits a memory plan's events and answers (201 when it created
  // something) once they are durable, with "seq" (the last event's) and
  // "events_written" added; a plan without events answers at once.
  void CommitPlan(Result<memory::MemoryPlan> plan, Responder respond);
  // POST /v1/memory/embed's vectors, planned and committed kEmbedPieceIds
  // memories at a time, each piece once the one before is durable (100,000
  // vectors are 200 MB of events: one commit would hold the loop for
  // seconds). Answers after the last piece with the totals; an error
  // leaves the pieces before it written (the embed can be run again).
  struct EmbedPiece {
    std::shared_ptr<const memory::EmbedWork> work;
    std::vector<memory::Vector> vectors;
    std::string embedder_id;
    size_t next = 0;  // the first id of the next piece
    size_t embedded = 0, events_written = 0;
    uint64_t seq = 0;
  };
  static constexpr size_t kEmbedPieceIds = 4 * memory::MemoryStore::kVectorsPerEvent;
  void CommitEmbedPiece(std::shared_ptr<EmbedPiece> piece, Responder respond);
  // Before that, its texts: read kEmbedReadIds at a time (reading 100,000
  // at once held the loop for half a second), then embedded (EmbedService).
  static constexpr size_t kEmbedReadIds = 1024;
  void ReadEmbedTexts(std::shared_ptr<memory::EmbedWork> work, Responder respond);
  // Recall, with archive hits fetched from the archive's worker first when
  // the request may want them; `done` runs on the loop.
  void RecallWithArchive(memory::RecallRequest req,
                         std::function<void(Result<memory::MemoryPlan>)> done);

  // Runs `job` (a replay of the log: time travel, a fork) on the replay
  // worker; `reply` gets its result on the io thread. Unavailable at once
  // when kMaxReplays are already waiting or running (state.cc).
  void Replay(std::function<Result<nlohmann::json>()> job,
              std::function<void(Result<nlohmann::json>)> reply);

  ApiServices svc_;
  std::shared_ptr<spdlog::logger> log_;
  size_t replays_ = 0;  // jobs posted to replay_worker_ and not yet answered
  Worker replay_worker_{"replay"};
};

// The Runtime's ApiFactory: the routes of docs/api.md.
std::unique_ptr<Routes> MakeApi(Runtime& runtime, std::shared_ptr<spdlog::logger> log);

}  // namespace limbic::runtime
