// The reducer (what each event does, and what it refuses) and the RocksDB
// projection (apply, queries, indexes, digest).
#include <catch2/catch.hpp>
#include <rocksdb/db.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "state/pool_layout.h"
#include "state/projection.h"
#include "state/recency.h"
#include "state/reducer.h"
#include "test_util.h"

using namespace limbic;
using namespace limbic::state;
using limbic::testing::ScratchDir;
using limbic::testing::Spit;

namespace {

constexpr TimeMs kT0 = 1795356309000;

// Builds events with contiguous seqs and a clock that moves 1 s per event.
struct Log {
  uint64_t seq = 0;
  std::vector<Event> events;
  Event& Add(EventType type, json fields) {
    Event e;
    e.seq = ++seq;
    e.ts = kT0 + static_cast<TimeMs>(seq) * 1000;
    e.type = type;
    e.fields = std::move(fields);
    REQUIRE(ValidateEventFields(type, e.fields).ok());
    events.push_back(e);
    return events.back();
  }
  Event& Percept(const std::string& id, const std::string& source = "github",
                 const std::string& type = "issue", double intensity = 0.5) {
    return Add(EventType::kPerceptArrived, {{"percept_id", id},
                                            {"source", source},
                                            {"percept_type", type},
                                            {"intensity", intensity}});
  }
  Event& Thread(const std::string& id) {
    return Add(EventType::kThreadCreated, {{"thread_id", id}, {"goal", "g"}, {"salience", 0.5}});
  }
};

// Reduces all events onto a fresh overlay; returns the first error.
Status ReduceAll(const std::vector<Event>& events, Overlay* o) {
  for (const Event& e : events) LIMBIC_RETURN_IF_ERROR(Reduce(e, o));
  return Status::OK();
}

json Rec(const RecordReader& r, Pool pool, const std::string& id) {
  auto got = r.Get(pool, id);
  REQUIRE(got.ok());
  REQUIRE(got->has_value());
  return **got;
}

std::unique_ptr<Projection> OpenDb(const std::string& path, bool read_only = false) {
  ProjectionOptions o;
  o.path = path;
  o.read_only = read_only;
  auto p = Projection::Open(o);
  INFO(p.status().ToString());
  REQUIRE(p.ok());
  return std::move(p).value();
}

// A projection in replay's bulk-load mode, writing every `flush_records`
// changed records.
std::unique_ptr<Projection> OpenBulk(const std::string& path, size_t flush_records) {
  ProjectionOptions o;
  o.path = path;
  o.bulk_load = true;
  o.bulk_flush_records = flush_records;
  auto p = Projection::Open(o);
  INFO(p.status().ToString());
  REQUIRE(p.ok());
  return std::move(p).value();
}

// The bulk load's own table files in a DB dir (none once RocksDB took them).
std::vector<std::string> BulkFilesIn(const std::string& db_dir) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(db_dir))
    if (entry.path().filename().string().starts_with("bulk-")) out.push_back(entry.path().string());
  return out;
}

}  // namespace

TEST_CASE("percept lifecycle: arrive, assign, move, process, drop, remove", "[reducer]") {
  Log l;
  l.Percept("p-1");
  l.Thread("t-1");
  l.Thread("t-2");
  l.Add(EventType::kPerceptAssigned, {{"percept_id", "p-1"}, {"thread_id", "t-1"}});
  l.Add(EventType::kPerceptAssigned, {{"percept_id", "p-1"}, {"thread_id", "t-2"}});
  Overlay o(nullptr);
  REQUIRE(ReduceAll(l.events, &o).ok());
  json p = Rec(o, Pool::kPercepts, "p-1");
  CHECK(p["status"] == "assigned");
  CHECK(p["thread_id"] == "t-2");
  CHECK(p["ts"] == FormatTime(kT0 + 1000));
  CHECK(Rec(o, Pool::kThreads, "t-1")["percepts"].empty());  // moved away
  CHECK(Rec(o, Pool::kThreads, "t-2")["percepts"] == json::array({"p-1"}));
  CHECK(Rec(o, Pool::kThreads, "t-2")["last_active"] == FormatTime(kT0 + 5000));

  l.Add(EventType::kPerceptProcessed, {{"percept_id", "p-1"}});
  l.Percept("p-2");
  l.Add(EventType::kPerceptDropped, {{"percept_id", "p-2"}, {"reason", "noise"}});
  l.Add(EventType::kPerceptRemoved, {{"percept_id", "p-1"}});
  Overlay o2(nullptr);
  REQUIRE(ReduceAll(l.events, &o2).ok());
  CHECK_FALSE(o2.Get(Pool::kPercepts, "p-1")->has_value());
  CHECK(Rec(o2, Pool::kPercepts, "p-2")["status"] == "dropped");
  CHECK(Rec(o2, Pool::kPercepts, "p-2")["drop_reason"] == "noise");
  CHECK(Rec(o2, Pool::kThreads, "t-2")["percepts"] == json::array({"p-1"}));  // history kept
}

