#include "runtime/cli/cli.h"

#include "runtime/mind/mind.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "base/json.h"
#include "runtime/config.h"
#include "runtime/replication/follower.h"
#include "runtime/mcp/server.h"
#include "runtime/mcp/api_client.h"
#include "runtime/mcp/tools.h"
#include "runtime/api/api.h"
#include "runtime/api/openapi.h"
#include "runtime/api/operations.h"
#include "runtime/runtime.h"
#include "runtime/submit.h"

namespace limbic::runtime {

using state::Engine;
using state::EngineOptions;

Result<TimeMs> CliContext::Now() const {
  if (!now_text) return SystemClock::Default()->Now();
  auto t = ParseTime(*now_text);
  if (!t.ok()) return t.status().WithContext("--now");
  return *t;
}

Result<std::unique_ptr<Engine>> CliContext::OpenForWrite(const WriteOpen& how) const {
  LIMBIC_RETURN_IF_ERROR(RefuseStandbyWrites(state_dir));
  return OpenLocked(how);
}

Result<std::unique_ptr<Engine>> CliContext::OpenLocked(const WriteOpen& how) const {
  EngineOptions options;
  options.state_dir = state_dir;
  options.logger = logger;
  options.short_lived = true;
  options.accept_changed_segments = how.accept_changed_segments;
  auto engine = Engine::Open(options, how.recovery);
  if (!engine.ok() && engine.status().IsBusy())
    return Status::Busy(engine.status().message() +
                        (how.accept_changed_segments
                             ? "; stop it first (the API has no way to accept changed segments)"
                             : "; write through its HTTP API, or stop it first"));
  return engine;
}

// A read (kAsIs) opens the state without the lock and RocksDB read-only:
// nothing is written and nothing recovered, so it costs no fsync and runs
// beside `limbic run`. When the projections lag the log (a crash before
// they caught up), or the read-only open fails (a torn log tail,
// projections of an older layout), and no process holds the state dir, the
// state is opened for writing instead, which repairs it first. When one
// does hold it, that process repaired it at its start: the read takes the
// projections as they are.
Result<std::unique_ptr<Engine>> CliContext::OpenForRead(ReadMode mode) const {
  std::error_code ec;
  if (!std::filesystem::exists(state_dir, ec))
    return Status::NotFound("no limbic state in " + state_dir +
                            " (use --state DIR or LIMBIC_STATE)");
  EngineOptions options;
  options.state_dir = state_dir;
  options.logger = logger;
  options.read_only = true;
  Result<std::unique_ptr<Engine>> reader = Status::Unavailable("not opened");
  if (mode == ReadMode::kAsIs) {
    reader = Engine::Open(options);
    if (reader.ok() && (*reader)->applied_seq() + 1 >= (*reader)->next_seq()) return reader;
  }
  auto writer = OpenLocked();
  if (writer.ok() || !writer.status().IsBusy()) return writer;
  return reader.ok() ? std::move(reader) : Engine::Open(options);
}

int Fail(const Status& status) {
  std::fprintf(stderr, "limbic: error: %s\n", status.message().c_str());
  return 1;
}

void Warn(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) std::fprintf(stderr, "limbic: warning: %s\n", line.c_str());
}

const CLI::Validator& SeqOption() {
  static const CLI::Validator kSeq(
      [](std::string& text) -> std::string {
        uint64_t seq = 0;
        const bool digits = !text.empty() && text.size() <= 20 &&
                            std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
        auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), seq);
        if (!digits || ec != std::errc() || ptr != text.data() + text.size())
          return "must be a seq: a whole number from 1 to 18446744073709551615, got \"" + text + "\"";
        if (seq == 0) return "must be a seq, 1 or more (the first event's), got 0";
        return std::string();
      },
      "SEQ");
  return kSeq;
}

Result<std::unique_ptr<state::TimeTravel>> OpenPast(const CliContext& ctx, uint64_t seq, bool digest) {
  auto past = state::TimeTravel::Open(ctx.state_dir, seq, nullptr, digest);
  if (past.ok()) Warn((*past)->replay().warnings);
  return past;
}

int UsageError(const std::string& message) {
  std::fprintf(stderr, "limbic: error: %s\n", message.c_str());
  return 2;
}

void PrintJson(const nlohmann::json& value) {
  std::cout << CompactJson(value) << "\n";
}

