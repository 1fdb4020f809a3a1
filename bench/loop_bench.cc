// The core loop's figures (docs/performance.md), printed as JSON:
//
//   reflexes  MatchPercept latency at 1,000 and 10,000 rules (p50/p99):
//             rules from reflexes/bench_rules.h, percepts aimed at random
//             buckets, a third of them matching a rule's word; "spread"
//             over 50 sources x 20 types, and the worst case "one_bucket"
//             where every rule watches the same (source, type). Also the
//             time to parse and put the rules (load_ms: a rule's atoms and
//             anchored forms are made by Put), to build the index on the
//             first percept (build_ms), and a second pass over the same
//             percepts (the first pass is the figure; a gap between the two
//             is cost paid once per rule or text shape, e.g. a lazily built
//             DFA).
//   outbox    commit-to-dispatch: from the ack of an action_enqueued
//             (durable and applied) to the effector's Deliver call, through
//             the real Outbox (which logs action_sent durably first).
//   http      percepts/s through the real `limbic run` binary over
//             keep-alive connections, durability fsync.
//   memory_ingest  a 4,000-file POST /v1/memory/ingest through the real
//             binary, and GET /healthz latency (p50/p99/max) while it runs.
//   consolidate  a consolidation pass through the real binary over
//             1,000,000 expired percepts (--consolidate-percepts), which it
//             expires and digests into the archive: the pass's time,
//             GET /healthz latency (p50/p99/max) while it runs, the
//             runtime's RSS, and the percepts left in the pool after.
//   batch     HTTP ingest in batches: POST /v1/percepts/batch of --batch
//             (100) percepts over --batch-connections (8) keep-alive
//             connections, fsync, against the in-process engine in the same
//             run (limbic_bench's "limbic" system: the Engine with fsync and
//             64 writes in flight, driving the ingest workload), in turns,
//             --reps (3) times each: the ratio of the medians.
//   keep_pace HTTP ingest at full speed for --keep-pace-seconds (120) with
//             expiry and consolidation running every 5 s (percepts expire
//             20 s after they arrive): the percepts left in the pool at the
//             end against those ingested. A pool that expiry keeps up with
//             holds about 30 s of ingest, whatever the run's length.
#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <spdlog/sinks/null_sink.h>

#include "bench/driver.h"
#include "bench/http_ingest.h"
#include "bench/limbic_store.h"
#include "bench/workload.h"
#include "bench/report.h"
#include "reflexes/bench_rules.h"
#include "reflexes/engine.h"
#include "runtime/outbox.h"
#include "state/commands.h"
#include "state/projection.h"

using namespace limbic;
using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