TEST_CASE("thread lifecycle: state merge, pause, complete, delete", "[reducer]") {
  Log l;
  l.Add(EventType::kThreadCreated, {{"thread_id", "t-1"},
                                    {"goal", "g"},
                                    {"salience", 0.4},
                                    {"state", {{"phase", "triage"}}}});
  l.Add(EventType::kThreadUpdated,
        {{"thread_id", "t-1"}, {"salience", 0.9}, {"state", {{"context", {{"pr", 7}}}, {"phase", nullptr}}}});
  l.Add(EventType::kThreadPaused, {{"thread_id", "t-1"}, {"reason", "waiting"}});
  Overlay o(nullptr);
  REQUIRE(ReduceAll(l.events, &o).ok());
  json t = Rec(o, Pool::kThreads, "t-1");
  CHECK(t["salience"] == 0.9);
  CHECK(t["status"] == "paused");
  CHECK(t["pause_reason"] == "waiting");
  CHECK(t["state"]["context"]["pr"] == 7);
  CHECK_FALSE(t["state"].contains("phase"));  // null in a merge patch removes
  CHECK(t["state"]["next_step"].is_null());
  CHECK(t["created_at"] == FormatTime(kT0 + 1000));
  CHECK(t["last_active"] == FormatTime(kT0 + 3000));
  l.Add(EventType::kThreadCompleted, {{"thread_id", "t-1"}, {"outcome", "done"}});
  l.Add(EventType::kThreadDeleted, {{"thread_id", "t-1"}});
  Overlay o2(nullptr);
  REQUIRE(ReduceAll(l.events, &o2).ok());
  CHECK_FALSE(o2.Get(Pool::kThreads, "t-1")->has_value());
}

TEST_CASE("arousal: default, level, factors set and removed", "[reducer]") {
  Log l;
  l.Add(EventType::kArousalSet, {{"level", 0.8}});
  l.Add(EventType::kArousalFactorSet, {{"factor", "user_waiting"}, {"value", true}});
  l.Add(EventType::kArousalFactorSet, {{"factor", "mood"}, {"value", "calm"}});
  l.Add(EventType::kArousalFactorSet, {{"factor", "mood"}, {"value", nullptr}});
  Overlay o(nullptr);
  REQUIRE(ReduceAll(l.events, &o).ok());
  json a = Rec(o, Pool::kArousal, "arousal");
  CHECK(a["level"] == 0.8);
  CHECK(a["factors"]["user_waiting"] == true);
  CHECK(a["factors"]["recent_errors"] == 0);
  CHECK_FALSE(a["factors"].contains("mood"));
  CHECK(a["updated_at"] == FormatTime(kT0 + 4000));
  CHECK(DefaultArousal()["level"] == 0.5);
}

TEST_CASE("outbox transitions: enqueue, send, fail, resend, complete, prune", "[reducer]") {
  Log l;
  l.Add(EventType::kActionEnqueued, {{"action_id", "a-1"}, {"effector", "log"}, {"action_type", "ack"},
                                     {"payload", {{"x", 1}}}, {"idempotency_key", "k-1"}});
  l.Add(EventType::kActionSent, {{"action_id", "a-1"}, {"attempt", 1}});
  l.Add(EventType::kActionFailed, {{"action_id", "a-1"}, {"attempt", 1}, {"error", "503"},
                                   {"retry_at", "2026-11-22T14:06:00.000Z"}});
  Overlay o(nullptr);
  REQUIRE(ReduceAll(l.events, &o).ok());
  json a = Rec(o, Pool::kActions, "a-1");
  CHECK(a["status"] == "failed");
  CHECK(a["attempts"] == 1);
  CHECK(a["last_error"] == "503");
  CHECK(a["next_attempt_at"] == "2026-11-22T14:06:00.000Z");
  CHECK(a["idempotency_key"] == "k-1");
  l.Add(EventType::kActionSent, {{"action_id", "a-1"}, {"attempt", 2}});
  l.Add(EventType::kActionSent, {{"action_id", "a-1"}, {"attempt", 3}});  // redelivery after a crash
  l.Add(EventType::kActionComplete, {{"action_id", "a-1"}, {"result", {{"status", 201}}}});
  l.Add(EventType::kActionsPruned, {{"action_ids", {"a-1"}}});
  Overlay o2(nullptr);
  REQUIRE(ReduceAll(std::vector<Event>(l.events.begin(), l.events.end() - 1), &o2).ok());
  CHECK(Rec(o2, Pool::kActions, "a-1")["status"] == "complete");
  CHECK(Rec(o2, Pool::kActions, "a-1")["attempts"] == 3);
  CHECK(Rec(o2, Pool::kActions, "a-1")["result"]["status"] == 201);
  REQUIRE(Reduce(l.events.back(), &o2).ok());
  CHECK_FALSE(o2.Get(Pool::kActions, "a-1")->has_value());
}

