// The reducer: how one event changes the pools.
//
// Reduce() is the only place that knows what an event does to a record. The
// same function
//   - validates a command before it is logged (state::Engine reduces the
//     command's events onto an Overlay over the live state; an error rejects
//     the command and nothing is written),
//   - applies logged events to RocksDB (Projection::Apply), and
//   - rebuilds state during replay,
// so the three can never disagree. It is strict: an event that does not fit
// the current state (unknown thread, completing a deleted thread, assigning a
// processed percept, ...) is an error naming the event and the record.
//
// Records are JSON objects (their shape is in docs/events.md, "Pools"); the
// write path holds percepts, three quarters of all records, in typed form
// (PerceptRecord), and threads and actions as their stored bytes
// (FlatRecord): the same JSON when read through Get.
//   percept  {id, source, type, intensity, ts, seq, thread_id|null, status, text?, data}
//            (seq: of its percept_arrived event; orders percepts of one millisecond)
//   thread   {id, goal, status, salience, percepts[], state{phase, context, next_step},
//             created_at, last_active, from_percept?}
//   arousal  {level, factors{user_waiting, recent_errors, budget_pressure, ...}, updated_at}
//            (one record, id "arousal"; absent until first set = DefaultArousal())
//   action   {id, effector, type, payload, status, attempts, idempotency_key,
//             thread_id|null, percept_id|null, ts, updated_at, last_error|null,
//             next_attempt_at|null, result?}
//   reflex   {id, rule, enabled, updated_at, fired_count, last_fired_at|null}
//   memory   the memory_stored object (memory_schema.h) completed with text
//            (a fact's: "subject relation object"), created_at,
//            last_accessed_at, access_count, valid_from (facts), seq and,
//            once embedded, embedding {embedder, vector} and vector_seq
//   association {id, entity_a, relation, entity_b, created_at}
//   document {sha256, source_uri, ext, bytes, chunks, raw, episode_id?, ingested_at}
//   dedup    {id, source, arrived_at, left_at}: a percept id supplied from
//            outside whose percept left the pool (dedup.h)
//   session  {id, mind, reason, trigger, thread_id|null, percept_ids, budget,
//            woken_at, seq, status: awake|asleep, steps[{step, ts, model,
//            tokens_in, tokens_out, latency_ms, tool_calls, text?,
//            finish_reason?}], tokens_in, tokens_out, tokens, outcome?,
//            slept_at?, duration_ms?, error?}: one per mind_woken
//            (runtime/mind/mind.h), changed by its mind_step and mind_slept
//
// Thread-safety: none; an Overlay belongs to one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "state/event.h"
#include "state/flat_record.h"
#include "state/key_table.h"
#include "state/percept_record.h"
#include "base/status.h"

namespace limbic::state {

enum class Pool : uint8_t {
  kPercepts,
  kThreads,
  kArousal,
  kActions,
  kReflexes,
  kMemories,
  kAssociations,
  kDocuments,
  kDedup,  // ids of percepts that left the pool, kept for the dedup window (dedup.h)
  kSessions,  // the mind's sessions (runtime/mind/mind.h)
};
inline constexpr Pool kAllPools[] = {Pool::kPercepts,     Pool::kThreads,   Pool::kArousal,
                                     Pool::kActions,      Pool::kReflexes,  Pool::kMemories,
                                     Pool::kAssociations, Pool::kDocuments, Pool::kDedup,
                                     Pool::kSessions};
// "percepts", "threads", "arousal", "actions", "reflexes", "memories",
// "associations", "documents", "dedup", "sessions"
std::string_view PoolName(Pool pool);
std::optional<Pool> ParsePool(std::string_view name);

inline constexpr std::string_view kArousalId = "arousal";
// The arousal record before any arousal event: level 0.5, factors
// {user_waiting:false, recent_errors:0, budget_pressure:false}, updated_at null.
json DefaultArousal();

// A record as the write path holds it: a percept typed, a thread or action
// flat (IsFlatPool), any other record JSON. A record given as JSON (a
// test's Overlay::Put, say) is accepted in any pool; every reader of a
// Record handles all three forms.
using Record = std::variant<json, PerceptRecord, FlatRecord>;
// Threads and actions: records changed by most events, of a fixed shape.
inline bool IsFlatPool(Pool pool) { return pool == Pool::kThreads || pool == Pool::kActions; }
// The record's JSON (for a PerceptRecord or FlatRecord, its ToJson()).
json RecordJson(const Record& record);
// A record flat (FromJson for the JSON form, InvalidArgument naming `id`
// when that is not an object).
Result<FlatRecord> FlatOf(const Record& record, std::string_view id);
Result<std::optional<FlatRecord>> FlatOf(const std::optional<Record>& record, std::string_view id);
// A percept record typed (FromJson for the JSON form); `id` names it in the
// error.
Result<PerceptRecord> PerceptOf(const Record& record, std::string_view id);
// The same for a change or read that may be absent (nullopt stays nullopt).
std::optional<json> JsonOf(const std::optional<Record>& record);
Result<std::optional<PerceptRecord>> PerceptOf(const std::optional<Record>& record, std::string_view id);

// Read access to records. Get and GetPercept return nullopt for a record
// that does not exist.
class RecordReader {
 public:
  virtual ~RecordReader() = default;
  virtual Result<std::optional<json>> Get(Pool pool, std::string_view id) const = 0;
  // A percept, typed. This default reads Get's JSON and converts it;
  // readers that hold typed percepts return them without converting.
  virtual Result<std::optional<PerceptRecord>> GetPercept(std::string_view id) const;
  // A record flat. This default reads Get's JSON and converts it; readers
  // that hold stored bytes or flat records return them without a tree.
  virtual Result<std::optional<FlatRecord>> GetFlat(Pool pool, std::string_view id) const;
  // The record in the form the write path holds it: a percept typed
  // (GetPercept), a thread or action flat (GetFlat), any other record as
  // JSON (Get).
  Result<std::optional<Record>> GetRecord(Pool pool, std::string_view id) const;
  // Whether the record exists. This default reads it (GetRecord); readers
  // that can tell without parsing it do.
  virtual Result<bool> Contains(Pool pool, std::string_view id) const;
};

// Changes on top of a base reader: reads see the changes first, then the
// base. Each change remembers the seq of the event that made it, so changes
// already applied to the base can be dropped.
class Overlay final : public RecordReader {
 public:
  struct Change {
    std::optional<Record> record;  // nullopt = deleted
    uint64_t seq = 0;
  };
  using Key = std::pair<Pool, std::string>;
  using Changes = KeyTable<Pool, Change>;

