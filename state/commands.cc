#include "state/commands.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "base/input_json.h"
#include "base/json.h"
#include "state/provenance.h"

namespace limbic::state {
namespace {

// Reads fields of one request object, remembering the first error, so each
// Build* reads like the request it accepts.
class Request {
 public:
  Request(const json& req, std::initializer_list<std::string_view> known) : req_(req) {
    if (!req_.is_object()) {
      Fail("request body must be a JSON object");
      return;
    }
    for (auto it = req_.begin(); it != req_.end(); ++it) {
      bool ok = false;
      for (std::string_view k : known) ok = ok || k == it.key();
      if (!ok) {
        Fail("unknown field \"" + it.key() + "\"");
        return;
      }
    }
  }

  bool Has(std::string_view key) const { return req_.is_object() && req_.contains(key); }

  std::string String(std::string_view key, bool required, bool non_empty = true) {
    const json* v = Find(key, required);
    if (!v) return {};
    if (!v->is_string() || (non_empty && v->get_ref<const std::string&>().empty())) {
      Bad(key, non_empty ? "a non-empty string" : "a string", *v);
      return {};
    }
    return v->get<std::string>();
  }

  std::string Id(std::string_view key, bool required) {
    std::string id = String(key, required);
    if (ok() && Has(key) && !IsValidId(id)) Bad(key, "an id (1-128 characters of [A-Za-z0-9._:-])", json(id));
    return id;
  }

  double Unit(std::string_view key, double dflt) {
    const json* v = Find(key, false);
    if (!v) return dflt;
    if (!v->is_number() || !(v->get<double>() >= 0 && v->get<double>() <= 1)) {
      Bad(key, "a number in [0, 1]", *v);
      return dflt;
    }
    return v->get<double>();
  }

  json Object(std::string_view key) {
    const json* v = Find(key, false);
    if (!v) return json::object();
    if (!v->is_object()) {
      Bad(key, "an object", *v);
      return json::object();
    }
    return *v;
  }

  std::vector<std::string> IdList(std::string_view key) {
    std::vector<std::string> out;
    const json* v = Find(key, false);
    if (!v) return out;
    if (!v->is_array()) {
      Bad(key, "an array of ids", *v);
      return out;
    }
    for (const json& e : *v) {
      if (!e.is_string() || !IsValidId(e.get_ref<const std::string&>())) {
        Bad(key, "an array of ids", *v);
        return {};
      }
      out.push_back(e.get<std::string>());
    }
    return out;
  }

  bool Bool(std::string_view key, bool dflt) {
    const json* v = Find(key, false);
    if (!v) return dflt;
    if (!v->is_boolean()) {
      Bad(key, "true or false", *v);
      return dflt;
    }
    return v->get<bool>();
  }

  const json* Raw(std::string_view key) { return Find(key, false); }

  void Fail(std::string msg) {
    if (status_.ok()) status_ = Status::InvalidArgument(std::move(msg));
  }
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

 private:
  const json* Find(std::string_view key, bool required) {
    if (!ok()) return nullptr;
    auto it = req_.find(key);
    if (it == req_.end() || (it->is_null() && !required)) {
      if (required) Fail("missing required field \"" + std::string(key) + "\"");
      return nullptr;
    }
    return &*it;
  }
  void Bad(std::string_view key, std::string_view want, const json& got) {
    std::string shown = got.dump(-1, ' ', false, json::error_handler_t::replace);
    if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
    Fail("field \"" + std::string(key) + "\": must be " + std::string(want) + ", got " + shown);
  }

