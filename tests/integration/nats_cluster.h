// NATS servers for a test: one nats-server with JetStream, or a cluster of
// N on loopback (routes between them), started and stopped by the test.
//
// Each server i runs `nats-server -js -sd DIR/node<i> -n node<i> -a 127.0.0.1
// -p CLIENT -m MONITOR` and, when N > 1, `--cluster_name limbic-test
// --cluster nats://127.0.0.1:CLUSTER --routes <every server's cluster URL>`;
// its log goes to DIR/node<i>.log. Ports are picked free on 127.0.0.1 when
// the cluster starts and stay the server's for its lifetime (Restart reuses
// them and the store dir, so a restarted server is the same JetStream peer).
//
// Errors throw std::runtime_error naming the server and the tail of its log;
// Catch2 reports them as failures. nats-server is /usr/sbin/nats-server or
// found on PATH; when there is none, Start throws: a test that needs NATS
// fails, it does not skip (`make deps` installs it).
//
// Thread affinity: one test thread. Nothing here sleeps for a fixed time:
// every wait polls a condition under a deadline.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "process.h"

namespace limbic::testing {

// The nats-server binary: /usr/sbin/nats-server, else the first on PATH;
// "" when there is none.
std::string NatsServerBinary();

class NatsCluster {
 public:
  //! Starts `n` servers (n >= 1) with their store dirs and logs under `dir`
  //! (which must outlive the cluster), then waits up to 30 s for WaitReady.
  static std::unique_ptr<NatsCluster> Start(const std::string& dir, int n);
  //! SIGKILLs every server still running.
  ~NatsCluster();
  NatsCluster(const NatsCluster&) = delete;
  NatsCluster& operator=(const NatsCluster&) = delete;

  int size() const { return static_cast<int>(nodes_.size()); }
  //! "nats://127.0.0.1:PORT" of every server, running or not, in order.
  std::vector<std::string> urls() const;
  std::string url(int i) const;
  //! "node<i>": the server name JetStream reports (stream leaders, peers).
  std::string name(int i) const { return "node" + std::to_string(i); }
  uint16_t client_port(int i) const { return nodes_.at(i).client_port; }
  uint16_t monitor_port(int i) const { return nodes_.at(i).monitor_port; }
  std::string log_path(int i) const { return dir_ + "/" + name(i) + ".log"; }
  bool running(int i) const { return nodes_.at(i).process != nullptr; }

  //! SIGKILL to server i; returns once it is reaped. No-op when stopped.
  void Kill(int i);
  //! SIGTERM to server i, waits up to 10 s for it to exit (then SIGKILL).
  void Stop(int i);
  //! Starts server i again (stopped or killed) on its ports and store dir.
  //! Does not wait for readiness: call WaitReady.
  void Restart(int i);
  void StopAll();

  //! Waits until every running server answers GET /healthz with "ok" and,
  //! when clustered, its /jsz names a meta leader. False after `timeout_ms`.
  bool WaitReady(int timeout_ms = 30000) const;

  //! The index of the server that leads `stream` now, -1 when none does
  //! (being elected, or no such stream): a running server named leader by
  //! the running servers that know the stream, and that says so itself
  //! (GET /jsz?accounts=true&streams=true, account_details[].stream_detail[]
  //! .cluster.leader). A single server leads every stream it has.
  int StreamLeader(const std::string& stream) const;
  //! StreamLeader polled until it is not -1 and not `not_this` (e.g. the
  //! leader just killed); -1 after `timeout_ms`.
  int WaitStreamLeader(const std::string& stream, int not_this = -1, int timeout_ms = 30000) const;

  //! A JetStream API request ("$JS.API.…") to server i over the NATS
  //! protocol itself (a raw socket: the test needs no client library),
  //! its JSON answer; a null json when it got none within 5 s.
  nlohmann::json JsApi(int i, const std::string& subject, const std::string& body) const;
  //! Deletes every consumer of `stream` (asked of server i), as an
  //! operator would or a server that loses them; how many it deleted.
  int DeleteConsumers(int i, const std::string& stream) const;

 private:
  struct Node {
    uint16_t client_port = 0, cluster_port = 0, monitor_port = 0;
    std::unique_ptr<Child> process;  // null while stopped
  };
  NatsCluster(std::string dir, std::string binary)
      : dir_(std::move(dir)), binary_(std::move(binary)) {}
  void Launch(int i);
  // The last lines of server i's log, for error messages.
  std::string LogTail(int i) const;

  std::string dir_;
  std::string binary_;
  std::vector<Node> nodes_;
};

}  // namespace limbic::testing
