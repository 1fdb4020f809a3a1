// `limbic run` on a disk that fills up: a small tmpfs mounted over the state
// dir (only as root, where mount(2) works; otherwise the test says it is
// skipped). Every answer must be true, health says what is wrong, writes
// resume once there is room, and a stop exits cleanly.
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace disk_full_test {

using nlohmann::json;
using namespace limbic::testing;

namespace {

// A tmpfs of `size` over `dir`, unmounted on destruction.
class Tmpfs {
 public:
  Tmpfs(const std::string& dir, const std::string& size) : dir_(dir) {
    std::filesystem::create_directories(dir);
    mounted_ =
        geteuid() == 0 && ::mount("tmpfs", dir.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
  }
  ~Tmpfs() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }

 private:
  std::string dir_;
  bool mounted_ = false;
};

// Writes `path` until the file system is full.
void Fill(const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  std::string block(64 << 10, 'x');
  while (out.write(block.data(), static_cast<std::streamsize>(block.size())) && out.flush()) {
  }
  // The last block may have been partly written; the page cache is full.
}

// Posts percepts with fresh ids until one is refused; every answer must be
// 201 (its id goes to *acked) or 503 with an honest reason (to *refused).
void PostUntilRefused(uint16_t port, int* next, std::set<std::string>* acked,
                      std::set<std::string>* refused) {
  bool unknown = false;
  for (int i = 0; i < 200 && refused->empty() && !unknown; ++i) {
    std::string id = "p-full-" + std::to_string((*next)++);
    auto r =
        HttpJson(port, "POST", "/v1/percepts",
                 {{"id", id}, {"source", "s"}, {"type", "t"}, {"text", std::string(3000, 'y')}});
    INFO(r.status << " " << r.body);
    REQUIRE((r.status == 201 || r.status == 503));
    if (r.status == 201) {
      acked->insert(id);
      continue;
    }
    json e = r.Json();
    CHECK(e["error"]["code"] == "unavailable");
    std::string msg = e["error"]["message"];
    // Not written (a retry is safe) or unknown (retry with the same id).
    CHECK((msg.starts_with("not written") || msg.starts_with("outcome unknown")));
    if (msg.starts_with("not written"))
      refused->insert(id);
    else
      unknown = true;
  }
  REQUIRE((!refused->empty() || unknown));
}

// The seq of the last line of the events log in `state` (0 when empty), as
// the files hold it.
uint64_t LogLastSeq(const std::string& state) {
  std::vector<std::string> segments;
  for (const auto& e : std::filesystem::directory_iterator(state + "/events"))
    if (e.path().extension() == ".jsonl") segments.push_back(e.path());
  std::sort(segments.begin(), segments.end());
  for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
    std::ifstream in(*it);
    std::string line, last;
    while (std::getline(in, line))
      if (!line.empty()) last = line;
    if (!last.empty()) return json::parse(last)["seq"].get<uint64_t>();
  }
  return 0;
}

// Stops `l` with SIGTERM and returns the seq its "stopped at seq N" line
// names; the exit must be clean.
uint64_t StopAndReadSeq(RunningLimbic& l) {
  l.child().Kill(SIGTERM);  // sends, then waits: the lines stay in the pipe
  REQUIRE(l.WaitForLog("stopped at seq "));
  CHECK(l.child().Wait() == 0);
  for (const std::string& line : l.log())
    if (size_t at = line.find("stopped at seq "); at != std::string::npos) {
      INFO(line);
      return std::stoull(line.substr(at + 15));
    }
  FAIL("no \"stopped at seq\" line");
  return 0;
}

}  // namespace

