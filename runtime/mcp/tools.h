// Internal to runtime/: the tools `limbic mcp` offers. Each tool is one
// operation of the API (runtime/api/operations.h), and everything about it --
// name, description, input schema, annotations, timeout -- is derived from
// that operation; there is no table of tools beside the operations. Its
// arguments go, by name, into the route's path ({id}), else into the query
// string (GET) or the JSON body (POST, PATCH). tools/list shows each tool's
// JSON Schema and tools/call checks arguments against that same schema
// before anything is sent.
//
// Thread-safety: the table is immutable after first use; everything here is
// reentrant.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace limbic::runtime {

struct Operation;

struct McpTool {
  std::string name;
  std::string description;
  std::string method;           // GET, POST, PATCH, DELETE
  std::string path;             // "/v1/threads/{id}": {name} is filled from an argument
  nlohmann::json input_schema;  // {type: object, properties, required, additionalProperties: false}
  std::vector<std::string> exactly_one_of;  // when not empty: exactly one of these is given
  int timeout_ms = 30000;  // the HTTP exchange; a `wait` argument (seconds) adds to it
  // MCP tool annotations (spec 2025-03-26 on): readOnlyHint, destructiveHint,
  // idempotentHint, openWorldHint. Shown only to clients that negotiated a
  // version that has them.
  nlohmann::json annotations;
  const Operation* op = nullptr;  // what it calls (never null in McpTools)
};

// One HTTP request to the API, target relative to its base URL.
struct ApiRequest {
  std::string method;
  std::string target;  // path + query, URL-encoded
  std::string body;    // JSON; empty for GET
  int timeout_ms = 30000;
  std::string actor;  // sent as X-Limbic-Actor when not empty (state/provenance.h)
};

// Every operation's tool, in table order (the order tools/list shows them).
const std::vector<McpTool>& McpTools();
// nullptr when there is no tool of that name.
const McpTool* FindMcpTool(std::string_view name);

// Checks `arguments` against the tool's schema: an object, required keys
// present, no unknown keys, JSON types, enums and numeric bounds. A null
// value of an optional argument counts as absent. InvalidArgument names the
// argument ("argument \"intensity\": must be a number in [0, 1], got 1.5");
// *argument receives its name ("" when the problem is not one argument's).
Status CheckToolArguments(const McpTool& tool, const nlohmann::json& arguments,
                          std::string* argument);

// The request for checked `arguments`.
ApiRequest BuildApiRequest(const McpTool& tool, const nlohmann::json& arguments);

// `op`'s path with each {name} replaced by path_args[name], percent-encoded
// ("" when absent).
std::string OpTarget(const Operation& op, const nlohmann::json& path_args);

// Percent-encodes everything but RFC 3986 unreserved characters.
std::string UrlEncode(std::string_view s);

}  // namespace limbic::runtime
