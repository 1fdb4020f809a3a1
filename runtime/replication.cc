#include "runtime/replication.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <thread>

#include "state/event_log.h"

namespace limbic::runtime {
namespace {

// Events handed to NATS and not yet acknowledged, at most.
constexpr uint64_t kMaxInflight = 8192;
// Events a follower may have handed to the io thread and not yet applied.
constexpr uint64_t kFollowInflight = 16384;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string StandbyFilePath(const std::string& state_dir) { return state_dir + "/standby.json"; }

std::string ReplicationMsgId(const std::string& agent, uint64_t seq) {
  return agent + ":" + std::to_string(seq);
}

uint64_t ReplicatedSeq(const nats::Message& message, const std::string& agent) {
  const std::string prefix = agent + ":";
  if (message.msg_id.starts_with(prefix)) {
    std::string digits = message.msg_id.substr(prefix.size());
    if (!digits.empty() && digits.size() <= 19 &&
        digits.find_first_not_of("0123456789") == std::string::npos)
      return std::stoull(digits);
  }
  auto doc = nlohmann::json::parse(message.data, nullptr, false);
  if (doc.is_object() && doc.contains("seq") && doc["seq"].is_number_unsigned())
    return doc["seq"].get<uint64_t>();
  return 0;
}

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

// ---------------------------------------------------------------- Replicator

Replicator::Replicator(boost::asio::io_context& ioc, state::Engine& engine,
                       ReplicationConfig config, Metrics& metrics,
                       std::shared_ptr<spdlog::logger> log)
    : ioc_(ioc),
      engine_(engine),
      config_(std::move(config)),
      metrics_(metrics),
      log_(std::move(log)) {}

Replicator::~Replicator() { Stop(0); }

Status Replicator::Start() {
  durable_ = engine_.applied_seq();
  if (config_.mode == ReplicationConfig::Mode::kQuorum) {
    engine_.set_hold_acks(true);
    gate_closed_ = true;
    engine_.set_write_gate(Status::Unavailable(
        "quorum replication: the stream " + config_.stream + " on NATS (" + config_.nats.front() +
        ", ...) has not been checked yet; writes are taken once it has"));
  }
  metrics_.Declare("limbic_replication_lag_events", Metrics::Type::kGauge,
                   "durable events not yet acknowledged by JetStream");
  metrics_.Declare("limbic_replication_replicated_seq", Metrics::Type::kGauge,
                   "last event seq JetStream has acknowledged");
  metrics_.Declare("limbic_replication_connected", Metrics::Type::kGauge,
                   "1 while NATS is connected");
  metrics_.Declare("limbic_replication_fenced", Metrics::Type::kGauge,
                   "1 when another primary has written to this agent's stream");
  std::weak_ptr<int> alive = alive_;
  metrics_.AddCollector([this, alive](Metrics& m) {
    if (alive.expired()) return;
    Snapshot s = snapshot();
    m.Set("limbic_replication_lag_events", "", static_cast<double>(s.lag()));
    m.Set("limbic_replication_replicated_seq", "", static_cast<double>(s.replicated_seq));
    m.Set("limbic_replication_connected", "", s.connected ? 1 : 0);
    m.Set("limbic_replication_fenced", "", s.fenced.empty() ? 0 : 1);
  });
  log_->info("replication: {} mode, stream {} subject {} on {}", ReplicationModeName(config_.mode),
             config_.stream, config_.subject(), config_.nats.front());
  thread_ = std::thread([this] { Run(); });
  return Status::OK();
}

void Replicator::Stop(int grace_ms) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!thread_.joinable()) return;
    stop_ = true;
    stop_deadline_ms_ = NowMs() + grace_ms;
  }
  cv_.notify_all();
  thread_.join();
  uint64_t replicated;
  {
    std::lock_guard<std::mutex> lock(mu_);
    replicated = replicated_;
  }
  Advance(replicated);
  engine_.FailHeld(
      Status::Unavailable("outcome unknown: in the local log but not replicated before limbic "
                          "stopped; retry with the same id"));
  for (auto& [seq, done] : waiters_) done(Status::Unavailable("replication stopped"));
  waiters_.clear();
  log_->info("replication: stopped at seq {} (durable {})", replicated, durable_);
}

void Replicator::OnDurable(uint64_t seq) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (seq <= durable_) return;
    durable_ = seq;
  }
  cv_.notify_all();
}

