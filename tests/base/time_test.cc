#include "base/time.h"

#include <catch2/catch.hpp>

// This file's own namespace: test programs compile in unity batches.
namespace time_test {

using namespace limbic;

TEST_CASE("FormatTime writes RFC 3339 UTC with milliseconds") {
  CHECK(FormatTime(0) == "1970-01-01T00:00:00.000Z");
  CHECK(FormatTime(1795356309123) == "2026-11-22T14:05:09.123Z");
  CHECK(FormatTime(951782400000) == "2000-02-29T00:00:00.000Z");  // leap day
  CHECK(FormatTime(-1) == "1969-12-31T23:59:59.999Z");
  CHECK(FormatTime(-62135596800000) == "0001-01-01T00:00:00.000Z");
  CHECK(FormatTime(-62167219200000) == "0000-01-01T00:00:00.000Z");
  CHECK(FormatTime(253402300799999) == "9999-12-31T23:59:59.999Z");
  // Beyond four-digit years: still the civil date, however long.
  CHECK(FormatTime(253402300800000) == "10000-01-01T00:00:00.000Z");
  CHECK(FormatTime(-62167219200001) == "-001-12-31T23:59:59.999Z");
}

TEST_CASE("ParseTime reads what FormatTime writes, and offsets") {
  for (TimeMs t : {TimeMs{0}, TimeMs{1795356309123}, TimeMs{951782400000}, TimeMs{-1}}) {
    auto r = ParseTime(FormatTime(t));
    REQUIRE(r.ok());
    CHECK(*r == t);
  }
  CHECK(*ParseTime("2026-11-22T15:05:09.123+01:00") == 1795356309123);
  CHECK(*ParseTime("2026-11-22T14:05:09Z") == 1795356309000);
  CHECK(*ParseTime("2026-11-22T14:05:09.123456Z") == 1795356309123);
}

TEST_CASE("ParseTime rejects malformed times with a message") {
  for (const char* s : {"", "2026-11-22", "2026-13-01T00:00:00Z", "2026-11-22T14:05:09",
                        "2026-11-22T14:05:09.Z", "2026-02-30T00:00:00Z", "2026-11-22T14:05:09Zjunk"}) {
    auto r = ParseTime(s);
    INFO(s);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().IsInvalidArgument());
    CHECK(r.status().message().find("RFC 3339") != std::string::npos);
  }
}

TEST_CASE("ParseDuration takes weeks as it takes days") {
  CHECK(*ParseDuration("2w") == 14 * 86400000LL);
  CHECK(*ParseDuration("1w") == *ParseDuration("7d"));
  CHECK(ParseDuration("2W").status().message().find("use ms, s, m, h, d or w") !=
        std::string::npos);
}

TEST_CASE("ParseDuration refuses a duration whose milliseconds do not fit") {
  CHECK(ParseDuration("99999999999999d").status().message().starts_with("duration too large"));
  CHECK(ParseDuration("9999999999999999999999999s").status().IsInvalidArgument());
  CHECK(*ParseDuration("36500d") == int64_t{36500} * 86400000);
  // At most 100 years, whatever the unit.
  CHECK(*ParseDuration("36525d") == kMaxDurationMs);
  CHECK(ParseDuration("36526d").status().message() == "duration too large: 36526d (at most 100 years)");
  CHECK(*CheckDurationMs(kMaxDurationMs) == kMaxDurationMs);
  CHECK(CheckDurationMs(kMaxDurationMs + 1).status().IsInvalidArgument());
  CHECK(CheckDurationMs(-1).status().message() == "a duration must not be negative, got -1");
}

TEST_CASE("ParseDuration understands units") {
  CHECK(*ParseDuration("250ms") == 250);
  CHECK(*ParseDuration("30") == 30000);
  CHECK(*ParseDuration("30s") == 30000);
  CHECK(*ParseDuration("5m") == 300000);
  CHECK(*ParseDuration("2h") == 7200000);
  CHECK(*ParseDuration("7d") == 604800000);
  CHECK_FALSE(ParseDuration("5x").ok());
  CHECK_FALSE(ParseDuration("m").ok());
}

TEST_CASE("dates are real calendar days in YYYY-MM-DD") {
  CHECK(FormatDate(*ParseTime("2026-11-22T23:59:59.999Z")) == "2026-11-22");
  CHECK(*ParseDate("2026-11-22") == *ParseTime("2026-11-22T00:00:00Z"));
  CHECK(IsValidDate("2024-02-29"));
  for (const char* bad : {"2026-02-29", "2026-02-30", "2026-13-01", "2026-00-10", "2026-1-01",
                          "26-11-22", "2026/11/22", "2026-11-22T", "", "yesterday"}) {
    INFO(bad);
    auto r = ParseDate(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("not a date") != std::string::npos);
  }
}