TEST_CASE("reflex records: put keeps counters, fired counts, enable, delete", "[reducer]") {
  Log l;
  l.Add(EventType::kReflexPut, {{"reflex_id", "r-1"}, {"rule", {{"id", "r-1"}, {"enabled", false}}}});
  l.Add(EventType::kReflexFired, {{"reflex_id", "r-1"}, {"caused", json::array()}});
  l.Add(EventType::kReflexFired, {{"reflex_id", "not-in-pool"}, {"caused", json::array({3})}});
  l.Add(EventType::kReflexPut, {{"reflex_id", "r-1"}, {"rule", {{"id", "r-1"}}}});
  l.Add(EventType::kReflexEnabled, {{"reflex_id", "r-1"}, {"enabled", false}});
  Overlay o(nullptr);
  REQUIRE(ReduceAll(l.events, &o).ok());
  json r = Rec(o, Pool::kReflexes, "r-1");
  CHECK(r["fired_count"] == 1);
  CHECK(r["last_fired_at"] == FormatTime(kT0 + 2000));
  CHECK(r["enabled"] == false);
  l.Add(EventType::kReflexDeleted, {{"reflex_id", "r-1"}});
  Overlay o2(nullptr);
  REQUIRE(ReduceAll(l.events, &o2).ok());
  CHECK_FALSE(o2.Get(Pool::kReflexes, "r-1")->has_value());
}

TEST_CASE("the reducer refuses events that do not fit the state, naming them", "[reducer]") {
  struct Case {
    std::function<void(Log&)> setup;
    EventType type;
    json fields;
    Status::Code code;
    const char* needle;
  } cases[] = {
      {[](Log&) {}, EventType::kPerceptAssigned, {{"percept_id", "p-9"}, {"thread_id", "t-1"}},
       Status::Code::kNotFound, "percept p-9 not found"},
      {[](Log& l) { l.Percept("p-1"); }, EventType::kPerceptAssigned,
       {{"percept_id", "p-1"}, {"thread_id", "t-9"}}, Status::Code::kNotFound, "thread t-9 not found"},
      {[](Log& l) { l.Percept("p-1"); }, EventType::kPerceptArrived,
       {{"percept_id", "p-1"}, {"source", "s"}, {"percept_type", "t"}, {"intensity", 0.1}},
       Status::Code::kAlreadyExists, "percept p-1 already exists"},
      {[](Log& l) {
         l.Percept("p-1");
         l.Thread("t-1");
         l.Add(EventType::kPerceptProcessed, {{"percept_id", "p-1"}});
       },
       EventType::kPerceptAssigned, {{"percept_id", "p-1"}, {"thread_id", "t-1"}},
       Status::Code::kFailedPrecondition, "percept p-1 is processed"},
      {[](Log& l) {
         l.Thread("t-1");
         l.Add(EventType::kThreadDeleted, {{"thread_id", "t-1"}});
       },
       EventType::kThreadCompleted, {{"thread_id", "t-1"}}, Status::Code::kNotFound,
       "thread_completed seq 3: thread t-1 not found"},
      {[](Log& l) {
         l.Thread("t-1");
         l.Add(EventType::kThreadCompleted, {{"thread_id", "t-1"}});
       },
       EventType::kThreadUpdated, {{"thread_id", "t-1"}, {"salience", 0.1}},
       Status::Code::kFailedPrecondition, "thread t-1 is complete"},
      {[](Log& l) {
         l.Thread("t-1");
         l.Add(EventType::kThreadCompleted, {{"thread_id", "t-1"}});
         l.Percept("p-1");
       },
       EventType::kPerceptAssigned, {{"percept_id", "p-1"}, {"thread_id", "t-1"}},
       Status::Code::kFailedPrecondition, "thread t-1 is complete"},
      {[](Log&) {}, EventType::kActionEnqueued,
       {{"action_id", "a-1"}, {"effector", "log"}, {"action_type", "x"}, {"payload", 1},
        {"idempotency_key", "k"}, {"thread_id", "t-7"}},
       Status::Code::kNotFound, "thread t-7"},
      {[](Log& l) {
         l.Add(EventType::kActionEnqueued, {{"action_id", "a-1"}, {"effector", "log"},
                                            {"action_type", "x"}, {"payload", 1}, {"idempotency_key", "k"}});
       },
       EventType::kActionComplete, {{"action_id", "a-1"}}, Status::Code::kFailedPrecondition,
       "action a-1 is pending"},
      {[](Log& l) {
         l.Add(EventType::kActionEnqueued, {{"action_id", "a-1"}, {"effector", "log"},
                                            {"action_type", "x"}, {"payload", 1}, {"idempotency_key", "k"}});
       },
       EventType::kActionsPruned, {{"action_ids", {"a-1"}}}, Status::Code::kFailedPrecondition,
       "not complete or dead"},
      {[](Log& l) {
         l.Add(EventType::kActionEnqueued, {{"action_id", "a-1"}, {"effector", "log"},
                                            {"action_type", "x"}, {"payload", 1}, {"idempotency_key", "k"}});
         l.Add(EventType::kActionDead, {{"action_id", "a-1"}, {"error", "gone"}});
       },
       EventType::kActionSent, {{"action_id", "a-1"}, {"attempt", 1}}, Status::Code::kFailedPrecondition,
       "action a-1 is dead"},
      {[](Log&) {}, EventType::kReflexDeleted, {{"reflex_id", "r-1"}}, Status::Code::kNotFound,
       "reflex r-1 not found"},
      {[](Log&) {}, EventType::kThreadCreated,
       {{"thread_id", "t-1"}, {"goal", "g"}, {"salience", 0.5}, {"from_percept", "p-404"}},
       Status::Code::kNotFound, "percept p-404"},
  };
  for (auto& c : cases) {
    Log l;
    c.setup(l);
    Overlay o(nullptr);
    REQUIRE(ReduceAll(l.events, &o).ok());
    Event& bad = l.Add(c.type, c.fields);
    Status s = Reduce(bad, &o);
    INFO(EventTypeName(c.type) << ": " << s.ToString());
    CHECK(s.code() == c.code);
    CHECK_THAT(s.message(), Catch::Contains(c.needle));
  }
}

