#include "bench/baselines/sqlite_db.h"

#include <algorithm>
#include <utility>

namespace limbic::bench {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS percepts(
  id TEXT PRIMARY KEY, source TEXT NOT NULL, type TEXT NOT NULL, intensity REAL NOT NULL,
  ts INTEGER NOT NULL, thread_id TEXT, status TEXT NOT NULL, text TEXT, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS percepts_by_source ON percepts(source, ts);
CREATE INDEX IF NOT EXISTS percepts_new ON percepts(source, ts) WHERE status = 'new';
CREATE INDEX IF NOT EXISTS percepts_by_thread ON percepts(thread_id, ts)
  WHERE thread_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS percepts_assigned ON percepts(thread_id) WHERE status = 'assigned';
CREATE TABLE IF NOT EXISTS threads(
  id TEXT PRIMARY KEY, goal TEXT NOT NULL, status TEXT NOT NULL, salience REAL NOT NULL,
  state TEXT NOT NULL, created_at INTEGER NOT NULL, last_active INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS threads_by_status ON threads(status);
CREATE TABLE IF NOT EXISTS arousal(
  id INTEGER PRIMARY KEY CHECK (id = 1), level REAL NOT NULL, factors TEXT NOT NULL,
  updated_at INTEGER);
CREATE TABLE IF NOT EXISTS outbox(
  id TEXT PRIMARY KEY, effector TEXT NOT NULL, type TEXT NOT NULL, payload TEXT NOT NULL,
  status TEXT NOT NULL, attempts INTEGER NOT NULL, idempotency_key TEXT NOT NULL,
  thread_id TEXT, ts INTEGER NOT NULL, updated_at INTEGER NOT NULL, last_error TEXT);
CREATE INDEX IF NOT EXISTS outbox_by_status ON outbox(status, ts);
CREATE TABLE IF NOT EXISTS events(
  seq INTEGER PRIMARY KEY, ts INTEGER NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL);
)sql";

constexpr const char* kDefaultFactors =
    R"({"user_waiting":false,"recent_errors":0,"budget_pressure":false})";

// Statements, prepared once in Open(). Numbered parameters let one
// statement serve the live commands and replay.
enum Q : int {
  kBegin,
  kCommit,
  kRollback,
  kMaxSeq,
  kInsertEvent,
  kInsertPercept,
  kAssignPercept,
  kProcessPercept,
  kPerceptStatus,
  kInsertThread,
  kThreadStatus,
  kTouchThread,
  kUpdateThread,
  kSetArousal,
  kArousal,
  kInsertAction,
  kActionStatus,
  kSendAction,
  kCompleteAction,
  kUnassignedBySource,
  kPerceptsByThread,
  kPerceptsBySourceSince,
  kActiveThreads,
  kThread,
  kNumStatements,
};

constexpr const char* kSql[kNumStatements] = {
    "BEGIN IMMEDIATE",
    "COMMIT",
    "ROLLBACK",
    "SELECT coalesce(max(seq), 0) FROM events",
    "INSERT INTO events(seq, ts, type, body) VALUES(?1, ?2, ?3, ?4)",
    "INSERT INTO percepts(id, source, type, intensity, ts, thread_id, status, text, data) "
    "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    "UPDATE percepts SET status = 'assigned', thread_id = ?2 "
    "WHERE id = ?1 AND status IN ('new', 'assigned')",
    "UPDATE percepts SET status = 'processed' WHERE id = ?1 AND status IN ('new', 'assigned') "
    "RETURNING thread_id",
    "SELECT status FROM percepts WHERE id = ?1",
    "INSERT INTO threads(id, goal, status, salience, state, created_at, last_active) "
    "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?6)",
    "SELECT status FROM threads WHERE id = ?1",
    "UPDATE threads SET last_active = ?2 WHERE id = ?1",
    "UPDATE threads SET status = coalesce(?2, status), salience = coalesce(?3, salience), "
    "state = CASE WHEN ?4 IS NULL THEN state ELSE json_patch(state, ?4) END, last_active = ?5 "
    "WHERE id = ?1 AND status <> 'complete'",
    "INSERT INTO arousal(id, level, factors, updated_at) VALUES(1, ?1, ?2, ?3) "
    "ON CONFLICT(id) DO UPDATE SET level = excluded.level, updated_at = excluded.updated_at",
    "SELECT level, factors FROM arousal WHERE id = 1",
    "INSERT INTO outbox(id, effector, type, payload, status, attempts, idempotency_key, "
    "thread_id, ts, updated_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)",
    "SELECT status FROM outbox WHERE id = ?1",
    "UPDATE outbox SET status = 'inflight', attempts = ?2, updated_at = ?3 "
    "WHERE id = ?1 AND status IN ('pending', 'failed', 'inflight')",
    "UPDATE outbox SET status = 'complete', attempts = coalesce(?2, attempts), updated_at = ?3 "
    "WHERE id = ?1 AND status = ?4",
    // The percept reads select the columns in PerceptRecord's order.
    "SELECT id, source, type, intensity, ts, thread_id, status, text, data FROM percepts "
    "WHERE source = ?1 AND status = 'new' ORDER BY ts DESC, rowid DESC LIMIT ?2",
    "SELECT id, source, type, intensity, ts, thread_id, status, text, data FROM percepts "
    "WHERE thread_id = ?1 ORDER BY ts DESC, rowid DESC LIMIT ?2",
    "SELECT id, source, type, intensity, ts, thread_id, status, text, data FROM percepts "
    "WHERE source = ?1 AND ts >= ?2 ORDER BY ts DESC, rowid DESC LIMIT ?3",
    // One pass: the count per thread is a range of the small percepts_assigned index.
    "SELECT t.id, t.salience, t.last_active, "
    "(SELECT count(*) FROM percepts p WHERE p.thread_id = t.id AND p.status = 'assigned') "
    "FROM threads t WHERE t.status = 'active'",
    "SELECT id, goal, status, salience, state, created_at, last_active FROM threads "
    "WHERE id = ?1",
};

// The reads, for ReadPlans().
constexpr std::pair<Q, const char*> kReads[] = {
    {kUnassignedBySource, "UnassignedBySource"},
    {kPerceptsByThread, "PerceptsByThread"},
    {kPerceptsBySourceSince, "PerceptsBySourceSince"},
    {kActiveThreads, "ActiveThreads"},
    {kThread, "Thread"},
};

nlohmann::json OptJson(std::optional<std::string> v) {
  return v ? nlohmann::json(std::move(*v)) : nlohmann::json();
}

// A JSON text column as a user of SQLite reads it: nlohmann::json::parse.
// Discarded (is_discarded()) when it is not JSON.
nlohmann::json ParseColumn(const Stmt& s, int i) {
  return nlohmann::json::parse(s.ColumnText(i), nullptr, /*allow_exceptions=*/false);
}

// The current row of a percept read (columns as in kSql) as a record.
nlohmann::json PerceptRecord(const Stmt& s) {
  return {{"id", s.ColumnText(0)},     {"source", s.ColumnText(1)},
          {"type", s.ColumnText(2)},   {"intensity", s.ColumnReal(3)},
          {"ts", s.ColumnInt(4)},      {"thread_id", OptJson(s.ColumnOptText(5))},
          {"status", s.ColumnText(6)}, {"text", OptJson(s.ColumnOptText(7))},
          {"data", ParseColumn(s, 8)}};
}

Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string msg = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  if ((rc & 0xff) == SQLITE_CONSTRAINT) return Status::AlreadyExists(std::move(msg));
  return Status::IOError(std::move(msg));
}

}  // namespace

