#include "state/engine.h"

#include "state/checkpoint.h"

#include <spdlog/sinks/null_sink.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iterator>

#include "base/json.h"
#include "state/replay.h"

namespace limbic::state {

std::string LockFilePath(const std::string& state_dir) { return state_dir + "/limbic.lock"; }
std::string EventsDirPath(const std::string& state_dir) { return state_dir + "/events"; }
std::string DbDirPath(const std::string& state_dir) { return state_dir + "/db"; }
std::string ReplayingFilePath(const std::string& state_dir) { return state_dir + "/replaying"; }

Status RefuseUnfinished(const std::string& state_dir, Env* env) {
  if (!env) env = Env::Default();
  std::error_code ec;
  // Whatever is there by that name (a dangling symlink too) marks it.
  if (!env->FileExists(ReplayingFilePath(state_dir)) &&
      !std::filesystem::is_symlink(ReplayingFilePath(state_dir), ec))
    return Status::OK();
  return Status::FailedPrecondition(
      state_dir + " is a replay or fork that was cut short (" + ReplayingFilePath(state_dir) +
      " is there): it holds part of a log and may not be what it claims; remove it and "
      "replay or fork again");
}

bool IsStateDir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(LockFilePath(dir), ec)) return true;
  return fs::is_directory(EventsDirPath(dir), ec) && fs::is_directory(DbDirPath(dir), ec);
}

std::string EnclosingStateDir(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) p = fs::absolute(path, ec).lexically_normal();
  for (; !p.empty(); p = p.parent_path()) {
    if (IsStateDir(p.string())) return p.string();
    if (p == p.root_path()) break;
  }
  return {};
}

Engine::Engine(EngineOptions options)
    : options_(std::move(options)),
      clock_(options_.clock ? options_.clock : SystemClock::Default()) {
  if (!options_.env) options_.env = Env::Default();
  if (!options_.logger) {
    options_.logger = std::make_shared<spdlog::logger>(
        "limbic", std::make_shared<spdlog::sinks::null_sink_mt>());
  }
}

Result<std::unique_ptr<Engine>> Engine::Open(EngineOptions options, EngineRecovery* recovery) {
  if (options.state_dir.empty()) return Status::InvalidArgument("state dir is empty");
  LIMBIC_RETURN_IF_ERROR(RefuseUnfinished(options.state_dir, options.env));
  std::unique_ptr<Engine> engine(new Engine(std::move(options)));
  EngineRecovery local;
  LIMBIC_RETURN_IF_ERROR(engine->Recover(recovery ? recovery : &local));
  return engine;
}

