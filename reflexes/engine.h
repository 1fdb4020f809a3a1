// ReflexEngine: matches percepts against rules and plans what a firing does.
//
// Matching cost grows slowly with the number of rules: rules are indexed
// into buckets by (source, type) -- "*" for "any" -- so a percept only
// meets the four buckets that can apply, and the patterns of a bucket are
// compiled into one RE2::Set so one scan of the text finds every candidate.
// Only candidates run their own RE2 (for named captures) and the remaining
// conditions (intensity, data, arousal, cooldown, max fires).
//
// A firing is one batch of events: reflex_fired {reflex_id, percept_id,
// caused: [seqs]} followed by the effects (built with state/commands.h), so
// the runtime submits it atomically and replay never fires anything again.
//
// Thread-safety: one owner thread (the runtime's io thread).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "reflexes/rule.h"
#include "state/event.h"
#include "state/reducer.h"

namespace limbic::reflexes {

struct Match {
  const Rule* rule = nullptr;
  std::map<std::string, std::string> captures;  // named groups, and "0" = whole match
};

class ReflexEngine {
 public:
  ReflexEngine();
  ~ReflexEngine();

  // Adds or replaces a rule.
  Status Put(Rule rule);
  bool Remove(const std::string& id);
  Status SetEnabled(const std::string& id, bool enabled);
  const Rule* Get(const std::string& id) const;
  std::vector<const Rule*> List() const;  // by id
  bool empty() const { return rules_.empty(); }

  // The enabled rules that fire on `percept` (a pool record) now, highest
  // priority first, then by id.
  std::vector<Match> MatchPercept(const json& percept, double effective_arousal, TimeMs now);

  // The events of one firing, seqs from `next_seq` on. `state` is read for
  // escalate (current salience and arousal level).
  Result<std::vector<state::Event>> Plan(const Match& match, const json& percept,
                                         const state::RecordReader& state, uint64_t next_seq) const;

  // Firing history for cooldown and max_fires.
  void RecordFire(const std::string& id, TimeMs ts);
  void RestoreHistory(const std::string& id, TimeMs last_fired_at) { RecordFire(id, last_fired_at); }

 private:
  struct Bucket;
  void Rebuild();
  bool Eligible(const Rule& r, const json& percept, double arousal, TimeMs now) const;

  std::map<std::string, Rule> rules_;
  std::map<std::string, std::deque<TimeMs>> fires_;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<Bucket>> buckets_;
  bool dirty_ = true;
};

}  // namespace limbic::reflexes
