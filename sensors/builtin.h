// The built-in sensors the HTTP API talks to directly, and what all built-in
// sensors share: the bounded queue and the counting base class.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "sensors/sensor.h"

namespace limbic::sensors {

// What a full queue does with one more item (config key "overflow"):
// drop the new item, drop the oldest waiting item, or make the producer
// wait for room ("drop_newest", "drop_oldest", "block").
enum class Overflow { kDropNewest, kDropOldest, kBlock };

// A FIFO of at most `capacity` items between a producer and the io thread
// (or within the io thread). Thread-safe.
template <typename T>
class BoundedQueue {
 public:
  BoundedQueue(size_t capacity, Overflow policy) : capacity_(capacity), policy_(policy) {}

  // Producer side. Returns false when closed (the item is discarded). When
  // full, kBlock waits for room or Close; kDropNewest drops `item`,
  // kDropOldest the oldest queued item -- counted in dropped() and moved to
  // *evicted when given, so its owner can be told.
  bool Push(T item, std::optional<T>* evicted = nullptr) {
    std::unique_lock<std::mutex> lock(mu_);
    if (policy_ == Overflow::kBlock)
      room_.wait(lock, [&] { return items_.size() < capacity_ || closed_; });
    if (closed_) return false;
    if (items_.size() >= capacity_) {
      ++dropped_;
      if (policy_ == Overflow::kDropNewest) {
        if (evicted) *evicted = std::move(item);
        return true;
      }
      if (evicted) *evicted = std::move(items_.front());
      items_.pop_front();
    }
    items_.push_back(std::move(item));
    return true;
  }

  // Consumer side: everything queued now, oldest first.
  std::deque<T> TakeAll() {
    std::deque<T> out;
    {
      std::lock_guard<std::mutex> lock(mu_);
      out.swap(items_);
    }
    room_.notify_all();
    return out;
  }

  // Wakes blocked producers; later pushes fail. Queued items stay for TakeAll.
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    room_.notify_all();
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return items_.size();
  }
  size_t capacity() const { return capacity_; }
  Overflow policy() const { return policy_; }
  uint64_t dropped() const { return dropped_; }

 private:
  mutable std::mutex mu_;
  std::condition_variable room_;
  std::deque<T> items_;
  size_t capacity_;
  Overflow policy_;
  bool closed_ = false;
  std::atomic<uint64_t> dropped_{0};
};

// Base of the sensors built in here: name, kind, counters (io thread).
class SensorBase : public Sensor {
 public:
  SensorBase(std::string name, std::string kind, PerceptSink sink,
             std::shared_ptr<spdlog::logger> log)
      : name_(std::move(name)),
        kind_(std::move(kind)),
        sink_(std::move(sink)),
        log_(std::move(log)) {}
  const std::string& name() const override { return name_; }
  const std::string& kind() const override { return kind_; }
  SensorStats stats() const override { return stats_; }

 protected:
  // Hands one request to the sink and counts it; a refusal is logged with
  // `where` naming the input ("line 12 of /var/log/x.jsonl").
  Status Deliver(nlohmann::json request, const std::string& where);

  std::string name_, kind_;
  PerceptSink sink_;
  std::shared_ptr<spdlog::logger> log_;
  SensorStats stats_;
};

// One request to POST /v1/sensors/NAME, as an HttpSensor sees it.
struct HttpInput {
  std::string_view body;
  std::function<std::string(const std::string& name)> header;  // "" when absent
};

// Base of the sensors fed by POST /v1/sensors/NAME. A mapped request waits
// in the bounded queue while this sensor's previous batch is being made
// durable; then everything waiting goes to the sink at once (one log
// group). When the queue is full the overflow policy drops the new request
// (drop_newest, the default here) or the longest-waiting one (drop_oldest);
// the dropped request's `done` gets Unavailable naming the sensor and
// "queue full", which the API answers with 503. kBlock is refused at load:
// a waiting HTTP client is not a producer thread that can be paused.
//
// Thread affinity: io thread only.
class HttpSensor : public SensorBase {
 public:
  HttpSensor(std::string name, std::string kind, size_t capacity, Overflow overflow,
             PerceptSink sink, std::shared_ptr<spdlog::logger> log);
  ~HttpSensor() override;
  Status Start() override { return Status::OK(); }
  // Answers every waiting request with Unavailable; takes no more.
  void Stop() override;
  SensorStats stats() const override;