// --- Stmt ---

Status Stmt::Prepare(sqlite3* db, const char* sql) {
  int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db, rc, std::string("prepare \"") + sql + "\"");
  return Status::OK();
}

void Stmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  rc_ = SQLITE_OK;
}

Stmt& Stmt::Text(int i, std::string_view v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::Int(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}
Stmt& Stmt::Real(int i, double v) {
  sqlite3_bind_double(stmt_, i, v);
  return *this;
}
Stmt& Stmt::Null(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}

Status Stmt::Run() {
  // Not past SQLITE_DONE: another step would run the statement again.
  while (rc_ == SQLITE_OK || rc_ == SQLITE_ROW) rc_ = sqlite3_step(stmt_);
  return Finish();
}

bool Stmt::Next() {
  rc_ = sqlite3_step(stmt_);
  return rc_ == SQLITE_ROW;
}

Status Stmt::Finish() {
  int rc = rc_;
  Status s = rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE
                 ? Status::OK()
                 : SqliteError(sqlite3_db_handle(stmt_), rc, sqlite3_sql(stmt_));
  sqlite3_reset(stmt_);  // ends the statement's read transaction
  return s;
}

std::string Stmt::ColumnText(int i) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, i))) : std::string();
}

std::optional<std::string> Stmt::ColumnOptText(int i) const {
  if (sqlite3_column_type(stmt_, i) == SQLITE_NULL) return std::nullopt;
  return ColumnText(i);
}

