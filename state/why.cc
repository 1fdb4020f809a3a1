#include "state/why.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "base/json.h"
#include "state/event_log.h"

namespace limbic::state {
namespace {}  // namespace

std::vector<std::string> EventIds(const Event& e) {
  std::vector<std::string> out;
  for (const char* key : {"percept_id", "thread_id", "action_id", "from_percept"})
    if (std::string v = e.Str(key); !v.empty()) out.push_back(std::move(v));
  auto c = e.fields.find("consolidates");
  if (c != e.fields.end() && c->is_object())
    for (const char* key : {"percept_ids", "thread_ids", "action_ids"})
      if (auto list = c->find(key); list != c->end() && list->is_array())
        for (const json& id : *list)
          if (id.is_string()) out.push_back(id.get<std::string>());
  return out;
}

namespace {

// The id an event brings into being ("" when it creates nothing).
std::string CreatedId(const Event& e) {
  switch (e.type) {
    case EventType::kPerceptArrived: return e.Str("percept_id");
    case EventType::kThreadCreated: return e.Str("thread_id");
    case EventType::kActionEnqueued: return e.Str("action_id");
    default: return "";
  }
}

bool IsDelivery(EventType t) {
  return t == EventType::kActionSent || t == EventType::kActionComplete ||
         t == EventType::kActionFailed || t == EventType::kActionDead ||
         t == EventType::kActionApproved || t == EventType::kActionRejected ||
         t == EventType::kActionRetried;
}

std::string Quoted(const json& v, size_t max = 60) {
  if (!v.is_string()) return "";
  std::string s = v.get<std::string>();
  if (s.size() > max) s = s.substr(0, max) + "...";
  return " \"" + s + "\"";
}

std::string FieldText(const json& fields, const char* key) {
  auto it = fields.find(key);
  if (it == fields.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// One line about the event, in the terms of the thing it changes.
std::string What(const Event& e) {
  const json& f = e.fields;
  auto id = [&](const char* key) { return FieldText(f, key); };
  switch (e.type) {
    case EventType::kPerceptArrived:
      return id("percept_id") + " from " + id("source") + "/" + id("percept_type") +
             (f.contains("text") ? ":" + Quoted(f["text"]) : "");
    case EventType::kPerceptAssigned: return id("percept_id") + " assigned to " + id("thread_id");
    case EventType::kPerceptProcessed: return id("percept_id") + " processed";
    case EventType::kPerceptDropped: return id("percept_id") + " dropped";
    case EventType::kPerceptRemoved: return id("percept_id") + " removed from the pool";
    case EventType::kThreadCreated:
      return id("thread_id") + Quoted(f.value("goal", json())) +
             (f.contains("from_percept") ? " from " + id("from_percept") : "");
    case EventType::kThreadUpdated: return id("thread_id") + " updated";
    case EventType::kThreadPaused: return id("thread_id") + " paused";
    case EventType::kThreadCompleted:
      return id("thread_id") + " complete" + (f.contains("outcome") ? ":" + Quoted(f["outcome"]) : "");
    case EventType::kThreadDeleted: return id("thread_id") + " deleted";
    case EventType::kActionEnqueued:
      return id("action_id") + " " + id("effector") + "/" + id("action_type") +
             (f.contains("thread_id") ? " for " + id("thread_id") : "") +
             (f.contains("percept_id") ? " on " + id("percept_id") : "") +
             (f.value("require_approval", false) == true ? ", waits for approval" : "");
    case EventType::kActionSent: return id("action_id") + " sent, attempt " + id("attempt");
    case EventType::kActionComplete: {
      // A sandbox's effectors only record what they would send (result {dry_run: true}).
      const auto result = f.find("result");
      const bool dry = result != f.end() && result->is_object() && result->value("dry_run", false) == true;
      return id("action_id") + (dry ? " recorded in dry-run.jsonl (a sandbox: not delivered)" : " delivered");
    }
    case EventType::kActionFailed:
      return id("action_id") + " attempt " + id("attempt") + " failed:" + Quoted(f.value("error", json()), 120) +
             (f.contains("retry_at") ? ", retry at " + id("retry_at") : "");
    case EventType::kActionDead: return id("action_id") + " dead:" + Quoted(f.value("error", json()), 120);
    case EventType::kActionApproved:
      return id("action_id") + " approved";
    case EventType::kActionRejected:
      return id("action_id") + " rejected (never delivered)";
    case EventType::kActionRetried:
      return id("action_id") + " sent again after it was dead";
    case EventType::kReflexFired:
      return "reflex " + id("reflex_id") + (f.contains("percept_id") ? " on " + id("percept_id") : "") +
             " caused seqs " + CompactJson(f.value("caused", json::array()));
    case EventType::kEntryStaged: return "consolidated into the archive (" + id("date") + ")";
    case EventType::kPrimaryPromoted:
      return "became the primary of agent " + id("agent") + " on stream " + id("stream") + " at stream seq " +
             id("stream_seq");
    case EventType::kMindWoken:
      return "mind " + id("mind") + " woken as " + id("session") + " (" + id("trigger") + ")";
    case EventType::kMindStep: {
      std::string calls;
      for (const json& c : f.value("tool_calls", json::array()))
        if (c.is_object())
          calls += (calls.empty() ? "" : ", ") + c.value("name", std::string("?")) +
                   (c.value("ok", false) ? "" : " (failed)");
      return id("session") + " step " + id("step") + " (" + id("model") + ", " + id("tokens_in") + "+" +
             id("tokens_out") + " tokens)" + (calls.empty() ? "" : ": called " + calls);
    }
    case EventType::kMindSlept:
      return id("session") + " asleep: " + id("outcome") + " after " + id("steps") + " steps" +
             (f.contains("error") ? ":" + Quoted(f["error"], 120) : "");
    default: return std::string(EventTypeName(e.type));
  }
}

// The seqs a mind_step's tool calls wrote.
std::vector<uint64_t> StepCaused(const Event& e) {
  std::vector<uint64_t> out;
  for (const json& c : e.fields.value("tool_calls", json::array()))
    if (c.is_object())
      for (const json& s : c.value("caused", json::array()))
        if (s.is_number_unsigned()) out.push_back(s.get<uint64_t>());
  return out;
}

// The mind's session a request of the mind wrote `e` for: its reason
// names it ("session m-5 step 1 call 0", an exec mind's "session m-5").
std::string SessionOf(const Event& e) {
  if (!e.Str("actor").starts_with("mind:")) return "";
  const std::string reason = e.Str("reason");
  if (!reason.starts_with("session ")) return "";
  return reason.substr(8, reason.find(' ', 8) - 8);
}

// Whether a mind_woken was woken on `id` (a percept or thread).
bool WokenOn(const Event& e, const std::string& id) {
  if (e.Str("thread_id") == id) return true;
  for (const json& p : e.fields.value("percept_ids", json::array()))
    if (p.is_string() && p.get_ref<const std::string&>() == id) return true;
  return false;
}

json Step(const Event& e) {
  json step = {{"seq", e.seq}, {"ts", FormatTime(e.ts)}, {"type", EventTypeName(e.type)}, {"what", What(e)}};
  for (const char* key : {"actor", "reason"})
    if (auto it = e.fields.find(key); it != e.fields.end() && it->is_string()) step[key] = *it;
  json event = EventToJson(e);
  event.erase("entry");  // an archive entry's text can be long; `limbic events` shows it
  step["event"] = std::move(event);
  return step;
}

// Reads every event of the log in order.
template <typename Fn>
Status ScanLog(const std::string& events_dir, Fn&& fn) {
  auto reader = LogReader::Open(events_dir, {});
  if (!reader.ok()) return reader.status();
  Event e;
  for (;;) {
    auto more = (*reader)->Next(&e);
    if (!more.ok()) return more.status();
    if (!*more) return Status::OK();
    fn(e);
  }
}

}  // namespace

Result<json> Why(const std::string& events_dir, const std::string& id) {
  if (id.empty() || id.size() > 256 || id.find_first_of(" \t\r\n/") != std::string::npos)
    return Status::InvalidArgument("\"" + id + "\" is not a percept, thread or action id");
  std::map<uint64_t, json> chain;  // seq -> step
  bool truncated = false;
  std::string kind;
  std::set<uint64_t> made;    // seqs of events that created the thing or what it made
  std::set<uint64_t> caused;  // seqs a reflex firing on it caused
  std::set<std::string> near;  // what it is tied to, one step out
  auto keep = [&](const Event& e) {
    if (chain.size() < kMaxWhySteps) chain.emplace(e.seq, Step(e));
    else
      truncated = true;
  };
  // What a wake was woken on is tied to the thing too.
  auto woken_on = [&](const Event& e) {
    if (std::string t = e.Str("thread_id"); !t.empty() && t != id) near.insert(t);
    for (const json& p : e.fields.value("percept_ids", json::array()))
      if (p.is_string() && p.get<std::string>() != id) near.insert(p.get<std::string>());
  };
  // The mind's sessions tied to it, found as the log goes (nothing of the
  // mind is kept aside: a long-lived agent has many sessions): a session
  // woken on it is taken whole, its steps' writes followed in pass 2; a
  // step whose tool call made it is taken (its calls' events come before
  // it, so `made` has them by then), and its session's wake below.
  std::set<std::string> whole, woke;
  // 1. Everything that names it.
  LIMBIC_RETURN_IF_ERROR(ScanLog(events_dir, [&](const Event& e) {
    if (e.type == EventType::kMindWoken) {
      if (e.Str("session") == id) kind = "session";  // why of a session itself
      if (WokenOn(e, id) || e.Str("session") == id) {
        whole.insert(e.Str("session"));
        keep(e);
        woken_on(e);
      }
      return;
    }
    if (e.type == EventType::kMindStep || e.type == EventType::kMindSlept) {
      const std::string session = e.Str("session");
      const bool all = whole.count(session) > 0;
      bool making = false;
      if (e.type == EventType::kMindStep)
        for (uint64_t c : StepCaused(e)) {
          making = making || made.count(c) > 0;
          if (all) caused.insert(c);
        }
      if (all || making) keep(e);
      if (making && !all) woke.insert(session);
      return;
    }
    // What the mind's requests wrote names its session in its reason
    // ("session m-5 step 1 call 0"; an exec mind's "session m-5"): the link
    // for what a step's record does not list.
    std::vector<std::string> ids = EventIds(e);
    if (std::find(ids.begin(), ids.end(), id) == ids.end() && SessionOf(e) != id) return;
    keep(e);
    if (std::string session = SessionOf(e); !session.empty() && session != id && !whole.count(session))
      woke.insert(session);
    const std::string created = CreatedId(e);
    if (created == id) {
      made.insert(e.seq);
      kind = e.type == EventType::kPerceptArrived ? "percept"
             : e.type == EventType::kThreadCreated ? "thread"
                                                   : "action";
    } else if (!created.empty()) {
      made.insert(e.seq);  // a thread from it, an action for it
    }
    if (e.type == EventType::kReflexFired)
      for (const json& s : e.fields.value("caused", json::array()))
        if (s.is_number_unsigned()) caused.insert(s.get<uint64_t>());
    for (std::string& other : ids)
      if (other != id && e.type != EventType::kEntryStaged) near.insert(std::move(other));
  }));
  // The wakes of the sessions whose steps made it, with what they were
  // woken on: they came before those steps, so a pass of their own (only
  // for what the mind made).
  if (!woke.empty())
    LIMBIC_RETURN_IF_ERROR(ScanLog(events_dir, [&](const Event& e) {
      if (e.type != EventType::kMindWoken || !woke.count(e.Str("session"))) return;
      keep(e);
      woken_on(e);
    }));
  if (chain.empty()) return Status::NotFound("no event of the log names " + id);
  // 2. What the first pass led to: what a firing on it caused, the firing
  // that caused it, and the creation (and deliveries) of what it is tied to.
  LIMBIC_RETURN_IF_ERROR(ScanLog(events_dir, [&](const Event& e) {
    if (chain.count(e.seq)) return;
    bool take = caused.count(e.seq) > 0;
    if (e.type == EventType::kReflexFired) {
      const json list = e.fields.value("caused", json::array());
      for (const json& s : list)
        take = take || (s.is_number_unsigned() && made.count(s.get<uint64_t>()));
      if (take)  // the rest of what that firing wrote follows in the log
        for (const json& s : list)
          if (s.is_number_unsigned()) caused.insert(s.get<uint64_t>());
    }
    const std::string created = CreatedId(e);
    if (!created.empty() && (near.count(created) || caused.count(e.seq))) {
      take = true;
      near.insert(created);  // its deliveries follow later in the log
    }
    if (IsDelivery(e.type) && near.count(e.Str("action_id"))) take = true;
    if (take && chain.size() >= kMaxWhySteps)
      truncated = true;
    else if (take)
      chain.emplace(e.seq, Step(e));
  }));
  // Log order, except that a mind step comes before what its tool calls
  // wrote: it is recorded once they have run, but it is their cause.
  std::vector<std::pair<double, json>> ordered;
  for (auto& [seq, step] : chain) {
    double key = static_cast<double>(seq);
    if (step["type"] == "mind_step")
      for (const json& c : step["event"].value("tool_calls", json::array()))
        if (c.is_object())
          for (const json& w : c.value("caused", json::array()))
            if (w.is_number_unsigned() && chain.count(w.get<uint64_t>()))
              key = std::min(key, static_cast<double>(w.get<uint64_t>()) - 0.5);
    ordered.emplace_back(key, std::move(step));
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  json steps = json::array();
  for (auto& [key, step] : ordered) steps.push_back(std::move(step));
  return json{{"id", id},
              {"kind", kind.empty() ? json(nullptr) : json(kind)},
              {"chain", std::move(steps)},
              {"truncated", truncated}};
}

std::string WhyText(const json& why) {
  std::string out = why["id"].get<std::string>() + "  " +
                    (why["kind"].is_string() ? why["kind"].get<std::string>()
                                             : "(no creation event in the log)") +
                    "\n";
  for (const json& s : why["chain"]) {
    std::string line = "  seq " + std::to_string(s["seq"].get<uint64_t>());
    line.resize(std::max<size_t>(line.size(), 13), ' ');
    line += s["ts"].get<std::string>() + "  " + s["type"].get<std::string>();
    line.resize(std::max<size_t>(line.size() + 2, 59), ' ');
    line += s["what"].get<std::string>();
    if (s.contains("actor")) line += "  [by " + s["actor"].get<std::string>() + "]";
    if (s.contains("reason")) line += "  (" + s["reason"].get<std::string>() + ")";
    out += line + "\n";
  }
  if (why["truncated"].get<bool>()) out += "  ... (truncated)\n";
  return out;
}

}  // namespace limbic::state
