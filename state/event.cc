#include "state/event.h"

#include <array>
#include <cmath>

#include "base/json.h"
#include "state/memory_schema.h"
#include "state/provenance.h"

namespace limbic::state {
namespace {

enum class Kind {
  kId,        // a well-formed id (see IsValidId)
  kText,      // any string
  kNonEmpty,  // a non-empty string
  kName,      // a name (base/name.h: sources, types, actors)
  kUnit,      // a number in [0, 1]
  kNumber,    // any finite number
  kCount,     // an unsigned integer
  kBool,
  kObject,
  kAny,           // any JSON value
  kTime,          // an RFC 3339 string
  kIdList,        // an array of ids
  kSeqList,       // an array of unsigned integers
  kThreadStatus,  // active | paused | frozen | complete
  kFactorValue,   // bool, number, string or null
  kDate,          // "YYYY-MM-DD" of a real day
  kEntry,         // an archive staging entry (see CheckEntry)
  kConsolidates,  // {thread_ids?, percept_ids?, action_ids?}
  kMemory,        // a memory object (memory_schema.h)
  kTouches,       // [{memory_id, strength}]
  kVectors,       // [{memory_id, embedder, vector}]
  kDocument,      // an ingested document
  kObjectList,    // a non-empty array of objects
  kObjects,       // an array of objects, maybe empty
};

struct FieldSpec {
  std::string_view name;
  Kind kind;
  bool required;
};

struct EventSpec {
  EventType type;
  std::string_view name;
  std::vector<FieldSpec> fields;
};

// Adds the optional provenance fields, actor and reason (state/provenance.h),
// to the attributed types that do not list them.
std::array<EventSpec, kEventTypeCount> WithProvenance(
    std::array<EventSpec, kEventTypeCount> specs) {
  for (EventSpec& spec : specs) {
    if (!IsAttributed(spec.type)) continue;
    for (FieldSpec f :
         {FieldSpec{"actor", Kind::kName, false}, FieldSpec{"reason", Kind::kText, false}}) {
      bool listed = false;
      for (const FieldSpec& g : spec.fields) listed = listed || g.name == f.name;
      if (!listed) spec.fields.push_back(f);
    }
  }
  return specs;
}

// The schema of every event type. docs/events.md mirrors this table.
const std::array<EventSpec, kEventTypeCount>& Specs() {
  static const std::array<EventSpec, kEventTypeCount> specs = WithProvenance({{
      {EventType::kPerceptArrived,
       "percept_arrived",
       {{"percept_id", Kind::kId, true},
        {"source", Kind::kName, true},
        {"percept_type", Kind::kName, true},
        {"intensity", Kind::kUnit, true},
        {"text", Kind::kText, false},
        {"data", Kind::kObject, false}}},
      {EventType::kPerceptAssigned,
       "percept_assigned",
       {{"percept_id", Kind::kId, true}, {"thread_id", Kind::kId, true}}},
      {EventType::kPerceptProcessed, "percept_processed", {{"percept_id", Kind::kId, true}}},
      {EventType::kPerceptDropped,
       "percept_dropped",
       {{"percept_id", Kind::kId, true}, {"reason", Kind::kText, false}}},
      {EventType::kPerceptRemoved,
       "percept_removed",
       {{"percept_id", Kind::kId, true}, {"reason", Kind::kText, false}}},
      {EventType::kThreadCreated,
       "thread_created",
       {{"thread_id", Kind::kId, true},
        {"goal", Kind::kNonEmpty, true},
        {"salience", Kind::kUnit, true},
        {"status", Kind::kThreadStatus, false},
        {"state", Kind::kObject, false},
        {"from_percept", Kind::kId, false}}},
      {EventType::kThreadUpdated,
       "thread_updated",
       {{"thread_id", Kind::kId, true},
        {"status", Kind::kThreadStatus, false},
        {"salience", Kind::kUnit, false},
        {"state", Kind::kObject, false}}},
      {EventType::kThreadPaused,
       "thread_paused",
       {{"thread_id", Kind::kId, true}, {"reason", Kind::kText, false}}},
      {EventType::kThreadCompleted,
       "thread_completed",
       {{"thread_id", Kind::kId, true}, {"outcome", Kind::kText, false}}},
      {EventType::kThreadDeleted,
       "thread_deleted",
       {{"thread_id", Kind::kId, true},
        {"reason", Kind::kText, false},
        {"unassign_percepts", Kind::kBool, false}}},
      {EventType::kArousalSet,
       "arousal_set",
       {{"level", Kind::kUnit, true}, {"reason", Kind::kText, false}}},
      {EventType::kArousalFactorSet,
       "arousal_factor_set",
       {{"factor", Kind::kId, true}, {"value", Kind::kFactorValue, true}}},
      {EventType::kActionEnqueued,
       "action_enqueued",
       {{"action_id", Kind::kId, true},
        {"effector", Kind::kId, true},
        {"action_type", Kind::kName, true},
        {"payload", Kind::kAny, true},
        {"idempotency_key", Kind::kNonEmpty, true},
        {"thread_id", Kind::kId, false},
        {"percept_id", Kind::kId, false},
        {"require_approval", Kind::kBool, false}}},
      {EventType::kActionSent,
       "action_sent",
       {{"action_id", Kind::kId, true}, {"attempt", Kind::kCount, true}}},
      {EventType::kActionComplete,
       "action_complete",
       {{"action_id", Kind::kId, true},
        {"attempt", Kind::kCount, false},
        {"result", Kind::kAny, false}}},
      {EventType::kActionFailed,
       "action_failed",
       {{"action_id", Kind::kId, true},
        {"attempt", Kind::kCount, true},
        {"error", Kind::kText, true},
        {"retry_at", Kind::kTime, false}}},
      {EventType::kActionDead,
       "action_dead",
       {{"action_id", Kind::kId, true},
        {"error", Kind::kText, true},
        {"attempt", Kind::kCount, false}}},
      {EventType::kActionsPruned, "actions_pruned", {{"action_ids", Kind::kIdList, true}}},
      {EventType::kReflexFired,
       "reflex_fired",
       {{"reflex_id", Kind::kId, true},
        {"percept_id", Kind::kId, false},
        {"caused", Kind::kSeqList, true},
        {"wake_mind", Kind::kObject, false}}},
      {EventType::kReflexPut,
       "reflex_put",
       {{"reflex_id", Kind::kId, true},
        {"rule", Kind::kObject, true},
        {"origin", Kind::kName, false}}},
      {EventType::kReflexDeleted,
       "reflex_deleted",
       {{"reflex_id", Kind::kId, true}, {"reason", Kind::kText, false}}},
      {EventType::kReflexEnabled,
       "reflex_enabled",
       {{"reflex_id", Kind::kId, true}, {"enabled", Kind::kBool, true}}},
      {EventType::kEntryStaged,
       "entry_staged",
       {{"date", Kind::kDate, true},
        {"entry", Kind::kEntry, true},
        {"consolidates", Kind::kConsolidates, false}}},
      {EventType::kMemoryStored, "memory_stored", {{"memory", Kind::kMemory, true}}},
      {EventType::kMemorySuperseded,
       "memory_superseded",
       {{"memory_id", Kind::kId, true}, {"by", Kind::kId, true}}},
      {EventType::kMemoryTouched,
       "memory_touched",
       {{"touches", Kind::kTouches, true}, {"reason", Kind::kText, false}}},
      {EventType::kMemoryForgotten,
       "memory_forgotten",
       {{"memory_ids", Kind::kIdList, true},
        {"document_ids", Kind::kIdList, false},
        {"reason", Kind::kText, false}}},
      {EventType::kMemoryEmbedded, "memory_embedded", {{"vectors", Kind::kVectors, true}}},
      {EventType::kAssociationAdded,
       "association_added",
       {{"association_id", Kind::kId, true},
        {"entity_a", Kind::kName, true},
        {"relation", Kind::kName, true},
        {"entity_b", Kind::kName, true}}},
      {EventType::kDocumentIngested, "document_ingested", {{"document", Kind::kDocument, true}}},
      {EventType::kReflexesEvaluated, "reflexes_evaluated", {{"through_seq", Kind::kCount, true}}},
      {EventType::kSegmentsAccepted, "segments_accepted", {{"segments", Kind::kObjectList, true}}},
      {EventType::kDedupPruned, "dedup_pruned", {{"percept_ids", Kind::kIdList, true}}},
      {EventType::kActionApproved, "action_approved", {{"action_id", Kind::kId, true}}},
      {EventType::kActionRejected, "action_rejected", {{"action_id", Kind::kId, true}}},
      {EventType::kActionRetried, "action_retried", {{"action_id", Kind::kId, true}}},
      {EventType::kPrimaryPromoted,
       "primary_promoted",
       {{"agent", Kind::kName, true},
        {"stream", Kind::kName, true},
        {"stream_seq", Kind::kCount, true}}},
      {EventType::kMindWoken,
       "mind_woken",
       {{"session", Kind::kId, true},
        {"mind", Kind::kName, true},
        {"reason", Kind::kText, true},
        {"trigger", Kind::kName, true},
        {"thread_id", Kind::kId, false},
        {"percept_ids", Kind::kIdList, false},
        {"budget", Kind::kObject, false}}},
      {EventType::kMindStep,
       "mind_step",
       {{"session", Kind::kId, true},
        {"step", Kind::kCount, true},
        {"model", Kind::kText, false},
        {"tokens_in", Kind::kCount, true},
        {"tokens_out", Kind::kCount, true},
        {"latency_ms", Kind::kCount, false},
        {"tool_calls", Kind::kObjects, false},
        {"text", Kind::kText, false},
        {"finish_reason", Kind::kText, false}}},
      {EventType::kMindSlept,
       "mind_slept",
       {{"session", Kind::kId, true},
        {"outcome", Kind::kName, true},
        {"steps", Kind::kCount, true},
        {"tokens", Kind::kCount, true},
        {"duration_ms", Kind::kCount, true},
        {"error", Kind::kText, false}}},
  }});
  return specs;
}

const EventSpec& SpecOf(EventType type) { return Specs()[static_cast<size_t>(type)]; }

std::string Describe(const json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

// {timestamp, text, byte_size, est_tokens, metadata}: the archive's staging
// line, byte_size the text's length in bytes.
bool IsEntry(const json& v, TimeRule times) {
  if (!v.is_object() || v.size() != 5) return false;
  auto ts = v.find("timestamp");
  auto text = v.find("text");
  auto bytes = v.find("byte_size");
  auto tokens = v.find("est_tokens");
  auto meta = v.find("metadata");
  return !(ts == v.end() || !ts->is_string() || !ParseTime(ts->get_ref<const std::string&>(), times).ok() ||
           text == v.end() || !text->is_string() || bytes == v.end() ||
           !bytes->is_number_unsigned() ||
           bytes->get<uint64_t>() != text->get_ref<const std::string&>().size() ||
           tokens == v.end() || !tokens->is_number_unsigned() || meta == v.end() ||
           !meta->is_object());
}

// {thread_ids?, percept_ids?, action_ids?}, each an array of ids.
bool IsConsolidates(const json& v) {
  if (!v.is_object()) return false;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it.key() != "thread_ids" && it.key() != "percept_ids" && it.key() != "action_ids")
      return false;
    if (!it->is_array()) return false;
    for (const auto& e : *it)
      if (!e.is_string() || !IsValidId(e.get_ref<const std::string&>())) return false;
  }
  return true;
}

Status CheckField(const EventSpec& spec, const FieldSpec& f, const json& v, TimeRule times) {
  auto bad = [&](std::string_view want) {
    return Status::InvalidArgument(std::string(spec.name) + "." + std::string(f.name) + ": must be " +
                                   std::string(want) + ", got " + Describe(v));
  };
  switch (f.kind) {
    case Kind::kId:
      if (!v.is_string() || !IsValidId(v.get_ref<const std::string&>()))
        return bad("an id (1-128 characters of [A-Za-z0-9._:-])");
      return Status::OK();
    case Kind::kText:
      return v.is_string() ? Status::OK() : bad("a string");
    case Kind::kNonEmpty:
      return v.is_string() && !v.get_ref<const std::string&>().empty() ? Status::OK()
                                                                       : bad("a non-empty string");
    case Kind::kName:
      if (!v.is_string()) return bad(kNameRule);
      return CheckName(std::string(spec.name) + "." + std::string(f.name),
                       v.get_ref<const std::string&>(), NameRuleFor(times));
    case Kind::kUnit: {
      if (!v.is_number()) return bad("a number in [0, 1]");
      double d = v.get<double>();
      return d >= 0 && d <= 1 ? Status::OK() : bad("a number in [0, 1]");
    }
    case Kind::kNumber:
      return v.is_number() && std::isfinite(v.get<double>()) ? Status::OK() : bad("a number");
    case Kind::kCount:
      return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0)
                 ? Status::OK()
                 : bad("a non-negative integer");
    case Kind::kBool:
      return v.is_boolean() ? Status::OK() : bad("true or false");
    case Kind::kObject:
      return v.is_object() ? Status::OK() : bad("an object");
    case Kind::kAny:
      return Status::OK();
    case Kind::kTime:
      return v.is_string() && ParseTime(v.get_ref<const std::string&>(), times).ok()
                 ? Status::OK()
                 : bad("an RFC 3339 time on a calendar day");
    case Kind::kIdList:
      if (!v.is_array()) return bad("an array of ids");
      for (const auto& e : v)
        if (!e.is_string() || !IsValidId(e.get_ref<const std::string&>()))
          return bad("an array of ids");
      return Status::OK();
    case Kind::kSeqList:
      if (!v.is_array()) return bad("an array of seqs");
      for (const auto& e : v)
        if (!e.is_number_unsigned() && !(e.is_number_integer() && e.get<int64_t>() > 0))
          return bad("an array of seqs");
      return Status::OK();
    case Kind::kThreadStatus:
      if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s == "active" || s == "paused" || s == "frozen" || s == "complete") return Status::OK();
      }
      return bad("one of active, paused, frozen, complete");
    case Kind::kFactorValue:
      return v.is_boolean() || v.is_number() || v.is_string() || v.is_null()
                 ? Status::OK()
                 : bad("a boolean, number, string or null");
    case Kind::kDate:
      return v.is_string() && IsValidDate(v.get_ref<const std::string&>())
                 ? Status::OK()
                 : bad("a date (YYYY-MM-DD)");
    case Kind::kEntry:
      return IsEntry(v, times) ? Status::OK()
                        : bad("an entry {timestamp: RFC 3339, text, byte_size: bytes of text, "
                              "est_tokens, metadata: {}}");
    case Kind::kConsolidates:
      return IsConsolidates(v) ? Status::OK()
                               : bad("{thread_ids?, percept_ids?, action_ids?} (arrays of ids)");
    case Kind::kObjects:
      if (!v.is_array()) return bad("an array of objects");
      for (const auto& e : v)
        if (!e.is_object()) return bad("an array of objects");
      return Status::OK();
    case Kind::kObjectList:
      if (!v.is_array() || v.empty()) return bad("a non-empty array of objects");
      for (const auto& e : v)
        if (!e.is_object()) return bad("a non-empty array of objects");
      return Status::OK();
    case Kind::kMemory:
    case Kind::kTouches:
    case Kind::kVectors:
    case Kind::kDocument: {
      std::string why = f.kind == Kind::kMemory    ? CheckMemoryObject(v, times)
                        : f.kind == Kind::kTouches ? CheckTouches(v)
                        : f.kind == Kind::kVectors ? CheckVectors(v, times)
                                                   : CheckDocument(v);
      if (why.empty()) return Status::OK();
      return Status::InvalidArgument(std::string(spec.name) + "." + why);
    }
  }
  return Status::Internal("unhandled field kind");
}

}  // namespace