// --- SqliteDb: open, transactions ---

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, bool full) {
  std::unique_ptr<SqliteDb> db(new SqliteDb());
  // One thread uses the connection, so SQLite's own mutexes are not needed.
  int rc =
      sqlite3_open_v2(path.c_str(), &db->db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db->db_, rc, "open " + path);
  sqlite3_busy_timeout(db->db_, 5000);
  std::string setup = std::string("PRAGMA journal_mode = WAL; PRAGMA synchronous = ") +
                      (full ? "FULL" : "NORMAL") + ";" + kSchema;
  rc = sqlite3_exec(db->db_, setup.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db->db_, rc, "schema of " + path);
  db->stmts_ = std::make_unique<Stmt[]>(kNumStatements);
  for (int q = 0; q < kNumStatements; ++q)
    LIMBIC_RETURN_IF_ERROR(db->stmts_[q].Prepare(db->db_, kSql[q]));
  Stmt& s = db->Use(kMaxSeq);
  if (s.Next()) db->last_seq_ = static_cast<uint64_t>(s.ColumnInt(0));
  LIMBIC_RETURN_IF_ERROR(s.Finish());
  db->pending_seq_ = db->last_seq_;
  return db;
}

SqliteDb::~SqliteDb() {
  stmts_.reset();  // statements are finalized before the connection closes
  sqlite3_close_v2(db_);
}

Stmt& SqliteDb::Use(int q) {
  Stmt& s = stmts_[q];
  s.Reset();
  return s;
}

Status SqliteDb::Begin() {
  pending_seq_ = last_seq_;
  return Use(kBegin).Run();
}

Status SqliteDb::Commit() {
  LIMBIC_RETURN_IF_ERROR(Use(kCommit).Run());
  last_seq_ = pending_seq_;
  return Status::OK();
}

void SqliteDb::Rollback() {
  // Fails only when no transaction is open (BEGIN failed); nothing to undo then.
  (void)Use(kRollback).Run();
  pending_seq_ = last_seq_;
}

Status SqliteDb::InsertEvent(uint64_t seq, TimeMs ts, std::string_view type,
                             const std::string& body) {
  LIMBIC_RETURN_IF_ERROR(Use(kInsertEvent)
                             .Int(1, static_cast<int64_t>(seq))
                             .Int(2, ts)
                             .Text(3, type)
                             .Text(4, body)
                             .Run());
  pending_seq_ = std::max(pending_seq_, seq);
  return Status::OK();
}

Status SqliteDb::Explain(int lookup, std::string_view kind, const std::string& id) {
  Stmt& s = Use(lookup).Text(1, id);
  std::optional<std::string> status;
  if (s.Next()) status = s.ColumnText(0);
  LIMBIC_RETURN_IF_ERROR(s.Finish());
  std::string name = std::string(kind) + " " + id;
  if (!status) return Status::NotFound(name + " not found");
  return Status::FailedPrecondition(name + " is " + *status);
}

Status SqliteDb::CheckThread(const std::string& id, bool allow_complete) {
  Stmt& s = Use(kThreadStatus).Text(1, id);
  std::optional<std::string> status;
  if (s.Next()) status = s.ColumnText(0);
  LIMBIC_RETURN_IF_ERROR(s.Finish());
  if (!status) return Status::NotFound("thread " + id + " not found");
  if (!allow_complete && *status == "complete")
    return Status::FailedPrecondition("thread " + id + " is complete");
  return Status::OK();
}

