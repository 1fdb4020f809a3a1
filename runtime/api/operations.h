// The operations of limbic's API, declared once, as data.
//
// Each Operation is one HTTP route (method and path), what it takes (path
// and query parameters, a JSON body's fields), what it answers (its status
// codes and the JSON Schema of its body), and, when it has them, its other
// faces: the MCP tool that calls it and whether the command line forwards
// it to a running runtime. From this one table come:
//   - the HTTP router (Api::MakeRouter binds a handler to each operation
//     by name) and the query parameters Dispatch checks (ApiQueries);
//   - the MCP tools (runtime/mcp/tools.h McpTools: name, description, input schema,
//     annotations and timeout, all from the operation);
//   - the command line's forwarding (ForwardOp: by operation name);
//   - the OpenAPI 3.1 document (openapi.h), served at GET /v1/openapi.json
//     and kept as docs/openapi.json.
//
// Order matters: the router tries routes in table order, so a literal path
// ("/v1/memory/stats") comes before a parameter at the same place
// ("/v1/memory/{id}"), and the methods of one path are listed in an Allow
// header in table order.
//
// Thread-safety: the table is immutable after first use.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/http/query.h"

namespace limbic::runtime {

//! Where a parameter goes in the request.
enum class ParamIn {
  kPath,   //!< a {name} segment of the path (always required)
  kQuery,  //!< the query string (checked by its QueryKind before the handler runs)
  kBody,   //!< a field of the JSON body
};

//! One input of an operation.
struct OpParam {
  std::string name{};
  ParamIn in = ParamIn::kBody;
  nlohmann::json schema{};  //!< JSON Schema, with its description
  bool required = false;
  QueryKind kind = QueryKind::kName;  //!< path and query: the rule its text passes
  bool in_tool = true;                //!< offered as an argument of the operation's MCP tool
  nlohmann::json tool_schema{};         //!< the tool's schema when it differs (null: `schema`)
};

//! Who may call an operation (runtime/http/policy.h applies to all).
enum class Access {
  kToken,          //!< the bearer token, when api.token is set
  kPublic,         //!< no token (files that hold no data, the API's description)
  kSignedOrToken,  //!< a sensor that checks a signature of its own, else the token
};

//! What an operation answers with on success.
enum class Media {
  kJson,  //!< application/json, described by `result`
  kText,  //!< text/plain (Prometheus exposition)
  kSse,   //!< text/event-stream
  kFile,  //!< a static file (the inspector)
};

//! The MCP tool that calls an operation.
struct McpSpec {
  std::string tool{};                         //!< "" = no tool
  nlohmann::json annotations{};               //!< readOnlyHint, destructiveHint, ...
  int timeout_ms = 30000;                   //!< the HTTP exchange; a `wait` argument adds to it
  std::vector<std::string> exactly_one_of{};  //!< when not empty: exactly one of these is given
};

struct Operation {
  std::string name{};    //!< the operation id: "add_percept"; the CLI forwards by it
  std::string method{};  //!< GET, POST, PUT, PATCH, DELETE
  std::string path{};    //!< "/v1/threads/{id}"
  std::string tag{};     //!< the area (docs/api.md's section): "percepts", "memory", ...
  std::string summary{};      //!< one line
  std::string description{};  //!< more (an MCP tool's description); may be empty
  std::vector<OpParam> params{};
  //! Whether a JSON body is read: kNoBody, an optional object (empty = {}),
  //! or a required one.
  enum class Body { kNone, kOptional, kRequired } body = Body::kNone;
  nlohmann::json body_schema{};  //!< null: an object of the kBody params
  std::vector<int> statuses = {200};  //!< the success codes
  Media media = Media::kJson;
  nlohmann::json result{};  //!< JSON Schema of a success answer (kJson)
  Access access = Access::kToken;
  McpSpec mcp{};
  bool cli = false;  //!< `limbic` forwards it to a running runtime (ForwardOp)
};

//! Every operation, in router order.
const std::vector<Operation>& Operations();
//! nullptr when no operation has that name.
const Operation* FindOperation(std::string_view name);

//! The JSON body's schema: body_schema, else an object of the kBody params
//! (properties and required); null when the operation reads no body.
nlohmann::json BodySchemaOf(const Operation& op);

//! The schemas the table refers to by name ({"$ref": "#/components/
//! schemas/Receipt"}): Error ({"error": {"code", "message"}}, what every
//! failure answers), Event, Receipt, Percept, Thread, Action, Arousal,
//! Reflex. An object {name: schema}.
const nlohmann::json& ComponentSchemas();

// The areas' parts of the table (operations_*.cc), concatenated in this order.
std::vector<Operation> SystemOperations();   //!< /healthz, /metrics, promote, openapi
std::vector<Operation> MemoryOperations();   //!< memory, context
std::vector<Operation> WorldOperations();    //!< the world model
std::vector<Operation> PoolOperations();     //!< percepts, threads, attention, outbox, arousal
std::vector<Operation> EventOperations();    //!< events, why, reflexes, sensors
std::vector<Operation> ArchiveOperations();  //!< consolidation, the archive
std::vector<Operation> StateOperations();    //!< digest, time travel, forks, the inspector
std::vector<Operation> MindOperations();     //!< the mind: status, wake, sleep, sessions

}  // namespace limbic::runtime
