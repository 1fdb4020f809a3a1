// The durable events log: segment files of JSON lines with group commit.
//
// On-disk layout, under the log directory (normally <state>/events/):
//
//   <first-seq, 20 digits>.jsonl   e.g. 00000000000000000001.jsonl
//
// Each segment holds the events whose seqs start at the number in its name,
// one encoded event per line (grammar in event.h), contiguous, with the next
// segment starting at the following seq. A segment is closed and a new one
// started when it reaches LogOptions::segment_bytes (checked at event
// boundaries, so a segment may overshoot by one event).
//
// Group commit: Submit() queues a batch and returns at once. One writer
// thread takes everything queued, encodes it, writes it with one write and,
// in Durability::kFsync mode, one fdatasync per group, then hands the whole
// group back through LogOptions::on_group (on the writer thread, in seq
// order). The caller (state::Engine) applies each group to the projections
// in one WriteBatch and only then acknowledges.
//
// Recovery (Open): every segment is scanned; each line must be complete and
// its seq contiguous with the previous one. The one exception is a torn tail:
// bytes after the last '\n' of the *last* segment (a final line without its
// newline: a crash during a write, never acknowledged) are truncated and a
// warning is logged. A complete line (one that ends in '\n') that does not
// decode is damage, not a torn write, wherever it is: it refuses to open,
// like bad JSON anywhere, a seq gap, an incomplete line at the end of a
// segment that is followed by another, or a non-contiguous segment name.
// Every refusal is Corruption naming the file and byte offset, and changes
// nothing.
//
// Seals (segment.h): a segment whose sealed prefix no longer hashes to its
// seal, or whose seal is unreadable, was changed after it was written: open
// refuses it (Corruption naming the segment and the byte range the seal
// covers) unless LogOptions::accept_changed_segments says an operator has
// decided to take the segment as it now is.
#pragma once

#include <spdlog/logger.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/env.h"
#include "state/event.h"
#include "base/status.h"

namespace limbic::state {

enum class Durability {
  kFsync,     // a group is acknowledged only after fdatasync
  kInterval,  // acknowledged after write(2); fdatasync every interval_ms
  kNone,      // acknowledged after write(2); synced only on Close/Flush
};
// "fsync" | "interval" | "none"
std::string_view DurabilityName(Durability d);
Result<Durability> ParseDurability(std::string_view name);

// A unit of group commit: events submitted together. `tag` is the caller's
// and comes back untouched with the group.
struct LogBatch {
  std::vector<Event> events;
  uint64_t tag = 0;
};

// Called on the writer thread once per group, in order. A group whose write
// or fdatasync failed comes back with Unavailable, saying which of two
// things is true:
//   "not written: ..."      the log was cut back to where it stood before
//                           the group and synced: none of it is durable;
//   "outcome unknown: ..."  cutting back failed too: the group may or may
//                           not be in the log (a restart would tell).
// After such a group the log writes nothing more: every later batch comes
// back "not written" until the caller calls Resume. Other errors (a seq gap,
// a failed background sync in interval or none mode) break the log for
// good: this and every later group fail with the same status.
using GroupCallback = std::function<void(const Status& status, std::vector<LogBatch>&& group)>;

inline constexpr uint64_t kDefaultSegmentBytes = 64ull << 20;

struct LogOptions {
  Env* env = nullptr;            // nullptr = Env::Default()
  std::string dir;               // created if missing (unless read_only)
  uint64_t segment_bytes = kDefaultSegmentBytes;
  Durability durability = Durability::kFsync;
  int interval_ms = 100;         // for Durability::kInterval
  bool read_only = false;        // scan and report, never truncate or write
  std::shared_ptr<spdlog::logger> logger;  // nullptr = a logger that drops everything
  GroupCallback on_group;        // required unless read_only
  // Called on the writer thread after each fdatasync with its duration in
  // seconds (for the runtime's latency histogram). Optional.
  std::function<void(double seconds)> on_sync;
  // A segment that no longer matches its seal (or whose seal is unreadable)
  // is decoded line by line instead of refused and, unless read_only,
  // resealed as it now is; each is listed in LogRecovery::changed_segments.
  // Only for `limbic fsck` (which reports them) and the operator's explicit
  // `limbic fsck --accept-changed-segments`.
  bool accept_changed_segments = false;
};

// A segment whose bytes no longer match its seal.
struct ChangedSegment {
  std::string file;
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;      // as the segment now decodes
  uint64_t sealed_bytes = 0;  // the range [0, sealed_bytes) the seal covered
  std::string sealed_sha256;  // empty when the seal was unreadable
  uint64_t bytes = 0;         // the segment's size now
  std::string sha256;         // of all its bytes now
  std::string why;            // "the sealed bytes hash differently", ...
};

// What Open found.
struct LogRecovery {
  uint64_t first_seq = 0;  // 0 when the log is empty
  uint64_t last_seq = 0;
  size_t segments = 0;
  uint64_t bytes = 0;
  uint64_t truncated_bytes = 0;  // torn tail removed (0 = none)
  std::string truncated_file;    // which segment, when truncated_bytes > 0
  uint64_t truncated_offset = 0;
  TimeMs last_ts = 0;  // ts of the last event (0 when empty)
  // Closed segments without a seal (a crash right after rotation, or a log
  // older than seals): decoded in full and, unless read_only, sealed.
  std::vector<std::string> unsealed_segments;
  // Only with LogOptions::accept_changed_segments.
  std::vector<ChangedSegment> changed_segments;
};

// Where an event was read from.
struct EventLocation {
  std::string file;
  uint64_t offset = 0;  // byte offset of the start of the line
};

class EventLog {
 public:
  // Recovers the log in options.dir and starts the writer thread (unless
  // read_only). Errors: Corruption (file + offset), IOError.
  static Result<std::unique_ptr<EventLog>> Open(LogOptions options, LogRecovery* recovery);