void Replicator::WhenReplicated(uint64_t seq, int64_t timeout_ms,
                                std::function<void(Status)> done) {
  Snapshot s = snapshot();
  if (!s.fenced.empty()) return done(Status::Unavailable("fenced: " + s.fenced));
  if (advanced_ >= seq) return done(Status::OK());
  auto fired = std::make_shared<bool>(false);
  auto once = [fired, done = std::move(done)](Status st) {
    if (*fired) return;
    *fired = true;
    done(std::move(st));
  };
  waiters_.emplace(seq, once);
  auto timer =
      std::make_shared<boost::asio::steady_timer>(ioc_, std::chrono::milliseconds(timeout_ms));
  timer->async_wait([timer, once, seq](const boost::system::error_code& ec) mutable {
    if (!ec)
      once(Status::Unavailable("seq " + std::to_string(seq) + " was not replicated in time"));
  });
}

Replicator::Snapshot Replicator::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  Snapshot s;
  s.mode = std::string(ReplicationModeName(config_.mode));
  s.connected = connected_;
  s.checked = checked_;
  s.fenced = fenced_;
  s.error = error_;
  s.durable_seq = durable_;
  s.replicated_seq = replicated_;
  s.stream_seq = stream_seq_;
  return s;
}

Status Replicator::health() const {
  Snapshot s = snapshot();
  if (!s.fenced.empty()) return Status::Unavailable("replication fenced: " + s.fenced);
  bool gate;
  {
    std::lock_guard<std::mutex> lock(mu_);
    gate = gate_closed_;
  }
  if (config_.mode == ReplicationConfig::Mode::kQuorum && gate)
    return Status::Unavailable("quorum replication cannot publish: " +
                               (s.error.empty() ? std::string("not connected yet") : s.error));
  if (s.lag() > config_.max_lag)
    return Status::Unavailable("replication lags " + std::to_string(s.lag()) +
                               " events behind (max_lag " + std::to_string(config_.max_lag) + ")" +
                               (s.error.empty() ? "" : ": " + s.error));
  return Status::OK();
}

void Replicator::Run() {
  nats::ConnectOptions co;
  co.servers = config_.nats;
  co.name = "limbic " + config_.agent;
  co.request_timeout_ms = static_cast<int>(config_.timeout);
  co.retry_on_failed_connect = true;
  co.on_state = [this](bool up) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      connected_ = up;
    }
    cv_.notify_all();
  };
  co.on_async_result = [this](uint64_t seq, const nats::PubResult& r) { OnPublished(seq, r); };
  std::unique_ptr<nats::Connection> conn;
  auto wait = [this](int ms) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stop_; });
  };
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      // Stopping: publish what is durable while there is time and hope.
      if (stop_ && (NowMs() >= stop_deadline_ms_ || replicated_ >= durable_ || !fenced_.empty() ||
                    !checked_ || !error_.empty()))
        break;
      if (!fenced_.empty()) {  // nothing more to do but say why, until stopped
        cv_.wait(lock, [this] { return stop_; });
        break;
      }
    }
    if (!conn) {
      auto c = nats::Connection::Connect(co);
      if (!c.ok()) {
        NoteFailure(c.status());
        wait(1000);
        continue;
      }
      conn = std::move(c).value();
    }
    if (!conn->connected()) {
      const std::string where = conn->describe();
      if (conn->closed()) {
        log_->warn("replication: the NATS connection closed; connecting again");
        conn.reset();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        connected_ = false;
        checked_ = false;
      }
      NoteFailure(Status::Unavailable("NATS at " + where + " is unreachable"));
      wait(250);
      continue;
    }
    bool checked;
    {
      std::lock_guard<std::mutex> lock(mu_);
      connected_ = true;
      checked = checked_;
    }
    if (!checked) {
      Status s = Sync(*conn);
      if (!s.ok()) {
        bool fenced;
        {
          std::lock_guard<std::mutex> lock(mu_);
          fenced = !fenced_.empty();
        }
        if (!fenced) NoteFailure(s);
        wait(250);
        continue;
      }
    }
    // A publish failed (or found a duplicate): let what is in flight come
    // back, then read where the stream stands again.
    Status failure;
    bool failed;
    {
      std::lock_guard<std::mutex> lock(mu_);
      failed = publish_failed_;
      failure = publish_error_;
    }
    if (failed) {
      conn->WaitAsync(static_cast<int>(config_.timeout));
      {
        std::lock_guard<std::mutex> lock(mu_);
        checked_ = false;
      }
      reader_.reset();
      if (!failure.ok()) NoteFailure(failure);
      continue;
    }
    bool room;
    {
      std::lock_guard<std::mutex> lock(mu_);
      room = sent_ < durable_ && sent_ - replicated_ < kMaxInflight;
    }
    if (room) {
      if (!SendMore(*conn)) wait(100);
      continue;
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(stop_ ? 50 : 1000), [this] {
      return publish_failed_ || (sent_ < durable_ && sent_ - replicated_ < kMaxInflight) ||
             (stop_ && replicated_ >= durable_);
    });
  }
  // What is still in flight comes back before the connection goes.
  if (conn) conn->WaitAsync(1000);
}