TEST_CASE("overlays layer, absorb and forget applied changes", "[reducer]") {
  Overlay base(nullptr);
  base.Put(Pool::kThreads, "t-1", {{"v", 1}}, 1);
  base.Put(Pool::kThreads, "t-2", {{"v", 2}}, 2);
  Overlay child(&base);
  child.Delete(Pool::kThreads, "t-1", 3);
  child.Put(Pool::kThreads, "t-3", {{"v", 3}}, 3);
  CHECK_FALSE(child.Get(Pool::kThreads, "t-1")->has_value());
  CHECK((**child.Get(Pool::kThreads, "t-2"))["v"] == 2);
  CHECK((**base.Get(Pool::kThreads, "t-1"))["v"] == 1);
  base.Absorb(std::move(child));
  CHECK_FALSE(base.Get(Pool::kThreads, "t-1")->has_value());
  base.DropUpTo(2);
  CHECK(base.changes().size() == 2);  // t-1 (deleted at 3) and t-3
  CHECK_FALSE(base.Get(Pool::kThreads, "t-2")->has_value());
}

TEST_CASE("take moves a record the overlay holds, copies one of its base", "[reducer]") {
  Overlay base(nullptr);
  base.Put(Pool::kThreads, "t-1", {{"v", 1}}, 1);
  Overlay o(&base);
  o.Put(Pool::kThreads, "t-2", {{"v", 2}}, 2);
  auto mine = o.Take(Pool::kThreads, "t-2");
  REQUIRE(mine.ok());
  CHECK((**mine)["v"] == 2);
  // Moved out: the overlay holds a hollow record until it is put back.
  CHECK(o.changes().at({Pool::kThreads, "t-2"}).record->is_null());
  (**mine)["v"] = 3;
  o.Put(Pool::kThreads, "t-2", std::move(**mine), 3);
  CHECK((**o.Get(Pool::kThreads, "t-2"))["v"] == 3);
  // From the base: a copy; the base keeps its record.
  auto theirs = o.Take(Pool::kThreads, "t-1");
  REQUIRE(theirs.ok());
  CHECK((**theirs)["v"] == 1);
  CHECK((**base.Get(Pool::kThreads, "t-1"))["v"] == 1);
  CHECK_FALSE(o.Take(Pool::kThreads, "t-404")->has_value());
  // A record changed by many events through Take ends as if copied each time.
  Log l;
  l.Thread("t-1");
  l.Percept("p-1");
  l.Add(EventType::kPerceptAssigned, {{"percept_id", "p-1"}, {"thread_id", "t-1"}});
  l.Add(EventType::kThreadUpdated, {{"thread_id", "t-1"}, {"salience", 0.9}});
  l.Add(EventType::kPerceptProcessed, {{"percept_id", "p-1"}});
  Overlay all(nullptr);
  REQUIRE(ReduceAll(l.events, &all).ok());
  CHECK(Rec(all, Pool::kThreads, "t-1")["salience"] == 0.9);
  CHECK(Rec(all, Pool::kThreads, "t-1")["percepts"] == json::array({"p-1"}));
  CHECK(Rec(all, Pool::kPercepts, "p-1")["status"] == "processed");
}

