// The exec kind of mind (docs/mind.md) through the real binary: a Python
// mind acting through the API, hanging (killed with its group at
// max_session, or put to sleep), failing, printing past max_steps, left
// running by a SIGKILLed runtime, holding or closing its stdin.
#include "mind_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace mind_exec_test {

using namespace mind_util;

TEST_CASE("mind: an exec mind in Python acts through the API and exits", "[runtime][mind][exec]") {
  TempDir dir;
  const std::string script = R"PY(import json, os, sys, urllib.request
wake = json.loads(sys.stdin.read())
headers = {"Content-Type": "application/json",
           "X-Limbic-Actor": os.environ["LIMBIC_ACTOR"],
           "X-Limbic-Reason": "session " + os.environ["LIMBIC_MIND_SESSION"]}
body = json.dumps({"goal": "exec: " + wake["reason"], "id": "t-exec"}).encode()
req = urllib.request.Request(os.environ["LIMBIC_URL"] + "/v1/threads", data=body, headers=headers, method="POST")
made = json.load(urllib.request.urlopen(req, timeout=20))
with open("wake.json", "w") as f:
    json.dump({"wake": wake, "cwd": os.getcwd(), "session": os.environ["LIMBIC_MIND_SESSION"]}, f)
print("not a step, just a line", flush=True)
print(json.dumps({"text": "made " + made["id"], "tokens_in": 7, "tokens_out": 3, "model": "py-mind"}), flush=True)
)PY";
  RunningLimbic l(dir, ExecConfig(dir, script));
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  const std::string id = Wake(port, "say hi");
  json s = WaitAsleep(port, id);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "exited");
  REQUIRE(s["steps"].size() == 1);
  CHECK(s["steps"][0]["text"] == "made t-exec");
  CHECK(s["steps"][0]["model"] == "py-mind");
  CHECK(s["tokens"] == 10);
  json thread = Http(port, "GET", "/v1/threads/t-exec").Json();
  CHECK(thread["goal"] == "exec: say hi");
  auto created = EventsOf(AllEvents(port), "thread_created");
  REQUIRE(created.size() == 1);
  CHECK(created[0]["actor"] == "mind:scout");
  CHECK(created[0]["reason"] == "session " + id);
  // What it was given: the wake and the context, in the config's directory.
  json seen = json::parse(ReadText(dir / "wake.json"));
  CHECK(seen["session"] == id);
  CHECK(seen["wake"]["session"] == id);
  CHECK(seen["wake"]["trigger"] == "explicit");
  CHECK(seen["wake"]["reason"] == "say hi");
  CHECK(seen["wake"]["context"].is_object());
  CHECK(seen["wake"]["budget"].is_object());
  CHECK(seen["cwd"] == dir.path());
  CHECK(Http(port, "GET", "/v1/mind").Json()["kind"] == "exec");
}

TEST_CASE("mind: an exec mind that hangs is killed at max_session with its process group",
          "[runtime][mind][exec]") {
  TempDir dir;
  // 2 s: time for Python to start its child and say so, even on a loaded machine.
  RunningLimbic l(dir, ExecConfig(dir, kHangingMind, {{"budget", {{"max_session", "2s"}}}}));
  REQUIRE(l.port() != 0);
  const std::string id = Wake(l.port(), "hang");
  json pids = WaitFile(dir / "pids.json");
  const pid_t pgid = pids["pgid"];
  CHECK(pids["pid"] == pids["pgid"]);  // its own group
  CHECK(pgid != getpgid(0));
  json s = WaitAsleep(l.port(), id);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "max_session");
  CHECK(s["duration_ms"].get<int64_t>() >= 2000);
  CHECK(s["steps"].size() == 1);
  CHECK(GroupGone(pgid));
  CHECK(LiveGroupMembers(pgid).empty());
}

TEST_CASE("mind: POST /v1/mind/sleep ends a hanging exec mind, slept", "[runtime][mind][exec]") {
  TempDir dir;
  RunningLimbic l(dir, ExecConfig(dir, kHangingMind));
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  CHECK(HttpJson(port, "POST", "/v1/mind/sleep", json::object()).status == 409);  // asleep already
  const std::string id = Wake(port, "hang");
  json pids = WaitFile(dir / "pids.json");
  const pid_t pgid = pids["pgid"];
  WaitJson(port, "/v1/mind/sessions/" + id, [](const json& s) { return s["steps"].size() == 1; });
  // One session at a time.
  auto busy = HttpJson(port, "POST", "/v1/mind/wake", {{"reason", "again"}});
  CHECK(busy.status == 409);
  CHECK(busy.Json()["error"]["code"] == "busy");
  auto r = HttpJson(port, "POST", "/v1/mind/sleep", json::object());
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(r.Json()["session"] == id);
  CHECK(r.Json()["outcome"] == "slept");
  json s = WaitAsleep(port, id);
  CHECK(s["outcome"] == "slept");
  CHECK(GroupGone(pgid));
}