TEST_CASE("a full disk: honest answers, health degraded, writes resume, clean stop",
          "[runtime][diskfull]") {
  TempDir dir;
  Tmpfs disk(dir / "state", "20m");
  if (!disk.mounted()) {
    WARN("skipped: needs root and mount(2) to put the state dir on a small tmpfs");
    return;
  }
  const std::string ballast = dir / "state/ballast";
  std::set<std::string> acked, refused;
  int next = 0;
  {
    RunningLimbic l(dir, BaseConfig(dir));
    REQUIRE(l.port() != 0);
    auto first = HttpJson(l.port(), "POST", "/v1/percepts",
                          {{"id", "p-before"}, {"source", "s"}, {"type", "t"}});
    REQUIRE(first.status == 201);
    acked.insert("p-before");

    Fill(ballast);
    PostUntilRefused(l.port(), &next, &acked, &refused);
    auto health = Http(l.port(), "GET", "/healthz");
    INFO(health.body);
    CHECK(health.status == 503);
    CHECK(health.Json()["status"] == "degraded");
    CHECK_THAT(health.Json()["reason"].get<std::string>(),
               Catch::Contains("No space left on device"));

    // Room again: the next write gets through, without a restart.
    std::filesystem::remove(ballast);
    auto after = HttpJson(l.port(), "POST", "/v1/percepts",
                          {{"id", "p-after"}, {"source", "s"}, {"type", "t"}});
    INFO(after.body);
    REQUIRE(after.status == 201);
    acked.insert("p-after");
    CHECK(Http(l.port(), "GET", "/v1/percepts/p-after").status == 200);
    CHECK(Http(l.port(), "GET", "/healthz").Json()["status"] == "ok");

    // Full again, and stopped while full: still a clean exit, and the
    // last line names the last seq the log holds.
    Fill(ballast);
    PostUntilRefused(l.port(), &next, &acked, &refused);
    const uint64_t stopped_at = StopAndReadSeq(l);
    CHECK(stopped_at == LogLastSeq(dir / "state"));
  }
  std::filesystem::remove(ballast);
  RunningLimbic again(dir, BaseConfig(dir));
  REQUIRE(again.port() != 0);
  for (const std::string& id : acked) {
    INFO("acknowledged " << id);
    CHECK(Http(again.port(), "GET", "/v1/percepts/" + id).status == 200);
  }
  for (const std::string& id : refused) {
    INFO("refused " << id);
    CHECK(Http(again.port(), "GET", "/v1/percepts/" + id).status == 404);
  }
  again.child().Kill(SIGTERM);
  CHECK(again.child().Wait() == 0);
}

TEST_CASE("the projections' disk full: acknowledged writes, and the stop line names the log's seq",
          "[runtime][diskfull]") {
  TempDir dir;
  // The events log on the ordinary disk; only RocksDB's directory fills up.
  // A write then reaches the log (durable: acknowledged) and not the
  // projections, which lag the log until they catch up.
  Tmpfs disk(dir / "state/db", "8m");
  if (!disk.mounted()) {
    WARN("skipped: needs root and mount(2) to put the projections on a small tmpfs");
    return;
  }
  const std::string ballast = dir / "state/db/ballast";
  std::set<std::string> acked;
  int next = 0;
  {
    RunningLimbic l(dir, BaseConfig(dir));
    REQUIRE(l.port() != 0);
    REQUIRE(HttpJson(l.port(), "POST", "/v1/percepts",
                     {{"id", "p-before"}, {"source", "s"}, {"type", "t"}})
                .status == 201);
    acked.insert("p-before");
    Fill(ballast);
    // Until RocksDB cannot take a write: acknowledged (the log has it),
    // then refused "not written" while the projections cannot catch up.
    bool lagging = false;
    for (int i = 0; i < 2000 && !lagging; ++i) {
      std::string id = "p-full-" + std::to_string(next++);
      auto r = HttpJson(l.port(), "POST", "/v1/percepts",
                        {{"id", id}, {"source", "s"}, {"type", "t"}, {"text", std::string(3000, 'y')}});
      INFO(r.status << " " << r.body);
      REQUIRE((r.status == 201 || r.status == 503));
      if (r.status == 201) acked.insert(id);
      lagging = r.status == 503;
    }
    REQUIRE(lagging);
    auto health = Http(l.port(), "GET", "/healthz");
    INFO(health.body);
    CHECK(health.status == 503);
    const uint64_t stopped_at = StopAndReadSeq(l);
    CHECK(stopped_at == LogLastSeq(dir / "state"));
    CHECK(l.WaitForLog("(the projections end at seq "));
  }
  std::filesystem::remove(ballast);
  RunningLimbic again(dir, BaseConfig(dir));
  REQUIRE(again.port() != 0);
  for (const std::string& id : acked) {
    INFO("acknowledged " << id);
    CHECK(Http(again.port(), "GET", "/v1/percepts/" + id).status == 200);
  }
  const uint64_t stopped_at = StopAndReadSeq(again);
  CHECK(stopped_at == LogLastSeq(dir / "state"));
}

}  // namespace disk_full_test