TEST_CASE("a bulk write's key order is RocksDB's bytewise order, stable for one key",
          "[projection]") {
  // Keys cut by the index prefix rule in every way: names that prefix one
  // another, 0x00 and 0xff bytes in and right after the prefix, tails
  // shorter than 8 bytes, keys equal to their prefix, repeats.
  std::mt19937 rng(7);
  const std::vector<std::string> heads = {"P|T|", "P|s|chat", "P|s|ch", "P|s|", "M|c|", "T|u|a",
                                          "S|k|", "A|u|", "P|", "", "p-", "x"};
  auto piece = [&](size_t max) {
    std::string out;
    const size_t n = rng() % (max + 1);
    for (size_t i = 0; i < n; ++i) {
      const unsigned r = rng() % 6;
      out.push_back(r == 0 ? '\0' : r == 1 ? '\xff' : r == 2 ? '\x80' : static_cast<char>('a' + rng() % 3));
    }
    return out;
  };
  std::vector<PreparedWrite::Op> ops;
  for (int i = 0; i < 4000; ++i) {
    PreparedWrite::Op op;
    op.cf = static_cast<uint8_t>(rng() % 3 == 0 ? rng() % 10 : kIndexCf);
    op.key = heads[rng() % heads.size()] + piece(3) + (rng() % 2 ? std::string(1, '\0') : "") + piece(12);
    op.value = std::to_string(i);  // tells ops on one key apart
    ops.push_back(op);
    if (rng() % 8 == 0) {  // the same key again, later
      op.value = std::to_string(i) + "b";
      ops.push_back(op);
    }
  }
  std::vector<uint32_t> want(ops.size());
  for (uint32_t i = 0; i < want.size(); ++i) want[i] = i;
  std::stable_sort(want.begin(), want.end(), [&](uint32_t a, uint32_t b) {
    return ops[a].cf != ops[b].cf ? ops[a].cf < ops[b].cf : ops[a].key < ops[b].key;
  });
  CHECK(KeyOrder(ops) == want);
  CHECK(KeyOrder({}).empty());
}

TEST_CASE("a bulk load goes on after a flush and ends as applying event by event",
          "[projection]") {
  ScratchDir dir;
  Log l;
  l.Thread("t-1");
  for (int i = 1; i <= 4; ++i) l.Percept("p-" + std::to_string(i));
  l.Add(EventType::kPerceptAssigned, {{"percept_id", "p-1"}, {"thread_id", "t-1"}});
  l.Add(EventType::kPerceptProcessed, {{"percept_id", "p-1"}});
  l.Add(EventType::kPerceptRemoved, {{"percept_id", "p-2"}});
  l.Add(EventType::kThreadUpdated, {{"thread_id", "t-1"}, {"salience", 0.8}});
  auto plain = OpenDb(dir / "plain");
  REQUIRE(plain->Apply(l.events).ok());
  auto bulk = OpenBulk(dir / "bulk", 2);
  // Flushed part way (its records freed in the background), then more.
  for (size_t i = 0; i < 4; ++i) REQUIRE(bulk->Apply(std::span<const Event>(l.events).subspan(i, 1)).ok());
  REQUIRE(bulk->Flush().ok());
  REQUIRE(bulk->Apply(std::span<const Event>(l.events).subspan(4)).ok());
  REQUIRE(bulk->Flush().ok());
  CHECK(bulk->applied_seq() == l.events.size());
  CHECK(*bulk->Digest() == *plain->Digest());
  CHECK(bulk->CheckIndexes().ok());
  CHECK(*bulk->CountUnprocessed("t-1") == 0);
  CHECK(BulkFilesIn(dir / "bulk").empty());
}

