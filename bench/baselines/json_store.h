// The JSON-files baseline: the storage design a user would write instead of
// limbic (docs seed "Storage Architecture"), behind the benchmark's Store
// interface (bench/store.h).
//
// All state lives in memory; every mutation updates memory, appends its
// event to events.jsonl (and, for an action, the action's change to
// outbox.jsonl), then rewrites each affected pool file whole: write a temp
// file, rename it over the old one. With `fsync` every step is made durable
// before the write is acknowledged (temp file synced before the rename, the
// directory after it, the .jsonl files after appending); without it nothing
// is synced.
//
// Files in `dir` (compact JSON, one document per file; ts are RFC 3339 UTC
// with milliseconds, as state::FormatTime writes them):
//
//   percepts.json  := {"percepts":[PERCEPT*]}          arrival order
//   threads.json   := {"threads":[THREAD*]}            creation order
//   arousal.json   := {"level":L,"factors":{...},"updated_at":TS|null}
//   events.jsonl   := (EVENT '\n')*   EVENT = {"ts","type",fields...} with the
//                     type names and field names of docs/events.md (no v/seq),
//                     so ReplayJsonStore can rebuild a dir from it
//   outbox.jsonl   := (ACTION | CHANGE) '\n' ...  an ACTION line when an action
//                     is enqueued, then {"id","status","attempts","updated_at"}
//                     per change; folded by id (a later line's keys win)
//
//   PERCEPT := {id, source, type, intensity, ts, thread_id|null, status, text, data}
//   THREAD  := {id, goal, status, salience, percepts[], state{phase, context,
//               next_step}, created_at, last_active}
//   ACTION  := {id, effector, type, payload, status, attempts, thread_id|null,
//               ts, updated_at}
//
// Ids are "p-N", "t-N", "a-N" from one counter; a store continues after the
// highest N it loaded (a write that fails may leave a gap).
//
// Known limits of the design, kept on purpose (they are what is measured):
// every write rewrites whole files (cost grows with the pool); a crash
// between the events append and a rename leaves events.jsonl ahead of the
// pool files and nothing reconciles them; an I/O error leaves memory ahead
// of the files (reopen the store); one process per dir, not enforced.
// Recovery trims a torn final line of events.jsonl and outbox.jsonl.
//
// Reads scan memory and return copies of the records found (PERCEPT and
// THREAD above, ts as RFC 3339 strings); a TopActiveThreads record adds
// "effective_salience". "Newest first" is latest arrival first; a `limit` of
// 0 means no limit; an unknown thread has no percepts.
//
// Thread-safety: one thread drives a store (as bench/store.h says).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "bench/store.h"
#include "base/status.h"

namespace limbic::bench {

struct JsonStoreOptions {
  std::string dir;
  bool fsync = true;
};

// Opens (creating if missing) the store in `options.dir`, loading
// percepts.json, threads.json, arousal.json and the outbox (outbox.jsonl
// folded: later lines for an id update it) into memory. This call is what
// the benchmark times as the JSON design's "recovery". A file that is not
// what the grammar above says is Corruption naming the file (and line).
Result<std::unique_ptr<Store>> OpenJsonStore(const JsonStoreOptions& options);

// Rebuilds `options.dir` (must be empty or missing) from an events log (one
// JSON event per line, encoding in docs/events.md; v and seq are not needed):
// parses each line with nlohmann::json, applies it in memory, then writes
// every file once at the end (synced when options.fsync); events.jsonl
// receives the log's lines as they are. Handles percept_arrived,
// percept_assigned, percept_processed, thread_created, thread_updated,
// arousal_set, action_enqueued, action_sent and action_complete; other types
// are skipped and counted in `*skipped` (when given). A torn final line is
// ignored. Returns the number of events applied; a line that is not JSON or
// that cannot be applied is Corruption naming the line, and then no pool
// file has been written.
Result<uint64_t> ReplayJsonStore(const std::string& log_file, const JsonStoreOptions& options,
                                 uint64_t* skipped = nullptr);

}  // namespace limbic::bench
