// The reading side of replication (runtime/replication/replicator.h, docs/scale.md):
// a hot standby, `limbic follow`, and its promotion.
//
// Standby (Follower): an ordered consumer on the stream applies each event
// through Engine::SubmitReplicated, the primary's seq and ts kept, so its
// log is the primary's line for line and its digest equals the primary's
// at the same seq. Before it applies anything it checks its log against
// the stream (CheckLogIsStream, runtime/replication/agent_stream.h): the whole log at
// its first start in a process, then its last line at each restart of the
// subscription (what it applied since came from the stream). A log that
// differs is never applied to: the standby stops following, says why in
// snapshot().error, and refuses to be promoted. While the consumer sends
// nothing it looks where the stream ends (stream_last_seq stays true), and
// a consumer that has sent nothing for 3 s while the stream holds more is
// replaced by a new one from the next seq (docs/scale.md).
//
// Promotion (Promote): the stream is applied through its last message,
// then primary_promoted is published with that message's stream sequence
// expected (PublishPromotion) and applied from the stream like any other
// event, so this log never holds what the stream does not. If the stream
// refuses it (the old primary still writes) or NATS cannot be reached,
// nothing was written: the standby goes on following and can be promoted
// again later.
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
#include "runtime/replication/agent_stream.h"
#include "runtime/replication/replicator.h"
#include "state/engine.h"

namespace limbic::runtime {

// <state>/standby.json: {nats, stream, agent, mode} of the stream a state
// dir follows, written when `limbic follow` starts on it and removed by its
// promotion; what `limbic promote` reads when no standby runs there.
std::string StandbyFilePath(const std::string& state_dir);
// FailedPrecondition, naming the file and the two ways out, when
// `state_dir` is a standby's (it has standby.json): its log takes only the
// stream's events, so no local write (the command line, `limbic run`).
Status RefuseStandbyWrites(const std::string& state_dir);

class Follower {
 public:
  struct Options {
    std::vector<std::string> nats;
    std::string stream;
    std::string agent;
    int64_t timeout_ms = 5000;  // a NATS request's deadline (replication.timeout)
  };
  Follower(boost::asio::io_context& ioc, state::Engine& engine, Options options,
           std::shared_ptr<spdlog::logger> log);
  ~Follower();

  Status Start();
  // Promotion (above): applies the stream through its last message (as it
  // is when this is called), publishes primary_promoted after it and
  // applies that too; then the follower has stopped and `done` gets the
  // event's seq and the stream sequence it follows. Or `done` gets why not
  // (FailedPrecondition: this log is not the stream's; Unavailable: NATS
  // unreachable, the stream moved on, not in `timeout_ms`) and the
  // standby goes on following. One at a time (the Runtime's promoting_).
  struct Promoted {
    uint64_t seq = 0;
    uint64_t stream_seq = 0;
  };
  void Promote(int64_t timeout_ms, std::function<void(Status, Promoted)> done);
  // Stops following; a promotion under way gets Unavailable.
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
  // Consumes until stopped, diverged or promoted; other errors restart it.
  Status Follow(nats::Connection& conn);
  // The stream is one a primary would take (UnfitStream): OK; else the
  // standby follows no more (diverged_, error_, a promotion under way
  // refused) and FailedPrecondition; other errors are NATS's. Each time
  // it subscribes, and at each look while the consumer is quiet: limits
  // may be added to a stream meanwhile.
  Status CheckStreamFit(nats::Connection& conn);
  // The promotion's steps on the follower's thread, mu_ held (unlocked
  // around NATS calls); false when Follow should return (promoted).
  bool StepPromotion(nats::Connection& conn, std::unique_lock<std::mutex>& lock);
  // Ends a promotion: `done` is posted with `s` (mu_ held).
  void FinishPromotion(Status s, Promoted result);
  // io thread: the promotion's deadline (re-armed while publishing).
  void ArmPromotionTimer(int64_t timeout_ms);
  // io thread: apply a decoded batch.
  void Apply(std::vector<state::Event> events, std::vector<std::string> lines);

  boost::asio::io_context& ioc_;
  state::Engine& engine_;
  const Options options_;
  std::shared_ptr<spdlog::logger> log_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool connected_ = false;
  std::string error_;
  std::string unreachable_;    // error_ while NATS is down; cleared when it is back
  std::string look_failed_;    // error_ while a quiet consumer's look at the stream fails
  std::string warned_;         // the last failure logged, until events are applied again
  Status diverged_;            // this log is not the stream's: follow no more
  bool checked_once_ = false;  // the whole log was checked against the stream
  uint64_t applied_ = 0;       // applied on the io thread
  uint64_t submitted_ = 0;     // handed to the io thread
  uint64_t stream_last_ = 0;   // last event seq seen in the stream
  bool restart_ = false;       // a batch failed to apply: subscribe again from applied_
  // Promotion: kDraining until applied_ reaches drain_end_ (once known),
  // kPublishing while primary_promoted is being published, kPublished
  // until it is applied.
  enum class Promotion { kNone, kDraining, kPublishing, kPublished };
  Promotion promotion_ = Promotion::kNone;
  bool drain_known_ = false;
  StreamEnd drain_end_;
  uint64_t promoted_seq_ = 0;
  std::function<void(Status, Promoted)> promote_done_;
  std::thread thread_;
};

}  // namespace limbic::runtime
