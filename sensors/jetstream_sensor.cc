// The `jetstream` sensor: a durable pull consumer on a NATS JetStream
// stream. Each message body is a percept request (a JSON object, as a line
// of the stdin, jsonl and exec sensors is), and a message is acknowledged to
// JetStream only once its percept is durable in limbic.
//
// Threads: the consumer thread owns the NATS connection and the pull
// subscription. It fetches a batch (at most `batch` messages, waiting at
// most kFetchWaitMs for the first, so Stop is prompt), posts copies of the
// messages to the io thread, and waits for every one's verdict; then it
// answers each message to JetStream and fetches the next batch. The io
// thread maps and submits the percepts and owns stats_. So at most `batch`
// messages are in limbic's hands at a time; the rest wait in the stream.
//
// A message's verdict (io thread, from the sink and its `done`):
//   kAck   its percept is durable (done OK), or its id is taken already
//          (AlreadyExists: a redelivery of a message limbic has recorded)
//   kRetry the runtime could not take it now (shutting down, the log could
//          not write, or its commit failed): Nak, redelivered after
//          kRetryDelayMs
//   kTerm  it can never be a percept (over kMaxMessageBytes, not a JSON
//          object, a request refused as invalid: InvalidArgument, NotFound,
//          FailedPrecondition): Term, JetStream drops it for this consumer;
//          logged at warn and counted as rejected
// A message whose verdict never came (Stop while it was being committed,
// a crash) is not answered: JetStream delivers it again after ack_wait, and
// its stable id makes that a duplicate if it had been recorded.
//
// The percept id (when the body has no "id"): the message's Nats-Msg-Id,
// or "js-<stream>-<stream seq>" when it has none; either one that is not a
// valid limbic id (1..128 of [A-Za-z0-9._:-]) becomes "js-" + the hex
// SHA-256 of it. Within one batch a repeated id is submitted once; the
// others are acknowledged with it, or delivered again (to be taken on their
// own) when it is not. A batch is fetched only after the previous one is
// settled, so AlreadyExists names a percept this sensor has recorded (or
// one another input, the API or a sensor, submitted with the same id).
#include <atomic>
#include <boost/asio/post.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "base/input_json.h"
#include "base/nats.h"
#include "base/sha256.h"
#include "sensors/sensor_config.h"

namespace limbic::sensors {

using nlohmann::json;

namespace {

// Bodies larger than a stream sensor's longest line are refused (the same 1 MiB).
constexpr size_t kMaxMessageBytes = 1 << 20;
// The longest a fetch waits for a first message: how long Stop may wait.
constexpr int kFetchWaitMs = 1000;
// A Nak'ed message is delivered again after this long.
constexpr int kRetryDelayMs = 1000;
// Reconnecting after a failed setup or fetch: the wait doubles up to the max.
constexpr int kMinBackoffMs = 250;
constexpr int kMaxBackoffMs = 10000;
// Messages handed out by the consumer and not yet answered, per consumer.
constexpr int kMaxAckPending = 1024;

struct Config {
  std::vector<std::string> servers;
  std::string stream, subject, durable;
  int batch = 64;
  TimeMs ack_wait = 30000;
  json defaults = json::object();
};

// kSameAsFirst: the id of an earlier message of the batch (Batch::first),
// acknowledged if that one is, else delivered again to be taken on its own.
enum class Verdict { kPending, kAck, kRetry, kTerm, kSameAsFirst };

// One fetched batch, shared by the consumer thread and the io thread (and
// the `done` callbacks, which may outlive the sensor).
struct Batch {
  std::vector<nats::Message> messages;  // set before it is posted, then read-only
  std::mutex mu;
  std::condition_variable settled;
  std::vector<Verdict> verdicts;  // guarded by mu
  std::vector<size_t> first;      // guarded by mu: for kSameAsFirst
  size_t left = 0;                // guarded by mu: verdicts still kPending

  void Set(size_t i, Verdict v) {
    std::lock_guard<std::mutex> lock(mu);
    if (verdicts[i] != Verdict::kPending) return;
    verdicts[i] = v;
    if (--left == 0) settled.notify_all();
  }
};

std::string PerceptIdFor(const std::string& key) {
  return state::IsValidId(key) ? key : "js-" + Sha256::Hex(key);
}

class JetStreamSensor final : public SensorBase {
 public:
  JetStreamSensor(std::string name, Config config, boost::asio::io_context& ioc, PerceptSink sink,
                  std::shared_ptr<spdlog::logger> log)
      : SensorBase(std::move(name), "jetstream", std::move(sink), std::move(log)),
        config_(std::move(config)),
        ioc_(ioc),
        alive_(std::make_shared<bool>(true)) {}
  ~JetStreamSensor() override {
    Stop();
    *alive_ = false;
  }

