// limbic_bench: limbic against the designs a user would write instead (JSON
// files, SQLite), on the same seeded workloads, in one run. docs/performance.md
// carries the latest tables and explains each scenario.
//
//   limbic_bench [--quick] [--scenarios a,b] [--sizes 1000,10000] [--systems a,b]
//                [--reps N] [--budget SECONDS] [--replay-events N] [--seed N]
//                [--checkpoint-every N] [--checkpoint-keep N]  (timetravel's policy)
//                [--ingest-seconds S] [--ingest-turns N]  (timetravel's ingest)
//                [--dir DIR] [--out DIR]
//
// Scenarios: ingest, mixed, queries, recovery, replay, http, attention (and,
// when asked for, timetravel: bench/timetravel.h). Each system runs
// a warm-up, then --reps repetitions on a fresh store; a figure is the
// median of the repetitions, latencies are pooled over them.
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "bench/baselines/json_store.h"
#include "bench/baselines/sqlite_store.h"
#include "bench/driver.h"
#include "bench/http_ingest.h"
#include "bench/limbic_store.h"
#include "bench/report.h"
#include "bench/timetravel.h"
#include "state/commands.h"
#include "state/engine.h"
#include "state/replay.h"

namespace fs = std::filesystem;
using namespace limbic;
using namespace limbic::bench;
using SteadyClock = std::chrono::steady_clock;

