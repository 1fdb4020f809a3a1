#include "runtime/replication/follower.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <thread>

#include "base/env.h"
#include "state/event_log.h"

namespace limbic::runtime {
namespace {

// Events a follower may have handed to the io thread and not yet applied.
constexpr uint64_t kFollowInflight = 16384;
// While its consumer sends nothing, the follower looks where the stream
// ends this often (so stream_last_seq and lag stay true) ...
constexpr auto kQuietLook = std::chrono::milliseconds(1000);
// ... and when the stream has held more than it sent for this long, the
// consumer has stalled: it is replaced by a new one from the next seq.
constexpr auto kStalled = std::chrono::milliseconds(3000);

}  // namespace

std::string StandbyFilePath(const std::string& state_dir) { return state_dir + "/standby.json"; }

Status RefuseStandbyWrites(const std::string& state_dir) {
  const std::string path = StandbyFilePath(state_dir);
  if (!Env::Default()->FileExists(path)) return Status::OK();
  return Status::FailedPrecondition(
      state_dir + " is a hot standby's state dir (" + path +
      "): its log takes only the events of its stream, never a local write. Make it the "
      "primary with `limbic promote --state " +
      state_dir + "`, or, to use it as a state dir of its own, remove " + path);
}

Follower::Follower(boost::asio::io_context& ioc, state::Engine& engine, Options options,
                   std::shared_ptr<spdlog::logger> log)
    : ioc_(ioc), engine_(engine), options_(std::move(options)), log_(std::move(log)) {}

Follower::~Follower() { Stop(); }

Status Follower::Start() {
  applied_ = submitted_ = engine_.applied_seq();
  log_->info("standby: following agent {} on stream {} at {} from seq {}", options_.agent,
             options_.stream, nats::JoinServers(options_.nats), applied_);
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
  std::function<void(Status, Promoted)> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done = std::move(promote_done_);
    promote_done_ = nullptr;
    promotion_ = Promotion::kNone;
  }
  if (done) done(Status::Unavailable("the standby stopped before it was promoted"), {});
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

void Follower::Promote(int64_t timeout_ms, std::function<void(Status, Promoted)> done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!diverged_.ok()) return done(diverged_, {});
    if (stop_) return done(Status::Unavailable("the standby has stopped"), {});
    if (promotion_ != Promotion::kNone)
      return done(Status::FailedPrecondition("a promotion is under way"), {});
    promotion_ = Promotion::kDraining;
    drain_known_ = false;
    promote_done_ = std::move(done);
  }
  cv_.notify_all();
  ArmPromotionTimer(timeout_ms);
}

void Follower::ArmPromotionTimer(int64_t timeout_ms) {
  auto timer =
      std::make_shared<boost::asio::steady_timer>(ioc_, std::chrono::milliseconds(timeout_ms));
  std::weak_ptr<int> alive = alive_;
  timer->async_wait([this, timer, alive](const boost::system::error_code& ec) {
    if (ec || alive.expired()) return;
    std::unique_lock<std::mutex> lock(mu_);
    switch (promotion_) {
      case Promotion::kNone:
        return;
      case Promotion::kPublishing:  // a publish has its own deadline: its outcome decides
        lock.unlock();
        return ArmPromotionTimer(1000);
      case Promotion::kDraining:
        return FinishPromotion(
            Status::Unavailable("the standby did not reach the stream's last event in time" +
                                (error_.empty() ? std::string() : " (" + error_ + ")") +
                                "; it goes on following"),
            {});
      case Promotion::kPublished:
        return FinishPromotion(
            Status::Unavailable(
                "the stream took primary_promoted (seq " + std::to_string(promoted_seq_) +
                ") but this standby has not applied it in time; it goes on following and applies "
                "it, and the old primary is fenced: promote again"),
            {});
    }
  });
}

void Follower::FinishPromotion(Status s, Promoted result) {
  auto done = std::move(promote_done_);
  promote_done_ = nullptr;
  promotion_ = Promotion::kNone;
  drain_known_ = false;
  if (!done) return;
  std::weak_ptr<int> alive = alive_;
  boost::asio::post(ioc_, [alive, done = std::move(done), s = std::move(s), result] {
    if (!alive.expired()) done(s, result);
  });
}

