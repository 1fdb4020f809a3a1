// Internals of the extractors (extract.h), shared by their .cc files; not
// part of the world model's interface.
//
// Thread-safety: the functions are pure; a Collector or a TextScanner is
// used by one thread.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "world/model.h"

namespace limbic::world::internal {

constexpr size_t npos = std::string_view::npos;

// Names longer than this many bytes are not names (a runaway wikilink, a
// line of junk).
inline constexpr size_t kMaxNameBytes = 100;
// Event texts are cut to this many bytes (on a UTF-8 boundary).
inline constexpr size_t kMaxEventBytes = 500;

// ---- the lexicon (extract_words.cc); arguments in ASCII lower case ----

// Sentence starters, pronouns, days, months, common verbs and adverbs,
// Markdown-log headings ("notes", "todo") and everyday acronyms ("api").
bool IsStopWord(std::string_view lower);
// The usual spelling of a known tool ("postgresql" -> "PostgreSQL"), or
// empty when `lower` is not one.
std::string_view KnownTool(std::string_view lower);
// The last word of a company's name: "inc", "corp", "gmbh", "labs", ...
bool IsCompanyWord(std::string_view lower);
// A common given name ("priya", "tomás"; extract_names.cc).
bool IsGivenName(std::string_view lower);
// A position or title that names no one alone: "cto", "vp", "director".
bool IsRoleWord(std::string_view lower);

// ---- text helpers (extract_collector.cc) ----

std::string AsciiLower(std::string_view s);
// `text` on one line: white space and control characters collapsed into
// single spaces, bytes that are not UTF-8 replaced by U+FFFD, cut to
// `max_bytes` on a UTF-8 boundary.
std::string OneLine(std::string_view text, size_t max_bytes = kMaxEventBytes);

// Accumulates an Extraction: entities by NameKey with the most specific
// type (structured fields over text, then person, company, project, tool,
// concept), facts and triplets without repeats, events in the order added.
// Triplets and events refer to entities by any spelling of their name; Finish
// writes the entity's own name.
class Collector {
 public:
  // Adds (or retypes) the entity named `name` and returns its cleaned name,
  // or "" when `name` is not a usable name (empty after CleanName, longer
  // than kMaxNameBytes, not UTF-8, control characters).
  std::string Add(std::string_view name, EntityType type, bool structured);
  // A fact for an entity already added.
  void AddFact(std::string_view name, std::string fact);
  // Skipped when a field is empty or it was added before (names by NameKey).
  void AddTriplet(std::string_view subject, std::string_view predicate, std::string_view object,
                  const std::string& date);
  // `text` goes through OneLine; `names` (entities already added) are kept
  // once each, in order.
  void AddEvent(const std::string& date, std::string_view text,
                const std::vector<std::string>& names);

  Extraction Finish(std::string extractor);

 private:
  struct Slot {
    Entity entity;
    bool structured = false;
    std::unordered_set<std::string> facts;
  };
  // The entity's own name for `name`, or `name` when it is not an entity.
  const std::string& Resolve(const std::string& name) const;

  std::vector<Slot> slots_;
  std::unordered_map<std::string, size_t> by_key_;  // NameKey -> slots_ index
  std::vector<Triplet> triplets_;
  std::unordered_set<std::string> triplet_keys_;
  std::vector<WorldEvent> events_;
};

// Finds entities, triplets, facts and line events in Markdown text
// (extract_text.cc; the rules are in extract.h). Learn every text of an
// input first, so that a capitalised word at the start of a sentence can be
// recognised by the same word seen mid-sentence anywhere in the input, and
// "Helios" as the project "Project Helios" names; then Scan each.
class TextScanner {
 public:
  explicit TextScanner(Collector* out) : out_(out) {}

  void Learn(std::string_view text);

  // Scans `text` line by line, starting on `date`. With `daily_log`, a
  // heading with a date changes the date, and each line of at least three
  // words naming an entity is an event. Returns the names of the entities
  // found, once each, in order of first mention.
  std::vector<std::string> Scan(std::string_view text, std::string date, bool daily_log);

 private:
  Collector* out_;
  std::unordered_set<std::string> mid_sentence_;  // capitalised words seen mid-sentence
  std::unordered_set<std::string> projects_;      // NameKey of X in every "Project X" seen
};

// The heuristic extraction of `input` (extract_heuristic.cc): what
// MakeHeuristicExtractor()->Extract does, and the llm extractor's fallback.
Result<Extraction> HeuristicExtract(const ExtractInput& input);
// InvalidArgument naming the source when input.date is not YYYY-MM-DD.
Status CheckInputDate(const ExtractInput& input);

}  // namespace limbic::world::internal
