#include "runtime/archive_service.h"

#include <algorithm>

namespace limbic::runtime {

using nlohmann::json;

ArchiveService::ArchiveService(boost::asio::io_context& io, state::Engine& engine,
                               const Config& config, std::shared_ptr<spdlog::logger> log)
    : engine_(engine),
      config_(config),
      log_(std::move(log)),
      consolidate_timer_(io),
      rollup_timer_(io),
      io_(io),
      // After each job the io thread takes the days the store could not read.
      store_(io, "archive", [this](archive::ArchiveStore& s) {
        return [this, now = s.unreadable()]() mutable { NoteUnreadable(std::move(now)); };
      }) {}

ArchiveService::~ArchiveService() = default;

Status ArchiveService::Open() {
  archive::StoreOptions o;
  o.state_dir = config_.state_dir;
  o.semantic_links = config_.archive.semantic_links;
  o.social_links = config_.archive.social_links;
  o.analyzer = config_.memory.analyzer;
  auto store = archive::ArchiveStore::Open(o);
  if (!store.ok()) return store.status().WithContext("opening the archive");
  auto caught = (*store)->CatchUp(engine_.applied_seq());
  if (!caught.ok())
    return caught.status().WithContext("catching the archive's staging up with the log");
  if (*caught > 0) log_->info("archive: staged {} entries from the log", *caught);
  NoteUnreadable((*store)->unreadable());
  store_.Start(std::move(store).value());
  planner_.Start();
  return Status::OK();
}

void ArchiveService::Start() {
  // The projection's in-memory tables (the new percepts, which expiry and
  // attention use; the record counts /metrics reports), built now on the
  // planner: with a large pool that takes seconds, which no request should
  // wait for on the io thread.
  planner_.Post([this] {
    Status s = engine_.projection().LoadTables();
    if (!s.ok()) log_->warn("loading the projection's tables: {}", s.message());
  });
  ScheduleConsolidate();
  if (config_.archive.rollup) {
    // Days missed while limbic was not running, then every midnight.
    Run([this](
            archive::ArchiveStore& s) { return s.RollupBefore(FormatDate(engine_.clock().Now())); },
        [this](Result<json> r) {
          if (!r.ok())
            log_->warn("archive: rollup failed: {}", r.status().message());
          else if (!(*r)["rolled_up"].empty())
            log_->info("archive: rolled up {}", (*r)["rolled_up"].dump());
        });
    ScheduleRollup();
  }
}

void ArchiveService::Stop() {
  stopped_ = true;
  consolidate_timer_.cancel();
  rollup_timer_.cancel();
}

void ArchiveService::NoteUnreadable(std::vector<archive::Problem> now) {
  auto same = [](const std::vector<archive::Problem>& a, const std::vector<archive::Problem>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
      return x.date == y.date && x.what == y.what;
    });
  };
  if (same(now, unreadable_)) return;
  if (!now.empty())
    log_->warn(
        "archive degraded: {} day(s) cannot be read, the others are served; first {}: {} "
        "(`limbic archive verify` lists every problem)",
        now.size(), now.front().date, now.front().what);
  else
    log_->info("archive: every day reads again; no longer degraded");
  unreadable_ = std::move(now);
}

void ArchiveService::CatchUp() {
  if (catch_up_queued_) return;  // the queued one will see these events too
  catch_up_queued_ = true;
  Run(
      [this](archive::ArchiveStore& s) -> Result<json> {
        // engine_.applied_seq() is atomic: what is applied is in the log.
        auto n = s.CatchUp(engine_.applied_seq());
        if (!n.ok()) return n.status();
        return json{{"staged", *n}};
      },
      [this](Result<json> r) {
        catch_up_queued_ = false;
        if (!r.ok())
          log_->error("archive: staging the log's entries failed: {}", r.status().message());
      });
}

void ArchiveService::OnApplied(std::span<const state::Event> events) {
  for (const state::Event& e : events)
    if (e.type == state::EventType::kEntryStaged) return CatchUp();
}

