// Replay's bulk load: the key order of its table files, going on after a
// flush, stopping at a bad event, what reaches the disk, the last write.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <thread>

#include "pools_test_util.h"
#include "state/pool_layout.h"
#include "test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace bulk_load_test {

using namespace limbic;
using namespace limbic::state;
using namespace limbic::testing;

namespace {

// The bulk load's own table files in a DB dir (none once RocksDB took them).
std::vector<std::string> BulkFilesIn(const std::string& db_dir) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(db_dir))
    if (entry.path().filename().string().starts_with("bulk-")) out.push_back(entry.path().string());
  return out;
}

// A finished bulk load of `events` into `db_dir`: the records, digest and
// applied_seq of applying them one by one (`plain`), its indexes whole, no
// table file of its own left behind.
void CheckLoadedAs(const Projection& bulk, const Projection& plain, const std::vector<Event>& events,
                   const std::string& db_dir) {
  CHECK(bulk.applied_seq() == events.size());
  CHECK(*bulk.Digest() == *plain.Digest());
  CHECK(bulk.CheckIndexes().ok());
  CHECK(BulkFilesIn(db_dir).empty());
}

}  // namespace

TEST_CASE("a prepared write keeps each op's key and value apart in its one buffer",
          "[projection]") {
  PreparedWrite write;
  write.Add(kIndexCf, false, std::string("P|s|chat\0k", 10), std::string("v\0w", 3));
  write.Add(1, true, "p-1");
  write.AddPut(2, "t-1", [](std::string* out) { out->append(R"({"a":1})"); });
  write.Add(kIndexCf, false, "k2");  // a put of an empty value
  REQUIRE(write.ops.size() == 4);
  CHECK(write.key(write.ops[0]) == std::string("P|s|chat\0k", 10));
  CHECK(write.value(write.ops[0]) == std::string("v\0w", 3));
  CHECK_FALSE(write.ops[0].erase);
  CHECK(write.key(write.ops[1]) == "p-1");
  CHECK(write.value(write.ops[1]).empty());
  CHECK(write.ops[1].erase);
  CHECK(write.ops[1].cf == 1);
  CHECK(write.key(write.ops[2]) == "t-1");
  CHECK(write.value(write.ops[2]) == R"({"a":1})");
  CHECK_FALSE(write.ops[2].erase);
  CHECK(write.key(write.ops[3]) == "k2");
  CHECK(write.value(write.ops[3]).empty());
  CHECK_FALSE(write.ops[3].erase);
}