namespace {

double Us(SteadyClock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

json BenchReflexes(size_t n_rules, bool one_bucket) {
  const size_t sources = one_bucket ? 1 : 50, types = one_bucket ? 1 : 20;
  reflexes::ReflexEngine engine;
  reflexes::RuleContext ctx{{"log"}};
  auto rules = reflexes::GenerateRules(n_rules, {"log"}, sources, types);
  auto t_load = SteadyClock::now();
  for (const json& r : rules) (void)engine.Put(*reflexes::ParseRule(r, ctx));
  double load_ms = Us(SteadyClock::now() - t_load) / 1000;
  std::mt19937 rng(42);
  std::vector<json> percepts;
  for (int i = 0; i < 20000; ++i) {
    size_t target = rng() % n_rules;
    bool hit = i % 3 == 0;
    std::string text = "issue opened by someone about " + std::string(hit ? "w" + std::to_string(target) : "nothing") +
                       " and some more words to scan through in the text";
    percepts.push_back({{"id", "p-" + std::to_string(i)}, {"source", "s" + std::to_string(target % sources)},
                        {"type", "t" + std::to_string(target % types)}, {"text", text}, {"intensity", 0.5},
                        {"data", json::object()}});
  }
  auto t_build = SteadyClock::now();
  (void)engine.MatchPercept(percepts[0], 0.5, 0);  // build the buckets
  double build_ms = Us(SteadyClock::now() - t_build) / 1000;
  auto stats = engine.index_stats();
  std::vector<double> lat, second;
  size_t matched = 0;
  for (const json& p : percepts) {
    auto t0 = SteadyClock::now();
    matched += engine.MatchPercept(p, 0.5, 0).size();
    lat.push_back(Us(SteadyClock::now() - t0));
  }
  for (const json& p : percepts) {
    auto t0 = SteadyClock::now();
    (void)engine.MatchPercept(p, 0.5, 0);
    second.push_back(Us(SteadyClock::now() - t0));
  }
  return {{"rules", n_rules},
          {"layout", one_bucket ? "one_bucket" : "spread"},
          {"buckets", stats.buckets},
          {"sets", stats.sets},
          {"prefiltered", stats.prefiltered},
          {"load_ms", load_ms},
          {"build_ms", build_ms},
          {"percepts", percepts.size()},
          {"matched", matched},
          {"p50_us", bench::Quantile(lat, 0.5)},
          {"p99_us", bench::Quantile(lat, 0.99)},
          {"second_pass",
           {{"p50_us", bench::Quantile(second, 0.5)}, {"p99_us", bench::Quantile(second, 0.99)}}}};
}

// Completes at once, recording when each delivery started.
class TimingEffector final : public effectors::Effector {
 public:
  explicit TimingEffector(boost::asio::io_context& ioc) : ioc_(ioc) {}
  const std::string& name() const override { return name_; }
  void Deliver(const effectors::Delivery& d, std::function<void(effectors::Outcome)> done) override {
    dispatched[d.action_id] = SteadyClock::now();
    boost::asio::post(ioc_, [done] { done(effectors::Outcome::Complete()); });
  }
  std::map<std::string, SteadyClock::time_point> dispatched;

 private:
  std::string name_ = "local";
  boost::asio::io_context& ioc_;
};

json BenchOutbox(const std::string& dir, int actions) {
  boost::asio::io_context ioc;
  // Completions arrive from the log's writer thread: keep the context alive
  // while it waits for them.
  auto guard = boost::asio::make_work_guard(ioc);
  state::EngineOptions o;
  o.state_dir = dir;
  o.post = [&ioc](std::function<void()> f) { boost::asio::post(ioc, std::move(f)); };
  auto engine = state::Engine::Open(o);
  if (!engine.ok()) throw std::runtime_error(engine.status().ToString());
  auto log = std::make_shared<spdlog::logger>("b", std::make_shared<spdlog::sinks::null_sink_mt>());
  std::map<std::string, runtime::Outbox::EffectorSlot> effectors;
  auto* timing = new TimingEffector(ioc);
  effectors.emplace("local", runtime::Outbox::EffectorSlot{std::unique_ptr<effectors::Effector>(timing), {}});
  runtime::Metrics metrics;
  runtime::Outbox outbox(ioc, **engine, effectors, runtime::OutboxConfig{}, metrics, log);
  (*engine)->AddListener([&](std::span<const state::Event> ev) { outbox.OnEvents(ev); });
  std::map<std::string, SteadyClock::time_point> committed;
  int next = 0;
  // One action at a time, so each latency is the loop's, not a queue's.
  std::function<void()> enqueue = [&] {
    if (next == actions) return;
    ++next;
    auto ev = state::BuildActionEnqueue({{"effector", "local"}, {"type", "t"}}, (*engine)->next_seq());
    (void)(*engine)->Submit(std::move(ev).value(), [&](const Status&, std::span<const state::Event> e) {
      committed[e.front().Str("action_id")] = SteadyClock::now();
    });
  };
  outbox.on_dispatch = [&](const std::string&) { boost::asio::post(ioc, enqueue); };
  enqueue();
  while (static_cast<int>(timing->dispatched.size()) < actions) ioc.run_one();
  (void)(*engine)->Flush();
  ioc.poll();
  std::vector<double> lat;
  for (auto& [id, t1] : timing->dispatched) lat.push_back(Us(t1 - committed[id]));
  return {{"actions", actions}, {"p50_us", bench::Quantile(lat, 0.5)}, {"p99_us", bench::Quantile(lat, 0.99)}};
}

json BenchHttp(const std::string& limbic, const std::string& dir, int connections, int seconds) {
  bench::HttpIngestOptions o;
  o.limbic = limbic;
  o.dir = dir;
  o.connections = connections;
  o.seconds = seconds;
  auto r = bench::RunHttpIngest(o);
  if (!r.ok()) throw std::runtime_error(r.status().ToString());
  return {{"connections", connections}, {"seconds", r->seconds}, {"percepts", r->percepts},
          {"percepts_per_s", static_cast<double>(r->percepts) / r->seconds}, {"failed", r->failed},
          {"p50_us", bench::Quantile(r->latency_us, 0.5)}, {"p99_us", bench::Quantile(r->latency_us, 0.99)},
          {"durability", "fsync"}};
}

// In-process ingest (the Engine, fsync, 64 in flight) against HTTP batches,
// in turns: percepts/s of each repetition and the ratio of the medians.
json BenchBatch(const std::string& limbic, const std::string& dir, int connections, int batch,
                int seconds, int reps) {
  std::vector<double> engine_rates, http_rates;
  json http_runs = json::array();
  const std::vector<bench::Step> steps(5'000'000, bench::Step{bench::Op::kAddPercept, 0, 0});
  const bench::Preload preload = bench::MakePreload(1000, 7);
  for (int r = 0; r < reps; ++r) {
    {
      const std::string d = dir + "/engine-" + std::to_string(r);
      auto store = bench::OpenLimbicStore({d, state::Durability::kFsync, 64});
      if (!store.ok()) throw std::runtime_error(store.status().ToString());
      auto ids = (*store)->Preload(preload);
      if (!ids.ok()) throw std::runtime_error(ids.status().ToString());
      bench::Driver driver(**store, preload, *ids);
      auto stats = driver.Run(steps, seconds);
      if (!stats.ok()) throw std::runtime_error(stats.status().ToString());
      engine_rates.push_back(stats->ops_per_s());
      store->reset();
      std::filesystem::remove_all(d);
    }
    bench::HttpIngestOptions o;
    o.limbic = limbic;
    o.dir = dir + "/http-" + std::to_string(r);
    std::filesystem::create_directories(o.dir);
    o.connections = connections;
    o.seconds = seconds;
    o.batch = batch;
    o.extra_config = {{"api", {{"body_limit", 1 << 24}}}};
    auto res = bench::RunHttpIngest(o);
    if (!res.ok()) throw std::runtime_error(res.status().ToString());
    http_rates.push_back(static_cast<double>(res->percepts) / res->seconds);
    http_runs.push_back({{"percepts_per_s", http_rates.back()}, {"failed", res->failed},
                         {"request_p99_us", bench::Quantile(res->latency_us, 0.99)}});
    std::filesystem::remove_all(o.dir);
  }
  const double engine = bench::Quantile(engine_rates, 0.5), http = bench::Quantile(http_rates, 0.5);
  return {{"batch", batch}, {"connections", connections}, {"durability", "fsync"},
          {"engine_percepts_per_s", engine_rates}, {"http_percepts_per_s", http_rates},
          {"http_runs", http_runs}, {"engine_median", engine}, {"http_median", http},
          {"ratio", engine > 0 ? http / engine : 0}};
}

// GET /healthz's answers while something else ran: how many, how many
// failed, their latency's p50, p99 and max.
json Healthz(const std::vector<double>& ms, uint64_t failed) {
  return {{"answered", ms.size()},
          {"failed", failed},
          {"p50_ms", bench::Quantile(ms, 0.5)},
          {"p99_ms", bench::Quantile(ms, 0.99)},
          {"max_ms", ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end())}};
}

json BenchIngestHealth(const std::string& limbic, const std::string& dir, int files) {
  bench::IngestHealthOptions o;
  o.limbic = limbic;
  o.dir = dir;
  o.files = files;
  auto r = bench::RunIngestHealth(o);
  if (!r.ok()) throw std::runtime_error(r.status().ToString());
  return {{"files", files}, {"file_bytes", o.file_bytes}, {"ingest_status", r->ingest_status},
          {"files_ingested", r->files_ingested}, {"ingest_s", r->ingest_seconds},
          {"healthz", Healthz(r->healthz_ms, r->healthz_failed)}};
}

json BenchConsolidateHealth(const std::string& limbic, const std::string& dir, size_t percepts) {
  bench::ConsolidateHealthOptions o;
  o.limbic = limbic;
  o.dir = dir;
  o.percepts = percepts;
  auto r = bench::RunConsolidateHealth(o);
  if (!r.ok()) throw std::runtime_error(r.status().ToString());
  return {{"percepts", percepts}, {"load_s", r->load_seconds}, {"status", r->status},
          {"answer", r->answer}, {"pass_s", r->pass_seconds},
          {"events_per_s", static_cast<double>(r->answer.value("expired", 0) + r->answer.value("entries", 0)) /
                               r->pass_seconds},
          {"healthz", Healthz(r->healthz_ms, r->healthz_failed)},
          {"rss_before_mib", r->rss_before_mib}, {"rss_max_mib", r->rss_max_mib},
          {"rss_after_mib", r->rss_after_mib}, {"percepts_left", r->percepts_left}};
}

json BenchKeepPace(const std::string& limbic, const std::string& dir, int connections, int seconds) {
  bench::HttpIngestOptions o;
  o.limbic = limbic;
  o.dir = dir;
  o.connections = connections;
  o.seconds = seconds;
  o.warmup_s = 0;
  o.extra_config = {{"recency", {{"percept_half_life", "10s"}}},  // 0.5 falls below 0.2 in 13 s
                    {"percepts", {{"expire_after", "20s"}}},
                    {"archive", {{"consolidate_every", "5s"}, {"percepts_after", "20s"}, {"rollup", false}}},
                    {"world", {{"daily", false}}}};
  auto r = bench::RunHttpIngest(o);
  if (!r.ok()) throw std::runtime_error(r.status().ToString());
  state::ProjectionOptions po;
  po.path = dir + "/state/db";
  po.read_only = true;
  auto projection = state::Projection::Open(po);
  if (!projection.ok()) throw std::runtime_error(projection.status().ToString());
  auto left_or = (*projection)->Count(state::Pool::kPercepts);
  if (!left_or.ok()) throw std::runtime_error(left_or.status().ToString());
  const size_t left = *left_or;
  const double rate = static_cast<double>(r->percepts) / r->seconds;
  return {{"seconds", r->seconds}, {"percepts", r->percepts}, {"percepts_per_s", rate},
          {"failed", r->failed}, {"p99_us", bench::Quantile(r->latency_us, 0.99)},
          {"percepts_left", left}, {"left_in_seconds_of_ingest", static_cast<double>(left) / rate}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "bench-loop-data";
  std::string limbic = std::filesystem::path(argv[0]).parent_path() / "limbic";
  int connections = 64, seconds = 5, ingest_files = 4000;
  size_t consolidate_percepts = 1'000'000;
  int keep_pace_seconds = 120;
  int batch = 100, batch_connections = 8, reps = 3;
  std::string only;
  bool keep = false;
  auto usage = [](FILE* to) {
    std::fprintf(to,
                 "usage: limbic_loop_bench [--dir D] [--connections N] [--seconds S] "
                 "[--ingest-files N] [--consolidate-percepts N] [--keep-pace-seconds S] "
                 "[--batch N] [--batch-connections N] [--reps N] "
                 "[--only reflexes|outbox|http|batch|memory_ingest|consolidate|keep_pace] [--keep]\n");
  };
  for (int i = 1; i < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      usage(stdout);
      return 0;
    }
    if (k == "--keep") {  // leave the scratch dir (the runtimes' logs) for a look
      keep = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) {
      usage(stderr);
      return 2;
    }
    std::string v = argv[i + 1];
    if (k == "--dir") dir = v;
    else if (k == "--connections") connections = std::stoi(v);
    else if (k == "--seconds") seconds = std::stoi(v);
    else if (k == "--ingest-files") ingest_files = std::stoi(v);
    else if (k == "--consolidate-percepts") consolidate_percepts = std::stoull(v);
    else if (k == "--keep-pace-seconds") keep_pace_seconds = std::stoi(v);
    else if (k == "--batch") batch = std::stoi(v);
    else if (k == "--batch-connections") batch_connections = std::stoi(v);
    else if (k == "--reps") reps = std::stoi(v);
    else if (k == "--only") only = v;
    else {
      usage(stderr);
      return 2;
    }
  }
  dir = std::filesystem::absolute(dir).string();  // memory.ingest_roots must be absolute
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/outbox");
  std::filesystem::create_directories(dir + "/http");
  json out;
  auto want = [&](const char* what) { return only.empty() || only == what; };
  if (want("reflexes")) {
    // A throwaway first run: the process's first allocations fault their
    // pages in (tens of µs each on this VM), which landed in the first
    // measured layout's p99 whatever it was. Each measured run below still
    // builds its own engine, so every rule set meets its texts cold.
    (void)BenchReflexes(1000, false);
    out["reflexes"] = {BenchReflexes(1000, false), BenchReflexes(10000, false),
                       BenchReflexes(1000, true), BenchReflexes(10000, true)};
  }
  if (want("outbox")) out["outbox"] = BenchOutbox(dir + "/outbox", 2000);
  if (want("http")) out["http"] = BenchHttp(limbic, dir + "/http", connections, seconds);
  if (want("memory_ingest")) {
    std::filesystem::create_directories(dir + "/ingest");
    out["memory_ingest"] = BenchIngestHealth(limbic, dir + "/ingest", ingest_files);
  }
  if (want("consolidate")) {
    std::filesystem::create_directories(dir + "/consolidate");
    out["consolidate"] = BenchConsolidateHealth(limbic, dir + "/consolidate", consolidate_percepts);
  }
  if (want("batch")) {
    std::filesystem::create_directories(dir + "/batch");
    out["batch"] = BenchBatch(limbic, dir + "/batch", batch_connections, batch, seconds, reps);
  }
  if (want("keep_pace")) {
    std::filesystem::create_directories(dir + "/keep_pace");
    out["keep_pace"] = BenchKeepPace(limbic, dir + "/keep_pace", connections, keep_pace_seconds);
  }
  std::printf("%s\n", out.dump(2).c_str());
  if (!keep) std::filesystem::remove_all(dir);
  return 0;
}
