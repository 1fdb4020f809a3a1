// Recency formulas with an injected `now` and hand-computed values.
#include <catch2/catch.hpp>

#include "state/recency.h"

// This file's own namespace: test programs compile in unity batches.
namespace decay_test {

using namespace limbic;
using namespace limbic::state;
using Catch::Detail::Approx;

namespace {
constexpr TimeMs kNow = 1795356309000;
constexpr TimeMs kMin = 60000;
}

TEST_CASE("decay halves every half-life and never grows", "[recency]") {
  CHECK(Decay(0, 1000) == 1.0);
  CHECK(Decay(1000, 1000) == Approx(0.5));
  CHECK(Decay(3000, 1000) == Approx(0.125));
  CHECK(Decay(-5000, 1000) == 1.0);  // a future timestamp is "now"
}

TEST_CASE("effective intensity decays with age", "[recency]") {
  RecencyParams p;  // 10 min half-life
  CHECK(EffectiveIntensity(0.8, 0, p) == Approx(0.8));
  CHECK(EffectiveIntensity(0.8, 10 * kMin, p) == Approx(0.4));
  CHECK(EffectiveIntensity(0.8, 20 * kMin, p) == Approx(0.2));
  json percept = {{"id", "p-1"}, {"intensity", 0.8}, {"ts", FormatTime(kNow - 10 * kMin)}};
  json r = PerceptWithRecency(percept, kNow, p);
  CHECK(r["age_ms"] == 10 * kMin);
  CHECK(r["effective_intensity"].get<double>() == Approx(0.4));
  CHECK(r["id"] == "p-1");
}

TEST_CASE("effective salience: idle decay floors at half, unprocessed percepts lift", "[recency]") {
  RecencyParams p;  // 1 h half-life
  CHECK(EffectiveSalience(0.6, 0, 0, p) == Approx(0.6));
  CHECK(EffectiveSalience(0.6, 60 * kMin, 0, p) == Approx(0.6 * 0.75));
  CHECK(EffectiveSalience(0.6, 100 * 60 * kMin, 0, p) == Approx(0.3).epsilon(0.001));
  CHECK(EffectiveSalience(0.6, 0, 2, p) == Approx(0.8));
  CHECK(EffectiveSalience(0.6, 0, 9, p) == Approx(0.9));  // boost capped at 0.3
  CHECK(EffectiveSalience(0.95, 0, 3, p) == 1.0);         // clamped
  json t = {{"salience", 0.6}, {"last_active", FormatTime(kNow - 60 * kMin)}};
  json r = ThreadWithRecency(t, 1, kNow, p);
  CHECK(r["idle_ms"] == 60 * kMin);
  CHECK(r["unprocessed"] == 1);
  CHECK(r["effective_salience"].get<double>() == Approx(0.45 + 0.1));
}

TEST_CASE("effective arousal: level, factors and recent stimulus", "[recency]") {
  RecencyParams p;  // 15 min window, 10 min percept half-life
  json calm = {{"level", 0.5}, {"factors", {{"user_waiting", false}, {"recent_errors", 0}, {"budget_pressure", false}}}};
  CHECK(EffectiveArousal(calm, {}, kNow, p) == Approx(0.5));
  json busy = {{"level", 0.5},
               {"factors", {{"user_waiting", true}, {"recent_errors", 9}, {"budget_pressure", true},
                            {"deadline", 0.5}, {"on_call", true}, {"mood", "x"}}}};
  // 0.5 + 0.25 + 0.05*5 - 0.15 + 0.1*0.5 + 0.1 = 1.05 -> clamped
  CHECK(EffectiveArousal(busy, {}, kNow, p) == 1.0);
  json low = {{"level", 0.2}, {"factors", {{"budget_pressure", true}}}};
  CHECK(EffectiveArousal(low, {}, kNow, p) == Approx(0.05));
  std::vector<json> recent = {
      {{"intensity", 1.0}, {"ts", FormatTime(kNow)}},              // eff 1.0 -> stimulus 1
      {{"intensity", 1.0}, {"ts", FormatTime(kNow - 20 * kMin)}},  // outside the window
  };
  CHECK(EffectiveArousal(calm, recent, kNow, p) == Approx(0.8));
  std::vector<json> two = {{{"intensity", 0.5}, {"ts", FormatTime(kNow)}},
                           {{"intensity", 1.0}, {"ts", FormatTime(kNow - 10 * kMin)}}};
  // stimulus = 1 - (1-0.5)(1-0.5) = 0.75
  CHECK(EffectiveArousal(calm, two, kNow, p) == Approx(0.5 + 0.3 * 0.75));
}

}  // namespace decay_test
