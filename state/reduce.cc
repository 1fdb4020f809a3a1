// Reduce(): what each event does to the pools (see reducer.h, docs/events.md).
#include <algorithm>

#include "base/json.h"
#include "state/dedup.h"
#include "state/reduce_step.h"
#include "state/reducer.h"

namespace limbic::state {

namespace {

using reduce::Step;


// Builds a record key by key: much cheaper than json's initializer lists,
// which build a temporary array per pair.
class Rec {
 public:
  Rec() : rec_(json::object()), obj_(rec_.get_ref<json::object_t&>()) {}
  Rec& Set(const char* key, json value) {
    obj_.insert_or_assign(key, std::move(value));
    return *this;
  }
  json Take() { return std::move(rec_); }

 private:
  json rec_;
  json::object_t& obj_;
};

// `key` of the event if present, else `dflt`.
json FieldOr(const json& fields, const char* key, json dflt) {
  auto it = fields.find(key);
  return it != fields.end() ? *it : std::move(dflt);
}

bool Is(const json& rec, const char* key, std::string_view value) {
  auto it = rec.find(key);
  return it != rec.end() && it->is_string() && it->get_ref<const std::string&>() == value;
}

// JSON merge patch (RFC 7386); never throws. A thread's state may be
// nested any depth (an older limbic stored such states): the walk keeps its
// own stack, and values are copied by CopyJson, not json's recursive copy.
void MergePatch(json& target, const json& patch) {
  std::vector<std::pair<json*, const json*>> todo{{&target, &patch}};
  while (!todo.empty()) {
    auto [t, p] = todo.back();
    todo.pop_back();
    if (!p->is_object()) {
      CopyJson(*p, t);
      continue;
    }
    if (!t->is_object()) *t = json::object();
    for (auto it = p->begin(); it != p->end(); ++it) {
      if (it->is_null())
        t->erase(it.key());
      else
        todo.emplace_back(&(*t)[it.key()], &*it);  // map nodes: the pointer stays valid
    }
  }
}

// A percept leaving the pool: an id supplied from outside is remembered in
// the dedup pool (dedup.h); a generated one is unique anyway.
void RememberDeparted(Step& s, const std::string& id, const PerceptRecord& rec) {
  if (IsGeneratedPerceptId(id, rec.seq())) return;
  Rec r;
  r.Set("id", id)
      .Set("source", rec.source())
      .Set("arrived_at", FormatTime(rec.ts()))
      .Set("left_at", s.ts());
  s.Put(Pool::kDedup, id, r.Take());
}

Status ReducePercept(const Event& e, Step& s) {
  const std::string id = s.Str("percept_id");
  if (e.type == EventType::kPerceptArrived) {
    LIMBIC_RETURN_IF_ERROR(s.MustNotExist(Pool::kPercepts, id, "percept"));
    // Back in the pool, which dedups it again. Whether it came back too
    // early was the command's check (CheckDedupWindow), never the log's.
    if (!IsGeneratedPerceptId(id, s.seq())) {
      Result<bool> remembered = s.Contains(Pool::kDedup, id);
      if (!remembered.ok()) return remembered.status();
      if (*remembered) s.Delete(Pool::kDedup, id);
    }
    s.PutPercept(id, PerceptRecord::Arrived(id, s.F(), s.ts(), s.seq()));
    return Status::OK();
  }
  auto p = s.TakePercept(id);
  if (!p.ok()) return p.status();
  PerceptRecord& rec = *p;
  if (e.type == EventType::kPerceptRemoved) {
    RememberDeparted(s, id, rec);
    s.Delete(Pool::kPercepts, id);
    return Status::OK();
  }
  if (rec.status() != "new" && rec.status() != "assigned")
    return s.Wrong("percept", id, "is " + rec.status());
  switch (e.type) {
    case EventType::kPerceptAssigned: {
      const std::string thread_id = s.Str("thread_id");
      auto t = s.TakeFlat(Pool::kThreads, thread_id, "thread");
      if (!t.ok()) return t.status();
      if (t->IsString("status", "complete")) return s.Wrong("thread", thread_id, "is complete");
      // Moving it: the earlier thread forgets it.
      if (rec.thread_id() && *rec.thread_id() != thread_id) {
        const std::string earlier = *rec.thread_id();
        auto old = s.TakeFlat(Pool::kThreads, earlier, "thread");
        if (old.ok()) {
          old->ArrayRemove("percepts", id);
          s.PutFlat(Pool::kThreads, earlier, std::move(*old));
        }
      }
      t->ArrayAddUnique("percepts", id);
      t->SetString("last_active", s.ts());
      s.PutFlat(Pool::kThreads, thread_id, std::move(*t));
      rec.set_thread_id(thread_id);
      rec.set_status("assigned");
      break;
    }
    case EventType::kPerceptProcessed:
      rec.set_status("processed");
      if (rec.thread_id()) {
        const std::string& thread_id = *rec.thread_id();
        auto t = s.TakeFlat(Pool::kThreads, thread_id, "thread");
        if (t.ok()) {
          t->SetString("last_active", s.ts());
          s.PutFlat(Pool::kThreads, thread_id, std::move(*t));
        }
      }
      break;
    case EventType::kPerceptDropped:
      rec.set_status("dropped");
      if (s.Has("reason")) rec.set_drop_reason(s.F()["reason"]);
      break;
    default:
      return Status::Internal("not a percept event");
  }
  s.PutPercept(id, std::move(rec));
  return Status::OK();
}

// The percept, if still in the pool and still on `thread_id`, loses it: no
// thread, and "new" again when it was "assigned" (processed and dropped
// stay so).
Status UnassignPercept(Step& s, const std::string& percept_id, const std::string& thread_id) {
  Result<bool> exists = s.Contains(Pool::kPercepts, percept_id);
  if (!exists.ok()) return exists.status();
  if (!*exists) return Status::OK();  // consolidated or removed since
  auto p = s.TakePercept(percept_id);
  if (!p.ok()) return p.status();
  if (p->thread_id() == thread_id) {
    p->clear_thread_id();
    if (p->status() == "assigned") p->set_status("new");
  }
  s.PutPercept(percept_id, std::move(*p));
  return Status::OK();
}

Status ReduceThread(const Event& e, Step& s) {
  const std::string id = s.Str("thread_id");
  if (e.type == EventType::kThreadCreated) {
    LIMBIC_RETURN_IF_ERROR(s.MustNotExist(Pool::kThreads, id, "thread"));
    if (s.Has("from_percept"))
      LIMBIC_RETURN_IF_ERROR(s.MustExist(Pool::kPercepts, s.Str("from_percept"), "percept"));
    json state = {{"phase", nullptr}, {"context", json::object()}, {"next_step", nullptr}};
    if (s.Has("state")) MergePatch(state, s.F()["state"]);
    for (const char* k : {"phase", "context", "next_step"})
      if (!state.contains(k)) state[k] = std::string_view(k) == "context" ? json::object() : json();
    Rec rec;
    rec.Set("id", id)
        .Set("goal", s.F()["goal"])
        .Set("status", FieldOr(s.F(), "status", "active"))
        .Set("salience", s.F()["salience"])
        .Set("percepts", json::array())
        .Set("state", std::move(state))
        .Set("created_at", s.ts())
        .Set("last_active", s.ts());
    if (s.Has("from_percept")) rec.Set("from_percept", s.F()["from_percept"]);
    s.PutFlat(Pool::kThreads, id, FlatRecord::FromJson(rec.Take()));
    return Status::OK();
  }
  auto t = s.TakeFlat(Pool::kThreads, id, "thread");
  if (!t.ok()) return t.status();
  FlatRecord& rec = *t;
  if (e.type == EventType::kThreadDeleted) {
    // Written since unassign_percepts exists: the thread's percepts lose
    // it. Older events leave them as they were, so a replay rebuilds what
    // the log's writer had.
    if (s.Has("unassign_percepts") && s.F()["unassign_percepts"] == true) {
      const json percepts = rec.Get("percepts");
      if (percepts.is_array())
        for (const json& p : percepts)
          if (p.is_string()) LIMBIC_RETURN_IF_ERROR(UnassignPercept(s, p.get<std::string>(), id));
    }
    s.Delete(Pool::kThreads, id);
    return Status::OK();
  }
  if (rec.IsString("status", "complete")) return s.Wrong("thread", id, "is complete");
  switch (e.type) {
    case EventType::kThreadUpdated:
      if (s.Has("status")) rec.Set("status", s.F()["status"]);
      if (s.Has("salience")) rec.Set("salience", s.F()["salience"]);
      if (s.Has("state")) {
        json state = rec.Get("state");
        MergePatch(state, s.F()["state"]);
        rec.Set("state", state);
      }
      break;
    case EventType::kThreadPaused:
      rec.SetString("status", "paused");
      if (s.Has("reason")) rec.Set("pause_reason", s.F()["reason"]);
      break;
    case EventType::kThreadCompleted:
      rec.SetString("status", "complete");
      if (s.Has("outcome")) rec.Set("outcome", s.F()["outcome"]);
      break;
    default:
      return Status::Internal("not a thread event");
  }
  rec.SetString("last_active", s.ts());
  s.PutFlat(Pool::kThreads, id, std::move(rec));
  return Status::OK();
}

Status ReduceArousal(const Event& e, Step& s) {
  auto r = s.Take(Pool::kArousal, std::string(kArousalId), "arousal");
  json rec = r.ok() ? std::move(*r) : DefaultArousal();
  if (!r.ok() && !r.status().IsNotFound()) return r.status();
  if (e.type == EventType::kArousalSet) {
    rec["level"] = s.F()["level"];
  } else {
    if (!rec["factors"].is_object()) rec["factors"] = json::object();
    const json& v = s.F()["value"];
    if (v.is_null()) rec["factors"].erase(s.Str("factor"));
    else rec["factors"][s.Str("factor")] = v;
  }
  rec["updated_at"] = s.ts();
  s.Put(Pool::kArousal, std::string(kArousalId), std::move(rec));
  return Status::OK();
}

// Removes a finished (complete, dead or rejected) action: actions_pruned
// and entry_staged both do.
Status RemoveFinishedAction(Step& s, const std::string& id) {
  auto a = s.Need(Pool::kActions, id, "action");
  if (!a.ok()) return a.status();
  if (!Is(*a, "status", "complete") && !Is(*a, "status", "dead") && !Is(*a, "status", "rejected"))
    return s.Wrong("action", id,
                   "is " + a->value("status", "?") + ", not complete, dead or rejected");
  s.Delete(Pool::kActions, id);
  return Status::OK();
}

Status ReduceAction(const Event& e, Step& s) {
  if (e.type == EventType::kActionsPruned) {
    for (const json& v : s.F()["action_ids"])
      LIMBIC_RETURN_IF_ERROR(RemoveFinishedAction(s, v.get<std::string>()));
    return Status::OK();
  }
  const std::string id = s.Str("action_id");
  if (e.type == EventType::kActionEnqueued) {
    LIMBIC_RETURN_IF_ERROR(s.MustNotExist(Pool::kActions, id, "action"));
    if (s.Has("thread_id"))
      LIMBIC_RETURN_IF_ERROR(s.MustExist(Pool::kThreads, s.Str("thread_id"), "thread"));
    Rec rec;
    rec.Set("id", id)
        .Set("effector", s.F()["effector"])
        .Set("type", s.F()["action_type"])
        .Set("payload", s.F()["payload"])
        .Set("status",
             FieldOr(s.F(), "require_approval", false) == true ? "pending_approval" : "pending")
        .Set("attempts", 0)
        .Set("idempotency_key", s.F()["idempotency_key"])
        .Set("thread_id", FieldOr(s.F(), "thread_id", nullptr))
        .Set("percept_id", FieldOr(s.F(), "percept_id", nullptr))
        .Set("ts", s.ts())
        .Set("updated_at", s.ts())
        .Set("last_error", nullptr)
        .Set("next_attempt_at", nullptr);
    s.PutFlat(Pool::kActions, id, FlatRecord::FromJson(rec.Take()));
    return Status::OK();
  }
  auto a = s.TakeFlat(Pool::kActions, id, "action");
  if (!a.ok()) return a.status();
  FlatRecord& rec = *a;
  const std::string status = rec.String("status").value_or("");
  auto from = [&](std::initializer_list<const char*> allowed) {
    for (const char* ok : allowed)
      if (status == ok) return Status::OK();
    return s.Wrong("action", id, "is " + status);
  };
  switch (e.type) {
    case EventType::kActionSent:
      LIMBIC_RETURN_IF_ERROR(from({"pending", "failed", "inflight"}));
      rec.SetString("status", "inflight");
      rec.Set("attempts", s.F()["attempt"]);
      rec.Set("next_attempt_at", nullptr);
      break;
    case EventType::kActionComplete:
      LIMBIC_RETURN_IF_ERROR(from({"inflight"}));
      rec.SetString("status", "complete");
      if (s.Has("result")) rec.Set("result", s.F()["result"]);
      break;
    case EventType::kActionFailed:
      LIMBIC_RETURN_IF_ERROR(from({"inflight"}));
      rec.SetString("status", "failed");
      rec.Set("attempts", s.F()["attempt"]);
      rec.Set("last_error", s.F()["error"]);
      rec.Set("next_attempt_at", s.Has("retry_at") ? s.F()["retry_at"] : json());
      break;
    case EventType::kActionApproved:
      LIMBIC_RETURN_IF_ERROR(from({"pending_approval"}));
      rec.SetString("status", "pending");
      break;
    case EventType::kActionRejected:
      LIMBIC_RETURN_IF_ERROR(from({"pending_approval"}));
      rec.SetString("status", "rejected");
      if (s.Has("reason")) rec.Set("last_error", s.F()["reason"]);
      break;
    case EventType::kActionRetried:
      // A human sends a dead action again, with a fresh attempt budget;
      // its last error stays until a new attempt replaces it.
      LIMBIC_RETURN_IF_ERROR(from({"dead"}));
      rec.SetString("status", "pending");
      rec.Set("attempts", 0);
      rec.Set("next_attempt_at", nullptr);
      break;
    case EventType::kActionDead:
      LIMBIC_RETURN_IF_ERROR(from({"pending", "inflight", "failed"}));
      rec.SetString("status", "dead");
      rec.Set("last_error", s.F()["error"]);
      rec.Set("next_attempt_at", nullptr);
      if (s.Has("attempt")) rec.Set("attempts", s.F()["attempt"]);
      break;
    default:
      return Status::Internal("not an action event");
  }
  rec.SetString("updated_at", s.ts());
  s.PutFlat(Pool::kActions, id, std::move(rec));
  return Status::OK();
}

Status ReduceReflex(const Event& e, Step& s) {
  const std::string id = s.Str("reflex_id");
  if (e.type == EventType::kReflexPut) {
    auto old = s.Need(Pool::kReflexes, id, "reflex");
    const json& rule = s.F()["rule"];
    Rec rec;
    rec.Set("id", id)
        .Set("rule", rule)
        .Set("enabled", rule.contains("enabled") && rule["enabled"].is_boolean()
                            ? rule["enabled"].get<bool>()
                            : true)
        .Set("updated_at", s.ts())
        .Set("fired_count", old.ok() ? old->value("fired_count", 0) : 0)
        .Set("last_fired_at", old.ok() ? (*old)["last_fired_at"] : json());
    if (s.Has("origin")) rec.Set("origin", s.F()["origin"]);
    s.Put(Pool::kReflexes, id, rec.Take());
    return Status::OK();
  }
  if (e.type == EventType::kReflexFired) {
    // History: the rule may come from a config file and not be in the pool.
    auto r = s.Need(Pool::kReflexes, id, "reflex");
    if (!r.ok()) return r.status().IsNotFound() ? Status::OK() : r.status();
    (*r)["fired_count"] = r->value("fired_count", 0) + 1;
    (*r)["last_fired_at"] = s.ts();
    s.Put(Pool::kReflexes, id, std::move(*r));
    return Status::OK();
  }
  auto r = s.Need(Pool::kReflexes, id, "reflex");
  if (!r.ok()) return r.status();
  if (e.type == EventType::kReflexDeleted) {
    s.Delete(Pool::kReflexes, id);
    return Status::OK();
  }
  (*r)["enabled"] = s.F()["enabled"];
  (*r)["updated_at"] = s.ts();
  s.Put(Pool::kReflexes, id, std::move(*r));
  return Status::OK();
}

// entry_staged: the entry itself goes to the archive's staging files (they
// follow the log); what it consolidates leaves the pools. Consolidated
// threads must be complete, their percepts go with them whatever their
// status, other percepts must be processed or dropped, actions finished.
Status ReduceStaged(const Event& e, Step& s) {
  auto c = e.fields.find("consolidates");
  if (c == e.fields.end()) return Status::OK();
  std::vector<std::string> threads;
  auto ids = [&](const char* key) {
    auto it = c->find(key);
    std::vector<std::string> out;
    if (it != c->end())
      for (const json& v : *it) out.push_back(v.get<std::string>());
    return out;
  };
  for (const std::string& id : ids("thread_ids")) {
    auto t = s.Need(Pool::kThreads, id, "thread");
    if (!t.ok()) return t.status();
    if (!Is(*t, "status", "complete"))
      return s.Wrong("thread", id, "is " + t->value("status", "?") + ", not complete");
    s.Delete(Pool::kThreads, id);
    threads.push_back(id);
  }
  for (const std::string& id : ids("percept_ids")) {
    auto p = s.NeedPercept(id);
    if (!p.ok()) return p.status();
    const std::optional<std::string>& owner = p->thread_id();
    bool with_thread = owner && std::find(threads.begin(), threads.end(), *owner) != threads.end();
    if (!with_thread && p->status() != "processed" && p->status() != "dropped")
      return s.Wrong("percept", id, "is " + p->status() + ", not processed or dropped");
    RememberDeparted(s, id, *p);
    s.Delete(Pool::kPercepts, id);
  }
  for (const std::string& id : ids("action_ids")) LIMBIC_RETURN_IF_ERROR(RemoveFinishedAction(s, id));
  return Status::OK();
}

// dedup_pruned: the listed ids leave the dedup pool; each must be in it.
Status ReduceDedupPruned(Step& s) {
  for (const json& v : s.F()["percept_ids"]) {
    const std::string id = v.get<std::string>();
    LIMBIC_RETURN_IF_ERROR(s.MustExist(Pool::kDedup, id, "dedup record of percept"));
    s.Delete(Pool::kDedup, id);
  }
  return Status::OK();
}

}  // namespace

Status Reduce(const Event& event, Overlay* overlay) {
  Step s(event, overlay);
  switch (event.type) {
    case EventType::kPerceptArrived:
    case EventType::kPerceptAssigned:
    case EventType::kPerceptProcessed:
    case EventType::kPerceptDropped:
    case EventType::kPerceptRemoved:
      return ReducePercept(event, s);
    case EventType::kThreadCreated:
    case EventType::kThreadUpdated:
    case EventType::kThreadPaused:
    case EventType::kThreadCompleted:
    case EventType::kThreadDeleted:
      return ReduceThread(event, s);
    case EventType::kArousalSet:
    case EventType::kArousalFactorSet:
      return ReduceArousal(event, s);
    case EventType::kActionEnqueued:
    case EventType::kActionSent:
    case EventType::kActionComplete:
    case EventType::kActionFailed:
    case EventType::kActionDead:
    case EventType::kActionApproved:
    case EventType::kActionRejected:
    case EventType::kActionRetried:
    case EventType::kActionsPruned:
      return ReduceAction(event, s);
    case EventType::kReflexFired:
    case EventType::kReflexPut:
    case EventType::kReflexDeleted:
    case EventType::kReflexEnabled:
      return ReduceReflex(event, s);
    case EventType::kEntryStaged:
      return ReduceStaged(event, s);
    case EventType::kDedupPruned:
      return ReduceDedupPruned(s);
    case EventType::kMemoryStored:
    case EventType::kMemorySuperseded:
    case EventType::kMemoryTouched:
    case EventType::kMemoryForgotten:
    case EventType::kMemoryEmbedded:
    case EventType::kAssociationAdded:
    case EventType::kDocumentIngested:
      return ReduceMemory(event, overlay);
    // Records of what the runtime and the operator did, read from the log
    // itself (the reflex catch-up, `limbic why`): no pool changes.
    case EventType::kReflexesEvaluated:
    case EventType::kSegmentsAccepted:
    case EventType::kPrimaryPromoted:
      return Status::OK();
    case EventType::kMindWoken:
    case EventType::kMindStep:
    case EventType::kMindSlept:
      return ReduceMind(event, overlay);
  }
  return Status::Internal("unknown event type");
}

}  // namespace limbic::state
