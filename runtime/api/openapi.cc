#include "runtime/api/openapi.h"

#include <cctype>
#include <map>
#include <set>
#include <string>

#include "runtime/api/operations.h"

namespace limbic::runtime {

using nlohmann::json;

namespace {

const char* kStatusText(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted: queued by the sensor";
    case 304: return "Not modified (If-None-Match)";
    case 308: return "Moved: the inspector is at /ui/";
    case 503: return "Degraded: writes fail, or the write gate is closed (same body)";
    default: return "";
  }
}

// A parameter's schema without its description (that is the parameter's).
json Parameter(const OpParam& p) {
  json schema = p.schema;
  std::string description = schema.value("description", "");
  schema.erase("description");
  json out = {{"name", p.name},
              {"in", p.in == ParamIn::kPath ? "path" : "query"},
              {"required", p.in == ParamIn::kPath || p.required},
              {"schema", std::move(schema)}};
  if (!description.empty()) out["description"] = description;
  return out;
}

json Response(const Operation& op, int status) {
  json r = {{"description", kStatusText(status)}};
  switch (op.media) {
    case Media::kJson:
      r["content"] = {{"application/json", {{"schema", op.result}}}};
      break;
    case Media::kText:
      r["content"] = {{"text/plain", {{"schema", {{"type", "string"}}}}}};
      break;
    case Media::kSse:
      r["content"] = {{"text/event-stream", {{"schema", {{"type", "string"}}}}}};
      break;
    case Media::kFile:
      if (status == 200) r["content"] = {{"*/*", {{"schema", {{"type", "string"}}}}}};
      break;
  }
  return r;
}

json OperationObject(const Operation& op) {
  json o = {{"operationId", op.name}, {"summary", op.summary}, {"tags", {op.tag}}};
  if (!op.description.empty()) o["description"] = op.description;
  json params = json::array();
  for (const OpParam& p : op.params)
    if (p.in != ParamIn::kBody) params.push_back(Parameter(p));
  if (!params.empty()) o["parameters"] = std::move(params);
  if (json body = BodySchemaOf(op); !body.is_null())
    o["requestBody"] = {{"required", op.body == Operation::Body::kRequired},
                        {"content", {{"application/json", {{"schema", std::move(body)}}}}}};
  json responses = json::object();
  for (int status : op.statuses) responses[std::to_string(status)] = Response(op, status);
  responses["default"] = {
      {"description", "An error: {error: {code, message}}"},
      {"content", {{"application/json", {{"schema", {{"$ref", "#/components/schemas/Error"}}}}}}}};
  o["responses"] = std::move(responses);
  if (op.access == Access::kPublic) o["security"] = json::array();
  if (op.access == Access::kSignedOrToken)
    o["security"] = {{{"bearer", json::array()}}, json::object()};
  if (!op.mcp.tool.empty()) {
    json mcp = {{"tool", op.mcp.tool}, {"annotations", op.mcp.annotations},
                {"timeout_ms", op.mcp.timeout_ms}};
    if (!op.mcp.exactly_one_of.empty()) mcp["exactly_one_of"] = op.mcp.exactly_one_of;
    o["x-limbic-mcp"] = std::move(mcp);
  }
  if (op.cli) o["x-limbic-cli"] = true;
  return o;
}

json MakeDocument() {
  json paths = json::object();
  std::set<std::string> tags;
  for (const Operation& op : Operations()) {
    std::string method = op.method;
    for (char& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    paths[op.path][method] = OperationObject(op);
    tags.insert(op.tag);
  }
  json tag_list = json::array();
  for (const std::string& t : tags) tag_list.push_back({{"name", t}});
  return {
      {"openapi", "3.1.0"},
      {"info",
       {{"title", "limbic"},
        {"version", LIMBIC_VERSION},
        {"summary", "An event-sourced cognitive state runtime for AI agents"},
        {"description",
         "limbic's HTTP API (docs/api.md). Every write answers once its events are durable and "
         "applied. When api.token is set, every route but the public ones (security: []) needs "
         "`Authorization: Bearer <token>`. Made from the operation table "
         "(runtime/api/operations.h); x-limbic-mcp names an operation's MCP tool, x-limbic-cli "
         "says the command line forwards it to a running runtime."}}},
      {"servers", {{{"url", "http://127.0.0.1:7077"}, {"description", "the default api.port"}}}},
      {"security", {{{"bearer", json::array()}}, json::object()}},
      {"tags", std::move(tag_list)},
      {"paths", std::move(paths)},
      {"components",
       {{"securitySchemes",
         {{"bearer",
           {{"type", "http"},
            {"scheme", "bearer"},
            {"description", "api.token (needed only when it is set)"}}}}},
        {"schemas", ComponentSchemas()}}}};
}

}  // namespace

const json& OpenApiDocument() {
  static const json kDocument = MakeDocument();
  return kDocument;
}

}  // namespace limbic::runtime
