// Runtime: `limbic run`, the agent's core loop.
//
// One boost::asio::io_context, run by the thread that calls Run(), owns all
// runtime state: the Engine (state), the reflex engine, the outbox, the
// sensors' sinks, the HTTP API and the event hub. No mutex guards any of it.
// Blocking work lives elsewhere and comes back with `post`: the log's writer
// thread (group commit + fdatasync), sensor reader threads, subprocess
// reapers, effector helper threads.
//
// An applied group of events (durable, in the projections) goes to the
// runtime's subscribers, one after the other on the io thread, in the order
// RegisterSubscribers registers them (its comment says why that order).
//
// Shutdown (SIGINT/SIGTERM): stop accepting HTTP connections and stop the
// sensors (no new intake); let in-flight deliveries finish within
// outbox.shutdown_grace, then cancel the rest (they stay inflight and are
// delivered again on the next start); let in-flight HTTP requests finish;
// flush the log and apply what is pending; close; exit 0.
//
// While the API listens, <state>/api.json says where: {"pid": N, "url":
// "http://127.0.0.1:7077", "body_limit": api.body_limit} (written
// atomically once the server listens,
// removed at a clean stop, before the lock is released). A stale file (its
// pid dead or not the lock's holder) is left by a crash; readers must check.
#pragma once

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "memory/store.h"
#include "reflexes/engine.h"
#include "runtime/archive_service.h"
#include "runtime/checkpoint_service.h"
#include "runtime/config.h"
#include "runtime/event_hub.h"
#include "runtime/executive.h"
#include "runtime/http/server.h"
#include "runtime/embed_service.h"
#include "runtime/ingest_service.h"
#include "runtime/metrics.h"
#include "runtime/outbox.h"
#include "runtime/replication/follower.h"
#include "runtime/replication/replicator.h"
#include "runtime/sandbox.h"
#include "runtime/world_service.h"
#include "sensors/sensor.h"
#include "state/engine.h"

namespace limbic {
class ProcessGroupJournal;
}

namespace limbic::runtime {

class Runtime;

// What answers the HTTP API (runtime/api/): the loop serves the router it
// makes, from when the loop is open, and destroys it first at shutdown. The
// loop does not know the routes: `limbic run`, `follow` and `limbic mcp`'s
// in-process runtime pass runtime/api's MakeApi.
class Routes {
 public:
  virtual ~Routes() = default;
  virtual Router MakeRouter() = 0;
};
using ApiFactory =
    std::function<std::unique_ptr<Routes>(Runtime&, std::shared_ptr<spdlog::logger>)>;

class Runtime {
 public:
  // `make_api` is not empty.
  Runtime(Config config, std::shared_ptr<spdlog::logger> log, ApiFactory make_api);
  ~Runtime();

  // Opens everything, runs the loop until a stop signal (or Stop()), shuts
  // down gracefully. Returns the process exit code (0 after a clean stop).
  int Run();
  // Starts the graceful shutdown; safe from the io thread.
  void Stop();
  // Called on the io thread once the HTTP API listens, with its base URL
  // (e.g. "http://127.0.0.1:41234"). Set before Run().
  void set_on_listening(std::function<void(const std::string& url)> callback) {
    on_listening_ = std::move(callback);
  }

