// The reducer: what each event does to the records, and what it refuses;
// overlays.
#include "state/reducer.h"

#include <catch2/catch.hpp>

#include "pools_test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace reducer_test {

using namespace limbic;
using namespace limbic::state;
using namespace limbic::testing;

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
  l.Add(EventType::kThreadCreated,
        {{"thread_id", "t-1"}, {"goal", "g"}, {"salience", 0.4}, {"state", {{"phase", "triage"}}}});
  l.Add(EventType::kThreadUpdated, {{"thread_id", "t-1"},
                                    {"salience", 0.9},
                                    {"state", {{"context", {{"pr", 7}}}, {"phase", nullptr}}}});
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

TEST_CASE("deleting a thread unassigns its percepts, but not in an event written before that",
          "[reducer]") {
  Log l;
  l.Thread("t-1");
  for (const char* id : {"p-1", "p-2", "p-3"}) {
    l.Percept(id);
    l.Add(EventType::kPerceptAssigned, {{"percept_id", id}, {"thread_id", "t-1"}});
  }
  l.Add(EventType::kPerceptProcessed, {{"percept_id", "p-2"}});
  l.Add(EventType::kPerceptRemoved, {{"percept_id", "p-3"}});  // gone: skipped
  Log old = l;
  old.Add(EventType::kThreadDeleted, {{"thread_id", "t-1"}});  // as an older limbic wrote it
  l.Add(EventType::kThreadDeleted, {{"thread_id", "t-1"}, {"unassign_percepts", true}});

  Overlay now(nullptr);
  REQUIRE(ReduceAll(l.events, &now).ok());
  CHECK_FALSE(now.Get(Pool::kThreads, "t-1")->has_value());
  json p1 = Rec(now, Pool::kPercepts, "p-1");
  CHECK(p1["status"] == "new");
  CHECK(p1["thread_id"].is_null());
  json p2 = Rec(now, Pool::kPercepts, "p-2");
  CHECK(p2["status"] == "processed");  // keeps its status, loses the thread
  CHECK(p2["thread_id"].is_null());

  Overlay before(nullptr);
  REQUIRE(ReduceAll(old.events, &before).ok());
  CHECK(Rec(before, Pool::kPercepts, "p-1")["status"] == "assigned");
  CHECK(Rec(before, Pool::kPercepts, "p-1")["thread_id"] == "t-1");
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
  l.Add(EventType::kActionEnqueued, {{"action_id", "a-1"},
                                     {"effector", "log"},
                                     {"action_type", "ack"},
                                     {"payload", {{"x", 1}}},
                                     {"idempotency_key", "k-1"}});
  l.Add(EventType::kActionSent, {{"action_id", "a-1"}, {"attempt", 1}});
  l.Add(EventType::kActionFailed, {{"action_id", "a-1"},
                                   {"attempt", 1},
                                   {"error", "503"},
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
  l.Add(EventType::kActionSent,
        {{"action_id", "a-1"}, {"attempt", 3}});  // redelivery after a crash
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

// The state after the log and `more`, on an overlay of its own: a refused
// event leaves its overlay unusable, as the engine refuses the whole group.
static std::unique_ptr<Overlay> StateOf(const Log& l, std::vector<Event> more) {
  auto o = std::make_unique<Overlay>(nullptr);
  std::vector<Event> all = l.events;
  all.insert(all.end(), more.begin(), more.end());
  REQUIRE(ReduceAll(all, o.get()).ok());
  return o;
}

TEST_CASE("an action that requires approval waits, approved it is pending, rejected it is final",
          "[reducer]") {
  for (bool approve : {true, false}) {
    Log l;
    l.Add(EventType::kActionEnqueued, {{"action_id", "a-1"},
                                       {"effector", "log"},
                                       {"action_type", "ack"},
                                       {"payload", 1},
                                       {"idempotency_key", "k"},
                                       {"require_approval", true}});
    auto state_of = [&l](std::vector<Event> more) { return StateOf(l, std::move(more)); };
    CHECK(Rec(*state_of({}), Pool::kActions, "a-1")["status"] == "pending_approval");
    // Nothing delivers it meanwhile: the outbox's first step is refused.
    Status sent =
        Reduce(Event{9, 0, EventType::kActionSent, {{"action_id", "a-1"}, {"attempt", 1}}},
               state_of({}).get());
    CHECK(sent.code() == Status::Code::kFailedPrecondition);
    CHECK_THAT(sent.message(), Catch::Contains("is pending_approval"));
    Event decision{10,
                   0,
                   approve ? EventType::kActionApproved : EventType::kActionRejected,
                   {{"action_id", "a-1"}, {"actor", "cli"}, {"reason", "looks wrong"}}};
    json a = Rec(*state_of({decision}), Pool::kActions, "a-1");
    CHECK(a["status"] == (approve ? "pending" : "rejected"));
    if (!approve) CHECK(a["last_error"] == "looks wrong");
    // A second decision is refused: it is not waiting any more.
    Status again = Reduce(Event{11, 0, EventType::kActionApproved, {{"action_id", "a-1"}}},
                          state_of({decision}).get());
    CHECK(again.code() == Status::Code::kFailedPrecondition);
    // A rejected action is finished: prune takes it; a pending one is not.
    Status pruned = Reduce(Event{12, 0, EventType::kActionsPruned, {{"action_ids", {"a-1"}}}},
                           state_of({decision}).get());
    CHECK(pruned.ok() == !approve);
  }
  // Without require_approval (or with false) it is pending at once.
  Log l;
  l.Add(EventType::kActionEnqueued, {{"action_id", "a-2"},
                                     {"effector", "log"},
                                     {"action_type", "ack"},
                                     {"payload", 1},
                                     {"idempotency_key", "k"},
                                     {"require_approval", false}});
  Overlay o(nullptr);
  REQUIRE(ReduceAll(l.events, &o).ok());
  CHECK(Rec(o, Pool::kActions, "a-2")["status"] == "pending");
  Status approved = Reduce(Event{5, 0, EventType::kActionApproved, {{"action_id", "a-2"}}}, &o);
  CHECK_THAT(approved.message(), Catch::Contains("action a-2 is pending"));
}

TEST_CASE("a dead action retried is pending again with its attempts at 0, only a dead one",
          "[reducer]") {
  Log l;
  l.Add(EventType::kActionEnqueued, {{"action_id", "a-1"},
                                     {"effector", "log"},
                                     {"action_type", "ack"},
                                     {"payload", 1},
                                     {"idempotency_key", "k"}});
  auto state_of = [&l](std::vector<Event> more) { return StateOf(l, std::move(more)); };
  // Pending: not dead, so not retried.
  Status early =
      Reduce(Event{9, 0, EventType::kActionRetried, {{"action_id", "a-1"}}}, state_of({}).get());
  CHECK(early.code() == Status::Code::kFailedPrecondition);
  CHECK_THAT(early.message(), Catch::Contains("action a-1 is pending"));
  l.Add(EventType::kActionSent, {{"action_id", "a-1"}, {"attempt", 3}});
  l.Add(EventType::kActionDead, {{"action_id", "a-1"}, {"attempt", 3}, {"error", "HTTP 404"}});
  Event retried{20,
                0,
                EventType::kActionRetried,
                {{"action_id", "a-1"}, {"actor", "ui"}, {"reason", "fixed"}}};
  json a = Rec(*state_of({retried}), Pool::kActions, "a-1");
  CHECK(a["status"] == "pending");
  CHECK(a["attempts"] == 0);
  CHECK(a["last_error"] == "HTTP 404");  // until a new attempt replaces it
  CHECK(a["next_attempt_at"].is_null());
  // The outbox's next step is allowed; a second retry is not.
  auto o = state_of({retried});
  CHECK(
      Reduce(Event{21, 0, EventType::kActionSent, {{"action_id", "a-1"}, {"attempt", 1}}}, o.get())
          .ok());
  Status again = Reduce(Event{21, 0, EventType::kActionRetried, {{"action_id", "a-1"}}},
                        state_of({retried}).get());
  CHECK(again.code() == Status::Code::kFailedPrecondition);
  Status unknown =
      Reduce(Event{21, 0, EventType::kActionRetried, {{"action_id", "a-9"}}}, state_of({}).get());
  CHECK(unknown.code() == Status::Code::kNotFound);
}

TEST_CASE("reflex records: put keeps counters, fired counts, enable, delete", "[reducer]") {
  Log l;
  l.Add(EventType::kReflexPut,
        {{"reflex_id", "r-1"}, {"rule", {{"id", "r-1"}, {"enabled", false}}}});
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
      {[](Log&) {},
       EventType::kPerceptAssigned,
       {{"percept_id", "p-9"}, {"thread_id", "t-1"}},
       Status::Code::kNotFound,
       "percept p-9 not found"},
      {[](Log& l) { l.Percept("p-1"); },
       EventType::kPerceptAssigned,
       {{"percept_id", "p-1"}, {"thread_id", "t-9"}},
       Status::Code::kNotFound,
       "thread t-9 not found"},
      {[](Log& l) { l.Percept("p-1"); },
       EventType::kPerceptArrived,
       {{"percept_id", "p-1"}, {"source", "s"}, {"percept_type", "t"}, {"intensity", 0.1}},
       Status::Code::kAlreadyExists,
       "percept p-1 already exists"},
      {[](Log& l) {
         l.Percept("p-1");
         l.Thread("t-1");
         l.Add(EventType::kPerceptProcessed, {{"percept_id", "p-1"}});
       },
       EventType::kPerceptAssigned,
       {{"percept_id", "p-1"}, {"thread_id", "t-1"}},
       Status::Code::kFailedPrecondition,
       "percept p-1 is processed"},
      {[](Log& l) {
         l.Thread("t-1");
         l.Add(EventType::kThreadDeleted, {{"thread_id", "t-1"}});
       },
       EventType::kThreadCompleted,
       {{"thread_id", "t-1"}},
       Status::Code::kNotFound,
       "thread_completed seq 3: thread t-1 not found"},
      {[](Log& l) {
         l.Thread("t-1");
         l.Add(EventType::kThreadCompleted, {{"thread_id", "t-1"}});
       },
       EventType::kThreadUpdated,
       {{"thread_id", "t-1"}, {"salience", 0.1}},
       Status::Code::kFailedPrecondition,
       "thread t-1 is complete"},
      {[](Log& l) {
         l.Thread("t-1");
         l.Add(EventType::kThreadCompleted, {{"thread_id", "t-1"}});
         l.Percept("p-1");
       },
       EventType::kPerceptAssigned,
       {{"percept_id", "p-1"}, {"thread_id", "t-1"}},
       Status::Code::kFailedPrecondition,
       "thread t-1 is complete"},
      {[](Log&) {},
       EventType::kActionEnqueued,
       {{"action_id", "a-1"},
        {"effector", "log"},
        {"action_type", "x"},
        {"payload", 1},
        {"idempotency_key", "k"},
        {"thread_id", "t-7"}},
       Status::Code::kNotFound,
       "thread t-7"},
      {[](Log& l) {
         l.Add(EventType::kActionEnqueued, {{"action_id", "a-1"},
                                            {"effector", "log"},
                                            {"action_type", "x"},
                                            {"payload", 1},
                                            {"idempotency_key", "k"}});
       },
       EventType::kActionComplete,
       {{"action_id", "a-1"}},
       Status::Code::kFailedPrecondition,
       "action a-1 is pending"},
      {[](Log& l) {
         l.Add(EventType::kActionEnqueued, {{"action_id", "a-1"},
                                            {"effector", "log"},
                                            {"action_type", "x"},
                                            {"payload", 1},
                                            {"idempotency_key", "k"}});
       },
       EventType::kActionsPruned,
       {{"action_ids", {"a-1"}}},
       Status::Code::kFailedPrecondition,
       "not complete, dead or rejected"},
      {[](Log& l) {
         l.Add(EventType::kActionEnqueued, {{"action_id", "a-1"},
                                            {"effector", "log"},
                                            {"action_type", "x"},
                                            {"payload", 1},
                                            {"idempotency_key", "k"}});
         l.Add(EventType::kActionDead, {{"action_id", "a-1"}, {"error", "gone"}});
       },
       EventType::kActionSent,
       {{"action_id", "a-1"}, {"attempt", 1}},
       Status::Code::kFailedPrecondition,
       "action a-1 is dead"},
      {[](Log&) {},
       EventType::kReflexDeleted,
       {{"reflex_id", "r-1"}},
       Status::Code::kNotFound,
       "reflex r-1 not found"},
      {[](Log&) {},
       EventType::kThreadCreated,
       {{"thread_id", "t-1"}, {"goal", "g"}, {"salience", 0.5}, {"from_percept", "p-404"}},
       Status::Code::kNotFound,
       "percept p-404"},
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
  CHECK(std::get<json>(*o.changes().at({Pool::kThreads, "t-2"}).record).is_null());
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

namespace {

// A base that counts the records it is asked to read.
class CountingReader final : public RecordReader {
 public:
  explicit CountingReader(const RecordReader* inner) : inner_(inner) {}
  Result<std::optional<json>> Get(Pool pool, std::string_view id) const override {
    ++reads;
    return inner_->Get(pool, id);
  }
  Result<bool> Contains(Pool pool, std::string_view id) const override {
    ++checks;
    return inner_->Contains(pool, id);
  }
  mutable int reads = 0;
  mutable int checks = 0;

 private:
  const RecordReader* inner_;
};

}  // namespace

TEST_CASE(
    "contains answers from the changes, then the reads remembered, then the base, reading no "
    "record",
    "[reducer]") {
  Overlay records(nullptr);
  records.Put(Pool::kThreads, "t-1", {{"v", 1}}, 1);
  records.Put(Pool::kThreads, "t-2", {{"v", 2}}, 2);
  CountingReader base(&records);
  Overlay o(&base);
  o.remember_base_reads(true);
  o.Put(Pool::kThreads, "t-3", {{"v", 3}}, 3);
  o.Delete(Pool::kThreads, "t-2", 4);
  CHECK(*o.Contains(Pool::kThreads, "t-3"));        // changed here
  CHECK_FALSE(*o.Contains(Pool::kThreads, "t-2"));  // deleted here, though the base has it
  CHECK(base.checks == 0);
  CHECK(*o.Contains(Pool::kThreads, "t-1"));  // the base's
  CHECK_FALSE(*o.Contains(Pool::kThreads, "t-404"));
  CHECK_FALSE(*o.Contains(Pool::kPercepts, "t-1"));  // another pool
  CHECK(base.checks == 3);
  CHECK(base.reads == 0);
  // A record found is not read, so not remembered; one absent is, as absent.
  CHECK(o.BaseRead({Pool::kThreads, "t-1"}) == nullptr);
  const std::optional<Record>* absent = o.BaseRead({Pool::kThreads, "t-404"});
  REQUIRE(absent);
  CHECK_FALSE(absent->has_value());
  CHECK_FALSE(*o.Contains(Pool::kThreads, "t-404"));
  CHECK(base.checks == 3);  // answered from what it remembered
  Overlay bulk(&base);      // as a bulk load's overlay: absence is asked again
  bulk.remember_base_reads(true);
  bulk.remember_absent(false);
  CHECK_FALSE(*bulk.Contains(Pool::kThreads, "t-404"));
  CHECK(bulk.BaseRead({Pool::kThreads, "t-404"}) == nullptr);
  CHECK(base.checks == 4);
  // A record read below is answered from what the read found.
  REQUIRE(o.Get(Pool::kThreads, "t-1")->has_value());
  CHECK(base.reads == 1);
  CHECK(*o.Contains(Pool::kThreads, "t-1"));
  CHECK(base.checks == 4);
  // The default reads the record.
  const RecordReader& plain = records;
  CHECK(plain.RecordReader::Contains(Pool::kThreads, "t-1").value());
  CHECK_FALSE(plain.RecordReader::Contains(Pool::kThreads, "t-9").value());
}

}  // namespace reducer_test
