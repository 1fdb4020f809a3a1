#include "runtime/mcp/server.h"

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <istream>
#include <optional>
#include <ostream>

#include "runtime/mcp/api_client.h"
#include "runtime/mcp/tools.h"
#include "base/input_json.h"
#include "base/json.h"
#include "base/name.h"

namespace limbic::runtime {
namespace {

using nlohmann::json;

// Newest first; the first is answered to a client asking for another one.
const char* const kProtocolVersions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;

struct RpcError {
  int code;
  std::string message;
  json data;  // null: none
};

// "mcp:<clientInfo.name>", the actor of the client's changes
// (state/provenance.h); "mcp" when it gave no name. Control and bidi-control
// characters become '_' and the name is cut to 200 bytes (at a character
// boundary), so it is a valid X-Limbic-Actor header and actor.
std::string McpActor(const json& params) {
  auto info = params.find("clientInfo");
  if (info == params.end() || !info->is_object()) return "mcp";
  auto name = info->find("name");
  if (name == info->end() || !name->is_string()) return "mcp";
  std::string n = SanitizeName(name->get<std::string>(), '_', 200);
  while (!n.empty() && n.back() == ' ') n.pop_back();
  return n.empty() ? "mcp" : "mcp:" + n;
}

json ErrorMessage(const json& id, const RpcError& e) {
  json error = {{"code", e.code}, {"message", e.message}};
  if (!e.data.is_null()) error["data"] = e.data;
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

// JSON-RPC 2.0 with MCP's methods on top. One message in, at most one out;
// requests are answered in order, one at a time.
class McpServer {
 public:
  McpServer(ApiClient& api, std::shared_ptr<spdlog::logger> log)
      : api_(api), log_(std::move(log)) {}

  // The answer to one line; nullopt for a notification, a response or a
  // blank line.
  std::optional<json> Handle(const std::string& line) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) return std::nullopt;
    // Outside input: a line that is not JSON, nests deeper than
    // api.max_json_depth or holds a number beyond a double is a parse error
    // (-32700) with id null, since no id can be read; the next line is served.
    auto parsed = ParseInputJson(line);
    if (!parsed.ok())
      return ErrorMessage(nullptr, {kParseError, "parse error: " + parsed.status().message(), {}});
    json msg = std::move(parsed).value();
    if (msg.is_array())
      return ErrorMessage(
          nullptr, {kInvalidRequest, "batches are not supported: send one message per line", {}});
    if (!msg.is_object())
      return ErrorMessage(nullptr, {kInvalidRequest, "invalid request: not a JSON object", {}});
    const bool notification = !msg.contains("id");
    json id = notification ? json(nullptr) : msg["id"];
    if (!notification && !id.is_string() && !id.is_number_integer())
      return ErrorMessage(
          nullptr, {kInvalidRequest, "invalid request: id must be a string or an integer", {}});
    if (!msg.contains("method")) {
      // A response: this server sends no requests, so there is nothing to match it to.
      if (msg.contains("result") || msg.contains("error")) return std::nullopt;
      if (notification) return std::nullopt;
      return ErrorMessage(id, {kInvalidRequest, "invalid request: no method", {}});
    }
    std::optional<RpcError> invalid;
    if (msg.value("jsonrpc", json()) != "2.0")
      invalid = RpcError{kInvalidRequest, "invalid request: jsonrpc must be \"2.0\"", {}};
    else if (!msg["method"].is_string())
      invalid = RpcError{kInvalidRequest, "invalid request: method must be a string", {}};
    if (notification) {
      // Never answered, not even with an error (initialized, cancelled, ...).
      if (invalid) log_->debug("ignoring an invalid notification: {}", invalid->message);
      return std::nullopt;
    }
    if (invalid) return ErrorMessage(id, *invalid);
    const std::string method = msg["method"].get<std::string>();
    json params = msg.contains("params") ? msg["params"] : json::object();
    if (!params.is_object())
      return ErrorMessage(id, {kInvalidParams, "invalid params: params must be an object", {}});
    json result;
    std::optional<RpcError> error = Dispatch(method, params, &result);
    if (error) return ErrorMessage(id, *error);
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
  }

 private:
  std::optional<RpcError> Dispatch(const std::string& method, const json& params, json* result) {
    if (method == "initialize") return Initialize(params, result);
    if (method == "ping") {
      *result = json::object();
      return std::nullopt;
    }
    if (method == "tools/list") {
      // Annotations came with 2025-03-26; an older client gets none.
      const bool annotations = version_ >= "2025-03-26";
      json tools = json::array();
      for (const McpTool& t : McpTools()) {
        json tool = {{"name", t.name}, {"description", t.description}, {"inputSchema", t.input_schema}};
        if (annotations && !t.annotations.is_null()) tool["annotations"] = t.annotations;
        tools.push_back(std::move(tool));
      }
      *result = {{"tools", std::move(tools)}};
      return std::nullopt;
    }
    if (method == "tools/call") return CallTool(params, result);
    return RpcError{kMethodNotFound, "method not found: " + method, {}};
  }

