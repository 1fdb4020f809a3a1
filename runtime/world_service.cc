#include "runtime/world_service.h"

#include "archive/archive.h"
#include "base/env.h"
#include "world/day_input.h"

namespace limbic::runtime {

namespace {
constexpr int kRecentDays = 7;
constexpr size_t kMaxDaysPerPass = 31;
}  // namespace

WorldService::WorldService(boost::asio::io_context& io, state::Engine& engine, const Config& config,
                           std::shared_ptr<spdlog::logger> log)
    : engine_(engine), config_(config), log_(std::move(log)), timer_(io), model_(io, "world") {}

WorldService::~WorldService() {
  stopping_ = true;
  model_.Stop();
}

Status WorldService::Open() {
  auto model = world::WorldModel::Open(config_.state_dir + "/memory", config_.world, log_);
  if (!model.ok()) return model.status().WithContext("opening the world model");
  // A pass scoring a day of very many events stops when the runtime does.
  (*model)->set_stop(&stopping_);
  model_.Start(std::move(*model));
  return Status::OK();
}

void WorldService::Start() {
  if (!config_.world.daily) return;
  std::string today = FormatDate(engine_.clock().Now());
  model_.Post([this, today](world::WorldModel& m) { Pass(m, today); });
  Schedule();
}

void WorldService::Stop() {
  stopped_ = true;
  stopping_ = true;
  timer_.cancel();
}

void WorldService::Run(Model::Job job, Model::Reply reply) {
  model_.Run(std::move(job), [this, reply = std::move(reply)](Result<nlohmann::json> result) {
    // A bug in a job must not take the runtime down with it, nor go unseen.
    if (!result.ok() && result.status().code() == Status::Code::kInternal)
      log_->error("world: a request failed: {}", result.status().message());
    reply(std::move(result));
  });
}

void WorldService::Schedule() {
  if (stopped_) return;
  TimeMs now = engine_.clock().Now();
  TimeMs next_midnight = (now / 86400000 + 1) * 86400000;
  // Five minutes past midnight: after the archive's rollup of the day.
  timer_.expires_after(std::chrono::milliseconds(next_midnight - now + 5 * 60000));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    std::string today = FormatDate(engine_.clock().Now());
    model_.Post([this, today](world::WorldModel& m) { Pass(m, today); });
    Schedule();
  });
}

void WorldService::Pass(world::WorldModel& model, const std::string& today) {
  try {
    PassDays(model, today);
  } catch (const std::exception& e) {
    log_->error("world: the daily pass failed: {}", e.what());
  }
}

void WorldService::PassDays(world::WorldModel& model, const std::string& today) {
  auto day = ParseDate(today);
  if (!day.ok()) return;
  std::set<std::string> days;
  for (int i = 1; i <= kRecentDays; ++i) days.insert(FormatDate(*day - TimeMs{i} * 86400000));
  auto done = model.ExtractedDays();
  if (!done.ok()) log_->warn("world: reading the ledger: {}", done.status().message());
  archive::Staging staging(config_.state_dir + "/archive/staging", Env::Default());
  auto staged = staging.Days();
  if (!staged.ok()) log_->warn("world: listing staged days: {}", staged.status().message());
  if (staged.ok() && done.ok())
    for (const std::string& d : *staged)
      if (d < today && !done->count(d)) days.insert(d);
  size_t extracted = 0;
  for (auto it = days.rbegin(); it != days.rend() && extracted < kMaxDaysPerPass; ++it) {
    if (stopping_.load()) return;
    auto input = world::DayInput(config_.state_dir, *it);
    if (!input.ok()) {
      log_->warn("world: reading {}: {}", *it, input.status().message());
      continue;
    }
    if (input->text.empty() && input->events.empty()) continue;
    auto r = model.Extract(*input);
    if (!r.ok()) {
      log_->warn("world: extracting {}: {}", *it, r.status().message());
    } else if (!(*r)["skipped"].get<bool>()) {
      log_->info("world: extracted {}", r->dump());
      ++extracted;
    }
  }
  if (stopping_.load()) return;
  auto c = model.Consolidate(today);
  if (!c.ok()) log_->warn("world: consolidating: {}", c.status().message());
  else if ((*c)["added"].get<size_t>() > 0 || !(*c)["decayed"].empty()) log_->info("world: consolidated {}", c->dump());
}

}  // namespace limbic::runtime
