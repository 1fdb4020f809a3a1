// The JSON-files baseline: open (the design's recovery), the write path,
// writes and reads. json_store.h has the design and the file grammar;
// json_apply.cc applies events to memory and replays logs.
#include <fcntl.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <functional>
#include <optional>

#include "bench/baselines/json_store_impl.h"
#include "base/time.h"

namespace limbic::bench {
namespace {

bool Full(const std::vector<json>& out, size_t limit) { return limit != 0 && out.size() >= limit; }

}  // namespace

json DefaultArousal() {
  return {{"level", 0.5},
          {"factors", {{"user_waiting", false}, {"recent_errors", 0}, {"budget_pressure", false}}},
          {"updated_at", nullptr}};
}

uint64_t IdNumber(std::string_view id) {
  size_t dash = id.rfind('-');
  if (dash == std::string_view::npos) return 0;
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(id.data() + dash + 1, id.data() + id.size(), n);
  return ec == std::errc() && end == id.data() + id.size() ? n : 0;
}

// ---- Open: the JSON design's recovery.

Status JsonStore::Open() {
  std::error_code ec;
  std::filesystem::create_directories(options_.dir, ec);
  if (ec) return Status::IOError(options_.dir + ": create: " + ec.message());
  LIMBIC_RETURN_IF_ERROR(OpenFd(options_.dir, O_RDONLY | O_DIRECTORY, &dir_fd_));
  LIMBIC_RETURN_IF_ERROR(OpenFd(PathOf(kEventsFile), O_RDWR | O_CREAT | O_APPEND, &events_fd_));
  LIMBIC_RETURN_IF_ERROR(TrimTornTail(events_fd_.get(), PathOf(kEventsFile)));
  LIMBIC_RETURN_IF_ERROR(OpenFd(PathOf(kOutboxFile), O_RDWR | O_CREAT | O_APPEND, &outbox_fd_));
  LIMBIC_RETURN_IF_ERROR(TrimTornTail(outbox_fd_.get(), PathOf(kOutboxFile)));
  LIMBIC_RETURN_IF_ERROR(LoadPool(kPerceptsFile, "percepts", &percepts_doc_, &percept_at_));
  LIMBIC_RETURN_IF_ERROR(LoadPool(kThreadsFile, "threads", &threads_doc_, &thread_at_));
  LIMBIC_RETURN_IF_ERROR(LoadArousal());
  return LoadOutbox();
}

Status JsonStore::LoadPool(const char* file, const char* key, json* doc,
                           std::unordered_map<std::string, size_t>* at) {
  auto text = ReadFile(PathOf(file));
  if (!text.ok()) return text.status();
  if (!text->has_value()) return Status::OK();  // a new store
  json parsed = json::parse(**text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains(key) ||
      !parsed[key].is_array())
    return Status::Corruption(PathOf(file) + ": not {\"" + key + "\":[...]}");
  // The fields the reads rely on, so they need not check again.
  const bool is_percepts = std::string_view(key) == "percepts";
  json& pool = parsed[key];
  for (size_t i = 0; i < pool.size(); ++i) {
    const json& r = pool[i];
    bool ok = r.is_object() && r.contains("id") && r["id"].is_string() && r.contains("status") &&
              r["status"].is_string();
    if (ok && is_percepts)
      ok = r.contains("source") && r["source"].is_string() && r.contains("ts") &&
           r["ts"].is_string();
    if (ok && !is_percepts)
      ok = r.contains("salience") && r["salience"].is_number() && r.contains("last_active") &&
           r["last_active"].is_string() && r.contains("percepts") && r["percepts"].is_array() &&
           std::all_of(r["percepts"].begin(), r["percepts"].end(),
                       [](const json& id) { return id.is_string(); });
    if (!ok)
      return Status::Corruption(PathOf(file) + ": record " + std::to_string(i) + " is malformed");
    (*at)[StrOf(r, "id")] = i;
    NoteId(StrOf(r, "id"));
  }
  *doc = std::move(parsed);
  return Status::OK();
}

Status JsonStore::LoadArousal() {
  auto text = ReadFile(PathOf(kArousalFile));
  if (!text.ok()) return text.status();
  if (!text->has_value()) return Status::OK();
  json parsed = json::parse(**text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("level") ||
      !parsed["level"].is_number() || !parsed.contains("factors") || !parsed["factors"].is_object())
    return Status::Corruption(PathOf(kArousalFile) + ": not {\"level\":L,\"factors\":{...}}");
  arousal_ = std::move(parsed);
  return Status::OK();
}

Status JsonStore::LoadOutbox() {
  auto text = ReadFile(PathOf(kOutboxFile));
  if (!text.ok()) return text.status();
  if (!text->has_value()) return Status::OK();
  std::string_view rest = **text;
  for (size_t line_no = 1; !rest.empty(); ++line_no) {
    size_t nl = rest.find('\n');  // the tail was trimmed: every line ends in '\n'
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("id") || !j["id"].is_string())
      return Status::Corruption(PathOf(kOutboxFile) + " line " + std::to_string(line_no) +
                                ": not an action object with an id");
    if (json* a = FindAction(StrOf(j, "id"))) {
      a->update(j);  // a change: its keys win
    } else {
      action_at_[StrOf(j, "id")] = actions_.size();
      NoteId(StrOf(j, "id"));
      actions_.push_back(std::move(j));
    }
  }
  for (const json& a : actions_)
    if (!a.contains("status") || !a["status"].is_string())
      return Status::Corruption(PathOf(kOutboxFile) + ": action " + StrOf(a, "id") +
                                " has no status");
  return Status::OK();
}

