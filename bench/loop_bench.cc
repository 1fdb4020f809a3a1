// The core loop's figures (docs/performance.md), printed as JSON:
//
//   reflexes  MatchPercept latency at 1,000 and 10,000 rules (p50/p99):
//             rules from reflexes/bench_rules.h, percepts aimed at random
//             buckets, a third of them matching a rule's word; "spread"
//             over 50 sources x 20 types, and the worst case "one_bucket"
//             where every rule watches the same (source, type).
//   outbox    commit-to-dispatch: from the ack of an action_enqueued
//             (durable and applied) to the effector's Deliver call, through
//             the real Outbox (which logs action_sent durably first).
//   http      percepts/s through the real `limbic run` binary over
//             keep-alive connections, durability fsync.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <spdlog/sinks/null_sink.h>
#include <thread>

#include "reflexes/bench_rules.h"
#include "reflexes/engine.h"
#include "runtime/outbox.h"
#include "state/commands.h"

using namespace limbic;
using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

namespace {

double Us(SteadyClock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(i), v.end());
  return v[i];
}

json BenchReflexes(size_t n_rules, bool one_bucket) {
  const size_t sources = one_bucket ? 1 : 50, types = one_bucket ? 1 : 20;
  reflexes::ReflexEngine engine;
  reflexes::RuleContext ctx{{"log"}};
  for (const json& r : reflexes::GenerateRules(n_rules, {"log"}, sources, types))
    (void)engine.Put(*reflexes::ParseRule(r, ctx));
  std::mt19937 rng(42);
  std::vector<json> percepts;
  for (int i = 0; i < 20000; ++i) {
    size_t target = rng() % n_rules;
    bool hit = i % 3 == 0;
    std::string text = "issue opened by someone about " + std::string(hit ? "w" + std::to_string(target) : "nothing") +
                       " and some more words to scan through in the text";
    percepts.push_back({{"id", "p-" + std::to_string(i)}, {"source", "s" + std::to_string(target % sources)},
                        {"type", "t" + std::to_string(target % types)}, {"text", text}, {"intensity", 0.5},
                        {"data", json::object()}});
  }
  auto t_build = SteadyClock::now();
  (void)engine.MatchPercept(percepts[0], 0.5, 0);  // build the buckets
  double build_ms = Us(SteadyClock::now() - t_build) / 1000;
  auto stats = engine.index_stats();
  std::vector<double> lat;
  size_t matched = 0;
  for (const json& p : percepts) {
    auto t0 = SteadyClock::now();
    matched += engine.MatchPercept(p, 0.5, 0).size();
    lat.push_back(Us(SteadyClock::now() - t0));
  }
  return {{"rules", n_rules}, {"layout", one_bucket ? "one_bucket" : "spread"},
          {"buckets", stats.buckets}, {"sets", stats.sets}, {"build_ms", build_ms},
          {"percepts", percepts.size()}, {"matched", matched},
          {"p50_us", Percentile(lat, 0.5)}, {"p99_us", Percentile(lat, 0.99)}};
}

// Completes at once, recording when each delivery started.
class TimingEffector final : public effectors::Effector {
 public:
  explicit TimingEffector(boost::asio::io_context& ioc) : ioc_(ioc) {}
  const std::string& name() const override { return name_; }
  void Deliver(const effectors::Delivery& d, std::function<void(effectors::Outcome)> done) override {
    dispatched[d.action_id] = SteadyClock::now();
    boost::asio::post(ioc_, [done] { done(effectors::Outcome::Complete()); });
  }
  std::map<std::string, SteadyClock::time_point> dispatched;

 private:
  std::string name_ = "local";
  boost::asio::io_context& ioc_;
};

json BenchOutbox(const std::string& dir, int actions) {
  boost::asio::io_context ioc;
  // Completions arrive from the log's writer thread: keep the context alive
  // while it waits for them.
  auto guard = boost::asio::make_work_guard(ioc);
  state::EngineOptions o;
  o.state_dir = dir;
  o.post = [&ioc](std::function<void()> f) { boost::asio::post(ioc, std::move(f)); };
  auto engine = state::Engine::Open(o);
  if (!engine.ok()) throw std::runtime_error(engine.status().ToString());
  auto log = std::make_shared<spdlog::logger>("b", std::make_shared<spdlog::sinks::null_sink_mt>());
  std::map<std::string, runtime::Outbox::EffectorSlot> effectors;
  auto* timing = new TimingEffector(ioc);
  effectors.emplace("local", runtime::Outbox::EffectorSlot{std::unique_ptr<effectors::Effector>(timing), {}});
  runtime::Metrics metrics;
  runtime::Outbox outbox(ioc, **engine, effectors, runtime::OutboxConfig{}, metrics, log);
  (*engine)->AddListener([&](std::span<const state::Event> ev) { outbox.OnEvents(ev); });
  std::map<std::string, SteadyClock::time_point> committed;
  int next = 0;
  // One action at a time, so each latency is the loop's, not a queue's.
  std::function<void()> enqueue = [&] {
    if (next == actions) return;
    ++next;
    auto ev = state::BuildActionEnqueue({{"effector", "local"}, {"type", "t"}}, (*engine)->next_seq());
    (void)(*engine)->Submit(std::move(ev).value(), [&](const Status&, std::span<const state::Event> e) {
      committed[e.front().Str("action_id")] = SteadyClock::now();
    });
  };
  outbox.on_dispatch = [&](const std::string&) { boost::asio::post(ioc, enqueue); };
  enqueue();
  while (static_cast<int>(timing->dispatched.size()) < actions) ioc.run_one();
  (void)(*engine)->Flush();
  ioc.poll();
  std::vector<double> lat;
  for (auto& [id, t1] : timing->dispatched) lat.push_back(Us(t1 - committed[id]));
  return {{"actions", actions}, {"p50_us", Percentile(lat, 0.5)}, {"p99_us", Percentile(lat, 0.99)}};
}

