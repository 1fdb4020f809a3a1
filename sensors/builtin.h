// The built-in sensors the HTTP API talks to directly, and shared helpers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "sensors/sensor.h"

namespace limbic::sensors {

enum class Overflow { kDropNewest, kDropOldest, kBlock };

// Between a producer thread and the io thread. When full: drop the new
// item, drop the oldest, or block the producer until there is room.
class BoundedQueue {
 public:
  BoundedQueue(size_t capacity, Overflow policy) : capacity_(capacity), policy_(policy) {}
  // Producer side. Returns false when closed.
  bool Push(nlohmann::json item);
  // Consumer side: everything queued now.
  std::deque<nlohmann::json> TakeAll();
  void Close();
  size_t size() const;
  uint64_t dropped() const { return dropped_; }

 private:
  mutable std::mutex mu_;
  std::condition_variable room_;
  std::deque<nlohmann::json> items_;
  size_t capacity_;
  Overflow policy_;
  bool closed_ = false;
  std::atomic<uint64_t> dropped_{0};
};

// Base of the sensors built in here: name, kind, counters.
class SensorBase : public Sensor {
 public:
  SensorBase(std::string name, std::string kind, PerceptSink sink, std::shared_ptr<spdlog::logger> log)
      : name_(std::move(name)), kind_(std::move(kind)), sink_(std::move(sink)), log_(std::move(log)) {}
  const std::string& name() const override { return name_; }
  const std::string& kind() const override { return kind_; }
  SensorStats stats() const override { return stats_; }

 protected:
  // Hands one request to the sink and counts it; `where` names the input
  // ("line 12") for the log.
  Status Deliver(nlohmann::json request, const std::string& where);

  std::string name_, kind_;
  PerceptSink sink_;
  std::shared_ptr<spdlog::logger> log_;
  SensorStats stats_;
};

// `webhook`: POST /v1/sensors/NAME; each mapping value is a JSON pointer
// into the body ("/user/name") or a literal.
class WebhookSensor final : public SensorBase {
 public:
  WebhookSensor(std::string name, nlohmann::json mapping, PerceptSink sink,
                std::shared_ptr<spdlog::logger> log)
      : SensorBase(std::move(name), "webhook", std::move(sink), std::move(log)), mapping_(std::move(mapping)) {}
  Status Start() override { return Status::OK(); }
  void Stop() override {}
  // The percept request for a body; errors name the missing pointer.
  Result<nlohmann::json> MapBody(const nlohmann::json& body);

 private:
  nlohmann::json mapping_;
};

// `github`: GitHub webhooks, verified with X-Hub-Signature-256.
class GithubSensor final : public SensorBase {
 public:
  GithubSensor(std::string name, std::string secret, nlohmann::json intensity, PerceptSink sink,
               std::shared_ptr<spdlog::logger> log)
      : SensorBase(std::move(name), "github", std::move(sink), std::move(log)),
        secret_(std::move(secret)), intensity_(std::move(intensity)) {}
  Status Start() override { return Status::OK(); }
  void Stop() override {}
  // The percept request for one delivery. A missing or wrong signature is
  // FailedPrecondition (the API answers 401) and nothing is recorded.
  Result<nlohmann::json> Map(std::string_view raw_body, std::string_view event,
                             std::string_view signature, std::string_view delivery);

 private:
  std::string secret_;
  nlohmann::json intensity_;
};

// "sha256=" + hex HMAC-SHA256(secret, body), as GitHub computes it.
std::string GithubSignature(std::string_view secret, std::string_view body);

}  // namespace limbic::sensors