  // For the API and tests (io thread only).
  state::Engine& engine() { return *engine_; }
  const Config& config() const { return config_; }
  reflexes::ReflexEngine& reflexes() { return reflexes_; }
  EventHub& hub() { return *hub_; }
  Metrics& metrics() { return metrics_; }
  ArchiveService& archive() { return *archive_; }
  memory::MemoryStore& memory() { return *memory_; }
  IngestService& ingest() { return *ingest_; }
  EmbedService& embed() { return *embed_; }
  WorldService& world() { return *world_; }
  sensors::Sensor* sensor(const std::string& name);
  // What rules may refer to: the configured effectors.
  reflexes::RuleContext MakeRuleContext() const;
  boost::asio::io_context& ioc() { return ioc_; }
  // Effective arousal now (cached briefly: it scans recent percepts).
  double EffectiveArousal();
  // Set when the state dir is a sandbox (runtime/sandbox.h), once Run opened it.
  const std::optional<SandboxInfo>& sandbox() const { return sandbox_; }
  // A sandbox syncs the reflexes file into its rules only when asked (`run
  // --sync-rules`); an ordinary state dir always does. Set before Run().
  void set_sync_rules(bool sync) { sync_rules_ = sync; }
  // The mind's executive (runtime/executive.h): `make` builds it once the
  // state is open, `check` checks the config's mind section first (what
  // needs the operation table). Without it a configured mind is not run
  // (`limbic mcp`'s in-process runtime). Set before Run().
  void set_mind(MindFactory make, MindCheck check) {
    make_mind_ = std::move(make);
    check_mind_ = std::move(check);
  }
  // The executive; null when no factory was set (or before Run opened).
  Executive* mind() { return mind_.get(); }
  // The URL a local client reaches the API at (an exec mind's LIMBIC_URL).
  std::string api_url() const { return LocalUrl(); }
  // `limbic follow`: run as a hot standby of config().replication's agent
  // (runtime/replication/replicator.h). Writes are refused, sensors, the outbox,
  // reflexes, consolidation and the timers that write are not started,
  // and reads are served, until Promote(). Set before Run().
  void set_follow(bool follow) { following_ = follow; }
  bool following() const { return following_; }
  Replicator* replicator() { return replicator_.get(); }
  Follower* follower() { return follower_.get(); }
  // A standby becomes the primary: it applies the stream through its last
  // message, publishes primary_promoted after it (which fences the old
  // primary) and applies it from the stream (Follower::Promote), then
  // starts replicating and what a primary runs. `done` gets {"seq",
  // "stream_seq"} or why not (io thread); when not, nothing was written
  // and this limbic is still a standby, following.
  void Promote(std::function<void(Status, nlohmann::json)> done);

 private:
  Status Open();
  // What a primary runs besides serving: the outbox, sensors, the timers
  // that write, consolidation, the world model. Open calls it, or Promote.
  Status StartPrimary();
  // What a standby runs instead (`limbic follow`): the write gate,
  // <state>/standby.json and the follower. Open calls it.
  Status StartStandby();
  // Building blocks of Open; config problems are collected in *errors.
  void OpenEffectors(std::vector<std::string>* errors);
  std::vector<reflexes::Rule> ParseFileRules(std::vector<std::string>* errors);
  void MakeSensors(std::vector<std::string>* errors);
  // The rules of the pool; with `sync_file`, first made to match the
  // reflexes file's (`file_rules`).
  Status LoadReflexes(const std::vector<reflexes::Rule>& file_rules, bool sync_file);
  // One consumer of applied groups; it must not block (work that blocks
  // goes to a worker, as the archive's does).
  struct AppliedSubscriber {
    const char* name;
    std::function<void(std::span<const state::Event>)> on_applied;
  };
  // Registers the subscribers, in this order, and the engine listener that
  // runs them:
  //   1. hub: SSE and long-poll readers see the group first; nothing below
  //      can delay them.
  //   2. metrics: events applied, group sizes, reflex fires.
  //   3. arousal: arousal_set / arousal_factor_set drop the effective-arousal
  //      cache, before reflexes read it (rules may have an arousal range).
  //   4. reflexes: the group's rule-set changes first, then its percepts
  //      meet the rules as they stand after the group; a firing is one more
  //      batch of events, a later group. Moves the reflex cursor.
  //   5. outbox: schedules the delivery of each action_enqueued.
  //   6. archive: on entry_staged, its worker stages the log's entries.
  //   7. mind: counts the mind's own events into its budget, and looks at
  //      attention (after the reflexes have had their turn) to decide
  //      whether to wake the mind.
  //   8. checkpoints: counts events since the last checkpoint and, past
  //      checkpoints.every, has its worker take one (a primary's and a
  //      standby's alike).
  // 3 must run before 4; 1 runs first so that readers wait on nothing else;
  // 5 and 6 read only their own event types and keep their old place; 7
  // is last so a reflex's handling of a percept comes before the mind's.
  void RegisterSubscribers();
  // Subscriber 4 (runtime_reflexes.cc).
  void OnAppliedReflexes(std::span<const state::Event> events);
  // (percept id, reflex id) of firings already in the log.
  using FiredPairs = std::set<std::pair<std::string, std::string>>;
  // Evaluates the rules on the percept and submits each firing; rules
  // `already` fired on it are skipped.
  void FireReflexes(const std::string& percept_id, const FiredPairs* already = nullptr);
  // The reflex cursor: start's catch-up, the periodic record, the last one.
  // *read_after: the catch-up read the log after this seq (the applied seq
  // when it read nothing).
  Status CatchUpReflexes(uint64_t* read_after);
  Status SubmitCursor();
  Status RecordCursor(uint64_t through);
  void ScheduleCursor();
  Status FlushForExit();
  // Start's report of stored records nested deeper than api.max_json_depth
  // among what it acts on: the log after `log_after` and the open actions
  // (runtime_start_report.cc says what is scanned and why no more).
  void ReportDeepRecords(uint64_t log_after);
  // Every min(outbox.retention, percepts.dedup_window) / 10, within
  // [1 s, 10 min]: prunes finished actions and the dedup pool.
  void SchedulePrune();
  // While memories' vectors wait for the HNSW graph (MemoryStore::
  // IndexBacklog), inserts them for about kIndexSliceMs at a time, each
  // slice behind whatever the loop has queued meanwhile.
  void ScheduleIndexStep();
  static constexpr int kIndexSliceMs = 2;
  static constexpr size_t kIndexStepInserts = 4;  // between looks at the clock
  // Submits a dedup_pruned event for the dedup records older than
  // percepts.dedup_window, if any (state/dedup.h).
  void PruneDedup();
  void DeclareMetrics();
  // The replication gauges of whichever of replicator_ and follower_ runs
  // (runtime_replication.cc): declared when one starts, their values read
  // by a collector DeclareMetrics adds.
  void DeclareReplicationMetrics();
  void CollectReplicationMetrics();
  // Start: ends the process groups a SIGKILLed run of this state dir left
  // running, then records this run's (runtime_subprocesses.cc).
  void EndLeftoverGroups();
  void ShutdownStep(int step);
  // The URL a local client reaches the API at; api.json.
  std::string LocalUrl() const;
  void WriteApiFile();
  // " (api.json says limbic pid N serves this state dir at URL)", or "".
  std::string ApiFileHint() const;