void Follower::Run() {
  nats::ConnectOptions co;
  co.servers = options_.nats;
  co.name = "limbic standby " + options_.agent;
  co.request_timeout_ms = static_cast<int>(options_.timeout_ms);
  co.retry_on_failed_connect = true;
  co.on_state = [this](bool up) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      connected_ = up;
      // Once NATS is back, "unreachable" is no longer true; whatever the
      // next step finds wrong is said by that step.
      if (up && !unreachable_.empty() && error_ == unreachable_) error_.clear();
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
    {
      // A log that is not the stream's stays so: nothing more to do but say why.
      std::unique_lock<std::mutex> lock(mu_);
      if (!diverged_.ok()) {
        cv_.wait(lock, [this] { return stop_; });
        break;
      }
    }
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
        // on_state(true) runs after the connection says it is connected:
        // checked under the lock, a reconnect is never followed by a stale error.
        if (!conn->connected()) {
          connected_ = false;
          unreachable_ = "NATS at " + conn->describe() + " is unreachable";
          error_ = unreachable_;
        }
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
        // Said once until it follows again: a failure that recurs at each
        // new subscription (which clears error_) is not said every time.
        if (warned_ != s.message()) log_->warn("standby: {}", s.message());
        warned_ = error_ = s.message();
        if (promotion_ == Promotion::kDraining && drain_known_) drain_known_ = false;
        // What the stream holds is wrong (a gap, a message that is not an
        // event): waiting will not mend it, so a promotion is refused now.
        if (s.IsCorruption() && promotion_ != Promotion::kNone &&
            promotion_ != Promotion::kPublished)
          FinishPromotion(Status::FailedPrecondition(s.message()), {});
      }
      wait(500);
    }
  }
}

Status Follower::CheckStreamFit(nats::Connection& conn) {
  auto info = conn.GetStream(options_.stream);
  if (!info.ok()) return info.status();
  const std::string unfit =
      UnfitStream(*info, options_.stream, "limbic." + options_.agent + ".events");
  if (unfit.empty()) return Status::OK();
  std::lock_guard<std::mutex> lock(mu_);
  diverged_ = Status::FailedPrecondition(
      unfit +
      "; this standby follows no more (follow the agent's own stream, or remove the limits "
      "and start it again)");
  error_ = diverged_.message();
  log_->warn("standby: {}", error_);
  if (promotion_ != Promotion::kNone) FinishPromotion(diverged_, {});
  return diverged_;
}

Status Follower::Follow(nats::Connection& conn) {
  const std::string subject = "limbic." + options_.agent + ".events";
  uint64_t local;
  bool whole;
  {
    std::unique_lock<std::mutex> lock(mu_);
    // What was handed to the io thread is applied (or has failed) first.
    cv_.wait(lock, [this] { return stop_ || submitted_ <= applied_; });
    if (stop_) return Status::OK();
    restart_ = false;
    local = submitted_ = applied_;
    whole = !checked_once_;
  }
  if (Status fit = CheckStreamFit(conn); !fit.ok())
    return fit.IsFailedPrecondition() ? Status::OK() : fit;
  auto end = ReadStreamEnd(conn, options_.stream, options_.agent);
  if (!end.ok()) return end.status();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stream_last_ = std::max(stream_last_, end->event_seq);
  }
  // This log must be the stream's: all of it the first time; after that
  // what was applied came from the stream, and its last line is enough.
  const auto began = std::chrono::steady_clock::now();
  Status same = CheckLogIsStream(conn, options_.stream, options_.agent, *end, engine_.events_dir(),
                                 whole ? 1 : local, local);
  if (whole && same.ok() && local > 0)
    log_->info("standby: this log is the stream's through seq {} (checked line by line in {} ms)",
               local,
               std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - began)
                   .count());
  if (!same.ok()) {
    if (!same.IsFailedPrecondition()) return same;
    std::lock_guard<std::mutex> lock(mu_);
    diverged_ = same.WithContext("this standby follows no more (follow into an empty state dir)");
    error_ = diverged_.message();
    log_->warn("standby: {}", error_);
    if (promotion_ != Promotion::kNone) FinishPromotion(diverged_, {});
    return Status::OK();
  }
  auto start = StreamSeqOf(conn, options_.stream, options_.agent, *end, local + 1);
  if (!start.ok()) return start.status();
  auto sub = conn.SubscribeOrdered(options_.stream, subject, *start);
  if (!sub.ok()) return sub.status();
  {
    std::lock_guard<std::mutex> lock(mu_);
    checked_once_ = true;
    error_.clear();
  }
  uint64_t expected = local + 1;
  std::vector<state::Event> events;
  std::vector<std::string> lines;
  // The ordered consumer re-creates itself past gaps and missed heartbeats,
  // but after a stream leader was SIGKILLed under load one was seen to
  // send nothing more while the stream grew: what it holds is looked at
  // while the consumer is quiet, and a consumer quiet for kStalled while
  // the stream holds more is replaced.
  using Clock = std::chrono::steady_clock;
  Clock::time_point quiet_since = Clock::now();
  Clock::time_point looked = quiet_since;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stop_) return Status::OK();
      if (restart_) return Status::Unavailable(error_);
      // The subscription waits out a lost connection; say so meanwhile
      // (on_state clears it once NATS is back).
      if (!connected_ && error_.empty())
        error_ = unreachable_ = "NATS at " + conn.describe() + " is unreachable";
      if (promotion_ != Promotion::kNone && !StepPromotion(conn, lock)) return Status::OK();
      if (submitted_ - applied_ >= kFollowInflight) {
        cv_.wait_for(lock, std::chrono::milliseconds(50));
        quiet_since = Clock::now();  // waiting for the io thread is not the consumer's silence
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
    const Clock::time_point now = Clock::now();
    if (events.empty()) {
      if (now - looked < kQuietLook || !conn.connected()) continue;
      looked = now;
      // One NATS timeout per look when JetStream cannot answer (no quorum).
      const Status fit = CheckStreamFit(conn);
      if (fit.IsFailedPrecondition()) return Status::OK();
      auto end =
          fit.ok() ? ReadStreamEnd(conn, options_.stream, options_.agent) : Result<StreamEnd>(fit);
      {
        // A look that fails (JetStream without a quorum, say) is said in
        // /healthz until one succeeds or a message comes.
        std::lock_guard<std::mutex> lock(mu_);
        if (!end.ok()) {
          if (error_.empty() || error_ == look_failed_)
            error_ = look_failed_ =
                "cannot read where stream " + options_.stream + " ends: " + end.status().message();
          continue;
        }
        if (!look_failed_.empty() && error_ == look_failed_) error_.clear();
        stream_last_ = std::max(stream_last_, end->event_seq);
      }
      if (end->event_seq < expected || now - quiet_since < kStalled) continue;
      const std::string why =
          "the stream holds events through seq " + std::to_string(end->event_seq) +
          " but its consumer has sent nothing after seq " + std::to_string(expected - 1) + " for " +
          std::to_string(
              std::chrono::duration_cast<std::chrono::seconds>(now - quiet_since).count()) +
          " s; reading the stream again from seq " + std::to_string(expected);
      return Status::Unavailable(why);  // Run() says it and follows again
    }
    quiet_since = now;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!look_failed_.empty() && error_ == look_failed_) error_.clear();
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

