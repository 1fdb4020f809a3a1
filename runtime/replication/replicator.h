// Replication of the events log on NATS JetStream (docs/scale.md).
//
// Primary (Replicator): every durable event is published, in seq order, on
// the subject limbic.<agent>.events of the agent's own stream, one message
// per event whose body is the event's line exactly as the local log holds it
// (read back from the log), with
//   Nats-Msg-Id = <agent>:<seq>:<h>    h: the line's SHA-256, 16 hex digits
//                                      (ReplicationMsgId); a resend after a
//                                      reconnect is dropped by the server's
//                                      duplicate window;
//   Nats-Expected-Last-Sequence = N    the stream must end where this primary
//                                      left it, so a second writer for the
//                                      same agent is refused by JetStream;
//   Nats-Expected-Last-Msg-Id = id     on each publish but the first after a
//                                      check: the id of this log's previous
//                                      event. Sequence numbers alone let a
//                                      pipeline line up again behind another
//                                      writer's message (its event k refused,
//                                      its k+1 expecting the very slot the
//                                      other took); the ids, which differ
//                                      between histories, do not.
// Before it publishes (at start and after every failure) it reads the
// stream's last message and checks it against the local log: the stream may
// be behind (it catches up from the local log) but never ahead of it or
// different at the same seq. Either means another primary has written: this
// one is fenced. A fenced primary refuses every write (503, saying why) until
// an operator restarts it on a state dir that matches the stream. A stream
// that holds other subjects or removes messages by itself (UnfitStream)
// fences it too. Messages someone deletes pass JetStream's checks (the
// stream's last sequence stays), so every 2 s it also compares the
// stream's message count with the events it took (StreamLost): a deleted
// last event is published again, a gap is said in the error (healthz
// degraded) for as long as the stream lacks events.
//
// Modes (replication.mode):
//   async   writes are acknowledged after the local fsync; the stream
//           follows (limbic_replication_lag_events; healthz degraded past
//           replication.max_lag). Without NATS it goes on locally and
//           catches up when NATS is back.
//   quorum  a write is acknowledged only after the local fsync AND the
//           PubAck of every one of its events (the engine holds the
//           acknowledgement, Engine::set_hold_acks). When publishing has
//           failed for replication.timeout, writes are refused (503) and the
//           held ones answered 503 "outcome unknown" (they are in the local
//           log and will be replicated; a retry with the same id is safe);
//           writes resume by themselves once NATS takes them again.
//
// The reading side (a standby, `replay --from nats://`, an offline
// promotion) is runtime/replication/follower.h.
//
// Threading: the Replicator runs one thread of its own for NATS; everything that
// touches the engine is posted to the io thread. Public methods: io thread.
#pragma once

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "base/nats.h"
#include "base/status.h"
#include "runtime/replication/agent_stream.h"
#include "runtime/replication/config.h"
#include "state/engine.h"

namespace limbic::runtime {

class Replicator {
 public:
  Replicator(boost::asio::io_context& ioc, state::Engine& engine, ReplicationConfig config,
             std::shared_ptr<spdlog::logger> log);
  ~Replicator();

  // Holds acknowledgements (quorum), closes the write gate until the stream
  // has been checked (quorum), and starts the publishing thread, which
  // connects in the background. Errors: only a config NATS refuses outright.
  Status Start();
  // Lets the thread publish what is durable, for up to `grace_ms`, then
  // stops it; the engine's held acknowledgements fail.
  void Stop(int grace_ms);

  // A group is durable through `seq` (EngineOptions::on_durable).
  void OnDurable(uint64_t seq);
  // Calls `done` once the stream holds everything through `seq` (OK), when
  // the primary is fenced, or after `timeout_ms` (Unavailable).
  void WhenReplicated(uint64_t seq, int64_t timeout_ms, std::function<void(Status)> done);

  struct Snapshot {
    std::string mode;
    bool connected = false;
    bool checked = false;      // the stream's tail matched the local log
    std::string fenced;        // why, when fenced
    std::string error;         // the last failure, while failing
    uint64_t durable_seq = 0;  // the local log's
    // The last seq through which the stream holds this log's events, as
    // they are here (acknowledged by JetStream, or found there; when
    // fenced: up to where the histories part).
    uint64_t replicated_seq = 0;
    uint64_t stream_seq = 0;       // the stream's last sequence, as last read or acknowledged
    uint64_t stream_last_seq = 0;  // the agent's last event seq the stream holds
    uint64_t lag() const { return durable_seq > replicated_seq ? durable_seq - replicated_seq : 0; }
  };
  Snapshot snapshot() const;
  // OK, or why healthz should say degraded (fenced, lagging, failing).
  Status health() const;