  Config config_;
  std::shared_ptr<spdlog::logger> log_;
  std::optional<SandboxInfo> sandbox_;
  bool sync_rules_ = false;
  boost::asio::io_context ioc_;
  boost::asio::signal_set signals_;
  std::unique_ptr<state::Engine> engine_;
  std::shared_ptr<ProcessGroupJournal> groups_;  // base/process_groups.h
  Metrics metrics_;
  std::unique_ptr<EventHub> hub_;
  std::map<std::string, Outbox::EffectorSlot> effectors_;
  std::unique_ptr<Outbox> outbox_;
  std::unique_ptr<ArchiveService> archive_;
  std::unique_ptr<CheckpointService> checkpoints_;
  std::unique_ptr<memory::MemoryStore> memory_;
  std::unique_ptr<IngestService> ingest_;
  std::unique_ptr<EmbedService> embed_;
  std::unique_ptr<WorldService> world_;
  MindFactory make_mind_;
  MindCheck check_mind_;
  std::unique_ptr<Executive> mind_;
  reflexes::ReflexEngine reflexes_;
  std::map<std::string, std::unique_ptr<sensors::Sensor>> sensors_;
  ApiFactory make_api_;
  std::unique_ptr<Routes> api_;
  std::unique_ptr<Replicator> replicator_;
  std::unique_ptr<Follower> follower_;
  bool following_ = false;
  bool promoting_ = false;
  std::vector<reflexes::Rule> file_rules_;  // the reflexes file's, for a promotion
  std::unique_ptr<HttpServer> http_;
  std::vector<AppliedSubscriber> subscribers_;  // in the order they run
  boost::asio::steady_timer prune_timer_;
  // The reflex cursor (reflexes_evaluated events): the last percept seq
  // whose reflexes were evaluated, and the last through_seq submitted.
  static constexpr int kCursorIntervalMs = 1000;
  boost::asio::steady_timer cursor_timer_;
  uint64_t evaluated_through_ = 0;
  uint64_t cursor_submitted_ = 0;
  std::function<void(const std::string&)> on_listening_;
  bool api_file_written_ = false;
  bool stopping_ = false;
  bool index_step_posted_ = false;
  int exit_code_ = 0;
  double arousal_cache_ = 0;
  TimeMs arousal_cache_at_ = -1;
};

// <state_dir>/api.json: where the running runtime's API listens.
std::string ApiFilePath(const std::string& state_dir);
// <state_dir>/subprocesses: the process groups the runtime started
// (base/process_groups.h).
std::string SubprocessesDirPath(const std::string& state_dir);

}  // namespace limbic::runtime
