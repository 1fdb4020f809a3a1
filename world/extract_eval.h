// Measuring an extractor against a labelled sample: precision, recall and
// F1 of its entities and triplets (docs/world.md, "Measuring extraction";
// `limbic memory extract --evaluate FILE`).
//
// Sample format: JSON lines; blank lines and lines starting with '#' are
// comments.
//   line     = {"date": DATE, "text": STRING,
//               "entities": [[NAME, TYPE], ...],
//               "triplets": [[SUBJECT, PREDICATE, OBJECT], ...]}
//   DATE     = YYYY-MM-DD
//   TYPE     = person | company | project | tool | concept
// Unknown members are errors (a misspelt "entites" would label nothing).
// The lines of one date, in file order and joined by newlines, are one
// daily log: the extractor sees a day whole, as `limbic memory extract`
// does, and a day's labels are the union of its lines' labels (one type
// per name in a day, else an error naming both lines).
//
// Scoring, per day, summed over the days (micro-averaged):
//   - names match by NameKey (case and spacing folded): "@dana" is
//     labelled "dana", a wikilink by its target, a tag without '#';
//   - an entity is right when its name and type match a label of its day
//     ("entities"); "names" counts the name alone, whatever the type;
//   - a triplet is right when subject, predicate and object match (names
//     by NameKey, the predicate exactly); its date is not compared;
//   - precision = right / found, recall = right / labelled, F1 their
//     harmonic mean; precision is 1 when nothing was found, recall 1 when
//     nothing was labelled.
//
// Thread-safety: pure functions; the extractor is used by the caller's
// thread only.
#pragma once

#include <string>
#include <vector>

#include "world/extract.h"

namespace limbic::world {

//! One day of a labelled sample: its text and what it should yield.
struct LabelledDay {
  std::string date;
  std::string text;                                          // the day's lines, '\n' between them
  size_t lines = 0;                                          // sample lines of this day
  std::vector<std::pair<std::string, EntityType>> entities;  // once each, by NameKey
  std::vector<Triplet> triplets;                             // date left empty
};

//! A parsed sample: its days in order of first appearance.
struct Sample {
  std::vector<LabelledDay> days;
  size_t lines = 0;
};

//! Parses a sample (`source` names it in errors); InvalidArgument naming
//! the line number and the member for anything not in the format above.
Result<Sample> ParseSample(std::string_view text, const std::string& source);

//! Counts for one kind of item.
struct Score {
  size_t labelled = 0, found = 0, right = 0;
  double precision() const;
  double recall() const;
  double f1() const;
};

//! What an extractor made of a sample.
struct Evaluation {
  std::string extractor;  // Extraction::extractor of the first day ("heuristic", "llm")
  size_t days = 0, lines = 0;
  Score entities;  // name and type
  Score names;     // name only
  Score triplets;
  // "DATE entity NAME (TYPE)", "DATE triplet S -P-> O": labelled and not
  // found, and found and not labelled, in day order.
  std::vector<std::string> missed, extra;
  std::vector<std::string> notes;  // the extractor's notes (an llm fallback), per day
};

//! Runs `extractor` on each day of `sample` and scores it; fails only when
//! the extractor fails.
Result<Evaluation> Evaluate(Extractor& extractor, const Sample& sample);

//! {extractor, days, lines, entities{labelled, found, right, precision,
//!  recall, f1}, names{...}, triplets{...}, missed[], extra[], notes[]}
json EvaluationToJson(const Evaluation& e);

}  // namespace limbic::world