TEST_CASE("index entries are the bytes pool_layout.h's grammar spells", "[projection]") {
  // Spelt out here byte by byte, apart from the code that makes them (the
  // checks that compare indexes use that same code).
  const std::string nul(1, '\0');
  // 2026-01-02T03:04:05.006Z, as TS8 (big-endian ms, sign bit flipped), RT8 (its complement).
  const TimeMs t = 1767323045006;
  std::string ts8;
  for (int i = 7; i >= 0; --i)
    ts8.push_back(
        static_cast<char>(((static_cast<uint64_t>(t) ^ (uint64_t{1} << 63)) >> (8 * i)) & 0xff));
  std::string rt8 = ts8;
  for (char& c : rt8) c = static_cast<char>(~c);
  const std::string rseq8 = std::string(7, '\xff') + std::string(1, static_cast<char>(~uint8_t{9}));
  const std::string at = rt8 + rseq8 + "p-9";
  const json percept = {
      {"id", "p-9"},        {"seq", 9u},        {"ts", "2026-01-02T03:04:05.006Z"},
      {"source", "chat"},   {"type", "msg"},    {"status", "assigned"},
      {"thread_id", "t-1"}, {"intensity", 0.5}, {"data", json::object()}};
  CHECK(IndexEntries(Pool::kPercepts, "p-9", percept) ==
        std::vector<IndexEntry>{{"P|T|" + at, ""},
                                {"P|s|chat" + nul + at, ""},
                                {"P|y|msg" + nul + at, ""},
                                {"P|u|assigned" + nul + at, ""},
                                {"P|h|t-1" + nul + at, ""},
                                {"P|a|t-1" + nul + at, ""}});
  json fresh = percept;
  fresh["status"] = "new";
  fresh["thread_id"] = nullptr;
  CHECK(IndexEntries(Pool::kPercepts, "p-9", fresh) ==
        std::vector<IndexEntry>{{"P|T|" + at, ""},
                                {"P|s|chat" + nul + at, ""},
                                {"P|y|msg" + nul + at, ""},
                                {"P|u|new" + nul + at, ""},
                                {"P|n|chat" + nul + at, ""}});
  const json action = {{"id", "a-1"}, {"status", "pending"}, {"ts", "2026-01-02T03:04:05.006Z"}};
  CHECK(IndexEntries(Pool::kActions, "a-1", action) ==
        std::vector<IndexEntry>{{"A|u|pending" + nul + ts8 + "a-1", ""}});
  const json thread = {{"id", "t-1"},
                       {"status", "active"},
                       {"salience", 0.5},
                       {"last_active", "2026-01-02T03:04:05.006Z"}};
  std::string sal_last;
  uint64_t bits;
  const double salience = 0.5;
  std::memcpy(&bits, &salience, sizeof bits);
  for (uint64_t v : {bits, static_cast<uint64_t>(t)})
    for (int i = 0; i < 8; ++i) sal_last.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  CHECK(IndexEntries(Pool::kThreads, "t-1", thread) ==
        std::vector<IndexEntry>{{"T|u|active" + nul + "t-1", sal_last}});
  const json association = {
      {"id", "s-1"}, {"entity_a", "x"}, {"relation", "knows"}, {"entity_b", "y"}};
  CHECK(IndexEntries(Pool::kAssociations, "s-1", association) ==
        std::vector<IndexEntry>{{"S|k|x" + nul + "knows" + nul + "y" + nul + "s-1", ""},
                                {"S|e|x" + nul + "s-1", ""},
                                {"S|e|y" + nul + "s-1", ""}});
}

TEST_CASE("an index entry list tells its entries by key, and by key and value", "[projection]") {
  IndexEntryList list;
  list.Add({"T|u|", "active", std::string_view("\0", 1), "t-1"}, "sal");
  list.Add({"P|T|", "at"});
  REQUIRE(list.size() == 2);
  CHECK(list.key(0) == std::string("T|u|active\0t-1", 14));
  CHECK(list.value(0) == "sal");
  CHECK(list.key(1) == "P|T|at");
  CHECK(list.value(1).empty());
  CHECK(list.HasKey(std::string("T|u|active\0t-1", 14)));
  CHECK(list.Has(std::string("T|u|active\0t-1", 14), "sal"));
  // Same key, another value (a thread's salience changed): not the same entry.
  CHECK_FALSE(list.Has(std::string("T|u|active\0t-1", 14), "other"));
  CHECK_FALSE(list.HasKey("T|u|active"));
  list.clear();
  CHECK(list.size() == 0);
  CHECK_FALSE(list.HasKey("P|T|at"));
}

