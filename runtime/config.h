// The runtime's configuration: config/limbic.json, documented key by key in
// docs/config.md.
//
// `limbic run` without --config uses the default config compiled into the
// binary (config/limbic.json and config/reflexes.json at build time), so
// `make run` works with nothing else installed.
//
// Parsing is strict: every problem is reported with the JSON path of the key
// and why ("api.port: must be an integer in [0, 65535], got \"x\""), and
// unknown keys are errors too, since a typo would otherwise silently fall
// back to a default. Sensor and effector entries are kept as JSON here and
// validated by their own factories, which name their keys the same way.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "memory/store.h"
#include "runtime/replication/config.h"
#include "state/consolidate.h"
#include "state/dedup.h"
#include "state/event_log.h"
#include "state/recency.h"
#include "world/world.h"

namespace limbic::runtime {

struct OutboxConfig {
  int max_attempts = 5;
  TimeMs backoff = 1000;            // first retry delay
  TimeMs max_backoff = 5 * 60000;   // cap
  double jitter = 0.2;              // +-20%
  TimeMs retention = 24 * 3600000;  // complete/dead actions pruned after this
  TimeMs shutdown_grace = 5000;     // in-flight deliveries may finish within this on stop
};

// Consolidation into the archive and the archive's upkeep (docs/archive.md).
struct ArchiveConfig {
  TimeMs consolidate_every =
      3600000;  // 0 = only on demand (limbic consolidate, POST /v1/consolidate)
  state::ConsolidationPolicy policy;  // threads_after, percepts_after, actions_after
  bool rollup = true;                 // roll past days up at the day boundary
  size_t semantic_links = 5;
  size_t social_links = 5;
  // Not an archive.* key: memory.analyzer, which the archive's search
  // shares (ParseMemorySection copies it here).
  std::string analyzer = "english";
};

// Checkpoints of the pools (checkpoints.*; docs/operations.md,
// state/checkpoint.h): taken every `every` events or `interval` (when
// events came), kept by RetentionPolicy{keep, dense}.
struct CheckpointsConfig {
  bool enabled = true;
  uint64_t every = 50000;    // events between checkpoints; 0 = by interval only
  TimeMs interval = 3600000;  // at most this long between them, if events came; 0 = by count only
  size_t keep = 128;         // checkpoints kept in all
  size_t dense = 4;          // of them, the newest always kept
};

// How much of the HTTP API one client may hold, and who may reach it
// (api.*; docs/api.md, "Limits and exposure").
struct ApiLimitsConfig {
  TimeMs read_timeout = 30000;  // a request, from its first byte; an answer's write
  TimeMs idle_timeout = 60000;  // a connection waiting for a request
  size_t max_connections = 1024;
  size_t max_connections_per_client = 256;  // per remote address
  size_t max_sse_streams = 256;             // fewer than max_connections
  size_t max_sse_streams_per_client = 64;
  TimeMs sse_keepalive = 15000;              // a comment line on a quiet stream
  size_t sse_max_queued_bytes = 4 << 20;     // per stream; beyond it the client is dropped
  std::vector<std::string> allowed_hosts;    // Host names besides loopback and api.address
  std::vector<std::string> allowed_origins;  // Origins besides the API's own
};

// The mind (docs/mind.md, runtime/mind/mind.h): the agent's model, woken on
// attention within a thinking budget. Off unless mind.enabled.
struct MindBudgetConfig {
  uint64_t daily_tokens = 200000;  // model tokens (in + out) per UTC day; 0 = no limit
  TimeMs daily_time = 60 * 60000;  // daily_minutes: awake time per UTC day; 0 = no limit
  TimeMs max_session = 5 * 60000;  // one session's length
  int max_steps = 16;              // model calls (or exec steps) per session
  TimeMs min_interval = 2 * 60000;  // between autonomous wakes (an explicit wake may skip it)
  double pressure_at = 0.8;  // budget_pressure once either daily budget is used this far
};

struct MindConfig {
  bool enabled = false;
  std::string name = "main";  // the actor is "mind:<name>"
  std::string kind = "openai";  // openai | exec
  // openai: the chat-completions server (base/chat.h); api_key from the
  // environment variable api_key_env, never from the file.
  std::string url = "http://127.0.0.1:11434";  // Ollama's
  std::string model = "llama3.1";
  std::string api_key_env = "OPENAI_API_KEY";
  std::string api_key;  // read from api_key_env at parse time; never logged or shown
  TimeMs timeout = 60000;
  std::string system_prompt_file;  // "" = the built-in prompt (runtime/mind/mind_openai.cc)
  std::string system_prompt;       // the file's text, read at parse time
  // exec: argv of the program, run in `dir`: the config file's directory
  // (the state dir for the embedded config), so "mind.py" is the file beside it.
  std::vector<std::string> command;
  std::string dir;
  // The MCP tools offered to an openai mind, by name (runtime/mcp/tools.h).
  std::vector<std::string> tools = {
      "attention",      "context",         "get_percept",    "list_percepts",  "get_thread",
      "list_threads",   "create_thread",   "update_thread",  "assign_percept", "process_percept",
      "drop_percept",   "enqueue_action",  "list_actions",   "get_action",     "recall",
      "remember_fact",  "remember_episode", "why",           "get_arousal"};
  bool record_text = true;
  size_t max_text = 2000;        // bytes of the assistant's text kept per step
  size_t context_tokens = 4000;  // the prompt's context bundle (GET /v1/context's max_tokens)
  double wake_threshold = 0.7;   // wake.threshold
  double arousal_gain = 0.4;     // wake.arousal_gain
  bool focused_thread = true;    // wake.focused_thread
  MindBudgetConfig budget;
};

struct Config {
  std::string source;  // file path, or "<embedded default>"
  std::string state_dir = "./limbic-data";
  state::Durability durability = state::Durability::kFsync;
  int interval_ms = 100;
  uint64_t segment_bytes = 64ull << 20;

