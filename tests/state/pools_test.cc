// The RocksDB projection: apply, queries, indexes, digest, read-only opens.
#include <rocksdb/db.h>

#include <catch2/catch.hpp>
#include <random>
#include <thread>

#include "pools_test_util.h"
#include "state/pool_layout.h"
#include "state/projection.h"
#include "state/recency.h"
#include "base/sha256.h"
#include "test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace pools_test {

using namespace limbic;
using namespace limbic::state;
using namespace limbic::testing;

namespace {

// Opens the DB at `path` as plain RocksDB, for `fn` to change it behind the
// projection's back.
template <typename Fn>
void BehindTheBack(const std::string& path, Fn fn) {
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const char* n : kCfNames) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  REQUIRE(rocksdb::DB::Open(rocksdb::DBOptions(), path, cfs, &handles, &raw).ok());
  fn(raw, handles);
  for (auto* h : handles) raw->DestroyColumnFamilyHandle(h);
  delete raw;
}

}  // namespace

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

// Found by the `events` fuzz target (fuzz/regressions/events/
// thread-deleted-then-made-again): a deleted thread's assigned percepts
// keep its id, and count for a thread made again with that id, in the live
// table as in the one loaded at open.
TEST_CASE("a thread made again with a deleted thread's id counts the percepts left assigned to it",
          "[projection]") {
  ScratchDir dir;
  Log l;
  l.Percept("p-1");
  l.Thread("t-1");
  l.Add(EventType::kPerceptAssigned, {{"percept_id", "p-1"}, {"thread_id", "t-1"}});
  l.Add(EventType::kThreadDeleted, {{"thread_id", "t-1"}});
  {
    auto db = OpenDb(dir / "db");
    REQUIRE(db->Apply(l.events).ok());
    CHECK(*db->CountUnprocessed("t-1") == 0);  // no such thread
    CHECK(db->CheckIndexes().ok());
    l.Thread("t-1");
    REQUIRE(db->Apply(std::span<const Event>(l.events).subspan(4)).ok());
    CHECK(*db->CountUnprocessed("t-1") == 1);
    auto summaries = db->ThreadSummaries(std::nullopt);
    REQUIRE(summaries.ok());
    REQUIRE(summaries->size() == 1);
    CHECK(summaries->front().unprocessed == 1);
    CHECK(db->CheckIndexes().ok());
    l.Add(EventType::kPerceptProcessed, {{"percept_id", "p-1"}});
    REQUIRE(db->Apply(std::span<const Event>(l.events).subspan(5)).ok());
    CHECK(*db->CountUnprocessed("t-1") == 0);
    CHECK(db->CheckIndexes().ok());
  }
  auto db = OpenDb(dir / "db");  // loaded from the indexes: the same counts
  CHECK(*db->CountUnprocessed("t-1") == 0);
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

TEST_CASE("new percepts by effective intensity: ranked from the table, as the formula ranks them",
          "[projection]") {
  ScratchDir dir;
  auto db = OpenDb(dir.path());
  std::mt19937 rng(5);
  Log log;
  log.Thread("t-1");
  int next = 0;
  std::vector<std::string> fresh;  // percepts still new
  RecencyParams params;
  // The reference: every new percept, scored and sorted (ties: newest
  // first, as the index lists them).
  auto reference = [&](TimeMs now, double threshold, size_t limit) {
    PerceptQuery q;
    q.status = "new";
    q.limit = 0;
    auto all = db->QueryPercepts(q, now);
    REQUIRE(all.ok());
    std::vector<std::pair<double, std::string>> scored;
    for (const json& x : *all) {
      double e = PerceptWithRecency(x, now, params)["effective_intensity"].get<double>();
      if (e >= threshold) scored.emplace_back(e, x["id"].get<std::string>());
    }
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::string> ids;
    for (size_t i = 0; i < scored.size() && i < limit; ++i) ids.push_back(scored[i].second);
    return ids;
  };
  for (int round = 0; round < 30; ++round) {
    // Arrivals (coarse intensities give ties), then some leave "new".
    for (int i = 0; i < 40; ++i) {
      fresh.push_back("p-" + std::to_string(next++));
      log.Percept(fresh.back(), "github", "issue", (rng() % 5) / 4.0);
    }
    for (int i = 0; i < 15; ++i) {
      size_t pick = rng() % fresh.size();
      std::string id = fresh[pick];
      fresh.erase(fresh.begin() + static_cast<long>(pick));
      switch (rng() % 3) {
        case 0:
          log.Add(EventType::kPerceptAssigned, {{"percept_id", id}, {"thread_id", "t-1"}});
          break;
        case 1:
          log.Add(EventType::kPerceptDropped, {{"percept_id", id}});
          break;
        default:
          log.Add(EventType::kPerceptRemoved, {{"percept_id", id}});
          break;
      }
    }
    REQUIRE(db->Apply(log.events).ok());
    log.events.clear();
    // Times before, at and long after the last arrival.
    TimeMs now = kT0 + static_cast<TimeMs>(log.seq) * 1000 +
                 static_cast<TimeMs>(rng() % 7200) * 1000 - 600'000;
    double threshold = (rng() % 4) / 10.0;
    size_t limit = 1 + rng() % 25;
    CAPTURE(round, now, threshold, limit);
    auto top = db->TopNewPercepts(now, params, threshold, limit);
    REQUIRE(top.ok());
    std::vector<std::string> got;
    for (const json& x : *top) got.push_back(x["id"].get<std::string>());
    CHECK(got == reference(now, threshold, limit));
    REQUIRE(db->CheckIndexes().ok());  // the table followed every commit
  }
}

TEST_CASE("digests: equal for the same events however grouped, different otherwise",
          "[projection]") {
  ScratchDir dir;
  Log l;
  l.Thread("t-1");
  l.Percepts(0, 29);
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

TEST_CASE("the digest is the SHA-256 of its documented text", "[projection]") {
  ScratchDir dir;
  // The digest's text, spelt out: applied_seq, then each pool's records
  // in key order, read one by one.
  auto text_of = [](const Projection& p) {
    std::string text = "applied_seq " + std::to_string(p.applied_seq()) + "\n";
    for (Pool pool : kAllPools) {
      text += "pool " + std::string(PoolName(pool)) + "\n";
      REQUIRE(p.ForEach(pool, [&](std::string_view id, const json& rec) {
                 text += std::string(id) + "\t" + Dump(rec) + "\n";
                 return true;
               }).ok());
    }
    return text;
  };
  auto check = [&](const Projection& p) { CHECK(*p.Digest() == Sha256::Hex(text_of(p))); };
  auto empty = OpenDb(dir / "empty");
  check(*empty);
  Log l;
  l.Percept("p-1");
  auto one = OpenDb(dir / "one");
  REQUIRE(one->Apply(l.events).ok());
  check(*one);
  l.Thread("t-1");
  l.Thread("t-2");
  l.Percepts(2, 60);
  l.Add(EventType::kPerceptAssigned, {{"percept_id", "p-3"}, {"thread_id", "t-1"}});
  l.Add(EventType::kArousalSet, {{"level", 0.9}});
  l.Add(EventType::kActionEnqueued, {{"action_id", "a-1"},
                                     {"effector", "log"},
                                     {"action_type", "reply"},
                                     {"payload", json::object()},
                                     {"idempotency_key", "k-1"}});
  auto many = OpenDb(dir / "many");
  REQUIRE(many->Apply(l.events).ok());
  check(*many);
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
  // Delete the by-time index entry behind the projection's back.
  BehindTheBack(dir / "db", [](rocksdb::DB* raw, const std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
    std::unique_ptr<rocksdb::Iterator> it(raw->NewIterator(rocksdb::ReadOptions(), handles[kIndexCf]));
    it->Seek("P|T|");
    REQUIRE(it->Valid());
    std::string key = it->key().ToString();
    it.reset();
    REQUIRE(raw->Delete(rocksdb::WriteOptions(), handles[kIndexCf], key).ok());
  });
  auto db = OpenDb(dir / "db");
  Status s = db->CheckIndexes();
  CHECK(s.IsCorruption());
  CHECK_THAT(s.message(), Catch::Contains("index entry missing: P|T|"));
}

TEST_CASE("a stored thread that is not a JSON object stops the event that reads it, named",
          "[projection]") {
  ScratchDir dir;
  Log l;
  l.Thread("t-1");
  l.Thread("t-2");
  {
    auto db = OpenDb(dir / "db");
    REQUIRE(db->Apply(l.events).ok());
    REQUIRE(db->Flush().ok());
  }
  BehindTheBack(dir / "db", [](rocksdb::DB* raw, const std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
    const auto threads = handles[RecordCf(Pool::kThreads)];
    REQUIRE(raw->Put(rocksdb::WriteOptions(), threads, "t-1", R"({"id":"t-1","status":)").ok());
    REQUIRE(raw->Put(rocksdb::WriteOptions(), threads, "t-2", R"(["t-2"])").ok());
  });
  auto db = OpenDb(dir / "db");
  const uint64_t applied = db->applied_seq();
  for (const char* id : {"t-1", "t-2"}) {
    Log more = l;
    Event& e = more.Add(EventType::kThreadUpdated, {{"thread_id", id}, {"salience", 0.9}});
    Status s = db->Apply(std::span<const Event>(&e, 1));
    CHECK(s.IsCorruption());
    CHECK_THAT(s.message(), Catch::Contains(std::string("record threads/") + id + ": not"));
    CHECK(db->applied_seq() == applied);
  }
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

namespace {

// What Counts() must say: every pool and action status counted from RocksDB.
RecordCounts CountedNow(const Projection& db) {
  RecordCounts c;
  for (size_t i = 0; i < std::size(kAllPools); ++i) c.pools[i] = *db.Count(kAllPools[i]);
  for (size_t i = 0; i < kActionStatuses.size(); ++i)
    c.actions[i] = db.ListActions(std::string(kActionStatuses[i]))->size();
  return c;
}

}  // namespace

TEST_CASE("record counts follow every commit once loaded, also those during the load",
          "[projection]") {
  ScratchDir dir;
  auto db = OpenDb(dir / "db");
  Log l;
  l.Thread("t-1");
  l.Percepts(0, 1999);
  REQUIRE(db->Apply(l.events).ok());
  CHECK_FALSE(db->Counts().has_value());  // not counted until asked
  // Loaded on another thread while commits go on: counted once, no more.
  Log more;
  more.seq = l.seq;
  for (int i = 0; i < 300; ++i) {
    more.Add(EventType::kActionEnqueued, {{"action_id", "a-" + std::to_string(i)}, {"effector", "log"},
                                          {"action_type", "x"}, {"payload", i},
                                          {"idempotency_key", "k" + std::to_string(i)}});
    if (i % 3 == 0) more.Add(EventType::kActionSent, {{"action_id", "a-" + std::to_string(i)}, {"attempt", 1}});
    more.Add(EventType::kPerceptRemoved, {{"percept_id", "p-" + std::to_string(i)}});
  }
  std::thread loader([&] { REQUIRE(db->LoadTables().ok()); });
  for (size_t at = 0; at < more.events.size(); at += 7) {
    size_t n = std::min<size_t>(7, more.events.size() - at);
    REQUIRE(db->Apply(std::span<const Event>(more.events).subspan(at, n)).ok());
  }
  loader.join();
  REQUIRE(db->Counts().has_value());
  CHECK(*db->Counts() == CountedNow(*db));
  CHECK(db->Counts()->pools[static_cast<size_t>(Pool::kPercepts)] == 1700);
  CHECK(db->CheckIndexes().ok());
}

}  // namespace pools_test