TEST_CASE("a bulk write's key order is RocksDB's bytewise order, the last op of a key winning",
          "[projection]") {
  // Keys cut by the index prefix rule in every way: names that prefix one
  // another, 0x00 and 0xff bytes in and right after the prefix, tails
  // shorter than 8 bytes, tails past 16 bytes that tie on their first 16,
  // keys equal to their prefix, repeats.
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
  PreparedWrite write;
  for (int i = 0; i < 4000; ++i) {
    const auto cf = static_cast<uint8_t>(rng() % 3 == 0 ? rng() % 10 : kIndexCf);
    const std::string key = heads[rng() % heads.size()] + piece(3) +
                            (rng() % 2 ? std::string(1, '\0') : "") + piece(12) +
                            (rng() % 4 == 0 ? std::string(16, 'a') + piece(4) : "");
    write.Add(cf, false, key, std::to_string(i));  // the value tells ops on one key apart
    if (rng() % 8 == 0)
      write.Add(cf, false, key, std::to_string(i) + "b");  // the same key again, later
  }
  // What KeyOrder must give for `w`: its ops stably sorted by (cf, key),
  // then of the ops on one key only the last one given.
  auto expected = [](const PreparedWrite& w) {
    const auto& ops = w.ops;
    std::vector<uint32_t> want(ops.size());
    for (uint32_t i = 0; i < want.size(); ++i) want[i] = i;
    std::stable_sort(want.begin(), want.end(), [&](uint32_t a, uint32_t b) {
      return ops[a].cf != ops[b].cf ? ops[a].cf < ops[b].cf : w.key(ops[a]) < w.key(ops[b]);
    });
    std::vector<uint32_t> last;
    for (size_t i = 0; i < want.size(); ++i) {
      const bool superseded = i + 1 < want.size() && ops[want[i]].cf == ops[want[i + 1]].cf &&
                              w.key(ops[want[i]]) == w.key(ops[want[i + 1]]);
      if (!superseded) last.push_back(want[i]);
    }
    return last;
  };
  // `write`'s ops given again in the order `by` puts them (stably).
  auto reordered = [&write](auto by) {
    std::vector<uint32_t> order(write.ops.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), by);
    PreparedWrite w;
    for (uint32_t i : order)
      w.Add(write.ops[i].cf, false, write.key(write.ops[i]), write.value(write.ops[i]));
    return w;
  };
  auto key_of = [&write](uint32_t i) { return std::pair(write.ops[i].cf, write.key(write.ops[i])); };
  SECTION("ops in no order") {
    const auto last = expected(write);
    REQUIRE(last.size() < write.ops.size());  // the log above has repeats
    CHECK(KeyOrder(write) == last);
  }
  // KeyOrder keeps a group already in order, and reverses one in exactly
  // the opposite order; a group with two ops on one key is never reversed
  // (the later op must still win).
  SECTION("ops already in key order, repeats in the order given") {
    PreparedWrite w = reordered([&](uint32_t a, uint32_t b) { return key_of(a) < key_of(b); });
    CHECK(KeyOrder(w) == expected(w));
  }
  SECTION("ops in the opposite key order, repeats in the order given") {
    PreparedWrite w = reordered([&](uint32_t a, uint32_t b) { return key_of(b) < key_of(a); });
    CHECK(KeyOrder(w) == expected(w));
  }
  SECTION("ops in the opposite key order, without repeats") {
    PreparedWrite unique;
    std::set<std::pair<uint8_t, std::string>> seen;
    for (const auto& op : write.ops)
      if (seen.emplace(op.cf, std::string(write.key(op))).second)
        unique.Add(op.cf, false, write.key(op), write.value(op));
    write = std::move(unique);
    PreparedWrite w = reordered([&](uint32_t a, uint32_t b) { return key_of(b) < key_of(a); });
    CHECK(KeyOrder(w) == expected(w));
  }
  CHECK(KeyOrder(PreparedWrite()).empty());
}

TEST_CASE("a bulk load goes on after a flush and ends as applying event by event",
          "[projection]") {
  ScratchDir dir;
  Log l;
  l.Thread("t-1");
  l.Percepts(1, 4);
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
  CheckLoadedAs(*bulk, *plain, l.events, dir / "bulk");
  // A bulk load keeps no thread table; the DB it leaves opens with it.
  CHECK_FALSE(bulk->CountUnprocessed("t-1").ok());
  bulk.reset();
  CHECK(*OpenDb(dir / "bulk")->CountUnprocessed("t-1") == 0);
}

