#include "base/nats.h"

#include <nats/nats.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <unordered_map>
#include <utility>

#include "base/nats_library.h"

namespace limbic::nats {

// libnats' functions, from the library opened on first use
// (base/nats_library.h), not from a linked one.
using namespace library;

namespace {

// The client's words for `s`, with the detail of the last error on this
// thread when there is one.
std::string Text(natsStatus s) {
  std::string text = natsStatus_GetText(s);
  natsStatus last = NATS_OK;
  const char* detail = nats_GetLastError(&last);
  if (detail != nullptr && *detail != '\0' && last == s && text != detail)
    text += std::string(": ") + detail;
  return text;
}

Status Err(natsStatus s, int code, const std::string& what) {
  std::string msg = what + ": " + Text(s);
  if (code != 0) msg += " (JetStream error " + std::to_string(code) + ")";
  switch (s) {
    case NATS_NOT_FOUND:
      return Status::NotFound(std::move(msg));
    case NATS_INVALID_ARG:
    case NATS_INVALID_SUBJECT:
      return Status::InvalidArgument(std::move(msg));
    default:
      break;
  }
  if (code != 0 && code != 10008 /* no stream leader / timeout in cluster */)
    return Status::FailedPrecondition(std::move(msg));
  return Status::Unavailable(std::move(msg));
}

std::string HeaderValue(natsMsg* msg, const char* key) {
  const char* v = nullptr;
  if (natsMsgHeader_Get(msg, key, &v) == NATS_OK && v != nullptr) return v;
  return "";
}

// A publish's options: its deadline, msg id and expected last sequence
// (pointing into `message`, which must outlive them).
jsPubOptions PubOptions(const OutMessage& message, int timeout_ms) {
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = timeout_ms;
  if (!message.msg_id.empty()) po.MsgId = message.msg_id.c_str();
  po.ExpectLastSeq = message.expect_last_seq;
  if (!message.expect_last_msg_id.empty()) po.ExpectLastMsgId = message.expect_last_msg_id.c_str();
  return po;
}

// Lets go of an ordered consumer's subscription. libnats 3.4 (Debian
// 12's) looks a message's subscription up in its table and uses it without
// taking a reference (later releases take one): a subscription destroyed
// on another thread while a message for it is being delivered is used
// after it is freed, seen as a crash in natsConn_processMsg when a standby
// replaced its consumer under load. So it is unsubscribed first (the
// reader finds it no more and drops what it holds, the subscription being
// closed; libnats deletes the ephemeral consumer meanwhile), then a round
// trip to the server (the reader is done with any message that came before
// the PONG), and only then destroyed. Not for a durable pull consumer:
// unsubscribing would delete it (and its messages come only as answers to
// a Fetch on the thread that destroys it).
void ReleaseOrdered(natsConnection* nc, natsSubscription* sub) {
  if (sub == nullptr) return;
  if (nc != nullptr && natsConnection_Status(nc) == NATS_CONN_STATUS_CONNECTED) {
    natsSubscription_Unsubscribe(sub);
    natsConnection_FlushTimeout(nc, 2000);
  }
  natsSubscription_Destroy(sub);
}

Message ToMessage(natsMsg* msg) {
  Message m;
  if (const char* subj = natsMsg_GetSubject(msg)) m.subject = subj;
  const char* data = natsMsg_GetData(msg);
  int len = natsMsg_GetDataLength(msg);
  if (data != nullptr && len > 0) m.data.assign(data, static_cast<size_t>(len));
  m.msg_id = HeaderValue(msg, "Nats-Msg-Id");
  jsMsgMetaData* meta = nullptr;
  if (natsMsg_GetMetaData(&meta, msg) == NATS_OK && meta != nullptr) {
    m.stream_seq = meta->Sequence.Stream;
    m.delivered = meta->NumDelivered;
    jsMsgMetaData_Destroy(meta);
  } else {
    m.stream_seq = natsMsg_GetSequence(msg);  // js_GetMsg / js_GetLastMsg
  }
  return m;
}

}  // namespace

class Connection::Impl {
 public:
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  natsOptions* opts = nullptr;
  ConnectOptions options;
  // PublishAsync's messages in flight, by address (erased before the
  // message is destroyed, so an address is never taken for another's).
  std::mutex async_mu;
  std::unordered_map<natsMsg*, uint64_t> async_tokens;
  // Set by the closed callback, the last connection callback libnats runs
  // (its one callback thread runs them in the order posted).
  std::mutex closed_mu;
  std::condition_variable closed_cv;
  bool closed_cb = false;

