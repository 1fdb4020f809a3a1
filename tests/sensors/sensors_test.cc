#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "sensor_test_util.h"
#include "sensors/builtin.h"

// This file's own namespace: test programs compile in unity batches.
namespace sensors_test {

using namespace limbic;
using namespace limbic::sensors;
using namespace limbic::sensors::testing;
using nlohmann::json;

TEST_CASE("bounded queue overflow policies", "[sensors]") {
  BoundedQueue<json> newest(2, Overflow::kDropNewest);
  for (int i = 0; i < 4; ++i) newest.Push(i);
  auto a = newest.TakeAll();
  CHECK(a == std::deque<json>{0, 1});
  CHECK(newest.dropped() == 2);
  BoundedQueue<json> oldest(2, Overflow::kDropOldest);
  for (int i = 0; i < 3; ++i) oldest.Push(i);
  std::optional<json> evicted;
  oldest.Push(3, &evicted);
  CHECK(evicted == json(1));  // the dropped item is handed back, for its owner
  CHECK(oldest.TakeAll() == std::deque<json>{2, 3});
  BoundedQueue<json> block(1, Overflow::kBlock);
  block.Push(1);
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    block.Push(2);
    pushed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(pushed);
  CHECK(block.TakeAll() == std::deque<json>{1});
  producer.join();
  CHECK(pushed);
  CHECK(block.TakeAll() == std::deque<json>{2});
  CHECK(block.dropped() == 0);
}

TEST_CASE("webhook mapping takes pointers and literals, and names a missing pointer", "[sensors]") {
  boost::asio::io_context ioc;
  Recorder rec;
  auto s = MakeSensor("hooks",
                      {{"kind", "webhook"},
                       {"source", "/app"},
                       {"type", "alert"},
                       {"text", "/msg/body"},
                       {"intensity", 0.9}},
                      ioc, rec.Sink(), Quiet());
  REQUIRE(s.ok());
  auto* w = dynamic_cast<WebhookSensor*>(s->get());
  REQUIRE(w);
  auto r = w->MapBody({{"app", "grafana"}, {"msg", {{"body", "disk full"}}}});
  REQUIRE(r.ok());
  CHECK(
      *r ==
      json({{"source", "grafana"}, {"type", "alert"}, {"text", "disk full"}, {"intensity", 0.9}}));
  auto missing = w->MapBody({{"msg", {{"body", "x"}}}});
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(),
             Catch::Contains("sensor \"hooks\": source pointer \"/app\" not found"));
  auto on_array = w->Map(R"({"app": "a", "msg": [1]})");  // "/msg/body" on an array
  CHECK_FALSE(on_array.ok());
  auto garbage = w->Map("{\"app\": ");
  REQUIRE_FALSE(garbage.ok());
  CHECK_THAT(garbage.status().message(), Catch::Contains("sensor \"hooks\": body: malformed JSON: syntax error"));
  CHECK(w->stats().rejected == 3);
  CHECK(w->stats().received == 3);

  // "" is the whole body; "~1" escapes '/'.
  auto whole = MakeSensor(
      "all", {{"kind", "webhook"}, {"source", "/a~1b"}, {"type", "/list/1"}, {"data", ""}}, ioc,
      rec.Sink(), Quiet());
  REQUIRE(whole.ok());
  json body = {{"a/b", "x"}, {"list", {"p", "q"}}};
  auto m = dynamic_cast<WebhookSensor*>(whole->get())->MapBody(body);
  REQUIRE(m.ok());
  CHECK(*m == json({{"source", "x"}, {"type", "q"}, {"data", body}}));
  auto deep = dynamic_cast<WebhookSensor*>(whole->get())->MapBody({{"a/b", "x"}, {"list", {"p"}}});
  CHECK_THAT(deep.status().message(), Catch::Contains("type pointer \"/list/1\" not found"));
  // An index beyond size_t makes nlohmann throw; it is "not found", not a 500.
  auto big = MakeSensor(
      "big", {{"kind", "webhook"}, {"source", "s"}, {"type", "/l/99999999999999999999999"}}, ioc,
      rec.Sink(), Quiet());
  REQUIRE(big.ok());
  auto beyond = dynamic_cast<WebhookSensor*>(big->get())->MapBody({{"l", {1}}});
  CHECK_THAT(beyond.status().message(), Catch::Contains("not found"));
}

