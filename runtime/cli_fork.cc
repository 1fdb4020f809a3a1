// `limbic fork`: a sandbox state dir from this state dir's log, as it was at
// a seq or a time (runtime/sandbox.h, docs/cli.md).
#include <cstdio>

#include "runtime/cli.h"
#include "runtime/sandbox.h"

namespace limbic::runtime {

void AddForkCommand(CLI::App& app, CliContext& ctx, int& rc) {
  struct Args {
    std::optional<uint64_t> at_seq;
    std::string at_time, into;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "fork",
      "a sandbox: this state as it was at a seq or a time, in a new state dir whose effectors "
      "only record what they would send");
  auto* seq = cmd->add_option("--at-seq", a->at_seq, "the last event to keep");
  auto* time = cmd->add_option("--at-time", a->at_time,
                               "keep the events at or before this RFC 3339 time (or e.g. 10m ago)");
  cmd->add_option("--into", a->into, "the new state dir (must not exist, or be empty)")->required();
  seq->excludes(time);
  cmd->callback([&ctx, &rc, a] {
    auto now = ctx.Now();
    if (!now.ok()) {
      rc = Fail(now.status());
      return;
    }
    ForkOptions options;
    options.from_state = ctx.state_dir;
    options.into = a->into;
    options.at_seq = a->at_seq;
    options.now = *now;
    if (!a->at_time.empty()) {
      auto t = ParseTimeOrAgo("--at-time", a->at_time, *now);
      if (!t.ok()) {
        rc = Fail(t.status());
        return;
      }
      options.at_time = *t;
    }
    if (!options.at_seq && !options.at_time) {
      rc = UsageError("fork: give --at-seq SEQ or --at-time TIME");
      return;
    }
    auto info = Fork(options);
    if (!info.ok()) {
      rc = Fail(info.status());
      return;
    }
    if (ctx.json) {
      nlohmann::json out = info->ToJson();
      out["into"] = a->into;
      PrintJson(out);
      return;
    }
    std::printf(
        "forked %s at seq %llu (%s) into %s: a sandbox\n"
        "digest %s\n"
        "run it: limbic run --state %s --port 7078\n"
        "  its effectors only record what they would send (%s); the reflexes file is not\n"
        "  synced into its rules unless you add --sync-rules\n",
        info->forked_from.c_str(), static_cast<unsigned long long>(info->at_seq),
        info->at_time.c_str(), a->into.c_str(), info->digest.c_str(), a->into.c_str(),
        DryRunFilePath(a->into).c_str());
  });
}

}  // namespace limbic::runtime
