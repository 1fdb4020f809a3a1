#include "runtime/mcp/tools.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

#include "base/json.h"
#include "runtime/api/operations.h"

namespace limbic::runtime {
namespace {

using nlohmann::json;

// A tool's input schema: the operation's path parameters, then its query
// parameters (GET) or body fields, each as the tool shows it.
json InputSchema(const Operation& op) {
  json properties = json::object(), required = json::array();
  for (const OpParam& p : op.params) {
    if (!p.in_tool) continue;
    if (p.in == ParamIn::kQuery && op.method != "GET") continue;
    properties[p.name] = p.tool_schema.is_null() ? p.schema : p.tool_schema;
    if (p.required) required.push_back(p.name);
  }
  json s = {{"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
  if (!required.empty()) s["required"] = std::move(required);
  return s;
}

McpTool ToolOf(const Operation& op) {
  McpTool t;
  t.name = op.mcp.tool;
  t.description = op.description;
  t.method = op.method;
  t.path = op.path;
  t.input_schema = InputSchema(op);
  t.exactly_one_of = op.mcp.exactly_one_of;
  t.timeout_ms = op.mcp.timeout_ms;
  t.annotations = op.mcp.annotations;
  t.op = &op;
  return t;
}

std::string Shown(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 60) s.replace(57, std::string::npos, "...");
  return s;
}

std::string Bounds(const json& schema) {
  bool lo = schema.contains("minimum"), hi = schema.contains("maximum");
  if (lo && hi) return " in [" + schema["minimum"].dump() + ", " + schema["maximum"].dump() + "]";
  if (lo) return " >= " + schema["minimum"].dump();
  return "";
}

Status CheckValue(const std::string& key, const json& schema, const json& v) {
  const std::string type = schema.value("type", "");
  std::string want;
  if (type == "string" && !v.is_string()) want = "a string";
  if (type == "boolean" && !v.is_boolean()) want = "true or false";
  if (type == "object" && !v.is_object()) want = "an object";
  // An array's items: strings, or objects (each then checked by the
  // operation itself, which answers per item: add_percepts).
  const bool of_objects = schema.contains("items") && schema["items"].value("type", "") == "object";
  if (type == "array" &&
      (!v.is_array() || !std::all_of(v.begin(), v.end(), [&](const json& e) {
        return of_objects ? e.is_object() : e.is_string();
      })))
    want = of_objects ? "an array of objects" : "an array of strings";
  if (type == "number" || type == "integer") {
    bool is = v.is_number() && !v.is_boolean();
    double d = is ? v.get<double>() : 0;
    if (type == "integer" && is && std::floor(d) != d) is = false;
    if (is && schema.contains("minimum") && d < schema["minimum"].get<double>()) is = false;
    if (is && schema.contains("maximum") && d > schema["maximum"].get<double>()) is = false;
    if (!is) want = (type == "integer" ? "an integer" : "a number") + Bounds(schema);
  }
  if (want.empty() && schema.contains("enum") &&
      std::find(schema["enum"].begin(), schema["enum"].end(), v) == schema["enum"].end()) {
    for (const json& e : schema["enum"])
      want += (want.empty() ? "one of " : ", ") + e.get<std::string>();
  }
  if (want.empty()) return Status::OK();
  return Status::InvalidArgument("argument \"" + key + "\": must be " + want + ", got " + Shown(v));
}

// The arguments that go into the path or, for GET, the query string pass
// the rules the API checks them by (runtime/http/query.h, the operation's
// parameters), so a bad one is the tool's error naming the argument, before
// anything is sent. (Numbers and booleans the schema has checked.)
Status CheckRouteParameters(const McpTool& tool, const json& arguments, std::string* argument) {
  for (auto it = arguments.begin(); it != arguments.end(); ++it) {
    if (!it->is_string()) continue;
    *argument = it.key();
    const std::string& text = it->get_ref<const std::string&>();
    const std::string where = "argument \"" + it.key() + "\"";
    if (tool.path.find("{" + it.key() + "}") != std::string::npos) {
      LIMBIC_RETURN_IF_ERROR(CheckParamValue(where, QueryKind::kName, text));
      continue;
    }
    if (tool.method != "GET") continue;
    for (const OpParam& p : tool.op->params)
      if (p.in == ParamIn::kQuery && p.name == it.key())
        LIMBIC_RETURN_IF_ERROR(CheckParamValue(where, p.kind, text));
  }
  return Status::OK();
}

}  // namespace

const std::vector<McpTool>& McpTools() {
  static const std::vector<McpTool> tools = [] {
    std::vector<McpTool> out;
    for (const Operation& op : Operations())
      if (!op.mcp.tool.empty()) out.push_back(ToolOf(op));
    return out;
  }();
  return tools;
}

const McpTool* FindMcpTool(std::string_view name) {
  for (const McpTool& t : McpTools())
    if (t.name == name) return &t;
  return nullptr;
}

Status CheckToolArguments(const McpTool& tool, const json& arguments, std::string* argument) {
  argument->clear();
  if (!arguments.is_object())
    return Status::InvalidArgument("arguments must be an object, got " + Shown(arguments));
  const json& properties = tool.input_schema["properties"];
  for (auto it = arguments.begin(); it != arguments.end(); ++it) {
    *argument = it.key();
    if (!properties.contains(it.key())) {
      std::string known;
      for (auto p = properties.begin(); p != properties.end(); ++p)
        known += (known.empty() ? "" : ", ") + p.key();
      return Status::InvalidArgument("unknown argument \"" + it.key() + "\" (" +
                                     (known.empty() ? "this tool takes none" : "known: " + known) +
                                     ")");
    }
    if (!it->is_null()) LIMBIC_RETURN_IF_ERROR(CheckValue(it.key(), properties[it.key()], *it));
  }
  auto given = [&](const std::string& key) {
    return arguments.contains(key) && !arguments[key].is_null();
  };
  for (const json& key : tool.input_schema.value("required", json::array())) {
    *argument = key.get<std::string>();
    if (!given(*argument))
      return Status::InvalidArgument("missing required argument \"" + *argument + "\"");
  }
  LIMBIC_RETURN_IF_ERROR(CheckRouteParameters(tool, arguments, argument));
  argument->clear();
  if (!tool.exactly_one_of.empty()) {
    size_t n = std::count_if(tool.exactly_one_of.begin(), tool.exactly_one_of.end(), given);
    std::string names;
    for (const std::string& k : tool.exactly_one_of) names += (names.empty() ? "" : ", ") + k;
    if (n != 1)
      return Status::InvalidArgument("give exactly one of " + names + " (got " + std::to_string(n) +
                                     ")");
  }
  return Status::OK();
}

ApiRequest BuildApiRequest(const McpTool& tool, const json& arguments) {
  ApiRequest r;
  r.method = tool.method;
  r.timeout_ms = tool.timeout_ms;
  std::string path = tool.path, query;
  json body = json::object();
  const json& properties = tool.input_schema["properties"];
  for (auto it = arguments.begin(); it != arguments.end(); ++it) {
    if (it->is_null()) continue;
    json value = *it;
    // 2.0 is an integer to JSON Schema, but not to the API's parsers.
    if (value.is_number_float() && properties[it.key()].value("type", "") == "integer")
      value = static_cast<int64_t>(value.get<double>());
    std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    std::string placeholder = "{" + it.key() + "}";
    if (size_t at = path.find(placeholder); at != std::string::npos) {
      path.replace(at, placeholder.size(), UrlEncode(text));
    } else if (tool.method == "GET") {
      query += (query.empty() ? "?" : "&") + UrlEncode(it.key()) + "=" + UrlEncode(text);
      if (it.key() == "wait") r.timeout_ms += 1000 * value.get<int>();
    } else {
      body[it.key()] = std::move(value);
    }
  }
  r.target = path + query;
  if (tool.method != "GET") r.body = CompactJson(body);
  return r;
}

std::string OpTarget(const Operation& op, const json& path_args) {
  std::string path = op.path;
  for (const OpParam& p : op.params) {
    if (p.in != ParamIn::kPath) continue;
    const std::string placeholder = "{" + p.name + "}";
    std::string value;
    if (path_args.is_object() && path_args.contains(p.name) && path_args[p.name].is_string())
      value = path_args[p.name].get<std::string>();
    if (size_t at = path.find(placeholder); at != std::string::npos)
      path.replace(at, placeholder.size(), UrlEncode(value));
  }
  return path;
}

std::string UrlEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace limbic::runtime
