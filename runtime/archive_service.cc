#include "runtime/archive_service.h"

#include <algorithm>

#include "state/consolidate.h"

namespace limbic::runtime {

using nlohmann::json;

ArchiveService::ArchiveService(boost::asio::io_context& io, state::Engine& engine, const Config& config,
                               std::shared_ptr<spdlog::logger> log)
    : engine_(engine),
      config_(config),
      log_(std::move(log)),
      consolidate_timer_(io),
      rollup_timer_(io),
      // After each job the io thread takes the days the store could not read.
      store_(io, "archive", [this](archive::ArchiveStore& s) {
        return [this, now = s.unreadable()]() mutable { NoteUnreadable(std::move(now)); };
      }) {}

Status ArchiveService::Open() {
  archive::StoreOptions o;
  o.state_dir = config_.state_dir;
  o.semantic_links = config_.archive.semantic_links;
  o.social_links = config_.archive.social_links;
  auto store = archive::ArchiveStore::Open(o);
  if (!store.ok()) return store.status().WithContext("opening the archive");
  auto caught = (*store)->CatchUp(engine_.applied_seq());
  if (!caught.ok()) return caught.status().WithContext("catching the archive's staging up with the log");
  if (*caught > 0) log_->info("archive: staged {} entries from the log", *caught);
  NoteUnreadable((*store)->unreadable());
  store_.Start(std::move(store).value());
  return Status::OK();
}

void ArchiveService::Start() {
  ScheduleConsolidate();
  if (config_.archive.rollup) {
    // Days missed while limbic was not running, then every midnight.
    Run([this](archive::ArchiveStore& s) { return s.RollupBefore(FormatDate(engine_.clock().Now())); },
        [this](Result<json> r) {
          if (!r.ok()) log_->warn("archive: rollup failed: {}", r.status().message());
          else if (!(*r)["rolled_up"].empty()) log_->info("archive: rolled up {}", (*r)["rolled_up"].dump());
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
        if (!r.ok()) log_->error("archive: staging the log's entries failed: {}", r.status().message());
      });
}

void ArchiveService::OnApplied(std::span<const state::Event> events) {
  for (const state::Event& e : events)
    if (e.type == state::EventType::kEntryStaged) return CatchUp();
}

void ArchiveService::Consolidate(Reply reply) {
  auto plan = state::BuildConsolidation(engine_.projection(), config_.archive.policy, engine_.clock().Now());
  if (!plan.ok()) return reply(plan.status());
  json summary = {{"entries", plan->entries()},
                  {"threads", plan->threads},
                  {"percepts", plan->percepts},
                  {"actions", plan->actions},
                  {"expired", plan->expired}};
  if (plan->events.empty()) return reply(summary);
  Status s = engine_.Submit(std::move(plan->events), [this, summary, reply](const Status& st, auto) {
    if (!st.ok()) return reply(st);
    // Answer once the entries are in staging (and searchable).
    Run(
        [this](archive::ArchiveStore& store) -> Result<json> {
          auto n = store.CatchUp(engine_.applied_seq());
          if (!n.ok()) return n.status();
          return json::object();
        },
        [summary, reply](Result<json> r) { reply(r.ok() ? Result<json>(summary) : r); });
  });
  if (!s.ok()) reply(s);
}

void ArchiveService::ScheduleConsolidate() {
  if (config_.archive.consolidate_every <= 0 || stopped_) return;
  consolidate_timer_.expires_after(std::chrono::milliseconds(config_.archive.consolidate_every));
  consolidate_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    Consolidate([this](Result<json> r) {
      if (!r.ok()) log_->warn("archive: consolidation failed: {}", r.status().message());
      else if ((*r)["entries"].get<size_t>() > 0) log_->info("archive: consolidated {}", r->dump());
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
    Run([this](archive::ArchiveStore& s) { return s.RollupBefore(FormatDate(engine_.clock().Now())); },
        [this](Result<json> r) {
          if (!r.ok()) log_->warn("archive: rollup failed: {}", r.status().message());
          else log_->info("archive: rolled up {}", (*r)["rolled_up"].dump());
          ScheduleRollup();
        });
  });
}

}  // namespace limbic::runtime
