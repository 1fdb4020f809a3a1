// Checkpoints through the real binary: the runtime takes them as events
// come, time travel over the API and the command line starts from them and
// answers as a replay from seq 1 does, and a checkpoint a SIGKILL cut short
// is never used and is cleaned up.
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <catch2/catch.hpp>

#include "base/time.h"
#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace checkpoint_it_test {

using nlohmann::json;
using namespace limbic::testing;
namespace fs = std::filesystem;

namespace {

json CheckpointConfig(const TempDir& dir, int every) {
  json c = BaseConfig(dir);
  c["checkpoints"] = {{"every", every}, {"interval", "1h"}, {"keep", 6}, {"dense", 2}};
  return c;
}

// The names in <state>/checkpoints.
std::vector<std::string> Listed(const std::string& state) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(state + "/checkpoints", ec))
    out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

size_t Complete(const std::string& state) {
  size_t n = 0;
  for (const std::string& name : Listed(state))
    if (name.size() == 20 && fs::exists(state + "/checkpoints/" + name + "/manifest.json")) ++n;
  return n;
}

uint64_t AddPercepts(uint16_t port, int n) {
  uint64_t seq = 0;
  for (int i = 0; i < n; ++i) {
    auto r = HttpJson(port, "POST", "/v1/percepts",
                      {{"source", "chat"}, {"type", "msg"}, {"text", "m" + std::to_string(i)}});
    REQUIRE(r.status == 201);
    seq = r.Json()["seq"].get<uint64_t>();
  }
  return seq;
}

}  // namespace

