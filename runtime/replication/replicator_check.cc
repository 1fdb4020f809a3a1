// Replicator (replicator.h): where the stream stands against this log --
// the check before publishing (Sync), the look for messages deleted under
// a running primary (StreamLost), and fencing when another writer or an
// unfit stream is found (Fence, AgreedWith). Run and the publishing are in
// replicator.cc.
#include <boost/asio/post.hpp>
#include <optional>
#include <string>
#include <utility>

#include "runtime/replication/agent_stream.h"
#include "runtime/replication/replicator.h"

namespace limbic::runtime {

Status Replicator::Sync(nats::Connection& conn) {
  const std::string subject = config_.subject();
  auto info = conn.EnsureStream({config_.stream, {subject}, 0, true});
  if (!info.ok()) return info.status();
  if (const std::string other = UnfitStream(*info, config_.stream, subject); !other.empty()) {
    // Said with what the stream holds of this log, as any fence is.
    auto end = ReadStreamEnd(conn, config_.stream, config_.agent);
    Fence(
        other + "; set replication.stream to another stream, or change this one and restart limbic",
        info->last_seq, end.ok() ? end->event_seq : 0,
        end.ok() ? std::optional<uint64_t>(AgreedWith(conn, *end)) : std::nullopt);
    return Status::FailedPrecondition("fenced");
  }
  auto end = ReadStreamEnd(conn, config_.stream, config_.agent);
  if (!end.ok() && end.status().IsCorruption()) {
    Fence(end.status().message(), info->last_seq, 0);
    return Status::FailedPrecondition("fenced");
  }
  if (!end.ok()) return end.status();
  const uint64_t in_stream = end->event_seq;
  uint64_t local, dup_seq, dup_stream_seq;
  {
    std::lock_guard<std::mutex> lock(mu_);
    local = durable_;
    dup_seq = std::exchange(dup_seq_, 0);
    dup_stream_seq = dup_stream_seq_;
  }
  if (dup_seq > in_stream) {
    // Named a duplicate of a message the stream no longer holds: deleted.
    // Said, then published again after the failure's pause.
    return Status::Unavailable(
        "JetStream took event seq " + std::to_string(dup_seq) + " as a duplicate of stream seq " +
        std::to_string(dup_stream_seq) + ", which stream " + config_.stream +
        " no longer holds (deleted; it ends at event seq " + std::to_string(in_stream) +
        "): it takes the event again once its duplicate window has passed");
  }
  if (in_stream > local) {
    Fence("the stream " + config_.stream + " holds agent " + config_.agent +
              "'s events through seq " + std::to_string(in_stream) +
              ", this log only through seq " + std::to_string(local) +
              ": another primary has written (a promoted standby?), or this log lost its tail",
          info->last_seq, in_stream, AgreedWith(conn, *end));
    return Status::FailedPrecondition("fenced");
  }
  if (in_stream > 0) {
    auto line = LogLineAt(engine_.events_dir(), in_stream);
    if (!line.ok()) return line.status();
    if (!line->has_value())
      return Status::Unavailable("the local log has no seq " + std::to_string(in_stream) + " yet");
    if (**line != end->line) {
      Fence("the stream's event seq " + std::to_string(in_stream) +
                " is not this log's: another primary has written a different history for "
                "agent " +
                config_.agent,
            info->last_seq, in_stream, AgreedWith(conn, *end));
      return Status::FailedPrecondition("fenced");
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    replicated_ = sent_ = sync_event_ = stream_last_ = in_stream;
    sent_id_.clear();
    stream_seq_ = sync_stream_ = info->last_seq;
    // Every event through in_stream takes a message of its own: fewer
    // messages than events means some were deleted or purged.
    const std::string was = incomplete_;
    incomplete_ = info->messages >= in_stream
                      ? ""
                      : "stream " + config_.stream + " holds " + std::to_string(info->messages) +
                            " messages (stream seqs " + std::to_string(info->first_seq) + " to " +
                            std::to_string(info->last_seq) + ") for agent " + config_.agent +
                            "'s events 1 to " + std::to_string(in_stream) +
                            ": some were deleted or purged, so it can no longer start a standby or "
                            "rebuild a state dir (give replication a new stream)";
    if (!incomplete_.empty() && incomplete_ != was) log_->warn("replication: {}", incomplete_);
    acked_ahead_.clear();
    publish_failed_ = false;
    publish_error_ = Status::OK();
    checked_ = true;
  }
  reader_.reset();
  std::weak_ptr<int> alive = alive_;
  boost::asio::post(ioc_, [this, alive, in_stream] {
    if (!alive.expired()) Advance(in_stream);
  });
  // Said once per position: a Sync repeated after failing publishes (a
  // duplicate the stream dropped) says nothing new.
  if (std::make_pair(in_stream, local) != synced_said_) {
    synced_said_ = {in_stream, local};
    log_->info("replication: stream {} holds seq {} of {}; this log is at {}", config_.stream,
               in_stream, config_.agent, local);
  }
  // A failure is over once the stream holds this log, or takes its next
  // event (OnPublished): a Sync alone, whose publishes may fail again,
  // neither clears the error nor restarts the quorum's timeout.
  if (in_stream >= local) NoteSuccess();
  return Status::OK();
}

bool Replicator::StreamLost(nats::Connection& conn) {
  uint64_t replicated;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A stream already found short is said by Sync; nothing new to look for.
    if (!checked_ || !fenced_.empty() || !incomplete_.empty()) return false;
    replicated = replicated_;
  }
  auto info = conn.GetStream(config_.stream);
  if (!info.ok()) return false;  // a failing look is no finding; publishing says what fails
  // Each event the stream took is a message of its own (read after
  // `replicated`, so the ones acknowledged since only add to the count).
  if (info->messages >= replicated) return false;
  log_->warn(
      "replication: stream {} holds {} messages, fewer than the {} events it took: some were "
      "deleted; reading where it stands again",
      config_.stream, info->messages, replicated);
  return true;
}

uint64_t Replicator::AgreedWith(nats::Connection& conn, const StreamEnd& end) {
  uint64_t local;
  {
    std::lock_guard<std::mutex> lock(mu_);
    local = durable_;
  }
  uint64_t agreed = 0;
  Status s = CheckLogIsStream(conn, config_.stream, config_.agent, end, engine_.events_dir(), 1,
                              std::min(local, end.event_seq), &agreed);
  if (!s.ok() && !s.IsFailedPrecondition())
    log_->warn("replication: checking this log against the stream: {}", s.message());
  return agreed;
}

void Replicator::Fence(const std::string& why, uint64_t stream_seq, uint64_t stream_last,
                       std::optional<uint64_t> agreed) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!fenced_.empty()) return;
    fenced_ = why;
    if (agreed) replicated_ = *agreed;
    stream_seq_ = stream_seq;
    stream_last_ = stream_last;
  }
  log_->critical("replication: FENCED, refusing writes: {}", why);
  std::weak_ptr<int> alive = alive_;
  boost::asio::post(ioc_, [this, alive, why] {
    if (alive.expired()) return;
    Status gate = Status::Unavailable("fenced: " + why);
    engine_.set_write_gate(gate);
    // Writes already in the local log, waiting for the stream: never in
    // it, so never acknowledged; the client is told where they are.
    Status held = Status::Unavailable(
        "fenced: " + why +
        "; this write is in this primary's local log only, never in the stream: send it to the "
        "current primary");
    engine_.FailHeld(held);
    auto waiters = std::move(waiters_);
    waiters_.clear();
    for (auto& [seq, done] : waiters) done(held);
  });
}

}  // namespace limbic::runtime
