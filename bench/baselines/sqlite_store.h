// The SQLite baseline: the seed document's second design ("Alternative:
// SQLite ... migrate to SQLite if needed"), written as a competent engineer
// would write it, for the benchmark to compare with limbic.
//
// One database file, <dir>/limbic.sqlite, in WAL mode; one table per pool,
// the indexes its queries need, and an events table (schema in sqlite_db.h).
// Every command is one transaction (BEGIN IMMEDIATE ... COMMIT) that changes
// the pool rows and inserts the command's event row; it is acknowledged
// (`ack` runs, before the call returns) after COMMIT. With `full`
// (synchronous=FULL) COMMIT fsyncs the WAL, so an acknowledged write
// survives power loss, as limbic's fdatasync does; with NORMAL it survives a
// crash of the process only (the WAL is synced at checkpoints).
//
// Where the Store contract (bench/store.h) leaves room:
//   - ids are "<p|t|a>-<seq of the creating event>", one counter that
//     continues from MAX(events.seq) after a reopen;
//   - timestamps are wall-clock ms; reads compute recency at the wall clock;
//   - UpdateThreadState's merge patch runs inside SQLite (json_patch), one
//     UPDATE statement rather than read, patch in C++, write;
//   - CompleteAction records one event (action_complete, attempt 1);
//   - reads return the records as the rows hold them: ts, created_at and
//     last_active are integer ms, a NULL text or thread_id is null, and
//     `data` / `state` are their JSON text columns parsed. A thread record
//     has no percepts[] (its percepts are the rows with its thread_id); a
//     TopActiveThreads record adds "unprocessed" and "effective_salience";
//   - TopActiveThreads ranks every active thread from one query of (id,
//     salience, last_active, unprocessed count) and reads the whole row of
//     the top `limit` only, one primary-key lookup each;
//   - failed commands (unknown id, wrong status) roll back and return a
//     Status naming the id; nothing is acknowledged.
//
// Thread-safety: one thread drives a store (as Store requires).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "bench/store.h"
#include "base/status.h"

namespace limbic::bench {

struct SqliteStoreOptions {
  std::string dir;   // holds limbic.sqlite (and its -wal, -shm files)
  bool full = true;  // synchronous=FULL, else NORMAL
};

// Opens (creating if missing) <dir>/limbic.sqlite in WAL mode with the given
// synchronous level, creating the schema if needed, and runs one cheap query
// (MAX(seq) of events, which the id counter needs) so the open is real. This
// call is what the benchmark times as the SQLite design's "recovery": WAL
// recovery happens here. (A cleanly closed store leaves no WAL to recover;
// only a killed process does.)
Result<std::unique_ptr<Store>> OpenSqliteStore(const SqliteStoreOptions& options);

// Rebuilds a fresh database in `options.dir` (must be empty or missing) from
// a limbic events log (one JSON event per line, docs/events.md): parses each
// line with nlohmann::json and applies it with the store's prepared
// statements, in transactions of 10,000 events. Applies percept_arrived,
// percept_assigned, percept_processed, thread_created, thread_updated,
// arousal_set, action_enqueued, action_sent, action_complete; any other type
// is skipped (counted in `*skipped` when given). Every line, skipped or not,
// gets its events row, so the events table holds the whole log.
//
// Returns the number of events applied. A line that is not JSON, lacks a
// field, or names a missing record fails the replay with its line number;
// the transaction in progress is rolled back (earlier batches stay).
Result<uint64_t> ReplaySqliteStore(const std::string& log_file, const SqliteStoreOptions& options,
                                   uint64_t* skipped = nullptr);

}  // namespace limbic::bench
