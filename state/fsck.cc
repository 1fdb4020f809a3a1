// `limbic fsck` (replay.h, FsckReport): the log, the projections and the
// checkpoints checked without changing anything; DeepEventNote for events
// nested past api.max_json_depth.
#include <filesystem>
#include <string>

#include "base/json.h"
#include "state/checkpoint.h"
#include "state/engine.h"
#include "state/event_log.h"
#include "state/replay.h"
#include "state/segment.h"

namespace limbic::state {
namespace fs = std::filesystem;

std::optional<std::string> DeepEventNote(const Event& e, const EventLocation& where,
                                         std::string_view raw, size_t limit) {
  const size_t depth = JsonDepth(raw);
  if (depth <= limit) return std::nullopt;
  // The event's subject: its first string field named *_id (percept_id, ...).
  std::string id;
  for (auto it = e.fields.begin(); it != e.fields.end() && id.empty(); ++it)
    if (it.key().ends_with("_id") && it->is_string()) id = " " + it->get<std::string>();
  return where.file + " offset " + std::to_string(where.offset) + ": seq " +
         std::to_string(e.seq) + " (" + std::string(EventTypeName(e.type)) + id + ") nests " +
         std::to_string(depth) + " deep, beyond api.max_json_depth " + std::to_string(limit);
}

namespace {

// `log_whole`: the log was read to its end (else report->last_seq is
// where reading stopped, at a problem reported already).
void FsckCheckpoints(const std::string& state_dir, bool deep, bool log_whole, FsckReport* report) {
  std::error_code ec;
  const std::string dir = CheckpointsDirPath(state_dir);
  if (fs::exists(fs::symlink_status(dir, ec)) && !fs::is_directory(dir, ec))
    report->warnings.push_back(dir + ": not a directory: no checkpoint can be taken or read "
                               "(looks replay from seq 1; remove it)");
  CheckpointList list = ListCheckpoints(state_dir);
  report->warnings.insert(report->warnings.end(), list.warnings.begin(), list.warnings.end());
  for (const std::string& dir : list.stale)
    report->warnings.push_back("checkpoint " + dir +
                               ": another format or pools' layout; ignored, removed by the "
                               "runtime's retention");
  for (const CheckpointEntry& c : list.usable) {
    if (c.manifest.seq > report->last_seq && !log_whole) {
      report->warnings.push_back("checkpoint " + c.dir + ": not checked: the log could not be read "
                                 "past seq " + std::to_string(report->last_seq) +
                                 ", before its seq " + std::to_string(c.manifest.seq) +
                                 " (see the log's problem)");
      continue;
    }
    if (c.manifest.seq > report->last_seq) {
      report->warnings.push_back("checkpoint " + c.dir + ": beyond the log's last seq " +
                                 std::to_string(report->last_seq) + " (skipped by readers)");
      continue;
    }
    bool only_deep = false;
    Status s = CheckCheckpoint(c, EventsDirPath(state_dir), deep, &only_deep);
    if (!s.ok()) {
      // What only reading it whole finds: a look that reads part of it
      // checks only the blocks it reads (state/checkpoint.h, Check).
      report->warnings.push_back(
          s.message() + (only_deep ? " (a fork, a restore at start and replay --verify check it "
                                     "whole and skip it; a look at a seq reads only part of it "
                                     "and may still start from it: delete it)"
                                   : " (skipped by readers; delete it)"));
      continue;
    }
    ++report->checkpoints;
  }
}

}  // namespace

Result<FsckReport> Fsck(const std::string& state_dir, Env* env, size_t max_json_depth,
                        bool deep_checkpoints) {
  FsckReport report;
  std::error_code ec;
  if (!fs::exists(state_dir, ec)) return Status::NotFound("no limbic state in " + state_dir);

  // One problem per place: recovery and the reader may both name the same
  // line ("<file> offset N: ...").
  auto problem = [&](const std::string& p) {
    report.ok = false;
    const std::string place = p.substr(0, p.find(": ") + 1);
    for (const std::string& known : report.problems)
      if (known == p || (!place.empty() && known.compare(0, place.size(), place) == 0)) return;
    report.problems.push_back(p);
  };
  Env* e_env = env ? env : Env::Default();
  if (e_env->FileExists(ReplayingFilePath(state_dir)))
    problem(ReplayingFilePath(state_dir) +
            ": a replay or fork into this dir was cut short; it holds part of a log "
            "(remove the dir and replay or fork again)");
  // The projections, opened read-only before the log is read: a runtime
  // writing meanwhile logs each event before it applies it, so the log
  // read after reaches at least this applied_seq (opened after, db/
  // could be ahead of the log as read, and fsck would call that damage).
  ProjectionOptions popts;
  popts.path = DbDirPath(state_dir);
  popts.read_only = true;
  popts.create_if_missing = false;
  std::unique_ptr<Projection> db;  // null: none yet (warned), or it did not open (db_error)
  std::optional<Status> db_error;
  if (!fs::exists(popts.path, ec)) {
    report.warnings.push_back("no projections (db/) yet: the next start builds them from the log");
  } else if (!fs::exists(popts.path + "/CURRENT", ec)) {
    // A start cut short before its database was whole: e.g. a restore
    // from a checkpoint (db-restoring/), which the next start begins again.
    report.warnings.push_back(
        popts.path + " holds no database yet" +
        (fs::exists(state_dir + "/db-restoring", ec) ? " (a restore from a checkpoint was cut short)"
                                                     : "") +
        ": the next start builds the projections");
  } else if (auto opened = Projection::Open(popts); opened.ok()) {
    db = std::move(*opened);
  } else {
    db_error = opened.status();
  }

  const std::string events_dir = EventsDirPath(state_dir);
  auto segments = ListSegments(e_env, events_dir);
  if (!segments.ok()) return segments.status();
  report.segments = segments->size();

  // The log as recovery sees it: structure, seals, a torn tail. Segments
  // that no longer match their seals are decoded too (read-only: nothing is
  // resealed), so that one changed segment does not hide the rest.
  LogOptions lopts;
  lopts.env = env;
  lopts.dir = events_dir;
  lopts.read_only = true;
  lopts.accept_changed_segments = true;
  LogRecovery rec;
  auto log = EventLog::Open(std::move(lopts), &rec);
  if (!log.ok()) problem(log.status().message());
  for (const ChangedSegment& c : rec.changed_segments)
    problem(c.file + " bytes 0-" + std::to_string(c.sealed_bytes) +
            ": changed after it was sealed (" + c.why +
            "); start refuses it until `limbic fsck --accept-changed-segments`");
  for (const std::string& path : rec.unsealed_segments)
    report.warnings.push_back(path +
                              ": no seal (the next start checks it line by line and seals it)");
  if (log.ok() && rec.truncated_bytes > 0) {
    report.warnings.push_back(rec.truncated_file + " offset " +
                              std::to_string(rec.truncated_offset) + ": torn final line (" +
                              std::to_string(rec.truncated_bytes) +
                              " bytes, no newline: never acknowledged) that the next start will "
                              "truncate");
  }
  // ... and every event decoded in full, in order.
  LogReader::Options ropts;
  ropts.env = env;
  auto reader = LogReader::Open(events_dir, ropts);
  bool log_whole = false;
  if (!reader.ok()) {
    problem(reader.status().message());
  } else {
    Event e;
    EventLocation where;
    for (;;) {
      auto more = (*reader)->Next(&e, &where);
      if (!more.ok()) {
        problem(more.status().message());
        break;
      }
      if (!*more) {
        log_whole = true;
        break;
      }
      ++report.events;
      report.last_seq = e.seq;
      if (auto deep = DeepEventNote(e, where, (*reader)->raw_line(), max_json_depth))
        report.warnings.push_back(*deep + ": readable, replayed and acted on as stored; the API "
                                  "would refuse it now");
    }
  }

  FsckCheckpoints(state_dir, deep_checkpoints, log_whole, &report);

  // The projections.
  if (db_error) {
    report.ok = false;
    report.problems.push_back(db_error->message());
    return report;
  }
  if (!db) return report;
  report.applied_seq = db->applied_seq();
  if (report.applied_seq > report.last_seq && report.problems.empty()) {
    problem("db/ has applied events up to seq " + std::to_string(report.applied_seq) +
            " but the log ends at seq " + std::to_string(report.last_seq));
  }
  Status s = db->CheckIndexes();
  if (!s.ok()) problem(s.message());
  return report;
}

}  // namespace limbic::state
