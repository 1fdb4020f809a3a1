// The OpenAPI 3.1 document of limbic's HTTP API, made from the operation
// table (runtime/api/operations.h): every route the router answers is one
// operation, so the document lists them all, with their parameters, bodies
// and answers as JSON Schema (2020-12, as OpenAPI 3.1 has it). The MCP
// tool of an operation is named in `x-limbic-mcp`, the command line's
// forwarding in `x-limbic-cli`.
//
// Served at GET /v1/openapi.json (no token needed; the Host and Origin
// rules apply), printed by `limbic openapi`, and kept as docs/openapi.json;
// a test fails when the file and the binary differ.
//
// Thread-safety: the document is made once, on first use, and immutable.
#pragma once

#include <nlohmann/json.hpp>

namespace limbic::runtime {

//! The document (the same object on every call).
const nlohmann::json& OpenApiDocument();

}  // namespace limbic::runtime
