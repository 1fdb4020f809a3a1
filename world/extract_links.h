// The heuristic extractor's reading of the words between two neighbouring
// mentions of a sentence (extract_links.cc): the types a link implies
// ("Sarah Kim from Globex" makes Globex a company, "acquired" two
// companies, "Tomás and Inês" one type for both) and the triplets it
// states. The rules are in extract.h.
//
// Internal to the extractors. Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "world/model.h"

namespace limbic::world::internal {

//! How sure a mention's type is, weakest first: a rule retypes only a
//! mention typed less surely than the rule itself.
enum class Strength : uint8_t {
  kNone,       // nothing typed it: concept
  kShape,      // looks like a person's name: a given name, "Alice Chen"
  kContext,    // a word around it: "at", "uses", "with", "said", "the ... launch"
  kKnownTool,  // the list of known tools (Stripe, GitHub are companies too)
  kRelation,   // a link to another mention: "from Acme Corp", "acquired"
  kForm,       // its own form: "Acme Corp", "Project Atlas", @handle, URL, owner/repo, #tag
};

//! One entity mention of a line.
struct Mention {
  size_t begin = 0, end = 0;  // bytes of the line
  int sentence = 0;
  std::string name;
  EntityType type = EntityType::kConcept;
  Strength strength = Strength::kNone;
  bool after_from = false;  // the word before it is "from"
  // A sentence's first word not seen capitalised elsewhere, or a lone
  // acronym: an entity only if some rule types it.
  bool needs_type = false;
};

//! Retypes `mentions` (one line's, in line order) by their links.
void RefineTypes(std::string_view line, std::vector<Mention>* mentions);

//! A triplet between two of a line's mentions (indexes).
struct Stated {
  size_t subject = 0, object = 0;
  std::string predicate;
};

//! The triplets the links between `mentions` (typed, in line order) state.
std::vector<Stated> StatedTriplets(std::string_view line, const std::vector<Mention>& mentions);

}  // namespace limbic::world::internal