  std::string api_address = "127.0.0.1";
  uint16_t api_port = 7077;
  std::string api_token;  // required when api_address is not loopback
  bool ui = true;         // api.ui: serve the inspector at /ui/ (runtime/api/ui/)
  std::string ui_dir;     // api.ui_dir: serve its files from here, not the built-in copy
  // api.fork_root: where POST /v1/fork makes sandboxes ("" = "<state dir>-forks");
  // made absolute by Runtime::Open (runtime/sandbox.h, ResolveForkRoot).
  std::string fork_root;
  size_t body_limit = 1 << 20;
  // The most percepts one POST /v1/percepts/batch (MCP add_percepts) takes.
  size_t batch_limit = 1000;
  // How deeply JSON from outside may nest (base/input_json.h): HTTP bodies,
  // MCP lines, sensor lines, webhook bodies, the reflexes file.
  size_t max_json_depth = 128;
  ApiLimitsConfig api_limits;

  state::RecencyParams recency;
  double attention_threshold = 0.2;  // unassigned percepts at or above this effective intensity
  size_t attention_limit = 20;
  // A percept id supplied from outside stays taken this long after its
  // percept left the pool (state/dedup.h); 0 = only while in the pool.
  TimeMs percepts_dedup_window = state::kDefaultDedupWindow;

  OutboxConfig outbox;
  ArchiveConfig archive;
  CheckpointsConfig checkpoints;
  // Long-term memory (docs/memory.md): the embedder, decay, recall weights.
  // embedder.api_key may also come from the environment variable named by
  // memory.embedder.api_key_env; EMBEDDING_MODEL overrides the model.
  memory::MemoryOptions memory;
  // The world model (docs/world.md): extractor, surprise, MEMORY.md, entity
  // decay; world.llm.api_key may come from world.llm.api_key_env.
  world::WorldOptions world;

  // Reflex rules: {"reflexes": [...]}, loaded from `reflexes_file` (relative
  // to the config file) or, for the embedded config, the embedded rules.
  std::string reflexes_file;
  nlohmann::json reflexes = nlohmann::json::object();

  ReplicationConfig replication;
  MindConfig mind;

  nlohmann::json sensors = nlohmann::json::object();    // name -> {kind, ...}
  nlohmann::json effectors = nlohmann::json::object();  // name -> {kind, ...}
};

// Parses a config document. `base_dir` resolves relative paths (the config
// file's directory). Every error names the JSON path; all of them are
// reported at once ("3 problems:\n  api.port: ...").
Result<Config> ParseConfig(const nlohmann::json& doc, const std::string& base_dir);
// Replaces "${CONFIG_DIR}" in every string of `doc` (values, not keys)
// with `dir`: a config names files beside it (an adapter's script) wherever
// it is checked out. The path has no trailing '/'.
void ExpandConfigDir(const std::string& dir, nlohmann::json* doc);
// Reads and parses a config file (its strings' ${CONFIG_DIR} expanded to the
// file's directory, absolute), and its reflexes file.
Result<Config> LoadConfigFile(const std::string& path);
// The config compiled into the binary (config/limbic.json + config/reflexes.json).
Result<Config> DefaultConfig();
// One InvalidArgument listing `errors` (OK when empty).
Status ConfigErrors(const std::vector<std::string>& errors);

// <state>/effectors.json: the effectors of the last `limbic run` on the
// state dir, {name: {kind, require_approval?}} (no other keys: an effector's
// config may hold secrets), written at its start. So the command line,
// offline, checks an action as that runtime will (effectors::PrepareEnqueued).
std::string EffectorsFilePath(const std::string& state_dir);
nlohmann::json EffectorsSummary(const nlohmann::json& effectors);
// The effectors remembered there, else the built-in config's; Corruption
// naming the file when it is not such an object.
Result<nlohmann::json> RememberedEffectors(const std::string& state_dir);

}  // namespace limbic::runtime
