// JSON text in, nlohmann::json out: fast, and never throws.
//
// limbic reads JSON all the time: every log line on recovery and replay,
// every record it reads back from RocksDB, every request body. nlohmann's own
// parser was the slowest step of each, so text is parsed by simdjson (SIMD
// structural and UTF-8 validation) and the result converted to
// nlohmann::json, the type the rest of limbic works with.
//
// ParseJson accepts exactly what nlohmann::json::parse accepts and yields the
// same value (tests/base/json_test.cc compares them):
//   - non-negative integers are unsigned, negative ones signed, others double;
//     integers beyond 64 bits become doubles (that rare text is handed to
//     nlohmann's parser, which is the reference);
//   - an object key given twice keeps its last value;
//   - one difference: "-0" reads as an unsigned 0 (nlohmann: a signed 0);
//     the two compare equal and print alike.
//
// Thread-safety: any thread; each thread parses with its own simdjson parser.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace limbic {

// The value of `text` (one JSON document, surrounding whitespace allowed), or
// nullopt when it is not valid JSON.
std::optional<nlohmann::json> ParseJson(std::string_view text);

// ParseJson for an object some of whose members are wanted apart (an
// event's envelope: v, seq, ts, type): the value of the member named
// names[i] goes to taken[i] (untouched when there is none) and is left out
// of the object returned. Text that is not an object is returned as
// ParseJson returns it, with nothing taken; nullopt when it is not JSON.
// Cheaper than parsing the whole object and erasing the members.
std::optional<nlohmann::json> ParseJsonTaking(std::string_view text,
                                              std::span<const std::string_view> names,
                                              std::span<std::optional<nlohmann::json>> taken);

// Whether ParseJson(text) would give a value, without making it.
bool ValidJson(std::string_view text);

// Appends exactly what j.dump(-1, ' ', false, error_handler_t::replace)
// gives (compact, keys in order, UTF-8 kept, invalid UTF-8 replaced), three
// to four times faster: plain strings are copied, not escaped byte by byte.
// Iterative: any depth of nesting is written (dump() recurses, and a value
// nested some tens of thousands deep overflows the stack).
void AppendCompactJson(const nlohmann::json& j, std::string* out);
// AppendCompactJson as a string: what limbic writes wherever it would call
// dump() (HTTP bodies, MCP answers, CLI output), safe at any depth.
std::string CompactJson(const nlohmann::json& j);
// The same for one string (an object's key, say) without making a json of it.
void AppendJsonString(const std::string& s, std::string* out);

// `s` as a JSON string literal ("..." with escapes), an ill-formed UTF-8
// sequence replaced by U+FFFD.
std::string JsonQuote(std::string_view s);

// `from` copied into *to, iteratively: json's copy constructor recurses, and
// a value nested some tens of thousands deep overflows the stack.
void CopyJson(const nlohmann::json& from, nlohmann::json* to);

// Whether `s` is valid UTF-8 (no overlong forms, surrogates or code points
// beyond U+10FFFF).
bool IsValidUtf8(std::string_view s);
// `s` with each maximal ill-formed subsequence (Unicode 15, 3.9, "U+FFFD
// substitution of maximal subparts") replaced by U+FFFD; `s` itself when it
// is valid UTF-8.
std::string ToValidUtf8(std::string_view s);
// Outside text as a log line or a terminal shows it: ToValidUtf8, and each
// control character (C0, DEL) as '?', so it cannot forge a line or drive
// the terminal.
std::string ShownText(std::string_view s);
// Makes every string and object key in *j valid UTF-8 (ToValidUtf8), at any
// depth, iteratively. InvalidArgument, leaving *j partly mended, when two keys
// of one object would read the same once mended; the message names the key.
Status MakeValidUtf8(nlohmann::json* j);

// How deeply `text` (valid JSON) nests: 0 for a scalar, 1 for [] or {}, ...
// Counts brackets outside strings; never recurses.
size_t JsonDepth(std::string_view text);

// Why `text` is not valid JSON, naming the byte ("syntax error at byte 17:
// ..."). For error messages only: it is slow.
std::string JsonError(std::string_view text);

}  // namespace limbic
