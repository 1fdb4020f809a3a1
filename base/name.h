// Names: the labels a person reads -- an actor (X-Limbic-Actor), a
// percept's source and type, an action's type, a rule's origin, a fact's
// subject and relation, a tag, an association's entities -- are checked
// here and nowhere else.
//
// A name is 1-256 bytes of valid UTF-8 without:
//   - control characters: C0 (U+0000-U+001F), DEL (U+007F) and C1
//     (U+0080-U+009F, e.g. U+0085 NEXT LINE);
//   - bidi controls, which reorder what a reader sees: U+202A-U+202E
//     (embeddings and overrides, e.g. U+202E RIGHT-TO-LEFT OVERRIDE) and
//     U+2066-U+2069 (isolates).
// Ids are narrower still (state/event.h, IsValidId).
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace limbic {

//! Which names a check takes.
//!   kNew: new input -- the rule above.
//!   kLogged: what limbic has already committed (the events log). Before
//!     0.1 a name was refused only C0 controls and DEL, so a log may hold
//!     a C1 or bidi control in one; the reader is never stricter than the
//!     writer was.
enum class NameRule { kNew, kLogged };

//! What a name is, for messages.
inline constexpr std::string_view kNameRule =
    "a name (1-256 bytes of UTF-8, no control or bidi-control characters)";

//! "" when `s` is a name under `rule`; otherwise what is wrong, naming the
//! code point and where it is: "U+202E (a bidi control) at byte 3",
//! "U+0085 (a control character) at byte 0", "empty", "300 bytes",
//! "not UTF-8 at byte 5".
std::string NameFault(std::string_view s, NameRule rule = NameRule::kNew);
inline bool IsName(std::string_view s, NameRule rule = NameRule::kNew) {
  return NameFault(s, rule).empty();
}
//! OK, or InvalidArgument "<field>: must be a name (1-256 bytes of UTF-8, no
//! control or bidi-control characters); U+202E (a bidi control) at byte 3".
Status CheckName(std::string_view field, std::string_view s, NameRule rule = NameRule::kNew);
//! What text a person reads beside names may be, for messages.
inline constexpr std::string_view kTextRule =
    "text (UTF-8, no control or bidi-control characters but tab and line breaks)";
//! Like NameFault, for text longer than a name (a search, a file's name sent
//! with its content): "" when `s` is at most `max_bytes` of UTF-8 without
//! the characters a name may not hold, but for tab, LF and CR when
//! `line_breaks`; otherwise what is wrong, as NameFault says it. May be
//! empty.
std::string TextFault(std::string_view s, size_t max_bytes, bool line_breaks);

//! `s` made fit for a name, for a label taken from elsewhere (an MCP
//! client's name): invalid UTF-8 becomes U+FFFD, each character a name may
//! not hold becomes `with`, and it is cut to `max_bytes` on a character
//! boundary. May be empty.
std::string SanitizeName(std::string_view s, char with, size_t max_bytes);

}  // namespace limbic