  // The percept request for one HTTP request: InvalidArgument (the API
  // answers 400) when it is malformed, FailedPrecondition (401) when it is
  // not authentic. A failure counts as received and rejected.
  virtual Result<nlohmann::json> MapRequest(const HttpInput& in) = 0;
  // True when MapRequest authenticates each request by a signature of its
  // own (a secret shared with the sender): the API then does not also ask
  // for its bearer token, nor apply its Host and Origin rules.
  virtual bool signs_requests() const { return false; }

  // Queues one percept request (from MapRequest). `done` runs exactly once
  // on the io thread: with the sink's refusal, a queue-full or stopped
  // Unavailable (possibly before Enqueue returns), or the commit's outcome.
  void Enqueue(nlohmann::json request, Committed done);

 protected:
  // Counts one input that was refused before it reached the queue.
  void CountRejected() {
    ++stats_.received;
    ++stats_.rejected;
  }

 private:
  struct Pending {
    nlohmann::json request;
    Committed done;
  };
  void Flush();

  BoundedQueue<Pending> queue_;
  size_t in_flight_ = 0;  // handed to the sink, not yet committed
  bool flushing_ = false;
  bool stopped_ = false;
  std::shared_ptr<bool> alive_;  // guards `this` in commit callbacks
};

// `webhook`: POST /v1/sensors/NAME with any JSON body; each mapping value is
// a JSON pointer into the body ("/user/name", "" for the whole body) or a
// literal, checked when the config is loaded.
class WebhookSensor final : public HttpSensor {
 public:
  struct Field {
    std::string key;  // source, type, intensity, text, data, id, thread_id
    std::optional<nlohmann::json::json_pointer> pointer;
    nlohmann::json literal;  // when there is no pointer
  };
  WebhookSensor(std::string name, std::vector<Field> mapping, size_t capacity, Overflow overflow,
                PerceptSink sink, std::shared_ptr<spdlog::logger> log)
      : HttpSensor(std::move(name), "webhook", capacity, overflow, std::move(sink), std::move(log)),
        mapping_(std::move(mapping)) {}
  // The percept request for a raw request body: InvalidArgument when it is
  // not JSON, or when a pointer is not found in it (naming the pointer).
  // A failure counts as received and rejected.
  Result<nlohmann::json> Map(std::string_view raw_body);
  Result<nlohmann::json> MapBody(const nlohmann::json& body);
  Result<nlohmann::json> MapRequest(const HttpInput& in) override { return Map(in.body); }

 private:
  std::vector<Field> mapping_;
};

// `github`: GitHub webhooks, verified with X-Hub-Signature-256.
class GithubSensor final : public HttpSensor {
 public:
  GithubSensor(std::string name, std::string secret, nlohmann::json intensity, size_t capacity,
               Overflow overflow, PerceptSink sink, std::shared_ptr<spdlog::logger> log)
      : HttpSensor(std::move(name), "github", capacity, overflow, std::move(sink), std::move(log)),
        secret_(std::move(secret)),
        intensity_(std::move(intensity)) {}
  // The percept request for one delivery. A missing or wrong signature is
  // FailedPrecondition (the API answers 401) and nothing is recorded.
  Result<nlohmann::json> Map(std::string_view raw_body, std::string_view event,
                             std::string_view signature, std::string_view delivery);
  Result<nlohmann::json> MapRequest(const HttpInput& in) override {
    return Map(in.body, in.header("X-GitHub-Event"), in.header("X-Hub-Signature-256"),
               in.header("X-GitHub-Delivery"));
  }
  bool signs_requests() const override { return true; }  // X-Hub-Signature-256, always required

 private:
  std::string secret_;
  nlohmann::json intensity_;
};

// "sha256=" + hex HMAC-SHA256(secret, body), as GitHub computes it.
std::string GithubSignature(std::string_view secret, std::string_view body);

}  // namespace limbic::sensors
