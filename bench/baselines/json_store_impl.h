// Internal to the JSON-files baseline: the store class, shared by
// json_store.cc (open, the write path, reads) and json_apply.cc (events
// applied to memory, replay). Users include json_store.h.
//
// Memory holds the documents exactly as they are written to disk
// (percepts_doc_ is percepts.json, ...), plus id -> position maps. Every
// mutation is an event in docs/events.md's vocabulary: Apply() checks it
// against memory and changes memory (nothing on error); Commit() then
// appends it and rewrites the files it touched.
//
// Thread-safety: one thread drives a JsonStore.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bench/baselines/json_files.h"
#include "bench/baselines/json_store.h"
#include "state/recency.h"

namespace limbic::bench {

inline constexpr char kPerceptsFile[] = "percepts.json";
inline constexpr char kThreadsFile[] = "threads.json";
inline constexpr char kArousalFile[] = "arousal.json";
inline constexpr char kEventsFile[] = "events.jsonl";
inline constexpr char kOutboxFile[] = "outbox.jsonl";

// Event fields; an error names the field (the caller adds the event).
Result<std::string> NeedString(const json& e, const char* key);  // non-empty
Result<double> NeedUnit(const json& e, const char* key);         // in [0, 1]

// The N of "p-N" (0 when the id has another shape).
uint64_t IdNumber(std::string_view id);

// A string field of a record that was checked on load or built by Apply.
inline const std::string& StrOf(const json& rec, const char* key) {
  return rec[key].get_ref<const std::string&>();
}

// {level: 0.5, factors: {user_waiting: false, recent_errors: 0,
// budget_pressure: false}, updated_at: null}
json DefaultArousal();

class JsonStore final : public Store {
 public:
  explicit JsonStore(JsonStoreOptions options) : options_(std::move(options)) {}

  // Creates the dir and the .jsonl files if missing, trims torn appends,
  // loads the pools.
  Status Open();

  // Which pool files (and actions) a set of events changed.
  struct Changes {
    bool percepts = false, threads = false, arousal = false;
    std::vector<std::pair<std::string, bool>> actions;  // id, created
  };
  // Checks `e` against memory and applies it; on error nothing changed.
  Status Apply(const json& e, Changes* c);
  // Replay's single write: `events` to events.jsonl, every pool file, one
  // outbox line per action.
  Status PersistAll(std::string_view events);

  Result<PreloadIds> Preload(const bench::Preload& p) override;
  Result<std::string> AddPercept(const PerceptIn& p, Ack ack) override;
  Status AssignPercept(const std::string& percept, const std::string& thread, Ack ack) override;
  Status ProcessPercept(const std::string& percept, Ack ack) override;
  Result<std::string> CreateThread(const std::string& goal, double salience, Ack ack) override;
  Status UpdateThreadState(const std::string& thread, const json& patch, Ack ack) override;
  Result<std::string> EnqueueAction(const std::string& effector, const std::string& type,
                                    const json& payload, const std::string& thread,
                                    Ack ack) override;
  Status CompleteAction(const std::string& action, Ack ack) override;

  // Reads copy the records out of memory (deep copies of the json values).
  Result<std::vector<json>> UnassignedBySource(const std::string& source, size_t limit) override;
  Result<std::vector<json>> PerceptsByThread(const std::string& thread, size_t limit) override;
  Result<std::vector<json>> PerceptsBySourceSince(const std::string& source, TimeMs max_age,
                                                  size_t limit) override;
  Result<std::vector<json>> TopActiveThreads(size_t limit) override;
  Result<json> Arousal() override {
    return json{{"level", arousal_["level"]}, {"factors", arousal_["factors"]}};
  }

 private:
  std::string PathOf(const char* name) const { return options_.dir + "/" + name; }
  static TimeMs Now() { return SystemClock::Default()->Now(); }
  std::string NextId(const char* prefix) { return prefix + std::to_string(++last_id_); }
  void NoteId(const std::string& id) { last_id_ = std::max(last_id_, IdNumber(id)); }

  json& percepts() { return percepts_doc_["percepts"]; }
  json& threads() { return threads_doc_["threads"]; }
  json* Find(json& pool, const std::unordered_map<std::string, size_t>& at, const std::string& id) {
    auto it = at.find(id);
    return it == at.end() ? nullptr : &pool[it->second];
  }
  json* FindPercept(const std::string& id) { return Find(percepts(), percept_at_, id); }
  json* FindThread(const std::string& id) { return Find(threads(), thread_at_, id); }
  json* FindAction(const std::string& id) { return Find(actions_, action_at_, id); }

  // Loading (Open).
  Status LoadPool(const char* file, const char* key, json* doc,
                  std::unordered_map<std::string, size_t>* at);
  Status LoadArousal();
  Status LoadOutbox();

  // Apply, one per event type.
  Status PerceptArrived(const json& e, const std::string& ts, Changes* c);
  Status PerceptAssigned(const json& e, const std::string& ts, Changes* c);
  Status PerceptProcessed(const json& e, const std::string& ts, Changes* c);
  Status ThreadCreated(const json& e, const std::string& ts, Changes* c);
  Status ThreadUpdated(const json& e, const std::string& ts, Changes* c);
  Status ActionEnqueued(const json& e, const std::string& ts, Changes* c);
  Status ActionChanged(const json& e, const std::string& ts, Changes* c);

  // The write path of every mutation: apply `events` to memory, append them
  // (and the actions' changes to the outbox), rewrite the changed pool files,
  // then ack. On a check error nothing is written.
  Status Commit(const std::vector<json>& events, const Ack& ack);
  Status Persist(std::string_view events, std::string_view outbox, const Changes& c);
  std::string OutboxLines(const Changes& c);

  JsonStoreOptions options_;
  UniqueFd dir_fd_, events_fd_, outbox_fd_;
  const state::RecencyParams recency_;

  json percepts_doc_ = {{"percepts", json::array()}};  // as in percepts.json
  json threads_doc_ = {{"threads", json::array()}};    // as in threads.json
  json arousal_ = DefaultArousal();                    // as in arousal.json
  json actions_ = json::array();                       // outbox.jsonl, folded
  std::unordered_map<std::string, size_t> percept_at_, thread_at_, action_at_;  // id -> index
  uint64_t last_id_ = 0;
};

}  // namespace limbic::bench
