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
// ("this" is written as is: the page is the entity.) A new page has the
// title, the type line and the three sections, empty or not.
//
// Append-only: Apply adds lines and never removes or rewrites one. A fact
// or relation line already on the page is not added again; a timeline line
// already under the same date is not added again (the same line on another
// day is a new observation). Lines compare by NameKey (case, spacing and
// markup around the whole line do not make a line new). Lines are made
// one line first (control characters become spaces); empty ones are
// dropped. Dates under Timeline are kept in date order (a new date's
// heading goes where it belongs; lines under a date keep their order).
// Lines and sections a person added by hand are kept as they are, where
// they are: new lines go after the last list item of their section (or
// date), else after its last non-blank line; a section that is missing is
// created, when a line must go there, before the next of Facts, Timeline,
// Relations that exists (else at the end); a page without a title or
// **Type:** line gets one. Headings inside ``` fences are text. A page in
// CRLF stays CRLF. The one line that can change is **Type:**: a page typed
// "concept" (the type of last resort) takes a more specific type when one
// is observed.
//
// File names: SafeFileName(name) + ".md". Two names with the same NameKey
// are one entity (its page keeps the first name seen, cleaned: CleanName,
// control characters as '-'). A page is found by NameKey whatever the case
// of its file name. Two entities whose names differ but make the same file
// name ("a/b", "a:b") do not share a page: the second one's file is
// SafeFileName + "-" + 8 hex digits of a hash of its NameKey.
//
// Pages over 16 MiB (a paste gone wrong) are not parsed whole: Apply on
// one fails with FailedPrecondition naming the file, before anything is
// written, and so does Read; List and Decay look at their first 16 MiB.
// Bytes that are not UTF-8 are kept as they are on the page.
//
// Decay: an entity's last reference is the newest date under its Timeline
// (the file's modification day when it has none). Decay moves pages whose
// last reference is more than `days` before `today` into entities/archive/,
// except protected types; Apply on an archived entity moves it back first
// (whether or not it adds a line). A page whose file name is taken in
// archive/ already stays where it is.
//
// Concurrency: several processes (agents sharing one entities folder, a
// runtime and a `limbic memory extract`) may write at once: every Apply and
// Decay holds Env::LockFile(<dir>/.lock, LockWait::kYes) for its whole
// duration; each page is replaced with Env::WriteFileAtomic(...,
// FileDurability::kDerived) (a hidden temp file in the same folder that takes
// the page's place in one step), so a reader never sees half a page; every
// change goes through the store's Env. Pages are not fsynced:
// the world model is derived from the events log and the archive and
// `limbic memory extract --force` rebuilds it. Apply reads each touched
// page once and writes it once. Readers (List, Exists, Read) take no lock.
// Each writer counts its writes in <dir>/.lock, so a store keeps its
// listing of the folder while nobody wrote and the folders' modification
// times are unchanged.
//
// Thread-safety: one EntityStore per thread (two of them exclude each other
// through the lock, in one process too).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/env.h"
#include "world/model.h"

namespace limbic::world {

// A name made safe as a file name (without ".md"): CleanName, then '/',
// '\', ':', '*', '?', '"', '<', '>', '|', control characters (C0, DEL,
// C1) and bytes that are not UTF-8 become '-', runs of '-' collapse,
// leading and trailing dots, spaces and '-' are removed, and the result is
// cut to at most 120 bytes on a UTF-8 boundary. So it never has a '/',
// never starts with '.', and is never "." or "..". InvalidArgument naming
// the name when nothing is left ("", "..", "///").
Result<std::string> SafeFileName(std::string_view name);

// What to add to one entity's page.
struct PageUpdate {
  std::string name;
  EntityType type = EntityType::kConcept;
  std::vector<std::string> facts;                             // lines without the "- "
  std::vector<std::pair<std::string, std::string>> timeline;  // {date, line}
  std::vector<std::string> relations;  // whole lines without "- ", as rendered above
};

// Relation lines for both pages of subject —predicate→ object: names as
// in page titles, the predicate made one line.
std::string IncomingRelation(const std::string& subject,
                             const std::string& predicate);  // on object's page
std::string OutgoingRelation(const std::string& predicate,
                             const std::string& object);  // on subject's page

struct PageInfo {
  std::string name;  // from the page's "# " title (the file name without one); valid UTF-8
  EntityType type = EntityType::kConcept;
  std::string file;             // path relative to the entities dir ("Alice.md", "archive/Bob.md")
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
  // Every change goes through `env`.
  static Result<std::unique_ptr<EntityStore>> Open(const std::string& dir, Env* env = Env::Default());
  ~EntityStore();

  // Adds every update under one lock. Updates with the same NameKey are
  // merged (the first specific type wins over concept). An update whose
  // name has no SafeFileName, or with a timeline date that is not
  // YYYY-MM-DD, fails the whole call (InvalidArgument naming it) before
  // anything is written. An update with nothing to add still makes the
  // entity's page.
  Result<ApplyResult> Apply(const std::vector<PageUpdate>& updates);
  // Every page, active and archived, sorted by name key.
  Result<std::vector<PageInfo>> List() const;
  // Whether a page exists for the name (active or archived).
  bool Exists(std::string_view name) const;
  // One page's Markdown, its bytes as on disk (not necessarily UTF-8);
  // NotFound when there is none.
  Result<std::string> Read(std::string_view name) const;
  // Moves stale pages to archive/; returns the names moved, by NameKey.
  // InvalidArgument when `today` is not YYYY-MM-DD or `days` < 0.
  Result<std::vector<std::string>> Decay(const std::string& today, int days,
                                         const std::set<EntityType>& protected_types);

  const std::string& dir() const { return dir_; }

 private:
  struct Index;  // the page files by lower-cased name, and when they were listed
  struct Found;  // a page found by name

  EntityStore(std::string dir, Env* env);
  // The page files as they are. A listing is reused while the generation
  // number in <dir>/.lock (bumped under the lock by every Apply and Decay
  // that writes) and the folders' modification times (hand edits) are
  // unchanged. `locked`: the caller holds the lock, so a new listing also
  // removes the temp files of a writer that died mid-write.
  Result<std::shared_ptr<const Index>> CurrentIndex(bool locked) const;
  // After writing holding `lock` (<dir>/.lock): bumps the generation and
  // keeps `next` (the files as this writer left them) as the listing.
  void Remember(FileLock& lock, Index next);
  // The page of a name, active before archived.
  Result<std::optional<Found>> Find(std::string_view name) const;

  std::string dir_;
  Env* env_;
  mutable std::shared_ptr<const Index> index_;
};

}  // namespace limbic::world
