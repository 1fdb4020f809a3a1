// Realistic synthetic rule sets, for the matcher benchmark and tests.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace limbic::reflexes {

// `n` rules: rule i watches source "s<i % sources>", type "t<i % types>",
// matches the word "w<i>" in the text (capturing what follows it) and sends
// to the first effector. The defaults spread rules over 100 buckets (the
// (source, type) pairs repeat every lcm(50, 20) = 100 rules); sources =
// types = 1 puts them all in one bucket, the matcher's worst case.
inline std::vector<nlohmann::json> GenerateRules(size_t n, const std::vector<std::string>& effectors,
                                                 size_t sources = 50, size_t types = 20) {
  std::vector<nlohmann::json> rules;
  for (size_t i = 0; i < n; ++i) {
    rules.push_back({{"id", "rule-" + std::to_string(i)},
                     {"priority", static_cast<int>(i % 7)},
                     {"when", {{"source", "s" + std::to_string(i % sources)},
                               {"type", "t" + std::to_string(i % types)},
                               {"pattern", "\\bw" + std::to_string(i) + "\\b(?P<rest>.*)"}}},
                     {"then", {{{"send", {{"effector", effectors.front()}, {"type", "ack"},
                                          {"payload", {{"rest", "{{match.rest}}"}}}}}}}}});
  }
  return rules;
}

}  // namespace limbic::reflexes
