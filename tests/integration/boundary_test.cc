// Text and depth at the event boundary, through the real binary: bytes that
// are not UTF-8 become U+FFFD before anything is sized or indexed, whatever
// the entry point; records nested deeper than any limit an older limbic
// stored still read, replay, start and serve.
#include <signal.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace boundary_test {

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

TEST_CASE("names refuse control and bidi characters: 400 naming the field and the code point",
          "[api][boundary]") {
  TempDir dir;
  RunningLimbic l(dir, BaseConfig(dir));
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  const std::string nel = "\xc2\x85";         // U+0085 NEXT LINE, a C1 control
  const std::string rlo = "\xe2\x80\xae";     // U+202E RIGHT-TO-LEFT OVERRIDE
  const std::string lri = "\xe2\x81\xa6";     // U+2066 LEFT-TO-RIGHT ISOLATE
  auto last_seq = [&] {
    return Http(port, "GET", "/v1/events?after=0&limit=1").Json().value("last_seq", uint64_t{0});
  };
  const uint64_t before = last_seq();
  auto refused = [&](const HttpReply& r, const std::string& field, const std::string& cp) {
    INFO(r.status << " " << r.body);
    CHECK(r.status == 400);
    const std::string message = r.Json()["error"]["message"].get<std::string>();
    CHECK_THAT(message, Catch::Contains(field) && Catch::Contains(cp));
  };
  const json percept = {{"source", "s"}, {"type", "t"}};
  const std::string body = percept.dump();

  // The actor header.
  refused(Http(port, "POST", "/v1/percepts", body, {{"X-Limbic-Actor", "bob" + nel}}),
          "X-Limbic-Actor", "U+0085");
  refused(Http(port, "POST", "/v1/percepts", body, {{"X-Limbic-Actor", "bob" + rlo + "evil"}}),
          "actor", "U+202E");
  // A percept's source and type, an action's type.
  refused(HttpJson(port, "POST", "/v1/percepts", {{"source", "mail" + rlo}, {"type", "t"}}),
          "source", "U+202E");
  refused(HttpJson(port, "POST", "/v1/percepts", {{"source", "s"}, {"type", lri + "t"}}),
          "percept_type", "U+2066");
  refused(HttpJson(port, "POST", "/v1/actions",
                   {{"effector", "log"}, {"type", "notify" + nel}, {"payload", json::object()}}),
          "action_type", "U+0085");
  // Memory: a fact's subject, a tag; an association's entities.
  refused(HttpJson(port, "POST", "/v1/memory/facts",
                   {{"subject", "al" + rlo + "ice"}, {"relation", "likes"}, {"object", "tea"}}),
          "subject", "U+202E");
  refused(HttpJson(port, "POST", "/v1/memory/facts",
                   {{"subject", "alice"},
                    {"relation", "likes"},
                    {"object", "tea"},
                    {"tags", {"ok", "x" + nel}}}),
          "tags[1]", "U+0085");
  refused(HttpJson(port, "POST", "/v1/memory/associations",
                   {{"entity_a", "alice"}, {"relation", "knows"}, {"entity_b", "bob" + lri}}),
          "entity_b", "U+2066");
  // A rule's send type.
  refused(HttpJson(port, "PUT", "/v1/reflexes/r1",
                   {{"when", {{"type", "ping"}}},
                    {"then", {{{"send", {{"effector", "log"}, {"type", "t" + rlo}}}}}}}),
          "send.type", "U+202E");
  CHECK(last_seq() == before);  // nothing was written

  // Letters of any script, and marks that do not reorder, are names.
  auto ok = Http(port, "POST", "/v1/percepts",
                 json{{"source", "caf\xc3\xa9"}, {"type", "\xe6\x97\xa5\xe6\x9c\xac"}}.dump(),
                 {{"X-Limbic-Actor", "mind:\xd7\xa2\xd7\x91\xd7\xa8\xd7\x99\xd7\xaa"}});
  INFO(ok.body);
  CHECK(ok.status == 201);
  REQUIRE(l.child().Kill(SIGTERM) == 0);
}

}  // namespace boundary_test
