// The JSON-files baseline, events in: Apply() checks one event against
// memory and changes memory (the live store and replay share it), and
// ReplayJsonStore() rebuilds a dir from a log.
#include <algorithm>
#include <filesystem>
#include <iterator>

#include "bench/baselines/json_store_impl.h"
#include "base/time.h"

namespace limbic::bench {
namespace {

bool IsThreadStatus(const json& v) {
  return v == "active" || v == "paused" || v == "frozen" || v == "complete";
}

}  // namespace

Result<std::string> NeedString(const json& e, const char* key) {
  auto it = e.find(key);
  if (it == e.end() || !it->is_string() || it->get_ref<const std::string&>().empty())
    return Status::InvalidArgument(std::string(key) + " must be a non-empty string");
  return it->get<std::string>();
}

Result<double> NeedUnit(const json& e, const char* key) {
  auto it = e.find(key);
  double v = it != e.end() && it->is_number() ? it->get<double>() : -1;
  if (!(v >= 0 && v <= 1)) return Status::InvalidArgument(std::string(key) + " must be in [0, 1]");
  return v;
}

// ---- Apply: memory only.

Status JsonStore::Apply(const json& e, Changes* c) {
  auto type = NeedString(e, "type");
  if (!type.ok()) return type.status();
  auto ts = NeedString(e, "ts");
  if (!ts.ok()) return ts.status();
  const std::string& t = *type;
  if (t == "percept_arrived") return PerceptArrived(e, *ts, c);
  if (t == "percept_assigned") return PerceptAssigned(e, *ts, c);
  if (t == "percept_processed") return PerceptProcessed(e, *ts, c);
  if (t == "thread_created") return ThreadCreated(e, *ts, c);
  if (t == "thread_updated") return ThreadUpdated(e, *ts, c);
  if (t == "action_enqueued") return ActionEnqueued(e, *ts, c);
  if (t == "action_sent" || t == "action_complete") return ActionChanged(e, *ts, c);
  if (t == "arousal_set") {
    auto level = NeedUnit(e, "level");
    if (!level.ok()) return level.status();
    arousal_["level"] = *level;
    arousal_["updated_at"] = *ts;
    c->arousal = true;
    return Status::OK();
  }
  return Status::InvalidArgument("event type " + t + " is not handled");
}

Status JsonStore::PerceptArrived(const json& e, const std::string& ts, Changes* c) {
  auto id = NeedString(e, "percept_id");
  auto source = NeedString(e, "source");
  auto type = NeedString(e, "percept_type");
  auto intensity = NeedUnit(e, "intensity");
  for (const Status& s : {id.status(), source.status(), type.status(), intensity.status()})
    LIMBIC_RETURN_IF_ERROR(s);
  if (percept_at_.count(*id)) return Status::AlreadyExists("percept " + *id + " exists");
  json text = e.contains("text") ? e["text"] : json("");
  json data = e.contains("data") && !e["data"].is_null() ? e["data"] : json::object();
  if (!text.is_string() || !data.is_object())
    return Status::InvalidArgument("percept " + *id + ": text must be a string, data an object");
  percept_at_[*id] = percepts().size();
  percepts().push_back({{"id", *id},
                        {"source", *source},
                        {"type", *type},
                        {"intensity", *intensity},
                        {"ts", ts},
                        {"thread_id", nullptr},
                        {"status", "new"},
                        {"text", std::move(text)},
                        {"data", std::move(data)}});
  NoteId(*id);
  c->percepts = true;
  return Status::OK();
}

Status JsonStore::PerceptAssigned(const json& e, const std::string& ts, Changes* c) {
  auto id = NeedString(e, "percept_id");
  auto thread_id = NeedString(e, "thread_id");
  for (const Status& s : {id.status(), thread_id.status()}) LIMBIC_RETURN_IF_ERROR(s);
  json* p = FindPercept(*id);
  if (!p) return Status::NotFound("percept " + *id + " not found");
  if ((*p)["status"] != "new" && (*p)["status"] != "assigned")
    return Status::FailedPrecondition("percept " + *id + " is " + StrOf(*p, "status"));
  json* t = FindThread(*thread_id);
  if (!t) return Status::NotFound("thread " + *thread_id + " not found");
  if ((*t)["status"] == "complete")
    return Status::FailedPrecondition("thread " + *thread_id + " is complete");
  const json& old = (*p)["thread_id"];
  if (old.is_string() && old != *thread_id) {  // moving it: the earlier thread forgets it
    if (json* prev = FindThread(old.get<std::string>())) {
      json& list = (*prev)["percepts"];
      list.erase(std::remove(list.begin(), list.end(), json(*id)), list.end());
    }
  }
  json& list = (*t)["percepts"];
  if (std::find(list.begin(), list.end(), json(*id)) == list.end()) list.push_back(*id);
  (*t)["last_active"] = ts;
  (*p)["thread_id"] = *thread_id;
  (*p)["status"] = "assigned";
  c->percepts = c->threads = true;
  return Status::OK();
}

Status JsonStore::PerceptProcessed(const json& e, const std::string& ts, Changes* c) {
  auto id = NeedString(e, "percept_id");
  if (!id.ok()) return id.status();
  json* p = FindPercept(*id);
  if (!p) return Status::NotFound("percept " + *id + " not found");
  if ((*p)["status"] != "new" && (*p)["status"] != "assigned")
    return Status::FailedPrecondition("percept " + *id + " is " + StrOf(*p, "status"));
  (*p)["status"] = "processed";
  c->percepts = true;
  if ((*p)["thread_id"].is_string()) {
    if (json* t = FindThread(StrOf(*p, "thread_id"))) {
      (*t)["last_active"] = ts;
      c->threads = true;
    }
  }
  return Status::OK();
}

Status JsonStore::ThreadCreated(const json& e, const std::string& ts, Changes* c) {
  auto id = NeedString(e, "thread_id");
  auto salience = NeedUnit(e, "salience");
  for (const Status& s : {id.status(), salience.status()}) LIMBIC_RETURN_IF_ERROR(s);
  if (thread_at_.count(*id)) return Status::AlreadyExists("thread " + *id + " exists");
  if (!e.contains("goal") || !e["goal"].is_string())
    return Status::InvalidArgument("thread " + *id + ": goal must be a string");
  json status = e.contains("status") ? e["status"] : json("active");
  if (!IsThreadStatus(status))
    return Status::InvalidArgument("thread " + *id +
                                   ": status must be active|paused|frozen|complete");
  json state = {{"phase", nullptr}, {"context", json::object()}, {"next_step", nullptr}};
  if (e.contains("state")) {
    if (!e["state"].is_object())
      return Status::InvalidArgument("thread " + *id + ": state must be an object");
    state.merge_patch(e["state"]);
  }
  thread_at_[*id] = threads().size();
  threads().push_back({{"id", *id},
                       {"goal", e["goal"]},
                       {"status", std::move(status)},
                       {"salience", *salience},
                       {"percepts", json::array()},
                       {"state", std::move(state)},
                       {"created_at", ts},
                       {"last_active", ts}});
  NoteId(*id);
  c->threads = true;
  return Status::OK();
}

Status JsonStore::ThreadUpdated(const json& e, const std::string& ts, Changes* c) {
  auto id = NeedString(e, "thread_id");
  if (!id.ok()) return id.status();
  json* t = FindThread(*id);
  if (!t) return Status::NotFound("thread " + *id + " not found");
  if ((*t)["status"] == "complete")
    return Status::FailedPrecondition("thread " + *id + " is complete");
  const bool has_status = e.contains("status"), has_salience = e.contains("salience"),
             has_state = e.contains("state");
  if (!has_status && !has_salience && !has_state)
    return Status::InvalidArgument("thread " + *id + ": nothing to update");
  if (has_status && !IsThreadStatus(e["status"]))
    return Status::InvalidArgument("thread " + *id +
                                   ": status must be active|paused|frozen|complete");
  if (has_state && !e["state"].is_object())
    return Status::InvalidArgument("thread " + *id + ": state must be an object");
  auto salience =
      has_salience ? NeedUnit(e, "salience") : Result<double>((*t)["salience"].get<double>());
  if (!salience.ok()) return salience.status();
  if (has_status) (*t)["status"] = e["status"];
  (*t)["salience"] = *salience;
  if (has_state) (*t)["state"].merge_patch(e["state"]);
  (*t)["last_active"] = ts;
  c->threads = true;
  return Status::OK();
}

Status JsonStore::ActionEnqueued(const json& e, const std::string& ts, Changes* c) {
  auto id = NeedString(e, "action_id");
  auto effector = NeedString(e, "effector");
  auto type = NeedString(e, "action_type");
  for (const Status& s : {id.status(), effector.status(), type.status()}) LIMBIC_RETURN_IF_ERROR(s);
  if (action_at_.count(*id)) return Status::AlreadyExists("action " + *id + " exists");
  json thread_id = e.contains("thread_id") ? e["thread_id"] : json();
  if (!thread_id.is_null() && (!thread_id.is_string() || !FindThread(thread_id.get<std::string>())))
    return Status::NotFound("action " + *id + ": thread " + thread_id.dump() + " not found");
  action_at_[*id] = actions_.size();
  actions_.push_back({{"id", *id},
                      {"effector", *effector},
                      {"type", *type},
                      {"payload", e.contains("payload") ? e["payload"] : json()},
                      {"status", "pending"},
                      {"attempts", 0},
                      {"thread_id", std::move(thread_id)},
                      {"ts", ts},
                      {"updated_at", ts}});
  NoteId(*id);
  c->actions.emplace_back(*id, true);
  return Status::OK();
}

// action_sent (pending|failed|inflight -> inflight) and action_complete
// (inflight -> complete).
Status JsonStore::ActionChanged(const json& e, const std::string& ts, Changes* c) {
  auto id = NeedString(e, "action_id");
  if (!id.ok()) return id.status();
  json* a = FindAction(*id);
  if (!a) return Status::NotFound("action " + *id + " not found");
  const bool sent = e["type"] == "action_sent";
  const json& status = (*a)["status"];
  bool allowed = sent ? status == "pending" || status == "failed" || status == "inflight"
                      : status == "inflight";
  if (!allowed)
    return Status::FailedPrecondition("action " + *id + " is " + status.get<std::string>());
  if (e.contains("attempt") && e["attempt"].is_number_integer()) {
    (*a)["attempts"] = e["attempt"];
  } else if (sent) {
    (*a)["attempts"] = (*a).value("attempts", 0) + 1;
  }
  (*a)["status"] = sent ? "inflight" : "complete";
  (*a)["updated_at"] = ts;
  c->actions.emplace_back(*id, false);
  return Status::OK();
}

// ---- Replay.

Result<uint64_t> ReplayJsonStore(const std::string& log_file, const JsonStoreOptions& options,
                                 uint64_t* skipped) {
  std::error_code ec;
  if (std::filesystem::exists(options.dir, ec) && !std::filesystem::is_empty(options.dir, ec))
    return Status::FailedPrecondition(options.dir + " is not empty");
  auto text = ReadFile(log_file);
  if (!text.ok()) return text.status();
  if (!text->has_value()) return Status::NotFound(log_file + " does not exist");
  JsonStore store(options);
  LIMBIC_RETURN_IF_ERROR(store.Open());

  static constexpr std::string_view kHandled[] = {
      "percept_arrived", "percept_assigned", "percept_processed",
      "thread_created",  "thread_updated",   "arousal_set",
      "action_enqueued", "action_sent",      "action_complete"};
  uint64_t applied = 0, skip = 0;
  std::string_view rest = **text;
  size_t whole = rest.size();  // bytes of complete lines, copied to events.jsonl
  for (size_t line_no = 1; !rest.empty(); ++line_no) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = log_file + " line " + std::to_string(line_no);
    json e = json::parse(line, nullptr, false);
    if (e.is_discarded() || !e.is_object()) {
      if (nl == std::string_view::npos) {  // a torn final line
        whole -= line.size();
        break;
      }
      return Status::Corruption(where + ": not a JSON object");
    }
    auto type = NeedString(e, "type");
    auto ts = NeedString(e, "ts");
    if (!type.ok() || !ts.ok())
      return Status::Corruption(where + ": " + (type.ok() ? ts : type).status().message());
    if (std::find(std::begin(kHandled), std::end(kHandled), *type) == std::end(kHandled)) {
      ++skip;
      continue;
    }
    auto t = ParseTime(*ts);  // normalised, so that text order is time order
    if (!t.ok()) return Status::Corruption(where + ": " + t.status().message());
    e["ts"] = FormatTime(*t);
    JsonStore::Changes changes;  // unused: every file is written at the end
    Status s = store.Apply(e, &changes);
    if (!s.ok()) return Status::Corruption(where + " (" + *type + "): " + s.message());
    ++applied;
  }
  std::string_view events = std::string_view(**text).substr(0, whole);
  if (!events.empty() && events.back() != '\n') {  // a whole last line without its '\n'
    (*text)->push_back('\n');
    events = **text;
  }
  LIMBIC_RETURN_IF_ERROR(store.PersistAll(events));
  if (skipped) *skipped = skip;
  return applied;
}

}  // namespace limbic::bench
