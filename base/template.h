// {{NAME}} templates: a JSON value whose strings may hold placeholders,
// checked when it is loaded and rendered against values the caller gives.
// The effectors' bodies and headers (effectors/builtin.h) and the reflexes'
// step arguments (reflexes/rule.h) are templates; each layer says which
// names it knows and what they stand for, this file does the rest.
//
// Grammar of a template string:
//   string      = { text | placeholder }
//   placeholder = "{{" NAME "}}"   NAME: everything up to the next "}}"
// There is no escape. Strings are found in members and elements at any
// depth; numbers, booleans and null are never templates.
//
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"

namespace limbic {

//! A placeholder's value by its NAME (the text between the braces), or why it has none.
using PlaceholderValue = std::function<Result<nlohmann::json>(std::string_view name)>;

//! Renders `tmpl`: each string that is exactly one placeholder becomes that
//! value, keeping its JSON type ("{{n}}" -> 7); in any other string each
//! placeholder is replaced by the value's text (a string as it is, anything
//! else as compact JSON: "n={{n}}" -> "n=7"). Objects and arrays are
//! rendered member by member; other values are returned as they are.
//! Errors: the first error `value` returns, unchanged; InvalidArgument
//! 'template "S": unclosed {{' for a string S with an unclosed "{{".
Result<nlohmann::json> RenderTemplate(const nlohmann::json& tmpl, const PlaceholderValue& value);

//! Why the placeholder NAME may not be used here; "" when it may.
using PlaceholderCheck = std::function<std::string(std::string_view name)>;

//! Checks `tmpl` when it is loaded, so that rendering it fails only on
//! values (a missing field), never on its form: OK, or InvalidArgument
//! "PATH: WHY" for the first string, in document order, with a problem.
//! PATH is `path` followed by ".KEY" for each member and "[]" for each array
//! element on the way to that string ("body.list[]"). WHY is
//! 'unclosed {{ in "S"' when the string has an unclosed "{{" (whatever else
//! is wrong with it), else what `check` said of its first refused placeholder.
Status CheckTemplate(const nlohmann::json& tmpl, const std::string& path,
                     const PlaceholderCheck& check);

}  // namespace limbic
