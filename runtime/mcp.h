// `limbic mcp`: the Model Context Protocol over stdio (JSON-RPC 2.0, one
// message per line), so any MCP client can use limbic as its memory and
// state. docs/mcp.md lists the tools and how to register the server.
//
// Every tool is one request to limbic's HTTP API (docs/api.md), so a tool
// does exactly what the route does. Where the API is:
//   - a `limbic run` holds the state dir: its address is read from
//     <state>/api.json (written by the runtime once it listens), the token
//     from the config or $LIMBIC_API_TOKEN;
//   - nobody does: `limbic mcp` runs the runtime itself, in-process, on the
//     same config with no sensors and the API on an ephemeral loopback
//     port, and stops it (gracefully) when stdin closes.
//
// Protocol: initialize (the client's protocolVersion is echoed when this
// server supports it, else the newest it supports), notifications/
// initialized, ping, tools/list (each tool with a JSON Schema), tools/call
// (the API's answer as text content; an API error is a tool result with
// isError: true), and JSON-RPC errors: -32700 parse error, -32600 invalid
// request, -32601 method not found, -32602 invalid params (unknown tool,
// arguments that break the tool's schema).
//
// Thread-safety: RunMcp runs on the calling thread.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <spdlog/logger.h>
#include <string>

#include "state/status.h"

namespace limbic::runtime {

struct McpOptions {
  std::string state_dir;
  std::string config_path;  // "" = the embedded default config
  std::string url;          // a runtime's base URL; "" = find or start one
};

// Reads requests from `in` until EOF, answers on `out`. Logs to `log`
// (stderr: stdout carries only protocol messages). Returns the exit code.
int RunMcp(const McpOptions& options, std::istream& in, std::ostream& out,
           std::shared_ptr<spdlog::logger> log);

}  // namespace limbic::runtime
