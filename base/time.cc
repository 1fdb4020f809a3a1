#include "base/time.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <optional>

namespace limbic {
namespace {

// The civil date of day `z` since 1970-01-01, proleptic Gregorian (Howard
// Hinnant's civil_from_days), so formatting never touches the C library's
// time zone. FormatTime's hot path; the parsers use std::chrono instead.
void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

// Days since 1970-01-01 of the calendar day y-m-d, or nullopt when the
// calendar has no such day (2026-02-29, 2026-04-31, month 13, day 0).
std::optional<int64_t> CalendarDay(int y, int m, int d) {
  using namespace std::chrono;
  const year_month_day date{year{y}, month{static_cast<unsigned>(m)},
                            day{static_cast<unsigned>(d)}};
  if (!date.ok()) return std::nullopt;
  return sys_days{date}.time_since_epoch().count();
}

// TimeRule::kLogged's day: what versions before the calendar check
// accepted, counted as they counted it (day d of month m is d - 1 days after
// its first, so a 29th of February in a common year is March 1).
std::optional<int64_t> LoggedDay(int y, int m, int d) {
  static constexpr int kDaysIn[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1 || d > kDaysIn[m - 1]) return std::nullopt;
  return *CalendarDay(y, m, 1) + d - 1;
}

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

}  // namespace

TimeMs SystemClock::Now() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

const SystemClock* SystemClock::Default() {
  static const SystemClock clock;
  return &clock;
}

std::string FormatTime(TimeMs t) {
  int64_t days = t >= 0 ? t / 86400000 : -((-t + 86399999) / 86400000);
  int64_t ms_of_day = t - days * 86400000;
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  if (y >= 0 && y <= 9999) {
    // Every event is formatted at least once (the log line, the reducer):
    // digits by hand, not snprintf, which was most of the cost.
    char out[24];
    auto put = [&out](size_t at, size_t width, int64_t v) {
      for (size_t i = width; i-- > 0; v /= 10) out[at + i] = static_cast<char>('0' + v % 10);
    };
    put(0, 4, y);
    out[4] = '-';
    put(5, 2, m);
    out[7] = '-';
    put(8, 2, d);
    out[10] = 'T';
    put(11, 2, ms_of_day / 3600000);
    out[13] = ':';
    put(14, 2, ms_of_day / 60000 % 60);
    out[16] = ':';
    put(17, 2, ms_of_day / 1000 % 60);
    out[19] = '.';
    put(20, 3, ms_of_day % 1000);
    out[23] = 'Z';
    return std::string(out, sizeof out);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ",
                static_cast<long long>(y), m, d, static_cast<long long>(ms_of_day / 3600000),
                static_cast<long long>(ms_of_day / 60000 % 60),
                static_cast<long long>(ms_of_day / 1000 % 60),
                static_cast<long long>(ms_of_day % 1000));
  return buf;
}

Result<TimeMs> ParseTime(std::string_view s, TimeRule rule) {
  auto bad = [&](const char* why) {
    return Status::InvalidArgument("invalid time \"" + std::string(s) + "\": " + why +
                                   " (want RFC 3339, e.g. 2026-11-22T14:05:09.123Z)");
  };
  int Y, M, D, h, mi, sec;
  if (!Digits(s, 0, 4, &Y) || s.size() < 19 || s[4] != '-' || !Digits(s, 5, 2, &M) ||
      s[7] != '-' || !Digits(s, 8, 2, &D))
    return bad("bad date");
  if (s[10] != 'T' && s[10] != 't' && s[10] != ' ') return bad("missing 'T'");
  if (!Digits(s, 11, 2, &h) || s[13] != ':' || !Digits(s, 14, 2, &mi) || s[16] != ':' ||
      !Digits(s, 17, 2, &sec))
    return bad("bad time of day");
  const bool logged = rule == TimeRule::kLogged;
  const std::optional<int64_t> days = logged ? LoggedDay(Y, M, D) : CalendarDay(Y, M, D);
  if (!days) return bad("no such day in the calendar");
  if (h > 23 || mi > 59 || sec > 60) return bad("field out of range");
  size_t pos = 19;
  int64_t ms = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t start = pos;
    int scale = 100;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      ms += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return bad("empty fraction");
  }
  int64_t offset_min = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!Digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, &om))
      return bad("bad UTC offset");
    if (!logged && (oh > 23 || om > 59)) return bad("UTC offset out of range (at most 23:59)");
    offset_min = (oh * 60 + om) * (s[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return bad("missing time zone (Z or +HH:MM)");
  }
  if (pos != s.size()) return bad("trailing characters");
  int64_t secs = *days * 86400 + h * 3600 + mi * 60 + (sec == 60 ? 59 : sec) - offset_min * 60;
  if (sec == 60 && !logged) {
    // A leap second ends a UTC day (at 23:59 UTC, whatever the offset).
    if (((secs / 60) % 1440 + 1440) % 1440 != 1439)
      return bad("second 60 is a leap second, only at 23:59:60 UTC");
    ms = 999;
  }
  return secs * 1000 + ms;
}

