#include "state/engine.h"

#include <spdlog/sinks/null_sink.h>

#include <algorithm>
#include <iterator>

#include "state/json.h"
#include "state/replay.h"

namespace limbic::state {

std::string LockFilePath(const std::string& state_dir) { return state_dir + "/limbic.lock"; }
std::string EventsDirPath(const std::string& state_dir) { return state_dir + "/events"; }
std::string DbDirPath(const std::string& state_dir) { return state_dir + "/db"; }

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
    auto lock = env->LockFile(LockFilePath(dir));
    if (!lock.ok()) return lock.status();
    lock_ = std::move(lock).value();
  }

  ProjectionOptions popts;
  popts.path = DbDirPath(dir);
  popts.read_only = options_.read_only;
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
  // Re-apply what the log has and the projections lack (a crash between
  // fdatasync and the RocksDB write, or RocksDB's unsynced WAL lost).
  if (applied < log_last && !options_.read_only) {
    LogReader::Options ropts;
    ropts.env = env;
    ropts.from_seq = applied + 1;
    ropts.tolerate_partial_tail = false;
    auto reader = LogReader::Open(EventsDirPath(dir), ropts);
    if (!reader.ok()) return reader.status();
    ApplyLimits limits;
    limits.first_seq = applied + 1;
    auto done = ApplyLog(**reader, *projection_, limits);
    if (!done.ok()) return done.status().WithContext("re-applying the log");
    recovery->reapplied = done->events;
    options_.logger->info("re-applied {} events after seq {}", recovery->reapplied, applied);
  }
  next_seq_ = std::max(log_last, projection_->applied_seq()) + 1;
  last_ts_ = recovery->log.last_ts;  // ts never goes backwards, even across restarts
  return Status::OK();
}

Engine::~Engine() {
  if (log_ && !options_.read_only) {
    Status s = log_->Close();
    if (!s.ok()) options_.logger->error("closing the events log: {}", s.ToString());
    DrainCompletions();
  }
  if (projection_ && !options_.read_only) {
    Status s = projection_->Flush();
    if (!s.ok()) options_.logger->error("flushing the projections: {}", s.ToString());
  }
}

Status Engine::Submit(std::vector<Event> events, Done done) {
  if (options_.read_only)
    return Status::FailedPrecondition("state dir " + options_.state_dir + " is open read-only");
  if (!error_.ok()) return error_;
  if (events.empty()) return Status::InvalidArgument("nothing to submit");

  // 1. Validate against the pending state, in a scratch layer so a failure
  // leaves no trace.
  TimeMs ts = std::max(clock_->Now(), last_ts_);
  Overlay scratch(&pending_);
  scratch.remember_base_reads(true);
  uint64_t seq = next_seq_;
  for (Event& e : events) {
    e.seq = seq++;
    e.ts = ts;
    // Text from outside may be any bytes. From here on it is valid UTF-8,
    // as the log will hold it, so what is sized, indexed and reduced is
    // what a replay reads back (docs/events.md, "Text is UTF-8").
    if (Status u = MakeValidUtf8(&e.fields); !u.ok()) return u.WithContext(EventTypeName(e.type));
    LIMBIC_RETURN_IF_ERROR(ValidateEventFields(e.type, e.fields));
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

  // 3. Queue for the log; steps 4-6 continue in OnGroupWritten.
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
  Status status = log_status;
  std::vector<std::unique_ptr<PreparedWrite>> writes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const LogBatch& b : group) {
      auto it = prepared_.find(b.tag);
      if (it == prepared_.end()) continue;
      writes.push_back(std::move(it->second));
      prepared_.erase(it);
    }
  }
  uint64_t last = 0;
  for (const LogBatch& b : group)
    if (!b.events.empty()) last = b.events.back().seq;
  if (status.ok()) status = apply_error_;
  if (status.ok() && last) {
    std::vector<const PreparedWrite*> ptrs;
    for (const auto& w : writes) ptrs.push_back(w.get());
    Status s = projection_->Commit(ptrs, last);
    // The reducer accepted these events a moment ago; failing now means the
    // disk or RocksDB failed, and the projections no longer follow the log.
    if (!s.ok()) status = apply_error_ = Status::Internal("applying a durable group failed: " + s.message());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    written_.emplace_back(status, std::move(group));
  }
  cv_.notify_all();
  if (options_.post) options_.post([this] { DrainCompletions(); });
}

void Engine::DrainCompletions() {
  std::deque<std::pair<Status, std::vector<LogBatch>>> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready.swap(written_);
  }
  for (auto& [status, group] : ready) CompleteGroup(status, group);
}

void Engine::CompleteGroup(Status status, std::vector<LogBatch>& group) {
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
  if (status.ok()) status = error_;
  if (!status.ok() && error_.ok()) {
    error_ = status;
    options_.logger->critical("state is broken, refusing further writes: {}", status.ToString());
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
    if (status.ok())
      for (const Overlay::Key& key : batch.keys) pending_.Forget(key, last);
    if (batch.done) batch.done(status, mine);
  }
  if (!status.ok()) {
    pending_.Clear();
    return;
  }
  // 6. Publish.
  for (const Listener& listener : listeners_) listener(all);
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

}  // namespace limbic::state
