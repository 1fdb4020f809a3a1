// The `limbic` command line.
//
// Every command operates on a state dir: --state DIR, else $LIMBIC_STATE,
// else ./limbic-data. Write commands take the state dir's lock and fail with
// a clear message while another process (e.g. `limbic run`) holds it; read
// commands then open it read-only. Every read command takes --json.
//
// Exit codes: 0 success; 1 the command failed (the message says why, e.g. a
// validation error, an unknown id, a verify mismatch, fsck problems); 2 the
// command line itself is wrong.
#pragma once

#include <spdlog/logger.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "state/engine.h"
#include "state/replay.h"
#include "state/recency.h"

namespace limbic::runtime {

int RunCli(int argc, char** argv);

// How a write opens the state beyond the default: `fsck
// --accept-changed-segments` accepts changed segments and wants the
// recovery's report.
struct WriteOpen {
  bool accept_changed_segments = false;
  state::EngineRecovery* recovery = nullptr;
};

// What every command gets: the global options, parsed.
struct CliContext {
  std::string state_dir;
  bool json = false;
  std::optional<std::string> now_text;  // --now TIME: evaluate recency at TIME
  state::RecencyParams recency;
  std::shared_ptr<spdlog::logger> logger;  // to stderr

  // --now or the wall clock.
  Result<TimeMs> Now() const;
  // Every write command opens the state here: takes the lock; Busy
  // (naming the holder's pid) while another process runs. On a hot
  // standby's state dir (standby.json) FailedPrecondition, naming the file
  // and what to do: its log takes only its stream's events
  // (RefuseStandbyWrites, runtime/replication/follower.h).
  Result<std::unique_ptr<state::Engine>> OpenForWrite(const WriteOpen& how = {}) const;
  // Takes the lock without that refusal, for what a standby's log may
  // take: recovery's repairs (OpenForRead) and the events of its stream
  // (an offline `limbic promote`).
  Result<std::unique_ptr<state::Engine>> OpenLocked(const WriteOpen& how = {}) const;
  // How a read opens the state.
  //   kAsIs     read-only, without the lock: nothing written, no recovery
  //             (the pools, memory); the lock only when the projections lag
  //             the log or that fails.
  //   kCatchUp  with the lock when no process holds it, so what is derived
  //             from the state on open (the archive's staging and search
  //             index) is brought up to date first; else read-only.
  // NotFound when there is no state yet.
  enum class ReadMode { kAsIs, kCatchUp };
  Result<std::unique_ptr<state::Engine>> OpenForRead(ReadMode mode = ReadMode::kAsIs) const;
};

// Prints "limbic: error: <message>" to stderr and returns 1.
int Fail(const Status& status);
// Prints "limbic: warning: <line>" to stderr for each.
void Warn(const std::vector<std::string>& lines);
// The check of a seq option (--at-seq, --until-seq): decimal digits making
// 1 .. 2^64-1; anything else ("", "-1", "0x10", "0", too large) is refused
// naming the option.
const CLI::Validator& SeqOption();
// The state dir as it was right after `seq` (state::TimeTravel), the
// checkpoints skipped on the way warned of on stderr.
Result<std::unique_ptr<state::TimeTravel>> OpenPast(const CliContext& ctx, uint64_t seq,
                                                    bool digest = false);
// Prints "limbic: error: <message>" for a command line that is wrong; returns 2.
int UsageError(const std::string& message);
// Prints the JSON value (one line) to stdout.
void PrintJson(const nlohmann::json& value);
// The text form of an answer that has no form of its own: an object's
// members one per line, "key:  value", keys aligned, strings as they are
// and other values as compact JSON; anything else as compact JSON.
void PrintFields(const nlohmann::json& value);
// Commits `events` as the command line (runtime/submit.h: attributed to
// "cli", waiting until durable and applied) and prints what happened: the
// created id and seqs, or JSON {"id", "seq", "events"} with --json.
// `id_field` names the record id in the first event (e.g. "percept_id");
// empty prints only seqs. `effectors`: what an enqueued action is checked
// against (RememberedEffectors); null for a write that enqueues none.
// `committed`, when not null, receives the events as committed.
int CommitAndReport(const CliContext& ctx, state::Engine& engine,
                    Result<std::vector<state::Event>> events, std::string_view id_field,
                    const nlohmann::json* effectors = nullptr,
                    std::vector<state::Event>* committed = nullptr);
// A write the command line cannot make itself because a running `limbic
// run` holds the state dir (`busy`, OpenForWrite's answer): sends it as
// it as the API operation `op` (runtime/api/operations.h, one the command line
// forwards) with `body` and the path parameters `path` ({"id": ...}) to
// that runtime's HTTP API, found through the state dir's api.json as
// `limbic mcp` finds it (with $LIMBIC_API_TOKEN when the API wants a
// token), and prints the receipt as CommitAndReport does. When no API can
// be found, fails with `busy`'s message.
int ForwardWrite(const CliContext& ctx, std::string_view op, const nlohmann::json& body,
                 const Status& busy, const nlohmann::json& path = nlohmann::json::object());
// The same request, for a caller that prints the answer itself: the
// answer's JSON object, or the API's error (naming the runtime).
Result<nlohmann::json> ForwardRequest(const CliContext& ctx, std::string_view op,
                                      const nlohmann::json& body, const Status& busy,
                                      int timeout_ms = 30000,
                                      const nlohmann::json& path = nlohmann::json::object());
// `limbic memory ingest PATH` while a running `limbic run` holds the state
// dir (`busy`): the files are listed and read here, as a local ingest reads
// them (any path, options.ingest_max_bytes per file), and their content is
// sent to POST /v1/memory/ingest in requests that fit the runtime's
// api.body_limit; a file too big for one request is kept where the runtime
// keeps originals (<state>/memory/raw/) and sent by its SHA-256. The answer
// is a local ingest's: files, skipped and errors by their local paths,
// seq and events_written (cli_ingest.cc).
Result<nlohmann::json> IngestThroughApi(const CliContext& ctx, const std::string& path,
                                        const std::string& episode_id, uint64_t max_bytes,
                                        const Status& busy);

// The CLI11 callback of a command whose action is the named function
// `action`: on the parsed flags it runs `rc = action(ctx, *args)`. Each
// command group keeps its flags in a small struct shared by its table and
// its actions; `ctx` and `rc` must outlive the app.
template <typename Args>
std::function<void()> Action(const CliContext& ctx, int& rc, std::shared_ptr<Args> args,
                             int (*action)(const CliContext&, const Args&)) {
  return [&ctx, &rc, args = std::move(args), action] { rc = action(ctx, *args); };
}


// Subcommand groups, one file each.
void AddPoolCommands(CLI::App& app, CliContext& ctx, int& rc);  // percept, thread, arousal, action
void AddLogCommands(CLI::App& app, CliContext& ctx, int& rc);   // events, replay, fsck, why
void AddArchiveCommands(CLI::App& app, CliContext& ctx, int& rc);  // consolidate, archive
void AddReplicationCommands(CLI::App& app, CliContext& ctx, int& rc);  // follow, promote
void AddMindCommands(CLI::App& app, CliContext& ctx, int& rc);  // mind

// `replay --from nats://...`: writes every event of `agent` in `stream` (from
// seq 1, which the stream must hold) to the .jsonl file `path`, one line
// each, exactly as the primary's log holds them. Returns the last seq.
Result<uint64_t> DownloadStream(const std::string& url, const std::string& stream,
                                const std::string& agent, const std::string& path);
void AddMemoryCommands(CLI::App& app, CliContext& ctx, int& rc);   // memory
void AddTimeTravelCommands(CLI::App& app, CliContext& ctx, int& rc);  // state, fork
// memory extract, graph, entities, surprise, consolidate; `config` and
// `quiet` are the memory command's --config and --quiet.
void AddWorldCommands(CLI::App* memory, CliContext& ctx, int& rc, const std::string* config, const bool* quiet);

}  // namespace limbic::runtime
