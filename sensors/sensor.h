// Sensors turn the world into percepts.
//
// A sensor produces percept requests -- the JSON objects POST /v1/percepts
// takes ({source, type, intensity?, text?, data?, id?}) -- and hands them to
// a PerceptSink on the runtime's io thread, which validates and commits them.
// Sensors reading blocking sources (stdin, files, subprocesses) do so on
// their own thread and hand requests over through a BoundedQueue whose
// overflow policy is named in the config. Built-in kinds (docs/adapters.md):
// webhook, github, stdin, jsonl, timer, exec. C++ adapters add kinds with
// RegisterSensorKind.
//
// Thread affinity: Start, Stop, stats and the sink run on the io thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <spdlog/logger.h>
#include <string>

#include "state/status.h"

namespace limbic::sensors {

// Takes one percept request; the error says why it was refused (the sensor
// logs it with its name and the input's line).
using PerceptSink = std::function<Status(nlohmann::json request)>;

struct SensorStats {
  uint64_t received = 0;  // inputs seen
  uint64_t delivered = 0; // accepted by the sink
  uint64_t rejected = 0;  // malformed, or refused by the sink
  uint64_t dropped = 0;   // lost to a full queue (overflow policy)
  size_t queue_depth = 0;
};

class Sensor {
 public:
  virtual ~Sensor() = default;
  virtual const std::string& name() const = 0;
  virtual const std::string& kind() const = 0;
  virtual Status Start() = 0;
  // Stops producing and joins its threads; idempotent.
  virtual void Stop() = 0;
  virtual SensorStats stats() const = 0;
};

using SensorFactory = std::function<Result<std::unique_ptr<Sensor>>(
    const std::string& name, const nlohmann::json& config, boost::asio::io_context& ioc,
    PerceptSink sink, std::shared_ptr<spdlog::logger> log)>;

void RegisterSensorKind(const std::string& kind, SensorFactory factory);

// Errors name the key: "sensors.gh.secret: required".
Result<std::unique_ptr<Sensor>> MakeSensor(const std::string& name, const nlohmann::json& config,
                                           boost::asio::io_context& ioc, PerceptSink sink,
                                           std::shared_ptr<spdlog::logger> log);

}  // namespace limbic::sensors