  // The token of a message in flight, forgotten; false when unknown.
  bool TakeToken(natsMsg* msg, uint64_t* token) {
    std::lock_guard<std::mutex> lock(async_mu);
    auto it = async_tokens.find(msg);
    if (it == async_tokens.end()) return false;
    *token = it->second;
    async_tokens.erase(it);
    return true;
  }

  static void OnDisconnected(natsConnection*, void* closure) {
    auto* self = static_cast<Impl*>(closure);
    if (self->options.on_state) self->options.on_state(false);
  }
  static void OnReconnected(natsConnection*, void* closure) {
    auto* self = static_cast<Impl*>(closure);
    if (self->options.on_state) self->options.on_state(true);
  }
  static void OnConnected(natsConnection*, void* closure) { OnReconnected(nullptr, closure); }
  static void OnClosed(natsConnection*, void* closure) {
    auto* self = static_cast<Impl*>(closure);
    std::lock_guard<std::mutex> lock(self->closed_mu);
    self->closed_cb = true;
    self->closed_cv.notify_all();
  }
  static void OnAck(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr* pae, void* closure) {
    auto* self = static_cast<Impl*>(closure);
    uint64_t token = 0;
    if (self->TakeToken(msg, &token) && self->options.on_async_result) {
      PubResult r;
      if (pa != nullptr) {
        r.stream_seq = pa->Sequence;
        r.duplicate = pa->Duplicate;
      } else if (pae != nullptr) {
        std::string text =
            pae->ErrText != nullptr && *pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err);
        r.js_code = static_cast<int>(pae->ErrCode);
        std::string m = "publish: " + text;
        if (r.js_code != 0) m += " (JetStream error " + std::to_string(r.js_code) + ")";
        r.status = r.js_code != 0 && r.js_code != 10008 ? Status::FailedPrecondition(m)
                                                        : Status::Unavailable(m);
      }
      self->options.on_async_result(token, r);
    }
    natsMsg_Destroy(msg);
  }
};

