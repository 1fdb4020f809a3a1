// Sensors turn the world into percepts.
//
// A sensor produces percept requests -- the JSON objects POST /v1/percepts
// takes ({source, type, intensity?, text?, data?, id?, thread_id?}) -- and
// hands them to a PerceptSink on the runtime's io thread, which validates
// and commits them. Every sensor has a bounded queue whose overflow policy
// is named in its config (docs/sensors.md): sensors reading blocking sources
// (stdin, files, subprocesses) fill it from their own thread; the HTTP
// sensors (webhook, github) hold requests in it while their previous batch
// is being made durable. Built-in kinds: webhook, github, stdin, jsonl,
// timer, exec, jetstream (a NATS JetStream consumer that fetches a batch
// only once the previous one is durable). C++ adapters add kinds with
// RegisterSensorKind.
//
// Thread affinity: the factory, Start, Stop, stats and the sink run on the
// io thread. A sensor must not call the sink after Stop returns.
#pragma once

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "state/event.h"
#include "base/status.h"

namespace limbic::sensors {

// Runs once a request's events are durable and applied (OK; `events` carry
// their seq and ts), or when they could not be made durable. Same shape as
// state::Engine::Done.
using Committed = std::function<void(const Status& status, std::span<const state::Event> events)>;

// Takes one percept request. Returns the reason it was refused (invalid, or
// the runtime is shutting down) and then records nothing and never calls
// `done`; otherwise `done` (which may be empty) runs later, once, on the io
// thread. The sensor logs refusals with its name and the input's line.
using PerceptSink = std::function<Status(nlohmann::json request, Committed done)>;

struct SensorStats {
  uint64_t received = 0;   // inputs seen (good or bad)
  uint64_t delivered = 0;  // accepted by the sink
  uint64_t rejected = 0;   // malformed, unauthenticated, or refused by the sink
  uint64_t dropped = 0;    // lost to a full queue (the overflow policy)
  size_t queue_depth = 0;  // waiting in the queue now
};

class Sensor {
 public:
  virtual ~Sensor() = default;
  virtual const std::string& name() const = 0;
  virtual const std::string& kind() const = 0;
  // Begins producing; an error stops the runtime from starting.
  virtual Status Start() = 0;
  // Stops producing and joins its threads; idempotent. Called before the
  // sensor is destroyed.
  virtual void Stop() = 0;
  virtual SensorStats stats() const = 0;
};

// Builds a sensor from its config object ({"kind": KIND, ...}). Check every
// key here, so a bad config fails at start and not on the first input;
// errors name the key: "sensors.NAME.KEY: why". `ioc` and `log` outlive the
// sensor.
using SensorFactory = std::function<Result<std::unique_ptr<Sensor>>(
    const std::string& name, const nlohmann::json& config, boost::asio::io_context& ioc,
    PerceptSink sink, std::shared_ptr<spdlog::logger> log)>;

// Adds (or replaces) a kind. Call before the runtime opens its sensors
// (e.g. from main, or a static initialiser in the adapter's library).
void RegisterSensorKind(const std::string& kind, SensorFactory factory);

// Errors name the key: "sensors.gh.secret: required".
Result<std::unique_ptr<Sensor>> MakeSensor(const std::string& name, const nlohmann::json& config,
                                           boost::asio::io_context& ioc, PerceptSink sink,
                                           std::shared_ptr<spdlog::logger> log);

}  // namespace limbic::sensors
