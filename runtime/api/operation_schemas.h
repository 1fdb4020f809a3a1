// Internal to runtime/operations_*.cc: the small vocabulary the operation
// table is written in -- JSON Schema pieces, parameters and annotations.
// Bounds and enums mirror what the API validates, so a client (an MCP
// model, an OpenAPI client) learns them up front; the API stays the judge
// of everything else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/api/operations.h"

namespace limbic::runtime::schema {

using nlohmann::json;

// ---- property schemas --------------------------------------------------------

inline json Str(const char* description) {
  return {{"type", "string"}, {"description", description}};
}
inline json Unit(const char* description) {
  return {{"type", "number"}, {"minimum", 0}, {"maximum", 1}, {"description", description}};
}
inline json Int(const char* description, int64_t minimum,
                std::optional<int64_t> maximum = std::nullopt) {
  json s = {{"type", "integer"}, {"minimum", minimum}, {"description", description}};
  if (maximum) s["maximum"] = *maximum;
  return s;
}
// 2^53: the largest integer every JSON reader holds exactly.
inline constexpr int64_t kMaxSafeInteger = int64_t{1} << 53;
inline json Bool(const char* description) {
  return {{"type", "boolean"}, {"description", description}};
}
inline json Obj(const char* description) {
  return {{"type", "object"}, {"description", description}};
}
inline json StrList(const char* description) {
  return {{"type", "array"}, {"items", {{"type", "string"}}}, {"description", description}};
}
inline json Enum(const char* description, std::vector<std::string> values) {
  return {{"type", "string"}, {"enum", std::move(values)}, {"description", description}};
}
// Any JSON value.
inline json AnyValue(const char* description) { return {{"description", description}}; }

// ---- parameters --------------------------------------------------------------

// A {name} segment of the path.
inline OpParam Path(std::string name, json schema) {
  return {std::move(name), ParamIn::kPath, std::move(schema), true, QueryKind::kName};
}
// A query parameter of `kind`.
inline OpParam Query(std::string name, QueryKind kind, json schema, bool required = false) {
  return {std::move(name), ParamIn::kQuery, std::move(schema), required, kind};
}
// A field of the JSON body.
inline OpParam Field(std::string name, json schema, bool required = false) {
  return {std::move(name), ParamIn::kBody, std::move(schema), required};
}
// The API takes it; the operation's MCP tool does not offer it.
inline OpParam NotInTool(OpParam p) {
  p.in_tool = false;
  return p;
}
// The MCP tool offers it with a schema of its own.
inline OpParam ToolSchema(OpParam p, json tool_schema) {
  p.tool_schema = std::move(tool_schema);
  return p;
}

// ---- MCP annotations ---------------------------------------------------------

// What a tool does to limbic's state. Every tool acts on limbic's own state
// (openWorldHint false) except enqueue_action, whose effectors act on the
// world.
inline json ReadOnly() { return {{"readOnlyHint", true}, {"openWorldHint", false}}; }
inline json Writes(bool destructive, bool idempotent) {
  return {{"readOnlyHint", false},
          {"destructiveHint", destructive},
          {"idempotentHint", idempotent},
          {"openWorldHint", false}};
}
inline McpSpec Tool(std::string name, json annotations, int timeout_ms = 30000) {
  McpSpec m;
  m.tool = std::move(name);
  m.annotations = std::move(annotations);
  m.timeout_ms = timeout_ms;
  return m;
}

// ---- result schemas ----------------------------------------------------------

// An object with these properties, `required` of them always there; others
// may appear (answers grow: a client ignores what it does not know).
inline json Object(std::vector<std::pair<std::string, json>> props,
                   std::vector<std::string> required = {}) {
  json properties = json::object();
  for (auto& [k, v] : props) properties[k] = std::move(v);
  json s = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) s["required"] = std::move(required);
  return s;
}
inline json AnyObject() { return {{"type", "object"}}; }
inline json ArrayOf(json items) { return {{"type", "array"}, {"items", std::move(items)}}; }
inline json T(const char* type) { return {{"type", type}}; }
inline json Nullable(const char* type) { return {{"type", {type, "null"}}}; }

// A schema of components/schemas (ComponentSchemas, operations.cc): the
// records several operations answer, named once in the OpenAPI document.
inline json Ref(const char* name) {
  return {{"$ref", std::string("#/components/schemas/") + name}};
}
// The answer to a durable write: {seq, events, id?}.
inline json Receipt() { return Ref("Receipt"); }

}  // namespace limbic::runtime::schema
