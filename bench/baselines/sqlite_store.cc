#include "bench/baselines/sqlite_store.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

#include "bench/baselines/sqlite_db.h"
#include "state/recency.h"

namespace limbic::bench {
namespace {

namespace fs = std::filesystem;

constexpr const char* kEmptyState = R"({"phase":null,"context":{},"next_step":null})";
constexpr uint64_t kReplayBatch = 10000;

TimeMs Now() { return SystemClock::Default()->Now(); }
std::string Id(char prefix, uint64_t seq) {
  return std::string(1, prefix) + "-" + std::to_string(seq);
}
bool IsUnit(double v) { return v >= 0 && v <= 1; }

PerceptRow NewPercept(std::string id, const PerceptIn& in, TimeMs now) {
  PerceptRow row;
  row.id = std::move(id);
  row.source = in.source;
  row.type = in.type;
  row.intensity = in.intensity;
  row.ts = now;
  row.text = in.text;
  row.data = in.data.dump();
  return row;
}

json ArrivedEvent(const std::string& id, const PerceptIn& in) {
  return {{"percept_id", id},          {"source", in.source}, {"percept_type", in.type},
          {"intensity", in.intensity}, {"text", in.text},     {"data", in.data}};
}

// A pending action whose idempotency key is its id (limbic's default).
ActionRow NewAction(std::string id, const std::string& effector, const std::string& type,
                    const json& payload, std::optional<std::string> thread_id, TimeMs now) {
  ActionRow a;
  a.idempotency_key = id;
  a.id = std::move(id);
  a.effector = effector;
  a.type = type;
  a.payload = payload.dump();
  a.thread_id = std::move(thread_id);
  a.ts = now;
  return a;
}

json EnqueuedEvent(const ActionRow& a, const json& payload) {
  json e = {{"action_id", a.id},
            {"effector", a.effector},
            {"action_type", a.type},
            {"payload", payload},
            {"idempotency_key", a.idempotency_key}};
  if (a.thread_id) e["thread_id"] = *a.thread_id;
  return e;
}

Result<std::unique_ptr<SqliteDb>> OpenDb(const SqliteStoreOptions& options) {
  std::error_code ec;
  fs::create_directories(options.dir, ec);
  if (ec) return Status::IOError("create " + options.dir + ": " + ec.message());
  return SqliteDb::Open((fs::path(options.dir) / "limbic.sqlite").string(), options.full);
}

class SqliteStore final : public Store {
 public:
  explicit SqliteStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}

  Result<PreloadIds> Preload(const bench::Preload& p) override;
  Result<std::string> AddPercept(const PerceptIn& p, Ack ack) override;
  Status AssignPercept(const std::string& percept, const std::string& thread, Ack ack) override;
  Status ProcessPercept(const std::string& percept, Ack ack) override;
  Result<std::string> CreateThread(const std::string& goal, double salience, Ack ack) override;
  Status UpdateThreadState(const std::string& thread, const json& patch, Ack ack) override;
  Result<std::string> EnqueueAction(const std::string& effector, const std::string& type,
                                    const json& payload, const std::string& thread,
                                    Ack ack) override;
  Status CompleteAction(const std::string& action, Ack ack) override;

  Result<std::vector<json>> UnassignedBySource(const std::string& source, size_t limit) override {
    return db_->UnassignedBySource(source, limit);
  }
  Result<std::vector<json>> PerceptsByThread(const std::string& thread, size_t limit) override {
    return db_->PerceptsByThread(thread, limit);
  }
  Result<std::vector<json>> PerceptsBySourceSince(const std::string& source, TimeMs max_age,
                                                  size_t limit) override {
    return db_->PerceptsBySourceSince(source, Now() - max_age, limit);
  }
  Result<std::vector<json>> TopActiveThreads(size_t limit) override;
  Result<json> Arousal() override { return db_->Arousal(); }

 private:
  // One command = one transaction: BEGIN IMMEDIATE, `body` (rows + event
  // rows), COMMIT, then `ack`. Any error rolls everything back.
  template <typename Body>
  Status Transact(Body&& body, const Ack& ack) {
    LIMBIC_RETURN_IF_ERROR(db_->Begin());
    Status s = body();
    if (s.ok()) s = db_->Commit();
    if (!s.ok()) {
      db_->Rollback();
      return s;
    }
    if (ack) ack();
    return Status::OK();
  }
  Status Event(uint64_t seq, TimeMs ts, std::string_view type, const json& body) {
    return db_->InsertEvent(seq, ts, type, body.dump());
  }
  // Preload's parts, inside its one transaction.
  Status PreloadThreads(size_t n, TimeMs now, PreloadIds* ids);
  Status PreloadPercepts(const bench::Preload& p, TimeMs now, PreloadIds* ids);
  Status PreloadActions(size_t n, TimeMs now, PreloadIds* ids);