TEST_CASE("a bulk write's two halves merge in key order: one triple's two associations",
          "[projection]") {
  // A bulk write prepares the first and second half of its changes apart
  // and merges them per column family. Two associations of the same
  // (a, relation, b) once shared an index key (the later one held it);
  // since layout 5 each has its own, and the lookup answers the first id.
  // Here they land in different halves of one write (the first change and
  // the last), and in separate writes when events come one at a time and
  // writes are small.
  for (size_t flush : {size_t{1000}, size_t{2}, size_t{3}}) {
    ScratchDir dir;
    Log l;
    auto associate = [&l](const std::string& id) {
      l.Add(EventType::kAssociationAdded, {{"association_id", id},
                                           {"entity_a", "ann"},
                                           {"relation", "knows"},
                                           {"entity_b", "bob"}});
    };
    associate("as-1");
    l.Thread("t-1");
    l.Percepts(1, 6);
    associate("as-2");
    auto plain = OpenDb(dir / "plain");
    REQUIRE(plain->Apply(l.events).ok());
    auto bulk = OpenBulk(dir / "bulk", flush);
    if (flush == 1000) {
      REQUIRE(bulk->Apply(l.events).ok());
    } else {
      for (size_t i = 0; i < l.events.size(); ++i)
        REQUIRE(bulk->Apply(std::span<const Event>(l.events).subspan(i, 1)).ok());
    }
    REQUIRE(bulk->Flush().ok());
    INFO("flush every " << flush);
    auto want = plain->FindAssociation("ann", "knows", "bob");
    auto got = bulk->FindAssociation("ann", "knows", "bob");
    REQUIRE(want.ok());
    REQUIRE(got.ok());
    CHECK(*want == std::optional<std::string>("as-1"));
    CHECK(*got == *want);
    CHECK(*bulk->Digest() == *plain->Digest());
    CHECK(bulk->CheckIndexes().ok());
    CHECK(plain->CheckIndexes().ok());
    CHECK(BulkFilesIn(dir / "bulk").empty());
  }
}

TEST_CASE("a bulk write's thread table takes a thread made in its second half before counts for it",
          "[projection]") {
  // p-1 is the write's first change and t-1 its second: the percept's
  // count for the thread is prepared in the first half, the thread's row
  // in the second. The table must count the percept as applying one by
  // one does.
  ScratchDir dir;
  Log l;
  l.Percepts(1, 1);
  l.Thread("t-1");
  l.Add(EventType::kPerceptAssigned, {{"percept_id", "p-1"}, {"thread_id", "t-1"}});
  auto plain = OpenDb(dir / "plain");
  REQUIRE(plain->Apply(l.events).ok());
  auto bulk = OpenBulk(dir / "bulk", 1000);
  REQUIRE(bulk->Apply(l.events).ok());
  REQUIRE(bulk->Flush().ok());
  CHECK(*plain->CountUnprocessed("t-1") == 1);
  CheckLoadedAs(*bulk, *plain, l.events, dir / "bulk");
  // A bulk load keeps no thread table; the DB it leaves opens with it.
  CHECK_FALSE(bulk->CountUnprocessed("t-1").ok());
  bulk.reset();
  CHECK(*OpenDb(dir / "bulk")->CountUnprocessed("t-1") == 1);
}