void PrintFields(const nlohmann::json& value) {
  if (!value.is_object()) return PrintJson(value);
  size_t width = 0;
  for (const auto& [key, v] : value.items()) width = std::max(width, key.size());
  for (const auto& [key, v] : value.items())
    std::cout << key << ":" << std::string(width - key.size() + 2, ' ')
              << (v.is_string() ? v.get<std::string>() : CompactJson(v)) << "\n";
}

namespace {
// Prints a commit's receipt ({seq, events: [...], id?}) as CommitAndReport does.
void PrintReceipt(const CliContext& ctx, const nlohmann::json& receipt) {
  if (ctx.json) return PrintJson(receipt);
  if (receipt.contains("id") && receipt["id"].is_string())
    std::cout << receipt["id"].get<std::string>() << "  ";
  const nlohmann::json& events =
      receipt.contains("events") ? receipt["events"] : nlohmann::json::array();
  if (events.empty()) std::cout << "nothing to do";
  for (size_t i = 0; i < events.size(); ++i)
    std::cout << (i ? ", " : "") << "seq " << events[i].value("seq", uint64_t{0}) << " "
              << events[i].value("type", std::string("?"));
  std::cout << "\n";
}
}  // namespace

Result<nlohmann::json> ForwardRequest(const CliContext& ctx, std::string_view op_name,
                                      const nlohmann::json& body, const Status& busy,
                                      int timeout_ms, const nlohmann::json& path) {
  const Operation* op = FindOperation(op_name);
  if (!op || !op->cli)
    return Status::Internal("no operation the command line forwards is named \"" +
                            std::string(op_name) + "\"");
  auto url = FindRunningApi(ctx.state_dir, 0);
  // Nobody holds it any more, or a process that serves no API: the lock's message.
  if (!url.ok()) return url.status().IsNotFound() || url.status().IsBusy() ? busy : url.status();
  const char* token = std::getenv("LIMBIC_API_TOKEN");
  auto client = MakeHttpApiClient(*url, token ? token : "");
  // Compact JSON never throws (a file name that is not UTF-8 is replaced).
  ApiRequest request{op->method, OpTarget(*op, path),
                     body.is_null() ? std::string() : CompactJson(body), timeout_ms, "cli"};
  auto answer = client->Call(request);
  if (!answer.ok())
    return answer.status().WithContext("sending the write to the running limbic at " + *url);
  nlohmann::json reply = nlohmann::json::parse(answer->second, nullptr, false);
  if (answer->first >= 300) {
    std::string message =
        reply.is_object() && reply["error"].is_object() && reply["error"]["message"].is_string()
            ? reply["error"]["message"].get<std::string>()
            : "HTTP " + std::to_string(answer->first) + ": " + answer->second.substr(0, 200);
    return Status::FailedPrecondition(message + " (from the running limbic at " + *url + ")");
  }
  if (!reply.is_object())
    return Status::Internal("the running limbic at " + *url + " answered no JSON object");
  return reply;
}

int ForwardWrite(const CliContext& ctx, std::string_view op, const nlohmann::json& body,
                 const Status& busy, const nlohmann::json& path) {
  auto reply = ForwardRequest(ctx, op, body, busy, 30000, path);
  if (!reply.ok()) return Fail(reply.status());
  PrintReceipt(ctx, *reply);
  return 0;
}

int CommitAndReport(const CliContext& ctx, Engine& engine, Result<std::vector<state::Event>> events,
                    std::string_view id_field, const nlohmann::json* effectors,
                    std::vector<state::Event>* committed) {
  nlohmann::json out = {{"events", nlohmann::json::array()}};
  Status s = SubmitCommand(engine, std::move(events), {"cli", effectors, /*wait=*/true},
                           [&](const Status&, std::span<const state::Event> done) {
                             if (done.empty()) return;
                             std::string id = id_field.empty() ? "" : done.front().Str(id_field);
                             out["seq"] = done.front().seq;
                             if (!id.empty()) out["id"] = id;
                             for (const auto& e : done)
                               out["events"].push_back(state::EventToJson(e));
                             if (committed) committed->assign(done.begin(), done.end());
                           });
  if (!s.ok()) return Fail(s);
  PrintReceipt(ctx, out);
  return 0;
}

// `limbic run`'s own flags.
struct RunFlags {
  std::string config_path;
  std::optional<uint16_t> port;
  bool sync_rules = false;
};

