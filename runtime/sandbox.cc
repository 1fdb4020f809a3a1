#include "runtime/sandbox.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/env.h"
#include "base/name.h"
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
  auto text = ReadSmallFile(path, 64 << 10);  // a few hundred bytes; never a FIFO or a device
  if (!text.ok()) return text.status();
  json doc = json::parse(*text, nullptr, false);
  auto bad = [&](const std::string& why) {
    return Status::Corruption(path + ": " + why +
                              " (a sandbox's marker, written by `limbic fork`)");
  };
  if (!doc.is_object()) return bad("not a JSON object");
  SandboxInfo info;
  for (auto [key, out] :
       {std::pair{"forked_from", &info.forked_from}, std::pair{"at_time", &info.at_time},
        std::pair{"forked_at", &info.forked_at}, std::pair{"digest", &info.digest}}) {
    if (!doc.contains(key) || !doc[key].is_string())
      return bad(std::string(key) + " must be a string");
    *out = doc[key].get<std::string>();
  }
  if (!doc.contains("at_seq") || !doc["at_seq"].is_number_unsigned())
    return bad("at_seq must be a non-negative integer");
  info.at_seq = doc["at_seq"].get<uint64_t>();
  return std::optional<SandboxInfo>(std::move(info));
}

Result<std::string> ResolveForkRoot(const std::string& configured, const std::string& state_dir) {
  std::error_code ec;
  fs::path state = fs::absolute(state_dir, ec).lexically_normal();
  if (!state.has_filename()) state = state.parent_path();  // "dir/" -> "dir"
  fs::path root = configured.empty() ? fs::path(state.string() + "-forks")
                                     : fs::absolute(configured, ec).lexically_normal();
  if (!root.has_filename()) root = root.parent_path();
  const std::string shown = root.string() + (configured.empty() ? " (the default)" : "");
  if (std::string outer = state::EnclosingStateDir(root.string()); !outer.empty())
    return Status::InvalidArgument("api.fork_root: " + shown + " is inside the state dir " + outer +
                                   "; forks go outside every state dir");
  // The state dir may not exist yet: compare the paths too.
  fs::path canonical_state = fs::weakly_canonical(state, ec);
  fs::path canonical_root = fs::weakly_canonical(root, ec);
  auto [s, r] = std::mismatch(canonical_state.begin(), canonical_state.end(),
                              canonical_root.begin(), canonical_root.end());
  if (s == canonical_state.end())
    return Status::InvalidArgument("api.fork_root: " + shown + " is inside the state dir " +
                                   state.string() + "; forks go outside it");
  if (fs::exists(root, ec) && !fs::is_directory(root, ec))
    return Status::InvalidArgument("api.fork_root: " + shown + " exists and is not a directory");
  return root.string();
}

Status CheckForkName(std::string_view name) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("field \"into\": a fork's name " + why);
  };
  if (name.empty()) return bad("is empty (1 to " + std::to_string(kMaxForkNameBytes) + " bytes)");
  if (name.size() > kMaxForkNameBytes)
    return bad("is " + std::to_string(name.size()) + " bytes, more than " +
               std::to_string(kMaxForkNameBytes));
  if (std::string fault = NameFault(name); !fault.empty())
    return bad("must be UTF-8 with no control or bidi-control characters; " + fault);
  if (name.find('/') != std::string_view::npos)
    return bad("is one path segment under api.fork_root: no '/'");
  if (name == "." || name == "..") return bad("must not be \".\" or \"..\"");
  return Status::OK();
}

Result<std::string> MakeForkDir(const std::string& root, const std::string& name) {
  LIMBIC_RETURN_IF_ERROR(CheckForkName(name));
  std::error_code ec;
  if (fs::is_symlink(root, ec))
    return Status::InvalidArgument("api.fork_root " + root +
                                   " is a symlink; forks are not made through one");
  fs::create_directories(root, ec);
  if (ec) return Status::IOError("creating api.fork_root " + root + ": " + ec.message());
  const std::string dir = root + "/" + name;
  if (::mkdir(dir.c_str(), 0755) == 0) return dir;
  if (errno != EEXIST) return Status::IOError("creating " + dir + ": " + std::strerror(errno));
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0)
    return Status::IOError("reading " + dir + ": " + std::strerror(errno));
  if (S_ISLNK(st.st_mode))
    return Status::InvalidArgument("field \"into\": " + dir +
                                   " is a symlink; forks are not made through one");
  if (!S_ISDIR(st.st_mode) || !fs::is_empty(dir, ec))
    return Status::InvalidArgument("field \"into\": " + dir + " is taken (not an empty directory)");
  return dir;
}

Result<SandboxInfo> Fork(const ForkOptions& options, std::vector<std::string>* warnings) {
  if (options.at_seq.has_value() == options.at_time.has_value())
    return Status::InvalidArgument("give one of --at-seq and --at-time");
  if (options.at_seq && *options.at_seq == 0 && !options.allow_empty)
    return Status::InvalidArgument("at seq 0: a fork's seq is 1 or more (the first event's)");
  state::ReplayOptions replay;
  replay.from = state::EventsDirPath(options.from_state);
  replay.into = options.into;
  replay.until_seq = options.at_seq;
  replay.until_time = options.at_time;
  replay.checkpoints_of = options.from_state;  // a fork at a seq starts at its nearest checkpoint
  replay.checkpoint_check = state::CheckpointTarget::Check::kChecksums;
  // Not runnable until sandbox.json is there (a fork killed part way
  // would otherwise run as an ordinary agent, with real effectors).
  replay.leave_unfinished = true;
  std::error_code ec;
  const bool made = !fs::exists(options.into, ec);
  auto r = state::Replay(replay);
  if (!r.ok()) return r.status();  // Replay removed what it made
  if (warnings) warnings->insert(warnings->end(), r->warnings.begin(), r->warnings.end());
  // (At a time before the log's first event, Replay refused already.)
  if (options.at_seq && r->last_seq != *options.at_seq) {
    // Take back what the replay built: nothing of it is the fork asked for.
    if (made) fs::remove_all(options.into, ec);
    else
      for (const auto& entry : fs::directory_iterator(options.into, ec))
        fs::remove_all(entry.path(), ec);
    return Status::InvalidArgument("at seq " + std::to_string(*options.at_seq) +
                                   ": the log ends at seq " + std::to_string(r->last_seq));
  }
  SandboxInfo info;
  info.forked_from = fs::absolute(options.from_state).lexically_normal().string();
  info.at_seq = r->last_seq;
  info.at_time = FormatTime(r->last_ts);
  info.forked_at = FormatTime(options.now);
  info.digest = r->digest;
  LIMBIC_RETURN_IF_ERROR(Env::Default()->WriteFileAtomic(
      SandboxFilePath(options.into), info.ToJson().dump(2) + "\n", FileDurability::kSynced));
  LIMBIC_RETURN_IF_ERROR(state::FinishReplay(options.into));
  return info;
}

}  // namespace limbic::runtime
