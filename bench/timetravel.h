// The `timetravel` scenario of limbic_bench: looks into the past of a long
// log with checkpoints (taken as the runtime takes them: `every`, the
// default 50,000 events, and the default retention) and without, in the same run.
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
  double ingest_seconds = 5;  // per turn
  int ingest_turns = 2;       // turns each with checkpoints off and on, alternating
  double commit_seconds = 5;      // single commits timed without, then with, checkpoints
};

// Rows: state/at with checkpoints and without (ms per look, p50/p99),
// a fork at a random seq, the time to take a checkpoint, the disk the
// checkpoints use beyond db/; commits timed during checkpoints; HTTP
// ingest with checkpoints on (every `every` events) and off, in turns.
std::vector<Row> RunTimeTravel(const TimeTravelOptions& o);

}  // namespace limbic::bench
