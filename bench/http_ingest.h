// Percepts over HTTP into a real `limbic run`: the end-to-end ingest figure;
// and healthz latency during a large memory ingest (RunIngestHealth).
//
// Starts the binary on a scratch state dir with a config that serves on a
// free loopback port (durability as asked), opens `connections` keep-alive
// connections, each posting one percept and waiting for its 201 (durable)
// before the next, and counts what was acknowledged after a warm-up.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace limbic::bench {

// `limbic run` on a scratch dir, its output drained to <dir>/limbic.log so
// it never blocks; SIGTERMed and waited for when this goes out of scope.
struct RunningLimbic {
  pid_t pid = -1;
  int out = -1;
  uint16_t port = 0;  // its API's
  std::thread drain;
  RunningLimbic() = default;
  RunningLimbic(const RunningLimbic&) = delete;
  RunningLimbic& operator=(const RunningLimbic&) = delete;
  ~RunningLimbic();
};

// Starts `limbic` with `config` (api.port 0, no reflexes, a log effector
// added) written to <dir>/limbic.json and its state in <dir>/state, and
// returns once its startup line has named the port.
Status StartLimbic(const std::string& limbic, const std::string& dir, nlohmann::json config,
                   RunningLimbic* r);

// CPU seconds (user + system, all threads) process `pid` has used so far;
// 0 when it cannot be read.
double CpuSeconds(pid_t pid);

struct HttpIngestOptions {
  std::string limbic;  // path of the limbic binary
  std::string dir;     // scratch dir (config and state go here)
  int connections = 64;
  double warmup_s = 1;
  double seconds = 5;
  std::string durability = "fsync";
  // 0: one percept per POST /v1/percepts (201 each); N: N per POST
  // /v1/percepts/batch, every accepted one counted.
  int batch = 0;
  // Merged into the config (e.g. a "replication" section).
  nlohmann::json extra_config = nlohmann::json::object();
};

struct HttpIngestResult {
  uint64_t percepts = 0;  // acknowledged (201, or accepted in a batch) after the warm-up
  uint64_t failed = 0;    // any other answer
  double seconds = 0;
  std::vector<double> latency_us;  // per acknowledged request
  double limbic_cpu_s = 0;  // CPU (user + system) the runtime used after the warm-up
};

Result<HttpIngestResult> RunHttpIngest(const HttpIngestOptions& options);

// A large memory ingest through the real API (POST /v1/memory/ingest of a
// folder of `files` Markdown files under memory.ingest_roots) while another
// client asks GET /healthz every 10 ms on fresh connections: how long the
// ingest takes, and whether the loop stays responsive meanwhile.
struct IngestHealthOptions {
  std::string limbic;
  std::string dir;
  int files = 4000;
  int file_bytes = 2000;
};

struct IngestHealthResult {
  int ingest_status = 0;  // the ingest's HTTP status (201)
  size_t files_ingested = 0;
  double ingest_seconds = 0;
  std::vector<double> healthz_ms;  // each healthz answered 200 during the ingest
  uint64_t healthz_failed = 0;
};

Result<IngestHealthResult> RunIngestHealth(const IngestHealthOptions& options);

// GET /v1/attention through the real binary on a state dir the caller has
// filled (`dir`/state): `requests` requests one after another on one
// keep-alive connection, after `warmup` of them.
struct AttentionOptions {
  std::string limbic;
  std::string dir;
  int warmup = 50;
  int requests = 2000;
};

struct AttentionResult {
  std::vector<double> latency_us;  // per 200 answer
  uint64_t failed = 0;
  size_t unassigned = 0;  // percepts in the last answer's `unassigned`
};

Result<AttentionResult> RunAttention(const AttentionOptions& options);

// A consolidation pass through the real binary over `percepts` expired
// percepts (new, low intensity, a day and more old; replayed into the
// state dir first), which it expires and then digests into the archive,
// while another client asks GET /healthz every `interval_ms` on fresh
// connections: the pass's time, healthz latency meanwhile, the runtime's
// memory (VmRSS before, at most during, after), and the percepts left in
// the pool when it is over.
struct ConsolidateHealthOptions {
  std::string limbic;
  std::string dir;
  size_t percepts = 1'000'000;
  int interval_ms = 5;
};

struct ConsolidateHealthResult {
  int status = 0;          // POST /v1/consolidate's HTTP status
  nlohmann::json answer;   // its body: {entries, threads, percepts, actions, expired}
  double load_seconds = 0; // building the state dir (replay of the generated log)
  double pass_seconds = 0;
  std::vector<double> healthz_ms;  // each healthz answered 200 during the pass
  uint64_t healthz_failed = 0;
  double rss_before_mib = 0, rss_max_mib = 0, rss_after_mib = 0;
  size_t percepts_left = 0;  // records in the percept pool after the pass
};

Result<ConsolidateHealthResult> RunConsolidateHealth(const ConsolidateHealthOptions& options);

}  // namespace limbic::bench