  std::unique_ptr<SqliteDb> db_;
  state::RecencyParams recency_;
};

Result<PreloadIds> SqliteStore::Preload(const bench::Preload& p) {
  PreloadIds ids;
  const TimeMs now = Now();
  Status s = Transact(
      [&]() -> Status {
        LIMBIC_RETURN_IF_ERROR(PreloadThreads(p.threads, now, &ids));
        LIMBIC_RETURN_IF_ERROR(PreloadPercepts(p, now, &ids));
        return PreloadActions(p.actions, now, &ids);
      },
      nullptr);
  if (!s.ok()) return s;
  return ids;
}

Status SqliteStore::PreloadThreads(size_t n, TimeMs now, PreloadIds* ids) {
  for (size_t i = 0; i < n; ++i) {
    uint64_t seq = db_->NextSeq();
    ThreadRow t;
    t.id = Id('t', seq);
    t.goal = "preload thread " + std::to_string(i);
    t.salience = 0.5;
    t.state = kEmptyState;
    t.ts = now;
    LIMBIC_RETURN_IF_ERROR(db_->InsertThread(t));
    LIMBIC_RETURN_IF_ERROR(
        Event(seq, now, "thread_created",
              {{"thread_id", t.id}, {"goal", t.goal}, {"salience", t.salience}}));
    ids->threads.push_back(std::move(t.id));
  }
  return Status::OK();
}

// Each percept is inserted in its final state (new, assigned or processed)
// with the events that got it there.
Status SqliteStore::PreloadPercepts(const bench::Preload& p, TimeMs now, PreloadIds* ids) {
  for (size_t i = 0; i < p.percepts.size(); ++i) {
    const PerceptIn& in = p.percepts[i];
    int thread = i < p.assign.size() ? p.assign[i] : -1;
    if (thread >= static_cast<int>(ids->threads.size()))
      return Status::InvalidArgument("preload percept " + std::to_string(i) +
                                     " names thread index " + std::to_string(thread));
    bool processed = thread >= 0 && i < p.processed.size() && p.processed[i];
    uint64_t seq = db_->NextSeq();
    PerceptRow row = NewPercept(Id('p', seq), in, now);
    if (thread >= 0) {
      row.thread_id = ids->threads[static_cast<size_t>(thread)];
      row.status = processed ? "processed" : "assigned";
    }
    LIMBIC_RETURN_IF_ERROR(db_->InsertPercept(row));
    LIMBIC_RETURN_IF_ERROR(Event(seq, now, "percept_arrived", ArrivedEvent(row.id, in)));
    if (thread >= 0)
      LIMBIC_RETURN_IF_ERROR(Event(db_->NextSeq(), now, "percept_assigned",
                                   {{"percept_id", row.id}, {"thread_id", *row.thread_id}}));
    if (processed)
      LIMBIC_RETURN_IF_ERROR(
          Event(db_->NextSeq(), now, "percept_processed", {{"percept_id", row.id}}));
    ids->percepts.push_back(std::move(row.id));
  }
  return Status::OK();
}

// Half of the actions (odd indexes) are complete.
Status SqliteStore::PreloadActions(size_t n, TimeMs now, PreloadIds* ids) {
  for (size_t i = 0; i < n; ++i) {
    uint64_t seq = db_->NextSeq();
    bool complete = i % 2 == 1;
    json payload = {{"text", "preload action " + std::to_string(i)}};
    ActionRow a = NewAction(Id('a', seq), "discord", "send_message", payload, std::nullopt, now);
    if (complete) {
      a.status = "complete";
      a.attempts = 1;
    }
    LIMBIC_RETURN_IF_ERROR(db_->InsertAction(a));
    LIMBIC_RETURN_IF_ERROR(Event(seq, now, "action_enqueued", EnqueuedEvent(a, payload)));
    if (complete)
      LIMBIC_RETURN_IF_ERROR(
          Event(db_->NextSeq(), now, "action_complete", {{"action_id", a.id}, {"attempt", 1}}));
    ids->actions.push_back(std::move(a.id));
  }
  return Status::OK();
}

Result<std::string> SqliteStore::AddPercept(const PerceptIn& p, Ack ack) {
  if (p.source.empty() || p.type.empty() || !IsUnit(p.intensity))
    return Status::InvalidArgument("percept needs a source, a type and an intensity in [0, 1]");
  const TimeMs now = Now();
  std::string id;
  Status s = Transact(
      [&]() -> Status {
        uint64_t seq = db_->NextSeq();
        id = Id('p', seq);
        LIMBIC_RETURN_IF_ERROR(db_->InsertPercept(NewPercept(id, p, now)));
        return Event(seq, now, "percept_arrived", ArrivedEvent(id, p));
      },
      ack);
  if (!s.ok()) return s;
  return id;
}

Status SqliteStore::AssignPercept(const std::string& percept, const std::string& thread, Ack ack) {
  const TimeMs now = Now();
  return Transact(
      [&]() -> Status {
        LIMBIC_RETURN_IF_ERROR(db_->AssignPercept(percept, thread, now));
        return Event(db_->NextSeq(), now, "percept_assigned",
                     {{"percept_id", percept}, {"thread_id", thread}});
      },
      ack);
}

Status SqliteStore::ProcessPercept(const std::string& percept, Ack ack) {
  const TimeMs now = Now();
  return Transact(
      [&]() -> Status {
        LIMBIC_RETURN_IF_ERROR(db_->ProcessPercept(percept, now));
        return Event(db_->NextSeq(), now, "percept_processed", {{"percept_id", percept}});
      },
      ack);
}

Result<std::string> SqliteStore::CreateThread(const std::string& goal, double salience, Ack ack) {
  if (!IsUnit(salience)) return Status::InvalidArgument("salience must be in [0, 1]");
  const TimeMs now = Now();
  std::string id;
  Status s = Transact(
      [&]() -> Status {
        uint64_t seq = db_->NextSeq();
        id = Id('t', seq);
        LIMBIC_RETURN_IF_ERROR(db_->InsertThread({id, goal, "active", salience, kEmptyState, now}));
        return Event(seq, now, "thread_created",
                     {{"thread_id", id}, {"goal", goal}, {"salience", salience}});
      },
      ack);
  if (!s.ok()) return s;
  return id;
}

Status SqliteStore::UpdateThreadState(const std::string& thread, const json& patch, Ack ack) {
  if (!patch.is_object()) return Status::InvalidArgument("a state patch must be a JSON object");
  const TimeMs now = Now();
  return Transact(
      [&]() -> Status {
        LIMBIC_RETURN_IF_ERROR(
            db_->UpdateThread(thread, std::nullopt, std::nullopt, patch.dump(), now));
        return Event(db_->NextSeq(), now, "thread_updated",
                     {{"thread_id", thread}, {"state", patch}});
      },
      ack);
}

Result<std::string> SqliteStore::EnqueueAction(const std::string& effector, const std::string& type,
                                               const json& payload, const std::string& thread,
                                               Ack ack) {
  if (effector.empty() || type.empty())
    return Status::InvalidArgument("an action needs an effector and a type");
  const TimeMs now = Now();
  std::string id;
  Status s = Transact(
      [&]() -> Status {
        uint64_t seq = db_->NextSeq();
        id = Id('a', seq);
        std::optional<std::string> thread_id;
        if (!thread.empty()) thread_id = thread;
        ActionRow a = NewAction(id, effector, type, payload, thread_id, now);
        LIMBIC_RETURN_IF_ERROR(db_->InsertAction(a));
        return Event(seq, now, "action_enqueued", EnqueuedEvent(a, payload));
      },
      ack);
  if (!s.ok()) return s;
  return id;
}

Status SqliteStore::CompleteAction(const std::string& action, Ack ack) {
  const TimeMs now = Now();
  return Transact(
      [&]() -> Status {
        LIMBIC_RETURN_IF_ERROR(db_->CompleteAction(action, "pending", 1, now));
        return Event(db_->NextSeq(), now, "action_complete",
                     {{"action_id", action}, {"attempt", 1}});
      },
      ack);
}

// Ranks every active thread from the cheap query (no JSON parsed), then
// reads and builds the whole record of the top `limit` only.
Result<std::vector<json>> SqliteStore::TopActiveThreads(size_t limit) {
  auto rows = db_->ActiveThreads();
  if (!rows.ok()) return rows.status();
  const TimeMs now = Now();
  std::vector<std::pair<double, const ActiveThread*>> scored;
  scored.reserve(rows->size());
  for (const ActiveThread& t : *rows)
    scored.emplace_back(
        state::EffectiveSalience(t.salience, now - t.last_active, t.unprocessed, recency_), &t);
  size_t n = std::min(limit, scored.size());
  // Highest first; ties by id so the order is stable.
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(n), scored.end(),
                    [](const auto& a, const auto& b) {
                      return a.first != b.first ? a.first > b.first : a.second->id < b.second->id;
                    });
  std::vector<json> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    auto record = db_->Thread(scored[i].second->id);
    if (!record.ok()) return record.status();
    (*record)["unprocessed"] = scored[i].second->unprocessed;
    (*record)["effective_salience"] = scored[i].first;
    out.push_back(std::move(*record));
  }
  return out;
}

