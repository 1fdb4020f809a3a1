// Time in limbic: milliseconds since the Unix epoch, UTC.
//
// Every event carries `ts`, written as RFC 3339 with millisecond precision
// and a `Z` suffix ("2026-11-22T14:05:09.123Z"). Recency is computed from
// timestamps on read, never stored, against a `now` that callers inject: the
// live runtime passes the wall clock, replay passes the timestamp of the
// event being applied, tests pass whatever they like.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace limbic {

using TimeMs = int64_t;  // milliseconds since 1970-01-01T00:00:00Z

// Source of `now`. Implementations must be thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeMs Now() const = 0;
};

// The wall clock (system_clock).
class SystemClock final : public Clock {
 public:
  TimeMs Now() const override;
  // A process-wide instance; lives forever.
  static const SystemClock* Default();
};

// A clock that says what it is told. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimeMs now = 0) : now_(now) {}
  TimeMs Now() const override { return now_.load(); }
  void Set(TimeMs now) { now_.store(now); }
  void Advance(TimeMs by) { now_.fetch_add(by); }

 private:
  std::atomic<TimeMs> now_;
};

// "2026-11-22T14:05:09.123Z". Always 24 characters.
std::string FormatTime(TimeMs t);
// Which times ParseTime takes.
//   kCalendar: new input. The day must be one the calendar has (2024-02-29
//     yes, 2026-02-29 and 2026-04-31 no) and a UTC offset at most 23:59.
//     Second 60 is a leap second, so only at 23:59 UTC (RFC 3339 5.7);
//     limbic's clock has none, and reads it as that day's last
//     millisecond, 23:59:59.999.
//   kLogged: text limbic has already committed (the events log, its own
//     files). Before 0.1 a time was checked against a table that gave
//     February 29 days in every year and any two-digit offset, so a log
//     may hold "2026-02-29T..." (read, as then, as March 1) or "+99:99".
//     The reader is never stricter than the writer was: second 60 is
//     read at any minute, as second 59 with the fraction given.
enum class TimeRule { kCalendar, kLogged };
// Accepts RFC 3339: "YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)"; 't',
// 'z' and a space instead of 'T' are accepted too. Fractions beyond
// milliseconds are truncated. The error names the text and what is wrong.
Result<TimeMs> ParseTime(std::string_view s, TimeRule rule = TimeRule::kCalendar);
// A stored time (kLogged), or 0 when `s` is not one (a record's time read
// leniently: a malformed one sorts first instead of failing the read).
TimeMs TimeOrZero(std::string_view s);
// Calendar days (UTC), as the archive names them: "2026-11-22".
// FormatDate gives the day of `t`; ParseDate accepts exactly YYYY-MM-DD of
// a real date (2026-02-30 is an error naming the text) and returns its
// midnight.
std::string FormatDate(TimeMs t);
Result<TimeMs> ParseDate(std::string_view s);
inline bool IsValidDate(std::string_view s) { return ParseDate(s).ok(); }
// Durations for the command line and config: "250ms", "30s", "5m", "2h",
// "7d", "2w"; a bare number is seconds. At most kMaxDurationMs (100 years): a
// timer, a deadline or now - d computed from any duration stays far inside
// the range of a clock's nanoseconds (292 years) and of a TimeMs.
inline constexpr TimeMs kMaxDurationMs = TimeMs{100} * 36525 * 86400 * 10;  // 100 * 365.25 days
Result<TimeMs> ParseDuration(std::string_view s);

// A time given by a person: an RFC 3339 time, or a duration meaning "that
// long before `now`" ("10m"); the error names `what` (a flag, a field).
Result<TimeMs> ParseTimeOrAgo(const std::string& what, const std::string& text, TimeMs now);
// The same check for a duration already in milliseconds (an integer a
// config gives): InvalidArgument when negative or past kMaxDurationMs.
Result<TimeMs> CheckDurationMs(int64_t ms);

}  // namespace limbic
