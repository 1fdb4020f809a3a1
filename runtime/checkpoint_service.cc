#include "runtime/checkpoint_service.h"

#include <chrono>

#include "state/checkpoint.h"

namespace limbic::runtime {

CheckpointService::CheckpointService(boost::asio::io_context& io, state::Engine& engine,
                                     const Config& config, std::shared_ptr<spdlog::logger> log)
    : io_(io),
      engine_(engine),
      options_(config.checkpoints),
      state_dir_(config.state_dir),
      log_(std::move(log)),
      timer_(io) {}

CheckpointService::~CheckpointService() {
  timer_.cancel();
  worker_.Stop();
}

Status CheckpointService::Open() {
  if (!options_.enabled) return Status::OK();
  // This process holds the state dir's lock: a temp dir is a dead one's.
  LIMBIC_RETURN_IF_ERROR(state::RemoveCheckpointTemps(state_dir_));
  // Retention removes the damaged and stale ones: say why first.
  state::CheckpointList found = state::ListCheckpoints(state_dir_);
  for (const std::string& w : found.warnings) log_->warn("checkpoints: {}; removing it", w);
  for (const std::string& dir : found.stale)
    log_->info("checkpoints: {} is of another format or pools' layout; removing it", dir);
  // Past the log's end (its last segments were removed, or it was
  // replaced): of another history. Readers skip them; left, they would
  // count among the newest `dense` and push out ones of this history.
  const uint64_t applied = engine_.applied_seq();
  for (const state::CheckpointEntry& c : found.usable) {
    if (c.manifest.seq <= applied) continue;
    log_->warn("checkpoints: {} is at seq {}, past the log's last seq {}; removing it", c.dir,
               c.manifest.seq, applied);
    LIMBIC_RETURN_IF_ERROR(state::RemoveCheckpoint(c.dir));
  }
  std::vector<std::string> removed;
  LIMBIC_RETURN_IF_ERROR(
      state::ApplyRetention(state_dir_, {options_.keep, options_.dense}, &removed));
  for (const std::string& dir : removed) log_->info("checkpoints: removed {}", dir);
  Count();
  due_from_ = last_seq_.load();
  open_ = true;
  worker_.Start();
  ScheduleInterval();
  // Due already (the last one was cut short, or removed as damaged): now,
  // not at the next event.
  if (Due(engine_.applied_seq())) Start();
  return Status::OK();
}

void CheckpointService::OnApplied(std::span<const state::Event> events) {
  if (!open_ || events.empty() || options_.every == 0 || running_.load()) return;
  if (Due(events.back().seq)) Start();
}

void CheckpointService::Count() {
  state::CheckpointList list = state::ListCheckpoints(state_dir_);
  kept_ = list.usable.size();
  last_seq_ = list.usable.empty() ? 0 : list.usable.back().manifest.seq;
}

bool CheckpointService::Due(uint64_t applied) const {
  return options_.every > 0 && applied - due_from_.load() >= options_.every;
}

void CheckpointService::ScheduleInterval() {
  if (options_.interval <= 0) return;
  timer_.expires_after(std::chrono::milliseconds(options_.interval));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    if (!running_.load() && engine_.applied_seq() > due_from_.load()) Start();
    ScheduleInterval();
  });
}

void CheckpointService::Start() {
  running_ = true;
  worker_.Post([this] { Take(); });
}

void CheckpointService::Take() {
  auto started = std::chrono::steady_clock::now();
  auto taken = state::TakeCheckpoint(engine_.projection(), state_dir_, engine_.clock().Now());
  if (!taken.ok()) {
    log_->warn("checkpoints: taking one failed: {}", taken.status().message());
    ++failed_;
    // Not again before `every` more events (or the next interval); the
    // newest checkpoint is still the one before.
    due_from_ = engine_.applied_seq();
    running_ = false;
    return;
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  std::vector<std::string> removed;
  Status s = state::ApplyRetention(state_dir_, {options_.keep, options_.dense}, &removed);
  if (!s.ok()) log_->warn("checkpoints: retention: {}", s.message());
  log_->info("checkpoints: took {} at seq {} in {:.0f} ms{}", taken->dir, taken->manifest.seq, ms,
             removed.empty() ? std::string() : ", removed " + std::to_string(removed.size()));
  Count();
  due_from_ = taken->manifest.seq;
  last_seconds_ = ms / 1000;
  ++taken_;
  // `every` more events came while it was taken: the next one now, not at
  // the next event, which may not come for a while.
  if (Due(engine_.applied_seq())) {
    worker_.Post([this] { Take(); });
    return;
  }
  running_ = false;
}

}  // namespace limbic::runtime
