// Never lose, never lie, through the real binary: damaged events and changed
// segments refuse start without changing anything; an operator's decision to
// take a changed segment is recorded; every acknowledged percept meets its
// reflexes exactly once across SIGTERM, SIGKILL and writes made while no
// runtime ran; a runtime that cannot serve writes nothing.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace recovery_test {

using nlohmann::json;
using namespace limbic::testing;
namespace fs = std::filesystem;

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::vector<std::string> Segments(const std::string& state) {
  std::vector<std::string> out;
  for (auto& e : fs::directory_iterator(state + "/events"))
    if (e.path().extension() == ".jsonl") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Every event of the log, through `limbic events export`.
std::vector<json> AllEvents(const TempDir& dir, const std::string& state) {
  const std::string out = dir / "export.jsonl";
  auto r = Limbic({"--state", state, "events", "export", "-o", out});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<json> events;
  std::ifstream in(out);
  for (std::string line; std::getline(in, line);) events.push_back(json::parse(line));
  return events;
}

// percept id -> how many reflex_fired name it, for every percept_arrived.
std::map<std::string, int> FiresPerPercept(const std::vector<json>& events) {
  std::map<std::string, int> fires;
  for (const json& e : events)
    if (e["type"] == "percept_arrived") fires.emplace(e["percept_id"].get<std::string>(), 0);
  for (const json& e : events)
    if (e["type"] == "reflex_fired") ++fires[e.value("percept_id", "")];
  return fires;
}

json StormRules() {
  return {{"reflexes",
           {{{"id", "ack"},
             {"when", {{"source", "storm"}}},
             {"then", {{{"send", {{"effector", "log"}, {"type", "ack"}}}}}}}}}};
}

}  // namespace

TEST_CASE("a damaged last event refuses every write, fsck reports it, nothing is truncated",
          "[recovery]") {
  TempDir dir;
  const std::string state = dir / "state";
  std::string lines;
  for (int i = 0; i < 30; ++i)
    lines += R"({"source":"s","type":"t","text":"event )" + std::to_string(i) + "\"}\n";
  REQUIRE(Limbic({"--state", state, "percept", "import", "-"}, lines).exit_code == 0);
  const std::string seg = Segments(state).back();
  std::string text = ReadFile(seg);
  REQUIRE(text.size() > 2);
  const size_t last_line = text.rfind('\n', text.size() - 2) + 1;
  REQUIRE(text[text.size() - 2] == '}');
  text[text.size() - 2] = ']';
  const bool sealed = GENERATE(true, false);
  if (!sealed) fs::remove(seg.substr(0, seg.size() - 6) + ".seal");
  WriteFile(seg, text);
  INFO((sealed ? "under a seal" : "without a seal"));

  auto add = Limbic({"--state", state, "percept", "add", "--source", "s", "--type", "t"});
  CHECK(add.exit_code == 1);
  CHECK_THAT(add.err, Catch::Contains(seg) && Catch::Contains("offset " + std::to_string(last_line)));
  CHECK(ReadFile(seg) == text);  // the acknowledged event is not deleted

  auto fsck = Limbic({"--state", state, "fsck"});
  INFO(fsck.out);
  CHECK(fsck.exit_code == 1);
  CHECK_THAT(fsck.out, Catch::Contains("offset " + std::to_string(last_line)));
  CHECK_THAT(fsck.out, !Catch::Contains("will truncate"));
  CHECK(ReadFile(seg) == text);
}

TEST_CASE("a closed segment that no longer matches its seal refuses start until accepted",
          "[recovery]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["durability"] = {{"segment_bytes", 4096}};
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    for (int i = 0; i < 80; ++i)
      REQUIRE(HttpJson(l.port(), "POST", "/v1/percepts",
                       {{"source", "s"}, {"type", "t"}, {"text", "n " + std::to_string(i)}})
                  .status == 201);
    REQUIRE(l.child().Kill(SIGTERM) == 0);
  }
  const std::string state = dir / "state";
  auto segs = Segments(state);
  REQUIRE(segs.size() >= 4);
  // A closed segment, and two percepts in it (ids "p-<seq>", same length).
  const std::string victim = segs[1];
  std::string text = ReadFile(victim);
  const std::string key = "\"percept_id\":\"p-";
  const size_t first = text.find(key);
  const size_t at = text.find(key, first + 1);
  REQUIRE(at != std::string::npos);
  const size_t id_at = at + key.size() - 2;  // the 'p'
  const std::string id = text.substr(id_at, text.find('"', id_at) - id_at);
  const std::string first_id =
      text.substr(first + key.size() - 2, text.find('"', first + key.size()) - first - key.size() + 2);
  REQUIRE(id.size() == first_id.size());
  const std::string seal_path = victim.substr(0, victim.size() - 6) + ".seal";
  const std::string seal = ReadFile(seal_path);

  SECTION("an edit that still replays: refused, then accepted and recorded") {
    text[id_at + 1] = 'w';  // p-43 -> pw43: one byte inside a valid line, still a valid event
    const std::string changed_id = text.substr(id_at, id.size());
    WriteFile(victim, text);
    auto fsck = Limbic({"--state", state, "fsck"});
    CHECK(fsck.exit_code == 1);
    CHECK_THAT(fsck.out, Catch::Contains(victim + " bytes 0-" + std::to_string(text.size())) &&
                             Catch::Contains("changed after it was sealed"));
    {
      RunningLimbic again(dir, config);
      CHECK(again.port() == 0);
      int code = 0;
      REQUIRE(again.child().WaitFor(20000, &code));
      CHECK(code == 1);
      std::string all;
      for (const auto& line : again.log()) all += line + "\n";
      CHECK_THAT(all, Catch::Contains(victim + " bytes 0-"));
    }
    CHECK(ReadFile(seal_path) == seal);  // start changed nothing

    auto accept = Limbic({"--state", state, "fsck", "--accept-changed-segments", "--reason",
                          "restored from a backup by hand"});
    INFO(accept.out << accept.err);
    REQUIRE(accept.exit_code == 0);
    CHECK(ReadFile(seal_path) != seal);
    auto events = AllEvents(dir, state);
    REQUIRE(events.back()["type"] == "segments_accepted");
    CHECK(events.back()["actor"] == "cli");
    CHECK(events.back()["reason"] == "restored from a backup by hand");
    CHECK(events.back()["segments"][0]["file"] == fs::path(victim).filename().string());
    CHECK(Limbic({"--state", state, "fsck"}).exit_code == 0);
    auto verify = Limbic({"replay", "--verify", state});
    INFO(verify.out << verify.err);
    CHECK(verify.exit_code == 0);  // the pools were rebuilt from the log as it now is
    auto show = Limbic({"--state", state, "state", "show", "percepts", "--json"});
    CHECK_THAT(show.out, Catch::Contains("\"" + changed_id + "\"") &&
                             !Catch::Contains("\"" + id + "\""));
    RunningLimbic after(dir, config);
    CHECK(after.port() != 0);
  }
  SECTION("an edit that no longer replays is not accepted, and nothing changes") {
    text.replace(id_at, id.size(), first_id);  // a duplicate id: valid JSON, does not replay
    WriteFile(victim, text);
    auto accept = Limbic({"--state", state, "fsck", "--accept-changed-segments"});
    CHECK(accept.exit_code == 1);
    CHECK_THAT(accept.err, Catch::Contains("does not replay"));
    CHECK(ReadFile(seal_path) == seal);
    CHECK(Limbic({"--state", state, "fsck"}).exit_code == 1);
  }
}

