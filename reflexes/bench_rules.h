// Realistic synthetic rule sets, for the matcher benchmark and tests.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace limbic::reflexes {

// `n` rules: rule i watches source "s<i % 50>", type "t<i % 20>", matches
// the word "w<i>" in the text (capturing what follows it) and sends to the
// first effector.
inline std::vector<nlohmann::json> GenerateRules(size_t n, const std::vector<std::string>& effectors) {
  std::vector<nlohmann::json> rules;
  for (size_t i = 0; i < n; ++i) {
    rules.push_back({{"id", "rule-" + std::to_string(i)},
                     {"priority", static_cast<int>(i % 7)},
                     {"when", {{"source", "s" + std::to_string(i % 50)},
                               {"type", "t" + std::to_string(i % 20)},
                               {"pattern", "\\bw" + std::to_string(i) + "\\b(?P<rest>.*)"}}},
                     {"then", {{{"send", {{"effector", effectors.front()}, {"type", "ack"},
                                          {"payload", {{"rest", "{{match.rest}}"}}}}}}}}});
  }
  return rules;
}

}  // namespace limbic::reflexes