Result<std::unique_ptr<Connection>> Connection::Connect(ConnectOptions options) {
  if (options.servers.empty()) return Status::InvalidArgument("no NATS server given");
  for (const std::string& url : options.servers) LIMBIC_RETURN_IF_ERROR(CheckServerUrl(url));
  if (const std::string& error = LoadLib().error; !error.empty()) return Status::Unavailable(error);
  std::unique_ptr<Connection> c(new Connection());
  c->impl_ = std::make_unique<Impl>();
  Impl& impl = *c->impl_;
  impl.options = std::move(options);
  c->describe_ = JoinServers(impl.options.servers);

  std::vector<std::string> urls;
  for (const std::string& s : impl.options.servers)
    urls.push_back(s.starts_with("nats://") ? s : "nats://" + s);
  std::vector<const char*> ptrs;
  for (const std::string& u : urls) ptrs.push_back(u.c_str());

  natsStatus s = natsOptions_Create(&impl.opts);
  if (s == NATS_OK)
    s = natsOptions_SetServers(impl.opts, ptrs.data(), static_cast<int>(ptrs.size()));
  if (s == NATS_OK && !impl.options.name.empty())
    s = natsOptions_SetName(impl.opts, impl.options.name.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(impl.opts, impl.options.connect_timeout_ms);
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(impl.opts, -1);
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(impl.opts, impl.options.reconnect_wait_ms);
  if (s == NATS_OK) s = natsOptions_SetReconnectBufSize(impl.opts, 64 << 20);
  if (s == NATS_OK) s = natsOptions_SetPingInterval(impl.opts, 2000);
  if (s == NATS_OK) s = natsOptions_SetMaxPingsOut(impl.opts, 2);
  if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(impl.opts, &Impl::OnDisconnected, &impl);
  if (s == NATS_OK) s = natsOptions_SetReconnectedCB(impl.opts, &Impl::OnReconnected, &impl);
  if (s == NATS_OK) s = natsOptions_SetClosedCB(impl.opts, &Impl::OnClosed, &impl);
  if (s == NATS_OK && impl.options.retry_on_failed_connect)
    s = natsOptions_SetRetryOnFailedConnect(impl.opts, true, &Impl::OnConnected, &impl);
  if (s != NATS_OK) return Err(s, 0, "NATS options");

  s = natsConnection_Connect(&impl.nc, impl.opts);
  if (s == NATS_NOT_YET_CONNECTED) s = NATS_OK;  // connects in the background
  if (s != NATS_OK) return Err(s, 0, "connecting to NATS at " + c->describe_);

  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = impl.options.request_timeout_ms;
  jo.PublishAsync.MaxPending = 16384;
  jo.PublishAsync.AckHandler = &Impl::OnAck;
  jo.PublishAsync.AckHandlerClosure = &impl;
  s = natsConnection_JetStream(&impl.js, impl.nc, &jo);
  if (s != NATS_OK) return Err(s, 0, "JetStream context");
  return c;
}

Connection::~Connection() {
  if (!impl_) return;
  if (impl_->js != nullptr) jsCtx_Destroy(impl_->js);
  if (impl_->nc != nullptr) {
    natsConnection_Close(impl_->nc);
    // Close posts the disconnected and closed callbacks to libnats' callback
    // thread and returns: they run later, with Impl as their closure. Impl
    // goes only once the closed one, the last, has run; should that thread
    // be stuck, Impl is left behind rather than freed under it.
    std::unique_lock<std::mutex> lock(impl_->closed_mu);
    if (!impl_->closed_cv.wait_for(lock, std::chrono::seconds(10),
                                   [this] { return impl_->closed_cb; })) {
      lock.unlock();
      (void)impl_.release();
      return;
    }
    lock.unlock();
    natsConnection_Destroy(impl_->nc);
  }
  if (impl_->opts != nullptr) natsOptions_Destroy(impl_->opts);
}

bool Connection::connected() const {
  return impl_->nc != nullptr && natsConnection_Status(impl_->nc) == NATS_CONN_STATUS_CONNECTED;
}

bool Connection::closed() const {
  return impl_->nc == nullptr || natsConnection_IsClosed(impl_->nc);
}

std::vector<std::string> Connection::servers() const {
  std::vector<std::string> out;
  char** list = nullptr;
  int count = 0;
  if (natsConnection_GetServers(impl_->nc, &list, &count) != NATS_OK) return out;
  for (int i = 0; i < count; ++i) {
    out.emplace_back(list[i]);
    free(list[i]);
  }
  free(list);
  return out;
}

namespace {

StreamInfo ToInfo(const jsStreamInfo* si) {
  StreamInfo info;
  if (si->Config != nullptr) {
    if (si->Config->Name != nullptr) info.name = si->Config->Name;
    for (int i = 0; i < si->Config->SubjectsLen; ++i)
      info.subjects.emplace_back(si->Config->Subjects[i]);
    info.replicas = static_cast<int>(si->Config->Replicas);
    info.retention = si->Config->Retention == js_InterestPolicy    ? "interest"
                     : si->Config->Retention == js_WorkQueuePolicy ? "workqueue"
                                                                   : "limits";
    info.max_msgs = si->Config->MaxMsgs;
    info.max_bytes = si->Config->MaxBytes;
    info.max_age_ns = si->Config->MaxAge;
    info.max_msgs_per_subject = si->Config->MaxMsgsPerSubject;
  }
  info.messages = si->State.Msgs;
  info.first_seq = si->State.FirstSeq;
  info.last_seq = si->State.LastSeq;
  if (si->Cluster != nullptr && si->Cluster->Leader != nullptr) info.leader = si->Cluster->Leader;
  return info;
}

}  // namespace

Result<StreamInfo> Connection::GetStream(const std::string& name) {
  LIMBIC_RETURN_IF_ERROR(CheckName("stream", name));
  jsStreamInfo* si = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&si, impl_->js, name.c_str(), nullptr, &code);
  if (s != NATS_OK) return Err(s, code, "stream " + name);
  StreamInfo info = ToInfo(si);
  jsStreamInfo_Destroy(si);
  return info;
}

Result<StreamInfo> Connection::EnsureStream(const StreamSpec& spec) {
  auto existing = GetStream(spec.name);
  if (existing.ok() || !existing.status().IsNotFound()) return existing;
  int replicas =
      spec.replicas > 0 ? spec.replicas : std::clamp(static_cast<int>(servers().size()), 1, 3);
  std::vector<const char*> subjects;
  for (const std::string& s : spec.subjects) subjects.push_back(s.c_str());
  for (;;) {
    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    cfg.Name = spec.name.c_str();
    cfg.Subjects = subjects.data();
    cfg.SubjectsLen = static_cast<int>(subjects.size());
    cfg.Storage = spec.file_storage ? js_FileStorage : js_MemoryStorage;
    cfg.Replicas = replicas;
    jsStreamInfo* si = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = js_AddStream(&si, impl_->js, &cfg, nullptr, &code);
    if (s == NATS_OK) {
      StreamInfo info = ToInfo(si);
      jsStreamInfo_Destroy(si);
      return info;
    }
    // 10074: replicas > 1 on a server without a cluster.
    if (replicas > 1 && spec.replicas == 0 && static_cast<int>(code) == 10074) {
      replicas = 1;
      continue;
    }
    // Created meanwhile by someone else: take it as it is.
    if (static_cast<int>(code) == 10058) return GetStream(spec.name);
    return Err(s, code, "creating stream " + spec.name);
  }
}

