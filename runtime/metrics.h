// Metrics in the Prometheus text exposition format (GET /metrics).
//
// A family is declared once with its type and help; samples are addressed by
// a label string rendered by the caller (`effector="log"`). Gauges that are
// cheaper to compute on demand (pool sizes, queue depths) come from
// collectors that run just before rendering.
//
// Thread-safety: io thread only, except ObserveFromAnyThread-style values,
// which callers read from atomics inside a collector.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace limbic::runtime {

class Metrics {
 public:
  enum class Type { kCounter, kGauge, kHistogram };

  // `buckets` (upper bounds, ascending) only for histograms.
  void Declare(const std::string& name, Type type, std::string help,
               std::vector<double> buckets = {});
  void Add(const std::string& name, const std::string& labels = "", double by = 1);
  void Set(const std::string& name, const std::string& labels, double value);
  void Observe(const std::string& name, const std::string& labels, double value);
  // Runs before every Render(), e.g. to Set() gauges.
  void AddCollector(std::function<void(Metrics&)> collector);

  std::string Render();
  // The current value of a counter or gauge sample (0 when absent): for tests.
  double Value(const std::string& name, const std::string& labels = "") const;

 private:
  struct Histogram {
    std::vector<uint64_t> counts;  // per bucket, not cumulative
    uint64_t count = 0;
    double sum = 0;
  };
  struct Family {
    Type type;
    std::string help;
    std::vector<double> buckets;
    std::map<std::string, double> values;         // counters and gauges
    std::map<std::string, Histogram> histograms;  // by labels
  };
  Family* Find(const std::string& name);

  std::map<std::string, Family> families_;
  std::vector<std::function<void(Metrics&)>> collectors_;
};

}  // namespace limbic::runtime
