#include "runtime/operations.h"

#include "runtime/api.h"

namespace limbic::runtime {

using nlohmann::json;

const std::vector<Operation>& Operations() {
  static const std::vector<Operation> kOps = [] {
    std::vector<Operation> all;
    for (auto part : {SystemOperations, MemoryOperations, WorldOperations, PoolOperations,
                      EventOperations, ArchiveOperations, StateOperations})
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

json ErrorSchema() {
  return {{"type", "object"},
          {"required", {"error"}},
          {"properties",
           {{"error",
             {{"type", "object"},
              {"required", {"code", "message"}},
              {"properties",
               {{"code", {{"type", "string"}, {"description", "stable: invalid_argument, ..."}}},
                {"message", {{"type", "string"}, {"description", "what is wrong, and where"}}}}}}}}}};
}

// The query parameters of every operation, as the router checks them
// (http_query.h): derived from the table, never kept beside it.
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