Result<std::optional<Message>> Connection::LastMessage(const std::string& stream,
                                                       const std::string& subject) {
  natsMsg* msg = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_GetLastMsg(&msg, impl_->js, stream.c_str(), subject.c_str(), nullptr, &code);
  if (s == NATS_NOT_FOUND && static_cast<int>(code) != kStreamNotFound) {
    return std::optional<Message>();
  }
  if (s != NATS_OK) return Err(s, code, "the last message of " + subject + " in stream " + stream);
  Message m = ToMessage(msg);
  natsMsg_Destroy(msg);
  return std::optional<Message>(std::move(m));
}

Result<Message> Connection::GetMessage(const std::string& stream, uint64_t seq) {
  natsMsg* msg = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_GetMsg(&msg, impl_->js, stream.c_str(), seq, nullptr, &code);
  if (s != NATS_OK) return Err(s, code, "message " + std::to_string(seq) + " of stream " + stream);
  Message m = ToMessage(msg);
  natsMsg_Destroy(msg);
  return m;
}

PubResult Connection::Publish(const std::string& subject, const OutMessage& message,
                              int timeout_ms) {
  PubResult r;
  jsPubOptions po =
      PubOptions(message, timeout_ms > 0 ? timeout_ms : impl_->options.request_timeout_ms);
  jsPubAck* pa = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_Publish(&pa, impl_->js, subject.c_str(), message.data.data(),
                            static_cast<int>(message.data.size()), &po, &code);
  if (s != NATS_OK) {
    r.js_code = static_cast<int>(code);
    r.status = Err(s, code, "publishing to " + subject);
    return r;
  }
  r.stream_seq = pa->Sequence;
  r.duplicate = pa->Duplicate;
  jsPubAck_Destroy(pa);
  return r;
}

Status Connection::PublishAsync(const std::string& subject, const OutMessage& message,
                                uint64_t token, int timeout_ms) {
  natsMsg* m = nullptr;
  natsStatus s = natsMsg_Create(&m, subject.c_str(), nullptr, message.data.data(),
                                static_cast<int>(message.data.size()));
  if (s != NATS_OK) return Err(s, 0, "publish");
  jsPubOptions po =
      PubOptions(message, timeout_ms > 0 ? timeout_ms : impl_->options.request_timeout_ms);
  natsMsg* key = m;
  {
    std::lock_guard<std::mutex> lock(impl_->async_mu);
    impl_->async_tokens[key] = token;
  }
  s = js_PublishMsgAsync(impl_->js, &m, &po);
  if (s != NATS_OK) {
    {
      std::lock_guard<std::mutex> lock(impl_->async_mu);
      impl_->async_tokens.erase(key);
    }
    if (m != nullptr) natsMsg_Destroy(m);  // not handed over
    return Err(s, 0, "publishing to " + subject);
  }
  return Status::OK();
}

void Connection::WaitAsync(int timeout_ms) {
  jsPubOptions wait;
  jsPubOptions_Init(&wait);
  wait.MaxWait = std::max(timeout_ms, 1);
  // NATS_OK: nothing is pending (or nothing was ever published). Only a
  // timeout leaves messages to take back, and only then may the pending
  // list be asked for: libnats (3.4, and its master) makes the map of
  // pending messages at the first asynchronous publish, and
  // js_PublishAsyncGetPendingList reads that map without checking it
  // exists, so on a context that never published it dereferences NULL.
  if (js_PublishAsyncComplete(impl_->js, &wait) != NATS_TIMEOUT) return;
  natsMsgList pending;
  if (js_PublishAsyncGetPendingList(&pending, impl_->js) != NATS_OK) return;
  for (int i = 0; i < pending.Count; ++i) {
    uint64_t token = 0;
    if (impl_->TakeToken(pending.Msgs[i], &token) && impl_->options.on_async_result)
      impl_->options.on_async_result(token,
                                     PubResult{Status::Unavailable("publish: no PubAck in time")});
  }
  natsMsgList_Destroy(&pending);
}

Connection::Delivery::Delivery(Message message, natsMsg* raw)
    : message_(std::move(message)), raw_(raw) {}