  Status Start() override {
    thread_ = std::thread([this] { Consume(); });
    return Status::OK();
  }
  void Stop() override {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  SensorStats stats() const override {
    SensorStats s = stats_;
    s.queue_depth = in_hand_;
    return s;
  }

 private:
  // Consumer thread: connect, bind the consumer, then fetch and settle
  // batches until Stop. Every failure is logged and retried with backoff;
  // NATS being away never stops limbic.
  void Consume() {
    nats::ConnectOptions co;
    co.servers = config_.servers;
    co.name = "limbic sensor " + name_;
    co.retry_on_failed_connect = true;  // NATS down at start: connect in the background
    co.request_timeout_ms = 2000;       // bounds Stop while a request is out
    auto connected = nats::Connection::Connect(co);
    if (!connected.ok()) {  // only a bad option gets here: the URLs were checked at load
      log_->error("sensor {}: {}", name_, connected.status().message());
      return;
    }
    nats::Connection& nc = **connected;
    std::unique_ptr<nats::Connection::PullSubscription> sub;
    int backoff = kMinBackoffMs;
    std::string last_error;
    // Logs a failure (the same one again only at debug: one warn per
    // outage) and waits: `backoff`, doubling, or kMinBackoffMs while the
    // client is merely reconnecting (a cheap check, no request).
    auto failed = [&](const Status& s, bool grow = true) {
      const std::string& error = s.message();  // names the stream or consumer
      if (error != last_error)
        log_->warn("sensor {}: {} (NATS at {}); retrying", name_, error, nc.describe());
      else
        log_->debug("sensor {}: {}; retrying", name_, error);
      last_error = error;
      Sleep(grow ? backoff : kMinBackoffMs);
      if (grow) backoff = std::min(backoff * 2, kMaxBackoffMs);
    };
    while (!stop_) {
      if (!sub) {
        // Not connected, a request would wait out its timeout (libnats
        // holds it for the reconnect): say so at once instead.
        if (!nc.connected()) {
          failed(Status::Unavailable("not connected to NATS"), /*grow=*/false);
          continue;
        }
        // The stream is created when missing (subjects: [subject]), so the
        // sensor may start before anyone publishes.
        auto stream = nc.EnsureStream({config_.stream, {config_.subject}, 0, true});
        if (!stream.ok()) {
          failed(stream.status());
          continue;
        }
        nats::Connection::PullOptions po;
        po.stream = config_.stream;
        po.subject = config_.subject;
        po.durable = config_.durable;
        po.ack_wait_ms = static_cast<int>(config_.ack_wait);
        po.max_ack_pending = kMaxAckPending;
        auto bound = nc.PullSubscribe(po);
        if (!bound.ok()) {
          failed(bound.status());
          continue;
        }
        sub = std::move(bound).value();
        log_->info("sensor {}: consuming {} of stream {} as durable consumer {}", name_,
                   config_.subject, config_.stream, config_.durable);
        last_error.clear();
        backoff = kMinBackoffMs;
      }
      auto fetched = sub->Fetch(config_.batch, kFetchWaitMs);
      if (!fetched.ok()) {
        // A consumer deleted under us, or the stream: bind (and create) again.
        sub.reset();
        failed(fetched.status());
        continue;
      }
      if (fetched->empty()) continue;
      backoff = kMinBackoffMs;
      Settle(*fetched);
    }
  }

  // Consumer thread: hands one batch to the io thread, waits for its
  // verdicts (or Stop), and answers JetStream for each settled message.
  void Settle(std::vector<nats::Connection::Delivery>& deliveries) {
    auto batch = std::make_shared<Batch>();
    for (const auto& d : deliveries) batch->messages.push_back(d.message());
    batch->verdicts.assign(deliveries.size(), Verdict::kPending);
    batch->first.assign(deliveries.size(), 0);
    batch->left = deliveries.size();
    in_hand_ = deliveries.size();
    std::weak_ptr<bool> alive = alive_;
    boost::asio::post(ioc_, [this, alive, batch] {
      if (auto a = alive.lock(); a && *a && !stop_) Submit(batch);  // no sink after Stop
    });
    std::vector<Verdict> verdicts;
    {
      std::unique_lock<std::mutex> lock(batch->mu);
      while (batch->left > 0 && !stop_)
        batch->settled.wait_for(lock, std::chrono::milliseconds(100));
      verdicts = batch->verdicts;
      for (size_t i = 0; i < verdicts.size(); ++i) {
        if (verdicts[i] != Verdict::kSameAsFirst) continue;
        Verdict first = batch->verdicts[batch->first[i]];
        verdicts[i] = first == Verdict::kAck       ? Verdict::kAck
                      : first == Verdict::kPending ? Verdict::kPending
                                                   : Verdict::kRetry;
      }
    }
    for (size_t i = 0; i < deliveries.size(); ++i) {
      Status s;
      switch (verdicts[i]) {
        case Verdict::kPending:  // stopping: JetStream delivers it again after ack_wait
        case Verdict::kSameAsFirst:
          continue;
        case Verdict::kAck:
          s = deliveries[i].Ack();
          break;
        case Verdict::kRetry:
          s = deliveries[i].Nak(kRetryDelayMs);
          break;
        case Verdict::kTerm:
          s = deliveries[i].Term();
          break;
      }
      if (!s.ok()) {
        // NATS is away: the rest would each wait out the request timeout.
        // Unanswered, they come again after ack_wait (then as duplicates).
        log_->warn(
            "sensor {}: {}; {} message(s) of the batch left unanswered, delivered again later",
            name_, s.message(), deliveries.size() - i);
        break;
      }
    }
    in_hand_ = 0;
  }

  // Io thread: maps and submits each message of `batch`; every message
  // gets its verdict now (refused) or from its percept's `done`.
  void Submit(const std::shared_ptr<Batch>& batch) {
    std::unordered_map<std::string, size_t> first_with_id;
    std::vector<std::pair<size_t, size_t>> repeats;  // (message, first with its id)
    for (size_t i = 0; i < batch->messages.size(); ++i) {
      const nats::Message& m = batch->messages[i];
      ++stats_.received;
      std::string where =
          "message " + std::to_string(m.stream_seq) + " of stream " + config_.stream;
      if (!m.msg_id.empty()) where += " (Nats-Msg-Id " + m.msg_id.substr(0, 160) + ")";
      auto request = Map(m, where);
      if (!request.ok()) {
        ++stats_.rejected;
        log_->warn("sensor {}: {}; terminated (not delivered again)", name_,
                   request.status().message());
        batch->Set(i, Verdict::kTerm);
        continue;
      }
      std::string id = (*request)["id"];
      if (auto [it, fresh] = first_with_id.emplace(id, i); !fresh) {
        repeats.emplace_back(i, it->second);
        continue;
      }
      Committed done = [batch, i, log = log_, name = name_, where](const Status& s,
                                                                   std::span<const state::Event>) {
        if (!s.ok())
          log->warn("sensor {}: {} not recorded: {}; delivered again", name, where, s.message());
        batch->Set(i, s.ok() ? Verdict::kAck : Verdict::kRetry);
      };
      Status s = sink_(std::move(*request), done);
      if (s.ok()) {
        ++stats_.delivered;
        continue;
      }
      ++stats_.rejected;
      if (s.IsAlreadyExists()) {
        // A redelivery: common after a crash, so not worth a line each at info.
        log_->debug("sensor {}: {} is percept {}, recorded already; acknowledged", name_, where,
                    id);
        batch->Set(i, Verdict::kAck);
      } else if (s.IsInvalidArgument() || s.IsNotFound() || s.IsFailedPrecondition()) {
        // The request itself: a bad field, a thread_id that is not there.
        log_->warn("sensor {}: {} rejected: {}; terminated (not delivered again)", name_, where,
                   s.message());
        batch->Set(i, Verdict::kTerm);
      } else {
        // limbic's side: shutting down, the log could not write.
        log_->warn("sensor {}: {} not taken now: {}; delivered again", name_, where, s.message());
        batch->Set(i, Verdict::kRetry);
      }
    }
    // A repeated id is the same percept: settled with the first (Settle).
    for (auto [i, first] : repeats) {
      ++stats_.rejected;
      log_->debug("sensor {}: message {} of stream {} has the id of message {} in its batch", name_,
                  batch->messages[i].stream_seq, config_.stream, batch->messages[first].stream_seq);
      std::lock_guard<std::mutex> lock(batch->mu);
      batch->first[i] = first;
    }
    for (auto [i, first] : repeats) batch->Set(i, Verdict::kSameAsFirst);
  }

  // The percept request for one message; InvalidArgument naming `where`.
  Result<json> Map(const nats::Message& m, const std::string& where) const {
    if (m.data.size() > kMaxMessageBytes)
      return Status::InvalidArgument(where + " is " + std::to_string(m.data.size()) +
                                     " bytes, more than " + std::to_string(kMaxMessageBytes));
    auto parsed = ParseInputJson(m.data);
    if (!parsed.ok() || !parsed->is_object())
      return Status::InvalidArgument(
          where + " is not a JSON object: " + m.data.substr(0, 120) + " (" +
          (parsed.ok() ? "a " + std::string(parsed->type_name()) : parsed.status().message()) +
          ")");
    json req = std::move(*parsed);
    for (auto it = config_.defaults.begin(); it != config_.defaults.end(); ++it)
      if (!req.contains(it.key())) req[it.key()] = *it;
    if (!req.contains("id")) {
      req["id"] = PerceptIdFor(m.msg_id.empty()
                                   ? "js-" + config_.stream + "-" + std::to_string(m.stream_seq)
                                   : m.msg_id);
    } else if (!req["id"].is_string()) {
      return Status::InvalidArgument(where + ": field \"id\" must be a string");
    }
    return req;
  }

  // Consumer thread: waits up to `ms`, less when Stop comes.
  void Sleep(int ms) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (!stop_ && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  const Config config_;
  boost::asio::io_context& ioc_;
  std::shared_ptr<bool> alive_;  // guards `this` in tasks posted to the io thread
  std::atomic<bool> stop_{false};
  std::atomic<size_t> in_hand_{0};  // messages of the batch being settled
  std::thread thread_;
};

}  // namespace

Result<std::unique_ptr<Sensor>> MakeJetStreamSensor(const std::string& name, const json& cfg,
                                                    boost::asio::io_context& ioc, PerceptSink sink,
                                                    std::shared_ptr<spdlog::logger> log) {
  LIMBIC_RETURN_IF_ERROR(CheckKeys(
      name, cfg, {"nats", "stream", "subject", "durable", "batch", "ack_wait", "defaults"}));
  Config c;
  auto urls = cfg.find("nats");
  if (urls == cfg.end())
    return KeyError(name, "nats", "required: the servers, [\"nats://127.0.0.1:4222\", ...]");
  if (urls->is_string()) {
    c.servers.push_back(urls->get<std::string>());
  } else if (urls->is_array() && !urls->empty()) {
    for (const json& u : *urls) {
      if (!u.is_string())
        return KeyError(name, "nats", "must be an array of nats://HOST:PORT strings");
      c.servers.push_back(u.get<std::string>());
    }
  } else {
    return KeyError(name, "nats", "must be a nats://HOST:PORT string or a non-empty array of them");
  }
  for (const std::string& url : c.servers) {
    Status s = nats::CheckServerUrl(url);
    if (!s.ok()) return KeyError(name, "nats", s.message());
  }
  auto text = [&](const char* key, std::string* out, bool subject) -> Status {
    if (!cfg.contains(key) || !cfg[key].is_string())
      return KeyError(name, key,
                      subject ? "required: a subject such as \"world.percepts\""
                              : "required: a name of A-Z a-z 0-9 _ -");
    *out = cfg[key].get<std::string>();
    Status s = subject ? nats::CheckSubject(key, *out) : nats::CheckName(key, *out);
    return s.ok() ? s : KeyError(name, key, s.message());
  };
  LIMBIC_RETURN_IF_ERROR(text("stream", &c.stream, false));
  LIMBIC_RETURN_IF_ERROR(text("subject", &c.subject, true));
  LIMBIC_RETURN_IF_ERROR(text("durable", &c.durable, false));
  if (auto it = cfg.find("batch"); it != cfg.end()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > kMaxAckPending)
      return KeyError(
          name, "batch",
          "must be an integer in [1, " + std::to_string(kMaxAckPending) + "], got " + it->dump());
    c.batch = it->get<int>();
  }
  auto ack_wait = DurationKey(name, cfg, "ack_wait", 30000, 100);
  if (!ack_wait.ok()) return ack_wait.status();
  if (*ack_wait > 24 * 3600 * 1000) return KeyError(name, "ack_wait", "must be at most 24h");
  c.ack_wait = *ack_wait;
  if (cfg.contains("defaults")) {
    if (!cfg["defaults"].is_object())
      return KeyError(name, "defaults", "must be an object of percept fields");
    for (auto it = cfg["defaults"].begin(); it != cfg["defaults"].end(); ++it)
      LIMBIC_RETURN_IF_ERROR(CheckPerceptField(name, "defaults." + it.key(), it.key(), *it));
    c.defaults = cfg["defaults"];
  }
  return std::unique_ptr<Sensor>(
      new JetStreamSensor(name, std::move(c), ioc, std::move(sink), std::move(log)));
}

}  // namespace limbic::sensors
