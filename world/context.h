// What a prompt's context bundle (runtime/context.h, GET /v1/context) takes
// from the world model: MEMORY.md's sections relevant to a query, and the
// pages of the entities a text names. Each is a ContextText: lines in file
// order and, per line, how early it is kept when the text must be cut to
// a budget.
//
//   MemorySections: the "## " sections of MEMORY.md (the preamble before
//     the first one is left out). With query terms (archive::Tokenize:
//     lower case, no stop words), a section is kept with its heading and
//     those of its lines that hold a term, scored by the number of distinct
//     query terms they hold, best first (ties: file order); sections
//     without one are left out. Without terms, every section whole, in
//     file order, score 0. When cut, the heading stays and the newest
//     (last) lines go first: items are appended in date order.
//   PageText: one entity page. When cut, the head (title, type and what
//     precedes the first section), Facts, Relations and any other section
//     stay first, then the Timeline's dates, newest first.
//   NamedIn: which of a list of names a text mentions (below).
//
// Thread-safety: pure functions; a value type.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace limbic::world {

//! A text from a world file for a prompt, that can be cut line by line.
struct ContextText {
  std::string source;              //!< "MEMORY.md#People", "entity:Alice Chen.md"
  std::string title;               //!< the section's or the entity's name
  std::vector<std::string> lines;  //!< in file order, valid UTF-8, without line ends
  std::vector<uint32_t> keep;      //!< per line: lower is kept first (ties: file order)
  double score = 0;                //!< MemorySections: distinct query terms held

  //! The lines that fit in `max_bytes` (each counts its bytes + 1 for
  //! '\n'): taken by `keep`, then file order, up to the first that does not
  //! fit (and without the last taken if it is a heading, "#...", whose next
  //! line of the same `keep` did not fit), joined in file order. *cut (if
  //! given) says whether any line was left out. "" when not even the first
  //! fits.
  std::string Text(size_t max_bytes, bool* cut = nullptr) const;
  //! The whole text's bytes, as Text counts them.
  size_t Bytes() const;
};

void to_json(nlohmann::json& j, const ContextText& t);
void from_json(const nlohmann::json& j, ContextText& t);

//! MEMORY.md's sections for `query` (see above); `markdown` may be "".
std::vector<ContextText> MemorySections(std::string_view markdown, std::string_view query);

//! An entity page as a ContextText titled `name`, from `source`.
ContextText PageText(std::string source, std::string name, std::string_view markdown);

//! The indexes of the `names` that `text` mentions, in the order of their
//! first mention (ties: the longer name first, then index). A mention is
//! the name's NameKey (case folded, spaces collapsed) in the text, case
//! folded and spaces collapsed likewise, starting and ending at word
//! boundaries (a letter, digit or non-ASCII byte is not one). A one-word
//! name shorter than 4 bytes ("Go", "AWS") must also appear in its own
//! case, so that the verb "go" does not name the language. Names whose
//! key is shorter than 2 bytes are never mentioned. One pass over the text
//! and one lookup per name: cost O(text + names).
std::vector<size_t> NamedIn(std::string_view text, const std::vector<std::string>& names);

}  // namespace limbic::world