  std::optional<RpcError> Initialize(const json& params, json* result) {
    if (!params.contains("protocolVersion") || !params["protocolVersion"].is_string())
      return RpcError{kInvalidParams, "invalid params: protocolVersion must be a string", {}};
    std::string asked = params["protocolVersion"].get<std::string>();
    std::string version = kProtocolVersions[0];
    for (const char* v : kProtocolVersions)
      if (asked == v) version = v;
    if (version != asked) log_->info("client asked for protocol {}; answering {}", asked, version);
    version_ = version;
    actor_ = McpActor(params);
    *result = {
        {"protocolVersion", version},
        {"capabilities", {{"tools", json::object()}}},
        {"serverInfo", {{"name", "limbic"}, {"version", LIMBIC_VERSION}}},
        {"instructions",
         "limbic is your long-term memory and working state. Use recall and context before "
         "answering, remember_fact / remember_episode to keep what matters, attention to see "
         "what needs you, and threads to track work."}};
    return std::nullopt;
  }

  std::optional<RpcError> CallTool(const json& params, json* result) {
    if (!params.contains("name") || !params["name"].is_string())
      return RpcError{kInvalidParams, "invalid params: name must be a string", {}};
    std::string name = params["name"].get<std::string>();
    const McpTool* tool = FindMcpTool(name);
    if (!tool) return RpcError{kInvalidParams, "unknown tool: " + name, {{"tool", name}}};
    json arguments = params.contains("arguments") ? params["arguments"] : json::object();
    if (arguments.is_null()) arguments = json::object();
    std::string argument;
    Status checked = CheckToolArguments(*tool, arguments, &argument);
    if (!checked.ok()) {
      json data = {{"tool", name}};
      if (!argument.empty()) data["argument"] = argument;
      return RpcError{kInvalidParams, "invalid arguments for " + name + ": " + checked.message(),
                      data};
    }
    ApiRequest request = BuildApiRequest(*tool, arguments);
    request.actor = actor_;
    // From here on every failure is the tool's result, for the model to read.
    auto fail = [&](const std::string& text) {
      log_->warn("{}: {}", name, text);
      *result = {{"content", {{{"type", "text"}, {"text", text}}}}, {"isError", true}};
      return std::nullopt;
    };
    // The API would refuse it (413) -- and may close the connection before
    // reading it all, which a client sees as a broken pipe, not the answer.
    if (size_t limit = api_.body_limit(); limit > 0 && request.body.size() > limit)
      return fail("too large: " + std::to_string(request.body.size()) + " bytes, limit " +
                  std::to_string(limit) + " (api.body_limit)");
    auto answer = api_.Call(request);
    if (!answer.ok()) return fail("the limbic API is unreachable: " + answer.status().message());
    auto& [status, body] = *answer;
    *result = {{"content", {{{"type", "text"}, {"text", body}}}},
               {"isError", status < 200 || status >= 300}};
    json parsed = json::parse(body, nullptr, false);
    if (parsed.is_object()) (*result)["structuredContent"] = std::move(parsed);
    return std::nullopt;
  }

  ApiClient& api_;
  std::shared_ptr<spdlog::logger> log_;
  std::string version_ = kProtocolVersions[0];  // negotiated by initialize
  std::string actor_ = "mcp";                   // McpActor of initialize's clientInfo
};

std::string EnvToken() {
  const char* token = std::getenv("LIMBIC_API_TOKEN");
  return token ? token : "";
}

}  // namespace

std::optional<json> HandleMcpLine(ApiClient& api, const std::string& line,
                                  std::shared_ptr<spdlog::logger> log) {
  return McpServer(api, std::move(log)).Handle(line);
}

Result<int> RunMcp(const McpOptions& options, std::istream& in, std::ostream& out,
           std::shared_ptr<spdlog::logger> log) {
  // A client that hangs up is end of input, not a fatal signal.
  ::signal(SIGPIPE, SIG_IGN);
  auto config = options.config_path.empty() ? DefaultConfig() : LoadConfigFile(options.config_path);
  if (!config.ok()) return config.status();
  if (!options.state_dir.empty()) config->state_dir = options.state_dir;
  SetMaxInputJsonDepth(config->max_json_depth);

  ApiConnection api(*config, options.url, EnvToken(), log);
  Status connected = api.Connect();
  if (!connected.ok()) return connected;
  McpServer server(api, log);
  std::string line;
  while (std::getline(in, line)) {
    std::optional<json> answer = server.Handle(line);
    if (!answer) continue;
    out << CompactJson(*answer) << '\n' << std::flush;
    if (!out) {
      log->warn("mcp: stdout closed; stopping");
      break;
    }
  }
  log->info("mcp: end of input; stopping");
  return api.Stop();
}

}  // namespace limbic::runtime
