// A folder of daily logs, for `limbic memory extract DIR [--watch]`
// (docs/world.md, "A folder of daily logs"): which of its files are daily
// logs, and which of them changed since the folder was last looked at.
//
// A daily log is an entry directly in the folder whose name starts with a
// date, YYYY-MM-DD, and ends in ".md" ("2026-03-02.md", "2026-03-02
// standup.md"); FileInput dates it by that name. Names starting with '.'
// (editor swap files, .obsidian/) and subfolders are passed over without a
// word; any other file is not a daily log, and Scan names it once.
//
// What is due: each Scan stats the folder's daily logs (size and
// modification time); a log is due when that stat differs from the one it
// had when it was last handed out (every log, on the first Scan). With
// `settle`, a changed log is due only once its stat has stayed the same
// from one Scan to the next, so that a file being written is not read half
// way (a writer that pauses longer than the time between two Scans can
// still be read early; the next change brings the rest). A log handed out
// is not due again until it changes, whatever became of its extraction:
// the world model's ledger, not this class, decides what is new, and an
// extraction that failed is tried again when the file changes.
//
// Thread-safety: one thread at a time.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace limbic::world {

class LogFolder {
 public:
  //! `dir` as the user named it; the paths handed out are under it.
  explicit LogFolder(std::string dir) : dir_(std::move(dir)) {}

  //! What one Scan found.
  struct Changes {
    std::vector<std::string> due;      // daily logs to extract, in name order
    std::vector<std::string> ignored;  // files that are not daily logs, each named once ever
  };

  //! Lists the folder; NotFound or InvalidArgument naming it when it is
  //! missing or not a folder, IOError when it cannot be read.
  Result<Changes> Scan(bool settle);

  //! Whether `name` (a file name, no folder) is a daily log's.
  static bool IsDailyLogName(std::string_view name);

  const std::string& dir() const { return dir_; }

 private:
  // Size and modification time (ns); all zero when the entry cannot be
  // stat'ed (a dangling symlink): FileInput then says why.
  struct Stamp {
    uint64_t size = 0;
    int64_t mtime = 0;
    bool operator==(const Stamp&) const = default;
  };
  struct Seen {
    std::optional<Stamp> handed;  // when last handed out
    std::optional<Stamp> last;    // at the previous Scan; none for a log new this Scan
  };

  std::string dir_;
  std::map<std::string, Seen> logs_;  // by file name; logs gone from the folder are forgotten
  std::set<std::string> ignored_;     // names already reported
};

}  // namespace limbic::world
