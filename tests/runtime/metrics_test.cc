#include "runtime/metrics.h"

#include <catch2/catch.hpp>

// This file's own namespace: test programs compile in unity batches.
namespace metrics_test {

using limbic::runtime::Metrics;

TEST_CASE("metrics render in Prometheus text format", "[metrics]") {
  Metrics m;
  m.Declare("limbic_things_total", Metrics::Type::kCounter, "things");
  m.Declare("limbic_depth", Metrics::Type::kGauge, "depth");
  m.Declare("limbic_latency_seconds", Metrics::Type::kHistogram, "latency", {0.001, 0.01, 0.1});
  m.Add("limbic_things_total", "kind=\"a\"");
  m.Add("limbic_things_total", "kind=\"a\"", 2);
  m.Add("limbic_undeclared_total");  // ignored, not a crash
  m.AddCollector([](Metrics& self) { self.Set("limbic_depth", "", 7); });
  m.Observe("limbic_latency_seconds", "", 0.005);
  m.Observe("limbic_latency_seconds", "", 0.5);
  std::string text = m.Render();
  CHECK_THAT(text, Catch::Contains("# TYPE limbic_things_total counter\n"));
  CHECK_THAT(text, Catch::Contains("limbic_things_total{kind=\"a\"} 3\n"));
  CHECK_THAT(text, Catch::Contains("limbic_depth 7\n"));
  CHECK_THAT(text, Catch::Contains("limbic_latency_seconds_bucket{le=\"0.001\"} 0\n"));
  CHECK_THAT(text, Catch::Contains("limbic_latency_seconds_bucket{le=\"0.01\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("limbic_latency_seconds_bucket{le=\"+Inf\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("limbic_latency_seconds_count 2\n"));
  CHECK(m.Value("limbic_things_total", "kind=\"a\"") == 3);
  CHECK(text.find("undeclared") == std::string::npos);
}

}  // namespace metrics_test
