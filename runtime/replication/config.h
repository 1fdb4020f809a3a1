// The `replication` section of the config (docs/config.md, docs/scale.md):
// what the replicator and the follower need, parsed by runtime/config.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/time.h"

namespace limbic::runtime {

// Replication of the events log on NATS JetStream (runtime/replication/;
// docs/scale.md). Off while `nats` is empty.
struct ReplicationConfig {
  enum class Mode { kAsync, kQuorum };
  std::vector<std::string> nats;  // server URLs, "nats://HOST:PORT"
  std::string stream = "LIMBIC";  // this agent's own stream
  std::string agent;              // required: the subject is limbic.<agent>.events
  Mode mode = Mode::kAsync;
  // async: healthz says degraded while more events than this wait.
  uint64_t max_lag = 10000;
  // How long publishing may keep failing (a leader election, NATS down)
  // before quorum mode refuses writes and answers the held ones 503.
  TimeMs timeout = 5000;
  bool enabled() const { return !nats.empty(); }
  // "limbic.<agent>.events"
  std::string subject() const { return "limbic." + agent + ".events"; }
};
inline std::string_view ReplicationModeName(ReplicationConfig::Mode mode) {
  return mode == ReplicationConfig::Mode::kQuorum ? "quorum" : "async";
}

}  // namespace limbic::runtime