Connection::Delivery::Delivery(Delivery&& other) noexcept
    : message_(std::move(other.message_)), raw_(other.raw_) {
  other.raw_ = nullptr;
}
Connection::Delivery::~Delivery() {
  if (raw_ != nullptr) natsMsg_Destroy(raw_);
}
Status Connection::Delivery::Ack() {
  if (raw_ == nullptr) return Status::FailedPrecondition("no message");
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = natsMsg_AckSync(raw_, nullptr, &code);
  if (s != NATS_OK)
    return Err(s, code, "acknowledging stream message " + std::to_string(message_.stream_seq));
  return Status::OK();
}
Status Connection::Delivery::Nak(int delay_ms) {
  if (raw_ == nullptr) return Status::FailedPrecondition("no message");
  natsStatus s =
      delay_ms > 0 ? natsMsg_NakWithDelay(raw_, delay_ms, nullptr) : natsMsg_Nak(raw_, nullptr);
  if (s != NATS_OK)
    return Err(s, 0, "nak of stream message " + std::to_string(message_.stream_seq));
  return Status::OK();
}
Status Connection::Delivery::Term() {
  if (raw_ == nullptr) return Status::FailedPrecondition("no message");
  natsStatus s = natsMsg_Term(raw_, nullptr);
  if (s != NATS_OK)
    return Err(s, 0, "term of stream message " + std::to_string(message_.stream_seq));
  return Status::OK();
}

Connection::PullSubscription::~PullSubscription() {
  if (sub_ != nullptr) natsSubscription_Destroy(sub_);
}

Result<std::vector<Connection::Delivery>> Connection::PullSubscription::Fetch(int batch,
                                                                              int timeout_ms) {
  natsMsgList list;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = natsSubscription_Fetch(&list, sub_, batch, timeout_ms, &code);
  std::vector<Delivery> out;
  if (s == NATS_TIMEOUT) {
    return out;
  }
  if (s != NATS_OK) return Err(s, code, "fetching from the consumer");
  for (int i = 0; i < list.Count; ++i) {
    out.emplace_back(ToMessage(list.Msgs[i]), list.Msgs[i]);
    list.Msgs[i] = nullptr;  // owned by the Delivery now
  }
  natsMsgList_Destroy(&list);
  return out;
}

Result<std::unique_ptr<Connection::PullSubscription>> Connection::PullSubscribe(
    const PullOptions& o) {
  LIMBIC_RETURN_IF_ERROR(CheckName("stream", o.stream));
  LIMBIC_RETURN_IF_ERROR(CheckName("consumer", o.durable));
  LIMBIC_RETURN_IF_ERROR(CheckSubject("subject", o.subject));
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = o.stream.c_str();
  so.Config.AckPolicy = js_AckExplicit;
  so.Config.AckWait = static_cast<int64_t>(o.ack_wait_ms) * 1000000;
  so.Config.MaxAckPending = o.max_ack_pending;
  so.Config.FilterSubject = o.subject.c_str();
  jsErrCode code = static_cast<jsErrCode>(0);
  std::unique_ptr<PullSubscription> sub(new PullSubscription());
  natsStatus s = js_PullSubscribe(&sub->sub_, impl_->js, o.subject.c_str(), o.durable.c_str(),
                                  nullptr, &so, &code);
  if (s != NATS_OK) return Err(s, code, "consumer " + o.durable + " on stream " + o.stream);
  return sub;
}

Connection::OrderedSubscription::~OrderedSubscription() { ReleaseOrdered(nc_, sub_); }

Result<std::optional<Message>> Connection::OrderedSubscription::Next(int timeout_ms) {
  natsMsg* msg = nullptr;
  natsStatus s = natsSubscription_NextMsg(&msg, sub_, timeout_ms);
  if (s == NATS_TIMEOUT) {
    return std::optional<Message>();
  }
  if (s != NATS_OK) return Err(s, 0, "reading the stream");
  Message m = ToMessage(msg);
  natsMsg_Destroy(msg);
  return std::optional<Message>(std::move(m));
}

Result<std::unique_ptr<Connection::OrderedSubscription>> Connection::SubscribeOrdered(
    const std::string& stream, const std::string& subject, uint64_t start_seq) {
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream.c_str();
  so.Ordered = true;
  if (start_seq > 1) {
    so.Config.DeliverPolicy = js_DeliverByStartSequence;
    so.Config.OptStartSeq = start_seq;
  } else {
    so.Config.DeliverPolicy = js_DeliverAll;
  }
  jsErrCode code = static_cast<jsErrCode>(0);
  std::unique_ptr<OrderedSubscription> sub(new OrderedSubscription());
  sub->nc_ = impl_->nc;
  natsStatus s = js_SubscribeSync(&sub->sub_, impl_->js, subject.c_str(), nullptr, &so, &code);
  if (s != NATS_OK) return Err(s, code, "reading " + subject + " from stream " + stream);
  return sub;
}

}  // namespace limbic::nats
