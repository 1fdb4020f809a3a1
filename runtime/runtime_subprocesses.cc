// What a SIGKILLed run left running, ended at start (base/process_groups.h).
#include "base/process_groups.h"
#include "runtime/runtime.h"

namespace limbic::runtime {

namespace {

// The grace a leftover group gets between SIGTERM and SIGKILL: that of a
// sensor's stop (sensors/stream_sensors.cc).
constexpr TimeMs kLeftoverGraceMs = 2000;

}  // namespace

std::string SubprocessesDirPath(const std::string& state_dir) {
  return state_dir + "/subprocesses";
}

void Runtime::EndLeftoverGroups() {
  auto journal = ProcessGroupJournal::Open(SubprocessesDirPath(config_.state_dir));
  if (!journal.ok()) {
    // Not fatal: only a later SIGKILL's leftovers would go unfound.
    log_->warn(
        "subprocesses: cannot record process groups ({}); after a SIGKILL the next start "
        "cannot end what this run started",
        journal.status().message());
    return;
  }
  using Outcome = LeftoverGroup::Outcome;
  for (const LeftoverGroup& g : (*journal)->EndLeftovers(kLeftoverGraceMs)) {
    const std::string what = "process group " + std::to_string(g.pgid) + " (" + g.argv0 +
                             ") started by limbic pid " + std::to_string(g.owner_pid);
    switch (g.outcome) {
      case Outcome::kEnded:
      case Outcome::kKilled:
        log_->warn(
            "subprocesses: ended {}, {} processes left running by a run that did not stop "
            "cleanly ({})",
            what, g.processes,
            g.outcome == Outcome::kEnded ? "SIGTERM" : "SIGKILL after the grace");
        break;
      case Outcome::kNotOurs:
        log_->info("subprocesses: left {} alone, not provably that run's: {}", what, g.why);
        break;
      case Outcome::kOwnerAlive:
        log_->warn("subprocesses: left {} alone: {}", what, g.why);
        break;
      case Outcome::kUnreadable:
        log_->warn("subprocesses: removed {}", g.why);
        break;
      case Outcome::kGone:
      case Outcome::kOtherBoot:
        log_->debug("subprocesses: {} is gone", what);
        break;
    }
  }
  (*journal)->StartHeartbeat();
  groups_ = std::move(journal).value();
  SetProcessGroupJournal(groups_);
}

}  // namespace limbic::runtime
