// Inputs for the world model: a day of the state dir, or a daily-log file.
//
// DayInput(state_dir, date) gathers what limbic lived through on `date`:
//   - from the events log (<state>/events/), the day's percept_arrived,
//     thread_created, thread_updated and thread_completed events (segments
//     that end before the day are not read; a line still being written by
//     a running limbic is left for later);
//   - from the archive's staging file for the day (<state>/archive/staging/
//     DATE.jsonl, kept after rollup): every entry's text, except that an
//     episode contributes only its "[episode] goal" and "outcome:" lines
//     and a digest nothing, since their percepts are in the log's events.
// source is "day:DATE". A day with neither is an empty input (not an error).
//
// FileInput(path, date, max_bytes): a Markdown daily log. The date is
// `date` when given, else the YYYY-MM-DD its file name starts with, else
// InvalidArgument asking for --date. A missing or unreadable file, a
// directory, or a file over max_bytes is an error naming the path (and
// the size). Bytes that are not UTF-8 become U+FFFD. source is the
// file's absolute path (lexically normal: no "." or ".."), so that a file
// named relatively, from another directory or through its folder is one
// input to the ledger.
#pragma once

#include <string>

#include "world/model.h"

namespace limbic::world {

Result<ExtractInput> DayInput(const std::string& state_dir, const std::string& date);
Result<ExtractInput> FileInput(const std::string& path, const std::string& date, size_t max_bytes);

}  // namespace limbic::world
