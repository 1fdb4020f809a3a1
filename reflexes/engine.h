// ReflexEngine: matches percepts against rules and plans what a firing does.
//
// Matching cost grows slowly with the number of rules: rules are indexed
// into buckets by (source, type) -- "*" for "any" -- so a percept only
// meets the (at most four) buckets that can apply. A rule is indexed once
// per distinct (source, type) pair; a "*" in either list stands for the whole
// list, so a rule never sits in two buckets one percept meets, and fires at
// most once per percept.
//
// Within a bucket, a pattern is found in one of two ways:
//  - Prefiltered (most patterns): RE2 names the literals ("atoms") a text
//    must contain for the pattern to match (reflexes/prefilter.h). One scan
//    of the text over all the bucket's atoms (Aho-Corasick, built with the
//    bucket) leaves the few rules whose atoms occur; only those are tried.
//  - Unfiltered (a pattern that requires no literal of kMinAtomLen bytes,
//    such as `\d+`): compiled into RE2::Sets of at most kMaxRulesPerSet
//    patterns each, so a scan finds every candidate of up to that many
//    rules. RE2::Set has a memory budget (max_mem, RE2's default 8 MiB) that
//    a large pattern or too many patterns exceed; a set that does not
//    compile is split in halves until the halves do, and a pattern that does
//    not compile even alone in a set is matched with its own RE2. A set
//    whose scan fails at match time (DFA out of memory) has its rules
//    matched one by one for that text.
// Either way the result is exactly that of matching each rule's own RE2:
// the prefilter and the sets only make it cheaper.
//
// Only candidates run the remaining conditions (intensity, data, arousal,
// cooldown, max fires) and then their own regex, which decides and extracts
// the named captures. On texts up to kAnchoredTextMax bytes that regex is
// run as `\C*?(pattern)` anchored at the start, which RE2 answers with a
// backtracker that keeps no cache: a rule's first match costs what its
// later ones do (the plain unanchored search builds a DFA lazily, tens of
// microseconds the first time a rule meets a text).
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
#include <span>
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
  // Patterns per RE2::Set (docs/reflexes.md). A few hundred keeps each set
  // well inside RE2's memory budget while one scan still covers many rules.
  static constexpr size_t kMaxRulesPerSet = 256;
  // Longest text a candidate's regex is run on anchored (see above); longer
  // texts use the rule's own regex unanchored.
  static constexpr size_t kAnchoredTextMax = 4096;

  // How the rules are indexed (computed on demand; for tests and metrics).
  struct IndexStats {
    size_t buckets = 0;
    size_t sets = 0;           // compiled RE2::Sets
    size_t single_rules = 0;   // patterned rules matched with their own RE2 only
    size_t prefiltered = 0;    // patterned rules found through the literal index
  };

  ReflexEngine();
  ~ReflexEngine();

  // Adds or replaces a rule (as made by ParseRule: a pattern comes with its
  // compiled regex, or the rule is refused). A pattern's atoms and anchored
  // regex are made here, once per rule, not when the index is rebuilt.
  Status Put(Rule rule);
  bool Remove(const std::string& id);
  Status SetEnabled(const std::string& id, bool enabled);
  // Whether an event of this type changes the rule set (reflex_put,
  // reflex_deleted, reflex_enabled): the events ApplyRuleEvent acts on.
  static bool ChangesRules(state::EventType type);
  // Makes the rule set follow one applied event: reflex_put parses its rule
  // (with `ctx`) and puts it, reflex_deleted removes the rule, reflex_enabled
  // enables or disables it (an unknown id is ignored); other events change
  // nothing. A reflex_put whose rule no longer loads (say, its effector left
  // the config) removes the rule, so it does not keep firing in its old
  // form, and returns why it did not load.
  Status ApplyRuleEvent(const state::Event& e, const RuleContext& ctx);
  const Rule* Get(const std::string& id) const;
  std::vector<const Rule*> List() const;  // by id
  bool empty() const { return rules_.empty(); }

  // The enabled rules that fire on `percept` (a pool record) now, highest
  // priority first, then by id.
  std::vector<Match> MatchPercept(const json& percept, double effective_arousal, TimeMs now);
  IndexStats index_stats();

  // The events of one firing, seqs from `next_seq` on. `state` is read for
  // escalate (current salience and arousal level).
  Result<std::vector<state::Event>> Plan(const Match& match, const json& percept,
                                         const state::RecordReader& state, uint64_t next_seq) const;

  // Firing history for cooldown and max_fires.
  void RecordFire(const std::string& id, TimeMs ts);
  void RestoreHistory(const std::string& id, TimeMs last_fired_at) { RecordFire(id, last_fired_at); }

 private:
  struct Bucket;
  struct PatternGroup;
  struct Compiled;   // per patterned rule: its atoms and anchored regex
  struct Patterned;  // a patterned rule with its Compiled
  void Rebuild();
  static void CompileGroups(std::span<const Patterned> rules, std::vector<PatternGroup>* out);
  bool Eligible(const Rule& r, const json& percept, double arousal, TimeMs now) const;

  std::map<std::string, Rule> rules_;
  std::map<std::string, std::shared_ptr<const Compiled>> compiled_;  // by rule id, made by Put
  std::map<std::string, std::deque<TimeMs>> fires_;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<Bucket>> buckets_;
  bool dirty_ = true;
};

}  // namespace limbic::reflexes
