// Registry, queue, and the webhook, github and timer kinds.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <boost/asio/steady_timer.hpp>
#include <map>

#include "sensors/builtin.h"
#include "state/json.h"
#include "state/time.h"

namespace limbic::sensors {

using nlohmann::json;

bool BoundedQueue::Push(json item) {
  std::unique_lock<std::mutex> lock(mu_);
  if (policy_ == Overflow::kBlock) room_.wait(lock, [&] { return items_.size() < capacity_ || closed_; });
  if (closed_) return false;
  if (items_.size() >= capacity_) {
    ++dropped_;
    if (policy_ == Overflow::kDropNewest) return true;
    items_.pop_front();
  }
  items_.push_back(std::move(item));
  return true;
}

std::deque<json> BoundedQueue::TakeAll() {
  std::deque<json> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    out.swap(items_);
  }
  room_.notify_all();
  return out;
}

void BoundedQueue::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  room_.notify_all();
}

size_t BoundedQueue::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return items_.size();
}

Status SensorBase::Deliver(json request, const std::string& where) {
  ++stats_.received;
  Status s = sink_(std::move(request));
  if (s.ok()) ++stats_.delivered;
  else {
    ++stats_.rejected;
    log_->warn("sensor {}: {} rejected: {}", name_, where, s.message());
  }
  return s;
}

Result<json> WebhookSensor::MapBody(const json& body) {
  json req = json::object();
  for (auto it = mapping_.begin(); it != mapping_.end(); ++it) {
    if (it.key() == "kind") continue;
    const json& m = *it;
    if (m.is_string() && (m.get<std::string>().empty() || m.get<std::string>()[0] == '/')) {
      json::json_pointer ptr(m.get<std::string>());
      if (!body.contains(ptr)) {
        ++stats_.rejected;
        return Status::InvalidArgument("sensor \"" + name_ + "\": " + it.key() + " pointer " +
                                       m.get<std::string>() + " not found in the body");
      }
      req[it.key()] = body.at(ptr);
    } else {
      req[it.key()] = m;
    }
  }
  ++stats_.received;
  return req;
}

std::string GithubSignature(std::string_view secret, std::string_view body) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), md, &len);
  static const char* kHex = "0123456789abcdef";
  std::string out = "sha256=";
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 15]);
  }
  return out;
}

Result<json> GithubSensor::Map(std::string_view raw_body, std::string_view event,
                               std::string_view signature, std::string_view delivery) {
  std::string want = GithubSignature(secret_, raw_body);
  if (signature.empty() || signature.size() != want.size() ||
      CRYPTO_memcmp(signature.data(), want.data(), want.size()) != 0) {
    ++stats_.rejected;
    return Status::FailedPrecondition(signature.empty() ? "missing X-Hub-Signature-256"
                                                        : "X-Hub-Signature-256 does not match the body");
  }
  if (event.empty()) {
    ++stats_.rejected;
    return Status::InvalidArgument("missing X-GitHub-Event");
  }
  std::optional<json> parsed = state::ParseJson(raw_body);
  if (!parsed || !parsed->is_object()) {
    ++stats_.rejected;
    return Status::InvalidArgument("the GitHub payload is not a JSON object");
  }
  json body = std::move(*parsed);
  std::string type(event);
  if (body.contains("action") && body["action"].is_string()) type += "." + body["action"].get<std::string>();
  double intensity = 0.5;
  for (const std::string& key : {type, std::string(event), std::string("*")}) {
    if (intensity_.contains(key) && intensity_[key].is_number()) {
      intensity = intensity_[key].get<double>();
      break;
    }
  }
  std::string text;
  for (const char* path : {"/issue/title", "/pull_request/title", "/comment/body", "/head_commit/message"}) {
    json::json_pointer p(path);
    if (body.contains(p) && body.at(p).is_string()) {
      text = body.at(p).get<std::string>();
      break;
    }
  }
  json req = {{"source", "github"}, {"type", type}, {"intensity", intensity}, {"data", std::move(body)}};
  if (!text.empty()) req["text"] = text;
  // GitHub redelivers with the same id: the second one is refused as taken.
  if (!delivery.empty()) req["id"] = "gh-" + std::string(delivery);
  ++stats_.received;
  return req;
}

