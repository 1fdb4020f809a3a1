// Internal to base/nats.cc: libnats opened with dlopen on the first
// Connect, not linked. Loading it and what it needs (libssl, libcrypto,
// libprotobuf-c) and binding their symbols was two thirds of the start of
// every command (docs/performance.md, "Start-up"), and only replication and
// the jetstream sensor and effector use NATS.
//
// nats.cc calls libnats by its own names: `using namespace library` makes
// the objects below, one per function, hide libnats' declarations (and,
// being objects, argument-dependent lookup too), so nothing links to
// libnats and a function missing from the list fails to link.
#pragma once

#include <dlfcn.h>
#include <nats/nats.h>

#include <string>
#include <utility>

namespace limbic::nats::library {

// Every libnats function nats.cc calls.
#define LIMBIC_NATS_FUNCTIONS(X) \
  X(natsStatus_GetText) X(nats_GetLastError) X(natsOptions_Create) X(natsOptions_Destroy) \
  X(natsOptions_SetServers) X(natsOptions_SetName) X(natsOptions_SetTimeout) \
  X(natsOptions_SetMaxReconnect) X(natsOptions_SetReconnectWait) \
  X(natsOptions_SetReconnectBufSize) X(natsOptions_SetPingInterval) \
  X(natsOptions_SetMaxPingsOut) X(natsOptions_SetDisconnectedCB) \
  X(natsOptions_SetReconnectedCB) X(natsOptions_SetClosedCB) \
  X(natsOptions_SetRetryOnFailedConnect) X(natsConnection_Connect) X(natsConnection_Close) \
  X(natsConnection_Destroy) X(natsConnection_Status) X(natsConnection_IsClosed) \
  X(natsConnection_GetServers) X(natsConnection_JetStream) X(natsMsg_Create) X(natsMsg_Destroy) \
  X(natsMsg_GetSubject) X(natsMsg_GetData) X(natsMsg_GetDataLength) X(natsMsg_GetSequence) \
  X(natsMsg_GetMetaData) X(natsMsgHeader_Get) X(natsMsg_AckSync) X(natsMsg_Nak) \
  X(natsMsg_NakWithDelay) X(natsMsg_Term) X(natsMsgList_Destroy) X(natsSubscription_Fetch) \
  X(natsSubscription_NextMsg) X(natsSubscription_Unsubscribe) X(natsSubscription_Destroy) \
  X(natsConnection_FlushTimeout) X(jsOptions_Init) X(jsCtx_Destroy) \
  X(jsPubOptions_Init) X(jsPubAck_Destroy) X(jsStreamConfig_Init) X(jsStreamInfo_Destroy) \
  X(jsSubOptions_Init) X(jsMsgMetaData_Destroy) X(js_GetStreamInfo) X(js_AddStream) \
  X(js_GetLastMsg) X(js_GetMsg) X(js_Publish) X(js_PublishMsgAsync) X(js_PublishAsyncComplete) \
  X(js_PublishAsyncGetPendingList) X(js_PullSubscribe) X(js_SubscribeSync)

struct Lib {
#define LIMBIC_NATS_POINTER(f) decltype(&::f) f = nullptr;
  LIMBIC_NATS_FUNCTIONS(LIMBIC_NATS_POINTER)
#undef LIMBIC_NATS_POINTER
  std::string error;  // why it did not load; "" when it did
};

inline const Lib& LoadLib() {
  static const Lib lib = [] {
    Lib l;
    // RTLD_LOCAL: libnats' symbols, and its OpenSSL's, stay out of the
    // program's namespace (limbic links its own OpenSSL statically).
    void* handle = dlopen(LIMBIC_NATS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      l.error = "NATS support (" LIMBIC_NATS_LIBRARY ", Debian's libnats) did not load: " +
                std::string(why != nullptr ? why : "dlopen failed");
      return l;
    }
#define LIMBIC_NATS_RESOLVE(f)                                                   \
  if (l.error.empty() && (l.f = reinterpret_cast<decltype(l.f)>(dlsym(handle, #f))) == nullptr) \
    l.error = "NATS support: " LIMBIC_NATS_LIBRARY " has no " #f;
    LIMBIC_NATS_FUNCTIONS(LIMBIC_NATS_RESOLVE)
#undef LIMBIC_NATS_RESOLVE
    return l;
  }();
  return lib;
}

// Each name of the list, here, calls the function loaded: these objects
// hide libnats' declarations from the code below (and, being objects, from
// argument-dependent lookup too), so nothing here links to libnats. Called
// only once Connect has loaded it.
#define LIMBIC_NATS_FORWARD(f) \
  constexpr auto f = [](auto&&... a) { return LoadLib().f(std::forward<decltype(a)>(a)...); };
LIMBIC_NATS_FUNCTIONS(LIMBIC_NATS_FORWARD)
#undef LIMBIC_NATS_FORWARD

}  // namespace limbic::nats::library