int Connect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

json BenchHttp(const std::string& limbic, const std::string& dir, int connections, int seconds) {
  std::ofstream(dir + "/reflexes.json") << R"({"reflexes": []})";
  std::ofstream(dir + "/limbic.json") << R"({"api": {"port": 0}, "reflexes": "reflexes.json",
                                             "effectors": {"log": {"kind": "log"}}})";
  int out[2];
  if (pipe(out) != 0) throw std::runtime_error("pipe");
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 2);
    dup2(out[1], 1);
    execl(limbic.c_str(), limbic.c_str(), "--state", (dir + "/state").c_str(), "run", "--config",
          (dir + "/limbic.json").c_str(), nullptr);
    _exit(127);
  }
  close(out[1]);
  std::string log;
  uint16_t port = 0;
  char buf[4096];
  while (!port) {
    ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) throw std::runtime_error("limbic did not start: " + log);
    log.append(buf, static_cast<size_t>(n));
    auto at = log.find("api http://127.0.0.1:");
    if (at != std::string::npos && log.find(',', at) != std::string::npos) port = static_cast<uint16_t>(std::stoi(log.substr(at + 21)));
  }
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> done{0}, failed{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < connections; ++c) {
    clients.emplace_back([&, c] {
      int fd = Connect(port);
      std::string body = R"({"source":"bench","type":"message","intensity":0.5,"text":"keep-alive percept from client )" + std::to_string(c) + "\"}";
      std::string req = "POST /v1/percepts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                        std::to_string(body.size()) + "\r\n\r\n" + body;
      std::string in;
      char rb[8192];
      while (!stop) {
        if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) break;
        // Read one response (headers + Content-Length body).
        size_t need = std::string::npos;
        while (need == std::string::npos || in.size() < need) {
          ssize_t n = read(fd, rb, sizeof rb);
          if (n <= 0) return;
          in.append(rb, static_cast<size_t>(n));
          size_t end = in.find("\r\n\r\n");
          if (end != std::string::npos && need == std::string::npos) {
            size_t cl = in.find("Content-Length: ");
            need = end + 4 + std::stoul(in.substr(cl + 16));
          }
        }
        (in.compare(9, 3, "201") == 0 ? done : failed)++;
        in.erase(0, need);
      }
      close(fd);
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // warm up
  uint64_t start_count = done;
  auto t0 = SteadyClock::now();
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  double elapsed = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  uint64_t counted = done - start_count;
  stop = true;
  for (auto& t : clients) t.join();
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  close(out[0]);
  return {{"connections", connections}, {"seconds", elapsed}, {"percepts", counted},
          {"percepts_per_s", static_cast<double>(counted) / elapsed}, {"failed", failed.load()},
          {"durability", "fsync"}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "bench-loop-data";
  std::string limbic = std::filesystem::path(argv[0]).parent_path() / "limbic";
  int connections = 64, seconds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--dir") dir = v;
    else if (k == "--connections") connections = std::stoi(v);
    else if (k == "--seconds") seconds = std::stoi(v);
    else {
      std::fprintf(stderr, "usage: limbic_loop_bench [--dir D] [--connections N] [--seconds S]\n");
      return 2;
    }
  }
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/outbox");
  std::filesystem::create_directories(dir + "/http");
  json out;
  out["reflexes"] = {BenchReflexes(1000, false), BenchReflexes(10000, false), BenchReflexes(1000, true),
                     BenchReflexes(10000, true)};
  out["outbox"] = BenchOutbox(dir + "/outbox", 2000);
  out["http"] = BenchHttp(limbic, dir + "/http", connections, seconds);
  std::printf("%s\n", out.dump(2).c_str());
  std::filesystem::remove_all(dir);
  return 0;
}
