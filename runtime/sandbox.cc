#include "runtime/sandbox.h"

#include <filesystem>

#include "base/env.h"
#include "state/engine.h"
#include "state/replay.h"

namespace limbic::runtime {

using nlohmann::json;
namespace fs = std::filesystem;

json SandboxInfo::ToJson() const {
  return {{"forked_from", forked_from},
          {"at_seq", at_seq},
          {"at_time", at_time},
          {"forked_at", forked_at},
          {"digest", digest}};
}

std::string SandboxFilePath(const std::string& state_dir) { return state_dir + "/sandbox.json"; }
std::string DryRunFilePath(const std::string& state_dir) { return state_dir + "/dry-run.jsonl"; }

Result<std::optional<SandboxInfo>> ReadSandbox(const std::string& state_dir) {
  const std::string path = SandboxFilePath(state_dir);
  if (!Env::Default()->FileExists(path)) return std::optional<SandboxInfo>();
  auto text = Env::Default()->ReadFileToString(path);
  if (!text.ok()) return text.status();
  json doc = json::parse(*text, nullptr, false);
  auto bad = [&](const std::string& why) {
    return Status::Corruption(path + ": " + why + " (a sandbox's marker, written by `limbic fork`)");
  };
  if (!doc.is_object()) return bad("not a JSON object");
  SandboxInfo info;
  for (auto [key, out] : {std::pair{"forked_from", &info.forked_from}, std::pair{"at_time", &info.at_time},
                          std::pair{"forked_at", &info.forked_at}, std::pair{"digest", &info.digest}}) {
    if (!doc.contains(key) || !doc[key].is_string()) return bad(std::string(key) + " must be a string");
    *out = doc[key].get<std::string>();
  }
  if (!doc.contains("at_seq") || !doc["at_seq"].is_number_unsigned())
    return bad("at_seq must be a non-negative integer");
  info.at_seq = doc["at_seq"].get<uint64_t>();
  return std::optional<SandboxInfo>(std::move(info));
}

Result<SandboxInfo> Fork(const ForkOptions& options) {
  if (options.at_seq.has_value() == options.at_time.has_value())
    return Status::InvalidArgument("give one of --at-seq and --at-time");
  if (options.at_seq && *options.at_seq == 0)
    return Status::InvalidArgument("--at-seq: must be 1 or more (the first event's seq)");
  state::ReplayOptions replay;
  replay.from = state::EventsDirPath(options.from_state);
  replay.into = options.into;
  replay.until_seq = options.at_seq;
  replay.until_time = options.at_time;
  auto r = state::Replay(replay);
  if (!r.ok()) return r.status();
  std::string short_of;
  if (options.at_seq && r->last_seq != *options.at_seq)
    short_of = "--at-seq " + std::to_string(*options.at_seq) + ": the log ends at seq " +
               std::to_string(r->last_seq);
  else if (options.at_time && r->events == 0)
    short_of = "--at-time " + FormatTime(*options.at_time) + ": the log has no event at or before it";
  if (!short_of.empty()) {
    // Take back what the replay built: nothing of it is the fork asked for.
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(options.into, ec)) fs::remove_all(entry.path(), ec);
    return Status::InvalidArgument(short_of);
  }
  SandboxInfo info;
  info.forked_from = fs::absolute(options.from_state).lexically_normal().string();
  info.at_seq = r->last_seq;
  info.at_time = FormatTime(r->last_ts);
  info.forked_at = FormatTime(options.now);
  info.digest = r->digest;
  LIMBIC_RETURN_IF_ERROR(Env::Default()->WriteFileAtomic(
      SandboxFilePath(options.into), info.ToJson().dump(2) + "\n", FileDurability::kSynced));
  return info;
}

}  // namespace limbic::runtime
