// limbic_bench_json_check: a self-check of the JSON-files baseline
// (json_store.h), and a rough timing of its AddPercept.
//
//   limbic_bench_json_check [--dir BASE] [--time]
//
// Without --time: for fsync on and off, preloads 1,000 percepts / 50 threads
// / 100 actions into a fresh store under BASE (default: the temp dir), runs
// every operation against a model of what it should do, reopens the store
// and compares, and replays the store's own events.jsonl into a fresh dir
// and compares the files; then replays a hand-written limbic log. Prints one
// line per check; exits 1 if any failed. With --time: the mean, median and
// p90 of AddPercept with 1,000 and 10,000 live percepts, fsync on and off,
// and the time OpenJsonStore takes to load each store.
//
// Not a ctest test: it syncs files and, with --time, measures.
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench/baselines/json_store.h"
#include "state/recency.h"

using namespace limbic;
using namespace limbic::bench;
using Ids = std::vector<std::string>;

namespace {

int failures = 0;
std::vector<std::string> temp_dirs;  // removed when every check passed

void Check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

// The value, or the end of the run (nothing later makes sense without it).
template <typename T>
T Must(Result<T> r, const std::string& what) {
  if (!r.ok()) {
    std::printf("FAIL %s: %s\n", what.c_str(), r.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

// The ids of a read's records, in order.
Ids IdsOf(const std::vector<json>& records) {
  Ids ids;
  for (const json& r : records) ids.push_back(r.at("id").get<std::string>());
  return ids;
}
Ids IdsOf(Result<std::vector<json>> r, const std::string& what) { return IdsOf(Must(r, what)); }

void CheckError(const Status& s, Status::Code code, const std::string& names,
                const std::string& what) {
  Check(s.code() == code && s.message().find(names) != std::string::npos,
        what + " -> " + s.ToString());
}

std::string TempDir(const std::string& base) {
  std::string tmpl = base + "/limbic-json-XXXXXX";
  if (!mkdtemp(tmpl.data())) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  temp_dirs.push_back(tmpl);
  return tmpl;
}

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str(), nullptr, false);
}

std::map<std::string, json> FoldOutbox(const std::string& path) {
  std::map<std::string, json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line);
    out[j["id"].get<std::string>()].update(j);
  }
  return out;
}

size_t FileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
}

