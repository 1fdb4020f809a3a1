// The registry, the shared base classes, and the timer kind.
#include <boost/asio/steady_timer.hpp>
#include <map>

#include "base/kind_registry.h"
#include "sensors/sensor_config.h"

namespace limbic::sensors {

using nlohmann::json;

Status SensorBase::Deliver(json request, const std::string& where) {
  ++stats_.received;
  Status s = sink_(std::move(request), nullptr);
  if (s.ok()) {
    ++stats_.delivered;
  } else {
    ++stats_.rejected;
    log_->warn("sensor {}: {} rejected: {}", name_, where, s.message());
  }
  return s;
}

HttpSensor::HttpSensor(std::string name, std::string kind, size_t capacity, Overflow overflow,
                       PerceptSink sink, std::shared_ptr<spdlog::logger> log)
    : SensorBase(std::move(name), std::move(kind), std::move(sink), std::move(log)),
      queue_(capacity, overflow),
      alive_(std::make_shared<bool>(true)) {}

HttpSensor::~HttpSensor() { *alive_ = false; }

void HttpSensor::Stop() {
  stopped_ = true;
  queue_.Close();
  for (Pending& p : queue_.TakeAll())
    p.done(Status::Unavailable("sensor \"" + name_ + "\" is stopping"), {});
}

SensorStats HttpSensor::stats() const {
  SensorStats s = stats_;
  s.dropped = queue_.dropped();
  s.queue_depth = queue_.size();
  return s;
}

void HttpSensor::Enqueue(json request, Committed done) {
  ++stats_.received;
  if (stopped_) return done(Status::Unavailable("sensor \"" + name_ + "\" is stopping"), {});
  std::optional<Pending> evicted;
  queue_.Push(Pending{std::move(request), std::move(done)}, &evicted);
  if (evicted) {
    evicted->done(Status::Unavailable("sensor \"" + name_ + "\": queue full (" +
                                      std::to_string(queue_.capacity()) +
                                      " requests waiting); request dropped, try again later"),
                  {});
  }
  Flush();
}

// Hands everything waiting to the sink once the previous batch is durable:
// the queue holds requests only while a group commit is under way.
void HttpSensor::Flush() {
  if (flushing_) return;  // a refusal's `done` re-entered; the loop below goes on
  flushing_ = true;
  while (in_flight_ == 0 && !stopped_) {
    std::deque<Pending> batch = queue_.TakeAll();
    if (batch.empty()) break;
    in_flight_ = batch.size();
    for (Pending& p : batch) {
      std::weak_ptr<bool> alive = alive_;
      Committed done = [this, alive, reply = std::move(p.done)](
                           const Status& s, std::span<const state::Event> events) {
        reply(s, events);
        if (auto a = alive.lock(); a && *a && --in_flight_ == 0) Flush();
      };
      Status s = sink_(std::move(p.request), done);
      if (s.ok()) {
        ++stats_.delivered;
      } else {
        ++stats_.rejected;
        done(s, {});
      }
    }
  }
  flushing_ = false;
}

namespace {

// `timer`: a percept every `every`, with data.tick counting from 1.
class TimerSensor final : public SensorBase {
 public:
  TimerSensor(std::string name, TimeMs every, json request, boost::asio::io_context& ioc,
              PerceptSink sink, std::shared_ptr<spdlog::logger> log)
      : SensorBase(std::move(name), "timer", std::move(sink), std::move(log)),
        every_(every),
        request_(std::move(request)),
        timer_(ioc) {}
  Status Start() override {
    Schedule();
    return Status::OK();
  }
  void Stop() override {
    stopped_ = true;
    timer_.cancel();
  }

 private:
  void Schedule() {
    timer_.expires_after(std::chrono::milliseconds(every_));
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || stopped_) return;
      json req = request_;
      req["data"]["tick"] = ++ticks_;
      (void)Deliver(std::move(req), "tick " + std::to_string(ticks_));
      Schedule();
    });
  }
  TimeMs every_;
  json request_;
  boost::asio::steady_timer timer_;
  uint64_t ticks_ = 0;
  bool stopped_ = false;
};

Result<std::unique_ptr<Sensor>> MakeTimer(const std::string& name, const json& cfg,
                                          boost::asio::io_context& ioc, PerceptSink sink,
                                          std::shared_ptr<spdlog::logger> log) {
  LIMBIC_RETURN_IF_ERROR(CheckKeys(name, cfg, {"every", "source", "type", "intensity", "text"}));
  if (!cfg.contains("every"))
    return KeyError(name, "every", "required: a duration of at least 10ms, e.g. \"60s\"");
  auto every = DurationKey(name, cfg, "every", 0, 10);
  if (!every.ok()) return every.status();
  json req = {{"source", "timer"}, {"type", "heartbeat"}, {"intensity", 0.1}};
  for (const char* key : {"source", "type", "intensity", "text"}) {
    if (!cfg.contains(key)) continue;
    LIMBIC_RETURN_IF_ERROR(CheckPerceptField(name, key, key, cfg[key]));
    req[key] = cfg[key];
  }
  req["data"] = json::object();
  return std::unique_ptr<Sensor>(
      new TimerSensor(name, *every, std::move(req), ioc, std::move(sink), std::move(log)));
}

}  // namespace

// In http_sensors.cc and stream_sensors.cc.
Result<std::unique_ptr<Sensor>> MakeWebhookSensor(const std::string& name, const json& cfg,
                                                  boost::asio::io_context& ioc, PerceptSink sink,
                                                  std::shared_ptr<spdlog::logger> log);
Result<std::unique_ptr<Sensor>> MakeGithubSensor(const std::string& name, const json& cfg,
                                                 boost::asio::io_context& ioc, PerceptSink sink,
                                                 std::shared_ptr<spdlog::logger> log);
Result<std::unique_ptr<Sensor>> MakeStreamSensor(const std::string& name, const json& cfg,
                                                 boost::asio::io_context& ioc, PerceptSink sink,
                                                 std::shared_ptr<spdlog::logger> log);
// In jetstream_sensor.cc.
Result<std::unique_ptr<Sensor>> MakeJetStreamSensor(const std::string& name, const json& cfg,
                                                    boost::asio::io_context& ioc, PerceptSink sink,
                                                    std::shared_ptr<spdlog::logger> log);

namespace {

KindRegistry<SensorFactory>& Registry() {
  static KindRegistry<SensorFactory> registry({
      {"webhook", MakeWebhookSensor},
      {"github", MakeGithubSensor},
      {"timer", MakeTimer},
      {"stdin", MakeStreamSensor},
      {"jsonl", MakeStreamSensor},
      {"exec", MakeStreamSensor},
      {"jetstream", MakeJetStreamSensor},
  });
  return registry;
}

}  // namespace

void RegisterSensorKind(const std::string& kind, SensorFactory factory) {
  Registry().Register(kind, std::move(factory));
}

Result<std::unique_ptr<Sensor>> MakeSensor(const std::string& name, const json& config,
                                           boost::asio::io_context& ioc, PerceptSink sink,
                                           std::shared_ptr<spdlog::logger> log) {
  auto factory = Registry().Find(config, "webhook, github, stdin, jsonl, timer, exec or jetstream");
  if (!factory.ok()) return KeyError(name, "kind", factory.status().message());
  return (*factory)(name, config, ioc, std::move(sink), std::move(log));
}

}  // namespace limbic::sensors
