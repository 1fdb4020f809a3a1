#include "runtime/runtime.h"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <csignal>
#include <set>

#include "base/input_json.h"
#include "base/process_groups.h"
#include "effectors/effector.h"
#include "runtime/attention.h"
#include "runtime/submit.h"
#include "state/commands.h"
#include "state/dedup.h"
#include "state/recency.h"

namespace limbic::runtime {

using nlohmann::json;
using state::Event;
using state::EventType;

std::string ApiFilePath(const std::string& state_dir) { return state_dir + "/api.json"; }

namespace {

// The last line of a run, once the log is flushed: the last seq durably in
// the log, which the next start begins after; and the projections' when a
// failed write left them behind it (they catch up from the log when the
// engine closes, or at the next start) or ahead of it.
std::string StoppedLine(const state::Engine& engine) {
  const uint64_t durable = engine.durable_seq(), applied = engine.applied_seq();
  std::string line = "stopped at seq " + std::to_string(durable);
  if (applied < durable)
    line +=
        " (the projections end at seq " + std::to_string(applied) + " and catch up from the log)";
  if (applied > durable)  // interval or none, and the last fdatasync failed
    line += " (the projections hold events through seq " + std::to_string(applied) +
            " that the log could not sync)";
  return line;
}

// The API's server, as the config's api section says.
HttpServerOptions ServerOptions(const Config& config) {
  HttpServerOptions ho;
  ho.address = config.api_address;
  ho.port = config.api_port;
  ho.body_limit = config.body_limit;
  ho.bearer_token = config.api_token;
  const ApiLimitsConfig& l = config.api_limits;
  ho.read_timeout = l.read_timeout;
  ho.idle_timeout = l.idle_timeout;
  ho.limits = {l.max_connections, l.max_connections_per_client, l.max_sse_streams,
               l.max_sse_streams_per_client};
  ho.sse_keepalive = l.sse_keepalive;
  ho.sse_max_queued_bytes = l.sse_max_queued_bytes;
  ho.exposure = {config.api_address, l.allowed_hosts, l.allowed_origins};
  return ho;
}

}  // namespace

Runtime::Runtime(Config config, std::shared_ptr<spdlog::logger> log, ApiFactory make_api)
    : config_(std::move(config)),
      log_(std::move(log)),
      signals_(ioc_, SIGINT, SIGTERM),
      make_api_(std::move(make_api)),
      prune_timer_(ioc_),
      cursor_timer_(ioc_) {
  // One limit for every parser of outside input in this process (HTTP,
  // sensors, webhooks): set before any of them runs.
  SetMaxInputJsonDepth(config_.max_json_depth);
}

Runtime::~Runtime() {
  // Order matters: users of the engine go first, the engine last.
  mind_.reset();  // its router calls into the API
  http_.reset();
  api_.reset();
  follower_.reset();    // joins its thread
  replicator_.reset();  // joins its thread
  sensors_.clear();
  outbox_.reset();
  world_.reset();    // joins its worker
  ingest_.reset();   // joins its worker
  embed_.reset();    // joins its worker
  archive_.reset();  // joins its worker
  checkpoints_.reset();  // joins its worker, after the checkpoint it is taking
  memory_.reset();   // saves its vector index
  effectors_.clear();
  SetProcessGroupJournal(nullptr);  // nothing spawns any more
  hub_.reset();
  engine_.reset();
}

sensors::Sensor* Runtime::sensor(const std::string& name) {
  auto it = sensors_.find(name);
  return it == sensors_.end() ? nullptr : it->second.get();
}

Status Runtime::Open() {
  // 1. Everything the config names is checked before the state dir is
  // touched, and every problem is reported at once.
  std::vector<std::string> errors;
  // Empty, every path under it would be the file system's root's.
  if (config_.state_dir.empty())
    return Status::InvalidArgument("state_dir is empty: give --state DIR or the config's state_dir");
  if (!IsLoopbackAddress(config_.api_address) && config_.api_token.empty())
    errors.push_back("api.address " + config_.api_address +
                     " is not loopback: set api.token to serve it");
  if (auto sandbox = ReadSandbox(config_.state_dir); !sandbox.ok())
    errors.push_back(sandbox.status().message());
  else
    sandbox_ = *sandbox;
  if (auto root = ResolveForkRoot(config_.fork_root, config_.state_dir); !root.ok())
    errors.push_back(root.status().message());
  else
    config_.fork_root = *root;
  OpenEffectors(&errors);
  file_rules_ = ParseFileRules(&errors);
  MakeSensors(&errors);
  if (config_.mind.enabled && check_mind_) check_mind_(config_.mind, &errors);
  if (following_ && !config_.replication.enabled())
    errors.push_back("replication: a standby needs replication.nats, .stream and .agent");
  Status checked = ConfigErrors(errors);
  if (!checked.ok()) return checked.WithContext(config_.source);
  // A standby's log takes only its stream's events (runtime/replication/follower.h).
  if (!following_) LIMBIC_RETURN_IF_ERROR(RefuseStandbyWrites(config_.state_dir));

  // 2. The API's address is taken now, before the state dir is touched, so
  // a runtime that cannot serve has written nothing. It accepts once
  // everything below is ready (step 4).
  auto http = HttpServer::Listen(ioc_, ServerOptions(config_), log_);
  if (!http.ok()) return http.status().WithMessage(http.status().message() + ApiFileHint());
  http_ = std::move(http).value();

  // 3. The state dir: lock, recover; end what a SIGKILLed run left running.
  state::EngineOptions eo;
  eo.state_dir = config_.state_dir;
  eo.durability = config_.durability;
  eo.interval_ms = config_.interval_ms;
  eo.segment_bytes = config_.segment_bytes;
  eo.dedup_window = config_.percepts_dedup_window;
  eo.logger = log_;
  eo.post = [this](std::function<void()> task) { boost::asio::post(ioc_, std::move(task)); };
  eo.on_sync = [this](double seconds) {
    boost::asio::post(ioc_,
                      [this, seconds] { metrics_.Observe("limbic_fsync_seconds", "", seconds); });
  };
  eo.on_durable = [this](uint64_t seq) {
    if (replicator_) replicator_->OnDurable(seq);
  };
  DeclareMetrics();
  state::EngineRecovery recovery;
  auto engine = state::Engine::Open(eo, &recovery);
  if (!engine.ok()) return engine.status();
  engine_ = std::move(engine).value();
  if (recovery.log.truncated_bytes > 0)
    log_->warn("recovery: truncated a torn final line ({} bytes) in {} at offset {}",
               recovery.log.truncated_bytes, recovery.log.truncated_file,
               recovery.log.truncated_offset);
  if (recovery.reapplied > 0)
    log_->info("recovery: re-applied {} events after seq {}", recovery.reapplied,
               std::max(recovery.applied_seq_at_open, recovery.from_checkpoint));
  EndLeftoverGroups();

  // 4. The loop's parts, then intake.
  outbox_ = std::make_unique<Outbox>(ioc_, *engine_, effectors_, config_.outbox, metrics_, log_);
  archive_ = std::make_unique<ArchiveService>(ioc_, *engine_, config_, log_);
  LIMBIC_RETURN_IF_ERROR(archive_->Open());
  checkpoints_ = std::make_unique<CheckpointService>(ioc_, *engine_, config_, log_);
  LIMBIC_RETURN_IF_ERROR(checkpoints_->Open());
  {
    // The HNSW graph is built in slices on the loop (ScheduleIndexStep),
    // never within a commit's completion: an embed of every memory, or
    // the store passing memory.vector_exact_limit, holds nothing up.
    memory::MemoryOptions memory_options = config_.memory;
    memory_options.vectors.defer_graph = true;
    auto memory = memory::MemoryStore::Open(*engine_, std::move(memory_options), log_);
    if (!memory.ok()) return memory.status().WithContext("opening long-term memory");
    memory_ = std::move(*memory);
    ingest_ = std::make_unique<IngestService>(ioc_, log_);
    LIMBIC_RETURN_IF_ERROR(ingest_->Open(*memory_));
    embed_ = std::make_unique<EmbedService>(ioc_, log_);
    LIMBIC_RETURN_IF_ERROR(embed_->Open(*memory_));
  }
  world_ = std::make_unique<WorldService>(ioc_, *engine_, config_, log_);
  LIMBIC_RETURN_IF_ERROR(world_->Open());
  // A standby writes nothing of its own: the rules are the pool's as the
  // stream left them, and the reflexes its primary fired are in the stream.
  LIMBIC_RETURN_IF_ERROR(LoadReflexes(file_rules_, !following_ && (!sandbox_ || sync_rules_)));
  uint64_t caught_up_after = recovery.applied_seq_at_open;
  if (!following_) LIMBIC_RETURN_IF_ERROR(CatchUpReflexes(&caught_up_after));
  ReportDeepRecords(std::min(caught_up_after, recovery.applied_seq_at_open));
  // From here on the hub sees every applied event (older ones it reads from the log).
  hub_ = std::make_unique<EventHub>(ioc_, engine_->events_dir());
  hub_->set_last_seq(engine_->applied_seq());
  if (make_mind_) mind_ = make_mind_(*this, log_);
  else if (config_.mind.enabled)
    log_->warn("mind: configured, but this command does not run it (limbic run does)");
  RegisterSubscribers();
  if (following_) {
    LIMBIC_RETURN_IF_ERROR(StartStandby());
  } else {
    if (config_.replication.enabled()) {
      replicator_ = std::make_unique<Replicator>(ioc_, *engine_, config_.replication, log_);
      LIMBIC_RETURN_IF_ERROR(replicator_->Start());
      DeclareReplicationMetrics();
    }
    LIMBIC_RETURN_IF_ERROR(StartPrimary());
  }

  api_ = make_api_(*this, log_);
  http_->Serve(api_->MakeRouter());
  // The mind acts through the API: it starts once the routes exist (a
  // standby's starts when it is promoted).
  if (mind_ && !following_) LIMBIC_RETURN_IF_ERROR(mind_->Start(api_->MakeRouter()));
  return Status::OK();
}

Status Runtime::StartPrimary() {
  LIMBIC_RETURN_IF_ERROR(outbox_->Start());
  for (auto& [name, sensor] : sensors_) {
    Status s = sensor->Start();
    if (!s.ok()) return s.WithContext("sensor " + name);
  }
  SchedulePrune();
  ScheduleCursor();
  archive_->Start();
  world_->Start();
  return Status::OK();
}

void Runtime::OpenEffectors(std::vector<std::string>* errors) {
  for (auto it = config_.effectors.begin(); it != config_.effectors.end(); ++it) {
    auto limits = effectors::ParseLimits(it.value());
    if (!limits.ok()) {
      errors->push_back(limits.status().WithContext("effectors." + it.key()).message());
      continue;
    }
    auto effector = effectors::MakeEffector(it.key(), it.value(), ioc_, log_);
    if (effector.ok() && sandbox_)  // checked as configured, then only recorded
      effector = effectors::MakeDryRunEffector(it.key(), it.value().value("kind", ""),
                                               DryRunFilePath(config_.state_dir), ioc_);
    if (!effector.ok()) {
      errors->push_back(effector.status().message());
      continue;
    }
    effectors_.emplace(it.key(), Outbox::EffectorSlot{std::move(effector).value(), *limits});
  }
}

reflexes::RuleContext Runtime::MakeRuleContext() const {
  reflexes::RuleContext ctx;
  for (auto it = config_.effectors.begin(); it != config_.effectors.end(); ++it)
    ctx.effectors.insert(it.key());
  return ctx;
}

std::vector<reflexes::Rule> Runtime::ParseFileRules(std::vector<std::string>* errors) {
  if (!config_.reflexes.is_object() || config_.reflexes.empty()) return {};
  auto rules = reflexes::ParseRuleFile(config_.reflexes, MakeRuleContext());
  if (!rules.ok()) {
    errors->push_back(rules.status().WithContext(config_.reflexes_file).message());
    return {};
  }
  return std::move(rules).value();
}

void Runtime::MakeSensors(std::vector<std::string>* errors) {
  for (auto it = config_.sensors.begin(); it != config_.sensors.end(); ++it) {
    std::string name = it.key();
    // Sinks run only once the sensor is started, after the engine is open.
    auto sink = [this, actor = "sensor:" + name](json request, sensors::Committed done) -> Status {
      if (stopping_) return Status::Unavailable("shutting down");
      return SubmitCommand(*engine_, state::BuildPerceptAdd(request, engine_->next_seq()),
                           {actor, &config_.effectors}, std::move(done));
    };
    auto sensor = sensors::MakeSensor(name, it.value(), ioc_, sink, log_);
    if (!sensor.ok()) {
      errors->push_back(sensor.status().message());
      continue;
    }
    sensors_.emplace(name, std::move(sensor).value());
  }
}

void Runtime::RegisterSubscribers() {
  subscribers_ = {
      {"hub", [this](std::span<const Event> events) { hub_->Publish(events); }},
      {"metrics",
       [this](std::span<const Event> events) {
         metrics_.Add("limbic_events_applied_total", "", static_cast<double>(events.size()));
         metrics_.Observe("limbic_group_events", "", static_cast<double>(events.size()));
         for (const Event& e : events)
           if (e.type == EventType::kReflexFired)  // already recorded when planned
             metrics_.Add("limbic_reflex_fires_total", "reflex=\"" + e.Str("reflex_id") + "\"");
       }},
      {"arousal",
       [this](std::span<const Event> events) {
         for (const Event& e : events)
           if (e.type == EventType::kArousalSet || e.type == EventType::kArousalFactorSet)
             arousal_cache_at_ = -1;
       }},
      // A standby's reflexes fired on its primary: their events are in the stream.
      {"reflexes",
       [this](std::span<const Event> events) {
         if (!following_) OnAppliedReflexes(events);
       }},
      {"outbox",
       [this](std::span<const Event> events) {
         if (!following_) outbox_->OnEvents(events);
       }},
      {"archive", [this](std::span<const Event> events) { archive_->OnApplied(events); }},
      {"mind",
       [this](std::span<const Event> events) {
         if (mind_ && !following_) mind_->OnApplied(events);
       }},
      {"checkpoints", [this](std::span<const Event> events) { checkpoints_->OnApplied(events); }},
      // After the memory store's own listener (added when it opened) has
      // queued the new vectors.
      {"memory-graph", [this](std::span<const Event>) { ScheduleIndexStep(); }},
  };
  engine_->AddListener([this](std::span<const Event> events) {
    for (const AppliedSubscriber& subscriber : subscribers_) subscriber.on_applied(events);
  });
}

double Runtime::EffectiveArousal() {
  TimeMs now = engine_->clock().Now();
  if (arousal_cache_at_ >= 0 && now - arousal_cache_at_ < 250) return arousal_cache_;
  auto effective = EffectiveArousalNow(engine_->projection(), now, config_.recency);
  if (!effective.ok()) return arousal_cache_;
  arousal_cache_ = *effective;
  arousal_cache_at_ = now;
  return arousal_cache_;
}

void Runtime::ScheduleIndexStep() {
  if (index_step_posted_ || stopping_ || !memory_ || memory_->IndexBacklog() == 0) return;
  index_step_posted_ = true;
  boost::asio::post(ioc_, [this] {
    index_step_posted_ = false;
    if (stopping_ || !memory_) return;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kIndexSliceMs);
    do {
      if (Status s = memory_->IndexStep(kIndexStepInserts); !s.ok()) {
        log_->warn("memory: {}; recall scores the vectors exactly until the graph is built again",
                   s.ToString());
        break;
      }
    } while (memory_->IndexBacklog() > 0 && std::chrono::steady_clock::now() < until);
    ScheduleIndexStep();
  });
}

