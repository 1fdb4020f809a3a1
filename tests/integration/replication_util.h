// Shared by the replication tests (docs/scale.md): a replicated config, the
// local log and the stream read line by line, a primary and a standby
// (`limbic follow`) started and polled on loopback, and a write storm.
//
// Thread affinity: one test thread, except Standby's log reader (its own
// thread, its lines under a mutex) and RunStorm's clients.
#pragma once

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "base/nats.h"
#include "http.h"
#include "nats_cluster.h"
#include "runtime_util.h"

namespace limbic::testing {

inline json ReplicatedConfig(const TempDir& dir, const std::vector<std::string>& urls,
                             const std::string& agent, const std::string& mode,
                             const std::string& stream = "LIMBIC") {
  json config = BaseConfig(dir);
  config["replication"] = {
      {"nats", urls}, {"stream", stream}, {"agent", agent}, {"mode", mode}, {"timeout", "1s"}};
  return config;
}

// Creates stream `name` on server 0 as an operator would: file storage,
// one replica, `subjects`, and the config keys in `extra` (limits, a
// duplicate window in nanoseconds). Fails the test unless JetStream took it.
inline void CreateStream(const NatsCluster& nats, const std::string& name, const json& subjects,
                         const json& extra = json::object()) {
  json config = {{"name", name}, {"subjects", subjects}, {"storage", "file"}, {"num_replicas", 1}};
  config.update(extra);
  const json created = nats.JsApi(0, "$JS.API.STREAM.CREATE." + name, config.dump());
  INFO(created.dump());
  REQUIRE(created.contains("config"));
}

// The last sequence stream `name` has stored (server 0's answer).
inline uint64_t StreamLastSeq(const NatsCluster& nats, const std::string& name) {
  const json info = nats.JsApi(0, "$JS.API.STREAM.INFO." + name, "");
  INFO(info.dump());
  REQUIRE(info.contains("state"));
  return info["state"]["last_seq"].get<uint64_t>();
}

// Deletes message `seq` of stream `name`, as an operator would.
inline void DeleteMessage(const NatsCluster& nats, const std::string& name, uint64_t seq) {
  const json deleted =
      nats.JsApi(0, "$JS.API.STREAM.MSG.DELETE." + name, json{{"seq", seq}}.dump());
  INFO(deleted.dump());
  REQUIRE(deleted.value("success", false));
}

// Every line of the local log, in seq order.
inline std::vector<std::string> LogLines(const std::string& state) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(state + "/events"))
    if (entry.path().extension() == ".jsonl") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  std::vector<std::string> lines;
  for (const std::string& f : files) {
    std::ifstream in(f);
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// Every message of the agent's subject, in stream order (bodies).
inline std::vector<std::string> StreamLines(const std::vector<std::string>& urls,
                                            const std::string& stream, const std::string& agent) {
  limbic::nats::ConnectOptions co;
  co.servers = urls;
  auto conn = limbic::nats::Connection::Connect(co);
  REQUIRE(conn.ok());
  const std::string subject = "limbic." + agent + ".events";
  auto last = (*conn)->LastMessage(stream, subject);
  INFO(last.status().message());
  REQUIRE(last.ok());
  std::vector<std::string> lines;
  if (!last->has_value()) return lines;
  const uint64_t end = (*last)->stream_seq;
  // Just after a server died the cluster may still be electing leaders.
  auto sub = (*conn)->SubscribeOrdered(stream, subject, 1);
  for (int i = 0; i < 100 && !sub.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    sub = (*conn)->SubscribeOrdered(stream, subject, 1);
  }
  INFO(sub.status().message());
  REQUIRE(sub.ok());
  while (true) {
    auto next = (*sub)->Next(10000);
    REQUIRE(next.ok());
    REQUIRE(next->has_value());
    lines.push_back((*next)->data);
    if ((*next)->stream_seq >= end) break;
  }
  return lines;
}

inline json Health(uint16_t port) { return Http(port, "GET", "/healthz").Json(); }

// /healthz's replication.error, "" when there is none.
inline std::string ErrorOf(const json& h) {
  return h.contains("replication") && h["replication"].contains("error")
             ? h["replication"]["error"].get<std::string>()
             : "";
}

// SIGTERM, then the exit code, with the log read to its end.
inline int Terminate(RunningLimbic& r) {
  kill(r.child().pid(), SIGTERM);
  r.WaitForLog("replication: stopped at seq", 20000);
  return r.child().Wait();
}

// `limbic run` on `config`, once it takes writes (quorum: its stream checked).
inline std::unique_ptr<RunningLimbic> StartPrimary(const TempDir& dir, const json& config) {
  auto primary = std::make_unique<RunningLimbic>(dir, config);
  REQUIRE(primary->port() != 0);
  WaitJson(
      primary->port(), "/healthz", [](const json& h) { return h["status"] == "ok"; }, 30000);
  return primary;
}

// `n` percepts, each acknowledged.
inline void AddPercepts(uint16_t port, int n) {
  for (int i = 0; i < n; ++i)
    REQUIRE(HttpJson(port, "POST", "/v1/percepts", {{"source", "t"}, {"type", "x"}}).status == 201);
}

// Waits until the primary's stream holds everything it has made durable.
inline void WaitReplicated(uint16_t port, int timeout_ms = 30000) {
  WaitJson(
      port, "/healthz",
      [](const json& h) {
        return h.contains("replication") && h["replication"]["lag"] == 0 &&
               h["replication"]["replicated_seq"] == h["replication"]["durable_seq"];
      },
      timeout_ms);
}

// A primary on `config` takes `n` percepts, the stream takes them, and it
// stops cleanly: the stream and dir/state as a stopped primary leaves them.
inline void ReplicateAndStop(const TempDir& dir, const json& config, int n) {
  auto primary = StartPrimary(dir, config);
  AddPercepts(primary->port(), n);
  WaitReplicated(primary->port());
  CHECK(Terminate(*primary) == 0);
}

// A running primary's log and its stream, read once they agree in length.
// The runtime appends events of its own (the reflex cursor,
// reflexes_evaluated, up to a second after the percepts it covers), so a
// read of the log and one of the stream may fall on either side of one:
// each pair is read after WaitReplicated, again until their lengths agree
// (at most 10 times). An event the stream lost keeps them apart, and the
// caller's comparison fails.
struct LogAndStream {
  std::vector<std::string> log, stream;
};
inline LogAndStream SettledLines(uint16_t port, const std::string& state,
                                 const std::vector<std::string>& urls, const std::string& stream,
                                 const std::string& agent) {
  LogAndStream lines;
  for (int i = 0; i < 10; ++i) {
    WaitReplicated(port);
    lines.log = LogLines(state);
    lines.stream = StreamLines(urls, stream, agent);
    if (lines.log.size() == lines.stream.size()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  return lines;
}

// `limbic follow` on `state`, port 0; finds the port in its log, then goes
// on reading the log to its end (so the process never blocks on a full
// pipe, and LogText has it all).
class Standby {
 public:
  // `config`: a config file for `follow --config` ("" = the built-in one).
  Standby(const std::string& state, const std::vector<std::string>& urls, const std::string& agent,
          const std::string& stream = "LIMBIC", const std::string& config = "") {
    std::string servers;
    for (const auto& u : urls) servers += (servers.empty() ? "" : ",") + u;
    std::vector<std::string> argv{LimbicBinary(), "follow", "--state",  state,  "--nats", servers,
                                  "--agent",      agent,    "--stream", stream, "--port", "0"};
    if (!config.empty()) {
      argv.push_back("--config");
      argv.push_back(config);
    }
    child_ = std::make_unique<Child>(argv, true);
    std::string line;
    while (child_->ReadLine(&line, 20000)) {
      Note(line);
      auto at = line.find("api http://127.0.0.1:");
      if (at != std::string::npos) {
        port_ = static_cast<uint16_t>(std::stoi(line.substr(at + 21)));
        break;
      }
      if (line.find("error") != std::string::npos) break;
    }
    reader_ = std::thread([this] {
      std::string l;
      while (!done_) {
        const auto asked = std::chrono::steady_clock::now();
        if (child_->ReadLine(&l, 200)) {
          Note(l);
        } else if (std::chrono::steady_clock::now() - asked < std::chrono::milliseconds(150)) {
          break;  // no timeout: the end of its output
        }
      }
    });
  }
  ~Standby() {
    done_ = true;
    child_->Kill(SIGKILL);
    child_->Wait();
    if (reader_.joinable()) reader_.join();
  }
  uint16_t port() const { return port_; }
  pid_t pid() const { return child_->pid(); }
  // Its log so far, for failure messages.
  std::string LogText() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out;
    for (const std::string& l : log_) out += l + "\n";
    return out;
  }
  // Whether a log line so far contains `needle`.
  bool Logged(const std::string& needle) {
    std::lock_guard<std::mutex> lock(mu_);
    return std::any_of(log_.begin(), log_.end(),
                       [&](const std::string& l) { return l.find(needle) != std::string::npos; });
  }

 private:
  void Note(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    log_.push_back(line);
  }
  std::unique_ptr<Child> child_;
  uint16_t port_ = 0;
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::vector<std::string> log_;
  std::thread reader_;
};

// `n` clients posting percepts to `port` as fast as they are answered,
// until Stop (or destruction, also when a check fails first).
class Writers {
 public:
  Writers(uint16_t port, int n) {
    for (int t = 0; t < n; ++t)
      threads_.emplace_back([this, port] {
        while (!stop_) HttpJson(port, "POST", "/v1/percepts", {{"source", "t"}, {"type", "x"}});
      });
  }
  ~Writers() { Stop(); }
  void Stop() {
    stop_ = true;
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

struct Storm {
  std::mutex mu;
  std::set<std::string> acked;  // 201: acknowledged
  std::atomic<int> refused{0};  // 503s seen (retried)
};

// `threads` clients, `per_thread` percepts each, every one retried with its
// id on 503 (or no answer) until it is acknowledged or known to exist.
inline void RunStorm(uint16_t port, int threads, int per_thread, Storm* storm) {
  std::vector<std::thread> clients;
  for (int t = 0; t < threads; ++t) {
    clients.emplace_back([=] {
      for (int i = 0; i < per_thread; ++i) {
        const std::string id = "s-" + std::to_string(t) + "-" + std::to_string(i);
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (std::chrono::steady_clock::now() < deadline) {
          auto r =
              HttpJson(port, "POST", "/v1/percepts",
                       {{"id", id}, {"source", "storm"}, {"type", "tick"}, {"intensity", 0.5}});
          if (r.status == 201) {
            std::lock_guard<std::mutex> lock(storm->mu);
            storm->acked.insert(id);
            break;
          }
          if (r.status == 409) break;  // an earlier try landed: not counted as acknowledged
          ++storm->refused;
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      }
    });
  }
  for (auto& c : clients) c.join();
}

inline size_t Acked(Storm& s) {
  std::lock_guard<std::mutex> lock(s.mu);
  return s.acked.size();
}

}  // namespace limbic::testing