size_t Lines(const std::string& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

const char* kSources[] = {"github", "discord", "timer", "email"};

Preload MakePreload(size_t percepts, size_t threads, size_t actions) {
  Preload p;
  p.threads = threads;
  p.actions = actions;
  for (size_t i = 0; i < percepts; ++i) {
    p.percepts.push_back({kSources[i % 4], "message", static_cast<double>(i % 100) / 100.0,
                          "benchmark percept number " + std::to_string(i), json{{"n", i}}});
    bool assigned = threads > 0 && i % 3 == 0;
    p.assign.push_back(assigned ? static_cast<int>((i / 3) % threads) : -1);
    p.processed.push_back(assigned && i % 2 == 0);
  }
  return p;
}

// What the store should hold: percepts in arrival order, thread saliences.
struct Model {
  struct P {
    std::string id, source, status, thread;
  };
  std::vector<P> percepts;
  std::map<std::string, double> salience;

  Ids Newest(auto&& keep) const {
    Ids out;
    for (auto it = percepts.rbegin(); it != percepts.rend(); ++it)
      if (keep(*it)) out.push_back(it->id);
    return out;
  }
  P& Get(const std::string& id) {
    return *std::find_if(percepts.begin(), percepts.end(), [&](auto& p) { return p.id == id; });
  }
  // Effective salience at idle 0.
  double Effective(const std::string& t) const {
    size_t unprocessed = std::count_if(percepts.begin(), percepts.end(), [&](auto& p) {
      return p.thread == t && p.status == "assigned";
    });
    return state::EffectiveSalience(salience.at(t), 0, unprocessed, {});
  }
};

// The answers of every read, to compare a store before and after reopening.
json Snapshot(Store& s, const Ids& threads) {
  json snap;
  for (const char* src : kSources) {
    snap["unassigned"][src] = Must(s.UnassignedBySource(src, 0), "unassigned");
    snap["since"][src] = Must(s.PerceptsBySourceSince(src, 3'600'000, 0), "since");
  }
  for (const std::string& t : threads) snap["by_thread"][t] = Must(s.PerceptsByThread(t, 0), t);
  // effective_salience moves with the clock; the records' ids may not.
  Ids top = IdsOf(s.TopActiveThreads(0), "top");
  std::sort(top.begin(), top.end());  // order may shift as time passes; the set may not
  snap["top"] = top;
  snap["arousal"] = Must(s.Arousal(), "arousal");
  return snap;
}

void CheckStore(const std::string& base, bool fsync) {
  const std::string tag = fsync ? "[fsync] " : "[no fsync] ";
  const std::string dir = TempDir(base);
  JsonStoreOptions options{dir, fsync};
  auto store = Must(OpenJsonStore(options), tag + "open");
  Preload preload = MakePreload(1000, 50, 100);
  PreloadIds ids = Must(store->Preload(preload), tag + "preload");
  Check(ids.percepts.size() == 1000 && ids.threads.size() == 50 && ids.actions.size() == 100,
        tag + "preload returns 1000/50/100 ids");

  Model m;
  for (size_t i = 0; i < 1000; ++i) {
    int t = preload.assign[i];
    m.percepts.push_back({ids.percepts[i], kSources[i % 4],
                          t < 0                  ? "new"
                          : preload.processed[i] ? "processed"
                                                 : "assigned",
                          t < 0 ? "" : ids.threads[t]});
  }
  for (size_t i = 0; i < 50; ++i) m.salience[ids.threads[i]] = 0.5;  // Preload's contract

  auto check_reads = [&](const std::string& when) {
    bool ok = true;
    for (const char* src : kSources)
      ok &= IdsOf(store->UnassignedBySource(src, 0), "unassigned") ==
            m.Newest([&](auto& p) { return p.status == "new" && p.source == src; });
    Check(ok, tag + when + ": UnassignedBySource = the new percepts of each source, newest first");
    ok = true;
    for (const auto& [t, s] : m.salience)
      ok &= IdsOf(store->PerceptsByThread(t, 0), t) ==
            m.Newest([&](auto& p) { return p.thread == t; });
    Check(ok, tag + when + ": PerceptsByThread = each thread's percepts, newest first");
    auto top_records = Must(store->TopActiveThreads(0), "top");
    Ids top = IdsOf(top_records);
    ok = top.size() == m.salience.size();
    for (size_t i = 1; i < top.size(); ++i)
      ok &= m.Effective(top[i - 1]) >= m.Effective(top[i]) - 1e-6;
    for (const json& r : top_records)
      ok &= std::abs(r["effective_salience"].get<double>() -
                     m.Effective(r["id"].get<std::string>())) < 1e-3;
    Check(ok, tag + when + ": TopActiveThreads lists every active thread by effective salience");
  };
  check_reads("preloaded");

  auto first5 = Must(store->UnassignedBySource("github", 5), "limit");
  auto github = Must(store->UnassignedBySource("github", 0), "all");
  Check(first5.size() == 5 && std::equal(first5.begin(), first5.end(), github.begin()),
        tag + "a limit keeps the newest");
  // github percepts are i % 4 == 0, new when not i % 3 == 0: the newest is 992.
  const json& r992 = first5.front();
  Check(r992["id"] == ids.percepts[992] && r992["source"] == "github" &&
            r992["type"] == "message" && r992["intensity"] == 0.92 && r992["ts"].is_string() &&
            r992["thread_id"].is_null() && r992["status"] == "new" &&
            r992["text"] == "benchmark percept number 992" && r992["data"] == json{{"n", 992}},
        tag + "a percept record is whole: " + r992.dump());
  Check(IdsOf(store->PerceptsBySourceSince("discord", 60'000, 0), "since") ==
            m.Newest([](auto& p) { return p.source == "discord"; }),
        tag + "PerceptsBySourceSince(1 min) = every discord percept, newest first");
  Check(Must(store->Arousal(), "arousal") ==
            json{{"level", 0.5},
                 {"factors",
                  {{"user_waiting", false}, {"recent_errors", 0}, {"budget_pressure", false}}}},
        tag + "Arousal() is the default before any arousal event");

  size_t acks = 0, writes = 0;
  Ack ack = [&] { ++acks; };
  Ids added;
  for (int i = 0; i < 4; ++i) {
    added.push_back(Must(store->AddPercept({"github", "message", 0.6, "hello", {}}, ack), "add"));
    ++writes;
    m.percepts.push_back({added.back(), "github", "new", ""});
  }
  auto newest = Must(store->UnassignedBySource("github", 1), "newest");
  Check(IdsOf(newest) == Ids{added.back()} && newest[0]["text"] == "hello" &&
            newest[0]["data"] == json::object() && newest[0]["intensity"] == 0.6,
        tag + "AddPercept: the new percept is the newest unassigned one of its source");
  // A copy: changing it changes nothing in the store.
  newest[0]["text"] = "changed";
  Check(Must(store->UnassignedBySource("github", 1), "newest")[0]["text"] == "hello",
        tag + "reads return copies of the records");
  Check(added.back() == "p-" + std::to_string(1000 + 50 + 100 + 4),
        tag + "ids come from one counter (" + added.back() + ")");

  const std::string low = Must(store->CreateThread("low", 0.0, ack), "create");
  ++writes;
  m.salience[low] = 0.0;
  json low_record = Must(store->TopActiveThreads(0), "top").back();
  Check(low_record["id"] == low && low_record["goal"] == "low" && low_record["salience"] == 0.0 &&
            low_record["percepts"] == json::array() && low_record["state"].is_object() &&
            low_record["effective_salience"] == 0.0,
        tag + "CreateThread(salience 0): last in TopActiveThreads: " + low_record.dump());
  for (int i = 0; i < 3; ++i) {
    Status s = store->AssignPercept(added[i], low, ack);
    ++writes;
    Check(s.ok(), tag + "AssignPercept " + added[i] + " -> " + low);
    m.Get(added[i]).status = "assigned";
    m.Get(added[i]).thread = low;
  }
  auto by_low = Must(store->PerceptsByThread(low, 1), "by thread");
  Check(IdsOf(by_low) == Ids{added[2]} && by_low[0]["status"] == "assigned" &&
            by_low[0]["thread_id"] == low,
        tag + "after AssignPercept the percept is the newest of PerceptsByThread");
  Check(IdsOf(store->UnassignedBySource("github", 1), "newest") == Ids{added[3]},
        tag + "after AssignPercept it is no longer unassigned");
  Ids top = IdsOf(store->TopActiveThreads(0), "top");
  size_t rank = std::find(top.begin(), top.end(), low) - top.begin();
  size_t higher = std::count_if(m.salience.begin(), m.salience.end(),
                                [&](auto& kv) { return m.Effective(kv.first) > 0.3 + 1e-6; });
  Check(rank == higher, tag + "3 unprocessed percepts lift it to rank " + std::to_string(rank) +
                            " (expected " + std::to_string(higher) + ")");
  for (int i = 0; i < 3; ++i) {
    Check(store->ProcessPercept(added[i], ack).ok(), tag + "ProcessPercept " + added[i]);
    ++writes;
    m.Get(added[i]).status = "processed";
  }
  Check(Must(store->TopActiveThreads(0), "top").back()["id"] == low,
        tag + "after ProcessPercept they no longer count as unprocessed: last again");
  Check(Must(store->PerceptsByThread(low, 0), "by thread").size() == 3,
        tag + "processed percepts stay in PerceptsByThread");

  Check(store->UpdateThreadState(low, {{"phase", "drafting"}, {"context", {{"k", 1}}}}, ack).ok() &&
            store->UpdateThreadState(low, {{"context", {{"k", nullptr}, {"j", 2}}}}, ack).ok(),
        tag + "UpdateThreadState twice");
  writes += 2;
  json on_disk = ReadJson(dir + "/threads.json");
  json state = on_disk["threads"].back()["state"];
  Check(on_disk["threads"].size() == 51 &&
            state == json{{"phase", "drafting"}, {"context", {{"j", 2}}}, {"next_step", nullptr}},
        tag + "threads.json holds the merged state " + state.dump());
  Check(Must(store->TopActiveThreads(0), "top").back()["state"] == state,
        tag + "TopActiveThreads returns the thread with that state");

  const std::string action =
      Must(store->EnqueueAction("chat", "send_message", {{"text", "hi"}}, low, ack), "enqueue");
  Check(store->CompleteAction(action, ack).ok() && store->CompleteAction(ids.actions[0], ack).ok(),
        tag + "CompleteAction of a new and a preloaded pending action");
  writes += 3;
  auto outbox = FoldOutbox(dir + "/outbox.jsonl");
  Check(outbox.size() == 101 && outbox[action]["status"] == "complete" &&
            outbox[action]["attempts"] == 1 && outbox[ids.actions[1]]["status"] == "complete" &&
            outbox[ids.actions[2]]["status"] == "pending",
        tag + "outbox.jsonl folds to 101 actions with the right statuses");

  const size_t events_size = FileSize(dir + "/events.jsonl");
  const size_t outbox_size = FileSize(dir + "/outbox.jsonl");
  CheckError(store->CompleteAction(action, ack), Status::Code::kFailedPrecondition, action,
             tag + "CompleteAction twice");
  CheckError(store->CompleteAction(ids.actions[1], ack), Status::Code::kFailedPrecondition,
             ids.actions[1], tag + "CompleteAction of a preloaded complete action");
  CheckError(store->CompleteAction("a-999999", ack), Status::Code::kNotFound, "a-999999",
             tag + "CompleteAction of an unknown id");
  CheckError(store->AssignPercept(added[3], "t-999999", ack), Status::Code::kNotFound, "t-999999",
             tag + "AssignPercept to an unknown thread");
  CheckError(store->ProcessPercept(added[0], ack), Status::Code::kFailedPrecondition, added[0],
             tag + "ProcessPercept twice");
  CheckError(store->UpdateThreadState("t-999999", {{"phase", "x"}}, ack), Status::Code::kNotFound,
             "t-999999", tag + "UpdateThreadState of an unknown thread");
  CheckError(store->EnqueueAction("chat", "x", {}, "t-999999", ack).status(),
             Status::Code::kNotFound, "t-999999", tag + "EnqueueAction on an unknown thread");
  CheckError(store->AddPercept({"github", "message", 1.5, "", {}}, ack).status(),
             Status::Code::kInvalidArgument, "intensity", tag + "AddPercept intensity 1.5");
  Check(FileSize(dir + "/events.jsonl") == events_size &&
            FileSize(dir + "/outbox.jsonl") == outbox_size,
        tag + "failed writes wrote nothing");
  Check(acks == writes, tag + "every successful write acked once (" + std::to_string(acks) + ")");
  check_reads("after writes");

  // Recovery: the state survives a reopen, and the counter continues.
  Ids threads = ids.threads;
  threads.push_back(low);
  json before = Snapshot(*store, threads);
  store.reset();
  // A crash part way through an append leaves a torn last line; open trims it.
  const size_t whole_events = FileSize(dir + "/events.jsonl");
  const size_t whole_outbox = FileSize(dir + "/outbox.jsonl");
  std::ofstream(dir + "/events.jsonl", std::ios::app) << R"({"ts":"2026-)";
  std::ofstream(dir + "/outbox.jsonl", std::ios::app) << R"({"id":"a-1","sta)";
  store = Must(OpenJsonStore(options), tag + "reopen");
  Check(FileSize(dir + "/events.jsonl") == whole_events &&
            FileSize(dir + "/outbox.jsonl") == whole_outbox,
        tag + "reopened: torn last lines of events.jsonl and outbox.jsonl trimmed");
  Check(Snapshot(*store, threads) == before, tag + "reopened: every read answers as before");
  check_reads("reopened");
  std::string next = Must(store->AddPercept({"email", "message", 0.1, "", {}}, nullptr), "add");
  // The last id written is `action`; failed writes used ids but wrote nothing.
  Check(next == "p-" + std::to_string(std::stoull(action.substr(2)) + 1),
        tag + "reopened: the id counter continues after the highest on disk (" + action + " -> " +
            next + ")");

  // Replaying the store's own events.jsonl rebuilds the same files.
  const std::string rebuilt = TempDir(base) + "/replayed";
  uint64_t skipped = 99;
  uint64_t applied =
      Must(ReplayJsonStore(dir + "/events.jsonl", {rebuilt, fsync}, &skipped), "replay own log");
  Check(applied == Lines(dir + "/events.jsonl") && skipped == 0,
        tag + "ReplayJsonStore of events.jsonl applies all " + std::to_string(applied) + " events");
  bool same = true;
  for (const char* f : {"/percepts.json", "/threads.json", "/arousal.json"})
    same &= ReadJson(dir + f) == ReadJson(rebuilt + f);
  Check(same && FoldOutbox(dir + "/outbox.jsonl") == FoldOutbox(rebuilt + "/outbox.jsonl"),
        tag + "the replayed dir has the same percepts, threads, arousal and outbox");
}

void CheckReplay(const std::string& base) {
  const std::string log = TempDir(base) + "/events.jsonl";
  std::ofstream(log)
      << R"({"v":1,"seq":1,"ts":"2020-01-01T00:00:00.000Z","type":"percept_arrived","percept_id":"p-1","source":"github","percept_type":"issues.opened","intensity":0.7,"text":"old crash","data":{}})"
         "\n"
      << R"({"v":1,"seq":2,"ts":"2020-01-01T00:00:01Z","type":"thread_created","thread_id":"t-2","goal":"triage","salience":0.4})"
         "\n"
      << R"({"v":1,"seq":3,"ts":"2020-01-01T00:00:02.000Z","type":"percept_assigned","percept_id":"p-1","thread_id":"t-2"})"
         "\n"
      << R"({"v":1,"seq":4,"ts":"2020-01-01T00:00:03.000Z","type":"reflex_fired","reflex_id":"r-1","percept_id":"p-1","caused":[3]})"
         "\n"
      << R"({"v":1,"seq":5,"ts":"2020-01-01T00:00:04.000Z","type":"thread_updated","thread_id":"t-2","state":{"phase":"drafting"}})"
         "\n"
      << R"({"v":1,"seq":6,"ts":"2020-01-01T00:00:05.000Z","type":"arousal_set","level":0.7})"
         "\n"
      << R"({"v":1,"seq":7,"ts":"2020-01-01T00:00:06.000Z","type":"action_enqueued","action_id":"a-7","effector":"github","action_type":"comment","payload":{"body":"on it"},"idempotency_key":"k7","thread_id":"t-2"})"
         "\n"
      << R"({"v":1,"seq":8,"ts":"2020-01-01T00:00:07.000Z","type":"action_sent","action_id":"a-7","attempt":1})"
         "\n"
      << R"({"v":1,"seq":9,"ts":"2020-01-01T00:00:08.000Z","type":"action_complete","action_id":"a-7","attempt":1})"
         "\n"
      << R"({"v":1,"seq":10,"ts":"2020-01-01T00:00:09.000Z","type":"percept_arrived","percept_id":"p-10","source":"github","percept_type":"push","intensity":0.2})"
         "\n"
      << R"({"v":1,"seq":11,"ts":"2020-01-01T00:00:10.000Z","type":"percept_processed","percept_id":"p-1"})"
         "\n"
      << R"({"v":1,"seq":12,"ts":"2020-01-01T00:00:1)";  // torn
  const std::string dir = TempDir(base) + "/state";
  uint64_t skipped = 0;
  uint64_t applied = Must(ReplayJsonStore(log, {dir, true}, &skipped), "replay");
  Check(applied == 10 && skipped == 1,
        "[replay] 10 events applied, reflex_fired skipped, torn last line ignored");
  auto store = Must(OpenJsonStore({dir, true}), "open replayed");
  auto p10 = Must(store->UnassignedBySource("github", 0), "");
  auto by_t2 = Must(store->PerceptsByThread("t-2", 0), "");
  Check(IdsOf(p10) == Ids{"p-10"} && IdsOf(by_t2) == Ids{"p-1"} &&
            IdsOf(store->TopActiveThreads(0), "") == Ids{"t-2"},
        "[replay] unassigned [p-10], t-2 has [p-1], t-2 is the active thread");
  Check(p10[0]["text"] == "" && p10[0]["data"] == json::object() &&
            p10[0]["ts"] == "2020-01-01T00:00:09.000Z" && by_t2[0]["text"] == "old crash" &&
            by_t2[0]["status"] == "processed",
        "[replay] records: p-10 with text \"\" and data {}, p-1 processed with its text");
  Check(Must(store->PerceptsBySourceSince("github", 3'600'000, 0), "").empty() &&
            IdsOf(store->PerceptsBySourceSince("github", TimeMs{20} * 365 * 86'400'000, 0), "") ==
                Ids({"p-10", "p-1"}),
        "[replay] 2020 percepts are older than an hour, younger than 20 years");
  Check(Must(store->Arousal(), "")["level"] == 0.7, "[replay] arousal_set: level 0.7");
  Check(ReadJson(dir + "/threads.json")["threads"][0]["state"]["phase"] == "drafting" &&
            FoldOutbox(dir + "/outbox.jsonl")["a-7"]["status"] == "complete" &&
            Lines(dir + "/events.jsonl") == 11,
        "[replay] state phase drafting, a-7 complete, events.jsonl has the 11 whole lines");
  Check(Must(store->AddPercept({"timer", "tick", 0.1, "", {}}, nullptr), "") == "p-11",
        "[replay] the next id follows the log's highest (p-11)");

  CheckError(ReplayJsonStore(log, {dir, true}).status(), Status::Code::kFailedPrecondition, dir,
             "[replay] into a non-empty dir");
  const std::string bad = TempDir(base) + "/bad.jsonl";
  std::ofstream(bad)
      << R"({"ts":"2020-01-01T00:00:00Z","type":"arousal_set","level":0.2})"
         "\n"
      << R"({"ts":"2020-01-01T00:00:00Z","type":"percept_assigned","percept_id":"p-1","thread_id":"t-1"})"
         "\n";
  CheckError(ReplayJsonStore(bad, {TempDir(base) + "/x", true}).status(), Status::Code::kCorruption,
             "line 2", "[replay] an event naming an unknown percept");
  std::ofstream(bad) << "{not json\n"
                     << R"({"ts":"2020-01-01T00:00:00Z","type":"arousal_set","level":0.2})"
                        "\n";
  CheckError(ReplayJsonStore(bad, {TempDir(base) + "/y", true}).status(), Status::Code::kCorruption,
             "line 1", "[replay] a line that is not JSON");
}

