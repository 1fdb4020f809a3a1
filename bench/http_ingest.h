// Percepts over HTTP into a real `limbic run`: the end-to-end ingest figure.
//
// Starts the binary on a scratch state dir with a config that serves on a
// free loopback port (durability as asked), opens `connections` keep-alive
// connections, each posting one percept and waiting for its 201 (durable)
// before the next, and counts what was acknowledged after a warm-up.
#pragma once

#include <string>
#include <vector>

#include "state/status.h"

namespace limbic::bench {

struct HttpIngestOptions {
  std::string limbic;  // path of the limbic binary
  std::string dir;     // scratch dir (config and state go here)
  int connections = 64;
  double warmup_s = 1;
  double seconds = 5;
  std::string durability = "fsync";
};

struct HttpIngestResult {
  uint64_t percepts = 0;  // acknowledged (201) after the warm-up
  uint64_t failed = 0;    // any other answer
  double seconds = 0;
  std::vector<double> latency_us;  // per acknowledged request
};

Result<HttpIngestResult> RunHttpIngest(const HttpIngestOptions& options);

}  // namespace limbic::bench