// --- transitions ---

Status SqliteDb::InsertPercept(const PerceptRow& p) {
  return Use(kInsertPercept)
      .Text(1, p.id)
      .Text(2, p.source)
      .Text(3, p.type)
      .Real(4, p.intensity)
      .Int(5, p.ts)
      .OptText(6, p.thread_id)
      .Text(7, p.status)
      .OptText(8, p.text)
      .Text(9, p.data)
      .Run();
}

Status SqliteDb::AssignPercept(const std::string& id, const std::string& thread, TimeMs ts) {
  LIMBIC_RETURN_IF_ERROR(CheckThread(thread, /*allow_complete=*/false));
  LIMBIC_RETURN_IF_ERROR(Use(kAssignPercept).Text(1, id).Text(2, thread).Run());
  if (sqlite3_changes(db_) == 0) return Explain(kPerceptStatus, "percept", id);
  return Use(kTouchThread).Text(1, thread).Int(2, ts).Run();
}

Status SqliteDb::ProcessPercept(const std::string& id, TimeMs ts) {
  Stmt& s = Use(kProcessPercept).Text(1, id);
  bool found = s.Next();
  std::optional<std::string> thread = found ? s.ColumnOptText(0) : std::nullopt;
  LIMBIC_RETURN_IF_ERROR(s.Run());  // steps RETURNING to its end, then resets
  if (!found) return Explain(kPerceptStatus, "percept", id);
  if (!thread) return Status::OK();
  return Use(kTouchThread).Text(1, *thread).Int(2, ts).Run();
}

Status SqliteDb::InsertThread(const ThreadRow& t) {
  return Use(kInsertThread)
      .Text(1, t.id)
      .Text(2, t.goal)
      .Text(3, t.status)
      .Real(4, t.salience)
      .Text(5, t.state)
      .Int(6, t.ts)
      .Run();
}

Status SqliteDb::UpdateThread(const std::string& id, const std::optional<std::string>& status,
                              std::optional<double> salience,
                              const std::optional<std::string>& state_patch, TimeMs ts) {
  Stmt& s = Use(kUpdateThread).Text(1, id).OptText(2, status).OptText(4, state_patch).Int(5, ts);
  if (salience) s.Real(3, *salience);
  LIMBIC_RETURN_IF_ERROR(s.Run());
  if (sqlite3_changes(db_) == 0) return Explain(kThreadStatus, "thread", id);
  return Status::OK();
}

Status SqliteDb::SetArousalLevel(double level, TimeMs ts) {
  return Use(kSetArousal).Real(1, level).Text(2, kDefaultFactors).Int(3, ts).Run();
}

Status SqliteDb::InsertAction(const ActionRow& a) {
  if (a.thread_id) LIMBIC_RETURN_IF_ERROR(CheckThread(*a.thread_id, /*allow_complete=*/true));
  return Use(kInsertAction)
      .Text(1, a.id)
      .Text(2, a.effector)
      .Text(3, a.type)
      .Text(4, a.payload)
      .Text(5, a.status)
      .Int(6, a.attempts)
      .Text(7, a.idempotency_key)
      .OptText(8, a.thread_id)
      .Int(9, a.ts)
      .Run();
}

Status SqliteDb::SendAction(const std::string& id, int64_t attempt, TimeMs ts) {
  LIMBIC_RETURN_IF_ERROR(Use(kSendAction).Text(1, id).Int(2, attempt).Int(3, ts).Run());
  if (sqlite3_changes(db_) == 0) return Explain(kActionStatus, "action", id);
  return Status::OK();
}

Status SqliteDb::CompleteAction(const std::string& id, std::string_view from,
                                std::optional<int64_t> attempt, TimeMs ts) {
  Stmt& s = Use(kCompleteAction).Text(1, id).Int(3, ts).Text(4, from);
  if (attempt) s.Int(2, *attempt);
  LIMBIC_RETURN_IF_ERROR(s.Run());
  if (sqlite3_changes(db_) == 0) {
    Status why = Explain(kActionStatus, "action", id);
    if (why.IsFailedPrecondition())
      return why.WithMessage(why.message() + ", not " + std::string(from));
    return why;
  }
  return Status::OK();
}