void Runtime::SchedulePrune() {
  const TimeMs shortest = std::min(config_.outbox.retention, config_.percepts_dedup_window);
  TimeMs every = std::clamp<TimeMs>(shortest / 10, 1000, 600000);
  prune_timer_.expires_after(std::chrono::milliseconds(every));
  prune_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopping_) return;
    auto events = state::BuildActionsPrune(engine_->projection(), config_.outbox.retention,
                                           engine_->clock().Now());
    if (events.ok()) {
      Status s = SubmitCommand(*engine_, std::move(events), {"outbox"}, nullptr);
      if (!s.ok()) log_->warn("outbox: pruning failed: {}", s.message());
    }
    PruneDedup();
    SchedulePrune();
  });
}

void Runtime::PruneDedup() {
  auto events = state::BuildDedupPrune(engine_->projection(), engine_->pending_view(),
                                       config_.percepts_dedup_window, engine_->clock().Now());
  Status s = events.ok() ? Status::OK() : events.status();
  if (s.ok() && !events->empty()) s = engine_->Submit(std::move(events).value(), nullptr);
  if (!s.ok()) log_->warn("percepts: pruning the dedup pool failed: {}", s.message());
}

void Runtime::DeclareMetrics() {
  using T = Metrics::Type;
  metrics_.Declare("limbic_events_applied_total", T::kCounter, "events durable and applied");
  metrics_.Declare("limbic_group_events", T::kHistogram, "events per commit group",
                   {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096});
  metrics_.Declare(
      "limbic_fsync_seconds", T::kHistogram, "events log fdatasync latency",
      {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1});
  metrics_.Declare("limbic_pool_records", T::kGauge, "records per pool");
  metrics_.Declare("limbic_outbox_actions", T::kGauge, "outbox actions by status");
  metrics_.Declare("limbic_reflex_fires_total", T::kCounter, "reflex firings by rule");
  metrics_.Declare("limbic_reflex_rules", T::kGauge, "reflex rules loaded");
  metrics_.Declare("limbic_sensor_percepts_total", T::kCounter,
                   "sensor inputs received (accepted or rejected)");
  metrics_.Declare("limbic_sensor_dropped_total", T::kCounter,
                   "percepts dropped by a full sensor queue");
  metrics_.Declare("limbic_sensor_rejected_total", T::kCounter, "sensor input rejected as invalid");
  metrics_.Declare("limbic_applied_seq", T::kGauge, "last applied event seq");
  metrics_.Declare("limbic_archive_unreadable_days", T::kGauge,
                   "archive days that cannot be read (the archive is degraded when > 0)");
  metrics_.Declare("limbic_http_connections", T::kGauge,
                   "HTTP connections open: idle (waiting for a request), busy, stream (SSE)");
  if (config_.checkpoints.enabled) {  // with none taken, none of them is shown
    metrics_.Declare("limbic_checkpoint_seq", T::kGauge,
                     "seq of the newest checkpoint of the pools (0 = none)");
    metrics_.Declare("limbic_checkpoints", T::kGauge, "checkpoints kept on disk");
    metrics_.Declare("limbic_checkpoint_seconds", T::kGauge, "how long the last checkpoint took");
    metrics_.Declare("limbic_checkpoints_taken_total", T::kCounter,
                     "checkpoints taken since the runtime started");
    metrics_.Declare("limbic_checkpoint_failures_total", T::kCounter,
                     "checkpoints that failed to be taken since the runtime started");
  }
  metrics_.Declare("limbic_memory_graph_backlog", T::kGauge,
                   "memories whose vectors wait to go into the HNSW graph (recall scores them "
                   "exactly meanwhile)");
  metrics_.AddCollector([this](Metrics& m) {
    if (http_) {
      HttpServer::Counts c = http_->counts();
      m.Set("limbic_http_connections", "state=\"idle\"", static_cast<double>(c.idle));
      m.Set("limbic_http_connections", "state=\"busy\"", static_cast<double>(c.busy));
      m.Set("limbic_http_connections", "state=\"stream\"", static_cast<double>(c.streams));
    }
    if (archive_)
      m.Set("limbic_archive_unreadable_days", "",
            static_cast<double>(archive_->unreadable().size()));
    // Kept in step with the commits (no pool is read here); absent until
    // counted, at start, on a worker.
    if (auto counts = engine_->projection().Counts()) {
      for (size_t i = 0; i < std::size(state::kAllPools); ++i)
        m.Set("limbic_pool_records",
              "pool=\"" + std::string(state::PoolName(state::kAllPools[i])) + "\"",
              static_cast<double>(counts->pools[i]));
      for (size_t i = 0; i < state::kActionStatuses.size(); ++i)
        m.Set("limbic_outbox_actions", "status=\"" + std::string(state::kActionStatuses[i]) + "\"",
              static_cast<double>(counts->actions[i]));
    }
    m.Set("limbic_reflex_rules", "", static_cast<double>(reflexes_.List().size()));
    if (memory_) m.Set("limbic_memory_graph_backlog", "", static_cast<double>(memory_->IndexBacklog()));
    m.Set("limbic_applied_seq", "", static_cast<double>(engine_->applied_seq()));
    if (checkpoints_ && config_.checkpoints.enabled) {
      m.Set("limbic_checkpoint_seq", "", static_cast<double>(checkpoints_->last_seq()));
      m.Set("limbic_checkpoints", "", static_cast<double>(checkpoints_->kept()));
      m.Set("limbic_checkpoint_seconds", "", checkpoints_->last_seconds());
      m.Set("limbic_checkpoints_taken_total", "", static_cast<double>(checkpoints_->taken()));
      m.Set("limbic_checkpoint_failures_total", "", static_cast<double>(checkpoints_->failed()));
    }
    for (const auto& [name, sensor] : sensors_) {
      auto st = sensor->stats();
      std::string l = "sensor=\"" + name + "\"";
      m.Set("limbic_sensor_percepts_total", l, static_cast<double>(st.received));
      m.Set("limbic_sensor_dropped_total", l, static_cast<double>(st.dropped));
      m.Set("limbic_sensor_rejected_total", l, static_cast<double>(st.rejected));
    }
  });
  CollectReplicationMetrics();
}

