// An agent's events stream read as a log (runtime/replication/replicator.h,
// docs/scale.md): its messages' ids, where it ends, reading it in order,
// checking a local log against it, and claiming it for a new primary (a
// promotion).
//
// The stream holds the subject limbic.<agent>.events only, one message per
// event, in seq order and without gaps (every publish carries the expected
// last sequence), so event seq k is at stream seq
// end.stream_seq - (end.event_seq - k), unless a message was deleted
// (StreamSeqOf finds it then).
//
// Threading: these block on NATS and on the local log; call them from a
// thread of their own (a Follower's, a Replicator's, the command line),
// never from the io thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/nats.h"
#include "base/status.h"
#include "base/time.h"
#include "state/event.h"

namespace limbic::runtime {

// The line of event `seq` in the log `events_dir`, as written (not
// decoded); nullopt when the log does not reach it.
Result<std::optional<std::string>> LogLineAt(const std::string& events_dir, uint64_t seq);

// "<agent>:<seq>:<h>": the Nats-Msg-Id of event `seq` whose line is
// `line`, h the first 16 hex digits of the line's SHA-256. Two histories
// never share an id at the same seq, so JetStream's duplicate window drops
// only a true resend, and an id names one event of one history (what each
// publish expects its predecessor to be, runtime/replication/replicator.h).
std::string ReplicationMsgId(const std::string& agent, uint64_t seq, std::string_view line);
// The event seq a replicated message carries: from its Nats-Msg-Id when
// that names `agent` ("<agent>:<seq>", with or without ":<h>"), else from
// its body's "seq". 0 when neither does.
uint64_t ReplicatedSeq(const nats::Message& message, const std::string& agent);

// "" when `info` (stream `stream`) is a stream replication can use: the
// agent's own, holding `subject` only, and keeping every message (limits
// retention with no max_msgs, max_bytes, max_age or
// max_msgs_per_subject). Else why not, naming the subjects or the limits:
// "stream S holds subjects [...]: replication needs the agent's own
// stream, with subject X only", "stream S removes messages by itself
// (max_age 3600 s): ...". For a primary's fence and a standby's refusal
// to follow: a stream that drops old events cannot rebuild a state dir,
// start a new standby or check a log against it.
std::string UnfitStream(const nats::StreamInfo& info, const std::string& stream,
                        const std::string& subject);

// The agent's last message in its stream.
struct StreamEnd {
  uint64_t event_seq = 0;   // the event seq it carries; 0: the stream holds no event of the agent
  uint64_t stream_seq = 0;  // its stream sequence
  std::string line;         // its body: the event's line
};

// The last message of limbic.<agent>.events in `stream`. When the server
// says there is none while the stream holds messages (nats-server 2.9
// answers so once the subject's last message was deleted), the stream is
// read back from its last sequence to the newest message it still holds.
// Errors: those of NATS (Unavailable while unreachable, NotFound for no
// such stream), and Corruption when that message is not an event of
// `agent`.
Result<StreamEnd> ReadStreamEnd(nats::Connection& conn, const std::string& stream,
                                const std::string& agent);

// The stream seq that holds event `event_seq` of the stream that ends at
// `end` (past the end: where it would go, end.stream_seq + the distance).
// With one message per event that is end.stream_seq - (end.event_seq -
// event_seq); a deleted message (a hole, e.g. one the primary published
// again) or a repeated one puts it earlier, and it is then found by
// reading messages back from that guess. Where the stream does not hold
// the event (a gap, or a forged message in the way) it returns where the
// event should be, and the reading from there names what is wrong.
Result<uint64_t> StreamSeqOf(nats::Connection& conn, const std::string& stream,
                             const std::string& agent, const StreamEnd& end, uint64_t event_seq);

// Reads `agent`'s events from `stream` in order: a subscription from
// stream seq `start_stream_seq` (1: the start), events `first` through
// `last` handed to `take` (duplicates skipped; a gap is Corruption naming
// the stream seq); an error from `take` stops the reading and is returned.
// A cluster electing leaders gets a few seconds before the subscription
// gives up. The stream holds `last`, so a consumer quiet for 2 s has
// stalled and a new one goes on from the message after the last taken;
// 10 s without a message is Unavailable.
Status ReadStream(nats::Connection& conn, const std::string& stream, const std::string& agent,
                  uint64_t start_stream_seq, uint64_t first, uint64_t last,
                  const std::function<Status(const nats::Message& message, uint64_t seq)>& take);

// The one check that a local log is the stream's (a standby's on every
// start, both promotions, a fenced primary's report): events `from`
// through `local` of the log in `events_dir` against the stream's messages
// for the same seqs, line for line (`end` as ReadStreamEnd found it).
// OK when they are the same; FailedPrecondition naming the first seq that
// differs, or that the stream lacks when the log is ahead of it. Other
// errors (NATS, the local log) mean the check could not be made.
// `*same`, when given, receives the last seq through which they agree (as
// far as the check got; from - 1 when it compared nothing).
Status CheckLogIsStream(nats::Connection& conn, const std::string& stream, const std::string& agent,
                        const StreamEnd& end, const std::string& events_dir, uint64_t from,
                        uint64_t local, uint64_t* same = nullptr);

// A promotion's claim on the stream: publishes primary_promoted {agent,
// stream, stream_seq: end.stream_seq} as event end.event_seq + 1 (ts `now`,
// never before the stream's last event) with end.stream_seq expected as
// the stream's last sequence, and returns it once JetStream has stored it.
// The stream takes it only if nobody wrote after `end`: from then on an
// old primary's publishes are refused and it is fenced. Nothing local is
// written here: the caller's log takes the event from the stream, so its
// log never holds what the stream does not. Errors (the stream holds no
// new event unless the message says its outcome is unknown):
// FailedPrecondition when the stream is one a primary refuses
// (UnfitStream); else Unavailable: the stream moved on (the old primary
// still writes), NATS unreachable or no PubAck in time.
Result<state::Event> PublishPromotion(nats::Connection& conn, const std::string& stream,
                                      const std::string& agent, const StreamEnd& end, TimeMs now,
                                      int timeout_ms);

}  // namespace limbic::runtime
