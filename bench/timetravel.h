// The `timetravel` scenario of limbic_bench: looks into the past of a long
// log with checkpoints (taken as the runtime takes them: every 100,000
// events, the default retention) and without, in the same run.
#pragma once

#include <string>
#include <vector>

#include "bench/report.h"
#include "state/checkpoint.h"

namespace limbic::bench {

struct TimeTravelOptions {
  std::string log;           // an exported .jsonl (MixedLog)
  std::string dir;           // scratch dir for the state
  uint64_t every = 50000;    // checkpoints.every
  state::RetentionPolicy retention;  // checkpoints.keep and .dense
  size_t requests = 100;     // random seqs looked at with checkpoints
  size_t requests_off = 10;  // the same first seqs without (each a replay from seq 1)
  uint64_t seed = 1;
  std::string limbic;        // the binary, for ingest with checkpoints on and off
  double ingest_seconds = 5;  // per turn; 2 turns each, alternating
  uint64_t ingest_every = 20000;  // checkpoints.every while ingesting (several per turn)
  double commit_seconds = 5;      // single commits timed without, then with, checkpoints
};

// Rows: state/at with checkpoints and without (ms per look, p50/p99),
// a fork at a random seq, the time to take a checkpoint, the disk the
// checkpoints use beyond db/.
std::vector<Row> RunTimeTravel(const TimeTravelOptions& o);

}  // namespace limbic::bench