bool Follower::StepPromotion(nats::Connection& conn, std::unique_lock<std::mutex>& lock) {
  // 1. Learn where the stream ends now.
  if (promotion_ == Promotion::kDraining && !drain_known_) {
    // What was applied came from the stream before this read: a stream
    // that ends before it holds a last message written after the history
    // by someone else (a primary's publishes each expect the one before),
    // and a claim numbered after that message would not follow this log.
    const uint64_t applied_before = applied_;
    lock.unlock();
    auto end = ReadStreamEnd(conn, options_.stream, options_.agent);
    lock.lock();
    if (promotion_ != Promotion::kDraining) return true;  // timed out meanwhile
    if (!end.ok()) {
      FinishPromotion(end.status().WithContext("learning where the stream ends"), {});
      return true;
    }
    if (end->event_seq < applied_before) {
      FinishPromotion(
          Status::FailedPrecondition(
              "the last message of stream " + options_.stream + " (stream seq " +
              std::to_string(end->stream_seq) + ") holds event seq " +
              std::to_string(end->event_seq) + ", but this standby has applied through seq " +
              std::to_string(applied_before) + " from it: that message was written after the " +
              "history, not by a primary of agent " + options_.agent +
              "; remove it from the stream (and stop whoever wrote it), then promote"),
          {});
      return true;
    }
    drain_known_ = true;
    drain_end_ = std::move(end).value();
  }
  // 2. Applied through it: claim the stream.
  if (promotion_ == Promotion::kDraining && applied_ >= drain_end_.event_seq) {
    promotion_ = Promotion::kPublishing;
    const StreamEnd end = drain_end_;
    lock.unlock();
    auto promoted =
        PublishPromotion(conn, options_.stream, options_.agent, end, SystemClock::Default()->Now(),
                         static_cast<int>(options_.timeout_ms));
    lock.lock();
    if (!promoted.ok()) {
      log_->warn("promotion refused, still a standby: {}", promoted.status().message());
      FinishPromotion(promoted.status(), {});
      return true;
    }
    promotion_ = Promotion::kPublished;
    promoted_seq_ = promoted->seq;
    log_->info("promotion: the stream took primary_promoted as seq {} (stream seq {})",
               promoted_seq_, end.stream_seq + 1);
  }
  // 3. It comes back through the subscription like any event; once applied,
  // this is the primary's log and following is over.
  if (promotion_ == Promotion::kPublished && applied_ >= promoted_seq_) {
    stop_ = true;
    FinishPromotion(Status::OK(), Promoted{promoted_seq_, drain_end_.stream_seq});
    return false;
  }
  return true;
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
                                          warned_.clear();
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