void Runtime::Stop() {
  if (stopping_) return;
  stopping_ = true;
  log_->info("stopping: no new intake; finishing in-flight work");
  ShutdownStep(0);
}

// Each step runs when the previous one is done.
void Runtime::ShutdownStep(int step) {
  switch (step) {
    case 0:  // stop intake
      if (mind_) mind_->Stop();  // a session ends "interrupted", recorded before the flush
      if (http_) http_->StopAccepting();
      if (follower_) follower_->Stop();
      for (auto& [name, sensor] : sensors_) sensor->Stop();
      prune_timer_.cancel();
      cursor_timer_.cancel();
      if (archive_) archive_->Stop();
      if (world_) world_->Stop();
      outbox_->Stop(config_.outbox.shutdown_grace, [this] { ShutdownStep(1); });
      return;
    case 1:  // finish in-flight requests
      hub_->Close();
      if (!http_) return ShutdownStep(2);
      http_->Shutdown(2000, [this] { ShutdownStep(2); });
      return;
    case 2: {  // flush and close
      Status s = FlushForExit();
      if (!s.ok()) {
        log_->error("flushing the events log: {}", s.ToString());
        exit_code_ = 1;
      }
      // What is durable goes to the stream while there is time.
      if (replicator_) replicator_->Stop(static_cast<int>(config_.replication.timeout));
      signals_.cancel();
      // Gone before the lock is released, so no newcomer reads our address.
      if (api_file_written_) {
        Status removed = Env::Default()->RemoveFile(ApiFilePath(config_.state_dir));
        if (!removed.ok()) log_->warn("removing api.json: {}", removed.message());
      }
      log_->info("{}", StoppedLine(*engine_));
      ioc_.stop();
      return;
    }
  }
}

