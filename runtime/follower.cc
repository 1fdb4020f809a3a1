#include "runtime/follower.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <thread>

#include "state/event_log.h"

namespace limbic::runtime {
namespace {

// Events a follower may have handed to the io thread and not yet applied.
constexpr uint64_t kFollowInflight = 16384;

}  // namespace

std::string StandbyFilePath(const std::string& state_dir) { return state_dir + "/standby.json"; }

Status ReadStream(nats::Connection& conn, const std::string& stream, const std::string& agent,
                  uint64_t start_stream_seq, uint64_t first, uint64_t last,
                  const std::function<Status(const nats::Message&, uint64_t)>& take) {
  const std::string subject = "limbic." + agent + ".events";
  auto sub = conn.SubscribeOrdered(stream, subject, start_stream_seq);
  for (int i = 0; i < 50 && !sub.ok() && sub.status().IsUnavailable(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    sub = conn.SubscribeOrdered(stream, subject, start_stream_seq);
  }
  if (!sub.ok()) return sub.status();
  uint64_t expected = first;
  while (expected <= last) {
    auto next = (*sub)->Next(10000);
    if (!next.ok()) return next.status();
    if (!next->has_value())
      return Status::Unavailable("the stream stopped sending at event seq " +
                                 std::to_string(expected) + " of " + std::to_string(last));
    const nats::Message& m = **next;
    const uint64_t seq = ReplicatedSeq(m, agent);
    if (seq < expected) continue;  // a duplicate
    if (seq != expected)
      return Status::Corruption(
          "stream " + stream + " seq " + std::to_string(m.stream_seq) + " holds event seq " +
          std::to_string(seq) + " where seq " + std::to_string(expected) + " was expected" +
          (expected == 1 ? ": the stream does not hold the whole history" : ""));
    LIMBIC_RETURN_IF_ERROR(take(m, seq));
    ++expected;
  }
  return Status::OK();
}

Follower::Follower(boost::asio::io_context& ioc, state::Engine& engine, Options options,
                   Metrics& metrics, std::shared_ptr<spdlog::logger> log)
    : ioc_(ioc),
      engine_(engine),
      options_(std::move(options)),
      metrics_(metrics),
      log_(std::move(log)) {}

Follower::~Follower() { Stop(); }

Status Follower::Start() {
  applied_ = submitted_ = engine_.applied_seq();
  metrics_.Declare("limbic_replication_lag_events", Metrics::Type::kGauge,
                   "events in the stream this standby has not applied yet");
  metrics_.Declare("limbic_replication_connected", Metrics::Type::kGauge,
                   "1 while NATS is connected");
  std::weak_ptr<int> alive = alive_;
  metrics_.AddCollector([this, alive](Metrics& m) {
    if (alive.expired()) return;
    Snapshot s = snapshot();
    m.Set("limbic_replication_lag_events", "", static_cast<double>(s.lag()));
    m.Set("limbic_replication_connected", "", s.connected ? 1 : 0);
  });
  log_->info("standby: following agent {} on stream {} at {} from seq {}", options_.agent,
             options_.stream, options_.nats.front(), applied_);
  thread_ = std::thread([this] { Run(); });
  return Status::OK();
}

void Follower::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Follower::Snapshot Follower::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  Snapshot s;
  s.connected = connected_;
  s.error = error_;
  s.applied_seq = applied_;
  s.stream_last_seq = std::max(stream_last_, applied_);
  return s;
}

void Follower::Drain(int64_t timeout_ms, std::function<void(Status, uint64_t)> done) {
  auto fired = std::make_shared<bool>(false);
  auto once = [fired, done = std::move(done)](Status s, uint64_t seq) {
    if (*fired) return;
    *fired = true;
    done(std::move(s), seq);
  };
  {
    std::lock_guard<std::mutex> lock(mu_);
    draining_ = true;
    drain_known_ = false;
    drain_done_ = once;
  }
  cv_.notify_all();
  auto timer =
      std::make_shared<boost::asio::steady_timer>(ioc_, std::chrono::milliseconds(timeout_ms));
  std::weak_ptr<int> alive = alive_;
  timer->async_wait([this, timer, once, alive](const boost::system::error_code& ec) mutable {
    if (ec || alive.expired()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      draining_ = false;
      drain_done_ = nullptr;
    }
    once(Status::Unavailable("the standby did not reach the stream's last event in time"), 0);
  });
}

void Follower::Run() {
  nats::ConnectOptions co;
  co.servers = options_.nats;
  co.name = "limbic standby " + options_.agent;
  co.retry_on_failed_connect = true;
  co.on_state = [this](bool up) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      connected_ = up;
    }
    cv_.notify_all();
  };
  std::unique_ptr<nats::Connection> conn;
  auto stopped = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    return stop_;
  };
  auto wait = [this](int ms) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stop_; });
  };
  while (!stopped()) {
    if (!conn) {
      auto c = nats::Connection::Connect(co);
      if (!c.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        error_ = c.status().message();
      } else {
        conn = std::move(c).value();
      }
      if (!conn) {
        wait(1000);
        continue;
      }
    }
    if (!conn->connected()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        connected_ = false;
        error_ = "NATS at " + conn->describe() + " is unreachable";
      }
      if (conn->closed()) conn.reset();
      wait(250);
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      connected_ = true;
    }
    Status s = Follow(*conn);
    if (stopped()) break;
    if (!s.ok()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (error_ != s.message()) log_->warn("standby: {}", s.message());
        error_ = s.message();
      }
      wait(500);
    }
  }
}

