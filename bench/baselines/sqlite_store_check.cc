// limbic_bench_sqlite_check: a self-check of the SQLite baseline (not a ctest
// test). For synchronous FULL and NORMAL it preloads a store, runs every
// Store operation and checks what it returns and what it left in the
// database, reopens the store (after a clean close, and after a writer died
// with its WAL unmerged), and replays a small hand-written events log.
// Prints one line per check; exits 1 on any failure.
//
//   limbic_bench_sqlite_check            the checks
//   limbic_bench_sqlite_check --timings  rough timings instead (AddPercept at
//                                        1,000 and 10,000 live percepts, replay)
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "bench/baselines/sqlite_db.h"
#include "bench/baselines/sqlite_store.h"

using namespace limbic;
using namespace limbic::bench;
namespace fs = std::filesystem;

namespace {

int failures = 0;

void Check(bool ok, const std::string& what) {
  std::printf("  %s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

template <typename T>
T Must(Result<T> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, r.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

fs::path TempDir(const char* name) {
  std::string tmpl = (fs::temp_directory_path() / (std::string(name) + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) std::exit(1);
  return tmpl;
}

// The first column of the first row of `sql`, read by a connection of its own.
std::string Query(const fs::path& dir, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_stmt* stmt = nullptr;
  std::string out = "<error>";
  sqlite3_open_v2((dir / "limbic.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    out = t ? t : "NULL";
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

// The ids of a read's records, in order.
std::vector<std::string> IdsOf(const std::vector<json>& records) {
  std::vector<std::string> ids;
  for (const json& r : records) ids.push_back(r.at("id").get<std::string>());
  return ids;
}

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}
bool Before(const std::vector<std::string>& v, const std::string& a, const std::string& b) {
  auto ia = std::find(v.begin(), v.end(), a), ib = std::find(v.begin(), v.end(), b);
  return ia != v.end() && ib != v.end() && ia < ib;
}

const char* kSources[] = {"github", "discord", "timer", "email"};

// 1,000 percepts over 4 sources; every 3rd assigned to a thread, every 6th
// also processed.
Preload MakePreload(size_t percepts, size_t threads, size_t actions) {
  Preload p;
  p.threads = threads;
  p.actions = actions;
  for (size_t i = 0; i < percepts; ++i) {
    p.percepts.push_back(
        {kSources[i % 4], "message", 0.5, "preloaded " + std::to_string(i), {{"n", i}}});
    bool assigned = threads > 0 && i % 3 == 0;
    p.assign.push_back(assigned ? static_cast<int>((i / 3) % threads) : -1);
    p.processed.push_back(assigned && i % 6 == 0);
  }
  return p;
}

// Each read statement is served by its index, in index order (no sort).
void CheckPlans(const fs::path& dir) {
  auto db = Must(SqliteDb::Open((dir / "limbic.sqlite").string(), /*full=*/true), "open db");
  std::vector<std::string> plans = Must(db->ReadPlans(), "plans");
  const std::pair<const char*, const char*> want[] = {
      {"UnassignedBySource:", "USING INDEX percepts_new (source=?)"},
      {"PerceptsByThread:", "USING INDEX percepts_by_thread (thread_id=?)"},
      {"PerceptsBySourceSince:", "USING INDEX percepts_by_source (source=? AND ts>?)"},
      {"ActiveThreads:", "USING INDEX percepts_assigned (thread_id=?)"},
      {"Thread:", "USING INDEX sqlite_autoindex_threads_1 (id=?)"},
  };
  for (size_t i = 0; i < std::size(want); ++i) {
    const std::string& plan = i < plans.size() ? plans[i] : std::string();
    Check(plan.starts_with(want[i].first) && plan.find(want[i].second) != std::string::npos &&
              plan.find("TEMP B-TREE") == std::string::npos,
          "plan " + plan);
  }
  Check(plans.size() > 3 && plans[3].find("threads_by_status (status=?)") != std::string::npos,
        "ActiveThreads finds the active threads by threads_by_status");
}

void CheckStore(bool full) {
  std::printf("synchronous=%s\n", full ? "FULL" : "NORMAL");
  const fs::path dir = TempDir("limbic-sqlite-check");
  SqliteStoreOptions options{dir.string(), full};
  auto store = Must(OpenSqliteStore(options), "open");
  Check(Query(dir, "PRAGMA journal_mode") == "wal", "journal_mode is WAL");

  PreloadIds ids = Must(store->Preload(MakePreload(1000, 50, 100)), "preload");
  Check(ids.percepts.size() == 1000 && ids.threads.size() == 50 && ids.actions.size() == 100,
        "preload returns 1000 percept, 50 thread, 100 action ids");
  Check(Query(dir, "SELECT count(*) FROM percepts WHERE status = 'new'") == "666" &&
            Query(dir, "SELECT count(*) FROM percepts WHERE status = 'processed'") == "167",
        "preload: 666 new, 167 assigned, 167 processed percepts");
  Check(Query(dir, "SELECT count(*) FROM outbox WHERE status = 'complete'") == "50",
        "preload: half of the actions complete");
  // Events: 50 threads + 1000 arrived + 334 assigned + 167 processed + 100 + 50.
  Check(Query(dir, "SELECT count(*) || ' ' || max(seq) FROM events") == "1701 1701",
        "preload: 1701 event rows, seq 1..1701");

  int acks = 0;
  auto ack = [&acks] { ++acks; };
  const std::string t0 = ids.threads[0];
  auto new_github = Must(store->UnassignedBySource("github", 5), "unassigned");
  // github percepts are i % 4 == 0, unassigned when i % 3 != 0: 992, 988, 980, 976, 968.
  Check(IdsOf(new_github) == std::vector<std::string>{ids.percepts[992], ids.percepts[988],
                                                      ids.percepts[980], ids.percepts[976],
                                                      ids.percepts[968]},
        "UnassignedBySource: new github percepts, newest first");
  const json& r992 = new_github.front();
  Check(r992["source"] == "github" && r992["type"] == "message" && r992["intensity"] == 0.5 &&
            r992["ts"].is_number_integer() && r992["thread_id"].is_null() &&
            r992["status"] == "new" && r992["text"] == "preloaded 992" &&
            r992["data"] == json{{"n", 992}},
        "its record is whole, data parsed: " + r992.dump());
  auto t0_percepts = Must(store->PerceptsByThread(t0, 100), "by thread");
  Check(t0_percepts.size() == 7 && std::all_of(t0_percepts.begin(), t0_percepts.end(),
                                               [&](const json& r) {
                                                 return r["thread_id"] == t0 &&
                                                        r["data"].is_object() &&
                                                        r["status"] != "new";
                                               }),
        "PerceptsByThread: the 7 percepts preloaded into " + t0 + ", records of " + t0);

  std::string p =
      Must(store->AddPercept({"github", "issue", 0.9, "crash", {{"n", 1}}}, ack), "add");
  Check(acks == 1, "AddPercept acks before returning");
  Check(p == "p-1702", "AddPercept id continues the counter: " + p);
  json added = Must(store->UnassignedBySource("github", 1), "unassigned").front();
  Check(added["id"] == p && added["type"] == "issue" && added["intensity"] == 0.9 &&
            added["text"] == "crash" && added["data"] == json{{"n", 1}},
        "the new percept is the newest unassigned github percept: " + added.dump());
  Check(Must(store->PerceptsBySourceSince("github", 60'000, 1), "since").front() == added,
        "PerceptsBySourceSince(github, 1 min) starts with the same record");
  Check(Must(store->PerceptsBySourceSince("nobody", 60'000, 10), "since").empty(),
        "PerceptsBySourceSince of an unknown source is empty");

  Check(store->AssignPercept(p, t0, ack).ok() && acks == 2, "AssignPercept ok, acked");
  json assigned = Must(store->PerceptsByThread(t0, 100), "by thread").front();
  Check(assigned["id"] == p && assigned["status"] == "assigned" && assigned["thread_id"] == t0,
        "the percept is first in PerceptsByThread(" + t0 + "), assigned to it");
  Check(!Contains(IdsOf(Must(store->UnassignedBySource("github", 1000), "unassigned")), p),
        "and no longer unassigned");

  // Effective salience: x (0.1) with 3 unprocessed percepts beats y (0.3) by
  // 0.1 + 0.3 = 0.4; once they are processed, y wins.
  std::string x = Must(store->CreateThread("x", 0.1, ack), "create");
  std::string y = Must(store->CreateThread("y", 0.3, ack), "create");
  std::vector<std::string> xs;
  for (int i = 0; i < 3; ++i) {
    xs.push_back(Must(store->AddPercept({"timer", "tick", 0.2, "", {}}, ack), "add"));
    Check(store->AssignPercept(xs.back(), x, ack).ok(), "assign " + xs.back() + " to " + x);
  }
  auto top_records = Must(store->TopActiveThreads(100), "top");
  auto top = IdsOf(top_records);
  Check(top.size() == 52 && Before(top, x, y), "TopActiveThreads: x (3 unprocessed) before y");
  auto x_record = *std::find_if(top_records.begin(), top_records.end(),
                                [&](const json& r) { return r["id"] == x; });
  Check(x_record["goal"] == "x" && x_record["status"] == "active" && x_record["salience"] == 0.1 &&
            x_record["state"] == json::parse(R"({"phase":null,"context":{},"next_step":null})") &&
            x_record["created_at"].is_number_integer() && x_record["unprocessed"] == 3 &&
            std::abs(x_record["effective_salience"].get<double>() - 0.4) < 0.01,
        "x's record is whole, state parsed, effective_salience ~0.4: " + x_record.dump());
  Check(top.front() != x && top.front() != y,
        "preloaded threads with 0.5 salience and waiting percepts lead");
  for (const auto& id : xs) Check(store->ProcessPercept(id, ack).ok(), "ProcessPercept " + id);
  top = IdsOf(Must(store->TopActiveThreads(100), "top"));
  Check(Before(top, y, x), "after processing, y before x (not counted as unprocessed)");
  Check(Must(store->TopActiveThreads(3), "top").size() == 3, "TopActiveThreads(3) has 3");
  Status again = store->ProcessPercept(xs[0], ack);
  Check(again.IsFailedPrecondition() && again.message().find(xs[0]) != std::string::npos,
        "ProcessPercept twice: " + again.ToString());

  Check(store->UpdateThreadState(x, {{"phase", "drafting"}, {"context", {{"k", 1}}}}, ack).ok() &&
            store->UpdateThreadState(x, {{"context", {{"k", nullptr}, {"j", 2}}}}, ack).ok(),
        "UpdateThreadState twice");
  Check(Query(dir, "SELECT state FROM threads WHERE id = '" + x + "'") ==
            R"({"phase":"drafting","context":{"j":2},"next_step":null})",
        "the state is the merge of both patches");
  Check(Must(store->TopActiveThreads(100), "top").back()["state"] ==
            json{{"phase", "drafting"}, {"context", {{"j", 2}}}, {"next_step", nullptr}},
        "TopActiveThreads returns x (now last) with its merged state");

  std::string a = Must(store->EnqueueAction("discord", "send", {{"text", "hi"}}, x, ack), "enq");
  Check(store->CompleteAction(a, ack).ok(), "CompleteAction " + a);
  Check(Query(dir, "SELECT status || ' ' || attempts FROM outbox WHERE id = '" + a + "'") ==
            "complete 1",
        "the action is complete, attempts 1");
  int acks_before_errors = acks;
  std::string events_before = Query(dir, "SELECT count(*) FROM events");
  Status twice = store->CompleteAction(a, ack);
  Check(twice.IsFailedPrecondition() && twice.message().find(a) != std::string::npos,
        "CompleteAction twice: " + twice.ToString());
  Status missing = store->CompleteAction("a-999999", ack);
  Check(missing.IsNotFound() && missing.message().find("a-999999") != std::string::npos,
        "CompleteAction unknown: " + missing.ToString());
  Status no_thread = store->AssignPercept(ids.percepts[1], "t-999999", ack);
  Check(no_thread.IsNotFound(), "AssignPercept to an unknown thread: " + no_thread.ToString());
  auto bad_enqueue = store->EnqueueAction("discord", "send", {}, "t-999999", ack);
  Check(!bad_enqueue.ok() && bad_enqueue.status().IsNotFound(),
        "EnqueueAction on an unknown thread: " + bad_enqueue.status().ToString());
  Check(acks == acks_before_errors && Query(dir, "SELECT count(*) FROM events") == events_before,
        "failed commands: no ack, no event row (rolled back)");

  json arousal = Must(store->Arousal(), "arousal");
  Check(arousal ==
            json{{"level", 0.5},
                 {"factors",
                  {{"user_waiting", false}, {"recent_errors", 0}, {"budget_pressure", false}}}},
        "Arousal before any set: " + arousal.dump());

  // Reopen: the state and the counter survive.
  auto by_thread = Must(store->PerceptsByThread(t0, 100), "by thread");
  auto unassigned = Must(store->UnassignedBySource("discord", 20), "unassigned");
  top = IdsOf(Must(store->TopActiveThreads(10), "top"));
  std::string last_events = Query(dir, "SELECT max(seq) FROM events");
  store.reset();
  store = Must(OpenSqliteStore(options), "reopen");
  Check(Must(store->PerceptsByThread(t0, 100), "by thread") == by_thread &&
            Must(store->UnassignedBySource("discord", 20), "unassigned") == unassigned &&
            IdsOf(Must(store->TopActiveThreads(10), "top")) == top,
        "reopened: same PerceptsByThread, UnassignedBySource, TopActiveThreads");
  std::string next = Must(store->AddPercept({"email", "mail", 0.4, "", {}}, ack), "add");
  Check(next == "p-" + std::to_string(std::stoull(last_events) + 1),
        "reopened: ids continue after seq " + last_events + ": " + next);
  store.reset();

  // A writer that dies without closing leaves its WAL; the next open recovers it.
  pid_t child = fork();
  if (child == 0) {
    auto s = OpenSqliteStore(options);
    bool ok = s.ok() && (*s)->AddPercept({"email", "crash", 0.4, "", {}}, nullptr).ok();
    _exit(ok ? 0 : 1);  // no destructors: no checkpoint, the WAL stays
  }
  int wstatus = 0;
  waitpid(child, &wstatus, 0);
  std::error_code ec;
  auto wal_bytes = fs::file_size(dir / "limbic.sqlite-wal", ec);
  Check(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 && !ec && wal_bytes > 0,
        "killed writer left a " + std::to_string(ec ? 0 : wal_bytes) + "-byte WAL");
  store = Must(OpenSqliteStore(options), "reopen after kill");
  std::string crashed = "p-" + std::to_string(std::stoull(next.substr(2)) + 1);
  Check(Must(store->UnassignedBySource("email", 1), "unassigned").front()["id"] == crashed,
        "reopened after kill: its acknowledged " + crashed + " is there");
  store.reset();
  CheckPlans(dir);
  fs::remove_all(dir);
}

void CheckReplay() {
  std::printf("replay\n");
  const fs::path dir = TempDir("limbic-sqlite-replay");
  const fs::path log = dir / "events.jsonl";
  std::ofstream(log) <<
      R"({"v":1,"seq":1,"ts":"2026-01-01T00:00:00.000Z","type":"percept_arrived","data":{"n":1},"intensity":0.7,"percept_id":"p-1","percept_type":"issue","source":"github","text":"crash"}
{"v":1,"seq":2,"ts":"2026-01-01T00:00:01.000Z","type":"thread_created","goal":"fix it","salience":0.6,"thread_id":"t-2"}
{"v":1,"seq":3,"ts":"2026-01-01T00:00:02.000Z","type":"percept_assigned","percept_id":"p-1","thread_id":"t-2"}
{"v":1,"seq":4,"ts":"2026-01-01T00:00:03.000Z","type":"reflex_fired","reflex_id":"r-1","caused":[3]}
{"v":1,"seq":5,"ts":"2026-01-01T00:00:04.000Z","type":"thread_updated","state":{"phase":"fixing"},"thread_id":"t-2"}
{"v":1,"seq":6,"ts":"2026-01-01T00:00:05.000Z","type":"percept_arrived","intensity":0.2,"percept_id":"p-6","percept_type":"msg","source":"discord"}
{"v":1,"seq":7,"ts":"2026-01-01T00:00:06.000Z","type":"percept_processed","percept_id":"p-1"}
{"v":1,"seq":8,"ts":"2026-01-01T00:00:07.000Z","type":"arousal_set","level":0.8}
{"v":1,"seq":9,"ts":"2026-01-01T00:00:08.000Z","type":"action_enqueued","action_id":"a-9","effector":"github","action_type":"comment","payload":{"body":"on it"},"idempotency_key":"a-9","thread_id":"t-2"}
{"v":1,"seq":10,"ts":"2026-01-01T00:00:09.000Z","type":"action_sent","action_id":"a-9","attempt":1}
{"v":1,"seq":11,"ts":"2026-01-01T00:00:10.000Z","type":"action_complete","action_id":"a-9","attempt":1}
)";
  const fs::path out = dir / "db";
  uint64_t skipped = 0;
  auto applied = ReplaySqliteStore(log.string(), {out.string(), true}, &skipped);
  Check(applied.ok() && *applied == 10 && skipped == 1,
        "11 events: 10 applied, 1 skipped (reflex_fired)");
  Check(Query(out, "SELECT count(*) FROM events") == "11", "11 event rows");
  Check(Query(out, "SELECT status || ' ' || thread_id FROM percepts WHERE id = 'p-1'") ==
            "processed t-2",
        "p-1 processed in t-2");
  Check(Query(out, "SELECT state || ' ' || last_active FROM threads WHERE id = 't-2'") ==
            R"({"phase":"fixing","context":{},"next_step":null} 1767225606000)",
        "t-2 state patched, last_active = ts of percept_processed");
  Check(Query(out, "SELECT status || ' ' || attempts FROM outbox WHERE id = 'a-9'") == "complete 1",
        "a-9 complete after 1 attempt");
  auto store = Must(OpenSqliteStore({out.string(), true}), "open replayed");
  Check(Must(store->Arousal(), "arousal")["level"] == 0.8, "arousal level 0.8");
  auto discord = Must(store->UnassignedBySource("discord", 5), "unassigned");
  Check(IdsOf(discord) == std::vector<std::string>{"p-6"} && discord[0]["text"].is_null() &&
            discord[0]["data"] == json::object() && discord[0]["ts"] == 1767225605000,
        "p-6 unassigned, no text, data {}, ts as logged");
  auto t2 = Must(store->PerceptsByThread("t-2", 5), "by thread");
  Check(IdsOf(t2) == std::vector<std::string>{"p-1"} && t2[0]["text"] == "crash" &&
            t2[0]["data"] == json{{"n", 1}} && t2[0]["status"] == "processed",
        "t-2 has p-1, processed, with its text and data");
  Check(Must(store->AddPercept({"github", "x", 0.1, "", {}}, nullptr), "add") == "p-12",
        "ids continue after the replayed log: p-12");
  store.reset();

  auto again = ReplaySqliteStore(log.string(), {out.string(), true});
  Check(!again.ok(), "replay into a non-empty dir fails: " + again.status().ToString());
  std::ofstream(dir / "bad.jsonl")
      << R"({"v":1,"seq":1,"ts":"2026-01-01T00:00:00.000Z","type":"percept_assigned","percept_id":"p-1","thread_id":"t-2"})"
      << "\n";
  auto bad = ReplaySqliteStore((dir / "bad.jsonl").string(), {(dir / "db2").string(), true});
  Check(!bad.ok() && bad.status().message().find("bad.jsonl:1") != std::string::npos,
        "an event naming a missing thread fails with its line: " + bad.status().ToString());
  fs::remove_all(dir);
}

// --- timings (rough; one run, this machine) ---

using SteadyClock = std::chrono::steady_clock;

double Micros(SteadyClock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

void TimeAddPercept(bool full, size_t live, size_t n) {
  const fs::path dir = TempDir("limbic-sqlite-time");
  auto store = Must(OpenSqliteStore({dir.string(), full}), "open");
  (void)Must(store->Preload(MakePreload(live, 50, 0)), "preload");
  std::vector<double> us;
  for (size_t i = 0; i < n; ++i) {
    PerceptIn p{kSources[i % 4], "message", 0.5, "timed percept " + std::to_string(i), {{"n", i}}};
    auto start = SteadyClock::now();
    (void)Must(store->AddPercept(p, nullptr), "add");
    us.push_back(Micros(SteadyClock::now() - start));
  }
  double mean = 0;
  for (double u : us) mean += u / static_cast<double>(n);
  std::sort(us.begin(), us.end());
  std::printf("AddPercept  %-6s live=%-6zu n=%zu  mean %.1f us  p50 %.1f us  p99 %.1f us\n",
              full ? "FULL" : "NORMAL", live, n, mean, us[n / 2], us[n * 99 / 100]);
  store.reset();
  fs::remove_all(dir);
}

void TimeReplay(bool full, size_t events) {
  const fs::path dir = TempDir("limbic-sqlite-time");
  const fs::path log = dir / "events.jsonl";
  {
    std::ofstream out(log);
    const TimeMs base = 1767225600000;
    for (size_t i = 1; i <= events; ++i) {
      json e = {{"v", 1},
                {"seq", i},
                {"ts", FormatTime(base + static_cast<TimeMs>(i))},
                {"type", "percept_arrived"},
                {"percept_id", "p-" + std::to_string(i)},
                {"source", kSources[i % 4]},
                {"percept_type", "message"},
                {"intensity", static_cast<double>(i % 100) / 100.0},
                {"text", "benchmark percept number " + std::to_string(i)},
                {"data", {{"n", i}}}};
      out << e.dump() << "\n";
    }
  }
  auto start = SteadyClock::now();
  uint64_t applied = Must(ReplaySqliteStore(log.string(), {(dir / "db").string(), full}), "replay");
  double us = Micros(SteadyClock::now() - start);
  std::printf("Replay      %-6s events=%zu applied=%llu  %.2f s  %.2f us/event\n",
              full ? "FULL" : "NORMAL", events, static_cast<unsigned long long>(applied), us / 1e6,
              us / static_cast<double>(events));
  fs::remove_all(dir);
}

int RunTimings() {
  for (bool full : {true, false})
    for (size_t live : {1000, 10000}) TimeAddPercept(full, live, 1000);
  for (bool full : {true, false}) TimeReplay(full, 100000);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--timings") return RunTimings();
  CheckStore(/*full=*/true);
  CheckStore(/*full=*/false);
  CheckReplay();
  std::printf("%s (%d failures)\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
