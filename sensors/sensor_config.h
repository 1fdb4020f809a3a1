// Checking sensor config objects when they are loaded (internal to
// sensors/). Every error names the key: "sensors.NAME.KEY: why".
#pragma once

#include <initializer_list>
#include <string>

#include "sensors/builtin.h"
#include "base/time.h"

namespace limbic::sensors {

Status KeyError(const std::string& name, const std::string& key, const std::string& why);

// Any key besides "kind" and `known` is an error.
Status CheckKeys(const std::string& name, const nlohmann::json& cfg,
                 std::initializer_list<const char*> known);

// "queue" (a positive integer, default 1024) and "overflow" ("drop_oldest",
// "drop_newest" or, with `allow_block`, "block"; default `dflt`).
struct QueueConfig {
  size_t capacity = 1024;
  Overflow overflow = Overflow::kDropOldest;
};
Result<QueueConfig> ParseQueueConfig(const std::string& name, const nlohmann::json& cfg,
                                     Overflow dflt, bool allow_block);

// A duration key: "250ms", "30s", ... or an integer number of milliseconds,
// at least `min`; `dflt` when absent.
Result<TimeMs> DurationKey(const std::string& name, const nlohmann::json& cfg, const char* key,
                           TimeMs dflt, TimeMs min);

// A string key that must be one of `allowed`; `dflt` when absent.
Result<std::string> ChoiceKey(const std::string& name, const nlohmann::json& cfg, const char* key,
                              const char* dflt, std::initializer_list<const char*> allowed);

// A percept request field given as a literal in the config (a timer's
// intensity, a webhook literal, an entry of `defaults`), checked exactly as
// POST /v1/percepts checks it; the error names `key`.
Status CheckPerceptField(const std::string& name, const std::string& key, const std::string& field,
                         const nlohmann::json& value);

}  // namespace limbic::sensors