TimeMs TimeOrZero(std::string_view s) {
  auto t = ParseTime(s, TimeRule::kLogged);
  return t.ok() ? *t : 0;
}

Result<TimeMs> ParseDuration(std::string_view s) {
  size_t i = 0;
  int64_t n = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    if (n > (int64_t{1} << 50)) return Status::InvalidArgument("duration too large: " + std::string(s));
    n = n * 10 + (s[i++] - '0');
  }
  if (i == 0) return Status::InvalidArgument("invalid duration \"" + std::string(s) + "\" (e.g. 30s, 5m, 2h, 7d, 2w)");
  std::string_view unit = s.substr(i);
  int64_t ms_per_unit = 0;
  if (unit.empty() || unit == "s") ms_per_unit = 1000;
  else if (unit == "ms") ms_per_unit = 1;
  else if (unit == "m") ms_per_unit = 60000;
  else if (unit == "h") ms_per_unit = 3600000;
  else if (unit == "d") ms_per_unit = 86400000;
  else if (unit == "w") ms_per_unit = 7 * 86400000LL;
  else
    return Status::InvalidArgument("invalid duration unit in \"" + std::string(s) +
                                   "\" (use ms, s, m, h, d or w)");
  if (n > kMaxDurationMs / ms_per_unit)
    return Status::InvalidArgument("duration too large: " + std::string(s) + " (at most 100 years)");
  return n * ms_per_unit;
}

Result<TimeMs> CheckDurationMs(int64_t ms) {
  if (ms < 0) return Status::InvalidArgument("a duration must not be negative, got " + std::to_string(ms));
  if (ms > kMaxDurationMs)
    return Status::InvalidArgument("duration too large: " + std::to_string(ms) + " ms (at most 100 years)");
  return TimeMs{ms};
}

std::string FormatDate(TimeMs t) { return FormatTime(t).substr(0, 10); }

Result<TimeMs> ParseDate(std::string_view s) {
  auto bad = [&] {
    return Status::InvalidArgument("\"" + std::string(s.substr(0, 40)) +
                                   "\" is not a date (want YYYY-MM-DD, e.g. 2026-11-22)");
  };
  int y, m, d;
  if (s.size() != 10 || s[4] != '-' || s[7] != '-' || !Digits(s, 0, 4, &y) ||
      !Digits(s, 5, 2, &m) || !Digits(s, 8, 2, &d))
    return bad();
  const std::optional<int64_t> days = CalendarDay(y, m, d);
  if (!days) return bad();
  return *days * 86400000;
}

Result<TimeMs> ParseTimeOrAgo(const std::string& what, const std::string& text, TimeMs now) {
  auto t = ParseTime(text);
  if (t.ok()) return *t;
  auto d = ParseDuration(text);
  if (d.ok()) return now - *d;
  // What looks like a time ("2026-...") gets the time's own reason; what
  // starts with digits and a unit, the duration's.
  const bool time_like = text.size() >= 10 && text[4] == '-';
  if (time_like) return t.status().WithContext(what);
  const bool duration_like = !text.empty() &&
                             std::isdigit(static_cast<unsigned char>(text[0])) &&
                             text.find('-') == std::string::npos;
  if (duration_like) return d.status().WithContext(what);
  return Status::InvalidArgument(what + " \"" + text +
                                 "\": want an RFC 3339 time or a duration such as 10m");
}

}  // namespace limbic