std::string_view EventTypeName(EventType type) { return SpecOf(type).name; }

std::optional<EventType> ParseEventType(std::string_view name) {
  for (const auto& spec : Specs())
    if (spec.name == name) return spec.type;
  return std::nullopt;
}

const std::vector<EventType>& AllEventTypes() {
  static const std::vector<EventType> all = [] {
    std::vector<EventType> v;
    for (const auto& spec : Specs()) v.push_back(spec.type);
    return v;
  }();
  return all;
}

std::string Event::Str(std::string_view key) const {
  auto it = fields.find(key);
  if (it == fields.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

double Event::Num(std::string_view key, double dflt) const {
  auto it = fields.find(key);
  if (it == fields.end() || !it->is_number()) return dflt;
  return it->get<double>();
}

Status ValidateEventFields(EventType type, const json& fields, TimeRule times) {
  const EventSpec& spec = SpecOf(type);
  if (!fields.is_object())
    return Status::InvalidArgument(std::string(spec.name) + ": fields must be an object");
  for (const FieldSpec& f : spec.fields) {
    auto it = fields.find(f.name);
    if (it == fields.end()) {
      if (f.required)
        return Status::InvalidArgument(std::string(spec.name) + ": missing required field \"" +
                                       std::string(f.name) + "\"");
      continue;
    }
    LIMBIC_RETURN_IF_ERROR(CheckField(spec, f, *it, times));
  }
  if (type == EventType::kThreadUpdated && !fields.contains("status") &&
      !fields.contains("salience") && !fields.contains("state"))
    return Status::InvalidArgument("thread_updated: needs at least one of status, salience, state");
  return Status::OK();
}

void AppendEncodedEvent(const Event& event, std::string* out) {
  out->append("{\"v\":1,\"seq\":");
  out->append(std::to_string(event.seq));
  out->append(",\"ts\":\"");
  out->append(FormatTime(event.ts));
  out->append("\",\"type\":\"");
  out->append(EventTypeName(event.type));
  out->push_back('"');
  for (auto it = event.fields.begin(); it != event.fields.end(); ++it) {
    out->push_back(',');
    // Invalid UTF-8 is replaced rather than thrown on: a percept's text is
    // untrusted.
    AppendJsonString(it.key(), out);
    out->push_back(':');
    AppendCompactJson(it.value(), out);
  }
  out->append("}\n");
}

std::string EncodeEvent(const Event& event) {
  std::string line;
  AppendEncodedEvent(event, &line);
  line.pop_back();
  return line;
}

json EventToJson(const Event& event) {
  json j = event.fields;
  j["v"] = kEventVersion;
  j["seq"] = event.seq;
  j["ts"] = FormatTime(event.ts);
  j["type"] = EventTypeName(event.type);
  return j;
}

namespace {

// The envelope's members, taken out of the event object; what remains are
// the type's fields.
constexpr std::string_view kEnvelope[] = {"v", "seq", "ts", "type"};
struct Envelope {
  std::optional<json> member[std::size(kEnvelope)];
  std::optional<json>& v() { return member[0]; }
  std::optional<json>& seq() { return member[1]; }
  std::optional<json>& ts() { return member[2]; }
  std::optional<json>& type() { return member[3]; }
};

Result<Event> EventFromParts(Envelope& env, json fields) {
  Event e;
  if (const auto& v = env.v()) {
    if (!v->is_number_integer() || v->get<int64_t>() < 1)
      return Status::InvalidArgument("field \"v\": must be a positive integer");
    if (v->get<int64_t>() > kEventVersion)
      return Status::InvalidArgument("event version " + std::to_string(v->get<int64_t>()) +
                                     " is newer than this limbic reads (" +
                                     std::to_string(kEventVersion) + ")");
  }
  const auto& seq = env.seq();
  if (!seq || !(seq->is_number_unsigned() || seq->is_number_integer()) || seq->get<int64_t>() < 1)
    return Status::InvalidArgument("field \"seq\": must be an integer >= 1");
  e.seq = seq->get<uint64_t>();
  const auto& ts = env.ts();
  if (!ts || !ts->is_string())
    return Status::InvalidArgument("field \"ts\": missing or not a string");
  auto t = ParseTime(ts->get_ref<const std::string&>(), TimeRule::kLogged);
  if (!t.ok()) return t.status().WithContext("field \"ts\"");
  e.ts = *t;
  const auto& type = env.type();
  if (!type || !type->is_string())
    return Status::InvalidArgument("field \"type\": missing or not a string");
  auto parsed = ParseEventType(type->get_ref<const std::string&>());
  if (!parsed)
    return Status::InvalidArgument("unknown event type \"" + type->get<std::string>() + "\"");
  e.type = *parsed;
  e.fields = std::move(fields);
  LIMBIC_RETURN_IF_ERROR(ValidateEventFields(e.type, e.fields, TimeRule::kLogged));
  return e;
}

}  // namespace

Result<Event> EventFromJson(json obj) {
  if (!obj.is_object()) return Status::Corruption("event is not a JSON object");
  Envelope env;
  for (size_t i = 0; i < std::size(kEnvelope); ++i) {
    auto it = obj.find(kEnvelope[i]);
    if (it == obj.end()) continue;
    env.member[i] = std::move(*it);
    obj.erase(it);
  }
  return EventFromParts(env, std::move(obj));
}

Result<Event> DecodeEvent(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  Envelope env;
  std::optional<json> fields = ParseJsonTaking(line, kEnvelope, env.member);
  if (!fields) return Status::Corruption("malformed JSON");
  if (!fields->is_object()) return Status::Corruption("event is not a JSON object");
  return EventFromParts(env, std::move(*fields));
}

bool IsValidId(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Status CheckId(std::string_view what, std::string_view id) {
  if (IsValidId(id)) return Status::OK();
  return Status::InvalidArgument(std::string(what) + " \"" + std::string(id) +
                                 "\" is not a valid id (1-128 characters of [A-Za-z0-9._:-])");
}

}  // namespace limbic::state
