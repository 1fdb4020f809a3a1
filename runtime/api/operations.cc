#include "runtime/api/operations.h"

#include "runtime/api/api.h"
#include "runtime/api/operation_schemas.h"

namespace limbic::runtime {

using nlohmann::json;

const std::vector<Operation>& Operations() {
  static const std::vector<Operation> kOps = [] {
    std::vector<Operation> all;
    for (auto part : {SystemOperations, MemoryOperations, WorldOperations, PoolOperations,
                      EventOperations, ArchiveOperations, StateOperations, MindOperations})
      for (Operation& op : part()) all.push_back(std::move(op));
    return all;
  }();
  return kOps;
}

const Operation* FindOperation(std::string_view name) {
  for (const Operation& op : Operations())
    if (op.name == name) return &op;
  return nullptr;
}

json BodySchemaOf(const Operation& op) {
  if (op.body == Operation::Body::kNone) return nullptr;
  if (!op.body_schema.is_null()) return op.body_schema;
  json properties = json::object(), required = json::array();
  for (const OpParam& p : op.params) {
    if (p.in != ParamIn::kBody) continue;
    properties[p.name] = p.schema;
    if (p.required) required.push_back(p.name);
  }
  json s = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) s["required"] = std::move(required);
  return s;
}

const json& ComponentSchemas() {
  using namespace schema;  // NOLINT: the table's vocabulary
  static const json kSchemas = {
      {"Error",
       Object({{"error", Object({{"code", Str("stable: invalid_argument, not_found, ...")},
                                 {"message", Str("what is wrong, and where")}},
                                {"code", "message"})}},
              {"error"})},
      // One event as the log holds it (docs/events.md).
      {"Event", Object({{"seq", T("integer")}, {"ts", T("string")}, {"type", T("string")}},
                       {"seq", "ts", "type"})},
      // The answer to a durable write; {events: []} when there was nothing to do.
      {"Receipt",
       Object({{"seq", {{"type", "integer"}, {"description", "the first event's"}}},
               {"id", Str("the record's, when one was made")},
               {"events", ArrayOf(Ref("Event"))}},
              {"events"})},
      {"Percept",
       Object({{"id", T("string")}, {"source", T("string")}, {"type", T("string")},
               {"status", T("string")}, {"intensity", T("number")}, {"ts", T("string")},
               {"thread_id", Nullable("string")}},
              {"id", "source", "type", "status", "ts"})},
      {"Thread", Object({{"id", T("string")}, {"goal", T("string")}, {"status", T("string")},
                         {"salience", T("number")}, {"percepts", ArrayOf(T("string"))}},
                        {"id", "goal", "status"})},
      {"Action", Object({{"id", T("string")}, {"effector", T("string")}, {"type", T("string")},
                         {"status", T("string")}, {"attempts", T("integer")}},
                        {"id", "effector", "type", "status"})},
      {"Arousal",
       Object({{"level", T("number")}, {"factors", T("object")}, {"effective", T("number")}},
              {"level", "effective"})},
      {"Reflex", Object({{"id", T("string")}, {"enabled", T("boolean")}}, {"id"})},
  };
  return kSchemas;
}

// The query parameters of every operation, as the router checks them
// (runtime/http/query.h): derived from the table, never kept beside it.
const std::vector<RouteQueries>& ApiQueries() {
  static const std::vector<RouteQueries> kQueries = [] {
    std::vector<RouteQueries> out;
    for (const Operation& op : Operations()) {
      RouteQueries q{op.method, op.path, {}};
      for (const OpParam& p : op.params)
        if (p.in == ParamIn::kQuery) q.params.push_back({p.name, p.kind});
      if (!q.params.empty()) out.push_back(std::move(q));
    }
    return out;
  }();
  return kQueries;
}

}  // namespace limbic::runtime