// --- replay ---

// Applies one decoded event and inserts its events row. Throws
// nlohmann::json exceptions on missing or mistyped fields; the caller
// turns them into a Status.
Result<bool> ApplyEvent(SqliteDb& db, json e) {
  const std::string type = e.at("type").get<std::string>();
  const uint64_t seq = e.at("seq").get<uint64_t>();
  auto ts = ParseTime(e.at("ts").get<std::string>());
  if (!ts.ok()) return ts.status();
  for (const char* k : {"v", "seq", "ts", "type"}) e.erase(k);
  auto str = [&](const char* k) { return e.at(k).get<std::string>(); };
  auto opt_str = [&](const char* k) -> std::optional<std::string> {
    if (!e.contains(k) || e[k].is_null()) return std::nullopt;
    return e[k].get<std::string>();
  };
  auto opt_dump = [&](const char* k) -> std::optional<std::string> {
    if (!e.contains(k)) return std::nullopt;
    return e[k].dump();
  };

  Status s;
  bool applied = true;
  if (type == "percept_arrived") {
    s = db.InsertPercept({str("percept_id"), str("source"), str("percept_type"),
                          e.at("intensity").get<double>(), *ts, std::nullopt, "new",
                          opt_str("text"), opt_dump("data").value_or("{}")});
  } else if (type == "percept_assigned") {
    s = db.AssignPercept(str("percept_id"), str("thread_id"), *ts);
  } else if (type == "percept_processed") {
    s = db.ProcessPercept(str("percept_id"), *ts);
  } else if (type == "thread_created") {
    std::string state = kEmptyState;
    if (e.contains("state")) {
      json merged = json::parse(kEmptyState);
      merged.merge_patch(e["state"]);
      state = merged.dump();
    }
    s = db.InsertThread({str("thread_id"), str("goal"), opt_str("status").value_or("active"),
                         e.at("salience").get<double>(), state, *ts});
  } else if (type == "thread_updated") {
    std::optional<double> salience;
    if (e.contains("salience")) salience = e["salience"].get<double>();
    s = db.UpdateThread(str("thread_id"), opt_str("status"), salience, opt_dump("state"), *ts);
  } else if (type == "arousal_set") {
    s = db.SetArousalLevel(e.at("level").get<double>(), *ts);
  } else if (type == "action_enqueued") {
    s = db.InsertAction({str("action_id"), str("effector"), str("action_type"),
                         opt_dump("payload").value_or("{}"), "pending", 0, str("idempotency_key"),
                         opt_str("thread_id"), *ts});
  } else if (type == "action_sent") {
    s = db.SendAction(str("action_id"), e.at("attempt").get<int64_t>(), *ts);
  } else if (type == "action_complete") {
    std::optional<int64_t> attempt;
    if (e.contains("attempt")) attempt = e["attempt"].get<int64_t>();
    s = db.CompleteAction(str("action_id"), "inflight", attempt, *ts);
  } else {
    applied = false;
  }
  LIMBIC_RETURN_IF_ERROR(s);
  LIMBIC_RETURN_IF_ERROR(db.InsertEvent(seq, *ts, type, e.dump()));
  return applied;
}

}  // namespace

