// The world model's vocabulary: entities, triplets and dated events, as an
// extractor finds them in one input (a daily log, a day of the archive and
// of the events log), and the input itself.
//
// Names: an entity's name is what a reader sees ("Alice Chen",
// "acme/billing", "PostgreSQL"). Two names are the same entity when their
// keys are equal: NameKey folds case and collapses white space. Which file
// holds an entity's page is decided by entity_store.h (SafeFileName).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "state/event.h"
#include "base/status.h"

namespace limbic::world {

using nlohmann::json;

enum class EntityType { kPerson, kCompany, kProject, kTool, kConcept };
// "person" | "company" | "project" | "tool" | "concept"
std::string_view TypeName(EntityType t);
// InvalidArgument naming the value for anything else (case-sensitive).
Result<EntityType> ParseType(std::string_view name);

struct Entity {
  std::string name;
  EntityType type = EntityType::kConcept;
  std::vector<std::string> facts;  // permanent attributes, one line each ("is a database")
};

// subject —predicate→ object, observed on `date` (YYYY-MM-DD).
struct Triplet {
  std::string subject, predicate, object, date;
};

// Something that happened on `date`, in one line of text, and the entities
// it mentions (names as in Extraction::entities).
struct WorldEvent {
  std::string date;
  std::string text;
  std::vector<std::string> entities;
};

struct Extraction {
  std::vector<Entity> entities;  // each name once (by NameKey)
  std::vector<Triplet> triplets;
  std::vector<WorldEvent> events;
  std::string extractor;  // "heuristic" | "llm"
  std::string note;       // why the llm extractor fell back to heuristic, if it did
};

// One input to extract from.
struct ExtractInput {
  std::string date;    // the day it is about, YYYY-MM-DD (events without their own date get it)
  std::string source;  // where it came from, for the ledger and messages: a path, "day:YYYY-MM-DD"
  // Unstructured text: a Markdown daily log, staged archive entries. A
  // line "## YYYY-MM-DD" (or "# YYYY-MM-DD ...") dates what follows it.
  std::string text;
  // Structured events of the day from the events log (percept_arrived,
  // thread_created, thread_completed, ...), in seq order.
  std::vector<state::Event> events;
};

// `s` with every run of characters for which `gap` holds made one space,
// and none left at either end.
std::string CollapseGaps(std::string_view s, bool (*gap)(unsigned char));
// Trims, collapses runs of white space into one space, and strips
// Markdown emphasis and brackets around the whole name ("**Bob**",
// "[[Bob]]" -> "Bob").
std::string CleanName(std::string_view name);
// The identity of a name: CleanName, then ASCII lower case.
std::string NameKey(std::string_view name);

}  // namespace limbic::world
