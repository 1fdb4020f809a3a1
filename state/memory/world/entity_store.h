// The entity store: one Markdown wiki page per entity under
// <state>/memory/entities/ (docs/world.md "Entity pages").
//
//   # Name
//   **Type:** person|company|project|tool|concept
//
//   ## Facts
//   - permanent attributes
//
//   ## Timeline
//   ### [[YYYY-MM-DD]]
//   - what happened that day
//
//   ## Relations
//   - [[Other]] predicate → this        (Other —predicate→ this entity)
//   - this predicate → [[Other]]        (this entity —predicate→ Other)
//
// Append-only: Apply adds lines and never removes or rewrites one. A fact
// or relation line already on the page is not added again; a timeline line
// already under the same date is not added again (the same line on another
// day is a new observation). Dates under Timeline are kept in date order (a
// new date's heading goes where it belongs; lines under a date keep their
// order). Lines and sections a person added by hand are kept as they are.
// The one line that can change is **Type:**: a page typed "concept" (the
// type of last resort) takes a more specific type when one is observed.
//
// File names: SafeFileName(name) + ".md". Two names with the same NameKey
// are one entity (its page keeps the first name seen). A page is found by
// NameKey whatever the case of its file name.
//
// Decay: an entity's last reference is the newest date under its Timeline
// (the file's modification day when it has none). Decay moves pages whose
// last reference is more than `days` before `today` into entities/archive/,
// except protected types; Apply on an archived entity moves it back first.
//
// Concurrency: several processes (agents sharing one entities folder, a
// runtime and a `limbic memory extract`) may write at once: every Apply and
// Decay holds an exclusive flock on <dir>/.lock for its whole duration;
// each page is rewritten through a temp file and rename(2), so a reader
// never sees half a page. Pages are not fsynced: the world model is derived
// from the events log and the archive and `limbic memory extract --force`
// rebuilds it.
//
// Thread-safety: one EntityStore per thread (the flock is per open file).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "state/memory/world/model.h"

namespace limbic::world {

// A name made safe as a file name (without ".md"): CleanName, then '/',
// '\', ':', '*', '?', '"', '<', '>', '|' and control characters become
// '-', runs of '-' collapse, leading and trailing dots, spaces and '-' are
// removed, and the result is cut to at most 120 bytes on a UTF-8 boundary.
// InvalidArgument naming the name when nothing is left ("", "..", "///").
Result<std::string> SafeFileName(std::string_view name);

// What to add to one entity's page.
struct PageUpdate {
  std::string name;
  EntityType type = EntityType::kConcept;
  std::vector<std::string> facts;  // lines without the "- "
  std::vector<std::pair<std::string, std::string>> timeline;  // {date, line}
  std::vector<std::string> relations;  // whole lines without "- ", as rendered above
};

// Relation lines for both pages of subject —predicate→ object.
std::string IncomingRelation(const std::string& subject, const std::string& predicate);  // on object's page
std::string OutgoingRelation(const std::string& predicate, const std::string& object);   // on subject's page

struct PageInfo {
  std::string name;  // from the page's "# " title
  EntityType type = EntityType::kConcept;
  std::string file;  // path relative to the entities dir ("Alice.md", "archive/Bob.md")
  std::string last_referenced;  // YYYY-MM-DD
  bool archived = false;
  size_t facts = 0, timeline = 0, relations = 0;  // line counts
};

struct ApplyResult {
  size_t pages_created = 0, pages_updated = 0, lines_added = 0, restored = 0;
};

class EntityStore {
 public:
  // `dir` is <state>/memory/entities; created (with archive/) if missing.
  static Result<std::unique_ptr<EntityStore>> Open(const std::string& dir);
  ~EntityStore();

  // Adds every update under one lock. Updates with the same NameKey are
  // merged. An update whose name has no SafeFileName fails the whole call
  // (InvalidArgument naming it) before anything is written.
  Result<ApplyResult> Apply(const std::vector<PageUpdate>& updates);
  // Every page, active and archived, sorted by name key.
  Result<std::vector<PageInfo>> List() const;
  // Whether a page exists for the name (active or archived).
  bool Exists(std::string_view name) const;
  // One page's Markdown; NotFound when there is none.
  Result<std::string> Read(std::string_view name) const;
  // Moves stale pages to archive/; returns the names moved.
  Result<std::vector<std::string>> Decay(const std::string& today, int days,
                                         const std::set<EntityType>& protected_types);

  const std::string& dir() const { return dir_; }

 private:
  explicit EntityStore(std::string dir);
  std::string dir_;
};

}  // namespace limbic::world
