// Shared by the mind's integration tests (mind_test.cc: the openai kind,
// crashes; mind_wake_test.cc: what wakes and ends it; mind_limits_test.cc:
// the budget, a failing model server; mind_exec_test.cc: the exec kind): a scripted
// OpenAI-compatible model server on loopback, configs for both kinds, and
// reading sessions and events through the real binary's API.
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>

#include "http.h"
#include "mcp_client.h"
#include "runtime_util.h"
#include "tests/process_group.h"


namespace mind_util {

using nlohmann::json;
using namespace limbic::testing;
using Steady = std::chrono::steady_clock;

// ---- the model: a scripted OpenAI-compatible chat-completions server ----

// A tool call as the model writes it: `arguments` is JSON text, as it is.
inline json RawCall(const std::string& id, const std::string& name, const std::string& arguments) {
  return {
      {"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", arguments}}}};
}

inline json Call(const std::string& id, const std::string& name, const json& arguments) {
  return RawCall(id, name, arguments.dump());
}

// A chat-completions answer of 200: the assistant's text and tool calls,
// with the usage given.
inline std::string ChatAnswer(const std::string& text, const std::vector<json>& calls = {},
                       uint64_t in = 100, uint64_t out = 20) {
  json message = {{"role", "assistant"}, {"content", text.empty() ? json() : json(text)}};
  if (!calls.empty()) message["tool_calls"] = calls;
  json body = {
      {"id", "chatcmpl-test"},
      {"object", "chat.completion"},
      {"model", "test-model"},
      {"choices",
       {{{"index", 0},
         {"message", message},
         {"finish_reason", calls.empty() ? "stop" : "tool_calls"}}}},
      {"usage", {{"prompt_tokens", in}, {"completion_tokens", out}, {"total_tokens", in + out}}}};
  return HttpAnswer(200, body.dump());
}

// The model server: `script` gives the raw answer to each request (its
// JSON body and its index, 0-based); nullopt holds it unanswered.
class Model {
 public:
  using Script = std::function<std::optional<std::string>(const json& body, size_t index)>;
  explicit Model(Script script)
      : script_(std::move(script)), server_([this](const TestRequest& r) {
          return script_(json::parse(r.body, nullptr, false), r.index);
        }) {}
  std::string url() const { return server_.url(); }
  std::vector<TestRequest> raw() { return server_.requests(); }
  // The requests' bodies, in order.
  std::vector<json> bodies() {
    std::vector<json> out;
    for (const TestRequest& r : server_.requests())
      out.push_back(json::parse(r.body, nullptr, false));
    return out;
  }
  size_t count() { return server_.requests().size(); }
  bool WaitFor(size_t n, int timeout_ms = 20000) { return server_.WaitFor(n, timeout_ms); }

 private:
  Script script_;
  TestHttpServer server_;  // last: its threads call script_
};

// A script of answers in order; the last one repeats.
inline Model::Script Answers(std::vector<std::optional<std::string>> answers) {
  return
      [answers](const json&, size_t index) { return answers[std::min(index, answers.size() - 1)]; };
}

// The messages of a request whose role is `role`.
inline std::vector<json> MessagesOf(const json& body, const std::string& role) {
  std::vector<json> out;
  for (const json& m : body.value("messages", json::array()))
    if (m.value("role", "") == role) out.push_back(m);
  return out;
}

// ---- the runtime ----

// BaseConfig with an enabled openai mind "scout" at `model_url`: it wakes
// only when asked (threshold 1, no arousal gain, no focused-thread wake)
// and has no budget to speak of; `patch` is merged into the mind section.
inline json MindConfig(const TempDir& dir, const std::string& model_url,
                const json& patch = json::object(), json effectors = json::object()) {
  json config = BaseConfig(dir, std::move(effectors));
  json mind = {{"enabled", true},
               {"name", "scout"},
               {"kind", "openai"},
               {"url", model_url},
               {"model", "test-model"},
               {"api_key_env", ""},
               {"timeout", "20s"},
               {"tools", {"create_thread", "enqueue_action", "attention"}},
               {"wake", {{"threshold", 1}, {"arousal_gain", 0}, {"focused_thread", false}}},
               {"budget", {{"max_session", "60s"}, {"max_steps", 8}, {"min_interval", "0s"}}}};
  mind.merge_patch(patch);
  config["mind"] = std::move(mind);
  return config;
}