// `limbic run`: the config file (or the embedded default), with --state or
// $LIMBIC_STATE overriding its state_dir and --port its api.port.
int RunRuntime(CliContext& ctx, const RunFlags& flags, bool state_given) {
  auto config = flags.config_path.empty() ? DefaultConfig() : LoadConfigFile(flags.config_path);
  if (!config.ok()) return Fail(config.status());
  if (state_given) config->state_dir = ctx.state_dir;
  if (flags.port) config->api_port = *flags.port;
  ctx.logger->set_level(spdlog::level::info);
  Runtime runtime(std::move(config).value(), ctx.logger, MakeApi);
  runtime.set_sync_rules(flags.sync_rules);
  runtime.set_mind(MakeMind, Mind::CheckConfig);
  return runtime.Run();
}

int RunCli(int argc, char** argv) {
  // A reader that goes away (`limbic state show ... | head -1`) makes
  // writes fail, not the process die: it ends as usual, removing what it
  // made (a time travel's scratch dir).
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"limbic: an event-sourced cognitive state runtime for AI agents"};
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the subcommand
  app.set_version_flag("--version", std::string("limbic ") + LIMBIC_VERSION);

  CliContext ctx;
  const char* env_state = std::getenv("LIMBIC_STATE");
  ctx.state_dir = env_state && *env_state ? env_state : "./limbic-data";
  app.add_option("--state", ctx.state_dir, "state dir (default $LIMBIC_STATE or ./limbic-data)")
      ->capture_default_str();
  app.add_flag("--json", ctx.json, "print JSON instead of text");
  app.add_option("--now", ctx.now_text, "evaluate recency at this RFC 3339 time instead of now");

  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  ctx.logger = std::make_shared<spdlog::logger>("limbic", sink);
  ctx.logger->set_level(spdlog::level::warn);

  int rc = 0;
  RunFlags run_flags;
  auto* run = app.add_subcommand("run", "run the agent's core loop: sensors, reflexes, outbox, HTTP API");
  run->add_option("--config", run_flags.config_path,
                  "config file (default: the config built into limbic)");
  // Also here, so `run --help` shows it (the global --state is the same).
  auto* run_state = run->add_option("--state", ctx.state_dir,
                                    "state dir (default: the config's state_dir; $LIMBIC_STATE)");
  run->add_option("--port", run_flags.port,
                  "serve the API on this port (the config's api.port; 0: any free port)");
  run->add_flag("--sync-rules", run_flags.sync_rules,
                "on a sandbox (limbic fork), sync the reflexes file into the rules as usual");
  run->callback([&] {
    bool state_given = app.get_option("--state")->count() > 0 || run_state->count() > 0 ||
                       (env_state && *env_state);
    rc = RunRuntime(ctx, run_flags, state_given);
  });
  McpOptions mcp_options;
  auto* mcp = app.add_subcommand("mcp", "serve the Model Context Protocol on stdin/stdout (docs/mcp.md)");
  mcp->add_option("--config", mcp_options.config_path,
                  "config of the runtime to run in-process (default: the built-in one)");
  mcp->add_option("--url", mcp_options.url, "use the runtime API at this base URL");
  mcp->callback([&] {
    bool state_given = app.get_option("--state")->count() > 0 || (env_state && *env_state);
    if (state_given) mcp_options.state_dir = ctx.state_dir;
    ctx.logger->set_level(spdlog::level::info);
    Result<int> served = RunMcp(mcp_options, std::cin, std::cout, ctx.logger);
    rc = served.ok() ? *served : Fail(served.status());
  });
  // The API's description (runtime/api/openapi.h); `make openapi` keeps
  // docs/openapi.json as this prints it.
  app.add_subcommand("openapi", "print the HTTP API's OpenAPI 3.1 document (docs/openapi.json)")
      ->callback([&] {
        std::cout << OpenApiDocument().dump(2) << "\n";
        rc = 0;
      });
  AddPoolCommands(app, ctx, rc);
  AddLogCommands(app, ctx, rc);
  AddArchiveCommands(app, ctx, rc);
  AddReplicationCommands(app, ctx, rc);
  AddMemoryCommands(app, ctx, rc);
  AddTimeTravelCommands(app, ctx, rc);
  AddMindCommands(app, ctx, rc);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return rc;
}

}  // namespace limbic::runtime
