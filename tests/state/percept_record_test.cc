// PerceptRecord: the typed percept gives the same bytes, JSON and index
// entries as the JSON record it stands for.
#include <catch2/catch.hpp>

#include "state/percept_record.h"
#include "state/pool_layout.h"
#include "state/reducer.h"

// This file's own namespace: test programs compile in unity batches.
namespace percept_record_test {

using namespace limbic;
using namespace limbic::state;

namespace {

constexpr TimeMs kT = 1'763'000'000'123;

// What the reducer built for percept_arrived before percepts were typed:
// the record as docs/events.md ("Pools") gives it.
json ArrivedJson(const std::string& id, const json& fields, TimeMs ts, uint64_t seq) {
  json rec = {{"id", id},
              {"source", fields["source"]},
              {"type", fields["percept_type"]},
              {"intensity", fields["intensity"]},
              {"ts", FormatTime(ts)},
              {"seq", seq},
              {"thread_id", nullptr},
              {"status", "new"},
              {"data", fields.contains("data") ? fields["data"] : json::object()}};
  if (fields.contains("text")) rec["text"] = fields["text"];
  return rec;
}

std::string Bytes(const PerceptRecord& p) {
  std::string out;
  p.AppendJson(&out);
  return out;
}

std::vector<IndexEntry> TypedEntries(const std::string& id, const PerceptRecord& p) {
  return IndexEntries(Pool::kPercepts, id, Record(std::in_place_type<PerceptRecord>, p));
}

}  // namespace

TEST_CASE("an arrived percept is the record the reducer always built", "[percept_record]") {
  const json with_all = {{"source", "chat"},
                         {"percept_type", "issues.opened"},
                         {"intensity", 0.134},
                         {"text", "crash \"on\" start\n\xc3\xa9"},
                         {"data", {{"n", 7}, {"url", "https://example.com/x/7"}, {"nested", {1, 2}}}}};
  const json bare = {{"source", "timer"}, {"percept_type", "tick"}, {"intensity", 1}};
  for (const json& fields : {with_all, bare}) {
    CAPTURE(fields.dump());
    PerceptRecord p = PerceptRecord::Arrived("p-7", fields, FormatTime(kT), 7);
    const json expected = ArrivedJson("p-7", fields, kT, 7);
    CHECK(Bytes(p) == Dump(expected));
    CHECK(p.ToJson() == expected);
    CHECK(p.status() == "new");
    CHECK_FALSE(p.thread_id().has_value());
    CHECK(p.ts() == kT);
    CHECK(p.seq() == 7);
    CHECK(p.source() == fields["source"].get<std::string>());
    CHECK(p.type() == fields["percept_type"].get<std::string>());
    CHECK(TypedEntries("p-7", p) == IndexEntries(Pool::kPercepts, "p-7", expected));
  }
}

TEST_CASE("changing status, thread and drop reason changes the bytes as the JSON would",
          "[percept_record]") {
  const json fields = {{"source", "chat"}, {"percept_type", "msg"}, {"intensity", 0.5}, {"text", "hi"}};
  PerceptRecord p = PerceptRecord::Arrived("p-1", fields, FormatTime(kT), 1);
  json j = ArrivedJson("p-1", fields, kT, 1);
  const PerceptRecord arrived = p;  // a copy shares the fixed fields, not the changes

  p.set_thread_id("t-9");
  p.set_status("assigned");
  j["thread_id"] = "t-9";
  j["status"] = "assigned";
  CHECK(Bytes(p) == Dump(j));
  CHECK(TypedEntries("p-1", p) == IndexEntries(Pool::kPercepts, "p-1", j));
  CHECK(UnprocessedFor(Record(std::in_place_type<PerceptRecord>, p)) == "t-9");
  CHECK(UnprocessedFor(j) == "t-9");

  p.set_status("dropped");
  p.set_drop_reason("spam \"obvious\"");
  j["status"] = "dropped";
  j["drop_reason"] = "spam \"obvious\"";
  CHECK(Bytes(p) == Dump(j));
  CHECK(p.ToJson() == j);
  CHECK(TypedEntries("p-1", p) == IndexEntries(Pool::kPercepts, "p-1", j));
  CHECK(UnprocessedFor(Record(std::in_place_type<PerceptRecord>, p)).empty());

  CHECK(Bytes(arrived) == Dump(ArrivedJson("p-1", fields, kT, 1)));
}

TEST_CASE("a percept read back is written back byte for byte, keys it does not know included",
          "[percept_record]") {
  const json base = {{"data", json::object()}, {"id", "p-3"},         {"intensity", 0.25},
                     {"seq", 3},               {"source", "mail"},    {"status", "assigned"},
                     {"thread_id", "t-1"},     {"ts", FormatTime(kT)}, {"type", "inbound"}};
  std::vector<json> records;
  records.push_back(base);
  json full = base;
  full["text"] = "body";
  full["drop_reason"] = "dup";
  full["status"] = "dropped";
  records.push_back(full);
  // A key in every gap between the keys that change, and at both ends.
  json odd = base;
  for (const char* key : {"a", "data2", "e", "st", "status_", "thr", "thread_id_", "zz"}) odd[key] = key;
  odd["u\"\xc3\xa9\n"] = "a key to escape";
  odd["thread_id"] = nullptr;
  records.push_back(odd);
  // Fields of another type than the write path makes: the index reads
  // them as absent, the bytes keep them.
  json strange = base;
  strange["source"] = 5;
  strange["type"] = nullptr;
  strange["ts"] = "yesterday";
  strange["seq"] = -3;
  records.push_back(strange);
  json sparse = {{"status", "new"}, {"thread_id", nullptr}};
  records.push_back(sparse);

  for (const json& j : records) {
    CAPTURE(j.dump());
    // As RocksDB returns it: the stored bytes, parsed.
    const json stored = json::parse(Dump(j));
    auto p = PerceptRecord::FromJson(stored);
    REQUIRE(p.ok());
    CHECK(Bytes(*p) == Dump(stored));
    CHECK(p->ToJson() == stored);
    CHECK(TypedEntries("p-3", *p) == IndexEntries(Pool::kPercepts, "p-3", stored));
    CHECK(UnprocessedFor(Record(std::in_place_type<PerceptRecord>, *p)) == UnprocessedFor(stored));
    // From the stored bytes themselves, no JSON tree: the same record.
    auto s = PerceptRecord::FromStored(Dump(j));
    REQUIRE(s.ok());
    CHECK(Bytes(*s) == Dump(stored));
    CHECK(TypedEntries("p-3", *s) == TypedEntries("p-3", *p));
    CHECK(s->ts() == p->ts());
    CHECK(s->seq() == p->seq());
    CHECK(s->status() == p->status());
    CHECK(s->thread_id() == p->thread_id());
  }
}

TEST_CASE("a JSON that is not a percept is refused, naming what is wrong", "[percept_record]") {
  auto refused = [](const json& j) {
    auto p = PerceptRecord::FromJson(j);
    REQUIRE_FALSE(p.ok());
    CHECK(p.status().IsInvalidArgument());
    return p.status().message();
  };
  CHECK(refused(json::array()) == "a percept record must be an object");
  CHECK(refused({{"status", 1}, {"thread_id", nullptr}}) == "percept record: status must be a string");
  CHECK(refused({{"status", "new"}, {"thread_id", 4}}) ==
        "percept record: thread_id must be null or a string");
  CHECK(refused({{"thread_id", nullptr}}) == "percept record: no status");
  CHECK(refused({{"status", "new"}}) == "percept record: no thread_id");
  // Stored bytes not in Dump's form (another writer's) are written as Dump would.
  const std::string foreign = R"({"data":{"z":1.50,"a":"\u0041"},"status":"new","thread_id":null})";
  auto taken = PerceptRecord::FromStored(foreign);
  REQUIRE(taken.ok());
  CHECK(Bytes(*taken) == Dump(json::parse(foreign)));
  // The same from stored bytes, and bytes that are no JSON object.
  auto refused_stored = [](std::string_view stored) {
    auto p = PerceptRecord::FromStored(stored);
    REQUIRE_FALSE(p.ok());
    CHECK(p.status().IsInvalidArgument());
    return p.status().message();
  };
  CHECK(refused_stored(R"({"status":"new","thread_id":4})") ==
        "percept record: thread_id must be null or a string");
  CHECK(refused_stored(R"({"status":["new"],"thread_id":null})") == "percept record: status must be a string");
  CHECK(refused_stored(R"({"thread_id":null})") == "percept record: no status");
  CHECK(refused_stored("[]") == "not a JSON object");
  CHECK(refused_stored(R"({"status":"new")") == "not valid JSON");
}

TEST_CASE("an overlay holds percepts typed and reads them as JSON too", "[percept_record][reducer]") {
  const json fields = {{"source", "chat"}, {"percept_type", "msg"}, {"intensity", 0.5}};
  Overlay base(nullptr);
  base.PutPercept("p-1", PerceptRecord::Arrived("p-1", fields, FormatTime(kT), 1), 1);
  // A percept put as JSON is read typed.
  base.Put(Pool::kPercepts, "p-2", ArrivedJson("p-2", fields, kT, 2), 2);
  Overlay o(&base);
  o.remember_base_reads(true);
  CHECK(**o.Get(Pool::kPercepts, "p-1") == ArrivedJson("p-1", fields, kT, 1));
  auto two = o.TakePercept("p-2");
  REQUIRE(two.ok());
  REQUIRE(two->has_value());
  CHECK(Bytes(**two) == Dump(ArrivedJson("p-2", fields, kT, 2)));
  (*two)->set_status("processed");
  o.PutPercept("p-2", std::move(**two), 3);
  CHECK((**o.Get(Pool::kPercepts, "p-2"))["status"] == "processed");
  // The base keeps its record, and the overlay remembers what it read there.
  CHECK((**base.Get(Pool::kPercepts, "p-2"))["status"] == "new");
  const std::optional<Record>* seen = o.BaseRead({Pool::kPercepts, "p-2"});
  REQUIRE(seen);
  REQUIRE(seen->has_value());
  CHECK(UnprocessedFor(**seen).empty());
  CHECK(RecordJson(**seen)["status"] == "new");
  CHECK_FALSE(o.GetPercept("p-9")->has_value());
}

}  // namespace percept_record_test