// ---- The write path.

Status JsonStore::Commit(const std::vector<json>& events, const Ack& ack) {
  std::string lines;
  for (const json& e : events) {
    auto line = DumpLine(e);  // before Apply: text that cannot be written changes nothing
    if (!line.ok()) return line.status();
    lines += *line;
  }
  Changes changes;
  for (const json& e : events) LIMBIC_RETURN_IF_ERROR(Apply(e, &changes));
  LIMBIC_RETURN_IF_ERROR(Persist(lines, OutboxLines(changes), changes));
  if (ack) ack();
  return Status::OK();
}

// One line per action, at its last change: the whole record when the action
// was created by these changes, else {id, status, attempts, updated_at}.
std::string JsonStore::OutboxLines(const Changes& c) {
  std::unordered_map<std::string_view, std::pair<size_t, bool>> last;  // id -> last change, created
  for (size_t i = 0; i < c.actions.size(); ++i) {
    auto& [at, created] = last[c.actions[i].first];
    at = i;
    created = created || c.actions[i].second;
  }
  std::string out;
  for (size_t i = 0; i < c.actions.size(); ++i) {
    const std::string& id = c.actions[i].first;
    const auto& [at, created] = last[id];
    if (at != i) continue;
    const json& a = *FindAction(id);
    out += DumpCompact(created ? a
                               : json{{"id", id},
                                      {"status", a["status"]},
                                      {"attempts", a["attempts"]},
                                      {"updated_at", a["updated_at"]}});
    out += '\n';
  }
  return out;
}

Status JsonStore::Persist(std::string_view events, std::string_view outbox, const Changes& c) {
  const bool sync = options_.fsync;
  LIMBIC_RETURN_IF_ERROR(AppendFile(events_fd_.get(), events, PathOf(kEventsFile), sync));
  if (!outbox.empty())
    LIMBIC_RETURN_IF_ERROR(AppendFile(outbox_fd_.get(), outbox, PathOf(kOutboxFile), sync));
  // Each changed document: a synced temp file, then all renames, then one
  // directory sync that makes the renames durable.
  std::vector<std::pair<const char*, const json*>> docs;
  if (c.percepts) docs.emplace_back(kPerceptsFile, &percepts_doc_);
  if (c.threads) docs.emplace_back(kThreadsFile, &threads_doc_);
  if (c.arousal) docs.emplace_back(kArousalFile, &arousal_);
  for (const auto& [file, doc] : docs)
    LIMBIC_RETURN_IF_ERROR(WriteWholeFile(PathOf(file) + ".tmp", DumpCompact(*doc), sync));
  for (const auto& [file, doc] : docs)
    LIMBIC_RETURN_IF_ERROR(RenameFile(PathOf(file) + ".tmp", PathOf(file)));
  if (sync && !docs.empty()) LIMBIC_RETURN_IF_ERROR(SyncFd(dir_fd_.get(), options_.dir));
  return Status::OK();
}

Status JsonStore::PersistAll(std::string_view events) {
  Changes all{true, true, true, {}};
  for (const json& a : actions_) all.actions.emplace_back(StrOf(a, "id"), true);
  return Persist(events, OutboxLines(all), all);
}

// ---- Writes.