Status Follower::Follow(nats::Connection& conn) {
  const std::string subject = "limbic." + options_.agent + ".events";
  uint64_t local;
  {
    std::unique_lock<std::mutex> lock(mu_);
    // What was handed to the io thread is applied (or has failed) first.
    cv_.wait(lock, [this] { return stop_ || submitted_ <= applied_; });
    if (stop_) return Status::OK();
    restart_ = false;
    local = submitted_ = applied_;
  }
  auto last = conn.LastMessage(options_.stream, subject);
  if (!last.ok()) return last.status();
  uint64_t start = 1;
  if (last->has_value()) {
    uint64_t in_stream = ReplicatedSeq(**last, options_.agent);
    if (in_stream == 0)
      return Status::Corruption("the last message of " + subject + " is not an event of agent " +
                                options_.agent);
    if (in_stream < local)
      return Status::FailedPrecondition("this standby's log is at seq " + std::to_string(local) +
                                        ", ahead of the stream (seq " + std::to_string(in_stream) +
                                        "): it is not a copy of this stream");
    {
      std::lock_guard<std::mutex> lock(mu_);
      stream_last_ = std::max(stream_last_, in_stream);
    }
    const uint64_t behind = in_stream - local;
    start = (*last)->stream_seq > behind ? (*last)->stream_seq - behind + 1 : 1;
    // This log must be the stream's so far: its last line is the stream's
    // message for the same seq.
    if (local > 0) {
      if ((*last)->stream_seq <= behind)
        return Status::FailedPrecondition("stream " + options_.stream + " does not hold seq " +
                                          std::to_string(local) + " of agent " + options_.agent +
                                          ", this standby's last event");
      auto same = conn.GetMessage(options_.stream, start - 1);
      if (!same.ok())
        return same.status().WithContext("checking this standby's last event against the stream");
      auto line = LogLineAt(engine_.events_dir(), local);
      if (!line.ok()) return line.status();
      if (ReplicatedSeq(*same, options_.agent) != local || !line->has_value() ||
          **line != same->data)
        return Status::FailedPrecondition("this standby's log differs from stream " +
                                          options_.stream + " at seq " + std::to_string(local) +
                                          ": it is not a copy of agent " + options_.agent +
                                          "'s log (follow into an empty state dir)");
    }
  }
  auto sub = conn.SubscribeOrdered(options_.stream, subject, start);
  if (!sub.ok()) return sub.status();
  {
    std::lock_guard<std::mutex> lock(mu_);
    error_.clear();
  }
  uint64_t expected = local + 1;
  std::vector<state::Event> events;
  std::vector<std::string> lines;
  while (true) {
    // Promotion: learn where the stream ends, then stop there.
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stop_) return Status::OK();
      if (restart_) return Status::Unavailable(error_);
      if (draining_ && !drain_known_) {
        lock.unlock();
        auto tail = conn.LastMessage(options_.stream, subject);
        lock.lock();
        if (!tail.ok()) {
          auto done = std::move(drain_done_);
          draining_ = false;
          drain_done_ = nullptr;
          std::weak_ptr<int> alive = alive_;
          Status st = tail.status().WithContext("learning where the stream ends");
          boost::asio::post(ioc_, [alive, done, st] {
            if (!alive.expired() && done) done(st, 0);
          });
          continue;
        }
        drain_known_ = true;
        drain_target_ = tail->has_value() ? ReplicatedSeq(**tail, options_.agent) : 0;
        drain_stream_seq_ = tail->has_value() ? (*tail)->stream_seq : 0;
      }
      if (draining_ && drain_known_ && applied_ >= drain_target_) {
        auto done = std::move(drain_done_);
        uint64_t stream_seq = drain_stream_seq_;
        draining_ = false;
        drain_done_ = nullptr;
        stop_ = true;
        std::weak_ptr<int> alive = alive_;
        boost::asio::post(ioc_, [alive, done, stream_seq] {
          if (!alive.expired() && done) done(Status::OK(), stream_seq);
        });
        return Status::OK();
      }
      if (submitted_ - applied_ >= kFollowInflight) {
        cv_.wait_for(lock, std::chrono::milliseconds(50));
        continue;
      }
    }
    events.clear();
    lines.clear();
    int timeout = 200;
    while (events.size() < 1024) {
      auto next = (*sub)->Next(timeout);
      if (!next.ok()) return next.status();
      if (!next->has_value()) break;
      timeout = 1;
      const nats::Message& m = **next;
      uint64_t seq = ReplicatedSeq(m, options_.agent);
      if (seq == 0)
        return Status::Corruption("stream " + options_.stream + " seq " +
                                  std::to_string(m.stream_seq) + " is not an event of agent " +
                                  options_.agent);
      if (seq < expected) continue;  // already applied
      if (seq > expected)
        return Status::Corruption("stream " + options_.stream + " seq " +
                                  std::to_string(m.stream_seq) + " holds event seq " +
                                  std::to_string(seq) + " where seq " + std::to_string(expected) +
                                  " was expected");
      auto event = state::DecodeEvent(m.data);
      if (!event.ok())
        return event.status().WithContext("stream " + options_.stream + " seq " +
                                          std::to_string(m.stream_seq));
      if (event->seq != seq)
        return Status::Corruption("stream " + options_.stream + " seq " +
                                  std::to_string(m.stream_seq) + ": its Nats-Msg-Id says seq " +
                                  std::to_string(seq) + ", its body seq " +
                                  std::to_string(event->seq));
      events.push_back(std::move(event).value());
      lines.push_back(m.data);
      ++expected;
    }
    if (events.empty()) continue;
    {
      std::lock_guard<std::mutex> lock(mu_);
      submitted_ = events.back().seq;
      stream_last_ = std::max(stream_last_, submitted_);
    }
    std::weak_ptr<int> alive = alive_;
    boost::asio::post(
        ioc_, [this, alive, events = std::move(events), lines = std::move(lines)]() mutable {
          if (!alive.expired()) Apply(std::move(events), std::move(lines));
        });
  }
}

