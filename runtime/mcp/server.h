// `limbic mcp`: the Model Context Protocol over stdio (JSON-RPC 2.0, one
// message per line), so any MCP client can use limbic as its memory and
// state. docs/mcp.md lists the tools and how to register the server.
//
// Every tool is one request to limbic's HTTP API (docs/api.md), so a tool
// does exactly what the route does. Where the API is:
//   - a `limbic run` holds the state dir: its address is read from
//     <state>/api.json (written by the runtime once it listens; trusted only
//     while its pid is alive and holds the lock), the token from
//     $LIMBIC_API_TOKEN, else the config's api.token;
//   - nobody does: `limbic mcp` runs the runtime itself, in-process, on the
//     same config with no sensors and the API on an ephemeral loopback
//     port, and stops it (gracefully) when stdin closes. That runtime writes
//     api.json too, so a second `limbic mcp` on the state dir uses it. A
//     SIGINT/SIGTERM stops it gracefully and then ends the process;
//   - `--url` given: that API, no questions asked.
// While the lock's holder has no current api.json (a runtime still
// recovering, or a CLI command), this waits up to 10 s, then fails naming it.
//
// Protocol: initialize (the client's protocolVersion is echoed when this
// server supports it, else the newest it supports), notifications/
// initialized, ping, tools/list (each tool with a JSON Schema), tools/call
// (the API's JSON answer as text content and as structuredContent; an API
// error, or the API unreachable, is a tool result with isError: true), and JSON-RPC errors: -32700
// parse error, -32600 invalid request, -32601 method not found, -32602 invalid params (unknown
// tool, arguments that break the tool's schema). A batch (a JSON array) is answered with one
// -32600; notifications are never answered. Requests are handled one at a time, in order.
//
// Thread-safety: RunMcp runs on the calling thread.
#pragma once

#include <spdlog/logger.h>

#include <functional>
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"

namespace limbic::runtime {

struct McpOptions {
  std::string state_dir;    // "" = the config's state_dir
  std::string config_path;  // "" = the embedded default config
  std::string url;          // a runtime's base URL; "" = find or start one
};

// Reads requests from `in` until EOF, answers on `out`. Logs to `log`
// (stderr: stdout carries only protocol messages). Returns the exit code
// (0 at EOF after a clean stop), or why no API could be found or started.
Result<int> RunMcp(const McpOptions& options, std::istream& in, std::ostream& out,
                   std::shared_ptr<spdlog::logger> log);

}  // namespace limbic::runtime
