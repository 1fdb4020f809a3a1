// The SQLite baseline's database: one connection to <dir>/limbic.sqlite, its
// schema, and the state transitions, each one prepared statement (or a few)
// prepared once at open and reused. Both the live store (sqlite_store.cc) and
// ReplaySqliteStore apply changes through this class, so they write the same
// rows; callers own the transaction (Begin/Commit/Rollback).
//
// Schema (created if missing; times are wall-clock ms, JSON columns are text):
//
//   percepts(id TEXT PK, source, type, intensity REAL, ts, thread_id, status,
//            text, data JSON)                    a thread's percepts = by thread_id
//     percepts_by_source   (source, ts)                          PerceptsBySourceSince
//     percepts_new         (source, ts) WHERE status = 'new'     UnassignedBySource
//     percepts_by_thread   (thread_id, ts) WHERE thread_id NOT NULL   PerceptsByThread
//     percepts_assigned    (thread_id) WHERE status = 'assigned' unprocessed counts
//   threads(id TEXT PK, goal, status, salience REAL, state JSON, created_at, last_active)
//     threads_by_status    (status)                              TopActiveThreads
//   arousal(id = 1, level REAL, factors JSON, updated_at)        no row until first set
//   outbox(id TEXT PK, effector, type, payload JSON, status, attempts,
//          idempotency_key, thread_id, ts, updated_at, last_error)
//     outbox_by_status     (status, ts)                          an effector's drain
//   events(seq INTEGER PK, ts, type, body JSON)                  one row per event
//
// Every newest-first read orders by (ts DESC, rowid DESC): insertion order
// breaks ties between percepts of the same millisecond, and the indexes
// above (whose last column is implicitly the rowid) serve that order without
// a sort. Reads return whole records, so each row the index yields is then
// read from the table (by rowid) and its JSON text columns parsed.
// ReadPlans() shows the plans.
//
// Ids are "<prefix>-<seq of the creating event>", as limbic generates them,
// so the events table's MAX(seq) is the one id counter.
//
// Errors: NotFound / FailedPrecondition name the record ("percept p-7 is
// processed"); SQLite failures are IOError with SQLite's message.
//
// Thread-safety: none; one thread uses a SqliteDb.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/time.h"

namespace limbic::bench {

// A prepared statement. Bind with 1-based indexes, then Run() (for writes)
// or Next()/Finish() (for reads). Use() on the owner resets it first.
class Stmt {
 public:
  Stmt() = default;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() { sqlite3_finalize(stmt_); }

  Status Prepare(sqlite3* db, const char* sql);
  void Reset();

  Stmt& Text(int i, std::string_view v);
  Stmt& Int(int i, int64_t v);
  Stmt& Real(int i, double v);
  Stmt& Null(int i);
  Stmt& OptText(int i, const std::optional<std::string>& v) { return v ? Text(i, *v) : Null(i); }

  // Steps to completion and resets.
  Status Run();
  // Steps once: true while rows come. Finish() resets and reports any error.
  bool Next();
  Status Finish();

  std::string ColumnText(int i) const;
  std::optional<std::string> ColumnOptText(int i) const;
  int64_t ColumnInt(int i) const { return sqlite3_column_int64(stmt_, i); }
  double ColumnReal(int i) const { return sqlite3_column_double(stmt_, i); }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;  // of the last step
};

struct PerceptRow {
  std::string id, source, type;
  double intensity = 0;
  TimeMs ts = 0;
  std::optional<std::string> thread_id;
  std::string status = "new";
  std::optional<std::string> text;
  std::string data = "{}";  // JSON
};

struct ThreadRow {
  std::string id, goal, status = "active";
  double salience = 0;
  std::string state;  // JSON
  TimeMs ts = 0;      // created_at and last_active
};

struct ActionRow {
  std::string id, effector, type;
  std::string payload;  // JSON
  std::string status = "pending";
  int64_t attempts = 0;
  std::string idempotency_key;
  std::optional<std::string> thread_id;
  TimeMs ts = 0;
};

struct ActiveThread {
  std::string id;
  double salience;
  TimeMs last_active;
  size_t unprocessed;  // its percepts with status 'assigned'
};

class SqliteDb {
 public:
  // Opens or creates `path`: journal_mode=WAL, synchronous FULL or NORMAL,
  // the schema, every statement prepared. Reads MAX(seq) from events, which
  // makes SQLite run WAL recovery now rather than on the first command.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, bool full);
  ~SqliteDb();