Result<PreloadIds> JsonStore::Preload(const bench::Preload& p) {
  const size_t n = p.percepts.size();
  if ((!p.assign.empty() && p.assign.size() != n) ||
      (!p.processed.empty() && p.processed.size() != n))
    return Status::InvalidArgument("preload: assign/processed must be empty or one per percept");
  for (int t : p.assign)
    if (t >= static_cast<int>(p.threads))
      return Status::InvalidArgument("preload: thread index " + std::to_string(t) +
                                     " out of range");
  const std::string ts = FormatTime(Now());
  PreloadIds ids;
  std::vector<json> events;
  auto event = [&](const char* type, json fields) {
    fields["ts"] = ts;
    fields["type"] = type;
    events.push_back(std::move(fields));
  };
  for (size_t i = 0; i < p.threads; ++i) {
    ids.threads.push_back(NextId("t-"));
    event("thread_created", {{"thread_id", ids.threads.back()},
                             {"goal", "preloaded thread " + std::to_string(i)},
                             {"salience", 0.5}});
  }
  for (size_t i = 0; i < n; ++i) {
    const PerceptIn& in = p.percepts[i];
    ids.percepts.push_back(NextId("p-"));
    const std::string& id = ids.percepts.back();
    event("percept_arrived", {{"percept_id", id},
                              {"source", in.source},
                              {"percept_type", in.type},
                              {"intensity", in.intensity},
                              {"text", in.text},
                              {"data", in.data}});
    if (p.assign.empty() || p.assign[i] < 0) continue;
    event("percept_assigned", {{"percept_id", id}, {"thread_id", ids.threads[p.assign[i]]}});
    if (!p.processed.empty() && p.processed[i]) event("percept_processed", {{"percept_id", id}});
  }
  for (size_t i = 0; i < p.actions; ++i) {
    ids.actions.push_back(NextId("a-"));
    json fields = {{"action_id", ids.actions.back()},
                   {"effector", "chat"},
                   {"action_type", "send_message"},
                   {"payload", {{"text", "preloaded action " + std::to_string(i)}}}};
    if (p.threads > 0) fields["thread_id"] = ids.threads[i % p.threads];
    event("action_enqueued", std::move(fields));
    if (i % 2 == 1) {  // half of them delivered
      event("action_sent", {{"action_id", ids.actions.back()}, {"attempt", 1}});
      event("action_complete", {{"action_id", ids.actions.back()}, {"attempt", 1}});
    }
  }
  std::string lines;
  for (const json& e : events) {
    auto line = DumpLine(e);
    if (!line.ok()) return line.status();
    lines += *line;
  }
  Changes changes;
  for (const json& e : events) LIMBIC_RETURN_IF_ERROR(Apply(e, &changes));
  changes.percepts = changes.threads = changes.arousal = true;  // every file, once
  LIMBIC_RETURN_IF_ERROR(Persist(lines, OutboxLines(changes), changes));
  return ids;
}

Result<std::string> JsonStore::AddPercept(const PerceptIn& p, Ack ack) {
  std::string id = NextId("p-");
  LIMBIC_RETURN_IF_ERROR(Commit({{{"ts", FormatTime(Now())},
                                  {"type", "percept_arrived"},
                                  {"percept_id", id},
                                  {"source", p.source},
                                  {"percept_type", p.type},
                                  {"intensity", p.intensity},
                                  {"text", p.text},
                                  {"data", p.data.is_null() ? json::object() : p.data}}},
                                ack));
  return id;
}

Status JsonStore::AssignPercept(const std::string& percept, const std::string& thread, Ack ack) {
  return Commit({{{"ts", FormatTime(Now())},
                  {"type", "percept_assigned"},
                  {"percept_id", percept},
                  {"thread_id", thread}}},
                ack);
}

Status JsonStore::ProcessPercept(const std::string& percept, Ack ack) {
  return Commit(
      {{{"ts", FormatTime(Now())}, {"type", "percept_processed"}, {"percept_id", percept}}}, ack);
}

Result<std::string> JsonStore::CreateThread(const std::string& goal, double salience, Ack ack) {
  std::string id = NextId("t-");
  LIMBIC_RETURN_IF_ERROR(Commit({{{"ts", FormatTime(Now())},
                                  {"type", "thread_created"},
                                  {"thread_id", id},
                                  {"goal", goal},
                                  {"salience", salience}}},
                                ack));
  return id;
}

Status JsonStore::UpdateThreadState(const std::string& thread, const json& patch, Ack ack) {
  if (!patch.is_object())
    return Status::InvalidArgument("thread " + thread + ": a state patch must be an object");
  return Commit({{{"ts", FormatTime(Now())},
                  {"type", "thread_updated"},
                  {"thread_id", thread},
                  {"state", patch}}},
                ack);
}