// An exec mind running `script` (a Python program written beside the config).
inline json ExecConfig(const TempDir& dir, const std::string& script, const json& patch = json::object()) {
  std::ofstream(dir / "mind.py") << script;
  json config = BaseConfig(dir);
  json mind = {{"enabled", true},
               {"name", "scout"},
               {"kind", "exec"},
               {"command", {"/usr/bin/python3", "${CONFIG_DIR}/mind.py"}},
               {"wake", {{"threshold", 1}, {"arousal_gain", 0}, {"focused_thread", false}}},
               {"budget", {{"max_session", "60s"}, {"max_steps", 8}, {"min_interval", "0s"}}}};
  mind.merge_patch(patch);
  config["mind"] = std::move(mind);
  return config;
}

// POST /v1/mind/wake: the session it started.
inline std::string Wake(uint16_t port, const std::string& reason) {
  auto r = HttpJson(port, "POST", "/v1/mind/wake", {{"reason", reason}});
  INFO(r.body);
  REQUIRE(r.status == 202);
  std::string session = r.Json()["session"];
  CHECK(session == "m-" + std::to_string(r.Json()["seq"].get<uint64_t>()));
  return session;
}

// The session's record once it is asleep.
inline json WaitAsleep(uint16_t port, const std::string& session, int timeout_ms = 20000) {
  return WaitJson(
      port, "/v1/mind/sessions/" + session,
      [](const json& s) { return s.is_object() && s.value("status", "") == "asleep"; }, timeout_ms);
}

// After a restart: the session limbic's stop cut short, recorded as
// interrupted by that stop.
inline void CheckStoppedByLimbic(uint16_t port, const std::string& session) {
  json s = Http(port, "GET", "/v1/mind/sessions/" + session).Json();
  INFO(s.dump(1));
  CHECK(s["status"] == "asleep");
  CHECK(s["outcome"] == "interrupted");
  CHECK(s["error"] == "limbic stopped");
}

// Every event of the log, oldest first.
inline json AllEvents(uint16_t port) {
  auto r = Http(port, "GET", "/v1/events?after=0&limit=10000");
  REQUIRE(r.status == 200);
  return r.Json()["events"];
}

inline std::vector<json> EventsOf(const json& events, const std::string& type) {
  std::vector<json> out;
  for (const json& e : events)
    if (e["type"] == type) out.push_back(e);
  return out;
}

// An RFC 3339 time of the API ("2026-11-28T16:01:44.123Z") in ms.
inline int64_t Ms(const std::string& t) {
  tm parts{};
  int ms = 0;
  REQUIRE(std::sscanf(t.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &parts.tm_year, &parts.tm_mon,
                      &parts.tm_mday, &parts.tm_hour, &parts.tm_min, &parts.tm_sec, &ms) == 7);
  parts.tm_year -= 1900;
  parts.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&parts)) * 1000 + ms;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Waits for a JSON file the Python mind writes (atomically, by rename).
inline json WaitFile(const std::string& path, int timeout_ms = 20000) {
  auto deadline = Steady::now() + std::chrono::milliseconds(timeout_ms);
  while (Steady::now() < deadline) {
    json j = json::parse(ReadText(path), nullptr, false);
    if (j.is_object()) return j;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  FAIL("no " << path);
  return json();
}

// A mind that starts a child in its group, says where they are, and hangs.
inline const char* const kHangingMind = R"PY(import json, os, subprocess, sys, time
child = subprocess.Popen(["/bin/sleep", "1000"])
with open("pids.tmp", "w") as f:
    json.dump({"pid": os.getpid(), "pgid": os.getpgid(0), "child": child.pid}, f)
os.rename("pids.tmp", "pids.json")
print(json.dumps({"text": "waiting with %d" % child.pid}), flush=True)
time.sleep(1000)
)PY";

// `limbic run` as a shell starts it, with SIGPIPE at its default: the
// tests' own processes ignore it, and an ignored signal stays ignored
// across exec, so RunningLimbic's runtime never meets it.
class DefaultSigpipeLimbic {
 public:
  DefaultSigpipeLimbic(const TempDir& dir, const json& config) {
    const std::string path = dir / "limbic.json";
    std::ofstream(path) << config.dump(2);
    child_ = std::make_unique<Child>(
        std::vector<std::string>{"/usr/bin/python3", "-c",
                                 "import os, signal, sys\n"
                                 "signal.signal(signal.SIGPIPE, signal.SIG_DFL)\n"
                                 "os.execv(sys.argv[1], sys.argv[1:])\n",
                                 LimbicBinary(), "--state", dir / "state", "run", "--config", path},
        true);
    std::string line;
    while (child_->ReadLine(&line, 20000)) {
      auto at = line.find("api http://127.0.0.1:");
      if (at != std::string::npos) {
        port_ = static_cast<uint16_t>(std::stoi(line.substr(at + 21)));
        break;
      }
    }
  }
  uint16_t port() const { return port_; }
  Child& child() { return *child_; }

 private:
  std::unique_ptr<Child> child_;
  uint16_t port_ = 0;
};

}  // namespace mind_util
