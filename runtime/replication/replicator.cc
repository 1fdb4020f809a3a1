#include "runtime/replication/replicator.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <utility>

#include "runtime/replication/agent_stream.h"
#include "state/event_log.h"

namespace limbic::runtime {
namespace {

// Events handed to NATS and not yet acknowledged, at most.
constexpr uint64_t kMaxInflight = 8192;
// How often a running primary looks at the stream's message count
// (Replicator::StreamLost).
constexpr auto kLookEvery = std::chrono::seconds(2);

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Replicator::Replicator(boost::asio::io_context& ioc, state::Engine& engine,
                       ReplicationConfig config, std::shared_ptr<spdlog::logger> log)
    : ioc_(ioc), engine_(engine), config_(std::move(config)), log_(std::move(log)) {}

Replicator::~Replicator() { Stop(0); }

Status Replicator::Start() {
  durable_ = engine_.applied_seq();
  if (config_.mode == ReplicationConfig::Mode::kQuorum) {
    engine_.set_hold_acks(true);
    gate_closed_ = true;
    engine_.set_write_gate(
        Status::Unavailable("quorum replication: the stream " + config_.stream + " on NATS (" +
                            nats::JoinServers(config_.nats) +
                            ") has not been checked yet; writes are taken once it has"));
  }
  log_->info("replication: {} mode, stream {} subject {} on {}", ReplicationModeName(config_.mode),
             config_.stream, config_.subject(), nats::JoinServers(config_.nats));
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
  s.error = error_.empty() ? incomplete_ : error_;
  s.durable_seq = durable_;
  s.replicated_seq = replicated_;
  s.stream_seq = stream_seq_;
  s.stream_last_seq = stream_last_;
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
                               (!s.error.empty() ? s.error
                                : s.connected
                                    ? std::string("connected to NATS again, checking the stream")
                                    : std::string("not connected yet")));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!incomplete_.empty()) return Status::Unavailable(incomplete_);
  }
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
      // Once NATS is back, "unreachable" is no longer true; whatever the
      // stream check then finds wrong is said by it.
      if (up && !unreachable_.empty() && error_ == unreachable_) error_.clear();
    }
    cv_.notify_all();
  };
  co.on_async_result = [this](uint64_t seq, const nats::PubResult& r) { OnPublished(seq, r); };
  std::unique_ptr<nats::Connection> conn;
  std::chrono::steady_clock::time_point looked = std::chrono::steady_clock::now();
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
      {
        std::lock_guard<std::mutex> lock(mu_);
        checked_ = false;
      }
      NoteFailure(Status::Unavailable("NATS at " + conn->describe() + " is unreachable"),
                  conn.get());
      if (conn->closed()) {
        log_->warn("replication: the NATS connection closed; connecting again");
        conn.reset();
      }
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
    // Messages deleted from the stream under it: what is in flight comes
    // back, then where the stream stands is read again.
    if (const auto now = std::chrono::steady_clock::now(); now - looked >= kLookEvery) {
      looked = now;
      if (StreamLost(*conn)) {
        conn->WaitAsync(static_cast<int>(config_.timeout));
        {
          std::lock_guard<std::mutex> lock(mu_);
          checked_ = false;
        }
        reader_.reset();
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
    m.msg_id = ReplicationMsgId(config_.agent, e.seq, m.data);
    // The stream holds only this agent's events, one message each: event
    // seq k follows stream seq sync_stream_ + (k - sync_event_ - 1), and
    // (but for the first after Sync) this log's event k - 1.
    m.expect_last_seq = sync_stream_ + (e.seq - sync_event_ - 1);
    m.expect_last_msg_id = sent_id_;
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
    sent_id_ = std::move(m.msg_id);
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
        if (r.status.ok() && dup_seq_ == 0) {
          dup_seq_ = seq;
          dup_stream_seq_ = r.stream_seq;
        }
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
    stream_last_ = replicated_;
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

void Replicator::NoteFailure(const Status& s, const nats::Connection* down) {
  bool close = false;
  std::string error = s.message();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (down != nullptr) {
      // on_state(true) runs (under mu_) once the connection says it is up.
      if (down->connected()) return;
      connected_ = false;
      unreachable_ = error;
    }
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

}  // namespace limbic::runtime