// A pass: the planner's cursor over the pools, what it has committed, and
// who waits for its answer. Its ConsolidationPass is used by the planner
// while a step is planned and by nobody else then (the io thread waits for
// OnPlanned), so it needs no lock.
struct ArchiveService::Pass {
  Pass(const state::Projection& p, const state::ConsolidationPolicy& policy, TimeMs now)
      : plan(p, policy, now) {}
  state::ConsolidationPass plan;
  state::ConsolidationCounts done;
  std::vector<Reply> replies;
  size_t steps = 0;
  double io_ms = 0, max_io_ms = 0;  // the io thread's time on the steps
  size_t inflight = 0;              // batches of the step submitted, not yet applied
  size_t accepted = 0;              // batches of the step the engine took
  Status error;                     // a failure of the step: the pass ends with it
};

namespace {

// The engine refusing an event because of the state it would change (the
// pools moved on since the step was planned), as opposed to a write that
// cannot happen now (a full disk, a closed write gate, a broken engine).
bool IsRefusal(const Status& s) {
  switch (s.code()) {
    case Status::Code::kInvalidArgument:
    case Status::Code::kNotFound:
    case Status::Code::kAlreadyExists:
    case Status::Code::kFailedPrecondition:
      return true;
    default:
      return false;
  }
}

}  // namespace

void ArchiveService::Consolidate(Reply reply) {
  if (stopped_) return reply(Status::Unavailable("stopping: no consolidation pass starts now"));
  if (pass_) return next_pass_.push_back(std::move(reply));
  StartPass({std::move(reply)});
}

void ArchiveService::StartPass(std::vector<Reply> replies) {
  pass_ =
      std::make_unique<Pass>(engine_.projection(), config_.archive.policy, engine_.clock().Now());
  pass_->replies = std::move(replies);
  PlanStep();
}

void ArchiveService::PlanStep() {
  planner_.Post([this, pass = pass_.get()] {
    auto step = planner_.Guarded<state::ConsolidationPlan>([pass] { return pass->plan.Next(); });
    boost::asio::post(io_,
                      [this, step = std::move(step)]() mutable { OnPlanned(std::move(step)); });
  });
}

