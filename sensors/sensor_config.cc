#include "sensors/sensor_config.h"

#include "state/commands.h"
#include "base/input_json.h"

namespace limbic::sensors {

using nlohmann::json;

Status KeyError(const std::string& name, const std::string& key, const std::string& why) {
  return Status::InvalidArgument("sensors." + name + "." + key + ": " + why);
}

Status CheckKeys(const std::string& name, const json& cfg,
                 std::initializer_list<const char*> known) {
  for (auto it = cfg.begin(); it != cfg.end(); ++it) {
    bool ok = it.key() == "kind";
    for (const char* k : known) ok = ok || it.key() == k;
    if (!ok) return KeyError(name, it.key(), "unknown key (see docs/sensors.md)");
  }
  return Status::OK();
}

Result<QueueConfig> ParseQueueConfig(const std::string& name, const json& cfg, Overflow dflt,
                                     bool allow_block) {
  QueueConfig q;
  q.overflow = dflt;
  if (auto it = cfg.find("queue"); it != cfg.end()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > 1000000)
      return KeyError(name, "queue", "must be an integer in [1, 1000000], got " + it->dump());
    q.capacity = it->get<size_t>();
  }
  const char* dflt_name = dflt == Overflow::kDropNewest   ? "drop_newest"
                          : dflt == Overflow::kDropOldest ? "drop_oldest"
                                                          : "block";
  auto of =
      allow_block
          ? ChoiceKey(name, cfg, "overflow", dflt_name, {"drop_oldest", "drop_newest", "block"})
          : ChoiceKey(name, cfg, "overflow", dflt_name, {"drop_oldest", "drop_newest"});
  if (!of.ok()) return of.status();
  q.overflow = *of == "drop_newest"   ? Overflow::kDropNewest
               : *of == "drop_oldest" ? Overflow::kDropOldest
                                      : Overflow::kBlock;
  return q;
}

Result<TimeMs> DurationKey(const std::string& name, const json& cfg, const char* key, TimeMs dflt,
                           TimeMs min) {
  auto it = cfg.find(key);
  if (it == cfg.end()) return dflt;
  Result<TimeMs> d = DurationFromJson(*it);
  if (!d.ok() || *d < min)
    return KeyError(name, key,
                    "must be a duration of at least " + std::to_string(min) +
                        "ms and at most 100 years, such as \"30s\" or an integer of milliseconds, got " +
                        it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return *d;
}

Result<std::string> ChoiceKey(const std::string& name, const json& cfg, const char* key,
                              const char* dflt, std::initializer_list<const char*> allowed) {
  auto it = cfg.find(key);
  if (it == cfg.end()) return std::string(dflt);
  std::string list;
  for (const char* a : allowed) {
    if (it->is_string() && it->get<std::string>() == a) return std::string(a);
    list += std::string(list.empty() ? "" : ", ") + "\"" + a + "\"";
  }
  return KeyError(name, key, "must be one of " + list + ", got " + it->dump());
}

Status CheckPerceptField(const std::string& name, const std::string& key, const std::string& field,
                         const json& value) {
  json req = {{"source", "-"}, {"type", "-"}};
  req[field] = value;
  auto built = state::BuildPerceptAdd(req, 1);
  if (built.ok()) return Status::OK();
  // 'field "intensity": must be ...' -> 'must be ...': the key names it.
  std::string why = built.status().message();
  std::string prefix = "field \"" + field + "\": ";
  if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
  return KeyError(name, key, why);
}

}  // namespace limbic::sensors