// --- reads ---

Result<std::vector<nlohmann::json>> SqliteDb::Percepts(Stmt& s) {
  std::vector<nlohmann::json> out;
  while (s.Next()) {
    out.push_back(PerceptRecord(s));
    if (out.back()["data"].is_discarded()) {
      (void)s.Finish();
      return Status::Corruption("percept " + out.back()["id"].get<std::string>() +
                                ": data is not JSON");
    }
  }
  LIMBIC_RETURN_IF_ERROR(s.Finish());
  return out;
}

Result<std::vector<nlohmann::json>> SqliteDb::UnassignedBySource(const std::string& source,
                                                                 size_t limit) {
  return Percepts(Use(kUnassignedBySource).Text(1, source).Int(2, static_cast<int64_t>(limit)));
}

Result<std::vector<nlohmann::json>> SqliteDb::PerceptsByThread(const std::string& thread,
                                                               size_t limit) {
  return Percepts(Use(kPerceptsByThread).Text(1, thread).Int(2, static_cast<int64_t>(limit)));
}

Result<std::vector<nlohmann::json>> SqliteDb::PerceptsBySourceSince(const std::string& source,
                                                                    TimeMs since, size_t limit) {
  return Percepts(Use(kPerceptsBySourceSince)
                      .Text(1, source)
                      .Int(2, since)
                      .Int(3, static_cast<int64_t>(limit)));
}

Result<std::vector<ActiveThread>> SqliteDb::ActiveThreads() {
  Stmt& s = Use(kActiveThreads);
  std::vector<ActiveThread> out;
  while (s.Next())
    out.push_back(
        {s.ColumnText(0), s.ColumnReal(1), s.ColumnInt(2), static_cast<size_t>(s.ColumnInt(3))});
  LIMBIC_RETURN_IF_ERROR(s.Finish());
  return out;
}

Result<nlohmann::json> SqliteDb::Thread(const std::string& id) {
  Stmt& s = Use(kThread).Text(1, id);
  nlohmann::json out;
  if (s.Next())
    out = {{"id", s.ColumnText(0)},        {"goal", s.ColumnText(1)},
           {"status", s.ColumnText(2)},    {"salience", s.ColumnReal(3)},
           {"state", ParseColumn(s, 4)},   {"created_at", s.ColumnInt(5)},
           {"last_active", s.ColumnInt(6)}};
  LIMBIC_RETURN_IF_ERROR(s.Finish());
  if (out.is_null()) return Status::NotFound("thread " + id + " not found");
  if (out["state"].is_discarded())
    return Status::Corruption("thread " + id + ": state is not JSON");
  return out;
}

Result<nlohmann::json> SqliteDb::Arousal() {
  Stmt& s = Use(kArousal);
  nlohmann::json out = {{"level", 0.5}, {"factors", nlohmann::json::parse(kDefaultFactors)}};
  if (s.Next()) {
    out["level"] = s.ColumnReal(0);
    out["factors"] = nlohmann::json::parse(s.ColumnText(1), nullptr, /*allow_exceptions=*/false);
  }
  LIMBIC_RETURN_IF_ERROR(s.Finish());
  if (out["factors"].is_discarded()) return Status::Corruption("arousal.factors is not JSON");
  return out;
}

Result<std::vector<std::string>> SqliteDb::ReadPlans() {
  std::vector<std::string> plans;
  for (const auto& [q, name] : kReads) {
    Stmt explain;
    LIMBIC_RETURN_IF_ERROR(
        explain.Prepare(db_, (std::string("EXPLAIN QUERY PLAN ") + kSql[q]).c_str()));
    std::string plan = std::string(name) + ":";
    for (const char* sep = " "; explain.Next(); sep = "; ") plan += sep + explain.ColumnText(3);
    LIMBIC_RETURN_IF_ERROR(explain.Finish());
    plans.push_back(std::move(plan));
  }
  return plans;
}

}  // namespace limbic::bench