std::string Runtime::LocalUrl() const {
  // A wildcard address is reached on loopback; IPv6 literals need brackets.
  std::string host = config_.api_address;
  if (host.empty() || host == "0.0.0.0")
    host = "127.0.0.1";
  else if (host == "::")
    host = "[::1]";
  else if (host.find(':') != std::string::npos)
    host = "[" + host + "]";
  return "http://" + host + ":" + std::to_string(http_->port());
}

// When the API's address is taken by the runtime that already serves this
// state dir (its api.json says so), say so: starting twice is the usual cause.
std::string Runtime::ApiFileHint() const {
  auto text = Env::Default()->ReadFileToString(ApiFilePath(config_.state_dir));
  if (!text.ok()) return "";
  auto doc = json::parse(*text, nullptr, false);
  if (!doc.is_object() || !doc["url"].is_string() || !doc["pid"].is_number_integer()) return "";
  const std::string url = doc["url"].get<std::string>();
  if (!url.ends_with(":" + std::to_string(config_.api_port))) return "";
  return " (" + ApiFilePath(config_.state_dir) + " says limbic pid " +
         std::to_string(doc["pid"].get<int64_t>()) + " serves this state dir at " + url + ")";
}

// A failure here costs only discovery by `limbic mcp`, so it is not fatal.
void Runtime::WriteApiFile() {
  json doc = {{"pid", static_cast<int64_t>(::getpid())},
              {"url", LocalUrl()},
              {"body_limit", config_.body_limit}};
  Status s = Env::Default()->WriteFileAtomic(ApiFilePath(config_.state_dir), doc.dump() + "\n",
                                             FileDurability::kSynced);
  if (!s.ok()) log_->warn("writing api.json: {}", s.message());
  api_file_written_ = s.ok();
  // What the command line checks offline actions against (config.h).
  Status e = Env::Default()->WriteFileAtomic(EffectorsFilePath(config_.state_dir),
                                             EffectorsSummary(config_.effectors).dump(2) + "\n",
                                             FileDurability::kDerived);
  if (!e.ok()) log_->warn("writing effectors.json: {}", e.message());
}

