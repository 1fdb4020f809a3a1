#include "state/event.h"

#include <catch2/catch.hpp>

// This file's own namespace: test programs compile in unity batches.
namespace event_test {

using namespace limbic;
using namespace limbic::state;

namespace {
Event Percept(uint64_t seq) {
  Event e;
  e.seq = seq;
  e.ts = 1795356309123;
  e.type = EventType::kPerceptArrived;
  e.fields = {{"percept_id", "p-" + std::to_string(seq)},
              {"source", "github"},
              {"percept_type", "issues.opened"},
              {"intensity", 0.7},
              {"text", "line one\nline \"two\""},
              {"data", {{"user", "ana"}, {"n", 3}}}};
  return e;
}
}  // namespace

TEST_CASE("every event type name round-trips") {
  REQUIRE(AllEventTypes().size() == kEventTypeCount);
  for (EventType t : AllEventTypes()) {
    auto parsed = ParseEventType(EventTypeName(t));
    REQUIRE(parsed);
    CHECK(*parsed == t);
  }
  CHECK_FALSE(ParseEventType("percept_exploded"));
}

TEST_CASE("an event encodes to one line and decodes to the same event") {
  Event e = Percept(42);
  std::string line = EncodeEvent(e);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.rfind("{\"v\":1,\"seq\":42,\"ts\":\"2026-11-22T14:05:09.123Z\",\"type\":\"percept_arrived\"", 0) == 0);
  auto d = DecodeEvent(line);
  REQUIRE(d.ok());
  CHECK(d->seq == 42);
  CHECK(d->ts == e.ts);
  CHECK(d->type == e.type);
  CHECK(d->fields == e.fields);
  CHECK(EncodeEvent(*d) == line);
  std::string appended;
  AppendEncodedEvent(e, &appended);
  CHECK(appended == line + "\n");
}

TEST_CASE("unknown fields survive a round trip, missing v reads as version 1") {
  auto d = DecodeEvent(R"({"seq":3,"ts":"2026-01-01T00:00:00.000Z","type":"percept_processed","percept_id":"p-1","future":{"x":1}})");
  REQUIRE(d.ok());
  CHECK(d->fields["future"]["x"] == 1);
  CHECK(EncodeEvent(*d).find("\"future\":{\"x\":1}") != std::string::npos);
}

TEST_CASE("a line that only nlohmann parses decodes as one simdjson parses") {
  // An integer beyond 64 bits (read as a double) sends the line to the
  // reference parser; the envelope is taken out of it all the same.
  auto d = DecodeEvent(
      R"({"v":1,"seq":3,"ts":"2026-01-01T00:00:00.000Z","type":"percept_processed","percept_id":"p-1","big":18446744073709551616})");
  REQUIRE(d.ok());
  CHECK(d->seq == 3);
  CHECK(d->type == EventType::kPerceptProcessed);
  CHECK(d->fields.size() == 2);
  CHECK(d->fields["big"].is_number_float());
  CHECK(d->Str("percept_id") == "p-1");
}

TEST_CASE("decoding rejects bad lines with a message naming the problem") {
  struct Case {
    const char* line;
    const char* needle;
  } cases[] = {
      {"not json", "malformed JSON"},
      {"[1,2]", "not a JSON object"},
      {R"({"ts":"2026-01-01T00:00:00Z","type":"percept_processed","percept_id":"p-1"})", "seq"},
      {R"({"seq":0,"ts":"2026-01-01T00:00:00Z","type":"percept_processed","percept_id":"p-1"})", "seq"},
      {R"({"seq":1,"ts":"yesterday","type":"percept_processed","percept_id":"p-1"})", "ts"},
      {R"({"seq":1,"ts":"2026-01-01T00:00:00Z","type":"percept_exploded"})", "unknown event type \"percept_exploded\""},
      {R"({"v":2,"seq":1,"ts":"2026-01-01T00:00:00Z","type":"percept_processed","percept_id":"p-1"})", "newer"},
      {R"({"seq":1,"ts":"2026-01-01T00:00:00Z","type":"percept_processed"})", "missing required field \"percept_id\""},
      {R"({"seq":1,"ts":"2026-01-01T00:00:00Z","type":"percept_arrived","percept_id":"p-1","source":"s","percept_type":"t","intensity":1.5})", "percept_arrived.intensity"},
      {R"({"seq":1,"ts":"2026-01-01T00:00:00Z","type":"percept_arrived","percept_id":"p 1","source":"s","percept_type":"t","intensity":0.5})", "percept_arrived.percept_id"},
      {R"({"seq":1,"ts":"2026-01-01T00:00:00Z","type":"percept_arrived","percept_id":"p-1","source":"","percept_type":"t","intensity":0.5})", "percept_arrived.source"},
      {R"({"seq":1,"ts":"2026-01-01T00:00:00Z","type":"thread_updated","thread_id":"t-1"})", "at least one"},
      {R"({"seq":1,"ts":"2026-01-01T00:00:00Z","type":"thread_updated","thread_id":"t-1","status":"sleeping"})", "thread_updated.status"},
  };
  for (const auto& c : cases) {
    INFO(c.line);
    auto d = DecodeEvent(c.line);
    REQUIRE_FALSE(d.ok());
    CHECK_THAT(d.status().message(), Catch::Contains(c.needle));
  }
}

