// The reading side of replication (runtime/replication.h, docs/scale.md):
// a hot standby and the stream reader of `replay --from nats://` and an
// offline `limbic promote`.
//
// Standby (Follower, `limbic follow`): an ordered consumer on the stream
// applies each event through Engine::SubmitReplicated, the primary's seq and
// ts kept, so its log is the primary's line for line and its digest equals
// the primary's at the same seq. Drain() stops at the stream's last message
// for promotion (the Runtime then starts a Replicator and writes
// primary_promoted, which fences the old primary).
//
// Threading: the Follower runs one thread of its own for NATS; everything
// that touches the engine is posted to the io thread. Public methods: io
// thread.
#pragma once

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/nats.h"
#include "base/status.h"
#include "runtime/metrics.h"
#include "runtime/replication.h"
#include "state/engine.h"

namespace limbic::runtime {

// <state>/standby.json: {nats, stream, agent, mode} of the stream a state
// dir follows, written when `limbic follow` starts on it and removed by its
// promotion; what `limbic promote` reads when no standby runs there.
std::string StandbyFilePath(const std::string& state_dir);

// Reads `agent`'s events from `stream` in order: a subscription from
// stream seq `start_stream_seq` (1: the start), events `first` through
// `last` handed to `take` (duplicates skipped; a gap is Corruption naming
// the stream seq). Waits up to 10 s for each message; a cluster electing
// leaders gets a few seconds before the subscription gives up.
Status ReadStream(nats::Connection& conn, const std::string& stream, const std::string& agent,
                  uint64_t start_stream_seq, uint64_t first, uint64_t last,
                  const std::function<Status(const nats::Message& message, uint64_t seq)>& take);

class Follower {
 public:
  struct Options {
    std::vector<std::string> nats;
    std::string stream;
    std::string agent;
  };
  Follower(boost::asio::io_context& ioc, state::Engine& engine, Options options, Metrics& metrics,
           std::shared_ptr<spdlog::logger> log);
  ~Follower();

  Status Start();
  // Applies the stream through its last message (as it is when this is
  // called), then stops consuming; `done` gets the last message's stream
  // sequence, or why it could not (NATS unreachable, a broken stream).
  void Drain(int64_t timeout_ms, std::function<void(Status, uint64_t stream_seq)> done);
  void Stop();

  struct Snapshot {
    bool connected = false;
    std::string error;
    uint64_t applied_seq = 0;
    uint64_t stream_last_seq = 0;  // the primary's last event seq the stream holds
    uint64_t lag() const {
      return stream_last_seq > applied_seq ? stream_last_seq - applied_seq : 0;
    }
  };
  Snapshot snapshot() const;
  const Options& options() const { return options_; }

 private:
  void Run();
  // Consumes until stopped or drained; errors restart it.
  Status Follow(nats::Connection& conn);
  // io thread: apply a decoded batch.
  void Apply(std::vector<state::Event> events, std::vector<std::string> lines);

  boost::asio::io_context& ioc_;
  state::Engine& engine_;
  const Options options_;
  Metrics& metrics_;
  std::shared_ptr<spdlog::logger> log_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool connected_ = false;
  std::string error_;
  uint64_t applied_ = 0;      // applied on the io thread
  uint64_t submitted_ = 0;    // handed to the io thread
  uint64_t stream_last_ = 0;  // last event seq seen in the stream
  // Drain: stop once applied_ reaches drain_target_.
  bool restart_ = false;  // a batch failed to apply: subscribe again from applied_
  bool draining_ = false;
  bool drain_known_ = false;  // drain_target_ read from the stream
  uint64_t drain_target_ = 0;
  uint64_t drain_stream_seq_ = 0;
  std::function<void(Status, uint64_t)> drain_done_;
  std::thread thread_;
};

}  // namespace limbic::runtime