Status Engine::Recover(EngineRecovery* recovery) {
  Env* env = options_.env;
  const std::string& dir = options_.state_dir;
  if (options_.read_only) {
    if (!env->FileExists(DbDirPath(dir)))
      return Status::NotFound("no limbic state in " + dir + " (no db/ directory)");
  } else {
    LIMBIC_RETURN_IF_ERROR(env->CreateDirs(dir));
    auto lock = env->LockFile(LockFilePath(dir), LockWait::kNo);
    if (!lock.ok()) return lock.status();
    lock_ = std::move(lock).value();
  }

  ProjectionOptions popts;
  popts.path = DbDirPath(dir);
  popts.read_only = options_.read_only;
  popts.short_lived = options_.short_lived;
  popts.rocks_env = options_.rocks_env;
  auto projection = Projection::Open(popts);
  if (!projection.ok()) return projection.status();
  projection_ = std::move(projection).value();
  if (!projection_->outdated().empty()) {
    // Derived state of another layout: rebuild it from the log, below.
    options_.logger->warn("{}; rebuilding them from the log", projection_->outdated());
    projection_.reset();
    LIMBIC_RETURN_IF_ERROR(RemoveTree(DbDirPath(dir)));
    projection = Projection::Open(popts);
    if (!projection.ok()) return projection.status();
    projection_ = std::move(projection).value();
  }
  pending_ = Overlay(projection_.get());
  recovery->applied_seq_at_open = projection_->applied_seq();

  LogOptions lopts;
  lopts.env = env;
  lopts.dir = EventsDirPath(dir);
  lopts.segment_bytes = options_.segment_bytes;
  lopts.durability = options_.durability;
  lopts.interval_ms = options_.interval_ms;
  lopts.read_only = options_.read_only;
  lopts.logger = options_.logger;
  lopts.on_sync = options_.on_sync;
  lopts.accept_changed_segments = options_.accept_changed_segments;
  lopts.on_group = [this](const Status& s, std::vector<LogBatch>&& group) {
    OnGroupWritten(s, std::move(group));
  };
  auto log = EventLog::Open(std::move(lopts), &recovery->log);
  if (!log.ok()) return log.status();
  log_ = std::move(log).value();

  if (!recovery->log.changed_segments.empty() && !options_.read_only &&
      projection_->applied_seq() > 0) {
    // The projections were made from what the changed segments held before.
    options_.logger->warn("{} changed segments accepted: rebuilding the projections from the log",
                          recovery->log.changed_segments.size());
    projection_.reset();
    LIMBIC_RETURN_IF_ERROR(RemoveTree(DbDirPath(dir)));
    // So were the checkpoints: none may stand in for the log as it now is.
    LIMBIC_RETURN_IF_ERROR(RemoveTree(CheckpointsDirPath(dir)));
    auto rebuilt = Projection::Open(popts);
    if (!rebuilt.ok()) return rebuilt.status();
    projection_ = std::move(rebuilt).value();
    pending_ = Overlay(projection_.get());
    recovery->rebuilt = true;
  }
  const uint64_t log_last = recovery->log.last_seq;
  const uint64_t applied = projection_->applied_seq();
  if (applied > log_last) {
    return Status::Corruption(
        "state in " + DbDirPath(dir) + " has applied events up to seq " + std::to_string(applied) +
        " but the log in " + EventsDirPath(dir) + " ends at seq " + std::to_string(log_last) +
        "; rebuild it from the log with `limbic replay --from " + EventsDirPath(dir) +
        " --into NEW_DIR`");
  }
  // Projections that hold nothing start from the newest checkpoint the log
  // allows, and are built as replay builds them (table files ingested, no
  // WAL); each ingest carries its applied_seq, so a build cut short leaves
  // a prefix that the next open continues below.
  if (applied == 0 && log_last > 0 && !options_.read_only) {
    LIMBIC_RETURN_IF_ERROR(RestoreFromCheckpoint(popts, log_last, recovery));
    if (log_last - projection_->applied_seq() >= options_.bulk_rebuild_events) {
      LIMBIC_RETURN_IF_ERROR(RebuildProjections(popts, &recovery->reapplied));
      options_.logger->info("built the projections from {} events of the log",
                            recovery->reapplied);
    }
  }
  // Re-apply what the log has and the projections lack (a crash between
  // fdatasync and the RocksDB write, or RocksDB's unsynced WAL lost).
  if (projection_->applied_seq() < log_last && !options_.read_only) {
    const uint64_t after = projection_->applied_seq();  // a checkpoint's, once restored
    LIMBIC_RETURN_IF_ERROR(ReapplyLog(&recovery->reapplied));
    // Debug: the caller reports recovery (the runtime logs "recovery: re-applied ...").
    options_.logger->debug("re-applied {} events after seq {}", recovery->reapplied, after);
  }
  next_seq_ = std::max(log_last, projection_->applied_seq()) + 1;
  last_ts_ = recovery->log.last_ts;  // ts never goes backwards, even across restarts
  return Status::OK();
}

