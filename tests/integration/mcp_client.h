// The client end of `limbic mcp` for the integration tests (mcp_test.cc:
// the protocol and the runtime it uses; mcp_tools_test.cc: the tools).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime_util.h"

namespace limbic::testing {

// The client end. Every line the server writes must be a JSON-RPC message:
// stdout carries nothing else.
class McpClient {
 public:
  McpClient(const TempDir& dir, std::vector<std::string> args)
      : child_(Argv(dir, std::move(args)), StderrFile{dir / "mcp.log"}) {}

  // Sends a request and returns the answer with its id.
  json Request(const std::string& method, const json& params = json::object()) {
    int id = next_id_++;
    Send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
    json answer = Next();
    CHECK(answer["id"] == id);
    return answer;
  }
  void Notify(const std::string& method) { Send({{"jsonrpc", "2.0"}, {"method", method}}); }
  // A raw line; returns the next message.
  json Raw(const std::string& line) {
    REQUIRE(child_.Write(line + "\n"));
    return Next();
  }
  json Initialize(const std::string& version = "2025-06-18") {
    json answer = Request("initialize", {{"protocolVersion", version},
                                         {"capabilities", json::object()},
                                         {"clientInfo", {{"name", "test"}, {"version", "0"}}}});
    Notify("notifications/initialized");
    return answer;
  }
  // tools/call's result; REQUIREs that it is not a protocol error.
  json Call(const std::string& tool, const json& arguments) {
    json answer = Request("tools/call", {{"name", tool}, {"arguments", arguments}});
    INFO(answer.dump());
    REQUIRE(answer.contains("result"));
    return answer["result"];
  }
  // A successful call's JSON answer.
  json Ok(const std::string& tool, const json& arguments = json::object()) {
    json result = Call(tool, arguments);
    INFO(tool << ": " << result.dump());
    REQUIRE(result["isError"] == false);
    REQUIRE(result["content"][0]["type"] == "text");
    CHECK(json::parse(result["content"][0]["text"].get<std::string>()) ==
          result["structuredContent"]);
    return result["structuredContent"];
  }
  // Closes stdin; the exit code once it has exited.
  int Finish() {
    child_.CloseStdin();
    int code = -99;
    CHECK(child_.WaitFor(30000, &code));
    return code;
  }
  Child& child() { return child_; }

 private:
  static std::vector<std::string> Argv(const TempDir& dir, std::vector<std::string> args) {
    std::vector<std::string> argv{LimbicBinary(), "--state", dir / "state", "mcp"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  void Send(const json& msg) { REQUIRE(child_.Write(msg.dump() + "\n")); }
  json Next() {
    std::string line;
    REQUIRE(child_.ReadLine(&line, 30000));
    json msg = json::parse(line, nullptr, false);
    INFO("stdout line: " << line);
    REQUIRE(msg.is_object());
    CHECK(msg["jsonrpc"] == "2.0");
    return msg;
  }

  Child child_;
  int next_id_ = 1;
};

// A config for the in-process runtime: BaseConfig with a sensor, which
// `limbic mcp` must leave out.
inline std::vector<std::string> WriteConfig(const TempDir& dir) {
  json config = BaseConfig(
      dir, json::object(),
      {{"tick", {{"kind", "timer"}, {"every", "1h"}, {"source", "timer"}, {"type", "tick"}}}});
  std::ofstream(dir / "limbic.json") << config.dump(2);
  return {"--config", dir / "limbic.json"};
}

inline bool Exists(const std::string& path) { return std::filesystem::exists(path); }

}  // namespace limbic::testing