TEST_CASE("a bulk load that meets a bad event stops there and writes none of it",
          "[projection]") {
  ScratchDir dir;
  Log l;
  l.Thread("t-1");
  for (int i = 1; i <= 5; ++i) l.Percept("p-" + std::to_string(i));
  l.Add(EventType::kPerceptAssigned, {{"percept_id", "p-1"}, {"thread_id", "t-1"}});
  // p-1 is held (assigned) by the overlay when this fails: the reducer has
  // taken it out, and the hollow record left there must never be written.
  l.Add(EventType::kPerceptAssigned, {{"percept_id", "p-1"}, {"thread_id", "t-404"}});
  l.Percept("p-6");
  {
    // Some records are written before the bad event.
    auto db = OpenBulk(dir / "db", 3);
    // One event a call: records are written after seqs 3 and 6.
    for (size_t i = 0; i < 7; ++i) REQUIRE(db->Apply(std::span<const Event>(l.events).subspan(i, 1)).ok());
    size_t failed = 99;
    Status s = db->Apply(std::span<const Event>(l.events).subspan(7, 1), &failed);
    CHECK(s.IsNotFound());
    CHECK(failed == 0);
    // The load is over: what follows and the final flush give the error again.
    CHECK(db->Apply(std::span<const Event>(l.events).subspan(8)).IsNotFound());
    CHECK(db->Flush().IsNotFound());
    CHECK(db->applied_seq() == 6);
  }
  // What was written is whole: records, indexes and applied_seq agree.
  auto db = OpenDb(dir / "db");
  CHECK(db->applied_seq() == 6);
  CHECK(db->CheckIndexes().ok());
  CHECK(*db->Count(Pool::kPercepts) == 5);
  CHECK((*db->Get(Pool::kPercepts, "p-1"))->at("status") == "new");
  CHECK(BulkFilesIn(dir / "db").empty());
}

TEST_CASE("a bulk load's records and applied_seq reach the disk together", "[projection]") {
  // A replay that dies part way leaves a DB whose applied_seq covers every
  // record in it: the disk as it is right after a write, copied while the
  // load is still open, reads back whole.
  ScratchDir dir;
  Log l;
  l.Thread("t-1");
  for (int i = 1; i <= 5; ++i) l.Percept("p-" + std::to_string(i));
  auto bulk = OpenBulk(dir / "db", 3);
  for (size_t i = 0; i < l.events.size(); ++i)
    REQUIRE(bulk->Apply(std::span<const Event>(l.events).subspan(i, 1)).ok());
  // Written after seq 3 (on a thread of its own); seq 6 starts another write.
  for (int tries = 0; bulk->applied_seq() < 6 && tries < 1000; ++tries)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(bulk->applied_seq() == 6);
  std::filesystem::copy(dir / "db", dir / "crashed");
  auto crashed = OpenDb(dir / "crashed");
  CHECK(crashed->applied_seq() == 6);
  CHECK(*crashed->Count(Pool::kPercepts) == 5);
  CHECK(crashed->CheckIndexes().ok());
  // Table files a dead load left behind are removed by the next writable
  // open; other files stay.
  Spit(dir / "crashed/bulk-7-1.sst", "left over");
  Spit(dir / "crashed/notes.txt", "mine");
  crashed.reset();
  crashed = OpenDb(dir / "crashed");
  CHECK(BulkFilesIn(dir / "crashed").empty());
  CHECK(std::filesystem::exists(dir / "crashed/notes.txt"));
}

TEST_CASE("apply writes records, indexes and applied_seq together", "[projection]") {
  ScratchDir dir;
  Log l;
  l.Percept("p-1");
  l.Thread("t-1");
  {
    auto db = OpenDb(dir / "db");
    REQUIRE(db->Apply(l.events).ok());
    CHECK(db->applied_seq() == 2);
    // A group with a bad event in the middle writes nothing.
    l.Add(EventType::kPerceptAssigned, {{"percept_id", "p-1"}, {"thread_id", "t-1"}});
    l.Add(EventType::kPerceptAssigned, {{"percept_id", "p-1"}, {"thread_id", "t-404"}});
    Status s = db->Apply(std::span<const Event>(l.events).subspan(2));
    CHECK(s.IsNotFound());
    CHECK(db->applied_seq() == 2);
    CHECK((*db->Get(Pool::kPercepts, "p-1"))->at("status") == "new");
    // Seqs must continue applied_seq.
    CHECK_FALSE(db->Apply(std::span<const Event>(l.events).subspan(3, 1)).ok());
    REQUIRE(db->Apply(std::span<const Event>(l.events).subspan(2, 1)).ok());
  }
  auto db = OpenDb(dir / "db");
  CHECK(db->applied_seq() == 3);
  CHECK((*db->Get(Pool::kPercepts, "p-1"))->at("thread_id") == "t-1");
  CHECK(*db->CountUnprocessed("t-1") == 1);
  CHECK(db->CheckIndexes().ok());
}