Result<std::unique_ptr<Store>> OpenSqliteStore(const SqliteStoreOptions& options) {
  auto db = OpenDb(options);
  if (!db.ok()) return db.status();
  return std::unique_ptr<Store>(std::make_unique<SqliteStore>(std::move(*db)));
}

Result<uint64_t> ReplaySqliteStore(const std::string& log_file, const SqliteStoreOptions& options,
                                   uint64_t* skipped) {
  std::error_code ec;
  if (fs::exists(options.dir, ec) && !fs::is_empty(options.dir, ec))
    return Status::FailedPrecondition("replay target " + options.dir + " is not empty");
  std::ifstream in(log_file);
  if (!in) return Status::NotFound("cannot read " + log_file);
  auto db = OpenDb(options);
  if (!db.ok()) return db.status();
  SqliteDb& d = **db;

  uint64_t applied = 0, others = 0, line_no = 0, in_batch = 0;
  LIMBIC_RETURN_IF_ERROR(d.Begin());
  std::string line;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    Result<bool> r = Status::Corruption("not a JSON object");
    json e = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (e.is_object()) {
      try {
        r = ApplyEvent(d, std::move(e));
      } catch (const json::exception& x) {
        r = Status::Corruption(x.what());
      }
    }
    if (!r.ok()) {
      d.Rollback();
      return r.status().WithContext(log_file + ":" + std::to_string(line_no));
    }
    ++(*r ? applied : others);
    if (++in_batch == kReplayBatch) {
      LIMBIC_RETURN_IF_ERROR(d.Commit());
      LIMBIC_RETURN_IF_ERROR(d.Begin());
      in_batch = 0;
    }
  }
  LIMBIC_RETURN_IF_ERROR(d.Commit());
  if (skipped) *skipped = others;
  return applied;
}

}  // namespace limbic::bench