Status Engine::RestoreFromCheckpoint(const ProjectionOptions& popts, uint64_t last_seq,
                                     EngineRecovery* recovery) {
  const std::string& dir = options_.state_dir;
  const std::string restoring = dir + "/db-restoring";
  LIMBIC_RETURN_IF_ERROR(RemoveTree(restoring));
  CheckpointTarget target;
  target.seq = last_seq;
  // It becomes db/, trusted whole: every block checked first.
  target.check = CheckpointTarget::Check::kChecksums;
  target.matches_log = [&](const CheckpointManifest& m) {
    return MatchLog(m, events_dir(), options_.env);
  };
  std::vector<std::string> warnings;
  auto restored = RestoreNearestCheckpoint(dir, target, restoring, &warnings);
  for (const std::string& w : warnings) options_.logger->warn("{}", w);
  if (!restored.ok()) return restored.status();
  if (!*restored) return Status::OK();
  projection_.reset();
  pending_ = Overlay(nullptr);
  LIMBIC_RETURN_IF_ERROR(RemoveTree(DbDirPath(dir)));
  std::error_code ec;
  std::filesystem::rename(restoring, DbDirPath(dir), ec);
  if (ec) return Status::IOError("renaming " + restoring + " to " + DbDirPath(dir) + ": " + ec.message());
  LIMBIC_RETURN_IF_ERROR(options_.env->SyncDir(dir));
  auto projection = Projection::Open(popts);
  if (!projection.ok()) return projection.status();
  projection_ = std::move(projection).value();
  pending_ = Overlay(projection_.get());
  recovery->from_checkpoint = (*restored)->seq;
  options_.logger->info("the projections were empty: restored them from the checkpoint at seq {}",
                        (*restored)->seq);
  return Status::OK();
}

Status Engine::RebuildProjections(const ProjectionOptions& popts, uint64_t* reapplied) {
  const uint64_t base = projection_->applied_seq();
  projection_.reset();
  pending_ = Overlay(nullptr);
  ProjectionOptions bulk = popts;
  bulk.bulk_load = true;
  auto building = Projection::Open(bulk);
  if (!building.ok()) return building.status();
  LogReader::Options ropts;
  ropts.env = options_.env;
  ropts.tolerate_partial_tail = false;
  ropts.from_seq = base + 1;
  auto reader = LogReader::Open(events_dir(), ropts);
  if (!reader.ok()) return reader.status();
  ApplyLimits limits;
  limits.first_seq = base + 1;
  // A long rebuild (a long log, db/ gone) says how far it is: every 10%,
  // once it has taken 2 s.
  const auto started = std::chrono::steady_clock::now();
  int logged_tenth = 0;
  limits.progress = [&](const ApplyProgress& p) {
    const int tenth = static_cast<int>(p.fraction * 10);
    if (tenth <= logged_tenth || std::chrono::steady_clock::now() - started < std::chrono::seconds(2))
      return;
    logged_tenth = tenth;
    options_.logger->info("building the projections from the log: {}% ({} events, up to seq {})",
                          tenth * 10, p.events, p.last_seq);
  };
  auto done = ApplyLog(**reader, **building, limits);
  // Flush ingests the last write: until then applied_seq covers only what
  // the writes before it hold.
  Status s = done.ok() ? (*building)->Flush() : done.status();
  building->reset();
  if (!s.ok()) return s.WithContext("building the projections from the log");
  *reapplied = done->events;
  auto projection = Projection::Open(popts);
  if (!projection.ok()) return projection.status();
  projection_ = std::move(projection).value();
  pending_ = Overlay(projection_.get());
  return Status::OK();
}

Status Engine::ReapplyLog(uint64_t* reapplied) {
  const uint64_t applied = projection_->applied_seq();
  LogReader::Options ropts;
  ropts.env = options_.env;
  ropts.from_seq = applied + 1;
  ropts.tolerate_partial_tail = false;
  auto reader = LogReader::Open(events_dir(), ropts);
  if (!reader.ok()) return reader.status();
  ApplyLimits limits;
  limits.first_seq = applied + 1;
  auto done = ApplyLog(**reader, *projection_, limits);
  if (!done.ok()) return done.status().WithContext("re-applying the log");
  *reapplied = done->events;
  return Status::OK();
}