TEST_CASE("mind: SIGTERM mid-session ends it interrupted before exit, an exec mind's group with it",
          "[runtime][mind][exec]") {
  TempDir dir;
  json config = ExecConfig(dir, kHangingMind);
  std::string id;
  pid_t pgid = 0;
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    id = Wake(l.port(), "hang");
    pgid = WaitFile(dir / "pids.json")["pgid"];
    WaitJson(l.port(), "/v1/mind/sessions/" + id,
             [](const json& s) { return s["steps"].size() == 1; });
    CHECK(l.child().Kill(SIGTERM) == 0);
    CHECK(GroupGone(pgid));
  }
  RunningLimbic again(dir, config);
  REQUIRE(again.port() != 0);
  CheckStoppedByLimbic(again.port(), id);
  CHECK(EventsOf(AllEvents(again.port()), "mind_slept").size() == 1);
}

TEST_CASE("mind: an exec mind that fails ends the session in error, naming its exit",
          "[runtime][mind][exec]") {
  TempDir dir;
  RunningLimbic l(
      dir, ExecConfig(dir, "import sys\nprint('giving up', file=sys.stderr)\nsys.exit(3)\n"));
  REQUIRE(l.port() != 0);
  const std::string id = Wake(l.port(), "fail");
  json s = WaitAsleep(l.port(), id);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "error");
  CHECK_THAT(s["error"].get<std::string>(), Catch::Contains("3"));
  CHECK(s["steps"].empty());
  CHECK(l.WaitForLog("giving up"));  // its stderr is logged
}

TEST_CASE("mind: with api.token the mind's calls and an exec mind's requests carry the token",
          "[runtime][mind][exec]") {
  TempDir dir;
  const std::string script = R"PY(import json, os, sys, urllib.request
wake = json.loads(sys.stdin.read())
headers = {"Content-Type": "application/json", "X-Limbic-Actor": os.environ["LIMBIC_ACTOR"],
           "Authorization": "Bearer " + os.environ["LIMBIC_API_TOKEN"]}
req = urllib.request.Request(os.environ["LIMBIC_URL"] + "/v1/threads", data=json.dumps({"goal": "with a token"}).encode(),
                             headers=headers, method="POST")
made = json.load(urllib.request.urlopen(req, timeout=20))
print(json.dumps({"text": made["id"] + " " + str("error" in wake["context"])}), flush=True)
)PY";
  json config = ExecConfig(dir, script);
  config["api"]["token"] = "t0ken-for-the-api";
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  const std::vector<std::pair<std::string, std::string>> auth = {
      {"Authorization", "Bearer t0ken-for-the-api"}};
  CHECK(Http(port, "GET", "/v1/mind").status == 401);
  auto w = Http(port, "POST", "/v1/mind/wake", json{{"reason", "token"}}.dump(), auth);
  INFO(w.body);
  REQUIRE(w.status == 202);
  const std::string id = w.Json()["session"];
  json s;
  for (auto deadline = Steady::now() + std::chrono::seconds(20); Steady::now() < deadline;) {
    s = Http(port, "GET", "/v1/mind/sessions/" + id, "", auth).Json();
    if (s.value("status", "") == "asleep") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  INFO(s.dump(1));
  CHECK(s["outcome"] == "exited");
  REQUIRE(s["steps"].size() == 1);
  const std::string text = s["steps"][0]["text"];
  CHECK_THAT(text, Catch::EndsWith(" False"));  // the context was fetched with the token
  const std::string thread = text.substr(0, text.find(' '));
  json t = Http(port, "GET", "/v1/threads/" + thread, "", auth).Json();
  CHECK(t["goal"] == "with a token");
}

TEST_CASE(
    "mind: a program that closes its stdin unread is an EPIPE, not the runtime's death by SIGPIPE",
    "[runtime][mind][exec]") {
  TempDir dir;
  // Both close their stdin at once: what is written after that (more than
  // a pipe holds) meets a pipe without a reader.
  const json closer = {"/bin/sh", "-c", "exec 0<&-; sleep 0.2"};
  json config = BaseConfig(dir, {{"closer", {{"kind", "exec"}, {"argv", closer}}}});
  config["api"]["body_limit"] = 1 << 20;
  config["mind"] = {{"enabled", true},
                    {"kind", "exec"},
                    {"command", closer},
                    {"context_tokens", 100000},
                    {"wake", {{"threshold", 1}, {"arousal_gain", 0}, {"focused_thread", false}}},
                    {"budget", {{"max_session", "20s"}}}};
  DefaultSigpipeLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  const uint16_t port = l.port();
  const std::string big(150000, 'x');
  // The focused thread is in the context, so the wake is bigger than a pipe.
  REQUIRE(HttpJson(port, "POST", "/v1/threads", {{"goal", "big"}, {"state", {{"context", big}}}})
              .status == 201);
  const std::string id = Wake(port, "a big wake");
  json s = WaitAsleep(port, id);
  INFO(s.dump().substr(0, 2000));
  CHECK(s["outcome"] == "exited");
  CHECK(Http(port, "GET", "/healthz").status == 200);
  // The exec effector writes its payload the same way.
  auto a = HttpJson(port, "POST", "/v1/actions",
                    {{"effector", "closer"}, {"type", "t"}, {"payload", {{"text", big}}}});
  REQUIRE(a.status == 201);
  const std::string action = a.Json()["id"];
  WaitJson(port, "/v1/actions/" + action, [](const json& j) {
    return j["attempts"].get<int>() >= 1 && j["status"] != "inflight";
  });
  CHECK(Http(port, "GET", "/healthz").status == 200);
  int code = 0;
  CHECK_FALSE(l.child().WaitFor(0, &code));  // still running
  CHECK(l.child().Kill(SIGTERM) == 0);
}