void Follower::Apply(std::vector<state::Event> events, std::vector<std::string> lines) {
  const uint64_t first = events.front().seq;
  const uint64_t last = events.back().seq;
  // The standby's log must be the primary's, line for line.
  for (size_t i = 0; i < events.size(); ++i) {
    if (state::EncodeEvent(events[i]) != lines[i]) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = "event seq " + std::to_string(events[i].seq) +
               " does not encode back to the line the primary wrote; this standby stops applying";
      log_->error("standby: {}", error_);
      stop_ = true;
      cv_.notify_all();
      return;
    }
  }
  Status s = engine_.SubmitReplicated(std::move(events),
                                      [this, alive = std::weak_ptr<int>(alive_), first, last](
                                          const Status& st, std::span<const state::Event>) {
                                        if (alive.expired()) return;
                                        std::lock_guard<std::mutex> lock(mu_);
                                        if (st.ok()) {
                                          applied_ = std::max(applied_, last);
                                        } else {
                                          error_ = "applying seqs " + std::to_string(first) + ".." +
                                                   std::to_string(last) + ": " + st.message();
                                          submitted_ = applied_;
                                          restart_ = true;
                                        }
                                        cv_.notify_all();
                                      });
  if (!s.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    error_ =
        "applying seqs " + std::to_string(first) + ".." + std::to_string(last) + ": " + s.message();
    log_->error("standby: {}", error_);
    submitted_ = applied_;
    restart_ = true;
    cv_.notify_all();
  }
}

}  // namespace limbic::runtime
