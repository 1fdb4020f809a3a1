// The mind's figures (issue 41; docs/performance.md "The mind"), through the
// real `limbic run` and a scripted OpenAI-compatible model server in this
// process (bench/scripted_model.h: loopback HTTP/1.1 on a thread of its own,
// which stamps with steady_clock when each request has been read in full and
// when its answer has been written, and answers at once). Printed as JSON:
//
//   wake   from the acknowledgement of a POST /v1/percepts (the 201 read by
//          the client) of a percept above mind.wake.threshold to the model
//          server having read the first chat request of the session it woke.
//          Between the two: the percept's check of attention, mind_woken
//          written (an fsync) while GET /v1/context is built, the request
//          built and sent. The model asks process_percept on the woken
//          percept, then answers: the bench waits for GET /v1/mind to say
//          "asleep" before the next percept (min_interval 0).
//   steps  limbic's own work per step, the model's time left out: from the
//          end of the server's answer to step N to its having read request
//          N+1 (the answer read and parsed, the tool call run through the
//          API's router, the step recorded -- not waited on --, the next
//          request built, a connection made and the request sent). The
//          model asks get_percept (reads), then process_percept (writes one
//          event: its answer waits for the fsync), then answers.
//   ingest percepts/s of bench/http_ingest's HTTP ingest with the mind off
//          and on (kind openai at the scripted server, default wake and
//          budget: the ingest's percepts, intensity 0.5, are below the
//          threshold), in rounds of one run each, the order alternating
//          (off on, on off, ...) so that a drift of the machine's load
//          weighs on both; each run notes the CPU the rest of the machine
//          used meanwhile ("others_cores") and the runtime's CPU time per
//          acknowledged percept (what the mind costs, less swayed by a
//          busy machine than the rate), and each round its ratio; rounds
//          where others kept under 0.25 cores busy in both runs are also
//          summed up apart ("quiet").
//
// wake and steps run on the scratch dir's disk, then again with the state
// on --shm-dir (default /dev/shm when it exists; "" skips it): the gap is
// fsync's. Each names the device and file system it ran on, and checks in
// the stopped runtime's pool that every session went as scripted
// ("sessions": each ended "answered", no tool call failed). The machine's
// load (/proc/loadavg) is given at the start and the end.
//
// Scratch: --dir, else limbic-mind-bench-XXXXXX in $TMPDIR (else /tmp),
// removed at the end unless --keep.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/http_ingest.h"
#include "bench/report.h"
#include "bench/scripted_model.h"
#include "state/projection.h"
#include "tests/raw_connection.h"

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using limbic::bench::Quantile;
using limbic::bench::ScriptedModel;

namespace {

constexpr const char* kUsage =
    "usage: limbic_mind_bench [options]\n"
    "  --limbic PATH      the limbic binary (default: limbic beside this program)\n"
    "  --dir DIR          scratch dir (default: a new one in $TMPDIR or /tmp)\n"
    "  --shm-dir DIR      also wake and steps with the state here (default /dev/shm; \"\": not)\n"
    "  --samples N        measured wakes, and sessions of steps (default 300)\n"
    "  --warmup N         sessions before measuring (default 20)\n"
    "  --seconds S        of each ingest run (default 5)\n"
    "  --reps N           rounds of ingest, each a run with the mind off and one on (default 4)\n"
    "  --connections N    of the ingest (default 64)\n"
    "  --parts LIST       of wake,steps,ingest (default all)\n"
    "  --keep             keep the scratch dir\n";

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

json Summary(const std::vector<double>& ms) {
  return {{"samples", ms.size()},
          {"p50_ms", Quantile(ms, 0.5)},
          {"p99_ms", Quantile(ms, 0.99)},
          {"max_ms", ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end())}};
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

// CPU time of the whole machine (busy: user, nice, system, irq, softirq)
// and of this process with its waited-for children (the runtimes it ran),
// in seconds: the difference between two is what others used meanwhile.
struct CpuSample {
  Clock::time_point at = Clock::now();
  double busy = 0, ours = 0;
};

CpuSample SampleCpu() {
  CpuSample c;
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq;
  c.busy = (user + nice + system + irq + softirq) / tick;
  std::ifstream self("/proc/self/stat");
  std::string all((std::istreambuf_iterator<char>(self)), std::istreambuf_iterator<char>());
  std::istringstream f(all.substr(all.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 17 && f >> field; ++i)
    if (i >= 14) c.ours += std::stod(field) / tick;  // utime, stime, cutime, cstime
  return c;
}

// Cores the rest of the machine kept busy between `a` and `b`.
double OthersCores(const CpuSample& a, const CpuSample& b) {
  const double seconds = std::chrono::duration<double>(b.at - a.at).count();
  return seconds > 0 ? std::max(0.0, (b.busy - a.busy) - (b.ours - a.ours)) / seconds : 0;
}

// The mount `path` is on: "device (fstype) at mountpoint", from mountinfo.
std::string DiskOf(const std::string& path) {
  std::error_code ec;
  const std::string real = std::filesystem::canonical(path, ec).string();
  std::ifstream in("/proc/self/mountinfo");
  std::string line, best_mount, best;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string id, parent, dev, root, mount, field;
    f >> id >> parent >> dev >> root >> mount;
    while (f >> field && field != "-") {
    }
    std::string fstype, source;
    f >> fstype >> source;
    const bool under =
        real == mount || mount == "/" ||
        (real.rfind(mount, 0) == 0 && real.size() > mount.size() && real[mount.size()] == '/');
    if (under && mount.size() >= best_mount.size()) {
      best_mount = mount;
      best = source + " (" + fstype + ") at " + mount;
    }
  }
  return best;
}

// One request on a keep-alive connection: the status; the body in *body.
int Ask(limbic::testing::RawConnection& conn, const std::string& method, const std::string& target,
        const std::string& body, std::string* answer) {
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!body.empty())
    req +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n" + body;
  if (!conn.Send(req)) return 0;
  std::string response = conn.Read(20000);
  if (answer) *answer = response.substr(std::min(response.size(), response.find("\r\n\r\n") + 4));
  return limbic::testing::StatusOf(response);
}

