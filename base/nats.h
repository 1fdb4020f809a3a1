// NATS JetStream: the one client limbic uses to reach NATS (replication of
// the events log, the jetstream sensor and effector), a thin owner of the C
// client (libnats) with limbic's Status.
//
// A Connection is one natsConnection and its JetStream context. It
// reconnects by itself (reconnect wait ConnectOptions::reconnect_wait_ms,
// forever). While it is down, requests and publishes wait out their
// deadline (ConnectOptions::request_timeout_ms unless the call takes its
// own) and fail with Unavailable: check connected() first to fail fast.
//
// Errors: Unavailable for what a retry may fix (not connected, a timeout,
// no stream leader yet), FailedPrecondition for what the server refused
// (its JetStream error code is in PubResult::js_code, and in the message as
// "(JetStream error N)"), InvalidArgument for a bad subject or name.
//
// Thread-safety: a Connection may be used from several threads (libnats is
// thread-safe). Subscriptions are used by one thread each.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

struct __natsConnection;
struct __jsCtx;
struct __natsSubscription;
struct __natsMsg;

namespace limbic::nats {

// JetStream API error codes limbic acts on.
inline constexpr int kWrongLastSequence = 10071;  // an expected-last-sequence condition failed
inline constexpr int kStreamNotFound = 10059;

struct PubResult;

struct ConnectOptions {
  std::vector<std::string> servers;  // "nats://host:port", at least one
  std::string name;                  // the client name the servers show
  int connect_timeout_ms = 2000;
  int request_timeout_ms = 5000;
  int reconnect_wait_ms = 250;
  // Start even when no server answers now, and connect in the background.
  bool retry_on_failed_connect = false;
  // Called (on a libnats thread) when the connection goes down or comes back.
  std::function<void(bool connected)> on_state;
  // The outcome of each PublishAsync, with its token (on a libnats thread;
  // in the order of the PubAcks, which is usually the order sent).
  std::function<void(uint64_t token, const PubResult& result)> on_async_result;
};

// "nats://h:p,nats://h2:p2" or a JSON-ish list already split: each must be
// nats://HOST:PORT (or HOST:PORT). Errors name the bad one.
Status CheckServerUrl(std::string_view url);
// `url` with its password or token replaced by "***" ("nats://u:***@h:p",
// "nats://***@h:p"), for messages and logs.
std::string RedactServerUrl(std::string_view url);
// "nats://h:p,nats://h2:p2": every server of a list (redacted), for
// messages and logs.
std::string JoinServers(const std::vector<std::string>& servers);
// Subjects and stream, consumer and agent names: NATS tokens, 1..128 of
// [A-Za-z0-9_-] (subjects: tokens joined by '.', '*' and '>' refused).
Status CheckName(std::string_view what, std::string_view name);
Status CheckSubject(std::string_view what, std::string_view subject);

struct StreamSpec {
  std::string name;
  std::vector<std::string> subjects;
  int replicas = 0;  // 0: min(3, the servers the connection knows of)
  bool file_storage = true;
};

struct StreamInfo {
  std::string name;
  std::vector<std::string> subjects;
  int replicas = 1;
  uint64_t messages = 0;
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;  // 0 when nothing was ever stored
  std::string leader;     // "" when not clustered
  // What makes the stream remove messages by itself: a retention policy
  // other than "limits" ("interest", "workqueue"), and the limits (each
  // <= 0 when unlimited; max_age in nanoseconds, as JetStream has it).
  std::string retention = "limits";
  int64_t max_msgs = -1;
  int64_t max_bytes = -1;
  int64_t max_age_ns = 0;
  int64_t max_msgs_per_subject = -1;
};

// A message read from a stream or delivered by a consumer.
struct Message {
  std::string subject;
  std::string data;
  std::string msg_id;       // its Nats-Msg-Id header, "" when none
  uint64_t stream_seq = 0;  // its sequence in the stream
  uint64_t delivered = 1;   // deliveries so far (consumers; 1 = first)
};

// One message to publish.
struct OutMessage {
  std::string_view data;
  std::string msg_id;                   // Nats-Msg-Id; "" = none
  uint64_t expect_last_seq = 0;         // Nats-Expected-Last-Sequence; 0 = no condition
  std::string expect_last_msg_id = {};  // Nats-Expected-Last-Msg-Id; "" = no condition
};

struct PubResult {
  Status status;            // OK when stored (or a duplicate of a stored one)
  int js_code = 0;          // the JetStream error code when refused
  uint64_t stream_seq = 0;  // where it is stored
  bool duplicate = false;   // an earlier message with its msg_id was stored
};

class Connection {
 public:
  static Result<std::unique_ptr<Connection>> Connect(ConnectOptions options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool connected() const;
  // Closed for good (it no longer reconnects): make a new Connection.
  bool closed() const;
  // The servers the connection knows of, discovered ones included.
  std::vector<std::string> servers() const;
  // "nats://127.0.0.1:4222,..." as configured, for messages.
  const std::string& describe() const { return describe_; }

  // The stream as it is; NotFound when there is none.
  Result<StreamInfo> GetStream(const std::string& name);
  // Creates the stream when missing (limits retention, file storage unless
  // said otherwise), else returns it as it is.
  Result<StreamInfo> EnsureStream(const StreamSpec& spec);
  // The last message stored on `subject`, nullopt when there is none.
  Result<std::optional<Message>> LastMessage(const std::string& stream, const std::string& subject);
  // The message at `seq`; NotFound when there is none.
  Result<Message> GetMessage(const std::string& stream, uint64_t seq);

  // Publishes and waits for the PubAck (timeout_ms; 0 = request_timeout_ms).
  PubResult Publish(const std::string& subject, const OutMessage& message, int timeout_ms = 0);
  // Pipelined: hands the message over and returns; its outcome (PubAck
  // or error, Unavailable "no PubAck in time" after timeout_ms) goes to
  // ConnectOptions::on_async_result with `token`. At most 16384 in flight
  // (beyond, this waits up to 200 ms for room, then fails).
  Status PublishAsync(const std::string& subject, const OutMessage& message, uint64_t token,
                      int timeout_ms = 0);
  // Waits up to timeout_ms for every message handed over to have its
  // outcome; those still without one are taken back and reported as timed
  // out (a late PubAck for them is dropped). Safe whether or not anything
  // was ever published on this connection.
  void WaitAsync(int timeout_ms);

  // A message delivered by a pull consumer; Ack tells JetStream it is done,
  // Nak asks for it again (now, or after delay_ms), Term tells JetStream
  // never to deliver it again (it is not done: it can never be). Destroying
  // it without any lets it be redelivered after the consumer's ack wait.
  class Delivery {
   public:
    Delivery(Message message, __natsMsg* raw);
    Delivery(Delivery&& other) noexcept;
    Delivery& operator=(Delivery&&) = delete;
    ~Delivery();
    const Message& message() const { return message_; }
    Status Ack();
    Status Nak(int delay_ms = 0);
    Status Term();

   private:
    Message message_;
    __natsMsg* raw_ = nullptr;
  };

  // A durable pull consumer (created if missing, else bound).
  struct PullOptions {
    std::string stream;
    std::string subject;  // the filter subject
    std::string durable;  // the consumer's name
    int ack_wait_ms = 30000;
    int max_ack_pending = 1024;
  };
  class PullSubscription {
   public:
    ~PullSubscription();
    // Up to `batch` messages, waiting up to timeout_ms for the first; an
    // empty list when none came.
    Result<std::vector<Delivery>> Fetch(int batch, int timeout_ms);

   private:
    friend class Connection;
    __natsSubscription* sub_ = nullptr;
  };
  Result<std::unique_ptr<PullSubscription>> PullSubscribe(const PullOptions& options);

  // An ordered consumer: every message on `subject` from stream seq
  // `start_seq` on, in order, none missed (it is re-created past gaps).
  class OrderedSubscription {
   public:
    ~OrderedSubscription();
    // The next message, or nullopt after timeout_ms without one.
    Result<std::optional<Message>> Next(int timeout_ms);

   private:
    friend class Connection;
    __natsSubscription* sub_ = nullptr;
    __natsConnection* nc_ = nullptr;  // to let go of sub_ safely (nats.cc, ReleaseOrdered)
  };
  Result<std::unique_ptr<OrderedSubscription>> SubscribeOrdered(const std::string& stream,
                                                                const std::string& subject,
                                                                uint64_t start_seq);

  class Impl;

 private:
  Connection() = default;
  std::unique_ptr<Impl> impl_;
  std::string describe_;
};

}  // namespace limbic::nats
