// Internal to runtime/cli/pools.cc and cli_outbox.cc: what the pool
// commands share -- writes made here or sent to a running runtime
// (WithWriter), reads (WithReader, ShowRecord), flag helpers and columns.
#pragma once

#include <optional>
#include <string>

#include "base/input_json.h"
#include "base/json.h"
#include "runtime/cli/cli.h"
#include "runtime/mcp/tools.h"
#include "state/commands.h"

namespace limbic::runtime::pools {

using nlohmann::json;
using state::Engine;

inline std::string Short(std::string s, size_t n) {
  for (char& c : s)
    if (c == '\n' || c == '\t') c = ' ';
  return s.size() <= n ? s : s.substr(0, n - 1) + "~";
}

inline std::string Age(TimeMs ms) {
  char buf[32];
  if (ms < 60000)
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(ms / 1000));
  else if (ms < 3600000)
    std::snprintf(buf, sizeof buf, "%lldm", static_cast<long long>(ms / 60000));
  else if (ms < 86400000)
    std::snprintf(buf, sizeof buf, "%lldh", static_cast<long long>(ms / 3600000));
  else
    std::snprintf(buf, sizeof buf, "%lldd", static_cast<long long>(ms / 86400000));
  return buf;
}

inline std::string Str(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// Runs `body` with an engine opened for writing; returns the exit code.
// The API operation (runtime/api/operations.h) that makes the same write
// through a running runtime's API: its name ("" = none), path parameters
// and body.
struct Forward {
  std::string op;
  json path = json::object();
  json body = json::object();
};

// Runs `body` on the state dir, or, while a running `limbic run` holds it,
// sends `forward` to that runtime (ForwardWrite).
template <typename F>
inline int WithWriter(const CliContext& ctx, const Forward& forward, F body) {
  auto engine = ctx.OpenForWrite();
  if (engine.ok()) return body(**engine);
  if (!engine.status().IsBusy() || forward.op.empty()) return Fail(engine.status());
  return ForwardWrite(ctx, forward.op, forward.body, engine.status(), forward.path);
}

template <typename F>
inline int WithReader(const CliContext& ctx, F body) {
  auto engine = ctx.OpenForRead();
  if (!engine.ok()) return Fail(engine.status());
  auto now = ctx.Now();
  if (!now.ok()) return Fail(now.status());
  return body(**engine, *now);
}

// `show ID`: one record of `pool` as the API's GET /v1/<pool>/{id} answers
// it (`with_recency` adds the computed fields), JSON or key: value lines.
template <typename F>
inline int ShowRecord(const CliContext& ctx, state::Pool pool, const char* what,
                      const std::string& id, F with_recency) {
  return WithReader(ctx, [&](Engine& e, TimeMs now) {
    auto rec = e.projection().Get(pool, id);
    if (!rec.ok()) return Fail(rec.status());
    if (!rec->has_value())
      return Fail(Status::NotFound(std::string(what) + " " + id + " not found"));
    auto out = with_recency(e, **rec, now);
    if (!out.ok()) return Fail(out.status());
    if (ctx.json)
      PrintJson(*out);
    else
      PrintFields(*out);
    return 0;
  });
}

// A JSON object from a flag, or an empty object.
inline Result<json> ObjectFlag(const std::string& text, const char* flag) {
  if (text.empty()) return json::object();
  return state::ParseJsonObject(text, flag);
}

// --intensity/--salience/--level: kept as numbers so the request
// validation (not the flag parser) reports a range error.
inline void PutIf(json& req, const char* key, const std::optional<double>& v) {
  if (v) req[key] = *v;
}
inline void PutIf(json& req, const char* key, const std::string& v) {
  if (!v.empty()) req[key] = v;
}

// The commands of cli_outbox.cc.
void AddArousal(CLI::App& app, CliContext& ctx, int& rc);
void AddAction(CLI::App& app, CliContext& ctx, int& rc);
void AddAttention(CLI::App& app, CliContext& ctx, int& rc);

}  // namespace limbic::runtime::pools
