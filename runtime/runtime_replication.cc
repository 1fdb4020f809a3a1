// The runtime's side of replication (docs/scale.md): starting as a hot
// standby, promotion to primary, and the replication gauges of /metrics.
// The replicator and the follower (runtime/replication/) know nothing of
// Prometheus; the loop reads their snapshots when /metrics is rendered.
#include "base/env.h"
#include "runtime/runtime.h"

namespace limbic::runtime {

using nlohmann::json;

Status Runtime::StartStandby() {
  const ReplicationConfig& rc = config_.replication;
  // A standby dir follows one agent's stream for good: a follow of another
  // one is refused before standby.json is rewritten (an offline promote
  // checks the log against the stream that file names). The servers and
  // the mode may change.
  const std::string standby_file = StandbyFilePath(config_.state_dir);
  if (Env::Default()->FileExists(standby_file)) {
    auto text = ReadSmallFile(standby_file, 64 << 10);
    const json was = text.ok() ? json::parse(*text, nullptr, false) : json();
    if (was.is_object() && was.value("agent", "") != "" && was.value("stream", "") != "" &&
        (was.value("agent", "") != rc.agent || was.value("stream", "") != rc.stream))
      return Status::FailedPrecondition(
          config_.state_dir + " is the standby of agent " + was.value("agent", "") + " on stream " +
          was.value("stream", "") + " (" + standby_file + "), not of agent " + rc.agent +
          " on stream " + rc.stream + ": follow that one, or follow into an empty state dir");
  }
  engine_->set_write_gate(
      Status::Unavailable("this is a hot standby of agent " + rc.agent +
                          " (limbic follow): it takes no writes; write to the "
                          "primary, or promote this one (limbic promote, POST /v1/promote)"));
  // What `limbic promote` needs when this process is gone.
  Status w = Env::Default()->WriteFileAtomic(standby_file,
                                             json{{"nats", rc.nats},
                                                  {"stream", rc.stream},
                                                  {"agent", rc.agent},
                                                  {"mode", ReplicationModeName(rc.mode)}}
                                                     .dump() +
                                                 "\n",
                                             FileDurability::kSynced);
  if (!w.ok()) log_->warn("writing standby.json: {}", w.message());
  follower_ = std::make_unique<Follower>(
      ioc_, *engine_, Follower::Options{rc.nats, rc.stream, rc.agent, rc.timeout}, log_);
  LIMBIC_RETURN_IF_ERROR(follower_->Start());
  DeclareReplicationMetrics();
  return Status::OK();
}

void Runtime::Promote(std::function<void(Status, json)> done) {
  if (!following_ || !follower_ || promoting_)
    return done(
        Status::FailedPrecondition(promoting_ ? "a promotion is under way"
                                              : "this limbic is not a standby (limbic follow)"),
        json());
  promoting_ = true;
  log_->info("promotion: applying the stream through its last event");
  // The follower claims the stream (primary_promoted, published first and
  // then applied from it); a refusal leaves it following (runtime/replication/follower.h).
  follower_->Promote(20000, [this, done](Status s, Follower::Promoted promoted) {
    promoting_ = false;
    if (stopping_) return done(Status::Unavailable("shutting down"), json());
    if (!s.ok()) {
      log_->warn("promotion refused: {}", s.message());
      return done(s.WithContext("not promoted, still a standby"), json());
    }
    follower_->Stop();
    follower_.reset();
    following_ = false;
    // The stream names this one the primary now: whatever fails below, it
    // is no longer a standby.
    (void)Env::Default()->RemoveFile(StandbyFilePath(config_.state_dir));
    // The reflexes as the stream left them.
    for (const reflexes::Rule* rule : reflexes_.List())
      (void)reflexes_.Remove(std::string(rule->id));
    engine_->set_write_gate(Status::OK());
    if (Status l = LoadReflexes(file_rules_, false); !l.ok())
      log_->warn("promotion: loading the reflexes: {}", l.message());
    // As at a start, before the replicator: the percepts the old primary
    // took after its last reflex cursor are evaluated, and the cursor
    // recorded, while the write gate is open (in quorum mode the replicator
    // closes it until it has checked the stream; the replicator publishes
    // these events once it has).
    uint64_t after = 0;
    Status started = CatchUpReflexes(&after);
    if (started.ok()) {
      replicator_ = std::make_unique<Replicator>(ioc_, *engine_, config_.replication, log_);
      started = replicator_->Start();
    }
    if (started.ok()) DeclareReplicationMetrics();
    if (started.ok()) started = StartPrimary();
    if (!started.ok()) {
      log_->error(
          "promotion: the stream took primary_promoted as seq {}, but starting the primary "
          "failed: {}",
          promoted.seq, started.message());
      return done(Status::Internal("promoted (the stream took primary_promoted as seq " +
                                   std::to_string(promoted.seq) +
                                   "), but starting the primary failed: " + started.message() +
                                   "; restart limbic run on this state dir"),
                  json());
    }
    if (mind_ && api_)
      if (Status m = mind_->Start(api_->MakeRouter()); !m.ok())
        log_->error("promotion: starting the mind: {}", m.message());
    log_->info("promoted: the primary of agent {} from seq {} (stream seq {})",
               config_.replication.agent, promoted.seq, promoted.stream_seq);
    done(Status::OK(),
         json{{"promoted", true}, {"seq", promoted.seq}, {"stream_seq", promoted.stream_seq}});
  });
}

void Runtime::DeclareReplicationMetrics() {
  if (replicator_) {
    metrics_.Declare("limbic_replication_lag_events", Metrics::Type::kGauge,
                     "durable events not yet acknowledged by JetStream");
    metrics_.Declare("limbic_replication_replicated_seq", Metrics::Type::kGauge,
                     "last event seq JetStream has acknowledged");
    metrics_.Declare("limbic_replication_connected", Metrics::Type::kGauge,
                     "1 while NATS is connected");
    metrics_.Declare("limbic_replication_fenced", Metrics::Type::kGauge,
                     "1 when another primary has written to this agent's stream");
  } else if (follower_) {
    metrics_.Declare("limbic_replication_lag_events", Metrics::Type::kGauge,
                     "events in the stream this standby has not applied yet");
    metrics_.Declare("limbic_replication_connected", Metrics::Type::kGauge,
                     "1 while NATS is connected");
  }
}

void Runtime::CollectReplicationMetrics() {
  // Collectors run on the io thread, like every change of the two pointers;
  // a gauge not declared (neither runs) takes no value.
  metrics_.AddCollector([this](Metrics& m) {
    if (replicator_) {
      Replicator::Snapshot s = replicator_->snapshot();
      m.Set("limbic_replication_lag_events", "", static_cast<double>(s.lag()));
      m.Set("limbic_replication_replicated_seq", "", static_cast<double>(s.replicated_seq));
      m.Set("limbic_replication_connected", "", s.connected ? 1 : 0);
      m.Set("limbic_replication_fenced", "", s.fenced.empty() ? 0 : 1);
    } else if (follower_) {
      Follower::Snapshot s = follower_->snapshot();
      m.Set("limbic_replication_lag_events", "", static_cast<double>(s.lag()));
      m.Set("limbic_replication_connected", "", s.connected ? 1 : 0);
    }
  });
}

}  // namespace limbic::runtime