Engine::~Engine() {
  if (log_ && !options_.read_only) {
    Status s = log_->Close();
    if (!s.ok()) options_.logger->error("closing the events log: {}", s.ToString());
    DrainCompletions();
  }
  FailHeld(
      Status::Unavailable("outcome unknown: written to the local log but not replicated before "
                          "limbic stopped; retry with the same id"));
  if (projection_ && !options_.read_only && !unapplied_.empty()) {
    // Acknowledged events the projections lack: one more try, else the next
    // open re-applies them from the log.
    uint64_t n = 0;
    Status s = projection_->Resume();
    if (s.ok()) s = ReapplyLog(&n);
    if (!s.ok()) {
      options_.logger->error(
          "the projections end at seq {}, behind the log: {}; the next start "
          "re-applies the rest",
          projection_->applied_seq(), s.ToString());
      return;  // the Projection, failed, is not flushed
    }
  }
  if (projection_ && !options_.read_only) {
    Status s = projection_->Flush();
    if (!s.ok()) options_.logger->error("flushing the projections: {}", s.ToString());
  }
}

Status Engine::Submit(std::vector<Event> events, Done done) {
  if (!gate_.ok()) return gate_;
  return SubmitImpl(std::move(events), std::move(done), false);
}

Status Engine::SubmitReplicated(std::vector<Event> events, Done done) {
  return SubmitImpl(std::move(events), std::move(done), true);
}

Status Engine::SubmitImpl(std::vector<Event> events, Done done, bool replicated) {
  if (options_.read_only)
    return Status::FailedPrecondition("state dir " + options_.state_dir + " is open read-only");
  if (!error_.ok()) return error_;
  if (events.empty()) return Status::InvalidArgument("nothing to submit");
  LIMBIC_RETURN_IF_ERROR(GetOverFailure());

  // 1. Assign seq and ts, and validate against the pending state, in a
  // scratch layer so a failure leaves no trace.
  TimeMs ts = std::max(clock_->Now(), last_ts_);
  Overlay scratch(&pending_);
  scratch.remember_base_reads(true);
  uint64_t seq = next_seq_;
  TimeMs floor = last_ts_;
  if (replicated) ts = floor;
  for (Event& e : events) {
    if (replicated) {
      // The primary's seq and ts, as its log holds them.
      if (e.seq != seq)
        return Status::FailedPrecondition("replicated event seq " + std::to_string(e.seq) +
                                          " does not follow this log (next seq " +
                                          std::to_string(seq) + ")");
      if (e.ts < floor)
        return Status::FailedPrecondition("replicated event seq " + std::to_string(e.seq) +
                                          " goes back in time");
      ++seq;
      ts = floor = e.ts;
      LIMBIC_RETURN_IF_ERROR(ValidateEventFields(e.type, e.fields, TimeRule::kLogged));
    } else {
      e.seq = seq++;
      e.ts = ts;
      // Text from outside may be any bytes. From here on it is valid UTF-8,
      // as the log will hold it, so what is sized, indexed and reduced is
      // what a replay reads back (docs/events.md, "Text is UTF-8").
      if (Status u = MakeValidUtf8(&e.fields); !u.ok()) return u.WithContext(EventTypeName(e.type));
      LIMBIC_RETURN_IF_ERROR(ValidateEventFields(e.type, e.fields));
      LIMBIC_RETURN_IF_ERROR(CheckDedupWindow(e, scratch, options_.dedup_window));
    }
    Status s = Reduce(e, &scratch);
    if (!s.ok()) {
      // The reducer names events by seq, but a rejected command's seqs are
      // never written: leave them out of what the caller sees.
      std::string msg = s.message();
      const std::string seq_text = " seq " + std::to_string(e.seq);
      if (auto at = msg.find(seq_text); at != std::string::npos) msg.erase(at, seq_text.size());
      return s.WithMessage(std::move(msg));
    }
  }
  // 2. Prepare the RocksDB writes now, while the records as they were are at
  // hand; the writer thread commits them once the events are durable.
  auto prepared = std::make_unique<PreparedWrite>();
  LIMBIC_RETURN_IF_ERROR(projection_->Prepare(scratch, pending_, prepared.get()));
  std::vector<Overlay::Key> keys;
  keys.reserve(scratch.changes().size());
  for (const auto& [key, change] : scratch.changes()) keys.push_back(key);
  pending_.Absorb(std::move(scratch));
  next_seq_ = seq;
  last_ts_ = ts;

  // ... and queue for the log: its writer thread does step 3 (group commit)
  // and calls OnGroupWritten (step 4); CompleteGroup does steps 5-6.
  uint64_t tag = next_tag_++;
  inflight_.emplace(tag, Inflight{std::move(done), std::move(keys)});
  {
    std::lock_guard<std::mutex> lock(mu_);
    prepared_.emplace(tag, std::move(prepared));
  }
  log_->Submit(LogBatch{std::move(events), tag});
  return Status::OK();
}

