// JSON from outside: the one parser for text limbic did not write itself.
//
// Outside input is an HTTP body, an MCP line, a config or rules file, a
// webhook body, a sensor's line, a CLI argument or stdin. It is parsed with a
// depth limit (api.max_json_depth, default 128) checked by a byte scan before
// any value is built, so text nested 200,000 deep costs one pass and no
// stack. Its numbers must fit a double: 1e400 or a 400-digit integer is
// refused, naming where it is, instead of throwing from deep inside.
//
// What limbic wrote itself (log lines, pool records, archive documents) is
// read with ParseJson, never with this: a reader is never stricter
// than the writer, and a record an older limbic stored always reads back.
//
// Errors are InvalidArgument; the message names the byte and, for numbers,
// the key ("intensity: number out of range at byte 14: 1e400"). A message
// for nesting past the limit contains kJsonTooDeepMarker, which
// IsJsonTooDeep() looks for, so the HTTP API can answer the code
// json_too_deep.
//
// Thread-safety: any thread. The limit is one per process: set it once at
// start, before any thread parses (SetMaxInputJsonDepth).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/time.h"

namespace limbic {

//! The default of api.max_json_depth.
inline constexpr size_t kDefaultMaxJsonDepth = 128;
//! The most api.max_json_depth may be: what the parser's conversion (and
//! nlohmann's recursive copy and compare) are sure to handle on any thread.
inline constexpr size_t kMaxMaxJsonDepth = 1024;
//! The phrase in every "nested too deep" message.
inline constexpr std::string_view kJsonTooDeepMarker = "nested deeper than";

//! The limit ParseInputJson applies by default: api.max_json_depth. Set by
//! whoever loads the config (the runtime, `limbic mcp`) before serving.
//! Values beyond kMaxMaxJsonDepth are taken as kMaxMaxJsonDepth.
void SetMaxInputJsonDepth(size_t depth);
size_t MaxInputJsonDepth();

//! The value of `text`, outside input. InvalidArgument when it is not JSON
//! ("malformed JSON: syntax error at byte 17: ..."), nests deeper than `max_depth`
//! ("nested deeper than 128 (api.max_json_depth) at byte 129"; [] and {}
//! are depth 1, brackets inside strings do not count), or holds a number
//! beyond a double ("KEY: number out of range at byte N: 1e400"). Never
//! throws, never recurses on the text's nesting.
Result<nlohmann::json> ParseInputJson(std::string_view text,
                                      size_t max_depth = MaxInputJsonDepth());

//! Whether `status` came from ParseInputJson refusing nesting past the limit
//! (a caller may have added context to it).
bool IsJsonTooDeep(const Status& status);

//! A duration from outside JSON: a string ParseDuration reads ("30s", "5m")
//! or an integer of milliseconds; 0 to kMaxDurationMs either way (a
//! negative, a float or a duration past 100 years is InvalidArgument).
Result<TimeMs> DurationFromJson(const nlohmann::json& v);

//! How to end "the answer ..." for a service's answer (an LLM, an embedder)
//! ParseInputJson refused: "is not JSON: malformed JSON: ..." or "is refused:
//! nested deeper than 128 ...".
std::string AnswerRefusal(const Status& refused);

}  // namespace limbic
