// Sensors through the real binary: webhooks over HTTP and their queue, the
// exec sensor's restarts, and the Python adapters of docs/adapters.md.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "http.h"
#include "runtime_util.h"
#include "tests/process_group.h"

// This file's own namespace: test programs compile in unity batches.
namespace sensors_test {

using nlohmann::json;
using namespace limbic::testing;

namespace {

json Config(const TempDir& dir, json sensors, json effectors = json::object()) {
  std::ofstream(dir / "reflexes.json") << R"({"reflexes": []})";
  effectors["log"] = {{"kind", "log"}};
  return {{"api", {{"port", 0}}},
          {"reflexes", "reflexes.json"},
          {"sensors", std::move(sensors)},
          {"effectors", std::move(effectors)}};
}

// "2026-11-22T14:05:09.123Z" -> ms since the epoch.
int64_t ParseTs(const std::string& ts) {
  std::tm tm{};
  int ms = 0;
  REQUIRE(sscanf(ts.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                 &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) == 7);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

// The value of a metric line `name{labels} value`, or -1.
double Metric(uint16_t port, const std::string& series) {
  std::istringstream in(Http(port, "GET", "/metrics").body);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  return -1;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("webhook over HTTP: recorded once durable, bad bodies and missing pointers are 400",
          "[runtime][sensors]") {
  TempDir dir;
  json sensors = {{"hooks",
                   {{"kind", "webhook"},
                    {"source", "/app"},
                    {"type", "alert"},
                    {"text", "/msg"},
                    {"intensity", 0.7},
                    {"data", ""}}},
                  {"beat", {{"kind", "timer"}, {"every", "1h"}}}};
  RunningLimbic l(dir, Config(dir, sensors));
  REQUIRE(l.port() != 0);
  json body = {{"app", "grafana"}, {"msg", "disk full"}, {"host", "db1"}};
  auto ok = HttpJson(l.port(), "POST", "/v1/sensors/hooks", body);
  REQUIRE(ok.status == 202);
  std::string id = ok.Json()["id"];
  json percepts = Http(l.port(), "GET", "/v1/percepts?source=grafana").Json()["percepts"];
  REQUIRE(percepts.size() == 1);  // durable before the answer: no polling needed
  CHECK(percepts[0]["id"] == id);
  CHECK(percepts[0]["type"] == "alert");
  CHECK(percepts[0]["text"] == "disk full");
  CHECK(percepts[0]["intensity"] == 0.7);
  CHECK(percepts[0]["data"] == body);

  struct Case {
    HttpReply reply;
    int status;
    const char* code;
    const char* needle;
  } cases[] = {
      {Http(l.port(), "POST", "/v1/sensors/hooks", "{\"app\": "), 400, "invalid_argument",
       "malformed JSON"},
      {HttpJson(l.port(), "POST", "/v1/sensors/hooks", {{"msg", "no app"}}), 400,
       "invalid_argument", "sensor \"hooks\": source pointer \"/app\" not found in the body"},
      {HttpJson(l.port(), "POST", "/v1/sensors/hooks", {{"app", 5}, {"msg", "x"}}), 400,
       "invalid_argument", "source"},
      {HttpJson(l.port(), "POST", "/v1/sensors/nobody", body), 404, "not_found", "nobody"},
      {HttpJson(l.port(), "POST", "/v1/sensors/beat", body), 400, "invalid_argument",
       "does not take HTTP requests"},
  };
  for (const auto& c : cases) {
    INFO(c.reply.status << " " << c.reply.body);
    CHECK(c.reply.status == c.status);
    CHECK(c.reply.Json()["error"]["code"] == c.code);
    CHECK_THAT(c.reply.Json()["error"]["message"].get<std::string>(), Catch::Contains(c.needle));
  }
  CHECK(Http(l.port(), "GET", "/v1/percepts").Json()["percepts"].size() == 1);
  CHECK(Metric(l.port(), "limbic_sensor_percepts_total{sensor=\"hooks\"}") == 4);
  CHECK(Metric(l.port(), "limbic_sensor_rejected_total{sensor=\"hooks\"}") == 3);
  CHECK(Metric(l.port(), "limbic_sensor_dropped_total{sensor=\"hooks\"}") == 0);
}

TEST_CASE("a burst at a webhook with a full queue gets 503s, each one counted as dropped",
          "[runtime][sensors]") {
  TempDir dir;
  json sensors = {
      {"burst", {{"kind", "webhook"}, {"source", "burst"}, {"type", "/t"}, {"queue", 1}}}};
  RunningLimbic l(dir, Config(dir, sensors));
  REQUIRE(l.port() != 0);
  // Stopped, limbic cannot answer: the requests pile up in the kernel and
  // arrive at once when it continues, faster than one fsync.
  REQUIRE(kill(l.child().pid(), SIGSTOP) == 0);
  const int n = 40;
  std::vector<std::future<HttpReply>> replies;
  for (int i = 0; i < n; ++i)
    replies.push_back(std::async(std::launch::async, [&, i] {
      return HttpJson(l.port(), "POST", "/v1/sensors/burst", {{"t", "n" + std::to_string(i)}});
    }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let them connect and send
  REQUIRE(kill(l.child().pid(), SIGCONT) == 0);
  int accepted = 0, refused = 0;
  for (auto& f : replies) {
    HttpReply r = f.get();
    INFO(r.status << " " << r.body);
    if (r.status == 202) {
      ++accepted;
    } else {
      CHECK(r.status == 503);
      CHECK(r.Json()["error"]["code"] == "unavailable");
      CHECK_THAT(r.Json()["error"]["message"].get<std::string>(),
                 Catch::Contains("sensor \"burst\": queue full"));
      ++refused;
    }
  }
  CHECK(accepted + refused == n);
  CHECK(refused > 0);  // one in flight and one waiting cannot take 40 at once
  CHECK(Http(l.port(), "GET", "/v1/percepts?source=burst&limit=100").Json()["percepts"].size() ==
        static_cast<size_t>(accepted));
  CHECK(Metric(l.port(), "limbic_sensor_dropped_total{sensor=\"burst\"}") == refused);
}

TEST_CASE("an exec sensor that exits is restarted with growing backoff, bad lines are logged",
          "[runtime][sensors]") {
  TempDir dir;
  std::string script = dir / "once.sh";
  std::ofstream(script) << "#!/bin/sh\n"
                           "echo 'garbage, not JSON'\n"
                           "echo '{\"source\":\"pulse\",\"type\":\"beat\"}'\n";
  chmod(script.c_str(), 0755);
  json sensors = {{"pulse",
                   {{"kind", "exec"},
                    {"argv", {script}},
                    {"restart_backoff", "100ms"},
                    {"max_backoff", "10s"}}}};
  RunningLimbic l(dir, Config(dir, sensors));
  REQUIRE(l.port() != 0);
  // Runs at 0, then after 100, 200, 400 and 800 ms.
  json got = WaitJson(l.port(), "/v1/percepts?source=pulse&limit=100",
                  [](const json& j) { return j["percepts"].size() >= 5; }, 20000);
  std::vector<int64_t> ts;
  for (const json& p : got["percepts"]) ts.push_back(ParseTs(p["ts"]));
  std::sort(ts.begin(), ts.end());
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < 5; ++i) gaps.push_back(ts[i] - ts[i - 1]);
  INFO("gaps (ms): " << gaps[0] << " " << gaps[1] << " " << gaps[2] << " " << gaps[3]);
  for (size_t i = 0; i + 1 < gaps.size(); ++i) CHECK(gaps[i + 1] > gaps[i]);
  CHECK(gaps[0] >= 50);   // the first delay is 100 ms
  CHECK(gaps[3] >= 600);  // the fourth 800 ms
  CHECK(gaps[3] > 2 * gaps[0]);
  for (const char* delay : {"restarting in 100 ms", "restarting in 200 ms", "restarting in 400 ms",
                            "restarting in 800 ms"})
    CHECK(l.WaitForLog(std::string("sensor pulse: ") + script + " exited with status 0; " + delay));
  // Each child's garbage is its line 1; the good line 2 became a percept.
  CHECK(l.WaitForLog("sensor pulse: line 1 from pid "));
  CHECK(l.WaitForLog("is not a JSON object: garbage, not JSON"));
  CHECK(Metric(l.port(), "limbic_sensor_rejected_total{sensor=\"pulse\"}") >= 5);
}

// Reads the pids a script appended to `path`, one per line.
std::vector<pid_t> Pids(const std::string& path) {
  std::vector<pid_t> out;
  std::ifstream in(path);
  for (pid_t p; in >> p;) out.push_back(p);
  return out;
}

TEST_CASE("an exec sensor's grandchildren die with it: on restart and at shutdown",
          "[runtime][sensors]") {
  TempDir dir;
  // First run: a grandchild, then exit (the sensor restarts it). Later runs:
  // a grandchild, then read stdin (/dev/null: at once at EOF) and wait on it.
  std::string pids = dir / "pgids";
  std::string script = Script(dir, "family.sh",
                              "sleep 1000 &\n"
                              "echo $$ >> " + pids + "\n"
                              "n=$(wc -l < " + pids + ")\n"
                              "[ \"$n\" -eq 1 ] && exit 1\n"
                              "cat\n"
                              "wait\n");
  json sensors = {{"family",
                   {{"kind", "exec"},
                    {"argv", {script}},
                    {"restart_backoff", "100ms"},
                    {"max_backoff", "100ms"}}}};
  RunningLimbic l(dir, Config(dir, sensors));
  REQUIRE(l.port() != 0);
  REQUIRE(l.WaitForLog("exited with status 1; restarting in 100 ms"));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (Pids(pids).size() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::vector<pid_t> groups = Pids(pids);
  REQUIRE(groups.size() == 2);
  // The first program exited: its sleep went with its group.
  CHECK(GroupGone(groups[0]));
  CHECK(LiveGroupMembers(groups[1]).size() >= 1);
  // SIGTERM to the runtime: the running program and its sleep go too.
  CHECK(l.child().Kill(SIGTERM) == 0);
  CHECK(GroupGone(groups[1]));
  for (pid_t g : groups) kill(-g, SIGKILL);  // whatever happened, leave nothing behind
}

// Issue 38 item 7: the page says what the test above shows, under the
// kind it is about.
TEST_CASE("docs/sensors.md describes the exec sensor's process group under exec",
          "[runtime][sensors]") {
  const std::string doc = ReadFile(std::string(LIMBIC_SOURCE_DIR) + "/docs/sensors.md");
  auto section = [&](const std::string& heading) {
    const size_t start = doc.find(heading);
    REQUIRE(start != std::string::npos);
    return doc.substr(start, doc.find("\n### ", start + heading.size()) - start);
  };
  CHECK(section("### `jsonl`").find("process group") == std::string::npos);
  CHECK(section("### `exec`").find("The program runs in a process group of its own") !=
        std::string::npos);
}

TEST_CASE("the Python adapters of docs/adapters.md: a file becomes a percept, a reflex notifies",
          "[runtime][sensors]") {
  const std::string examples = std::string(LIMBIC_SOURCE_DIR) + "/config/examples/adapters";
  std::string config_text = ReadFile(examples + "/limbic.json");
  std::string reflexes_text = ReadFile(examples + "/reflexes.json");
  REQUIRE_FALSE(config_text.empty());
  // The page shows these files as they are.
  std::string doc = ReadFile(std::string(LIMBIC_SOURCE_DIR) + "/docs/adapters.md");
  CHECK(doc.find(config_text) != std::string::npos);
  CHECK(doc.find(reflexes_text) != std::string::npos);

  TempDir dir;
  auto localise = [&](std::string text) {  // the example's work dir -> this test's
    for (auto [from, to] : {std::pair<std::string, std::string>{"/tmp/limbic-example", dir.path()}})
      for (size_t at; (at = text.find(from)) != std::string::npos;)
        text.replace(at, from.size(), to);
    return text;
  };
  json config = json::parse(localise(config_text));
  CHECK(config["api"]["port"] != 7077);  // it runs beside `make run`
  config["api"]["port"] = 0;
  // ${CONFIG_DIR} is the config file's directory: the scripts are found beside it.
  for (const char* script : {"dir_watch_sensor.py", "notify_effector.py"})
    REQUIRE(symlink((examples + "/" + script).c_str(), (dir / script).c_str()) == 0);
  std::ofstream(dir / "reflexes.json") << localise(reflexes_text);
  mkdir((dir / "inbox").c_str(), 0755);
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  REQUIRE(l.WaitForLog("dir_watch: watching " + dir / "inbox", 20000));

  { std::ofstream(dir / "inbox/.report.txt.tmp") << "quarterly numbers\n"; }
  REQUIRE(rename((dir / "inbox/.report.txt.tmp").c_str(), (dir / "inbox/report.txt").c_str()) == 0);
  json percepts = WaitJson(l.port(), "/v1/percepts?source=dir_watch",
                       [](const json& j) { return j["percepts"].size() == 1; }, 20000);
  json p = percepts["percepts"][0];
  CHECK(p["type"] == "file.created");
  CHECK(p["text"] == "new file report.txt");
  CHECK(p["data"]["size"] == 18);
  CHECK(p["id"].get<std::string>().rfind("file-", 0) == 0);

  json actions = WaitJson(l.port(), "/v1/actions?status=complete",
                      [](const json& j) { return j["actions"].size() == 1; }, 20000);
  json action = actions["actions"][0];
  CHECK(action["effector"] == "notify");
  CHECK_THAT(action["result"]["stdout"].get<std::string>(), Catch::Contains("\"appended\": true"));
  std::ifstream notes(dir / "notifications.jsonl");
  std::string line;
  REQUIRE(std::getline(notes, line));
  json note = json::parse(line);
  CHECK(note["key"] == action["idempotency_key"]);
  CHECK(note["action"] == action["id"]);
  CHECK(note["payload"] == json({{"text", "new file report.txt"},
                                 {"file", "report.txt"},
                                 {"size", 18},
                                 {"percept", p["id"]}}));
  CHECK_FALSE(std::getline(notes, line));  // once
}

namespace {

// /proc/PID/stat field 22: when the process started, in clock ticks after boot.
uint64_t StartTicks(pid_t pid) {
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  REQUIRE(paren != std::string::npos);
  std::istringstream in(stat.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && in >> field; ++i) {
  }
  return std::stoull(field);
}

std::string BootId() {
  std::string id = ReadFile("/proc/sys/kernel/random/boot_id");
  while (!id.empty() && id.back() == '\n') id.pop_back();
  return id;
}

}  // namespace

TEST_CASE("what a SIGKILLed runtime's exec sensor left running is ended at the next start",
          "[runtime][sensors]") {
  TempDir dir;
  // Each run of the program: a grandchild, a line "leader grandchild",
  // then waiting on the grandchild.
  std::string family = dir / "family";
  std::string script = Script(dir, "leaves.sh",
                              "sleep 300 &\n"
                              "echo \"$$ $!\" >> " + family + "\n"
                              "wait\n");
  json sensors = {{"leaves", {{"kind", "exec"}, {"argv", {script}}}}};
  json config = Config(dir, sensors);
  auto lines = [&] {
    std::vector<pid_t> pids = Pids(family);
    return pids.size() / 2;
  };
  auto wait_lines = [&](size_t n) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (lines() < n && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return lines() >= n;
  };
  auto l = std::make_unique<RunningLimbic>(dir, config);
  REQUIRE(l->port() != 0);
  REQUIRE(wait_lines(1));
  const pid_t leader = Pids(family)[0], grandchild = Pids(family)[1];
  const std::string record = dir / ("state/subprocesses/" + std::to_string(leader) + ".json");
  // The program may write its line before the runtime has recorded it.
  for (int i = 0; i < 500 && ReadFile(record).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(json::parse(ReadFile(record))["leader_start"] == StartTicks(leader));

  CHECK(l->child().Kill(SIGKILL) == -SIGKILL);
  // Nothing ended them: the program and its grandchild run on.
  std::vector<pid_t> left = LiveGroupMembers(leader);
  CHECK(std::count(left.begin(), left.end(), grandchild) == 1);
  CHECK(left.size() == 2);

  l = std::make_unique<RunningLimbic>(dir, config);
  REQUIRE(l->port() != 0);
  CHECK(GroupGone(leader));
  CHECK(l->WaitForLog("subprocesses: ended process group " + std::to_string(leader) + " (" +
                      script + ")"));
  struct stat st;
  CHECK(stat(record.c_str(), &st) != 0);
  // The new run's program is recorded and runs.
  REQUIRE(wait_lines(2));
  const pid_t next = Pids(family)[2];
  CHECK(LiveGroupMembers(next).size() == 2);
  CHECK(l->child().Kill(SIGTERM) == 0);
  CHECK(GroupGone(next));
  // A clean stop leaves no record but the heartbeat.
  CHECK(stat((dir / ("state/subprocesses/" + std::to_string(next) + ".json")).c_str(), &st) != 0);
  for (size_t i = 0; i < Pids(family).size(); i += 2) kill(-Pids(family)[i], SIGKILL);
}

TEST_CASE("a recorded group whose id another process holds now is left alone at start",
          "[runtime][sensors]") {
  TempDir dir;
  // Not limbic's: a process of this test, leading a group of its own.
  pid_t other = fork();
  if (other == 0) {
    setpgid(0, 0);
    execl("/bin/sleep", "sleep", "300", static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(other, other);
  const uint64_t start = StartTicks(other);
  // A dead run's record of a group with that id, whose leader started
  // earlier: the id was taken again since.
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  std::filesystem::create_directories(dir / "state/subprocesses");
  std::ofstream(dir / ("state/subprocesses/" + std::to_string(other) + ".json"))
      << json{{"pgid", other},           {"leader_start", start - 100},
              {"recorded_at", start - 100}, {"boot_id", BootId()},
              {"owner_pid", dead},       {"owner_start", 1},
              {"argv0", "/bin/sh"}}
             .dump();
  RunningLimbic l(dir, Config(dir, json::object()));
  REQUIRE(l.port() != 0);
  CHECK(l.WaitForLog("subprocesses: left process group " + std::to_string(other)));
  CHECK(LiveGroupMembers(other) == std::vector<pid_t>{other});
  CHECK(l.child().Kill(SIGTERM) == 0);
  CHECK(LiveGroupMembers(other) == std::vector<pid_t>{other});
  kill(other, SIGKILL);
  waitpid(other, nullptr, 0);
}

}  // namespace sensors_test