void Engine::OnGroupWritten(const Status& log_status, std::vector<LogBatch>&& group) {
  // 4. On the writer thread: commit the group's prepared writes in one
  // WriteBatch, so the owner thread never waits on RocksDB's memtables.
  std::vector<std::unique_ptr<PreparedWrite>> writes;
  Status apply_error;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const LogBatch& b : group) {
      auto it = prepared_.find(b.tag);
      if (it == prepared_.end()) continue;
      writes.push_back(std::move(it->second));
      prepared_.erase(it);
    }
    apply_error = apply_error_;
  }
  uint64_t last = 0;
  for (const LogBatch& b : group)
    if (!b.events.empty()) last = b.events.back().seq;
  bool applied = false;
  if (log_status.ok() && last && apply_error.ok()) {
    std::vector<const PreparedWrite*> ptrs;
    for (const auto& w : writes) ptrs.push_back(w.get());
    Status s = projection_->Commit(ptrs, last);
    applied = s.ok();
    // The events are durable all the same: the owner re-applies them from
    // the log once RocksDB can write again. Later groups wait for that.
    if (!s.ok()) {
      options_.logger->error("applying seqs {}..{}: {}", group.front().events.front().seq, last,
                             s.ToString());
      std::lock_guard<std::mutex> lock(mu_);
      apply_error_ = s;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    written_.push_back(Written{log_status, applied, std::move(group)});
  }
  cv_.notify_all();
  if (options_.post) options_.post([this] { DrainCompletions(); });
}

void Engine::DrainCompletions() {
  std::deque<Written> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready.swap(written_);
  }
  for (Written& w : ready) CompleteGroup(w.status, w.applied, w.group);
}

void Engine::CompleteGroup(Status status, bool applied, std::vector<LogBatch>& group) {
  // Move the group's events into one sequence; each batch keeps its range.
  std::vector<Event> events;
  std::vector<std::pair<uint64_t, size_t>> batches;  // tag, event count
  size_t total = 0;
  for (const LogBatch& b : group) total += b.events.size();
  events.reserve(total);
  for (LogBatch& b : group) {
    batches.emplace_back(b.tag, b.events.size());
    std::move(b.events.begin(), b.events.end(), std::back_inserter(events));
  }
  if (status.IsUnavailable() && !events.empty()) {
    // Not written (or not known to be): the group's seqs, and those of every
    // batch after it (they fail too), will be given out again.
    if (!write_failed_ || events.front().seq < rollback_seq_) rollback_seq_ = events.front().seq;
    write_failed_ = true;
    health_ = status;
  } else if (!status.ok() || !error_.ok()) {
    if (status.ok()) status = error_;
    if (error_.ok()) {
      error_ = status;
      options_.logger->critical("state is broken, refusing further writes: {}", status.ToString());
    }
  } else if (!applied) {
    std::lock_guard<std::mutex> lock(mu_);
    health_ = Status::IOError("the projections could not be written (" + apply_error_.message() +
                              "); they catch up from the events log before the next write");
  } else if (unapplied_.empty()) {
    health_ = Status::OK();
  }
  const uint64_t last = events.empty() ? 0 : events.back().seq;

  // 5. The group is in RocksDB: its changes leave the pending layer (unless
  // a later batch changed the same record again). Then acknowledge.
  std::span<const Event> all(events);
  size_t offset = 0;
  for (auto [tag, count] : batches) {
    auto it = inflight_.find(tag);
    std::span<const Event> mine = all.subspan(offset, count);
    offset += count;
    if (it == inflight_.end()) continue;
    Inflight batch = std::move(it->second);
    inflight_.erase(it);
    if (status.ok() && applied)
      for (const Overlay::Key& key : batch.keys) pending_.Forget(key, last);
    if (!batch.done) continue;
    if (status.ok() && hold_acks_ && !mine.empty())
      held_.push_back(Held{mine.back().seq, std::move(batch.done), {mine.begin(), mine.end()}});
    else
      batch.done(status, mine);
  }
  if (status.ok() && last > 0 && options_.on_durable) options_.on_durable(last);
  if (!status.ok()) {
    pending_.Clear();
    // Every batch after the failed one has failed too: new commands (and
    // the ids made from next_seq) take their seqs again.
    if (write_failed_ && inflight_.empty()) next_seq_ = rollback_seq_;
    return;
  }
  if (!applied || !unapplied_.empty()) {
    // Durable, acknowledged, but not in the projections: published once
    // they are (GetOverFailure), in order.
    std::move(events.begin(), events.end(), std::back_inserter(unapplied_));
    return;
  }
  // 6. Publish.
  for (const Listener& listener : listeners_) listener(all);
}