TEST_CASE("mind: an exec mind that prints more steps than max_steps is stopped at max_steps",
          "[runtime][mind][exec]") {
  TempDir dir;
  const std::string script = R"PY(import json, os, sys, time
with open("pids.tmp", "w") as f:
    json.dump({"pgid": os.getpgid(0)}, f)
os.rename("pids.tmp", "pids.json")
for i in range(5):
    print(json.dumps({"text": "step %d" % i, "tokens_in": 1, "tokens_out": 1}), flush=True)
time.sleep(1000)
)PY";
  RunningLimbic l(dir, ExecConfig(dir, script, {{"budget", {{"max_steps", 2}}}}));
  REQUIRE(l.port() != 0);
  const std::string id = Wake(l.port(), "chatty");
  const pid_t pgid = WaitFile(dir / "pids.json")["pgid"];
  json s = WaitAsleep(l.port(), id);
  INFO(s.dump(1));
  CHECK(s["outcome"] == "max_steps");
  REQUIRE(s["steps"].size() == 2);
  CHECK(s["steps"][1]["text"] == "step 1");
  CHECK(s["tokens"] == 4);
  CHECK(GroupGone(pgid));
}

TEST_CASE("mind: after a SIGKILL the next start ends the exec mind's group it left running",
          "[runtime][mind][exec][crash]") {
  TempDir dir;
  json config = ExecConfig(dir, kHangingMind);
  std::string id;
  pid_t pgid = 0;
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    id = Wake(l.port(), "hang");
    pgid = WaitFile(dir / "pids.json")["pgid"];
    CHECK(l.child().Kill(SIGKILL) == -SIGKILL);
  }
  CHECK_FALSE(LiveGroupMembers(pgid).empty());  // the orphans run on
  RunningLimbic again(dir, config);
  REQUIRE(again.port() != 0);
  CHECK(GroupGone(pgid));
  json s = WaitAsleep(again.port(), id);
  CHECK(s["outcome"] == "interrupted");
  // Not resumed: no program started again.
  CHECK(EventsOf(AllEvents(again.port()), "mind_woken").size() == 1);
}

TEST_CASE("mind: a child holding an exec mind's stdin unread holds neither the session nor the stop",
          "[runtime][mind]") {
  TempDir dir;
  const std::string pidfile = dir / "child.pid";
  const std::string script =
      "import os, sys, time\n"
      "pid = os.fork()\n"
      "if pid == 0:\n"
      "    os.setsid(); os.close(1); os.close(2); time.sleep(60); os._exit(0)\n"
      "open('" + pidfile + "', 'w').write(str(pid))\n"
      "sys.exit(0)\n";
  json config = ExecConfig(dir, script, {{"wake", {{"threshold", 0.5}}}});
  config["api"]["body_limit"] = 1 << 20;
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  // The woken percept's record goes into the wake: 300 KB of it.
  auto r = HttpJson(l.port(), "POST", "/v1/percepts",
                    {{"source", "chat"}, {"type", "msg"}, {"intensity", 1.0}, {"text", std::string(300000, 'z')}});
  REQUIRE(r.status == 201);
  json list = WaitJson(l.port(), "/v1/mind/sessions", [](const json& j) {
    return j["sessions"].size() == 1 && j["sessions"][0]["status"] == "asleep";
  });
  CHECK(list["sessions"][0]["outcome"] == "exited");
  CHECK(list["sessions"][0]["duration_ms"].get<uint64_t>() < 10000);  // not max_session's 60 s
  const auto t0 = Steady::now();
  CHECK(l.child().Kill(SIGTERM) == 0);
  CHECK(Steady::now() - t0 < std::chrono::seconds(10));
  std::ifstream in(pidfile);
  pid_t child = 0;
  if (in >> child && child > 0) ::kill(child, SIGKILL);
}

}  // namespace mind_exec_test