TEST_CASE("percept queries: every filter, age bounds, newest first, limit", "[projection]") {
  ScratchDir dir;
  Log l;
  l.Thread("t-1");  // seq 1
  for (int i = 0; i < 20; ++i)
    l.Percept("p-" + std::to_string(i), i % 2 ? "github" : "discord", i % 3 ? "msg" : "issue",
              i / 20.0);  // seqs 2..21, ts = kT0 + seq s
  l.Add(EventType::kPerceptAssigned, {{"percept_id", "p-4"}, {"thread_id", "t-1"}});
  l.Add(EventType::kPerceptAssigned, {{"percept_id", "p-7"}, {"thread_id", "t-1"}});
  l.Add(EventType::kPerceptProcessed, {{"percept_id", "p-7"}});
  auto db = OpenDb(dir / "db");
  REQUIRE(db->Apply(l.events).ok());
  TimeMs now = kT0 + 22 * 1000;
  auto ids = [&](PerceptQuery q) {
    auto r = db->QueryPercepts(q, now);
    REQUIRE(r.ok());
    std::vector<std::string> out;
    for (auto& p : *r) out.push_back(p["id"]);
    return out;
  };
  PerceptQuery all;
  all.limit = 0;
  auto every = ids(all);
  REQUIRE(every.size() == 20);
  CHECK(every.front() == "p-19");
  CHECK(every.back() == "p-0");
  PerceptQuery q;
  q.source = "github";
  q.limit = 0;
  CHECK(ids(q).size() == 10);
  q.type = "issue";  // github AND issue: odd i divisible by 3
  CHECK(ids(q) == std::vector<std::string>{"p-15", "p-9", "p-3"});
  PerceptQuery byThread;
  byThread.thread_id = "t-1";
  CHECK(ids(byThread) == std::vector<std::string>{"p-7", "p-4"});
  byThread.status = "assigned";
  CHECK(ids(byThread) == std::vector<std::string>{"p-4"});
  PerceptQuery byStatus;
  byStatus.status = "processed";
  CHECK(ids(byStatus) == std::vector<std::string>{"p-7"});
  PerceptQuery young;  // age <= 5 s: seqs 17..21 -> p-15..p-19
  young.max_age = 5000;
  CHECK(ids(young) == std::vector<std::string>{"p-19", "p-18", "p-17", "p-16", "p-15"});
  PerceptQuery old;  // age >= 19 s: seqs 2,3 -> p-0, p-1
  old.min_age = 19000;
  CHECK(ids(old) == std::vector<std::string>{"p-1", "p-0"});
  PerceptQuery window;
  window.min_age = 10000;
  window.max_age = 11000;
  window.limit = 1;
  CHECK(ids(window) == std::vector<std::string>{"p-10"});
}

TEST_CASE("threads and actions by status", "[projection]") {
  ScratchDir dir;
  Log l;
  l.Thread("t-1");
  l.Thread("t-2");
  l.Add(EventType::kThreadPaused, {{"thread_id", "t-2"}});
  l.Add(EventType::kActionEnqueued, {{"action_id", "a-1"}, {"effector", "log"}, {"action_type", "x"},
                                     {"payload", 1}, {"idempotency_key", "k"}});
  l.Add(EventType::kActionEnqueued, {{"action_id", "a-2"}, {"effector", "log"}, {"action_type", "x"},
                                     {"payload", 2}, {"idempotency_key", "k2"}});
  l.Add(EventType::kActionSent, {{"action_id", "a-1"}, {"attempt", 1}});
  auto db = OpenDb(dir / "db");
  REQUIRE(db->Apply(l.events).ok());
  auto active = db->ListThreads(std::string("active"));
  REQUIRE(active->size() == 1);
  CHECK((*active)[0]["id"] == "t-1");
  CHECK(db->ListThreads(std::nullopt)->size() == 2);
  CHECK(db->ListActions(std::string("pending"))->at(0)["id"] == "a-2");
  CHECK(db->ListActions(std::string("inflight"))->at(0)["id"] == "a-1");
  auto both = db->ListActions(std::nullopt);
  REQUIRE(both->size() == 2);
  CHECK((*both)[0]["id"] == "a-1");  // oldest first
  CHECK(*db->Count(Pool::kThreads) == 2);
  CHECK((*db->GetArousal())["level"] == 0.5);
}

