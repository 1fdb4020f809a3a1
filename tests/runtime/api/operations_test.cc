// Issue 39: every operation is declared once (runtime/api/operations.h), and the
// router, the MCP tools, the command line's forwarding and the OpenAPI
// document are derived from that table.
#include "runtime/api/operations.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "runtime/api/api.h"
#include "runtime/mcp/tools.h"
#include "runtime/api/openapi.h"

namespace limbic::runtime {
namespace {

using nlohmann::json;

std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 1;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

bool IsParam(const std::string& seg) { return seg.size() > 2 && seg.front() == '{'; }

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

TEST_CASE("operations: names, routes and tools are unique, path parameters declared") {
  std::set<std::string> names, routes, tools;
  for (const Operation& op : Operations()) {
    INFO(op.name);
    CHECK(names.insert(op.name).second);
    CHECK(routes.insert(op.method + " " + op.path).second);
    if (!op.mcp.tool.empty()) CHECK(tools.insert(op.mcp.tool).second);
    CHECK(!op.summary.empty());
    CHECK(!op.tag.empty());
    // Each {name} of the path is a kPath parameter, and each kPath
    // parameter is in the path.
    std::set<std::string> in_path, declared;
    for (const std::string& seg : Segments(op.path))
      if (IsParam(seg)) in_path.insert(seg.substr(1, seg.size() - 2));
    for (const OpParam& p : op.params)
      if (p.in == ParamIn::kPath) declared.insert(p.name);
    CHECK(in_path == declared);
    // A tool's description is what its model reads: never empty.
    if (!op.mcp.tool.empty()) CHECK(!op.description.empty());
    if (op.media == Media::kJson) CHECK(op.result.is_object());
    // Only an operation that writes takes a body.
    if (op.method == "GET") CHECK(op.body == Operation::Body::kNone);
  }
  CHECK(tools.size() == McpTools().size());
}

TEST_CASE("operations: a route is never shadowed by an earlier one") {
  // The router tries routes in table order: "/v1/memory/{id}" before
  // "/v1/memory/stats" would answer every stats request as a memory id.
  const auto& ops = Operations();
  for (size_t j = 0; j < ops.size(); ++j) {
    const auto later = Segments(ops[j].path);
    for (size_t i = 0; i < j; ++i) {
      if (ops[i].method != ops[j].method) continue;
      const auto earlier = Segments(ops[i].path);
      if (earlier.size() != later.size()) continue;
      bool covers = true;
      for (size_t k = 0; k < later.size() && covers; ++k)
        covers = IsParam(earlier[k]) || earlier[k] == later[k];
      INFO(ops[i].method << " " << ops[i].path << " shadows " << ops[j].path);
      CHECK_FALSE(covers);
    }
  }
}

TEST_CASE("operations: every operation has a handler, and every handler an operation") {
  std::vector<std::string_view> bound = Api::BoundOperations();
  for (const Operation& op : Operations()) {
    INFO(op.name);
    CHECK(std::count(bound.begin(), bound.end(), op.name) == 1);
  }
  for (std::string_view name : bound) {
    INFO(name);
    CHECK(FindOperation(name) != nullptr);
  }
  // The router is made from the table: a route per operation, in its order.
  Router router = Api::BindRoutes(nullptr, true);
  std::vector<std::string> want;
  for (const Operation& op : Operations()) want.push_back(op.method + " " + op.path);
  CHECK(router.Routes() == want);
  // Without the inspector, its routes are left out (and only they).
  for (const std::string& route : Api::BindRoutes(nullptr, false).Routes())
    CHECK(route.rfind("GET /ui", 0) != 0);
}

TEST_CASE("operations: the query parameters the router checks come from the table") {
  size_t n = 0;
  for (const Operation& op : Operations())
    for (const OpParam& p : op.params) n += p.in == ParamIn::kQuery;
  size_t m = 0;
  for (const RouteQueries& q : ApiQueries()) {
    const Operation* op = nullptr;
    for (const Operation& o : Operations())
      if (o.method == q.method && o.path == q.pattern) op = &o;
    REQUIRE(op != nullptr);
    m += q.params.size();
  }
  CHECK(n == m);
  // The GET routes' parameters, as issue 38 declared them.
  const RouteQueries* events = nullptr;
  for (const RouteQueries& q : ApiQueries())
    if (q.method == "GET" && q.pattern == "/v1/events") events = &q;
  REQUIRE(events != nullptr);
  std::vector<std::string> names;
  for (const QueryParam& p : events->params) names.emplace_back(p.name);
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"actor", "after", "id", "limit", "since", "type",
                                          "until", "wait"});
}