TEST_CASE("percepts written while no runtime ran meet their reflexes once, at the next start",
          "[recovery][reflexes]") {
  TempDir dir;
  json config = BaseConfig(dir);
  std::ofstream(dir / "reflexes.json") << StormRules().dump();
  const std::string state = dir / "state";
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    REQUIRE(HttpJson(l.port(), "POST", "/v1/percepts", {{"source", "storm"}, {"type", "t"}})
                .status == 201);
    REQUIRE(l.child().Kill(SIGTERM) == 0);
  }
  for (int i = 0; i < 3; ++i)
    REQUIRE(Limbic({"--state", state, "percept", "add", "--source", "storm", "--type", "t"})
                .exit_code == 0);
  for (int round = 0; round < 2; ++round) {  // the second start evaluates nothing again
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    REQUIRE(l.child().Kill(SIGTERM) == 0);
  }
  auto fires = FiresPerPercept(AllEvents(dir, state));
  REQUIRE(fires.size() == 4);
  for (const auto& [id, n] : fires) {
    INFO("percept " << id);
    CHECK(n == 1);
  }
}

// A storm of percepts from several clients, a rule that fires on each, and
// a signal in the middle of it.
TEST_CASE("every acknowledged percept has exactly one reflex_fired across SIGTERM and SIGKILL",
          "[recovery][reflexes]") {
  const int sig = GENERATE(SIGTERM, SIGKILL);
  INFO("signal " << sig);
  TempDir dir;
  json config = BaseConfig(dir);
  config["api"]["body_limit"] = 65536;
  std::ofstream(dir / "reflexes.json") << StormRules().dump();
  const std::string state = dir / "state";
  std::set<std::string> acked;
  for (int trial = 0; trial < 3; ++trial) {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    std::mutex mu;
    std::atomic<bool> stop{false};
    std::atomic<int> count{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < 4; ++c)
      clients.emplace_back([&, c] {
        for (int i = 0; !stop; ++i) {
          auto r = HttpJson(l.port(), "POST", "/v1/percepts",
                            {{"source", "storm"}, {"type", "t"},
                             {"text", "client " + std::to_string(c) + " n " + std::to_string(i)}});
          if (r.status != 201) continue;
          std::lock_guard<std::mutex> lock(mu);
          acked.insert(r.Json()["id"].get<std::string>());
          ++count;
        }
      });
    while (count < 200 + 150 * trial) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const int code = l.child().Kill(sig);
    stop = true;
    for (auto& t : clients) t.join();
    CHECK(code == (sig == SIGTERM ? 0 : -SIGKILL));
  }
  {  // A start after the last trial catches up what the last kill left.
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    REQUIRE(l.child().Kill(SIGTERM) == 0);
  }
  auto fires = FiresPerPercept(AllEvents(dir, state));
  size_t wrong = 0;
  for (const auto& [id, n] : fires) {
    if (n == 1) continue;
    ++wrong;
    UNSCOPED_INFO("percept " << id << " has " << n << " reflex_fired");
  }
  CHECK(wrong == 0);
  for (const std::string& id : acked) {
    INFO("acknowledged percept " << id);
    CHECK(fires.count(id) == 1);
  }
}

TEST_CASE("a runtime whose port is taken writes nothing, not even its state dir", "[recovery]") {
  TempDir dir;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(fd, 1) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  json config = BaseConfig(dir);
  config["api"]["port"] = ntohs(addr.sin_port);
  std::ofstream(dir / "reflexes.json") << StormRules().dump();  // a rule it would have put
  std::ofstream(dir / "limbic.json") << config.dump();
  auto r = Limbic({"--state", dir / "state", "run", "--config", dir / "limbic.json"});
  ::close(fd);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("cannot listen on 127.0.0.1:" +
                                    std::to_string(ntohs(addr.sin_port))));
  CHECK_FALSE(fs::exists(dir / "state"));
}

}  // namespace recovery_test