TEST_CASE("threads by salience: ranked from the index, as the formula ranks the records",
          "[projection]") {
  ScratchDir dir;
  auto db = OpenDb(dir.path());
  Log log;
  std::mt19937 rng(3);
  std::vector<std::string> threads;
  for (int i = 0; i < 40; ++i) {
    threads.push_back("t-" + std::to_string(i));
    log.Add(EventType::kThreadCreated,
            {{"thread_id", threads.back()}, {"goal", "g"}, {"salience", (rng() % 100) / 100.0}});
  }
  for (int i = 0; i < 200; ++i) {
    std::string p = "p-" + std::to_string(i);
    log.Percept(p);
    if (rng() % 3 == 0) continue;
    log.Add(EventType::kPerceptAssigned, {{"percept_id", p}, {"thread_id", threads[rng() % 40]}});
    if (rng() % 2 == 0) log.Add(EventType::kPerceptProcessed, {{"percept_id", p}});
  }
  for (int i = 0; i < 40; i += 3)  // salience changes, pauses: the index follows
    log.Add(EventType::kThreadUpdated, {{"thread_id", threads[static_cast<size_t>(i)]},
                                        {"salience", (rng() % 100) / 100.0}});
  for (int i = 1; i < 40; i += 7) log.Add(EventType::kThreadPaused, {{"thread_id", threads[static_cast<size_t>(i)]}});
  REQUIRE(db->Apply(log.events).ok());
  REQUIRE(db->CheckIndexes().ok());

  RecencyParams params;
  TimeMs now = kT0 + 3'600'000;
  // The reference: every active record, scored by the formula, sorted.
  auto all = db->ListThreads(std::string("active"));
  REQUIRE(all.ok());
  std::vector<std::pair<double, std::string>> want;
  for (const json& t : *all) {
    auto n = db->CountUnprocessed(t["id"].get<std::string>());
    REQUIRE(n.ok());
    json scored = ThreadWithRecency(t, *n, now, params);
    want.emplace_back(-scored["effective_salience"].get<double>(), t["id"].get<std::string>());
  }
  std::sort(want.begin(), want.end());
  auto top = ThreadsBySalience(*db, std::string("active"), now, params, 10);
  REQUIRE(top.ok());
  REQUIRE(top->size() == 10);
  for (size_t i = 0; i < 10; ++i) {
    CHECK((*top)[i]["id"] == want[i].second);
    CHECK((*top)[i]["effective_salience"].get<double>() == Approx(-want[i].first));
  }
  auto every = ThreadsBySalience(*db, std::nullopt, now, params);
  REQUIRE(every.ok());
  CHECK(every->size() == 40);
}

TEST_CASE("digests: equal for the same events however grouped, different otherwise",
          "[projection]") {
  ScratchDir dir;
  Log l;
  l.Thread("t-1");
  for (int i = 0; i < 30; ++i) l.Percept("p-" + std::to_string(i));
  l.Add(EventType::kPerceptAssigned, {{"percept_id", "p-3"}, {"thread_id", "t-1"}});
  l.Add(EventType::kArousalSet, {{"level", 0.9}});
  auto one = OpenDb(dir / "one");
  auto many = OpenDb(dir / "many");
  REQUIRE(one->Apply(l.events).ok());
  for (size_t i = 0; i < l.events.size(); i += 7)
    REQUIRE(many->Apply(std::span<const Event>(l.events).subspan(i, std::min<size_t>(7, l.events.size() - i))).ok());
  std::string d1 = *one->Digest();
  CHECK(d1.size() == 64);
  CHECK(d1 == *many->Digest());
  Log more = l;
  more.Add(EventType::kPerceptProcessed, {{"percept_id", "p-3"}});
  REQUIRE(one->Apply(std::span<const Event>(more.events).subspan(l.events.size())).ok());
  CHECK(*one->Digest() != d1);
}

TEST_CASE("CheckIndexes finds a missing index entry", "[projection]") {
  ScratchDir dir;
  Log l;
  l.Percept("p-1");
  {
    auto db = OpenDb(dir / "db");
    REQUIRE(db->Apply(l.events).ok());
    REQUIRE(db->CheckIndexes().ok());
    REQUIRE(db->Flush().ok());
  }
  {
    // Delete the by-time index entry behind the projection's back.
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    for (const char* n : kCfNames) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    REQUIRE(rocksdb::DB::Open(rocksdb::DBOptions(), dir / "db", cfs, &handles, &raw).ok());
    std::unique_ptr<rocksdb::Iterator> it(raw->NewIterator(rocksdb::ReadOptions(), handles[kIndexCf]));
    it->Seek("P|T|");
    REQUIRE(it->Valid());
    std::string key = it->key().ToString();
    it.reset();
    REQUIRE(raw->Delete(rocksdb::WriteOptions(), handles[kIndexCf], key).ok());
    for (auto* h : handles) raw->DestroyColumnFamilyHandle(h);
    delete raw;
  }
  auto db = OpenDb(dir / "db");
  Status s = db->CheckIndexes();
  CHECK(s.IsCorruption());
  CHECK_THAT(s.message(), Catch::Contains("index entry missing: P|T|"));
}

TEST_CASE("a read-only projection sees applied data and refuses to apply", "[projection]") {
  ScratchDir dir;
  Log l;
  l.Percept("p-1");
  auto writer = OpenDb(dir / "db");
  REQUIRE(writer->Apply(l.events).ok());
  auto reader = OpenDb(dir / "db", /*read_only=*/true);
  CHECK(reader->applied_seq() == 1);
  CHECK(reader->Get(Pool::kPercepts, "p-1")->has_value());
  l.Percept("p-2");
  CHECK(reader->Apply(std::span<const Event>(l.events).subspan(1)).IsFailedPrecondition());
}