TEST_CASE("operations: the OpenAPI document lists every route the router answers") {
  const json& doc = OpenApiDocument();
  CHECK(doc["openapi"] == "3.1.0");
  for (const std::string& route : Api::BindRoutes(nullptr, true).Routes()) {
    const std::string method = Lower(route.substr(0, route.find(' ')));
    const std::string path = route.substr(route.find(' ') + 1);
    INFO(route);
    REQUIRE(doc["paths"].contains(path));
    REQUIRE(doc["paths"][path].contains(method));
    const json& o = doc["paths"][path][method];
    const Operation* op = FindOperation(o["operationId"].get<std::string>());
    REQUIRE(op != nullptr);
    CHECK(op->path == path);
    CHECK(o["responses"].contains("default"));
  }
  size_t n = 0;
  for (const auto& [path, methods] : doc["paths"].items()) n += methods.size();
  CHECK(n == Operations().size());
  // Every $ref names a component of the document.
  size_t refs = 0;
  std::function<void(const json&)> walk = [&](const json& v) {
    if (v.is_object() && v.contains("$ref")) {
      const std::string ref = v["$ref"];
      INFO(ref);
      REQUIRE(ref.rfind("#/components/schemas/", 0) == 0);
      CHECK(doc["components"]["schemas"].contains(ref.substr(21)));
      ++refs;
    }
    if (v.is_structured())
      for (const json& x : v) walk(x);
  };
  walk(doc);
  CHECK(refs > Operations().size());
  // The description needs no token; the Host rule still applies (http_policy).
  CHECK(doc["paths"]["/v1/openapi.json"]["get"]["security"] == json::array());
  CHECK(doc["paths"]["/v1/percepts"]["post"]["x-limbic-mcp"]["tool"] == "add_percept");
  CHECK(doc["paths"]["/v1/percepts"]["post"]["requestBody"]["content"]["application/json"]
           ["schema"]["required"] == json{"source", "type"});
}

TEST_CASE("operations: the command line forwards by name, a tool takes its parameters") {
  const Operation* assign = FindOperation("assign_percept");
  REQUIRE(assign != nullptr);
  CHECK(assign->cli);
  CHECK(OpTarget(*assign, {{"id", "p/1 x"}}) == "/v1/percepts/p%2F1%20x/assign");
  const McpTool* tool = FindMcpTool("assign_percept");
  REQUIRE(tool != nullptr);
  CHECK(tool->op == assign);
  CHECK(tool->input_schema["required"] == json{"id", "thread_id"});
  // A parameter the tool leaves out, and one it shows with its own bounds.
  const McpTool* events = FindMcpTool("events_since");
  REQUIRE(events != nullptr);
  CHECK_FALSE(events->input_schema["properties"].contains("actor"));
  CHECK(events->input_schema["properties"]["wait"]["maximum"] == 50);
  // Every write the command line forwards is an operation.
  for (const char* name : {"add_percept", "update_thread", "set_arousal", "enqueue_action",
                           "prune_actions", "consolidate", "archive_rollup", "archive_blink",
                           "remember_fact", "import_memory", "ingest", "promote"}) {
    INFO(name);
    REQUIRE(FindOperation(name) != nullptr);
    CHECK(FindOperation(name)->cli);
  }
}

}  // namespace limbic::runtime

namespace limbic::runtime {

// The tools are what models see: tests/runtime/mcp/data/tools.json is the
// table from before the operation table existed (issue 39); a change to a
// tool's name, description, schema, annotations, timeout or route shows
// here and is made on purpose, in both places.
TEST_CASE("operations: the MCP tools are exactly as recorded") {
  std::ifstream in(std::string(LIMBIC_SOURCE_DIR) + "/tests/runtime/mcp/data/tools.json");
  REQUIRE(in.good());
  json want = json::parse(in, nullptr, false);
  REQUIRE(want.is_array());
  std::map<std::string, json> by_name;
  for (const json& t : want) by_name[t["name"].get<std::string>()] = t;
  CHECK(by_name.size() == McpTools().size());
  for (const McpTool& t : McpTools()) {
    INFO(t.name);
    REQUIRE(by_name.count(t.name));
    const json& w = by_name[t.name];
    CHECK(t.description == w["description"]);
    CHECK(t.input_schema == w["inputSchema"]);
    CHECK(t.annotations == w["annotations"]);
    CHECK(t.method == w["method"]);
    CHECK(t.path == w["path"]);
    CHECK(t.timeout_ms == w["timeout_ms"]);
    CHECK(json(t.exactly_one_of) == w.value("exactly_one_of", json::array()));
  }
}

}  // namespace limbic::runtime