TEST_CASE("ParseTime and ParseDate take only days the calendar has") {
  // February 29 exists in leap years: every fourth, but not a century
  // unless it divides by 400 (2000 yes, 1900 no).
  CHECK(*ParseTime("2024-02-29T00:00:00Z") == 1709164800000);
  CHECK(*ParseTime("2000-02-29T12:00:00Z") == 951825600000);
  CHECK(*ParseDate("2024-02-29") == 1709164800000);
  CHECK(*ParseDate("2000-02-29") == 951782400000);
  CHECK(*ParseTime("2026-04-30T23:59:59.999Z") == *ParseDate("2026-05-01") - 1);
  CHECK(*ParseTime("2026-12-31T00:00:00Z") == *ParseDate("2026-12-31"));
  CHECK(*ParseDate("0000-02-29") == -62162121600000);  // year 0 is a leap year
  for (const char* day : {"2026-02-29", "1900-02-29", "2023-02-29", "2024-02-30", "2026-02-31",
                          "2026-04-31", "2026-06-31", "2026-09-31", "2026-11-31", "2026-01-32",
                          "2026-12-00", "2026-00-01", "2026-13-01"}) {
    INFO(day);
    const std::string time = std::string(day) + "T00:00:00Z";
    auto t = ParseTime(time);
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().IsInvalidArgument());
    CHECK(t.status().message() == "invalid time \"" + time +
                                      "\": no such day in the calendar (want RFC 3339, e.g. "
                                      "2026-11-22T14:05:09.123Z)");
    auto d = ParseDate(day);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().IsInvalidArgument());
    CHECK(d.status().message() ==
          "\"" + std::string(day) + "\" is not a date (want YYYY-MM-DD, e.g. 2026-11-22)");
  }
}

TEST_CASE("ParseTime's logged rule reads what older versions committed") {
  // Before the calendar check, a 29th of February in any year and any
  // two-digit offset were accepted; a log may hold them and must stay
  // readable, with the values it had then.
  CHECK(*ParseTime("2026-02-29T00:00:00Z", TimeRule::kLogged) == *ParseDate("2026-03-01"));
  CHECK(*ParseTime("2024-02-29T00:00:00Z", TimeRule::kLogged) == *ParseDate("2024-02-29"));
  CHECK(*ParseTime("2026-01-01T00:00:00+99:99", TimeRule::kLogged) ==
        *ParseDate("2026-01-01") - (99 * 60 + 99) * 60000);
  CHECK(TimeOrZero("2026-02-29T00:00:00Z") == *ParseDate("2026-03-01"));
  // What no version accepted stays an error under either rule.
  for (const char* bad : {"2026-02-30T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z",
                          "2026-01-01T24:00:00Z", "2026-01-01T00:00:00"}) {
    INFO(bad);
    CHECK_FALSE(ParseTime(bad, TimeRule::kLogged).ok());
    CHECK_FALSE(ParseTime(bad).ok());
  }
}

TEST_CASE("ParseTime takes UTC offsets up to 23:59") {
  CHECK(*ParseTime("2026-01-01T00:00:00+23:59") == *ParseDate("2026-01-01") - 1439 * 60000);
  CHECK(*ParseTime("2026-01-01T00:00:00-23:59") == *ParseDate("2026-01-01") + 1439 * 60000);
  for (const char* bad : {"2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00+99:99",
                          "2026-01-01T00:00:00-00:60"}) {
    INFO(bad);
    auto t = ParseTime(bad);
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().message() == "invalid time \"" + std::string(bad) +
                                      "\": UTC offset out of range (at most 23:59) (want RFC "
                                      "3339, e.g. 2026-11-22T14:05:09.123Z)");
  }
}

TEST_CASE("ParseTime takes second 60 only as a leap second, at 23:59 UTC") {
  const TimeMs next_day = *ParseDate("2017-01-01");
  // The day's last millisecond, whatever the fraction: never after the
  // next day's first, never before :59.999.
  CHECK(*ParseTime("2016-12-31T23:59:60Z") == next_day - 1);
  CHECK(*ParseTime("2016-12-31T23:59:60.500Z") == next_day - 1);
  CHECK(*ParseTime("2017-01-01T05:29:60+05:30") == next_day - 1);  // 23:59:60 UTC
  for (const char* bad : {"2026-11-22T14:05:60Z", "2016-12-31T23:58:60Z",
                          "2016-12-31T23:59:60+01:00", "2016-12-31T23:59:61Z"}) {
    INFO(bad);
    CHECK_FALSE(ParseTime(bad).ok());
  }
  CHECK_THAT(ParseTime("2026-11-22T14:05:60Z").status().message(),
             Catch::Contains("only at 23:59:60 UTC"));
  // What an earlier version committed stays readable, as it was read then.
  CHECK(*ParseTime("2026-11-22T14:05:60.250Z", TimeRule::kLogged) ==
        *ParseTime("2026-11-22T14:05:59.250Z"));
}

}  // namespace time_test