  const json& req_;
  Status status_;
};

Event Make(EventType type, json fields) {
  Event e;
  e.type = type;
  e.fields = std::move(fields);
  return e;
}

std::string GeneratedId(char prefix, uint64_t seq) {
  return std::string(1, prefix) + "-" + std::to_string(seq);
}

Status CheckPathId(std::string_view what, std::string_view id) { return CheckId(what, id); }

// {reason?} -> one `type` event about the record `id` (`what`: percept or
// action; the field is "<what>_id"), with the reason when given.
Result<Events> BuildWithReason(EventType type, const std::string& what, std::string_view id,
                               const json& req) {
  LIMBIC_RETURN_IF_ERROR(CheckPathId(what + " id", id));
  Request r(req, {"reason"});
  std::string reason = r.String("reason", false, false);
  if (!r.ok()) return r.status();
  Events out{Make(type, {{what + "_id", id}})};
  if (r.Has("reason")) out.front().fields["reason"] = reason;
  return out;
}

}  // namespace

Result<Events> BuildPerceptAdd(const json& req, uint64_t next_seq) {
  Request r(req, {"id", "source", "type", "intensity", "text", "data", "thread_id"});
  std::string id = r.Id("id", false);
  std::string source = r.String("source", true);
  std::string type = r.String("type", true);
  double intensity = r.Unit("intensity", 0.5);
  std::string text = r.String("text", false, /*non_empty=*/false);
  json data = r.Object("data");
  std::string thread = r.Id("thread_id", false);
  if (!r.ok()) return r.status();
  if (id.empty()) id = GeneratedId('p', next_seq);
  json f = {{"percept_id", id}, {"source", source}, {"percept_type", type},
            {"intensity", intensity}, {"data", std::move(data)}};
  if (r.Has("text")) f["text"] = text;
  Events out;
  out.push_back(Make(EventType::kPerceptArrived, std::move(f)));
  if (!thread.empty())
    out.push_back(Make(EventType::kPerceptAssigned, {{"percept_id", id}, {"thread_id", thread}}));
  return out;
}

Result<Events> BuildPerceptAssign(std::string_view percept_id, const json& req) {
  LIMBIC_RETURN_IF_ERROR(CheckPathId("percept id", percept_id));
  Request r(req, {"thread_id", "reason"});
  std::string thread = r.Id("thread_id", true);
  std::string reason = r.String("reason", false, false);
  if (!r.ok()) return r.status();
  Events out{
      Make(EventType::kPerceptAssigned, {{"percept_id", percept_id}, {"thread_id", thread}})};
  Attribute(out, "", reason);
  return out;
}

Result<Events> BuildPerceptProcess(std::string_view percept_id, const json& req) {
  return BuildWithReason(EventType::kPerceptProcessed, "percept", percept_id, req);
}

Result<Events> BuildPerceptDrop(std::string_view percept_id, const json& req) {
  return BuildWithReason(EventType::kPerceptDropped, "percept", percept_id, req);
}

Result<Events> BuildPerceptRemove(std::string_view percept_id, const json& req) {
  return BuildWithReason(EventType::kPerceptRemoved, "percept", percept_id, req);
}

Result<Events> BuildThreadCreate(const json& req, uint64_t next_seq) {
  Request r(req,
            {"id", "goal", "salience", "status", "state", "from_percept", "percepts", "reason"});
  std::string id = r.Id("id", false);
  std::string goal = r.String("goal", true);
  double salience = r.Unit("salience", 0.5);
  std::string status = r.String("status", false);
  json state = r.Object("state");
  std::string from = r.Id("from_percept", false);
  std::vector<std::string> percepts = r.IdList("percepts");
  std::string reason = r.String("reason", false, false);
  if (!r.ok()) return r.status();
  if (id.empty()) id = GeneratedId('t', next_seq);
  json f = {{"thread_id", id}, {"goal", goal}, {"salience", salience}};
  if (!status.empty()) f["status"] = status;
  if (!state.empty()) f["state"] = std::move(state);
  if (!from.empty()) f["from_percept"] = from;
  // The percept a thread is made from is its first percept.
  if (!from.empty() && std::find(percepts.begin(), percepts.end(), from) == percepts.end())
    percepts.insert(percepts.begin(), from);
  Events out;
  out.push_back(Make(EventType::kThreadCreated, std::move(f)));
  for (const std::string& p : percepts)
    out.push_back(Make(EventType::kPerceptAssigned, {{"percept_id", p}, {"thread_id", id}}));
  Attribute(out, "", reason);
  return out;
}

Result<Events> BuildThreadUpdate(std::string_view thread_id, const json& req) {
  LIMBIC_RETURN_IF_ERROR(CheckPathId("thread id", thread_id));
  Request r(req, {"status", "salience", "state", "add_percepts", "reason", "outcome"});
  std::string status = r.String("status", false);
  const json* salience = r.Raw("salience");
  double salience_value = r.Unit("salience", 0);
  const json* state = r.Raw("state");
  json state_value = r.Object("state");
  std::vector<std::string> add = r.IdList("add_percepts");
  std::string reason = r.String("reason", false, false);
  std::string outcome = r.String("outcome", false, false);
  if (r.ok() && !status.empty() && status != "active" && status != "paused" &&
      status != "frozen" && status != "complete")
    r.Fail("field \"status\": must be one of active, paused, frozen, complete, got \"" + status +
           "\"");
  if (r.ok() && status.empty() && !salience && !state && add.empty())
    r.Fail("nothing to update: give at least one of status, salience, state, add_percepts");
  if (!r.ok()) return r.status();

  Events out;
  json update = {{"thread_id", thread_id}};
  if (salience) update["salience"] = salience_value;
  if (state) update["state"] = std::move(state_value);
  if (status == "active" || status == "frozen") update["status"] = status;
  if (update.size() > 1) out.push_back(Make(EventType::kThreadUpdated, std::move(update)));
  for (const std::string& p : add)
    out.push_back(Make(EventType::kPerceptAssigned, {{"percept_id", p}, {"thread_id", thread_id}}));
  if (status == "paused") {
    out.push_back(Make(EventType::kThreadPaused, {{"thread_id", thread_id}}));
  } else if (status == "complete") {
    json f = {{"thread_id", thread_id}};
    if (r.Has("outcome")) f["outcome"] = outcome;
    out.push_back(Make(EventType::kThreadCompleted, std::move(f)));
  }
  Attribute(out, "", reason);
  return out;
}

Result<Events> BuildThreadDelete(std::string_view thread_id, const json& req) {
  LIMBIC_RETURN_IF_ERROR(CheckPathId("thread id", thread_id));
  Request r(req, {"reason"});
  std::string reason = r.String("reason", false, false);
  if (!r.ok()) return r.status();
  json f = {{"thread_id", thread_id}, {"unassign_percepts", true}};
  if (r.Has("reason")) f["reason"] = reason;
  return Events{Make(EventType::kThreadDeleted, std::move(f))};
}

Result<Events> BuildArousalSet(const json& req) {
  Request r(req, {"level", "factors", "reason"});
  const json* level = r.Raw("level");
  double level_value = r.Unit("level", 0);
  json factors = r.Object("factors");
  std::string reason = r.String("reason", false, false);
  if (r.ok() && !level && factors.empty()) r.Fail("nothing to set: give level and/or factors");
  if (!r.ok()) return r.status();
  Events out;
  if (level) {
    json f = {{"level", level_value}};
    if (r.Has("reason")) f["reason"] = reason;
    out.push_back(Make(EventType::kArousalSet, std::move(f)));
  }
  for (auto it = factors.begin(); it != factors.end(); ++it) {
    const json& v = it.value();
    if (!IsValidId(it.key()))
      return Status::InvalidArgument("field \"factors\": \"" + it.key() +
                                     "\" is not a valid factor name ([A-Za-z0-9._:-])");
    if (!(v.is_boolean() || v.is_string() || v.is_null() ||
          (v.is_number() && std::isfinite(v.get<double>()))))
      return Status::InvalidArgument("field \"factors." + it.key() +
                                     "\": must be a boolean, number, string or null");
    out.push_back(Make(EventType::kArousalFactorSet, {{"factor", it.key()}, {"value", v}}));
  }
  return out;
}

Result<Events> BuildActionEnqueue(const json& req, uint64_t next_seq) {
  Request r(req, {"id", "effector", "type", "payload", "idempotency_key", "thread_id", "percept_id",
                  "require_approval", "reason"});
  std::string id = r.Id("id", false);
  std::string effector = r.Id("effector", true);
  std::string type = r.String("type", true);
  const json* payload = r.Raw("payload");
  std::string key = r.String("idempotency_key", false);
  std::string thread = r.Id("thread_id", false);
  std::string percept = r.Id("percept_id", false);
  bool approval = r.Bool("require_approval", false);
  std::string reason = r.String("reason", false, false);
  if (!r.ok()) return r.status();
  if (id.empty()) id = GeneratedId('a', next_seq);
  if (key.empty()) key = id;
  json f = {{"action_id", id},
            {"effector", effector},
            {"action_type", type},
            {"payload", payload ? *payload : json::object()},
            {"idempotency_key", key}};
  if (!thread.empty()) f["thread_id"] = thread;
  if (!percept.empty()) f["percept_id"] = percept;
  if (approval) f["require_approval"] = true;
  Events out{Make(EventType::kActionEnqueued, std::move(f))};
  Attribute(out, "", reason);
  return out;
}


Result<Events> BuildActionApprove(std::string_view action_id, const json& req) {
  return BuildWithReason(EventType::kActionApproved, "action", action_id, req);
}

Result<Events> BuildActionReject(std::string_view action_id, const json& req) {
  return BuildWithReason(EventType::kActionRejected, "action", action_id, req);
}

Result<Events> BuildActionRetry(std::string_view action_id, const json& req) {
  return BuildWithReason(EventType::kActionRetried, "action", action_id, req);
}

Result<Events> BuildActionsPrune(const Projection& state, TimeMs retention, TimeMs now) {
  json ids = json::array();
  for (std::string_view status : kFinishedActionStatuses) {
    auto actions = state.ListActions(std::string(status));
    if (!actions.ok()) return actions.status();
    for (const json& a : *actions) {
      auto updated = ParseTime(a.value("updated_at", ""), TimeRule::kLogged);
      if (updated.ok() && now - *updated >= retention) ids.push_back(a["id"]);
    }
  }
  if (ids.empty()) return Events{};
  return Events{Make(EventType::kActionsPruned, {{"action_ids", std::move(ids)}})};
}

json MakeStagedEntry(TimeMs ts, std::string text, json metadata) {
  // Sized as the log will hold it: Engine::Submit would mend the text, and
  // byte_size must count the mended bytes.
  if (!IsValidUtf8(text)) text = ToValidUtf8(text);
  json entry = json::object();
  entry["timestamp"] = FormatTime(ts);
  entry["byte_size"] = static_cast<uint64_t>(text.size());
  entry["est_tokens"] = EstimateTokens(text.size());
  entry["text"] = std::move(text);
  entry["metadata"] = std::move(metadata);
  return entry;
}

Result<Events> BuildBlink(const json& req, TimeMs now) {
  Request r(req, {"text", "metadata"});
  std::string text = r.String("text", true);
  json metadata = r.Object("metadata");
  if (!r.ok()) return r.status();
  if (!metadata.contains("kind")) metadata["kind"] = "blink";
  return Events{Make(EventType::kEntryStaged,
                     {{"date", FormatDate(now)},
                      {"entry", MakeStagedEntry(now, std::move(text), std::move(metadata))}})};
}

Result<json> ParseJsonObject(std::string_view text, std::string_view what) {
  auto v = ParseInputJson(text);
  if (!v.ok()) return v.status().WithContext(what);
  if (!v->is_object())
    return Status::InvalidArgument(std::string(what) + ": not a JSON object: " +
                                   std::string(text.substr(0, 200)));
  return v;
}

}  // namespace limbic::state