  // `base` may be nullptr (an empty base); it must outlive the Overlay.
  explicit Overlay(const RecordReader* base) : base_(base) {}

  Result<std::optional<json>> Get(Pool pool, std::string_view id) const override;
  Result<std::optional<PerceptRecord>> GetPercept(std::string_view id) const override;
  Result<std::optional<FlatRecord>> GetFlat(Pool pool, std::string_view id) const override;
  // Asks the base only for records this overlay has neither changed nor
  // read; reads no record, and remembers (remember_base_reads) only that
  // a record is absent (unless remember_absent(false)).
  Result<bool> Contains(Pool pool, std::string_view id) const override;
  // The record, for the caller to change and put back with Put or Delete:
  // moved out of this overlay when the overlay holds a change of it (a
  // copy of the base's otherwise), so changing a record touched by many
  // events does not copy it each time. Until it is put back the overlay
  // holds a hollow record there: a caller that fails in between must
  // discard the overlay (see Reduce). Percepts are taken with TakePercept.
  Result<std::optional<json>> Take(Pool pool, std::string_view id);
  Result<std::optional<PerceptRecord>> TakePercept(std::string_view id);
  Result<std::optional<FlatRecord>> TakeFlat(Pool pool, std::string_view id);
  void Put(Pool pool, std::string id, json record, uint64_t seq);
  void PutPercept(std::string id, PerceptRecord record, uint64_t seq);
  void PutFlat(Pool pool, std::string id, FlatRecord record, uint64_t seq);
  void Delete(Pool pool, std::string id, uint64_t seq);

  // Moves every change of `child` (an Overlay over this one) into this one.
  void Absorb(Overlay&& child);
  // Forgets changes made by events with seq <= `seq` (now in the base).
  void DropUpTo(uint64_t seq);
  // Forgets the change of `key` if it was made by an event with seq <= `seq`.
  void Forget(const Key& key, uint64_t seq);

  const Changes& changes() const { return changes_; }
  bool empty() const { return changes_.empty(); }
  void Clear() {
    changes_.clear();
    base_reads_.clear();
  }

  // With remember_base_reads(true), what each key's first read found in the
  // base (nullopt = absent); Projection::Apply uses it to find the index
  // entries to replace without reading the record a second time.
  void remember_base_reads(bool on) { remember_ = on; }
  // Whether Contains remembers a record it found absent (default yes). A
  // bulk load's overlays do not: their base answers "absent" from memory,
  // as fast as a remembered read, which would cost memory for every new
  // record.
  void remember_absent(bool on) { remember_absent_ = on; }
  const std::optional<Record>* BaseRead(const Key& key) const {
    auto it = base_reads_.find(key);
    return it == base_reads_.end() ? nullptr : &it->second;
  }

 private:
  // `key` read below this overlay's changes: the base's record (remembered
  // with remember_base_reads).
  Result<std::optional<json>> BaseGet(Key key) const;
  // Reading (Get*), reading below the changes (BaseGet*) and taking
  // (Take*) a record in form T (a percept typed or a record flat): `read`
  // asks the base in that form, `of` converts a Record held here.
  template <typename T, typename Read, typename Of>
  Result<std::optional<T>> GetAs(Key key, Read read, Of of) const;
  template <typename T, typename Read, typename Of>
  Result<std::optional<T>> BaseGetAs(Key key, Read read, Of of) const;
  template <typename T, typename Read, typename Of>
  Result<std::optional<T>> TakeAs(Key key, Read read, Of of);

  const RecordReader* base_;
  Changes changes_;
  bool remember_ = false;
  bool remember_absent_ = true;
  mutable KeyTable<Pool, std::optional<Record>> base_reads_;
};

// Applies `event` (schema-valid: see ValidateEventFields) to the records it
// touches in *overlay. On error *overlay may hold partial changes of this
// event, and records it took to change (Overlay::Take) are hollow: callers
// reduce into a scratch child Overlay and Absorb it on success, or discard
// the overlay on error.
Status Reduce(const Event& event, Overlay* overlay);
// The memory events' part of Reduce (reduce_memory.cc).
Status ReduceMemory(const Event& event, Overlay* overlay);
// The mind's events, onto the sessions pool (reduce_mind.cc).
Status ReduceMind(const Event& event, Overlay* overlay);

}  // namespace limbic::state
