#include "runtime/outbox.h"

#include <boost/asio/post.hpp>
#include <deque>
#include <set>

#include "runtime/submit.h"

namespace limbic::runtime {

using nlohmann::json;
using state::Event;
using state::EventType;

struct Outbox::Lane {
  std::string name;
  EffectorSlot* slot = nullptr;  // nullptr: not configured
  effectors::RetryPolicy policy;
  std::unique_ptr<effectors::RateLimiter> rate;
  std::deque<std::string> ready;  // action ids due now, in order
  std::set<std::string> queued;   // same ids, to avoid duplicates
  int inflight = 0;
  std::unique_ptr<boost::asio::steady_timer> rate_timer;
};

Outbox::Outbox(boost::asio::io_context& ioc, state::Engine& engine,
               std::map<std::string, EffectorSlot>& effectors, const OutboxConfig& config,
               Metrics& metrics, std::shared_ptr<spdlog::logger> log)
    : ioc_(ioc),
      engine_(engine),
      effectors_(effectors),
      config_(config),
      metrics_(metrics),
      log_(std::move(log)),
      rng_(std::random_device{}()) {
  metrics_.Declare("limbic_delivery_attempts_total", Metrics::Type::kCounter,
                   "delivery attempts by effector");
  metrics_.Declare("limbic_delivery_failures_total", Metrics::Type::kCounter,
                   "failed delivery attempts by effector and kind (retry, permanent)");
  metrics_.Declare("limbic_deliveries_completed_total", Metrics::Type::kCounter,
                   "actions delivered by effector");
}

Outbox::~Outbox() = default;

Outbox::Lane* Outbox::LaneFor(const std::string& effector) {
  auto it = lanes_.find(effector);
  if (it != lanes_.end()) return it->second.get();
  auto lane = std::make_unique<Lane>();
  lane->name = effector;
  auto slot = effectors_.find(effector);
  lane->policy.max_attempts = config_.max_attempts;
  lane->policy.base_backoff = config_.backoff;
  lane->policy.max_backoff = config_.max_backoff;
  lane->policy.jitter = config_.jitter;
  if (slot != effectors_.end()) {
    lane->slot = &slot->second;
    const auto& limits = slot->second.limits;
    if (limits.max_attempts > 0) lane->policy.max_attempts = limits.max_attempts;
    if (limits.backoff > 0) lane->policy.base_backoff = limits.backoff;
    if (limits.rate > 0)
      lane->rate = std::make_unique<effectors::RateLimiter>(limits.rate, limits.burst);
  }
  Lane* raw = lane.get();
  lanes_.emplace(effector, std::move(lane));
  return raw;
}

Status Outbox::Start() {
  TimeMs now = engine_.clock().Now();
  for (const char* status : {"inflight", "pending", "failed"}) {
    auto actions = engine_.projection().ListActions(std::string(status));
    if (!actions.ok()) return actions.status();
    for (const json& a : *actions) {
      TimeMs at = now;
      if (a["next_attempt_at"].is_string()) {
        auto t = ParseTime(a["next_attempt_at"].get<std::string>(), TimeRule::kLogged);
        if (t.ok()) at = *t;
      }
      Schedule(a["id"].get<std::string>(), a["effector"].get<std::string>(), at);
    }
  }
  return Status::OK();
}

void Outbox::OnEvents(std::span<const Event> events) {
  TimeMs now = engine_.clock().Now();
  for (const Event& e : events) {
    // One waiting for approval is scheduled when approved (Send skips it
    // meanwhile); the approval does not name the effector.
    if (e.type == EventType::kActionEnqueued && e.fields.value("require_approval", false) != true)
      Schedule(e.Str("action_id"), e.Str("effector"), now);
    else if (e.type == EventType::kActionApproved || e.type == EventType::kActionRetried)
      ScheduleApproved(e.Str("action_id"), now);
  }
}

void Outbox::ScheduleApproved(const std::string& action_id, TimeMs now) {
  auto rec = engine_.pending_view().Get(state::Pool::kActions, action_id);
  if (rec.ok() && rec->has_value() && (**rec)["effector"].is_string())
    Schedule(action_id, (**rec)["effector"].get<std::string>(), now);
}

void Outbox::Schedule(const std::string& action_id, const std::string& effector, TimeMs at) {
  if (stopping_) return;
  TimeMs delay = at - engine_.clock().Now();
  if (delay > 0) {
    auto timer = std::make_unique<boost::asio::steady_timer>(ioc_);
    timer->expires_after(std::chrono::milliseconds(delay));
    timer->async_wait([this, action_id, effector](const boost::system::error_code& ec) {
      if (ec) return;
      retry_timers_.erase(action_id);
      Schedule(action_id, effector, 0);
    });
    retry_timers_[action_id] = std::move(timer);
    return;
  }
  Lane* lane = LaneFor(effector);
  if (lane->queued.insert(action_id).second) lane->ready.push_back(action_id);
  Pump(*lane);
}

void Outbox::Pump(Lane& lane) {
  while (!stopping_ && !lane.ready.empty()) {
    if (lane.slot && lane.inflight >= lane.slot->limits.concurrency) return;
    if (lane.rate) {
      TimeMs now = engine_.clock().Now();
      if (!lane.rate->TryTake(now)) {
        if (!lane.rate_timer) {
          lane.rate_timer = std::make_unique<boost::asio::steady_timer>(ioc_);
          lane.rate_timer->expires_after(
              std::chrono::milliseconds(std::max<TimeMs>(1, lane.rate->NextAvailable(now) - now)));
          lane.rate_timer->async_wait([this, &lane](const boost::system::error_code& ec) {
            lane.rate_timer.reset();
            if (!ec) Pump(lane);
          });
        }
        return;
      }
    }
    std::string id = lane.ready.front();
    lane.ready.pop_front();
    lane.queued.erase(id);
    Send(lane, id);
  }
}

void Outbox::Send(Lane& lane, const std::string& action_id) {
  auto rec = engine_.pending_view().Get(state::Pool::kActions, action_id);
  if (!rec.ok() || !rec->has_value()) return;  // pruned or unknown: nothing to do
  json action = std::move(**rec);
  const std::string status = action.value("status", "");
  if (status != "pending" && status != "failed" && status != "inflight") return;
  int attempt = action.value("attempts", 0) + 1;

  if (!lane.slot) {
    Record({Event{0, 0, EventType::kActionDead,
                  {{"action_id", action_id},
                   {"error", "unknown effector \"" + lane.name + "\" (not in the config)"}}}},
           "dead (unknown effector)");
    return;
  }
  // Reserve the slot now; the delivery starts once action_sent is durable.
  ++lane.inflight;
  ++inflight_total_;
  std::vector<Event> sent{
      Event{0,
            0,
            EventType::kActionSent,
            {{"action_id", action_id}, {"attempt", attempt}, {"actor", "outbox"}}}};
  Status s = engine_.Submit(std::move(sent), [this, &lane, action, attempt](
                                                 const Status& st, std::span<const Event>) {
    if (!st.ok() || cancelled_) {
      // Past the shutdown deadline nothing new starts; the action is
      // inflight in the pool and goes out again on the next start.
      if (!st.ok())
        log_->error("outbox: action {}: recording action_sent failed: {}",
                    action["id"].get<std::string>(), st.ToString());
      --lane.inflight;
      --inflight_total_;
      MaybeFinishStop();
      return;
    }
    Deliver(lane, action, attempt);
  });
  if (!s.ok()) {
    log_->error("outbox: action {}: cannot send: {}", action_id, s.ToString());
    --lane.inflight;
    --inflight_total_;
  }
}

void Outbox::Deliver(Lane& lane, const json& action, int attempt) {
  effectors::Delivery d;
  d.action_id = action["id"].get<std::string>();
  d.effector = lane.name;
  d.type = action.value("type", "");
  d.idempotency_key = action.value("idempotency_key", d.action_id);
  d.thread_id = action["thread_id"].is_string() ? action["thread_id"].get<std::string>() : "";
  d.payload = action.value("payload", json::object());
  d.attempt = attempt;
  metrics_.Add("limbic_delivery_attempts_total", "effector=\"" + lane.name + "\"");
  if (on_dispatch) on_dispatch(d.action_id);
  std::string id = d.action_id;
  lane.slot->effector->Deliver(d, [this, &lane, id, attempt](effectors::Outcome outcome) {
    OnOutcome(lane, id, attempt, std::move(outcome));
  });
}

void Outbox::OnOutcome(Lane& lane, const std::string& action_id, int attempt,
                       effectors::Outcome outcome) {
  --lane.inflight;
  --inflight_total_;
  const std::string labels = "effector=\"" + lane.name + "\"";
  using Kind = effectors::Outcome::Kind;
  if (outcome.kind == Kind::kCancelled) {
    if (stopping_) {
      // Whether it arrived is unknown: record nothing, so the action stays
      // inflight and is delivered again (same idempotency key) on the next start.
      log_->info("outbox: action {}: delivery interrupted by shutdown; it stays inflight", action_id);
      return MaybeFinishStop();
    }
    outcome = effectors::Outcome::Retry("cancelled");  // not ours: an ordinary retry
  }
  if (outcome.kind == Kind::kComplete) {
    metrics_.Add("limbic_deliveries_completed_total", labels);
    json f = {{"action_id", action_id}, {"attempt", attempt}};
    if (!outcome.result.is_null()) f["result"] = outcome.result;
    Record({Event{0, 0, EventType::kActionComplete, std::move(f)}}, "complete");
  } else if (outcome.kind == Kind::kRetry && !lane.policy.GiveUp(attempt)) {
    metrics_.Add("limbic_delivery_failures_total", labels + ",kind=\"retry\"");
    std::uniform_real_distribution<double> unit(0, 1);
    TimeMs at = engine_.clock().Now() + lane.policy.Backoff(attempt, unit(rng_));
    Record({Event{0, 0, EventType::kActionFailed,
                  {{"action_id", action_id},
                   {"attempt", attempt},
                   {"error", outcome.error},
                   {"retry_at", FormatTime(at)}}}},
           "failed");
    Schedule(action_id, lane.name, at);
  } else {
    metrics_.Add("limbic_delivery_failures_total",
                 labels + (outcome.kind == Kind::kRetry ? ",kind=\"retry\"" : ",kind=\"permanent\""));
    std::string why = outcome.kind == Kind::kRetry
                          ? "gave up after " + std::to_string(attempt) + " attempts: " + outcome.error
                          : outcome.error;
    Record({Event{0, 0, EventType::kActionDead,
                  {{"action_id", action_id}, {"attempt", attempt}, {"error", why}}}},
           "dead");
  }
  Pump(lane);
  MaybeFinishStop();
}

void Outbox::Record(std::vector<Event> events, const std::string& what) {
  std::string id = events.front().Str("action_id");
  Status s = SubmitCommand(engine_, std::move(events), {"outbox"}, nullptr);
  if (!s.ok()) log_->error("outbox: action {}: recording {} failed: {}", id, what, s.ToString());
}

void Outbox::Stop(TimeMs grace, std::function<void()> done) {
  stopping_ = true;
  retry_timers_.clear();  // cancels them
  for (auto& [name, lane] : lanes_) {
    lane->ready.clear();
    lane->queued.clear();
    lane->rate_timer.reset();
  }
  stop_done_ = std::move(done);
  if (inflight_total_ == 0) return MaybeFinishStop();
  log_->info("outbox: waiting up to {} ms for {} deliveries in flight", grace, inflight_total_);
  stop_timer_ = std::make_unique<boost::asio::steady_timer>(ioc_);
  stop_timer_->expires_after(std::chrono::milliseconds(grace));
  stop_timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec || !stop_done_) return;
    log_->warn("outbox: {} deliveries still in flight at the deadline: cancelling them; they "
               "stay inflight and are delivered again on the next start",
               inflight_total_);
    cancelled_ = true;
    for (auto& [name, slot] : effectors_) slot.effector->Cancel();
    auto done = std::move(stop_done_);
    stop_done_ = nullptr;
    done();
  });
}

void Outbox::MaybeFinishStop() {
  if (!stopping_ || inflight_total_ != 0 || !stop_done_) return;
  if (stop_timer_) stop_timer_->cancel();
  auto done = std::move(stop_done_);
  stop_done_ = nullptr;
  boost::asio::post(ioc_, std::move(done));
}

}  // namespace limbic::runtime
