// KindRegistry: the table from a config's "kind" to the factory that makes
// it -- the built-in kinds given at construction, more added at run time
// by Register (a plug-in's own kind). Sensors and effectors each keep one.
//
// Thread-safety: Register and Find from any thread.
#pragma once

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"

namespace limbic {

template <typename Factory>
class KindRegistry {
 public:
  explicit KindRegistry(std::map<std::string, Factory> builtins) : kinds_(std::move(builtins)) {}

  // Adds `kind`, or replaces the factory of a kind already there.
  void Register(const std::string& kind, Factory factory) {
    std::lock_guard<std::mutex> lock(mu_);
    kinds_[kind] = std::move(factory);
  }

  // The factory of config["kind"]. InvalidArgument "required: <kinds>"
  // when the config has no kind string, "unknown kind \"x\"" when no
  // factory has that name; the caller puts the key in front.
  Result<Factory> Find(const nlohmann::json& config, std::string_view kinds) const {
    if (!config.is_object() || !config.contains("kind") || !config["kind"].is_string())
      return Status::InvalidArgument("required: " + std::string(kinds));
    const auto& kind = config["kind"].get_ref<const std::string&>();
    std::lock_guard<std::mutex> lock(mu_);
    auto it = kinds_.find(kind);
    if (it == kinds_.end()) return Status::InvalidArgument("unknown kind \"" + kind + "\"");
    return it->second;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, Factory> kinds_;
};

}  // namespace limbic
