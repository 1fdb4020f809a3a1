// Benchmark results: one Row per scenario × size × system, written as a
// JSON file and as Markdown tables (docs/performance.md shows their figures).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace limbic::bench {

// The value at quantile q (0..1) of `v` (nearest rank); 0 when empty.
double Quantile(std::vector<double> v, double q);

struct Row {
  std::string scenario;  // "ingest", "mixed", ...
  size_t size = 0;       // live percepts (or events, for replay)
  std::string system;    // "limbic", "sqlite-full", ...
  std::string unit;      // "ops/s" or "ms"
  // Per repetition: throughput (ops/s) or duration (ms).
  std::vector<double> reps;
  double median = 0;       // of reps
  double p50_us = 0;       // latency of single operations, all reps pooled
  double p99_us = 0;
  uint64_t ops = 0;        // operations in the median repetition
  std::string note;
  // Driven scenarios: per kind of operation, {"count", "mean_call_us"}
  // over all repetitions (RunStats::by_op); null otherwise.
  nlohmann::json by_op;
};

nlohmann::json ToJson(const std::vector<Row>& rows);

// The systems of equal durability, as compared in the tables.
struct Comparison {
  std::string ours;                  // "limbic"
  std::vector<std::string> against;  // "json-fsync", "sqlite-full"
  std::string label;                 // "durable"
};

// One table per scenario: a row per size, a column per system (median and
// p99), and the ratio of `ours` to the best of `against` for each comparison.
std::string MarkdownTables(const std::vector<Row>& rows, const std::vector<Comparison>& comparisons);

}  // namespace limbic::bench
