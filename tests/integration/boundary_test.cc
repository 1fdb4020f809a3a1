// Text and depth at the event boundary, through the real binary: bytes that
// are not UTF-8 become U+FFFD before anything is sized or indexed, whatever
// the entry point; records nested deeper than any limit an older limbic
// stored still read, replay, start and serve.
#include <signal.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "http.h"
#include "runtime_util.h"

using nlohmann::json;
using namespace limbic::testing;

namespace {

const std::string kReplacement = "\xef\xbf\xbd";  // U+FFFD

RunResult MustRun(std::vector<std::string> args, int want_exit = 0) {
  RunResult r = Limbic(args);
  INFO("limbic " << args[2] << " ... stdout: " << r.out.substr(0, 2000)
                 << " stderr: " << r.err.substr(0, 2000));
  REQUIRE(r.exit_code == want_exit);
  return r;
}

}  // namespace

TEST_CASE("a blink of Latin-1 text is staged as UTF-8, sized as stored, and the log reads back",
          "[boundary]") {
  TempDir dir;
  const std::string state = dir / "state";
  MustRun({"--state", state, "archive", "blink", "caf\xe9 latin1"});
  // The event holds the mended text and its byte count: "caf" U+FFFD " latin1".
  RunResult tail = MustRun({"--state", state, "events", "tail", "--type", "entry_staged"});
  json staged = json::parse(tail.out, nullptr, false);
  REQUIRE(staged.is_object());
  CHECK(staged["entry"]["text"] == "caf" + kReplacement + " latin1");
  CHECK(staged["entry"]["byte_size"] == 13);
  // Every reader of the log takes it.
  json stats = json::parse(MustRun({"--state", state, "--json", "archive", "stats"}).out);
  CHECK(stats["staged_pending"] == 1);
  RunResult recall = MustRun({"--state", state, "--json", "archive", "recall"});
  CHECK_THAT(recall.out, Catch::Contains("caf" + kReplacement + " latin1"));
  MustRun({"--state", state, "fsck"});
  CHECK_THAT(MustRun({"replay", "--verify", state}).out, Catch::Contains("match"));
  RunningLimbic l(dir, BaseConfig(dir));
  CHECK(l.port() != 0);
}

TEST_CASE("a signed GitHub delivery whose event header is not UTF-8 is found by its stored type",
          "[boundary]") {
  TempDir dir;
  const std::string secret = "It's a Secret to Everybody";
  {
    RunningLimbic l(dir, BaseConfig(dir, {}, {{"gh", {{"kind", "github"}, {"secret", secret}}}}));
    REQUIRE(l.port() != 0);
    const std::string raw = json{{"action", "opened"}, {"issue", {{"title", "t"}}}}.dump();
    auto r = Run({"/usr/bin/openssl", "dgst", "-sha256", "-hmac", secret}, raw);
    const std::string sig = "sha256=" + r.out.substr(r.out.rfind(' ') + 1, 64);
    auto posted = Http(
        l.port(), "POST", "/v1/sensors/gh", raw,
        {{"X-GitHub-Event", "\xff"}, {"X-Hub-Signature-256", sig}, {"X-GitHub-Delivery", "d-1"}});
    REQUIRE(posted.status == 202);
    json percept = Http(l.port(), "GET", "/v1/percepts/gh-d-1").Json();
    CHECK(percept["type"] == kReplacement + ".opened");
    // The type index holds what the log holds: the percept is found by it.
    json found = Http(l.port(), "GET", "/v1/percepts?type=%EF%BF%BD.opened").Json();
    REQUIRE(found["percepts"].size() == 1);
    CHECK(found["percepts"][0]["id"] == "gh-d-1");
    CHECK(l.child().Kill(SIGTERM) == 0);
  }
  const std::string state = dir / "state";
  MustRun({"--state", state, "fsck"});
  CHECK_THAT(MustRun({"replay", "--verify", state}).out, Catch::Contains("match"));
  RunResult listed =
      MustRun({"--state", state, "--json", "percept", "list", "--type", kReplacement + ".opened"});
  CHECK_THAT(listed.out, Catch::Contains("gh-d-1"));
}

TEST_CASE("records nested 80,000 deep that an older limbic stored: fsck, replay and run take them",
          "[boundary]") {
  TempDir dir;
  std::string deep;
  for (int i = 0; i < 40000; ++i) deep += "{\"a\":[";
  deep += "\"x\"";
  for (int i = 0; i < 40000; ++i) deep += "]}";
  const std::string file = dir / "old.jsonl";
  std::ofstream(file)
      << R"({"v":1,"seq":1,"ts":"2026-01-01T00:00:00.000Z","type":"percept_arrived","data":{"deep":)"
      << deep << R"(},"intensity":0.5,"percept_id":"p-1","percept_type":"t","source":"s"})" << "\n"
      << R"({"v":1,"seq":2,"ts":"2026-01-01T00:00:01.000Z","type":"thread_created","goal":"g",)"
      << R"("salience":0.5,"state":{"context":)" << deep << R"(},"thread_id":"t-1"})" << "\n"
      << R"({"v":1,"seq":3,"ts":"2026-01-01T00:00:02.000Z","type":"thread_updated",)"
      << R"("state":{"next_step":)" << deep << R"(},"thread_id":"t-1"})" << "\n";
  const std::string state = dir / "state";
  MustRun({"replay", "--from", file, "--into", state});
  MustRun({"--state", state, "fsck"});
  CHECK_THAT(MustRun({"replay", "--verify", state}).out, Catch::Contains("match"));
  RunningLimbic l(dir, BaseConfig(dir));
  REQUIRE(l.port() != 0);
  auto percept = Http(l.port(), "GET", "/v1/percepts/p-1");
  CHECK(percept.status == 200);
  CHECK(percept.body.find("\"data\":{\"deep\":" + deep + "}") != std::string::npos);
  auto thread = Http(l.port(), "GET", "/v1/threads/t-1");
  CHECK(thread.status == 200);
  CHECK(thread.body.find("\"context\":" + deep) != std::string::npos);
  CHECK(thread.body.find("\"next_step\":" + deep) != std::string::npos);
  // The context bundle reads the focused thread's state for entity names.
  auto context = Http(l.port(), "GET", "/v1/context?budget_tokens=100");
  CHECK(context.status == 200);
  CHECK(context.Json()["used_tokens"].get<int>() <= 100);
}