Result<std::string> JsonStore::EnqueueAction(const std::string& effector, const std::string& type,
                                             const json& payload, const std::string& thread,
                                             Ack ack) {
  std::string id = NextId("a-");
  json e = {{"ts", FormatTime(Now())}, {"type", "action_enqueued"}, {"action_id", id},
            {"effector", effector},    {"action_type", type},       {"payload", payload}};
  if (!thread.empty()) e["thread_id"] = thread;
  LIMBIC_RETURN_IF_ERROR(Commit({std::move(e)}, ack));
  return id;
}

Status JsonStore::CompleteAction(const std::string& action, Ack ack) {
  // Checked here so that the two events apply whole or not at all.
  json* a = FindAction(action);
  if (!a) return Status::NotFound("action " + action + " not found");
  if ((*a)["status"] != "pending")
    return Status::FailedPrecondition("action " + action + " is " + StrOf(*a, "status") +
                                      ", not pending");
  const std::string ts = FormatTime(Now());
  return Commit({{{"ts", ts}, {"type", "action_sent"}, {"action_id", action}, {"attempt", 1}},
                 {{"ts", ts}, {"type", "action_complete"}, {"action_id", action}, {"attempt", 1}}},
                ack);
}

// ---- Reads: scans of memory; each record found is copied out whole.

Result<std::vector<json>> JsonStore::UnassignedBySource(const std::string& source, size_t limit) {
  std::vector<json> out;
  const json& all = percepts();
  for (auto it = all.rbegin(); it != all.rend() && !Full(out, limit); ++it)
    if (StrOf(*it, "status") == "new" && StrOf(*it, "source") == source) out.push_back(*it);
  return out;
}

Result<std::vector<json>> JsonStore::PerceptsByThread(const std::string& thread, size_t limit) {
  std::vector<json> out;
  const json* t = FindThread(thread);
  if (!t) return out;
  std::vector<size_t> at;  // positions in arrival order
  for (const json& id : (*t)["percepts"]) {
    auto it = percept_at_.find(id.get<std::string>());
    if (it != percept_at_.end()) at.push_back(it->second);
  }
  std::sort(at.begin(), at.end(), std::greater<>());
  for (size_t i = 0; i < at.size() && !Full(out, limit); ++i) out.push_back(percepts()[at[i]]);
  return out;
}

Result<std::vector<json>> JsonStore::PerceptsBySourceSince(const std::string& source,
                                                           TimeMs max_age, size_t limit) {
  // Every ts is FormatTime's fixed-width UTC form, so text order is time order.
  const std::string cutoff = FormatTime(Now() - max_age);
  std::vector<json> out;
  const json& all = percepts();
  for (auto it = all.rbegin(); it != all.rend() && !Full(out, limit); ++it)
    if (StrOf(*it, "source") == source && StrOf(*it, "ts") >= cutoff) out.push_back(*it);
  return out;
}

// Ranks every active thread, then copies the top `limit` records only.
Result<std::vector<json>> JsonStore::TopActiveThreads(size_t limit) {
  const TimeMs now = Now();
  std::vector<std::pair<double, size_t>> ranked;  // effective salience, position
  const json& all = threads();
  for (size_t i = 0; i < all.size(); ++i) {
    const json& t = all[i];
    if (StrOf(t, "status") != "active") continue;
    size_t unprocessed = 0;
    for (const json& id : t["percepts"]) {
      const json* p = FindPercept(id.get<std::string>());
      if (p && StrOf(*p, "status") == "assigned") ++unprocessed;
    }
    auto last_active = ParseTime(StrOf(t, "last_active"));
    TimeMs idle = last_active.ok() ? now - *last_active : 0;
    ranked.emplace_back(
        state::EffectiveSalience(t["salience"].get<double>(), idle, unprocessed, recency_), i);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<json> out;
  for (size_t i = 0; i < ranked.size() && !Full(out, limit); ++i) {
    out.push_back(all[ranked[i].second]);
    out.back()["effective_salience"] = ranked[i].first;
  }
  return out;
}

// ---- Entry points.

Result<std::unique_ptr<Store>> OpenJsonStore(const JsonStoreOptions& options) {
  auto store = std::make_unique<JsonStore>(options);
  LIMBIC_RETURN_IF_ERROR(store->Open());
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace limbic::bench
