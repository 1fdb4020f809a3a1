// One entity page in memory: parsed from Markdown, grown by a PageUpdate,
// rendered back (internal to world/; the format is in
// entity_store.h).
//
// A page is kept as its lines. Parsing recognises, outside ``` / ~~~
// fences:
//
//   title     = "# " text                 (the first, before any "## ")
//   type      = "**Type:**" text          (the first, before any "## ")
//   section   = "## " name                ends at the next "# " or "## "
//   date      = "### " ["[["] YYYY-MM-DD ["]]"]   under Timeline; ends at
//               the next heading of level 1-3
//   item      = ("- " | "* " | "+ ") text  (after optional spaces)
//
// Section names match Facts, Timeline, Relations without regard to case;
// the first of each name is used. Every other line, section and heading is
// kept where it is, byte for byte. Line endings: the page is written with
// the ending of its first line ("\r\n" or "\n"); a UTF-8 byte-order mark is
// kept.
//
// Thread-safety: a value type.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "world/entity_store.h"

namespace limbic::world {

// `s` as one line: control characters (tabs, newlines, NUL, ...) become
// spaces, runs of spaces collapse, and the ends are trimmed.
std::string OneLine(std::string_view s);
// The name a page is titled with: CleanName, then the control characters
// it leaves (NUL, ...) become '-' as in SafeFileName, so that
// SafeFileName(DisplayName(n)) == SafeFileName(n).
std::string DisplayName(std::string_view name);
// `s` with bytes that are not valid UTF-8 replaced by U+FFFD.
std::string ToValidUtf8(std::string_view s);

struct PageStats {
  size_t facts = 0, timeline = 0, relations = 0;  // items
  std::string newest_date;                        // "" when Timeline has no date
};

class Page {
 public:
  static Page Parse(std::string_view text);
  // The canonical page: title, type and the three (empty) sections.
  static Page New(std::string_view name, EntityType type);

  std::string Render() const;

  // The title's text; "" when the page has none.
  std::string Title() const;
  // The **Type:** value; kConcept when missing or not a type name.
  EntityType Type() const;
  PageStats Stats() const;

  // Adds what `u` brings that the page does not have (u.name is already a
  // DisplayName, lines are OneLine'd and dates valid). Returns the item
  // lines added; *changed tells whether anything changed at all (a type
  // upgrade, a missing title or type line).
  size_t Add(const PageUpdate& u, bool* changed);

 private:
  struct Span {
    int head = -1, end = -1;  // the heading's line; content is (head, end)
    bool found() const { return head >= 0; }
  };
  struct Layout {
    int title = -1, type = -1;
    Span sections[3];                                 // Facts, Timeline, Relations
    std::vector<int> items[3];                        // their item lines
    std::vector<std::pair<std::string, Span>> dates;  // under Timeline, in page order
  };

  Layout Scan() const;
  // One past the last non-blank line in (span.head, span.end), or head + 1.
  int ContentEnd(Span span) const;
  // Where new items go in `span`: after its last item (and that item's
  // indented continuation lines), else after its last non-blank line.
  int InsertPoint(Span span, const std::vector<int>& items) const;
  // Appends `items` to section `which`, creating it in canonical order.
  void AddToSection(int which, std::vector<std::string> items);
  void Insert(int at, std::vector<std::string> lines);

  std::string bom_;
  bool crlf_ = false;
  std::vector<std::string> lines_;  // without line endings
};

}  // namespace limbic::world