// ---- --time

double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

void TimeAddPercept(const std::string& base, size_t live, bool fsync) {
  const std::string dir = TempDir(base);
  auto store = Must(OpenJsonStore({dir, fsync}), "open");
  Must(store->Preload(MakePreload(live, 50, 100)), "preload");
  const int n = fsync ? 40 : 200;
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    auto start = std::chrono::steady_clock::now();
    Must(store->AddPercept({kSources[i % 4], "message", 0.5, "timed percept " + std::to_string(i),
                            json{{"n", i}}},
                           nullptr),
         "add");
    ms.push_back(Ms(std::chrono::steady_clock::now() - start));
  }
  double mean = 0;
  for (double v : ms) mean += v / n;
  std::sort(ms.begin(), ms.end());
  store.reset();
  auto start = std::chrono::steady_clock::now();
  store = Must(OpenJsonStore({dir, fsync}), "reopen");
  double open_ms = Ms(std::chrono::steady_clock::now() - start);
  std::printf(
      "AddPercept  %6zu live  fsync=%-3s  mean %8.3f ms  median %8.3f ms  p90 %8.3f ms"
      "  (%d calls; percepts.json %zu KB; OpenJsonStore %.1f ms)\n",
      live, fsync ? "on" : "off", mean, ms[ms.size() / 2], ms[ms.size() * 9 / 10], n,
      FileSize(dir + "/percepts.json") / 1024, open_ms);
  std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  std::string base = std::filesystem::temp_directory_path().string();
  bool time = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--dir" && i + 1 < argc) {
      base = argv[++i];
    } else if (arg == "--time") {
      time = true;
    } else {
      std::fprintf(stderr, "usage: %s [--dir BASE] [--time]\n", argv[0]);
      return 2;
    }
  }
  if (time) {
    for (bool fsync : {true, false})
      for (size_t live : {1000, 10000}) TimeAddPercept(base, live, fsync);
    return 0;
  }
  CheckStore(base, true);
  CheckStore(base, false);
  CheckReplay(base);
  if (failures == 0)
    for (const std::string& d : temp_dirs) std::filesystem::remove_all(d);
  std::printf("%s: %d failed\n", failures ? "FAILED" : "PASSED", failures);
  return failures ? 1 : 0;
}