  // The highest seq in the events table (0 when empty).
  uint64_t last_seq() const { return last_seq_; }

  // BEGIN IMMEDIATE / COMMIT / ROLLBACK. last_seq() follows commits only.
  Status Begin();
  Status Commit();
  void Rollback();

  // Reserves the next seq in the open transaction (ids are made from it).
  uint64_t NextSeq() { return ++pending_seq_; }
  // One event row; `body` is the event's fields as JSON. Replay passes the
  // log's seqs, the live store seqs from NextSeq().
  Status InsertEvent(uint64_t seq, TimeMs ts, std::string_view type, const std::string& body);

  // State transitions. Each checks what the event vocabulary requires
  // (docs/events.md) and fails, changing nothing, when it does not hold.
  Status InsertPercept(const PerceptRow& p);
  // new|assigned -> assigned to `thread` (which exists and is not complete);
  // the thread's last_active = ts.
  Status AssignPercept(const std::string& id, const std::string& thread, TimeMs ts);
  // new|assigned -> processed; its thread's last_active = ts.
  Status ProcessPercept(const std::string& id, TimeMs ts);
  Status InsertThread(const ThreadRow& t);
  // Sets what is given; `state_patch` is an RFC 7386 merge patch applied by
  // SQLite's json_patch(). Not on a complete thread.
  Status UpdateThread(const std::string& id, const std::optional<std::string>& status,
                      std::optional<double> salience, const std::optional<std::string>& state_patch,
                      TimeMs ts);
  Status SetArousalLevel(double level, TimeMs ts);
  // `thread_id`, when given, must exist.
  Status InsertAction(const ActionRow& a);
  // pending|failed|inflight -> inflight, attempts = attempt.
  Status SendAction(const std::string& id, int64_t attempt, TimeMs ts);
  // `from` -> complete; attempts = attempt when given.
  Status CompleteAction(const std::string& id, std::string_view from,
                        std::optional<int64_t> attempt, TimeMs ts);

  // Reads of percepts: newest first, at most `limit`, each row as the record
  // {id, source, type, intensity, ts (ms), thread_id|null, status, text|null,
  // data} with `data` parsed. A `data` that is not JSON is Corruption.
  Result<std::vector<nlohmann::json>> UnassignedBySource(const std::string& source, size_t limit);
  Result<std::vector<nlohmann::json>> PerceptsByThread(const std::string& thread, size_t limit);
  Result<std::vector<nlohmann::json>> PerceptsBySourceSince(const std::string& source, TimeMs since,
                                                            size_t limit);
  // What ranking needs of every active thread (no JSON parsed).
  Result<std::vector<ActiveThread>> ActiveThreads();
  // One thread's record {id, goal, status, salience, state, created_at,
  // last_active} with `state` parsed; NotFound when there is none.
  Result<nlohmann::json> Thread(const std::string& id);
  // {level, factors} or the default record when never set.
  Result<nlohmann::json> Arousal();

  // "<read>: <EXPLAIN QUERY PLAN details, '; '-separated>" for each read
  // statement above, so a check can see which index serves it.
  Result<std::vector<std::string>> ReadPlans();

 private:
  SqliteDb() = default;
  Stmt& Use(int q);  // a statement of sqlite_db.cc's Q, reset
  Status Fail(std::string_view what) const;
  // The rows of a percept read, as records; resets `s`.
  Result<std::vector<nlohmann::json>> Percepts(Stmt& s);
  // Why an UPDATE of `id` in `table` changed nothing: NotFound, or the
  // record's status is not one the transition accepts.
  Status Explain(int lookup, std::string_view kind, const std::string& id);
  Status CheckThread(const std::string& id, bool allow_complete);

  sqlite3* db_ = nullptr;
  std::unique_ptr<Stmt[]> stmts_;  // indexed by Q
  uint64_t last_seq_ = 0;
  uint64_t pending_seq_ = 0;  // the highest seq used in the open transaction
};

}  // namespace limbic::bench
