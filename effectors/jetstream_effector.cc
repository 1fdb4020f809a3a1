// The `jetstream` kind: publishes each action to a subject of a NATS
// JetStream stream and completes on the PubAck; workers elsewhere consume
// the stream. The action's idempotency key is the message's Nats-Msg-Id, so
// JetStream drops a second delivery of the same action (a retry after a
// lost PubAck, a redelivery after a crash) within the stream's duplicate
// window, and the PubAck says "duplicate".
//
// Each delivery is one blocking publish on a thread of the BlockingRunner,
// bounded by `timeout`. The connection is opened by the first delivery and
// reconnects by itself; the stream is made sure of (created when missing,
// with subjects [subject]) before the first publish and again after a
// publish nobody answered. Cancel() cannot interrupt a publish: it waits
// for at most `timeout`, and reports Cancelled unless it was stored.
//
// Outcomes: PubAck (stored, or a duplicate of a stored message) complete,
// with result {stream, seq, duplicate}; not connected, timeout or no
// responders (a stream leader being elected) retried; a JetStream refusal
// (its error code in the message), a stream that does not capture the
// subject, or a body template that does not render permanent.
#include <boost/asio/post.hpp>
#include <mutex>

#include "base/nats.h"
#include "effectors/builtin.h"

namespace limbic::effectors {

using nlohmann::json;

namespace {

// True when the subject filter `pattern` (tokens, '*' for one, '>' for the
// rest) matches the literal `subject`.
bool SubjectMatches(std::string_view pattern, std::string_view subject) {
  for (;;) {
    size_t pd = pattern.find('.'), sd = subject.find('.');
    std::string_view pt = pattern.substr(0, pd), st = subject.substr(0, sd);
    if (pt == ">") return !st.empty();
    if (pt != "*" && pt != st) return false;
    if (pd == std::string_view::npos || sd == std::string_view::npos)
      return pd == std::string_view::npos && sd == std::string_view::npos;
    pattern.remove_prefix(pd + 1);
    subject.remove_prefix(sd + 1);
  }
}

class JetStreamEffector final : public Effector {
 public:
  JetStreamEffector(std::string name, std::vector<std::string> servers, std::string stream,
                    std::string subject, json body, bool has_body, TimeMs timeout,
                    boost::asio::io_context& ioc, std::shared_ptr<spdlog::logger> log)
      : name_(std::move(name)),
        servers_(std::move(servers)),
        stream_(std::move(stream)),
        subject_(std::move(subject)),
        body_(std::move(body)),
        has_body_(has_body),
        timeout_(timeout),
        ioc_(ioc),
        log_(std::move(log)),
        runner_(ioc) {}
  const std::string& name() const override { return name_; }

  void Deliver(const Delivery& d, std::function<void(Outcome)> done) override {
    auto body = Body(d);
    if (!body.ok()) {
      return boost::asio::post(ioc_, [done = std::move(done), why = body.status().message()] {
        done(Outcome::Permanent(why));
      });
    }
    runner_.Run([this, data = body->dump(-1, ' ', false, json::error_handler_t::replace),
                 key = d.idempotency_key](CancelFlag&) { return Publish(data, key); },
                std::move(done));
  }

  void Cancel() override { runner_.CancelAll(); }

 private:
  // The message body: the `body` template rendered, else the action.
  Result<json> Body(const Delivery& d) const {
    if (has_body_) return RenderTemplate(body_, d);
    return json{{"action_id", d.action_id},
                {"effector", d.effector},
                {"type", d.type},
                {"idempotency_key", d.idempotency_key},
                {"attempt", d.attempt},
                {"thread_id", d.thread_id.empty() ? json(nullptr) : json(d.thread_id)},
                {"payload", d.payload}};
  }

  // A runner thread: one publish, start to PubAck.
  Outcome Publish(const std::string& data, const std::string& msg_id) {
    auto connection = Ready();
    if (!connection.ok())
      return connection.status().IsUnavailable()
                 ? Outcome::Retry(connection.status().message())
                 : Outcome::Permanent(connection.status().message());
    nats::Connection& nc = **connection;
    nats::PubResult r =
        nc.Publish(subject_, nats::OutMessage{data, msg_id}, static_cast<int>(timeout_));
    if (r.status.ok())
      return Outcome::Complete(
          {{"stream", stream_}, {"seq", r.stream_seq}, {"duplicate", r.duplicate}});
    if (r.js_code != 0 || r.status.IsInvalidArgument() || r.status.IsFailedPrecondition())
      return Outcome::Permanent("JetStream refused the message: " + r.status.message());
    // Nobody answered (a leader being elected, the stream deleted), or no
    // PubAck in time: look at the stream again before the next attempt.
    std::lock_guard<std::mutex> lock(mu_);
    stream_ready_ = false;
    return Outcome::Retry(r.status.message());
  }