TEST_CASE("the runtime takes checkpoints and time travel from them matches a replay from seq 1",
          "[cli][checkpoint]") {
  TempDir dir;
  const std::string state = dir / "state";
  RunningLimbic l(dir, CheckpointConfig(dir, 25));
  REQUIRE(l.port() != 0);
  const uint64_t last = AddPercepts(l.port(), 160);
  // Retention keeps at most 6; wait until the runtime has taken some.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (Complete(state) < 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(Complete(state) >= 4);
  CHECK(Complete(state) <= 6);
  // What /metrics says of them, once the last one due is taken: the
  // newest one's seq, how many are kept, how many were taken (more than
  // are kept: retention), none failed.
  auto newest = [&] {
    uint64_t seq = 0;
    for (const std::string& name : Listed(state))
      if (name.size() == 20) seq = std::max<uint64_t>(seq, std::stoull(name));
    return static_cast<double>(seq);
  };
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((Metric(l.port(), "limbic_checkpoint_seq") != newest() ||
          newest() + 25 <= static_cast<double>(last)) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(Metric(l.port(), "limbic_checkpoint_seq") == newest());
  CHECK(Metric(l.port(), "limbic_checkpoints") == static_cast<double>(Complete(state)));
  CHECK(Metric(l.port(), "limbic_checkpoints_taken_total") >= 4);
  CHECK(Metric(l.port(), "limbic_checkpoint_failures_total") == 0);
  CHECK(Metric(l.port(), "limbic_checkpoint_seconds") > 0);

  std::mt19937_64 rng(44);
  std::vector<uint64_t> seqs = {1, last};
  for (const std::string& name : Listed(state)) {
    if (name.size() != 20) continue;
    seqs.push_back(std::stoull(name));
    if (std::stoull(name) < last) seqs.push_back(std::stoull(name) + 1);
  }
  for (int i = 0; i < 5; ++i) seqs.push_back(1 + rng() % last);
  std::map<uint64_t, std::string> with;
  for (uint64_t seq : seqs) {
    auto at = Http(l.port(), "GET", "/v1/state/at?digest=true&seq=" + std::to_string(seq));
    REQUIRE(at.status == 200);
    with[seq] = at.Json()["digest"];
    CHECK(at.Json()["from_checkpoint"].get<uint64_t>() <= seq);
    // Those replayed: the ones after the checkpoint.
    CHECK(at.Json()["events"].get<uint64_t>() == seq - at.Json()["from_checkpoint"].get<uint64_t>());
    CHECK(CliDigest(state, {"--at-seq", std::to_string(seq)}) == with[seq]);
  }
  // The log is the truth: without the checkpoints, the same answers.
  CHECK(Limbic({"--state", state, "fsck"}).exit_code == 0);
  auto verify = Limbic({"--state", state, "--json", "replay", "--verify", state});
  INFO(verify.out << verify.err);
  CHECK(verify.exit_code == 0);
  fs::remove_all(state + "/checkpoints");
  for (uint64_t seq : seqs) {
    auto at = Http(l.port(), "GET", "/v1/state/at?digest=true&seq=" + std::to_string(seq));
    REQUIRE(at.status == 200);
    CHECK(at.Json()["from_checkpoint"] == 0);
    CHECK(at.Json()["digest"] == with[seq]);
  }

  // A checkpoint that cannot be taken (checkpoints/ is a file now) is a
  // warning and a count, never a stop: the loop takes writes, and the next
  // one, `every` events later, is taken once it can be.
  std::ofstream(state + "/checkpoints") << "not a dir\n";
  const double taken = Metric(l.port(), "limbic_checkpoints_taken_total");
  const double newest_before = Metric(l.port(), "limbic_checkpoint_seq");
  AddPercepts(l.port(), 30);
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (Metric(l.port(), "limbic_checkpoint_failures_total") < 1 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(Metric(l.port(), "limbic_checkpoint_failures_total") >= 1);
  CHECK(Metric(l.port(), "limbic_checkpoints_taken_total") == taken);
  CHECK(Metric(l.port(), "limbic_checkpoint_seq") == newest_before);  // none newer was taken
  fs::remove(state + "/checkpoints");
  AddPercepts(l.port(), 30);
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (Metric(l.port(), "limbic_checkpoints_taken_total") == taken &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(Metric(l.port(), "limbic_checkpoints_taken_total") > taken);
  CHECK(Complete(state) >= 1);
}

TEST_CASE("a checkpoint cut short by SIGKILL is never used and is removed at the next start",
          "[cli][checkpoint][crash]") {
  TempDir dir;
  const std::string state = dir / "state";
  uint64_t last = 0;
  {
    // The checkpoint waits between its RocksDB copy and its manifest.
    ::setenv("LIMBIC_TEST_CHECKPOINT_PAUSE_MS", "30000", 1);
    RunningLimbic l(dir, CheckpointConfig(dir, 10));
    ::unsetenv("LIMBIC_TEST_CHECKPOINT_PAUSE_MS");
    REQUIRE(l.port() != 0);
    last = AddPercepts(l.port(), 15);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    auto has_temp = [&] {
      for (const std::string& name : Listed(state))
        if (name.starts_with("tmp-") && fs::exists(state + "/checkpoints/" + name + "/db/CURRENT"))
          return true;
      return false;
    };
    while (!has_temp() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE(has_temp());
    CHECK(l.child().Kill(SIGKILL) == -SIGKILL);
  }
  std::vector<std::string> left;  // the temp dirs the killed process left
  for (const std::string& name : Listed(state))
    if (name.starts_with("tmp-")) left.push_back(name);
  REQUIRE_FALSE(left.empty());
  CHECK(Complete(state) == 0);
  // Readers never take the temp dir.
  auto at = Limbic({"--state", state, "--json", "state", "digest", "--at-seq", std::to_string(last)});
  REQUIRE(at.exit_code == 0);
  auto fsck = Limbic({"--state", state, "--json", "fsck"});
  CHECK(fsck.exit_code == 0);
  CHECK(json::parse(fsck.out)["checkpoints"] == 0);
  {
    RunningLimbic l(dir, CheckpointConfig(dir, 10));
    REQUIRE(l.port() != 0);
    // (The new process may be writing a temp dir of its own already.)
    for (const std::string& name : left) CHECK_FALSE(fs::exists(state + "/checkpoints/" + name));
    // Due since before the kill: taken at the start, no event needed.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (Complete(state) == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(Complete(state) >= 1);
    AddPercepts(l.port(), 12);
    CHECK(CliDigest(state, {"--at-seq", std::to_string(last)}) ==
          json::parse(at.out)["digest"].get<std::string>());
  }
}

TEST_CASE("a runtime whose db/ is lost starts from its newest checkpoint, and forks at a time use them",
          "[cli][checkpoint][crash]") {
  TempDir dir;
  const std::string state = dir / "state";
  std::string digest;
  uint64_t last = 0;
  std::string at_time;  // the time of the newest checkpoint's event
  {
    RunningLimbic l(dir, CheckpointConfig(dir, 20));
    REQUIRE(l.port() != 0);
    AddPercepts(l.port(), 50);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (Complete(state) < 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(Complete(state) >= 2);
    last = AddPercepts(l.port(), 5);
    json d = Http(l.port(), "GET", "/v1/state/digest").Json();
    REQUIRE(d["applied_seq"] == last);
    digest = d["digest"];
    CHECK(l.child().Kill(SIGKILL) == -SIGKILL);
  }
  // The newest checkpoint (a SIGKILL may leave tmp-* dirs beside them).
  std::string newest_name;
  for (const std::string& name : Listed(state))
    if (name.size() == 20) newest_name = name;
  REQUIRE_FALSE(newest_name.empty());
  const uint64_t newest = std::stoull(newest_name);
  std::ifstream manifest_file(state + "/checkpoints/" + newest_name + "/manifest.json");
  const json manifest = json::parse(manifest_file);
  CHECK(manifest["format"] == 2);
  CHECK(manifest["seq"] == newest);
  CHECK(manifest["event_sha256"].get<std::string>().size() == 64);

  // A fork at the time of that checkpoint's event starts from it.
  const std::string time = limbic::FormatTime(manifest["ts"].get<limbic::TimeMs>());
  auto fork = Limbic({"--state", state, "--json", "fork", "--at-time", time, "--into", dir / "fork"});
  INFO(fork.out << fork.err);
  REQUIRE(fork.exit_code == 0);
  CHECK(CliDigest(dir / "fork") == CliDigest(state, {"--at-seq", json::parse(fork.out)["at_seq"].dump()}));

  fs::remove_all(state + "/db");
  RunningLimbic again(dir, CheckpointConfig(dir, 20));
  REQUIRE(again.port() != 0);
  bool restored = false;
  for (const std::string& line : again.log())
    if (line.find("restored them from the checkpoint at seq " + std::to_string(newest)) !=
        std::string::npos)
      restored = true;
  CHECK(restored);
  // Every event is there, and the pools equal a replay from seq 1 (the
  // restart may have added events of its own).
  json d = Http(again.port(), "GET", "/v1/state/digest").Json();
  CHECK(d["applied_seq"].get<uint64_t>() >= last);
  CHECK(CliDigest(state, {"--at-seq", std::to_string(last)}) == digest);
  auto verify = Limbic({"--state", state, "--json", "replay", "--verify", state, "--full"});
  INFO(verify.out << verify.err);
  CHECK(verify.exit_code == 0);
}

TEST_CASE("checkpoints past the log's end are removed at start, never counted among the newest",
          "[cli][checkpoint][crash]") {
  TempDir dir;
  const std::string state = dir / "state";
  json config = CheckpointConfig(dir, 20);
  config["durability"] = {{"segment_bytes", 4096}};  // several segments
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    const uint64_t last = AddPercepts(l.port(), 120);
    // Under load one take may cover more than `every` events: wait for the
    // last one due, not for a count.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (Metric(l.port(), "limbic_checkpoint_seq") + 20 <= static_cast<double>(last) &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(Complete(state) >= 3);
    CHECK(l.child().Kill(SIGKILL) == -SIGKILL);
  }
  // The log loses its last segments (as if restored from an older copy),
  // and db/ with them: the newest checkpoints are past its end now.
  std::vector<std::string> segments;
  for (const auto& e : fs::directory_iterator(state + "/events"))
    if (e.path().extension() == ".jsonl") segments.push_back(e.path().string());
  std::sort(segments.begin(), segments.end());
  REQUIRE(segments.size() >= 4);
  for (size_t i = segments.size() / 2; i < segments.size(); ++i) {
    fs::remove(segments[i]);
    fs::remove(segments[i] + ".seal");
  }
  const uint64_t log_end = std::stoull(fs::path(segments[segments.size() / 2]).stem().string()) - 1;
  size_t past = 0;
  for (const std::string& name : Listed(state))
    if (name.size() == 20 && std::stoull(name) > log_end) ++past;
  REQUIRE(past >= 1);
  fs::remove_all(state + "/db");

  RunningLimbic again(dir, config);
  REQUIRE(again.port() != 0);
  bool said = false;
  for (const std::string& line : again.log())
    if (line.find("past the log's last seq " + std::to_string(log_end)) != std::string::npos)
      said = true;
  CHECK(said);
  for (const std::string& name : Listed(state))
    if (name.size() == 20) CHECK(std::stoull(name) <= log_end);
  CHECK(Metric(again.port(), "limbic_checkpoint_seq") <= static_cast<double>(log_end));
  // The new history's checkpoints are taken as events come, and looks use them.
  const uint64_t last = AddPercepts(again.port(), 45);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (Metric(again.port(), "limbic_checkpoint_seq") + 20 <= static_cast<double>(last) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(Metric(again.port(), "limbic_checkpoint_seq") + 20 > static_cast<double>(last));
  auto verify = Limbic({"--state", state, "--json", "replay", "--verify", state});
  INFO(verify.out << verify.err);
  CHECK(verify.exit_code == 0);
}


TEST_CASE("with checkpoints.enabled false none is taken and /metrics shows none of theirs",
          "[checkpoint]") {
  TempDir dir;
  json config = CheckpointConfig(dir, 5);
  config["checkpoints"]["enabled"] = false;
  RunningLimbic l(dir, config);
  AddPercepts(l.port(), 20);
  const std::string metrics = Http(l.port(), "GET", "/metrics").body;
  INFO(metrics);
  CHECK(metrics.find("limbic_checkpoint") == std::string::npos);
  CHECK(Listed(dir / "state").empty());
  // The neighbouring case, on: the same counters are there.
  TempDir on;
  RunningLimbic l2(on, CheckpointConfig(on, 5));
  CHECK(Metric(l2.port(), "limbic_checkpoints_taken_total") >= 0);
  CHECK(Metric(l2.port(), "limbic_checkpoint_failures_total") == 0);
}

}  // namespace checkpoint_it_test