  // Drains the queue, syncs and joins the writer.
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // Thread-safe. The batch's events must carry contiguous seqs continuing
  // the last submitted one (the caller assigns them). If the log is broken
  // or closed the batch comes back through on_group with the error.
  void Submit(LogBatch batch);

  // After a group failed ("not written" or "outcome unknown") and every
  // batch submitted after it has come back through on_group: lets the log
  // take batches again, continuing after `last_seq`, which must be the last
  // seq of the log as it was before the failed group. If that group's
  // outcome is still unknown, the writer first tries again to cut the log
  // back (and this call waits for it); while that fails, returns the
  // "outcome unknown" status. OK when no group has failed.
  Status Resume(uint64_t last_seq);

  // Blocks until everything submitted so far has been written and synced
  // (whatever the durability mode) and its group callback has run, or has
  // failed. Returns the error that broke the log, if any (failed groups
  // were reported through on_group).
  Status Flush();

  // Flush, then stop the writer. Later Submits fail with Unavailable.
  Status Close();

  // Last seq handed to the writer (or recovered, if nothing was submitted).
  uint64_t last_submitted_seq() const;
  // Last seq whose group callback has run with OK.
  uint64_t last_written_seq() const;
  // Last seq the log holds durably: written and fdatasynced (with
  // durability interval or none, a Flush syncs). A failed group cut back
  // out of the log is not in it; one whose outcome is unknown is not
  // counted.
  uint64_t last_synced_seq() const;
  // The sticky error, if the log is broken.
  Status error() const;

  const std::string& dir() const;

  class Impl;

 private:
  explicit EventLog(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Reads events in order from a log directory (segment files) or a single
// .jsonl file (what `limbic events export` writes). Used for recovery
// re-apply, replay, tail and export. Not thread-safe.
class LogReader {
 public:
  struct Options {
    Env* env = nullptr;      // nullptr = Env::Default()
    uint64_t from_seq = 1;   // skip events before this seq (segments before it are not read)
    // A final line without '\n' is "not written yet": Next() reports end of
    // log before it and will return it once it is complete (for tail -f and
    // for reading a log another process is writing). When false, such a
    // line is an error like any other.
    bool tolerate_partial_tail = true;
    // Check that seqs are contiguous and ts never decreases (from the first
    // event read on).
    bool check_contiguous = true;
    // false: lines are not decoded; Next fills only Event::seq (read off
    // the line's "{"v":1,"seq":N," start; other lines are decoded as
    // usual) and raw_line() has the line. For a reader that ships the
    // lines as they are (replication) and must not pay for parsing them.
    bool decode = true;
  };

  // `path` is a directory of segments or a .jsonl file.
  static Result<std::unique_ptr<LogReader>> Open(const std::string& path, Options options);
  ~LogReader();

  // Reads the next event into *event. Returns true when one was read, false
  // at the (current) end of the log; errors name the file and byte offset.
  // At the end, a later call sees events appended in the meantime,
  // including new segments.
  Result<bool> Next(Event* event, EventLocation* where = nullptr);
  // The raw line (without '\n') of the event last returned by Next.
  std::string_view raw_line() const;
  // How far Next has read: the log's bytes up to the end of the line last
  // returned over all its bytes, 0..1 (each file's size taken when first
  // asked; a file that grew since counts at most its size then). Segments
  // before from_seq count as read.
  double Progress();

  class Impl;

 private:
  explicit LogReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// "<dir>/00000000000000000042.jsonl"
std::string SegmentFileName(const std::string& dir, uint64_t first_seq);

// The last event of `type` in the log directory `dir`, or nullopt when it
// holds none. Segments are read from the last one back, and only lines
// whose text names `type` are decoded, so finding an event near the end of
// a long log reads little more than the last segment. *bytes_read (when
// given) receives how much was read. Errors: IOError, or Corruption (file
// and offset) for a candidate line that does not decode.
Result<std::optional<Event>> FindLastEvent(Env* env, const std::string& dir, EventType type,
                                           uint64_t* bytes_read = nullptr);

}  // namespace limbic::state
