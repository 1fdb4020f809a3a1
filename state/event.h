// The event vocabulary and its JSON-lines encoding: limbic's public contract.
//
// Every change to the agent's state is an Event. The log stores one event per
// line (grammar below); the projections in RocksDB are a function of the
// sequence of events and nothing else, so replaying a log rebuilds them
// exactly. docs/events.md documents each type and its fields.
//
// Line grammar (one JSON object, no embedded newline, then '\n'):
//
//   line    := '{' "\"v\":" VERSION ',' "\"seq\":" SEQ ',' "\"ts\":" TS ','
//              "\"type\":" TYPE (',' field)* '}' '\n'
//   VERSION := 1                      (absent is read as 1)
//   SEQ     := 1, 2, 3, ...           (contiguous over the whole log)
//   TS      := "YYYY-MM-DDTHH:MM:SS.mmmZ"
//   TYPE    := one of the names in EventTypeName()
//   field   := a type-specific key (see Specs() in event.cc); unknown
//              keys are kept and round-trip untouched
//
// Compatibility: readers accept events whose `v` is <= kEventVersion and
// keys they do not know (a newer writer may add optional fields). A new
// version adds optional fields only; required fields never change meaning.
//
// Thread-safety: everything here is a pure function or a value type.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/time.h"

namespace limbic::state {

using json = nlohmann::json;

inline constexpr int kEventVersion = 1;

enum class EventType : uint8_t {
  kPerceptArrived,
  kPerceptAssigned,
  kPerceptProcessed,
  kPerceptDropped,
  kPerceptRemoved,
  kThreadCreated,
  kThreadUpdated,
  kThreadPaused,
  kThreadCompleted,
  kThreadDeleted,
  kArousalSet,
  kArousalFactorSet,
  kActionEnqueued,
  kActionSent,
  kActionComplete,
  kActionFailed,
  kActionDead,
  kActionsPruned,
  kReflexFired,
  kReflexPut,
  kReflexDeleted,
  kReflexEnabled,
  kEntryStaged,
  kMemoryStored,
  kMemorySuperseded,
  kMemoryTouched,
  kMemoryForgotten,
  kMemoryEmbedded,
  kAssociationAdded,
  kDocumentIngested,
  kReflexesEvaluated,
  kSegmentsAccepted,
  kDedupPruned,
  kActionApproved,
  kActionRejected,
  kActionRetried,
  kPrimaryPromoted,
  kMindWoken,
  kMindStep,
  kMindSlept,
};
inline constexpr int kEventTypeCount = 40;

// "percept_arrived", ...
std::string_view EventTypeName(EventType type);
std::optional<EventType> ParseEventType(std::string_view name);
// All types, in enum order.
const std::vector<EventType>& AllEventTypes();

struct Event {
  uint64_t seq = 0;  // assigned when the event is queued for the log; 0 = not yet
  TimeMs ts = 0;
  EventType type = EventType::kPerceptArrived;
  json fields = json::object();  // the type-specific keys; never holds v/seq/ts/type

  // Convenience accessors for the fields every reader needs; they return
  // an empty string / default when the field is absent or of another type.
  std::string Str(std::string_view key) const;
  double Num(std::string_view key, double dflt = 0) const;
};

// Checks `fields` against the schema of `type`: required keys present, each
// known key of the right JSON type and range, ids well formed. The message
// names the offending field ("percept_arrived.intensity: must be a number in
// [0, 1], got 1.7"). Times (`times`, base/time.h): a new event's must be
// calendar days (kCalendar); decoding a committed line passes kLogged, so
// what an older version wrote stays readable.
Status ValidateEventFields(EventType type, const json& fields,
                           TimeRule times = TimeRule::kCalendar);

// Appends the encoded line, including the trailing '\n', to *out.
void AppendEncodedEvent(const Event& event, std::string* out);
// The encoded line without the trailing newline.
std::string EncodeEvent(const Event& event);
// The event as a JSON object (v, seq, ts, type and fields), as the API shows it.
json EventToJson(const Event& event);

// Parses and validates one line (with or without its '\n'). Never throws.
// Errors are Corruption for malformed JSON and InvalidArgument for a
// well-formed line that breaks the schema; the caller adds file/offset.
Result<Event> DecodeEvent(std::string_view line);
// Same, from an already-parsed object (moved from when given an rvalue).
Result<Event> EventFromJson(json obj);

// Ids of percepts, threads, actions and reflexes: 1..128 characters from
// [A-Za-z0-9._:-]. Generated ids look like "p-42" (the seq of the creating
// event), so they are unique for the life of a log.
bool IsValidId(std::string_view id);
Status CheckId(std::string_view what, std::string_view id);

}  // namespace limbic::state