TEST_CASE("github signatures: the documented example, and rejections", "[sensors]") {
  CHECK(GithubSignature("It's a Secret to Everybody", "Hello, World!") ==
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17");
  boost::asio::io_context ioc;
  Recorder rec;
  auto s = MakeSensor(
      "gh",
      {{"kind", "github"}, {"secret", "k"}, {"intensity", {{"issues.opened", 0.9}, {"*", 0.2}}}},
      ioc, rec.Sink(), Quiet());
  REQUIRE(s.ok());
  auto* g = dynamic_cast<GithubSensor*>(s->get());
  std::string body = R"({"action":"opened","issue":{"title":"bug"}})";
  auto ok = g->Map(body, "issues", GithubSignature("k", body), "d1");
  REQUIRE(ok.ok());
  CHECK((*ok)["type"] == "issues.opened");
  CHECK((*ok)["intensity"] == 0.9);
  CHECK((*ok)["text"] == "bug");
  CHECK((*ok)["id"] == "gh-d1");
  CHECK((*g->Map(R"({"zen":"x"})", "ping", GithubSignature("k", R"({"zen":"x"})"),
                 ""))["intensity"] == 0.2);
  CHECK(
      g->Map(body, "issues", GithubSignature("other", body), "d1").status().IsFailedPrecondition());
  CHECK(g->Map(body, "issues", "", "d1").status().IsFailedPrecondition());
  // A body nested past api.max_json_depth: refused once signed, and an
  // unsigned one is refused by its signature before anything parses it.
  const std::string deep = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto too_deep = g->Map(deep, "issues", GithubSignature("k", deep), "d2");
  CHECK(too_deep.status().IsInvalidArgument());
  CHECK_THAT(too_deep.status().message(),
             Catch::StartsWith("the GitHub payload: JSON nested deeper than 128"));
  CHECK(g->Map(deep, "issues", GithubSignature("other", deep), "d2").status().IsFailedPrecondition());
  CHECK(rec.got.empty());
  CHECK_FALSE(MakeSensor("gh", {{"kind", "github"}}, ioc, rec.Sink(), Quiet()).ok());
}

TEST_CASE("jsonl follows a file across rotation and skips garbage", "[sensors]") {
  char tmpl[] = "/tmp/limbic-sens-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string path = dir + "/in.jsonl";
  std::ofstream(path) << R"({"source":"old","type":"t"})"
                      << "\n";
  boost::asio::io_context ioc;
  Recorder rec;
  CapturedLog log;
  auto s = MakeSensor("tail", {{"kind", "jsonl"}, {"path", path}, {"defaults", {{"type", "line"}}}},
                      ioc, rec.Sink(), log.log);
  REQUIRE(s.ok());
  REQUIRE((*s)->Start().ok());
  REQUIRE(RunUntil(ioc, [&] {
    return log.Text().find("following " + path + " from line 2") != std::string::npos;
  }));
  {
    std::ofstream(path, std::ios::app) << R"({"source":"a"})"
                                       << "\nnot json\n"
                                       << R"({"type":"no-source"})"
                                       << "\n";
  }
  REQUIRE(RunUntil(ioc, [&] { return (*s)->stats().received >= 3; }));
  REQUIRE(rec.got.size() == 1);  // "old" was before the start; from "end"
  CHECK(rec.got[0] == json({{"source", "a"}, {"type", "line"}}));
  CHECK((*s)->stats().rejected == 2);
  // Line numbers are the file's: the skipped line counts.
  CHECK_THAT(log.Text(),
             Catch::Contains("sensor tail: line 3 of " + path + " is not a JSON object: not json"));
  CHECK_THAT(log.Text(),
             Catch::Contains("sensor tail: line 4 of " + path + " rejected: missing source"));
  std::filesystem::rename(path, path + ".1");
  std::ofstream(path) << "garbage after rotation\n"
                      << R"({"source":"rotated"})"
                      << "\n";
  REQUIRE(RunUntil(ioc, [&] { return rec.got.size() == 2; }));
  CHECK(rec.got[1]["source"] == "rotated");
  // A new file counts from 1 again.
  CHECK_THAT(log.Text(), Catch::Contains("line 1 of " + path +
                                         " is not a JSON object: garbage after rotation"));
  // Truncated in place: from 1 again.
  std::filesystem::resize_file(path, 0);
  REQUIRE(RunUntil(ioc, [&] { return log.Text().find("was truncated") != std::string::npos; }));
  { std::ofstream(path, std::ios::app) << "[1]\n"; }
  REQUIRE(RunUntil(ioc, [&] { return (*s)->stats().rejected == 4; }));
  CHECK_THAT(log.Text(), Catch::Contains("line 1 of " + path + " is not a JSON object: [1]"));
  (*s)->Stop();
  std::filesystem::remove_all(dir);
}

TEST_CASE("a line over 1 MiB is skipped, not buffered, and the next line still counts", "[sensors]") {
  char tmpl[] = "/tmp/limbic-sens-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string path = dir + "/in.jsonl";
  {
    std::ofstream out(path);
    out << R"({"source":"before","type":"t"})" << "\n";
    out << std::string(3 << 20, 'x') << "\n";  // 3 MiB without a newline in between
    out << R"({"source":"after","type":"t"})" << "\n";
  }
  boost::asio::io_context ioc;
  Recorder rec;
  CapturedLog log;
  auto s = MakeSensor("tail", {{"kind", "jsonl"}, {"path", path}, {"from", "start"}}, ioc,
                      rec.Sink(), log.log);
  REQUIRE(s.ok());
  REQUIRE((*s)->Start().ok());
  REQUIRE(RunUntil(ioc, [&] { return rec.got.size() == 2; }));
  CHECK(rec.got[0]["source"] == "before");
  CHECK(rec.got[1]["source"] == "after");
  CHECK((*s)->stats().rejected == 1);
  CHECK_THAT(log.Text(), Catch::Contains("line 2 of " + path + " is longer than 1048576 bytes"));
  (*s)->Stop();
  std::filesystem::remove_all(dir);
}

TEST_CASE("exec line numbers restart at 1 for each child process", "[sensors]") {
  // Two runs of an adapter: each child's lines count from 1.
  char tmpl[] = "/tmp/limbic-sens-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string script = dir + "/twice.sh";
  std::ofstream(script) << "#!/bin/sh\necho not-json\necho '{\"source\":\"x\",\"type\":\"t\"}'\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  boost::asio::io_context ioc;
  Recorder rec;
  CapturedLog log;
  auto s =
      MakeSensor("adapter", {{"kind", "exec"}, {"argv", {script}}, {"restart_backoff", "10ms"}},
                 ioc, rec.Sink(), log.log);
  REQUIRE(s.ok());
  REQUIRE((*s)->Start().ok());
  REQUIRE(RunUntil(ioc, [&] { return rec.got.size() >= 2; }));
  (*s)->Stop();
  std::string text = log.Text();
  const std::string needle = "line 1 from pid ";
  auto pid_at = [&](size_t at) { return std::stol(text.substr(at + needle.size(), 12)); };
  size_t first = text.find(needle);
  REQUIRE(first != std::string::npos);
  size_t second = text.find(needle, first + 1);
  REQUIRE(second != std::string::npos);
  CHECK(pid_at(first) != pid_at(second));
  CHECK_THAT(text, Catch::Contains("is not a JSON object: not-json"));
  CHECK(text.find("line 3 from") == std::string::npos);
  CHECK_THAT(text, Catch::Contains("exited with status 0; restarting in 10 ms"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("timer ticks, configs are checked", "[sensors]") {
  boost::asio::io_context ioc;
  Recorder rec;
  auto s = MakeSensor("hb", {{"kind", "timer"}, {"every", "20ms"}, {"intensity", 0.1}}, ioc,
                      rec.Sink(), Quiet());
  REQUIRE(s.ok());
  REQUIRE((*s)->Start().ok());
  REQUIRE(RunUntil(ioc, [&] { return rec.got.size() >= 2; }));
  CHECK(rec.got[1]["data"]["tick"] == 2);
  CHECK(rec.got[0]["source"] == "timer");
  (*s)->Stop();
  for (auto [cfg, needle] : {std::pair<json, const char*>{{{"kind", "timer"}}, "sensors.x.every"},
                             {{{"kind", "jsonl"}}, "sensors.x.path"},
                             {{{"kind", "stdin"}, {"overflow", "explode"}}, "sensors.x.overflow"},
                             {{{"kind", "exec"}, {"argv", {"sh"}}}, "sensors.x.argv"},
                             {{{"kind", "webhook"}, {"type", "t"}}, "sensors.x.source"},
                             {{{"kind", "teleport"}}, "unknown kind"}}) {
    auto r = MakeSensor("x", cfg, ioc, rec.Sink(), Quiet());
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains(needle));
  }
}

}  // namespace sensors_test