 private:
  void Run();
  // Reads the stream's tail and checks it against the local log; sets the
  // publishing position. A divergence fences.
  Status Sync(nats::Connection& conn);
  // Hands the next durable events to NATS (pipelined, at most
  // kMaxInflight unacknowledged); false when it sent none.
  bool SendMore(nats::Connection& conn);
  // True when the stream holds fewer messages than the events it took
  // (someone deleted some: JetStream's own checks do not see it, the
  // stream's last sequence staying where it was), so Sync should read it
  // again: a deleted last event is published again, a gap is said.
  // Looked at every 2 s while publishing goes well.
  bool StreamLost(nats::Connection& conn);
  // A PubAck or a failure for event `seq` (a libnats thread).
  void OnPublished(uint64_t seq, const nats::PubResult& result);
  // Refuses every write from now on, recording what the stream holds: its
  // last sequence, the agent's last event seq in it and, when known, the
  // seq through which it holds this log's events.
  void Fence(const std::string& why, uint64_t stream_seq, uint64_t stream_last,
             std::optional<uint64_t> agreed = std::nullopt);
  // For a fenced primary's report: the seq through which a stream ending
  // at `end` holds this log's events, read from the stream's start
  // (CheckLogIsStream).
  uint64_t AgreedWith(nats::Connection& conn, const StreamEnd& end);
  // A failure, noted as the error health() shows. With `down`, NATS being
  // unreachable: noted only while that connection is still down, so a
  // reconnect (which clears it) is never followed by a stale one.
  void NoteFailure(const Status& s, const nats::Connection* down = nullptr);
  void NoteSuccess();
  // io thread: release held acks, fire WhenReplicated callbacks, metrics.
  void Advance(uint64_t through);

  boost::asio::io_context& ioc_;
  state::Engine& engine_;
  const ReplicationConfig config_;
  std::shared_ptr<spdlog::logger> log_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  int64_t stop_deadline_ms_ = 0;  // steady clock; drain until then
  uint64_t durable_ = 0;
  uint64_t replicated_ = 0;
  uint64_t stream_seq_ = 0;   // the stream's last sequence, as this primary left it
  uint64_t stream_last_ = 0;  // the agent's last event seq in it
  bool connected_ = false;
  bool checked_ = false;
  std::string fenced_;
  std::string error_;
  std::string unreachable_;       // error_ while NATS is down; cleared when it is back
  int64_t failing_since_ms_ = 0;  // 0 = not failing
  bool gate_closed_ = false;      // quorum: writes refused for failing too long
  std::thread thread_;
  uint64_t sent_ = 0;  // last seq handed to NATS
  // Its Nats-Msg-Id, what the next publish expects the stream's last to
  // be; "" right after Sync (the first publish expects only a sequence:
  // a restarted server may not know the last id any more).
  std::string sent_id_;
  // Where the last Sync found the stream: event sync_event_ at stream seq
  // sync_stream_ (what each message's expected last sequence is made from).
  uint64_t sync_event_ = 0;
  uint64_t sync_stream_ = 0;
  // Why the stream no longer holds this agent's whole history (messages
  // deleted or purged), found by Sync; shown as the error while no other
  // is, and healthz is degraded. "" when it does.
  std::string incomplete_;
  std::set<uint64_t> acked_ahead_;  // acknowledged past replicated_ + 1
  bool publish_failed_ = false;     // stop sending; Sync again once in-flight ones are back
  Status publish_error_;            // OK for a duplicate
  // The first event a publish found a duplicate of (0: none since the last
  // Sync) and the stream seq JetStream named: when Sync then finds the
  // stream ending before it, that message was deleted and JetStream drops
  // its republish until its duplicate window has passed.
  uint64_t dup_seq_ = 0;
  uint64_t dup_stream_seq_ = 0;
  std::pair<uint64_t, uint64_t> synced_said_{UINT64_MAX, 0};  // Sync's last log line: (stream, log)
  bool advance_posted_ = false;
  // The publishing thread's reader of the local log, at reader_next_.
  std::unique_ptr<state::LogReader> reader_;
  uint64_t reader_next_ = 0;

  // io thread only
  std::multimap<uint64_t, std::function<void(Status)>> waiters_;
  uint64_t advanced_ = 0;
};

}  // namespace limbic::runtime