void ArchiveService::OnPlanned(Result<state::ConsolidationPlan> step) {
  if (!step.ok()) return EndPass(step.status());
  if (stopped_) return EndPass(Status::OK());
  const auto t0 = std::chrono::steady_clock::now();
  auto stale = state::DropStale(engine_.pending_view(), &step->events);
  if (!stale.ok()) return EndPass(stale.status());
  if (step->events.empty()) return pass_->plan.done() ? EndPass(Status::OK()) : PlanStep();
  SubmitStep(std::move(step->events));
  if (pass_)
    Pace(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
}

// A step's io-thread time is about proportional to its items: keep it
// near kStepMs, so requests never wait long behind one, while steps stay
// as large as that allows (each waits for its fsync).
void ArchiveService::Pace(double io_ms) {
  constexpr double kStepMs = 2;
  constexpr size_t kMinItems = 16, kMaxItems = 4096;
  ++pass_->steps;
  pass_->io_ms += io_ms;
  pass_->max_io_ms = std::max(pass_->max_io_ms, io_ms);
  size_t n = pass_->plan.step_items();
  if (io_ms > 2 * kStepMs)
    n = std::max(kMinItems, n / 2);
  else if (io_ms < kStepMs / 2)
    n = std::min(kMaxItems, n + n / 2);
  pass_->plan.set_step_items(n);
}

void ArchiveService::SubmitStep(state::Events events) {
  pass_->accepted = 0;
  // A copy goes to the engine: the step is kept for SubmitEach.
  Status s =
      engine_.Submit(events, [this](const Status& st, std::span<const state::Event> committed) {
        OnSubmitted(st, committed);
      });
  if (s.ok()) {
    ++pass_->inflight;
    ++pass_->accepted;
    return;
  }
  if (!IsRefusal(s)) return EndPass(s);
  SubmitEach(std::move(events));
}

void ArchiveService::SubmitEach(state::Events events) {
  for (state::Event& e : events) {
    const std::string what = std::string(state::EventTypeName(e.type));
    Status s = engine_.Submit({std::move(e)},
                              [this](const Status& st, std::span<const state::Event> committed) {
                                OnSubmitted(st, committed);
                              });
    if (s.ok()) {
      ++pass_->inflight;
      ++pass_->accepted;
    } else if (IsRefusal(s)) {
      log_->debug("consolidation: a {} no longer holds: {}", what, s.message());
    } else {
      pass_->error = s;
      break;
    }
  }
  StepSettled();
}

void ArchiveService::OnSubmitted(const Status& status, std::span<const state::Event> committed) {
  --pass_->inflight;
  if (status.ok())
    pass_->done.Add(committed);
  else if (pass_->error.ok())
    pass_->error = status;
  StepSettled();
}

void ArchiveService::StepSettled() {
  if (pass_->inflight > 0) return;

  if (!pass_->error.ok()) return EndPass(pass_->error);
  // Nothing of the step went in: what is left waits for the next pass.
  if (stopped_ || pass_->accepted == 0) return EndPass(Status::OK());
  PlanStep();
}

void ArchiveService::EndPass(Status status) {
  std::unique_ptr<Pass> pass = std::move(pass_);
  json summary = pass->done.ToJson();
  if (pass->steps > 0)
    log_->info(
        "archive: consolidated {} in {} steps, {:.0f} ms of them on the io thread (at most {:.1f} "
        "ms a step)",
        summary.dump(), pass->steps, pass->io_ms, pass->max_io_ms);
  auto answer = [replies = std::move(pass->replies)](const Result<json>& r) {
    for (const Reply& reply : replies) reply(r);
  };
  if (!status.ok()) {
    answer(status.WithContext("consolidation (" + summary.dump() + " done before)"));
  } else {
    // Answer once the entries are in staging (and searchable).
    Run(
        [this](archive::ArchiveStore& store) -> Result<json> {
          auto n = store.CatchUp(engine_.applied_seq());
          if (!n.ok()) return n.status();
          return json::object();
        },
        [summary, answer](Result<json> r) { answer(r.ok() ? Result<json>(summary) : r); });
  }
  if (next_pass_.empty()) return;
  std::vector<Reply> next = std::move(next_pass_);
  next_pass_.clear();
  if (!stopped_) return StartPass(std::move(next));
  for (const Reply& reply : next)
    reply(Status::Unavailable("stopping: no consolidation pass starts now"));
}

void ArchiveService::ScheduleConsolidate() {
  if (config_.archive.consolidate_every <= 0 || stopped_) return;
  consolidate_timer_.expires_after(std::chrono::milliseconds(config_.archive.consolidate_every));
  consolidate_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    Consolidate([this](Result<json> r) {
      if (!r.ok()) log_->warn("archive: consolidation failed: {}", r.status().message());
      ScheduleConsolidate();
    });
  });
}

void ArchiveService::ScheduleRollup() {
  if (stopped_) return;
  TimeMs now = engine_.clock().Now();
  TimeMs next_midnight = (now / 86400000 + 1) * 86400000;
  // A minute past midnight: entries of the day just ended are all staged.
  rollup_timer_.expires_after(std::chrono::milliseconds(next_midnight - now + 60000));
  rollup_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    Run([this](
            archive::ArchiveStore& s) { return s.RollupBefore(FormatDate(engine_.clock().Now())); },
        [this](Result<json> r) {
          if (!r.ok())
            log_->warn("archive: rollup failed: {}", r.status().message());
          else
            log_->info("archive: rolled up {}", (*r)["rolled_up"].dump());
          ScheduleRollup();
        });
  });
}

}  // namespace limbic::runtime