namespace {

Status KeyError(const std::string& name, const std::string& key, const std::string& why) {
  return Status::InvalidArgument("sensors." + name + "." + key + ": " + why);
}

Status CheckKeys(const std::string& name, const json& cfg, std::initializer_list<const char*> known) {
  for (auto it = cfg.begin(); it != cfg.end(); ++it) {
    bool ok = it.key() == "kind";
    for (const char* k : known) ok = ok || it.key() == k;
    if (!ok) return KeyError(name, it.key(), "unknown key (see docs/adapters.md)");
  }
  return Status::OK();
}

// Periodic heartbeat percepts.
class TimerSensor final : public SensorBase {
 public:
  TimerSensor(std::string name, TimeMs every, json request, boost::asio::io_context& ioc, PerceptSink sink,
              std::shared_ptr<spdlog::logger> log)
      : SensorBase(std::move(name), "timer", std::move(sink), std::move(log)), every_(every),
        request_(std::move(request)), timer_(ioc) {}
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

}  // namespace

Result<std::unique_ptr<Sensor>> MakeStreamSensor(const std::string& name, const json& cfg,
                                                 boost::asio::io_context& ioc, PerceptSink sink,
                                                 std::shared_ptr<spdlog::logger> log);

namespace {

std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}

std::map<std::string, SensorFactory>& Registry() {
  static std::map<std::string, SensorFactory> registry = {
      {"webhook",
       [](const std::string& name, const json& cfg, boost::asio::io_context&, PerceptSink sink,
          std::shared_ptr<spdlog::logger> log) -> Result<std::unique_ptr<Sensor>> {
         LIMBIC_RETURN_IF_ERROR(CheckKeys(name, cfg, {"source", "type", "intensity", "text", "data", "id"}));
         for (const char* k : {"source", "type"})
           if (!cfg.contains(k)) return KeyError(name, k, "required: a JSON pointer (\"/source\") or a literal");
         return std::unique_ptr<Sensor>(new WebhookSensor(name, cfg, std::move(sink), std::move(log)));
       }},
      {"github",
       [](const std::string& name, const json& cfg, boost::asio::io_context&, PerceptSink sink,
          std::shared_ptr<spdlog::logger> log) -> Result<std::unique_ptr<Sensor>> {
         LIMBIC_RETURN_IF_ERROR(CheckKeys(name, cfg, {"secret", "intensity"}));
         if (!cfg.contains("secret") || !cfg["secret"].is_string() || cfg["secret"].get<std::string>().empty())
           return KeyError(name, "secret", "required: the webhook secret configured on GitHub");
         json intensity = cfg.value("intensity", json::object());
         if (!intensity.is_object()) return KeyError(name, "intensity", "must be an object of event -> number");
         for (auto it = intensity.begin(); it != intensity.end(); ++it)
           if (!it->is_number() || it->get<double>() < 0 || it->get<double>() > 1)
             return KeyError(name, "intensity." + it.key(), "must be a number in [0, 1]");
         return std::unique_ptr<Sensor>(
             new GithubSensor(name, cfg["secret"], std::move(intensity), std::move(sink), std::move(log)));
       }},
      {"timer",
       [](const std::string& name, const json& cfg, boost::asio::io_context& ioc, PerceptSink sink,
          std::shared_ptr<spdlog::logger> log) -> Result<std::unique_ptr<Sensor>> {
         LIMBIC_RETURN_IF_ERROR(CheckKeys(name, cfg, {"every", "source", "type", "intensity", "text"}));
         auto every = cfg.contains("every") && cfg["every"].is_string()
                          ? ParseDuration(cfg["every"].get<std::string>())
                          : Result<TimeMs>(Status::InvalidArgument("required"));
         if (!every.ok() || *every < 10) return KeyError(name, "every", "required: a duration of at least 10ms, e.g. \"60s\"");
         json req = {{"source", cfg.value("source", "timer")}, {"type", cfg.value("type", "heartbeat")},
                     {"intensity", cfg.value("intensity", 0.1)}, {"data", json::object()}};
         if (cfg.contains("text")) req["text"] = cfg["text"];
         return std::unique_ptr<Sensor>(new TimerSensor(name, *every, req, ioc, std::move(sink), std::move(log)));
       }},
      {"stdin", MakeStreamSensor},
      {"jsonl", MakeStreamSensor},
      {"exec", MakeStreamSensor},
  };
  return registry;
}

}  // namespace

void RegisterSensorKind(const std::string& kind, SensorFactory factory) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  Registry()[kind] = std::move(factory);
}

Result<std::unique_ptr<Sensor>> MakeSensor(const std::string& name, const json& config,
                                           boost::asio::io_context& ioc, PerceptSink sink,
                                           std::shared_ptr<spdlog::logger> log) {
  if (!config.is_object() || !config.contains("kind") || !config["kind"].is_string())
    return KeyError(name, "kind", "required: webhook, github, stdin, jsonl, timer or exec");
  SensorFactory factory;
  {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    auto it = Registry().find(config["kind"].get<std::string>());
    if (it == Registry().end()) return KeyError(name, "kind", "unknown kind \"" + config["kind"].get<std::string>() + "\"");
    factory = it->second;
  }
  return factory(name, config, ioc, std::move(sink), std::move(log));
}

}  // namespace limbic::sensors