TEST_CASE("a bulk load checks that records exist through every layer below it", "[projection]") {
  // An action names a thread, a thread a percept: checked, not read. Each
  // record is written before the event that names it (one event a write),
  // so the checks reach the write under way, the resident records and
  // (with none resident) RocksDB.
  const size_t resident = GENERATE(size_t{0}, size_t{256} << 20);
  INFO("resident bytes " << resident);
  ScratchDir dir;
  Log l;
  l.Thread("t-1");
  l.Percept("p-1");
  l.Add(EventType::kThreadCreated,
        {{"thread_id", "t-2"}, {"goal", "g"}, {"salience", 0.5}, {"from_percept", "p-1"}});
  for (const char* thread : {"t-1", "t-2", "t-1"})
    l.Add(EventType::kActionEnqueued, {{"action_id", std::string("a-") + std::to_string(l.seq)},
                                       {"effector", "log"},
                                       {"action_type", "reply"},
                                       {"payload", json::object()},
                                       {"idempotency_key", std::string("k-") + std::to_string(l.seq)},
                                       {"thread_id", thread}});
  auto plain = OpenDb(dir / "plain");
  REQUIRE(plain->Apply(l.events).ok());
  auto open = [&](const std::string& path) {
    ProjectionOptions o;
    o.path = path;
    o.bulk_load = true;
    o.bulk_flush_records = 1;
    o.bulk_resident_bytes = resident;
    return MustOpen(o);
  };
  auto bulk = open(dir / "bulk");
  for (size_t i = 0; i < l.events.size(); ++i)
    REQUIRE(bulk->Apply(std::span<const Event>(l.events).subspan(i, 1)).ok());
  // What does not exist is refused, what does is refused as a new one.
  Log bad = l;
  Event& missing = bad.Add(EventType::kActionEnqueued, {{"action_id", "a-x"},
                                                       {"effector", "log"},
                                                       {"action_type", "reply"},
                                                       {"payload", json::object()},
                                                       {"idempotency_key", "k-x"},
                                                       {"thread_id", "t-404"}});
  Status s = bulk->Apply(std::span<const Event>(&missing, 1));
  CHECK(s.IsNotFound());
  CHECK(s.message().find("thread t-404 not found") != std::string::npos);
  auto again = open(dir / "again");
  REQUIRE(again->Apply(l.events).ok());
  Log twice = l;
  Event& dup = twice.Add(EventType::kThreadCreated, {{"thread_id", "t-1"}, {"goal", "g"}, {"salience", 0.5}});
  CHECK(again->Apply(std::span<const Event>(&dup, 1)).IsAlreadyExists());
  // The load that met no bad event ends as applying event by event.
  auto good = open(dir / "good");
  for (size_t i = 0; i < l.events.size(); ++i)
    REQUIRE(good->Apply(std::span<const Event>(l.events).subspan(i, 1)).ok());
  REQUIRE(good->Flush().ok());
  CheckLoadedAs(*good, *plain, l.events, dir / "good");
}

TEST_CASE("a bulk load that meets a bad event stops there and writes none of it",
          "[projection]") {
  ScratchDir dir;
  Log l;
  l.Thread("t-1");
  l.Percepts(1, 5);
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
  l.Percepts(1, 5);
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

TEST_CASE("a bulk load's last write, made while the write before it runs, lands after it",
          "[projection]") {
  // Flush makes the last write's files while the write before it is still
  // under way (20,000 records take a while), and those files change
  // records that write holds: they must be ingested after it to win.
  ScratchDir dir;
  Log l;
  l.Thread("t-1");
  const size_t big = 20000;
  l.Percepts(1, big);
  for (size_t i = 1; i <= 20; ++i)
    l.Add(EventType::kPerceptAssigned, {{"percept_id", "p-" + std::to_string(i)}, {"thread_id", "t-1"}});
  auto plain = OpenDb(dir / "plain");
  REQUIRE(plain->Apply(l.events).ok());
  auto bulk = OpenBulk(dir / "bulk", big + 1);
  const std::span<const Event> all(l.events);
  REQUIRE(bulk->Apply(all.first(big + 1)).ok());  // the thread and the percepts: a write starts
  REQUIRE(bulk->Apply(all.subspan(big + 1)).ok());
  REQUIRE(bulk->Flush().ok());
  CheckLoadedAs(*bulk, *plain, l.events, dir / "bulk");
  // A bulk load keeps no thread table; the DB it leaves opens with it.
  CHECK_FALSE(bulk->CountUnprocessed("t-1").ok());
  bulk.reset();
  CHECK(*OpenDb(dir / "bulk")->CountUnprocessed("t-1") == 20);
}

}  // namespace bulk_load_test
