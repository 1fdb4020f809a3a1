#include "runtime/replication/agent_stream.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "base/sha256.h"
#include "state/event_log.h"

namespace limbic::runtime {
namespace {

std::string Subject(const std::string& agent) { return "limbic." + agent + ".events"; }

}  // namespace

Result<std::optional<std::string>> LogLineAt(const std::string& events_dir, uint64_t seq) {
  state::LogReader::Options ro;
  ro.from_seq = seq;
  ro.decode = false;
  auto reader = state::LogReader::Open(events_dir, ro);
  if (!reader.ok()) return reader.status();
  state::Event e;
  auto got = (*reader)->Next(&e);
  if (!got.ok()) return got.status();
  if (!*got || e.seq != seq) return std::optional<std::string>();
  return std::optional<std::string>(std::string((*reader)->raw_line()));
}

std::string ReplicationMsgId(const std::string& agent, uint64_t seq, std::string_view line) {
  return agent + ":" + std::to_string(seq) + ":" + Sha256::Hex(line).substr(0, 16);
}

uint64_t ReplicatedSeq(const nats::Message& message, const std::string& agent) {
  const std::string prefix = agent + ":";
  if (message.msg_id.starts_with(prefix)) {
    std::string digits = message.msg_id.substr(prefix.size());
    digits = digits.substr(0, digits.find(':'));
    if (!digits.empty() && digits.size() <= 19 &&
        digits.find_first_not_of("0123456789") == std::string::npos)
      return std::stoull(digits);
  }
  auto doc = nlohmann::json::parse(message.data, nullptr, false);
  if (doc.is_object() && doc.contains("seq") && doc["seq"].is_number_unsigned())
    return doc["seq"].get<uint64_t>();
  return 0;
}

std::string UnfitStream(const nats::StreamInfo& info, const std::string& stream,
                        const std::string& subject) {
  if (info.subjects != std::vector<std::string>{subject}) {
    std::string subjects;
    for (const std::string& s : info.subjects) subjects += (subjects.empty() ? "" : ", ") + s;
    return "stream " + stream + " holds subjects [" + subjects +
           "]: replication needs the agent's own stream, with subject " + subject + " only";
  }
  std::string limits;
  auto add = [&](const std::string& limit) { limits += (limits.empty() ? "" : ", ") + limit; };
  if (info.retention != "limits") add("retention " + info.retention);
  if (info.max_msgs > 0) add("max_msgs " + std::to_string(info.max_msgs));
  if (info.max_bytes > 0) add("max_bytes " + std::to_string(info.max_bytes));
  if (info.max_age_ns > 0) {
    const int64_t s = info.max_age_ns / 1000000000;
    add("max_age " + (s > 0 ? std::to_string(s) + " s" : std::to_string(info.max_age_ns) + " ns"));
  }
  if (info.max_msgs_per_subject > 0)
    add("max_msgs_per_subject " + std::to_string(info.max_msgs_per_subject));
  if (limits.empty()) return "";
  return "stream " + stream + " removes messages by itself (" + limits +
         "): replication needs a stream that keeps every event of the agent (remove those "
         "limits, or give replication a stream without them)";
}

Result<StreamEnd> ReadStreamEnd(nats::Connection& conn, const std::string& stream,
                                const std::string& agent) {
  const std::string subject = Subject(agent);
  auto last = conn.LastMessage(stream, subject);
  if (!last.ok()) return last.status();
  StreamEnd end;
  if (!last->has_value()) {
    // The server's word is checked against the stream's count: in the
    // agent's own stream, messages held mean events held.
    auto info = conn.GetStream(stream);
    if (!info.ok()) return info.status();
    if (info->messages == 0 || info->subjects != std::vector<std::string>{subject}) return end;
    constexpr uint64_t kMaxLook = 1000;
    const uint64_t lowest = std::max<uint64_t>(
        {info->first_seq, 1, info->last_seq > kMaxLook ? info->last_seq - kMaxLook + 1 : 1});
    for (uint64_t seq = info->last_seq; seq >= lowest && seq > 0; --seq) {
      auto m = conn.GetMessage(stream, seq);
      if (!m.ok() && m.status().IsNotFound()) continue;  // deleted
      if (!m.ok()) return m.status();
      last->emplace(std::move(*m));
      break;
    }
    if (!last->has_value())
      return Status::Corruption("stream " + stream + " holds " + std::to_string(info->messages) +
                                " messages, but the server names no last message of " + subject +
                                " and stream seqs " + std::to_string(lowest) + " to " +
                                std::to_string(info->last_seq) + " hold none");
  }
  end.event_seq = ReplicatedSeq(**last, agent);
  if (end.event_seq == 0)
    return Status::Corruption("the last message of " + subject + " in stream " + stream +
                              " (stream seq " + std::to_string((*last)->stream_seq) +
                              ") is not an event of agent " + agent);
  end.stream_seq = (*last)->stream_seq;
  end.line = std::move((*last)->data);
  return end;
}

Result<uint64_t> StreamSeqOf(nats::Connection& conn, const std::string& stream,
                             const std::string& agent, const StreamEnd& end, uint64_t event_seq) {
  if (event_seq > end.event_seq) return end.stream_seq + (event_seq - end.event_seq);
  // Each event after event_seq takes at least one stream seq before the
  // end: `at` never passes the event's place, and each look moves it back
  // by what the message there shows.
  const uint64_t distance = end.event_seq - event_seq;
  if (end.stream_seq <= distance) return 1;
  uint64_t at = end.stream_seq - distance;
  if (distance == 0) return at;
  const std::string subject = Subject(agent);
  constexpr int kMaxLooks = 1000;
  for (int look = 0; look < kMaxLooks && at > 1; ++look) {
    auto m = conn.GetMessage(stream, at);
    if (!m.ok() && !m.status().IsNotFound()) return m.status();
    const uint64_t seq = m.ok() && m->subject == subject ? ReplicatedSeq(*m, agent) : 0;
    if (seq == event_seq) return at;
    // A hole, another subject's message, or one after the event: back.
    at -= seq > event_seq ? std::min(at - 1, seq - event_seq) : 1;
  }
  return at;
}

Status ReadStream(nats::Connection& conn, const std::string& stream, const std::string& agent,
                  uint64_t start_stream_seq, uint64_t first, uint64_t last,
                  const std::function<Status(const nats::Message&, uint64_t)>& take) {
  const std::string subject = Subject(agent);
  // A cluster electing a leader gets a few seconds before a subscription
  // gives up.
  auto subscribe = [&](uint64_t from) {
    auto sub = conn.SubscribeOrdered(stream, subject, from);
    for (int i = 0; i < 50 && !sub.ok() && sub.status().IsUnavailable(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      sub = conn.SubscribeOrdered(stream, subject, from);
    }
    return sub;
  };
  auto sub = subscribe(start_stream_seq);
  if (!sub.ok()) return sub.status();
  // The stream holds `last` (the caller read where it ends), so a consumer
  // that sends nothing for kQuietMs has stalled: a new one takes over from
  // the stream seq after the last message taken. kGiveUpMs without any
  // message is Unavailable.
  constexpr int kQuietMs = 2000, kGiveUpMs = 10000;
  uint64_t resume = start_stream_seq;
  int quiet_ms = 0;
  uint64_t expected = first;
  while (expected <= last) {
    auto next = (*sub)->Next(kQuietMs);
    if (!next.ok()) return next.status();
    if (!next->has_value()) {
      quiet_ms += kQuietMs;
      if (quiet_ms >= kGiveUpMs)
        return Status::Unavailable("the stream stopped sending at event seq " +
                                   std::to_string(expected) + " of " + std::to_string(last));
      sub = subscribe(resume);
      if (!sub.ok()) return sub.status();
      continue;
    }
    quiet_ms = 0;
    const nats::Message& m = **next;
    resume = m.stream_seq + 1;
    const uint64_t seq = ReplicatedSeq(m, agent);
    if (seq < expected) continue;  // a duplicate
    if (seq != expected)
      return Status::Corruption(
          "stream " + stream + " seq " + std::to_string(m.stream_seq) + " holds event seq " +
          std::to_string(seq) + " where seq " + std::to_string(expected) + " was expected" +
          (expected == 1 ? ": the stream does not hold the whole history" : ""));
    LIMBIC_RETURN_IF_ERROR(take(m, seq));
    ++expected;
  }
  return Status::OK();
}

Status CheckLogIsStream(nats::Connection& conn, const std::string& stream, const std::string& agent,
                        const StreamEnd& end, const std::string& events_dir, uint64_t from,
                        uint64_t local, uint64_t* same) {
  from = std::max<uint64_t>(from, 1);
  uint64_t agreed = from - 1;
  if (same != nullptr) *same = agreed;
  auto differs = [&](uint64_t seq, const std::string& how) {
    return Status::FailedPrecondition("this log differs from stream " + stream + " at seq " +
                                      std::to_string(seq) + " (" + how +
                                      "): it is not a copy of agent " + agent + "'s events");
  };
  const uint64_t both = std::min(local, end.event_seq);
  if (from <= both) {
    state::LogReader::Options ro;
    ro.from_seq = from;
    ro.decode = false;  // the lines are compared as written
    auto reader = state::LogReader::Open(events_dir, ro);
    if (!reader.ok()) return reader.status();
    auto start = StreamSeqOf(conn, stream, agent, end, from);
    if (!start.ok())
      return start.status().WithContext("checking this log against stream " + stream);
    // Stops the reading at the first difference; reported below.
    const Status kStop = Status::Internal("differs");
    uint64_t first_diff = 0;
    std::string how;
    auto compare = [&](const nats::Message& m, uint64_t seq) {
      state::Event e;
      auto got = (*reader)->Next(&e);
      if (!got.ok()) return got.status();
      if (!*got || e.seq != seq)
        return Status::Corruption("the local log " + events_dir + " has no seq " +
                                  std::to_string(seq));
      if ((*reader)->raw_line() != m.data) {
        first_diff = seq;
        how = "the stream holds another event there";
        return kStop;
      }
      agreed = seq;
      return Status::OK();
    };
    Status read = ReadStream(conn, stream, agent, *start, from, both, compare);
    if (same != nullptr) *same = agreed;
    if (first_diff != 0) return differs(first_diff, how);
    if (!read.ok()) return read.WithContext("checking this log against stream " + stream);
  }
  if (local > end.event_seq) {
    const std::string how = "the stream ends at seq " + std::to_string(end.event_seq) +
                            ", this log at " + std::to_string(local);
    return differs(std::max(from, end.event_seq + 1), how);
  }
  return Status::OK();
}

Result<state::Event> PublishPromotion(nats::Connection& conn, const std::string& stream,
                                      const std::string& agent, const StreamEnd& end, TimeMs now,
                                      int timeout_ms) {
  // A stream a primary would refuse is not claimed: the new primary would
  // be fenced at once.
  auto info = conn.GetStream(stream);
  if (!info.ok()) return info.status();
  if (const std::string unfit = UnfitStream(*info, stream, Subject(agent)); !unfit.empty())
    return Status::FailedPrecondition(unfit);
  state::Event promoted{end.event_seq + 1,
                        now,
                        state::EventType::kPrimaryPromoted,
                        {{"agent", agent}, {"stream", stream}, {"stream_seq", end.stream_seq}}};
  // Timestamps never go back along the log.
  if (!end.line.empty()) {
    auto last = state::DecodeEvent(end.line);
    if (!last.ok())
      return last.status().WithContext("stream " + stream + " seq " +
                                       std::to_string(end.stream_seq));
    promoted.ts = std::max(promoted.ts, last->ts);
  }
  const std::string line = state::EncodeEvent(promoted);
  const std::string after = "event seq " + std::to_string(end.event_seq) + " (stream seq " +
                            std::to_string(end.stream_seq) + ")";
  nats::PubResult pub =
      conn.Publish(Subject(agent),
                   {line, ReplicationMsgId(agent, promoted.seq, line), end.stream_seq}, timeout_ms);
  // JetStream checks the msg id before the expected last sequence: a
  // duplicate is this very line, stored before; right after `end` it is
  // the claim, anywhere else the stream moved on.
  const bool moved_on = pub.js_code == nats::kWrongLastSequence ||
                        (pub.status.ok() && pub.duplicate && pub.stream_seq != end.stream_seq + 1);
  if (moved_on)
    return Status::Unavailable("the stream " + stream + " moved on past " + after +
                               ": the old primary is still writing; stop it, then promote again");
  if (!pub.status.ok())
    return Status::Unavailable("publishing primary_promoted after " + after + ": " +
                               pub.status.message() +
                               " (outcome unknown: if the stream took it, the standby applies "
                               "it; promote again)");
  return promoted;
}

}  // namespace limbic::runtime