Status Replicator::Sync(nats::Connection& conn) {
  const std::string subject = config_.subject();
  auto info = conn.EnsureStream({config_.stream, {subject}, 0, true});
  if (!info.ok()) return info.status();
  if (info->subjects != std::vector<std::string>{subject}) {
    std::string subjects;
    for (const std::string& s : info->subjects) subjects += (subjects.empty() ? "" : ", ") + s;
    Fence("stream " + config_.stream + " holds subjects [" + subjects +
          "]: replication needs the agent's own stream, with subject " + subject +
          " only (set replication.stream)");
    return Status::FailedPrecondition("fenced");
  }
  auto last = conn.LastMessage(config_.stream, subject);
  if (!last.ok()) return last.status();
  uint64_t in_stream = 0;
  if (last->has_value()) {
    in_stream = ReplicatedSeq(**last, config_.agent);
    if (in_stream == 0) {
      Fence("the last message of " + subject + " (stream seq " +
            std::to_string((*last)->stream_seq) + ") is not an event of agent " + config_.agent);
      return Status::FailedPrecondition("fenced");
    }
  }
  uint64_t local;
  {
    std::lock_guard<std::mutex> lock(mu_);
    local = durable_;
  }
  if (in_stream > local) {
    Fence("the stream " + config_.stream + " holds agent " + config_.agent +
          "'s events through seq " + std::to_string(in_stream) + ", this log only through seq " +
          std::to_string(local) +
          ": another primary has written (a promoted standby?), or this log lost its tail");
    return Status::FailedPrecondition("fenced");
  }
  if (in_stream > 0) {
    state::LogReader::Options ro;
    ro.from_seq = in_stream;
    auto reader = state::LogReader::Open(engine_.events_dir(), ro);
    if (!reader.ok()) return reader.status();
    state::Event e;
    auto got = (*reader)->Next(&e);
    if (!got.ok()) return got.status();
    if (!*got || e.seq != in_stream)
      return Status::Unavailable("the local log has no seq " + std::to_string(in_stream) + " yet");
    if ((*reader)->raw_line() != (**last).data) {
      Fence("the stream's event seq " + std::to_string(in_stream) +
            " is not this log's: another primary has written a different history for agent " +
            config_.agent);
      return Status::FailedPrecondition("fenced");
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    replicated_ = sent_ = sync_event_ = in_stream;
    stream_seq_ = sync_stream_ = info->last_seq;
    acked_ahead_.clear();
    publish_failed_ = false;
    publish_error_ = Status::OK();
    checked_ = true;
  }
  reader_.reset();
  std::weak_ptr<int> alive = alive_;
  boost::asio::post(ioc_, [this, alive, in_stream] {
    if (!alive.expired()) Advance(in_stream);
  });
  log_->info("replication: stream {} holds seq {} of {}; this log is at {}", config_.stream,
             in_stream, config_.agent, local);
  NoteSuccess();
  return Status::OK();
}

bool Replicator::SendMore(nats::Connection& conn) {
  uint64_t from, to;
  {
    std::lock_guard<std::mutex> lock(mu_);
    from = sent_ + 1;
    to = std::min(durable_, replicated_ + kMaxInflight);
  }
  if (!reader_ || reader_next_ != from) {
    state::LogReader::Options ro;
    ro.from_seq = from;
    ro.decode = false;  // the lines go out as they are
    auto reader = state::LogReader::Open(engine_.events_dir(), ro);
    if (!reader.ok()) {
      NoteFailure(reader.status());
      return false;
    }
    reader_ = std::move(reader).value();
    reader_next_ = from;
  }
  const std::string subject = config_.subject();
  state::Event e;
  uint64_t sent = from - 1;
  while (reader_next_ <= to) {
    auto got = reader_->Next(&e);
    if (!got.ok()) {
      reader_.reset();
      NoteFailure(got.status().WithContext("reading the local log to replicate it"));
      return false;
    }
    if (!*got) break;  // not readable yet
    if (e.seq != reader_next_) {
      reader_.reset();
      NoteFailure(Status::Internal("the local log gave seq " + std::to_string(e.seq) + " where " +
                                   std::to_string(reader_next_) + " was expected"));
      return false;
    }
    nats::OutMessage m;
    m.data = reader_->raw_line();
    m.msg_id = ReplicationMsgId(config_.agent, e.seq);
    // The stream holds only this agent's events, one message each: event
    // seq k follows stream seq sync_stream_ + (k - sync_event_ - 1).
    m.expect_last_seq = sync_stream_ + (e.seq - sync_event_ - 1);
    Status s = conn.PublishAsync(subject, m, e.seq, static_cast<int>(config_.timeout));
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!publish_failed_) {
        publish_failed_ = true;
        publish_error_ = s;
      }
      break;
    }
    sent = e.seq;
    ++reader_next_;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    sent_ = std::max(sent_, sent);
  }
  return sent >= from;
}