Status Engine::GetOverFailure() {
  if (!write_failed_ && unapplied_.empty()) return Status::OK();
  if (!inflight_.empty())
    return Status::Unavailable(
        "not written: earlier writes are still coming back after a failed "
        "write (" +
        health_.message() + "); retry");
  if (write_failed_) {
    Status s = log_->Resume(rollback_seq_ - 1);
    if (!s.ok() && !s.IsUnavailable()) {
      error_ = s;
      return s;
    }
    if (!s.ok())
      return Status::Unavailable("not written: the outcome of an earlier write is still unknown (" +
                                 s.message() + "); retry");
    next_seq_ = rollback_seq_;
    write_failed_ = false;
    pending_.Clear();
  }
  if (!unapplied_.empty()) {
    uint64_t n = 0;
    Status s = projection_->Resume();
    if (s.ok()) s = ReapplyLog(&n);
    if (!s.ok())
      return Status::Unavailable(
          "not written: the projections are behind the events log and "
          "cannot catch up yet (" +
          s.message() + "); retry");
    options_.logger->info("the projections caught up with the log: re-applied {} events", n);
    {
      std::lock_guard<std::mutex> lock(mu_);
      apply_error_ = Status::OK();
    }
    pending_.Clear();  // all of it is applied now
    std::vector<Event> events = std::move(unapplied_);
    unapplied_.clear();
    for (const Listener& listener : listeners_) listener(events);
  }
  return Status::OK();
}

Status Engine::Poll(bool block) {
  if (block && !inflight_.empty()) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !written_.empty(); });
  }
  DrainCompletions();
  return error_;
}

Status Engine::WaitIdle() {
  while (!inflight_.empty()) (void)Poll(true);
  return error_;
}

Status Engine::Commit(std::vector<Event> events, std::vector<Event>* committed) {
  Status result;
  LIMBIC_RETURN_IF_ERROR(Submit(std::move(events),
                                [&](const Status& s, std::span<const Event> done_events) {
                                  result = s;
                                  if (committed) committed->assign(done_events.begin(), done_events.end());
                                }));
  LIMBIC_RETURN_IF_ERROR(WaitIdle());
  return result;
}

Status Engine::Flush() {
  if (options_.read_only) return Status::OK();
  Status s = log_->Flush();
  DrainCompletions();
  return s;
}

void Engine::AddListener(Listener listener) { listeners_.push_back(std::move(listener)); }

void Engine::ReleaseHeld(uint64_t through_seq) {
  while (!held_.empty() && held_.front().last_seq <= through_seq) {
    Held h = std::move(held_.front());
    held_.pop_front();
    h.done(Status::OK(), h.events);
  }
}

void Engine::FailHeld(const Status& status) {
  std::deque<Held> held;
  held.swap(held_);
  for (Held& h : held) h.done(status, h.events);
}

}  // namespace limbic::state