// Polls GET /v1/mind until the session is over.
void WaitAsleep(limbic::testing::RawConnection& conn) {
  for (auto deadline = Clock::now() + std::chrono::seconds(20); Clock::now() < deadline;) {
    std::string body;
    if (Ask(conn, "GET", "/v1/mind", "", &body) == 200) {
      json mind = json::parse(body, nullptr, false);
      if (mind.is_object() && mind.value("status", "") == "asleep") return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  throw std::runtime_error("the mind did not fall asleep in 20 s");
}

struct Options {
  std::string limbic, dir, shm_dir = "/dev/shm";
  int samples = 300, warmup = 20, reps = 4, connections = 64;
  double seconds = 5;
  std::string parts = "wake,steps,ingest";
  bool keep = false;
  bool Want(const std::string& part) const {
    return ("," + parts + ",").find("," + part + ",") != std::string::npos;
  }
};

// wake and steps on one state dir (`dir`/state).
json WakeAndSteps(const Options& o, ScriptedModel& model, const std::string& dir) {
  std::filesystem::create_directories(dir);
  json mind = {{"enabled", true},
               {"kind", "openai"},
               {"url", model.url()},
               {"model", "bench"},
               {"api_key_env", ""},
               {"timeout", "10s"},
               {"wake", {{"threshold", 0.5}}},
               {"budget", {{"min_interval", "0s"}, {"daily_tokens", 0}}}};
  limbic::bench::RunningLimbic running;
  if (auto s = limbic::bench::StartLimbic(
          o.limbic, dir, {{"durability", {{"mode", "fsync"}}}, {"mind", mind}}, &running);
      !s.ok())
    throw std::runtime_error(s.ToString());
  limbic::testing::RawConnection conn(running.port, {.nodelay = true});
  if (!conn.ok()) throw std::runtime_error("cannot connect to limbic");
  std::filesystem::create_directories(dir + "/state");
  json out = {{"state_dir", dir + "/state"}, {"disk", DiskOf(dir + "/state")}};
  size_t finals = model.finals();
  int posted = 0;
  // One session: a percept that wakes the mind; back when it sleeps again.
  auto session = [&](Clock::time_point* acked) {
    const std::string body = json{{"source", "bench"},
                                  {"type", "alert"},
                                  {"intensity", 0.9},
                                  {"text", "disk almost full on host " + std::to_string(++posted)}}
                                 .dump();
    std::string answer;
    if (Ask(conn, "POST", "/v1/percepts", body, &answer) != 201)
      throw std::runtime_error("POST /v1/percepts: " + answer);
    *acked = Clock::now();
    json receipt = json::parse(answer, nullptr, false);
    std::string id = receipt.is_object() ? receipt.value("id", "") : "";
    if (!model.WaitFinals(++finals, 20000)) throw std::runtime_error("no session woke for " + id);
    WaitAsleep(conn);
    return id;
  };
  auto run = [&](ScriptedModel::Script script) {
    model.SetScript(script);
    std::map<std::string, Clock::time_point> acks;
    for (int i = 0; i < o.warmup; ++i) {
      Clock::time_point t;
      (void)session(&t);
    }
    (void)model.Take();
    for (int i = 0; i < o.samples; ++i) {
      Clock::time_point t;
      std::string id = session(&t);
      acks[id] = t;
    }
    return std::make_pair(acks, model.Take());
  };
  if (o.Want("wake")) {
    auto [acks, exchanges] = run(ScriptedModel::Script::kProcess);
    std::vector<double> ms;
    for (const auto& x : exchanges)
      if (x.turn == 0 && acks.count(x.percept)) ms.push_back(Ms(x.read - acks[x.percept]));
    out["wake"] = Summary(ms);
  }
  if (o.Want("steps")) {
    auto [acks, exchanges] = run(ScriptedModel::Script::kReadProcess);
    // Exchanges in order: turn 0, 1, 2 of each session in turn.
    std::vector<double> read, write;
    for (size_t i = 1; i < exchanges.size(); ++i) {
      const auto& prev = exchanges[i - 1];
      const auto& x = exchanges[i];
      if (x.percept != prev.percept || x.turn != prev.turn + 1) continue;
      (x.turn == 1 ? read : write).push_back(Ms(x.read - prev.answered));
    }
    out["steps"] = {{"read", Summary(read)}, {"write", Summary(write)}};
    out["steps"]["read"]["tool"] = "get_percept";
    out["steps"]["write"]["tool"] = "process_percept (one event, fsync'd before its answer)";
  }
  return out;
}

// The sessions a stopped runtime left in `state_dir`: how many, how many
// did not end "answered", how many tool calls failed (the script's own check).
json CheckSessions(const std::string& state_dir) {
  limbic::state::ProjectionOptions po;
  po.path = state_dir + "/db";
  po.read_only = true;
  auto projection = limbic::state::Projection::Open(po);
  if (!projection.ok()) throw std::runtime_error(projection.status().ToString());
  auto sessions = (*projection)->ListSessions(0, 0);
  if (!sessions.ok()) throw std::runtime_error(sessions.status().ToString());
  size_t not_answered = 0, failed_calls = 0;
  for (const json& s : *sessions) {
    if (s.value("outcome", "") != "answered") ++not_answered;
    for (const json& step : s.value("steps", json::array()))
      for (const json& call : step.value("tool_calls", json::array()))
        if (!call.value("ok", false)) ++failed_calls;
  }
  return {{"count", sessions->size()},
          {"not_answered", not_answered},
          {"failed_tool_calls", failed_calls}};
}

json Ingest(const Options& o, ScriptedModel& model) {
  model.SetScript(ScriptedModel::Script::kAnswer);
  // A round counts as quiet when, in both its runs, the rest of the machine
  // kept less than this busy (cores): on a shared machine the ratios of the
  // other rounds measure the neighbours more than the mind.
  constexpr double kQuiet = 0.25;
  std::vector<double> rates[2], ratios, quiet_ratios, cpu_per_percept[2];
  json runs = json::array();
  size_t sessions = 0;
  for (int rep = 0; rep < o.reps; ++rep) {
    double rate_of[2] = {0, 0}, others_of[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const int on = rep % 2 == 0 ? k : 1 - k;  // off, on, on, off, off, on, ...
      limbic::bench::HttpIngestOptions h;
      h.limbic = o.limbic;
      h.dir = o.dir + "/ingest-" + (on ? "on-" : "off-") + std::to_string(rep);
      std::filesystem::create_directories(h.dir);
      h.seconds = o.seconds;
      h.connections = o.connections;
      h.extra_config = {{"mind", {{"enabled", false}}}};
      if (on)
        h.extra_config["mind"] = {{"enabled", true},
                                  {"kind", "openai"},
                                  {"url", model.url()},
                                  {"model", "bench"},
                                  {"api_key_env", ""}};
      (void)model.Take();
      const CpuSample before = SampleCpu();
      auto r = limbic::bench::RunHttpIngest(h);
      if (!r.ok()) throw std::runtime_error(r.status().ToString());
      const double others = OthersCores(before, SampleCpu());
      const double rate = static_cast<double>(r->percepts) / r->seconds;
      const size_t requests = model.Take().size();
      if (on) sessions += requests;
      rates[on].push_back(rate);
      rate_of[on] = rate;
      others_of[on] = others;
      const double cpu_us =
          r->percepts ? r->limbic_cpu_s * 1e6 / static_cast<double>(r->percepts) : 0;
      cpu_per_percept[on].push_back(cpu_us);
      runs.push_back({{"mind", on ? "on" : "off"},
                      {"percepts_per_s", rate},
                      {"failed", r->failed},
                      {"limbic_cpu_us_per_percept", cpu_us},
                      {"p99_ms", Quantile(r->latency_us, 0.99) / 1000},
                      {"model_requests", requests},
                      {"others_cores", others}});
      std::fprintf(
          stderr, "ingest, mind %s: %.0f percepts/s, limbic %.1f CPU-us each (others %.2f cores)\n",
          on ? "on" : "off", rate, cpu_us, others);
      std::filesystem::remove_all(h.dir);
      ::sync();  // the next run does not meet this one's writeback in its fsyncs
    }
    if (rate_of[0] > 0) {
      ratios.push_back(rate_of[1] / rate_of[0]);
      if (std::max(others_of[0], others_of[1]) < kQuiet) quiet_ratios.push_back(ratios.back());
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty()      ? 0
           : v.size() % 2 ? v[v.size() / 2]
                          : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  const double off = median(rates[0]), on = median(rates[1]);
  return {{"connections", o.connections},
          {"seconds", o.seconds},
          {"disk", DiskOf(o.dir)},
          {"off_percepts_per_s", off},
          {"on_percepts_per_s", on},
          {"on_vs_off", off > 0 ? on / off : 0},
          {"on_vs_off_by_round", ratios},
          {"on_vs_off_median_of_rounds", median(ratios)},
          {"on_vs_off_quiet_rounds", quiet_ratios},
          {"on_vs_off_median_of_quiet_rounds",
           quiet_ratios.empty() ? json() : json(median(quiet_ratios))},
          {"off_limbic_cpu_us_per_percept", median(cpu_per_percept[0])},
          {"on_limbic_cpu_us_per_percept", median(cpu_per_percept[1])},
          {"model_requests_while_on", sessions},
          {"runs", runs}};
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.limbic = (std::filesystem::path(argv[0]).parent_path() / "limbic").string();
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (k == "--keep") {
      o.keep = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "limbic_mind_bench: %s needs a value\n%s", k.c_str(), kUsage);
      return 2;
    }
    const std::string v = argv[++i];
    try {
      if (k == "--limbic")
        o.limbic = v;
      else if (k == "--dir")
        o.dir = v;
      else if (k == "--shm-dir")
        o.shm_dir = v;
      else if (k == "--samples")
        o.samples = std::stoi(v);
      else if (k == "--warmup")
        o.warmup = std::stoi(v);
      else if (k == "--seconds")
        o.seconds = std::stod(v);
      else if (k == "--reps")
        o.reps = std::stoi(v);
      else if (k == "--connections")
        o.connections = std::stoi(v);
      else if (k == "--parts")
        o.parts = v;
      else
        throw std::invalid_argument(k);
    } catch (const std::exception&) {
      std::fprintf(stderr, "limbic_mind_bench: bad argument %s %s\n%s", k.c_str(), v.c_str(),
                   kUsage);
      return 2;
    }
  }
  if (o.dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/limbic-mind-bench-XXXXXX";
    if (!::mkdtemp(tmpl.data())) {
      std::perror("limbic_mind_bench: mkdtemp");
      return 1;
    }
    o.dir = tmpl;
  }
  o.dir = std::filesystem::absolute(o.dir).string();
  std::string shm;
  if (!o.shm_dir.empty() && std::filesystem::is_directory(o.shm_dir)) {
    shm = o.shm_dir + "/limbic-mind-bench-XXXXXX";
    if (!::mkdtemp(shm.data())) shm.clear();
  }
  int rc = 0;
  try {
    json out = {{"load_at_start", LoadAverage()}, {"cpus", std::thread::hardware_concurrency()}};
    ScriptedModel model;
    if (o.Want("wake") || o.Want("steps")) {
      out["state"] = json::array();
      for (const std::string& dir :
           {o.dir + "/mind", shm.empty() ? std::string() : shm + "/mind"}) {
        if (dir.empty()) continue;
        const CpuSample before = SampleCpu();
        json run = WakeAndSteps(o, model, dir);  // the runtime stopped and waited for
        run["others_cores"] = OthersCores(before, SampleCpu());
        run["sessions"] = CheckSessions(dir + "/state");
        out["state"].push_back(std::move(run));
      }
    }
    if (o.Want("ingest")) out["ingest"] = Ingest(o, model);
    out["load_at_end"] = LoadAverage();
    std::printf("%s\n", out.dump(2).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "limbic_mind_bench: %s (the runtime's log: %s/*/limbic.log)\n", e.what(),
                 o.dir.c_str());
    rc = 1;
  }
  if (!o.keep) {
    std::filesystem::remove_all(o.dir);
    if (!shm.empty()) std::filesystem::remove_all(shm);
  } else {
    std::fprintf(stderr, "limbic_mind_bench: kept %s%s%s\n", o.dir.c_str(),
                 shm.empty() ? "" : " and ", shm.c_str());
  }
  return rc;
}