namespace {

struct Options {
  std::vector<std::string> scenarios = {"ingest", "mixed", "queries",  "recovery",
                                        "replay", "http",  "attention"};
  std::vector<size_t> sizes = {1000, 10000, 100000};
  std::vector<std::string> systems;  // empty = each scenario's own list
  int reps = 3;
  double budget_s = 3;  // per repetition
  uint64_t replay_events = 1'000'000;
  // timetravel: the checkpoint policy (0 = the runtime's defaults).
  uint64_t checkpoint_every = 0;
  size_t checkpoint_keep = 0;
  double ingest_seconds = 0;  // timetravel's ingest turns (0 = its default)
  int ingest_turns = 0;
  uint64_t seed = 1;
  std::string dir = "bench-data";
  std::string out = "bench-results";
  std::string limbic_binary;
  bool quick = false;
};

// A benchmarked system: how to open its store in a dir, and replay a log.
struct System {
  std::string name;
  std::function<Result<std::unique_ptr<Store>>(const std::string& dir)> open;
  std::function<Result<uint64_t>(const std::string& log, const std::string& dir)> replay;
};

std::vector<System> AllSystems() {
  auto limbic = [](std::string name, state::Durability d, size_t window, bool digest = true) {
    return System{name,
                  [d, window](const std::string& dir) {
                    return OpenLimbicStore({dir, d, window});
                  },
                  [digest](const std::string& log, const std::string& dir) -> Result<uint64_t> {
                    state::ReplayOptions o;
                    o.from = log;
                    o.into = dir;
                    o.digest = digest;
                    auto r = state::Replay(o);
                    if (!r.ok()) return r.status();
                    return r->events;
                  }};
  };
  auto json_files = [](std::string name, bool fsync) {
    return System{name,
                  [fsync](const std::string& dir) { return OpenJsonStore({dir, fsync}); },
                  [fsync](const std::string& log, const std::string& dir) {
                    return ReplayJsonStore(log, {dir, fsync});
                  }};
  };
  auto sqlite = [](std::string name, bool full) {
    return System{name,
                  [full](const std::string& dir) { return OpenSqliteStore({dir, full}); },
                  [full](const std::string& log, const std::string& dir) {
                    return ReplaySqliteStore(log, {dir, full});
                  }};
  };
  return {limbic("limbic", state::Durability::kFsync, 64),
          // The replay without the digest `limbic replay` prints (it reads
          // every record once more; the other designs compute none).
          limbic("limbic-nodigest", state::Durability::kFsync, 64, false),
          limbic("limbic-1", state::Durability::kFsync, 1),
          limbic("limbic-none", state::Durability::kNone, 64),
          json_files("json-fsync", true),
          json_files("json", false),
          sqlite("sqlite-full", true),
          sqlite("sqlite-normal", false)};
}

// Which systems each scenario compares (when --systems does not say).
std::vector<std::string> DefaultSystems(const std::string& scenario) {
  if (scenario == "ingest" || scenario == "mixed")
    return {"limbic", "limbic-1", "limbic-none", "json-fsync", "json", "sqlite-full", "sqlite-normal"};
  if (scenario == "queries") return {"limbic", "json-fsync", "sqlite-full"};
  if (scenario == "recovery") return {"limbic", "json-fsync", "sqlite-full"};
  if (scenario == "replay") return {"limbic", "limbic-nodigest", "json", "sqlite-normal"};
  return {"limbic"};
}

// Equal durability: limbic with fsync against the designs that sync every
// command; limbic without against those that do not.
const std::vector<Comparison> kComparisons = {
    {"limbic", {"json-fsync", "sqlite-full"}, "durable"},
    {"limbic-none", {"json", "sqlite-normal"}, "relaxed"}};

Row MakeRow(std::string scenario, size_t size, std::string system, std::string unit) {
  Row row;
  row.scenario = std::move(scenario);
  row.size = size;
  row.system = std::move(system);
  row.unit = std::move(unit);
  return row;
}

[[noreturn]] void Die(const std::string& what, const Status& s) {
  std::fprintf(stderr, "limbic_bench: %s: %s\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}

std::string Fresh(const Options& o, const std::string& name) {
  std::string dir = o.dir + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// One repetition of a driven scenario on a fresh, preloaded store.
RunStats RunOnce(const Options& o, const System& sys, const Preload& preload,
                 const std::vector<Step>& steps, double budget) {
  std::string dir = Fresh(o, "run");
  auto store = sys.open(dir);
  if (!store.ok()) Die(sys.name + ": open", store.status());
  auto ids = (*store)->Preload(preload);
  if (!ids.ok()) Die(sys.name + ": preload", ids.status());
  Driver driver(**store, preload, *ids);
  auto stats = driver.Run(steps, budget);
  if (!stats.ok()) Die(sys.name + ": run", stats.status());
  return std::move(stats).value();
}

Row Driven(const Options& o, const std::string& scenario, size_t size, const System& sys,
           const std::vector<Step>& steps) {
  Preload preload = MakePreload(size, o.seed);
  (void)RunOnce(o, sys, preload, steps, o.budget_s / 4);  // warm-up
  Row row = MakeRow(scenario, size, sys.name, "ops/s");
  std::vector<double> all_latency;
  std::vector<std::pair<double, uint64_t>> reps;
  std::array<RunStats::PerOp, kOpCount> by_op{};
  for (int r = 0; r < o.reps; ++r) {
    RunStats s = RunOnce(o, sys, preload, steps, o.budget_s);
    reps.emplace_back(s.ops_per_s(), s.ops);
    row.reps.push_back(s.ops_per_s());
    all_latency.insert(all_latency.end(), s.latency_us.begin(), s.latency_us.end());
    for (size_t i = 0; i < kOpCount; ++i) {
      by_op[i].count += s.by_op[i].count;
      by_op[i].call_us += s.by_op[i].call_us;
    }
  }
  row.by_op = nlohmann::json::object();
  for (size_t i = 0; i < kOpCount; ++i) {
    if (by_op[i].count == 0) continue;
    double mean = by_op[i].call_us / static_cast<double>(by_op[i].count);
    row.by_op[OpName(static_cast<Op>(i))] = {{"count", by_op[i].count},
                                             {"mean_call_us", std::round(mean * 10) / 10}};
  }
  std::sort(reps.begin(), reps.end());
  row.median = reps[reps.size() / 2].first;
  row.ops = reps[reps.size() / 2].second;
  row.p50_us = Quantile(all_latency, 0.5);
  row.p99_us = Quantile(all_latency, 0.99);
  return row;
}

// Recovery: the time to open a store that holds `size` live percepts (and
// their threads and actions). limbic opens with none of its log applied to
// the projections (db/ removed: the worst case, e.g. after losing RocksDB's
// unsynced memtables) and, for reference, with all of it applied.
std::vector<Row> Recovery(const Options& o, size_t size, const System& sys) {
  Preload preload = MakePreload(size, o.seed);
  std::string dir = Fresh(o, "recovery");
  {
    auto store = sys.open(dir);
    if (!store.ok()) Die(sys.name + ": open", store.status());
    auto ids = (*store)->Preload(preload);
    if (!ids.ok()) Die(sys.name + ": preload", ids.status());
  }
  auto time_open = [&](bool unapplied) {
    std::vector<double> ms;
    for (int r = 0; r < o.reps + 1; ++r) {
      if (unapplied) fs::remove_all(state::DbDirPath(dir));
      auto t0 = SteadyClock::now();
      auto store = sys.open(dir);
      double took = std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
      if (!store.ok()) Die(sys.name + ": reopen", store.status());
      if (r > 0) ms.push_back(took);  // the first is the warm-up
    }
    return ms;
  };
  auto row_of = [&](std::string system, std::vector<double> ms, std::string note) {
    Row row = MakeRow("recovery", size, std::move(system), "ms");
    row.reps = ms;
    std::sort(ms.begin(), ms.end());
    row.median = ms[ms.size() / 2];
    row.note = std::move(note);
    return row;
  };
  if (sys.name.rfind("limbic", 0) == 0) {
    return {row_of(sys.name, time_open(true), "every event re-applied to the projections"),
            row_of(sys.name + " (applied)", time_open(false), "projections up to date")};
  }
  return {row_of(sys.name, time_open(false), "")};
}

// The log replayed by every system: the mixed agent loop's writes, made by
// limbic itself (so it is a valid log), exported as one file.
std::string MixedLog(const Options& o) {
  std::string path = o.dir + "/replay-" + std::to_string(o.replay_events) + ".jsonl";
  if (fs::exists(path)) return path;
  std::string dir = Fresh(o, "make-log");
  auto store = OpenLimbicStore({dir, state::Durability::kNone, 256});
  if (!store.ok()) Die("replay log", store.status());
  Preload none = MakePreload(0, o.seed);
  auto ids = (*store)->Preload(none);
  if (!ids.ok()) Die("replay log", ids.status());
  Driver driver(**store, none, *ids);
  // Writes are 74% of the mix and some make two events: generate steps
  // until the log is long enough.
  uint64_t steps_n = o.replay_events + o.replay_events / 3 + 1000;
  auto steps = MixedSteps(static_cast<size_t>(steps_n), o.seed);
  std::vector<Step> writes;
  for (const Step& s : steps)
    if (IsWrite(s.op)) writes.push_back(s);
  auto stats = driver.Run(writes, 1e9);
  if (!stats.ok()) Die("replay log", stats.status());
  store->reset();
  // Export exactly replay_events events.
  auto reader = state::LogReader::Open(state::EventsDirPath(dir), {});
  if (!reader.ok()) Die("replay log", reader.status());
  std::ofstream out(path + ".tmp");
  state::Event e;
  uint64_t n = 0;
  while (n < o.replay_events) {
    auto more = (*reader)->Next(&e);
    if (!more.ok()) Die("replay log", more.status());
    if (!*more) break;
    out << (*reader)->raw_line() << '\n';
    ++n;
  }
  out.close();
  fs::rename(path + ".tmp", path);
  fs::remove_all(dir);
  return path;
}

Row Replay(const Options& o, const System& sys, const std::string& log) {
  Row row = MakeRow("replay", o.replay_events, sys.name, "events/s");
  std::vector<double> rates;
  for (int r = 0; r < o.reps; ++r) {
    std::string dir = o.dir + "/replayed";
    fs::remove_all(dir);
    auto t0 = SteadyClock::now();
    auto n = sys.replay(log, dir);
    double s = std::chrono::duration<double>(SteadyClock::now() - t0).count();
    if (!n.ok()) Die(sys.name + ": replay", n.status());
    rates.push_back(static_cast<double>(*n) / s);
    row.ops = *n;
  }
  row.reps = rates;
  std::sort(rates.begin(), rates.end());
  row.median = rates[rates.size() / 2];
  return row;
}

Row Http(const Options& o) {
  HttpIngestOptions h;
  h.limbic = o.limbic_binary;
  h.dir = Fresh(o, "http");
  h.seconds = o.budget_s;
  h.warmup_s = o.quick ? 0.5 : 1;
  auto r = RunHttpIngest(h);
  if (!r.ok()) Die("http", r.status());
  Row row = MakeRow("http ingest (64 keep-alive connections)", 0, "limbic", "percepts/s");
  row.median = static_cast<double>(r->percepts) / r->seconds;
  row.reps = {row.median};
  row.ops = r->percepts;
  row.p50_us = Quantile(r->latency_us, 0.5);
  row.p99_us = Quantile(r->latency_us, 0.99);
  if (r->failed) row.note = std::to_string(r->failed) + " requests failed";
  return row;
}

// GET /v1/attention through the real binary on a state of `size` live
// percepts (half of them new) and size / 10 threads.
Row Attention(const Options& o, size_t size) {
  std::string dir = Fresh(o, "attention");
  Preload preload = MakePreload(size, o.seed);
  preload.threads = std::max<size_t>(10, size / 10);
  {
    auto store = OpenLimbicStore({dir + "/state", state::Durability::kFsync, 64});
    if (!store.ok()) Die("attention: open", store.status());
    auto ids = (*store)->Preload(preload);
    if (!ids.ok()) Die("attention: preload", ids.status());
  }
  AttentionOptions a;
  a.limbic = o.limbic_binary;
  a.dir = dir;
  a.requests = o.quick ? 300 : 2000;
  auto r = RunAttention(a);
  if (!r.ok()) Die("attention", r.status());
  Row row = MakeRow("attention", size, "limbic", "requests/s");
  double total_us = 0;
  for (double us : r->latency_us) total_us += us;
  row.median = total_us > 0 ? 1e6 * static_cast<double>(r->latency_us.size()) / total_us : 0;
  row.reps = {row.median};
  row.ops = r->latency_us.size();
  row.p50_us = Quantile(r->latency_us, 0.5);
  row.p99_us = Quantile(r->latency_us, 0.99);
  row.note = std::to_string(preload.threads) + " threads, " + std::to_string(r->unassigned) +
             " unassigned answered";
  if (r->failed) row.note += ", " + std::to_string(r->failed) + " requests failed";
  return row;
}

template <typename T>
std::vector<T> SplitList(const std::string& text, std::function<T(const std::string&)> parse) {
  std::vector<T> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(parse(item));
  return out;
}

int Usage() {
  std::fprintf(
      stderr,
      "usage: limbic_bench [--quick] [--scenarios "
      "ingest,mixed,queries,recovery,replay,http,attention,timetravel]\n"
      "                    [--sizes 1000,10000,100000] [--systems limbic,sqlite-full,...]\n"
      "                    [--reps N] [--budget SECONDS] [--replay-events N] [--seed N]\n"
      "                    [--checkpoint-every N] [--checkpoint-keep N]  (timetravel)\n"
      "                    [--ingest-seconds S] [--ingest-turns N]  (timetravel)\n"
      "                    [--dir DIR] [--out DIR]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.limbic_binary = (fs::path(argv[0]).parent_path() / "limbic").string();
  std::vector<std::string> args(argv + 1, argv + argc);
  // --quick first, so explicit options after it still win.
  for (const auto& a : args)
    if (a == "--quick") {
      o.quick = true;
      o.sizes = {1000, 10000};
      o.reps = 1;
      o.budget_s = 0.4;
      o.replay_events = 50000;
    }
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& k = args[i];
    if (k == "--quick") continue;
    if (i + 1 >= args.size()) return Usage();
    const std::string& v = args[++i];
    try {
      if (k == "--scenarios") o.scenarios = SplitList<std::string>(v, [](auto& s) { return s; });
      else if (k == "--sizes") o.sizes = SplitList<size_t>(v, [](auto& s) { return std::stoul(s); });
      else if (k == "--systems") o.systems = SplitList<std::string>(v, [](auto& s) { return s; });
      else if (k == "--reps") o.reps = std::max(1, std::stoi(v));
      else if (k == "--budget") o.budget_s = std::stod(v);
      else if (k == "--replay-events") o.replay_events = std::stoull(v);
      else if (k == "--checkpoint-every") o.checkpoint_every = std::stoull(v);
      else if (k == "--checkpoint-keep") o.checkpoint_keep = std::stoul(v);
      else if (k == "--ingest-seconds") o.ingest_seconds = std::stod(v);
      else if (k == "--ingest-turns") o.ingest_turns = std::max(1, std::stoi(v));
      else if (k == "--seed") o.seed = std::stoull(v);
      else if (k == "--dir") o.dir = v;
      else if (k == "--out") o.out = v;
      else return Usage();
    } catch (const std::exception&) {
      std::fprintf(stderr, "limbic_bench: bad value for %s: %s\n", k.c_str(), v.c_str());
      return 2;
    }
  }
  fs::create_directories(o.dir);
  fs::create_directories(o.out);
  std::map<std::string, System> systems;
  for (System& s : AllSystems()) systems.emplace(s.name, std::move(s));
  for (const auto& name : o.systems)
    if (!systems.count(name)) {
      std::fprintf(stderr, "limbic_bench: unknown system %s\n", name.c_str());
      return 2;
    }

  std::vector<Row> rows;
  auto report = [&](const Row& r) {
    std::fprintf(stderr, "%-10s %8zu %-20s %12.1f %s  p99 %.0f us  (%llu ops) %s\n",
                 r.scenario.c_str(), r.size, r.system.c_str(), r.median, r.unit.c_str(), r.p99_us,
                 static_cast<unsigned long long>(r.ops), r.note.c_str());
    rows.push_back(r);
  };
  for (const std::string& scenario : o.scenarios) {
    std::vector<std::string> names = o.systems.empty() ? DefaultSystems(scenario) : o.systems;
    if (scenario == "http") {
      report(Http(o));
      continue;
    }
    if (scenario == "attention") {
      for (size_t size : o.sizes) report(Attention(o, size));
      continue;
    }
    if (scenario == "timetravel") {
      TimeTravelOptions t;
      t.log = MixedLog(o);
      t.dir = o.dir + "/timetravel";
      t.seed = o.seed;
      t.limbic = o.limbic_binary;
      if (o.quick) t.every = 10000;
      if (o.checkpoint_every > 0) t.every = o.checkpoint_every;
      if (o.checkpoint_keep > 0) t.retention.keep = o.checkpoint_keep;
      if (o.ingest_seconds > 0) t.ingest_seconds = o.ingest_seconds;
      if (o.ingest_turns > 0) t.ingest_turns = o.ingest_turns;
      if (o.replay_events > 2'000'000) t.requests_off = 3;  // each a replay of the whole log
      for (const Row& row : RunTimeTravel(t)) report(row);
      continue;
    }
    if (scenario == "replay") {
      std::string log = MixedLog(o);
      for (const auto& name : names) report(Replay(o, systems.at(name), log));
      continue;
    }
    for (size_t size : o.sizes) {
      for (const auto& name : names) {
        const System& sys = systems.at(name);
        if (scenario == "recovery") {
          for (const Row& r : Recovery(o, size, sys)) report(r);
        } else if (scenario == "ingest") {
          report(Driven(o, scenario, size, sys,
                        std::vector<Step>(2'000'000, Step{Op::kAddPercept, 0, 0})));
        } else if (scenario == "mixed") {
          report(Driven(o, scenario, size, sys, MixedSteps(2'000'000, o.seed + 1)));
        } else if (scenario == "queries") {
          report(Driven(o, scenario, size, sys, QuerySteps(1'000'000, o.seed + 2)));
        } else {
          std::fprintf(stderr, "limbic_bench: unknown scenario %s\n", scenario.c_str());
          return 2;
        }
      }
    }
  }
  fs::remove_all(o.dir + "/run");
  fs::remove_all(o.dir + "/recovery");
  fs::remove_all(o.dir + "/replayed");
  fs::remove_all(o.dir + "/http");
  fs::remove_all(o.dir + "/attention");

  std::ofstream(o.out + "/results.json") << ToJson(rows).dump(2) << "\n";
  std::string md = MarkdownTables(rows, kComparisons);
  std::ofstream(o.out + "/results.md") << md;
  std::printf("%s", md.c_str());
  std::fprintf(stderr, "results: %s/results.json, %s/results.md\n", o.out.c_str(), o.out.c_str());
  return 0;
}