TEST_CASE("invalid UTF-8 in untrusted text is replaced, not thrown") {
  Event e = Percept(1);
  e.fields["text"] = std::string("bad \xff byte");
  std::string line = EncodeEvent(e);
  auto d = DecodeEvent(line);
  REQUIRE(d.ok());
  CHECK(d->Str("text").find("bad ") == 0);
}

TEST_CASE("ids are checked") {
  CHECK(IsValidId("p-42"));
  CHECK(IsValidId("gh:delivery.1_x"));
  CHECK_FALSE(IsValidId(""));
  CHECK_FALSE(IsValidId("has space"));
  CHECK_FALSE(IsValidId(std::string(129, 'a')));
  CHECK(CheckId("thread id", "a/b").message().find("thread id \"a/b\"") != std::string::npos);
}

TEST_CASE("a committed name an older version took still decodes, a new one must be a name") {
  // Before names refused C1 and bidi controls, a source could hold U+202E
  // (RIGHT-TO-LEFT OVERRIDE) and an actor U+0085: the log stays readable.
  const std::string line =
      "{\"v\":1,\"seq\":3,\"ts\":\"2026-11-22T10:00:00.000Z\",\"type\":\"percept_arrived\","
      "\"percept_id\":\"p-3\",\"source\":\"mail\xe2\x80\xae\",\"percept_type\":\"t\","
      "\"intensity\":0.5,\"actor\":\"bob\xc2\x85\"}";
  auto d = DecodeEvent(line);
  REQUIRE(d.ok());
  CHECK(d->Str("source") == "mail\xe2\x80\xae");
  auto fresh = ValidateEventFields(EventType::kPerceptArrived, d->fields);
  REQUIRE_FALSE(fresh.ok());
  CHECK(fresh.message() ==
        "percept_arrived.source: must be a name (1-256 bytes of UTF-8, no control or "
        "bidi-control characters); U+202E (a bidi control) at byte 4");
  d->fields["source"] = "mail";
  fresh = ValidateEventFields(EventType::kPerceptArrived, d->fields);
  CHECK_THAT(fresh.message(), Catch::StartsWith("percept_arrived.actor: ") &&
                                  Catch::EndsWith("U+0085 (a control character) at byte 3"));
  // A C0 control was refused then too.
  const std::string c0 =
      "{\"v\":1,\"seq\":3,\"ts\":\"2026-11-22T10:00:00.000Z\",\"type\":\"percept_arrived\","
      "\"percept_id\":\"p-3\",\"source\":\"a\\tb\",\"percept_type\":\"t\",\"intensity\":0.5}";
  CHECK_FALSE(DecodeEvent(c0).ok());
}

TEST_CASE("a committed time an older version took still decodes, a new one must be a calendar day") {
  // Older versions took February 29 in any year; their logs stay readable
  // (read as March 1, as they were then), while a new event is refused.
  const std::string line =
      R"({"v":1,"seq":7,"ts":"2026-02-29T10:00:00.000Z","type":"action_failed","action_id":"a-1",)"
      R"("attempt":1,"error":"503","retry_at":"2026-02-29T10:00:30Z"})";
  auto d = DecodeEvent(line);
  REQUIRE(d.ok());
  CHECK(d->ts == *ParseTime("2026-03-01T10:00:00Z"));
  auto fresh = ValidateEventFields(EventType::kActionFailed, d->fields);
  REQUIRE_FALSE(fresh.ok());
  CHECK(fresh.message() ==
        "action_failed.retry_at: must be an RFC 3339 time on a calendar day, got "
        "\"2026-02-29T10:00:30Z\"");
  CHECK(ValidateEventFields(EventType::kActionFailed, d->fields, TimeRule::kLogged).ok());
}

}  // namespace event_test