void Replicator::OnPublished(uint64_t seq, const nats::PubResult& r) {
  uint64_t advanced = 0;
  bool post = false;
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!r.status.ok() || r.duplicate) {
      // A duplicate: the stream had it already; where it stands is read again.
      if (!publish_failed_) {
        publish_failed_ = true;
        publish_error_ = r.status;
      }
      cv_.notify_all();
      return;
    }
    if (publish_failed_ || seq <= replicated_) return;
    // The sender waits for an ack only when it had no room, or to stop.
    wake = stop_ || sent_ - replicated_ >= kMaxInflight;
    acked_ahead_.insert(seq);
    while (!acked_ahead_.empty() && *acked_ahead_.begin() == replicated_ + 1) {
      ++replicated_;
      acked_ahead_.erase(acked_ahead_.begin());
    }
    stream_seq_ = sync_stream_ + (replicated_ - sync_event_);
    advanced = replicated_;
    if (!advance_posted_) {
      advance_posted_ = true;
      post = true;
    }
  }
  if (wake) cv_.notify_all();
  if (post) {
    std::weak_ptr<int> alive = alive_;
    boost::asio::post(ioc_, [this, alive] {
      if (alive.expired()) return;
      uint64_t through;
      {
        std::lock_guard<std::mutex> lock(mu_);
        advance_posted_ = false;
        through = replicated_;
      }
      Advance(through);
    });
  }
  if (advanced > 0) NoteSuccess();
}

void Replicator::Fence(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!fenced_.empty()) return;
    fenced_ = why;
  }
  log_->critical("replication: FENCED, refusing writes: {}", why);
  std::weak_ptr<int> alive = alive_;
  boost::asio::post(ioc_, [this, alive, why] {
    if (alive.expired()) return;
    Status gate = Status::Unavailable("fenced: " + why);
    engine_.set_write_gate(gate);
    engine_.FailHeld(gate);
    auto waiters = std::move(waiters_);
    waiters_.clear();
    for (auto& [seq, done] : waiters) done(gate);
  });
}

void Replicator::NoteFailure(const Status& s) {
  bool close = false;
  std::string error = s.message();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_ != error) log_->warn("replication: {}", error);
    error_ = error;
    const int64_t now = NowMs();
    if (failing_since_ms_ == 0) failing_since_ms_ = now;
    if (config_.mode == ReplicationConfig::Mode::kQuorum &&
        now - failing_since_ms_ >= config_.timeout) {
      close = true;
      gate_closed_ = true;
    }
  }
  if (!close) return;
  std::weak_ptr<int> alive = alive_;
  boost::asio::post(ioc_, [this, alive, error] {
    if (alive.expired()) return;
    if (!engine_.write_gate().ok() && engine_.write_gate().message().starts_with("fenced")) return;
    engine_.set_write_gate(
        Status::Unavailable("quorum replication cannot publish to NATS (" + error +
                            "): writes are refused until JetStream takes them again"));
    engine_.FailHeld(Status::Unavailable("outcome unknown: in the local log but not replicated (" +
                                         error + "); retry with the same id"));
  });
}

void Replicator::NoteSuccess() {
  bool open = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.empty()) log_->info("replication: publishing again");
    error_.clear();
    failing_since_ms_ = 0;
    if (gate_closed_) {
      gate_closed_ = false;
      open = true;
    }
  }
  if (!open) return;
  std::weak_ptr<int> alive = alive_;
  boost::asio::post(ioc_, [this, alive] {
    if (alive.expired()) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (fenced_.empty() && !gate_closed_) engine_.set_write_gate(Status::OK());
  });
}

void Replicator::Advance(uint64_t through) {
  if (through <= advanced_) return;
  advanced_ = through;
  engine_.ReleaseHeld(through);
  while (!waiters_.empty() && waiters_.begin()->first <= through) {
    auto done = std::move(waiters_.begin()->second);
    waiters_.erase(waiters_.begin());
    done(Status::OK());
  }
}

// ------------------------------------------------------------------ Follower

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
      state::LogReader::Options ro;
      ro.from_seq = local;
      ro.decode = false;
      auto reader = state::LogReader::Open(engine_.events_dir(), ro);
      if (!reader.ok()) return reader.status();
      state::Event e;
      auto got = (*reader)->Next(&e);
      if (!got.ok()) return got.status();
      if (ReplicatedSeq(*same, options_.agent) != local || !*got ||
          (*reader)->raw_line() != same->data)
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
