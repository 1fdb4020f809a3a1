// Shared by the tests that run `limbic run`: a base config, scripts, and
// polling the HTTP API until a condition holds.
#pragma once

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "http.h"

namespace limbic::testing {

using nlohmann::json;

inline json BaseConfig(const TempDir& dir, json effectors = json::object(),
                       json sensors = json::object()) {
  std::ofstream(dir / "reflexes.json") << R"({"reflexes": []})";
  effectors["log"] = {{"kind", "log"}};
  return {{"api", {{"port", 0}, {"body_limit", 4096}}},
          {"outbox",
           {{"max_attempts", 3}, {"backoff", "50ms"}, {"max_backoff", "200ms"}, {"jitter", 0}}},
          {"reflexes", "reflexes.json"},
          {"sensors", sensors},
          {"effectors", effectors}};
}

inline std::string Script(const TempDir& dir, const std::string& name, const std::string& body) {
  std::string path = dir / name;
  std::ofstream(path) << "#!/bin/sh\n" << body;
  chmod(path.c_str(), 0755);
  return path;
}

// `limbic state digest --json` of `state` (with `extra` arguments, e.g.
// --at-seq N): what the command line says its pools hash to.
inline std::string CliDigest(const std::string& state, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"--state", state, "state", "digest", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = Limbic(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out)["digest"];
}

// Polls GET path until pred(json) holds.
inline json WaitJson(uint16_t port, const std::string& path,
                     const std::function<bool(const json&)>& pred, int timeout_ms = 15000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  json last;
  while (std::chrono::steady_clock::now() < deadline) {
    last = Http(port, "GET", path).Json();
    if (pred(last)) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  INFO("last answer: " << last.dump());
  FAIL("timed out waiting on " << path);
  return last;
}

// The value of one series of GET /metrics (`name` or `name{labels}`), or
// -1 when the runtime shows none.
inline double Metric(uint16_t port, const std::string& series) {
  std::istringstream in(Http(port, "GET", "/metrics").body);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  return -1;
}

}  // namespace limbic::testing
