// The replication gauges of /metrics (docs/scale.md). The replicator and the
// follower (runtime/replication/) know nothing of Prometheus; the loop reads
// their snapshots when /metrics is rendered.
#include "runtime/runtime.h"

namespace limbic::runtime {

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