int Runtime::Run() {
  // A program that exits (or closes its stdin) before reading all we write
  // to it -- an exec effector's payload, an exec mind's wake -- is an EPIPE
  // for the writer, not a signal that ends the runtime. Its children get
  // every signal at its default again (base/subprocess.h).
  std::signal(SIGPIPE, SIG_IGN);
  Status s = Open();
  if (!s.ok()) {
    log_->error("cannot start: {}", s.message());
    std::fprintf(stderr, "limbic: error: %s\n", s.message().c_str());
    return 1;
  }
  // Before the "running" line, so whoever reads that finds the file.
  WriteApiFile();
  if (on_listening_) on_listening_(LocalUrl());
  std::string sensors, effectors;
  for (const auto& [name, sensor] : sensors_)
    sensors += (sensors.empty() ? "" : ", ") + name + " (" + sensor->kind() + ")";
  for (auto it = config_.effectors.begin(); it != config_.effectors.end(); ++it)
    effectors += (effectors.empty() ? "" : ", ") + it.key() + " (" +
                 it.value()["kind"].get<std::string>() + ")";
  std::string sandbox;
  if (following_)
    sandbox = "; a hot STANDBY of agent " + config_.replication.agent + " on stream " +
              config_.replication.stream +
              ": writes are refused, sensors and the outbox wait for a promotion";
  else if (sandbox_)
    sandbox = "; a SANDBOX forked from " + sandbox_->forked_from + " at seq " +
              std::to_string(sandbox_->at_seq) + ": effectors only record to " +
              DryRunFilePath(config_.state_dir) + ", the reflexes file is " +
              (sync_rules_ ? "synced" : "not synced (--sync-rules)");
  log_->info(
      "limbic {} running: state {}, api http://{}:{}, embedder {}, sensors [{}], effectors [{}], "
      "{} reflex rules, seq {}{}",
      LIMBIC_VERSION, config_.state_dir, config_.api_address, http_->port(),
      memory_->embedder().id(), sensors, effectors, reflexes_.List().size(), engine_->applied_seq(),
      sandbox);
  signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    log_->info("signal {} received", sig);
    Stop();
  });
  ScheduleIndexStep();  // what the memory store's open queued (a graph not saved, or stale)
  ioc_.run();
  return exit_code_;
}

}  // namespace limbic::runtime