  // A runner thread: the connection, once the stream is there and takes
  // the subject. Unavailable: try again later; anything else is permanent.
  Result<nats::Connection*> Ready() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!conn_) {
      nats::ConnectOptions o;
      o.servers = servers_;
      o.name = "limbic effector " + name_;
      o.request_timeout_ms = static_cast<int>(timeout_);
      o.retry_on_failed_connect = true;  // NATS down now: deliveries retry until it is up
      auto c = nats::Connection::Connect(std::move(o));
      if (!c.ok()) return Status::Unavailable(c.status().message());
      conn_ = std::move(c).value();
    }
    if (!conn_->connected())
      return Status::Unavailable("not connected to NATS at " + conn_->describe());
    if (stream_ready_) return conn_.get();
    auto info = conn_->EnsureStream({stream_, {subject_}, 0, true});
    if (!info.ok()) return info.status();
    bool captured = false;
    for (const std::string& s : info->subjects) captured = captured || SubjectMatches(s, subject_);
    if (!captured) {
      std::string list;
      for (const std::string& s : info->subjects) list += (list.empty() ? "" : ", ") + s;
      return Status::FailedPrecondition("stream " + stream_ + " has subjects [" + list +
                                        "], none of which is " + subject_);
    }
    if (!announced_) {
      log_->info("effector {}: publishing to {} (stream {}, {} replica(s)) at {}", name_, subject_,
                 stream_, info->replicas, conn_->describe());
      announced_ = true;
    }
    stream_ready_ = true;
    return conn_.get();
  }

  const std::string name_;
  const std::vector<std::string> servers_;
  const std::string stream_, subject_;
  const json body_;
  const bool has_body_;
  const TimeMs timeout_;
  boost::asio::io_context& ioc_;
  std::shared_ptr<spdlog::logger> log_;
  std::mutex mu_;  // guards the three below
  std::unique_ptr<nats::Connection> conn_;
  bool stream_ready_ = false;
  bool announced_ = false;
  BlockingRunner runner_;  // last: joined before the connection goes
};

}  // namespace

Result<std::unique_ptr<Effector>> MakeJetStreamEffector(const std::string& name, const json& cfg,
                                                        boost::asio::io_context& ioc,
                                                        std::shared_ptr<spdlog::logger> log) {
  LIMBIC_RETURN_IF_ERROR(CheckKeys(name, cfg, {"nats", "stream", "subject", "body", "timeout"}));
  std::vector<std::string> servers;
  auto urls = cfg.find("nats");
  if (urls == cfg.end())
    return ConfigError(name, "nats", "required: the servers, [\"nats://127.0.0.1:4222\", ...]");
  if (urls->is_string()) {
    servers.push_back(urls->get<std::string>());
  } else if (urls->is_array() && !urls->empty()) {
    for (const json& u : *urls) {
      if (!u.is_string())
        return ConfigError(name, "nats", "must be an array of nats://HOST:PORT strings");
      servers.push_back(u.get<std::string>());
    }
  } else {
    return ConfigError(name, "nats",
                       "must be a nats://HOST:PORT string or a non-empty array of them");
  }
  for (const std::string& url : servers) {
    Status s = nats::CheckServerUrl(url);
    if (!s.ok()) return ConfigError(name, "nats", s.message());
  }
  if (!cfg.contains("stream") || !cfg["stream"].is_string())
    return ConfigError(name, "stream", "required: the stream's name (created when missing)");
  if (Status s = nats::CheckName("stream", cfg["stream"].get<std::string>()); !s.ok())
    return ConfigError(name, "stream", s.message());
  if (!cfg.contains("subject") || !cfg["subject"].is_string())
    return ConfigError(name, "subject", "required: a subject such as \"agent.actions\"");
  if (Status s = nats::CheckSubject("subject", cfg["subject"].get<std::string>()); !s.ok())
    return ConfigError(name, "subject", s.message());
  if (cfg.contains("body")) LIMBIC_RETURN_IF_ERROR(CheckTemplate(name, "body", cfg["body"]));
  auto timeout = DurationKey(name, cfg, "timeout", 5000);
  if (!timeout.ok()) return timeout.status();
  if (*timeout > 10 * 60 * 1000)  // a publish holds a thread that long
    return ConfigError(name, "timeout", "must be at most 10m");
  return std::unique_ptr<Effector>(new JetStreamEffector(
      name, std::move(servers), cfg["stream"].get<std::string>(), cfg["subject"].get<std::string>(),
      cfg.value("body", json()), cfg.contains("body"), *timeout, ioc, std::move(log)));
}

}  // namespace limbic::effectors
