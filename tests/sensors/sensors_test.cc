#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <spdlog/sinks/null_sink.h>
#include <thread>

#include "sensors/builtin.h"

using namespace limbic;
using namespace limbic::sensors;
using nlohmann::json;

namespace {

std::shared_ptr<spdlog::logger> Quiet() {
  return std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::null_sink_mt>());
}

// A real, small sink: records requests, refuses those without a source.
struct Recorder {
  std::vector<json> got;
  PerceptSink Sink() {
    return [this](json r) {
      if (!r.contains("source")) return Status::InvalidArgument("missing source");
      got.push_back(std::move(r));
      return Status::OK();
    };
  }
};

// Runs the io_context until `pred` or the deadline.
bool RunUntil(boost::asio::io_context& ioc, const std::function<bool()>& pred, int ms = 5000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!pred() && std::chrono::steady_clock::now() < deadline) {
    ioc.restart();
    ioc.run_for(std::chrono::milliseconds(20));
  }
  return pred();
}

}  // namespace

TEST_CASE("bounded queue overflow policies", "[sensors]") {
  BoundedQueue newest(2, Overflow::kDropNewest);
  for (int i = 0; i < 4; ++i) newest.Push(i);
  auto a = newest.TakeAll();
  CHECK(a == std::deque<json>{0, 1});
  CHECK(newest.dropped() == 2);
  BoundedQueue oldest(2, Overflow::kDropOldest);
  for (int i = 0; i < 4; ++i) oldest.Push(i);
  CHECK(oldest.TakeAll() == std::deque<json>{2, 3});
  BoundedQueue block(1, Overflow::kBlock);
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
  auto s = MakeSensor("hooks", {{"kind", "webhook"}, {"source", "/app"}, {"type", "alert"}, {"text", "/msg/body"}, {"intensity", 0.9}},
                      ioc, rec.Sink(), Quiet());
  REQUIRE(s.ok());
  auto* w = dynamic_cast<WebhookSensor*>(s->get());
  REQUIRE(w);
  auto r = w->MapBody({{"app", "grafana"}, {"msg", {{"body", "disk full"}}}});
  REQUIRE(r.ok());
  CHECK(*r == json({{"source", "grafana"}, {"type", "alert"}, {"text", "disk full"}, {"intensity", 0.9}}));
  auto missing = w->MapBody({{"msg", {{"body", "x"}}}});
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("sensor \"hooks\": source pointer /app not found"));
}

TEST_CASE("github signatures: the documented example, and rejections", "[sensors]") {
  CHECK(GithubSignature("It's a Secret to Everybody", "Hello, World!") ==
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17");
  boost::asio::io_context ioc;
  Recorder rec;
  auto s = MakeSensor("gh", {{"kind", "github"}, {"secret", "k"}, {"intensity", {{"issues.opened", 0.9}, {"*", 0.2}}}},
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
  CHECK((*g->Map(R"({"zen":"x"})", "ping", GithubSignature("k", R"({"zen":"x"})"), ""))["intensity"] == 0.2);
  CHECK(g->Map(body, "issues", GithubSignature("other", body), "d1").status().IsFailedPrecondition());
  CHECK(g->Map(body, "issues", "", "d1").status().IsFailedPrecondition());
  CHECK(rec.got.empty());
  CHECK_FALSE(MakeSensor("gh", {{"kind", "github"}}, ioc, rec.Sink(), Quiet()).ok());
}

TEST_CASE("jsonl follows a file across rotation and skips garbage", "[sensors]") {
  char tmpl[] = "/tmp/limbic-sens-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string path = dir + "/in.jsonl";
  std::ofstream(path) << R"({"source":"old","type":"t"})" << "\n";
  boost::asio::io_context ioc;
  Recorder rec;
  auto s = MakeSensor("tail", {{"kind", "jsonl"}, {"path", path}, {"defaults", {{"type", "line"}}}}, ioc, rec.Sink(), Quiet());
  REQUIRE(s.ok());
  REQUIRE((*s)->Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  { std::ofstream(path, std::ios::app) << R"({"source":"a"})" << "\nnot json\n" << R"({"type":"no-source"})" << "\n"; }
  REQUIRE(RunUntil(ioc, [&] { return (*s)->stats().received >= 3; }));
  REQUIRE(rec.got.size() == 1);  // "old" was before the start; from "end"
  CHECK(rec.got[0] == json({{"source", "a"}, {"type", "line"}}));
  CHECK((*s)->stats().rejected == 2);
  std::filesystem::rename(path, path + ".1");
  std::ofstream(path) << R"({"source":"rotated"})" << "\n";
  REQUIRE(RunUntil(ioc, [&] { return rec.got.size() == 2; }));
  CHECK(rec.got[1]["source"] == "rotated");
  (*s)->Stop();
  std::filesystem::remove_all(dir);
}

TEST_CASE("timer ticks, configs are checked", "[sensors]") {
  boost::asio::io_context ioc;
  Recorder rec;
  auto s = MakeSensor("hb", {{"kind", "timer"}, {"every", "20ms"}, {"intensity", 0.1}}, ioc, rec.Sink(), Quiet());
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
