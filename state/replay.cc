#include "state/replay.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "state/checkpoint.h"
#include "state/engine.h"
#include "state/event_log.h"
#include "base/json.h"
#include "base/time.h"
#include "state/segment.h"

namespace limbic::state {
namespace fs = std::filesystem;
namespace {

// A new state dir: not a symlink (nothing is made through one), not inside
// another state dir, and new or empty.
Status CheckFreshDir(const std::string& dir) {
  // "" would make <dir>/events "/events": the file system's root.
  if (dir.empty()) return Status::InvalidArgument("the new state dir is empty: give a path");
  std::error_code ec;
  if (fs::is_symlink(dir, ec))
    return Status::InvalidArgument(dir + " is a symlink; a new state dir is never made through one");
  if (std::string outer = EnclosingStateDir(dir); !outer.empty()) {
    if (fs::equivalent(outer, dir, ec))
      return Status::InvalidArgument(dir + " is a state dir already; give a new or empty dir");
    return Status::InvalidArgument(dir + " is inside the state dir " + outer +
                                   "; a new state dir goes outside every state dir");
  }
  if (!fs::exists(dir, ec)) return Status::OK();
  if (!fs::is_directory(dir, ec)) return Status::InvalidArgument(dir + " exists and is not a directory");
  if (!fs::is_empty(dir, ec))
    return Status::InvalidArgument(dir + " is not empty; give a new or empty dir");
  return Status::OK();
}

}  // namespace


Status RemoveTree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) return Status::IOError("removing " + path + ": " + ec.message());
  return Status::OK();
}

namespace {

// A batch of decoded events on its way from the reader thread to the applier.
struct Chunk {
  std::vector<Event> events;
  std::vector<EventLocation> where;
  std::string lines;  // the same events, as read: copied verbatim into the new log
  Status error;       // the reader failed here (after these events)
  double read = 0;    // LogReader::Progress after its last event
};

// A small bounded queue between the two replay threads. Applied chunks go
// back to the reader thread, which made their events, to be freed there:
// jemalloc frees memory faster on the thread that allocated it, and the
// applier is the busier thread.
class ChunkQueue {
 public:
  // Applier: a chunk it is done with.
  void Recycle(Chunk c) {
    std::lock_guard<std::mutex> lock(mu_);
    spent_.push_back(std::move(c));
  }
  // Reader: the chunks the applier is done with.
  std::vector<Chunk> TakeSpent() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(spent_, {});
  }

  void Push(Chunk c) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return q_.size() < 4 || cancelled_; });
    if (cancelled_) return;
    q_.push_back(std::move(c));
    cv_.notify_all();
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  void Cancel() {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    cv_.notify_all();
  }
  bool cancelled() {
    std::lock_guard<std::mutex> lock(mu_);
    return cancelled_;
  }
  // False when closed and drained.
  bool Pop(Chunk* c) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !q_.empty() || closed_; });
    if (q_.empty()) return false;
    *c = std::move(q_.front());
    q_.pop_front();
    cv_.notify_all();
    return true;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Chunk> q_;
  std::vector<Chunk> spent_;
  bool closed_ = false;
  bool cancelled_ = false;
};

// Reads and decodes on its own thread, so decoding overlaps applying.
void ReadChunks(LogReader& reader, const ApplyLimits& limits, size_t batch, ChunkQueue& queue) {
  Chunk chunk;
  Event event;
  EventLocation loc;
  bool first = true;
  for (;;) {
    if (queue.cancelled()) return;
    auto more = reader.Next(&event, &loc);
    if (!more.ok()) {
      chunk.error = more.status();
      break;
    }
    if (!*more) break;
    if (limits.until_seq && event.seq > *limits.until_seq) break;
    if (limits.until_time && event.ts > *limits.until_time) break;
    if (first && event.seq != limits.first_seq) {
      chunk.error = Status::InvalidArgument(loc.file + " offset " + std::to_string(loc.offset) +
                                            ": log starts at seq " + std::to_string(event.seq) +
                                            " where seq " + std::to_string(limits.first_seq) +
                                            " is needed");
      break;
    }
    first = false;
    chunk.lines.append(reader.raw_line());
    chunk.lines.push_back('\n');
    const uint64_t seq = event.seq;
    chunk.events.push_back(std::move(event));
    chunk.where.push_back(loc);
    // Stop right at until_seq: what follows may still be being written.
    if (limits.until_seq && seq >= *limits.until_seq) break;
    if (chunk.events.size() >= batch) {
      if (limits.progress) chunk.read = reader.Progress();
      queue.Push(std::move(chunk));
      chunk = Chunk();
      queue.TakeSpent();  // freed here
    }
  }
  if (!chunk.events.empty() || !chunk.error.ok()) {
    if (limits.progress) chunk.read = reader.Progress();
    queue.Push(std::move(chunk));
  }
  queue.Close();
}

// By seq toward until_seq; by bytes once the log's end comes first (the
// larger of the two: bytes lag seqs while until_seq is before the end).
ApplyProgress Progressed(const ApplyLimits& limits, const ApplyStats& stats, double read) {
  double fraction = read;
  if (limits.until_seq && *limits.until_seq >= limits.first_seq) {
    const double span = static_cast<double>(*limits.until_seq - limits.first_seq + 1);
    fraction = std::max(fraction, static_cast<double>(stats.last_seq - limits.first_seq + 1) / span);
  }
  return ApplyProgress{stats.events, stats.last_seq, std::min(1.0, fraction)};
}

}  // namespace

Result<ApplyStats> ApplyLog(LogReader& reader, Projection& projection, const ApplyLimits& limits,
                            const ChunkSink& on_chunk) {
  ChunkQueue queue;
  std::thread reading([&] { ReadChunks(reader, limits, limits.batch, queue); });
  ApplyStats stats;
  Status status;
  Chunk chunk;
  while (status.ok() && queue.Pop(&chunk)) {
    if (!chunk.events.empty()) {
      size_t failed = 0;
      status = projection.Apply(chunk.events, &failed);
      if (!status.ok()) {
        // Name where the rejected event is in the log.
        if (failed < chunk.where.size())
          status = status.WithContext(chunk.where[failed].file + " offset " +
                                      std::to_string(chunk.where[failed].offset));
        break;
      }
      if (on_chunk) status = on_chunk(chunk.events, chunk.lines);
      stats.events += chunk.events.size();
      stats.last_seq = chunk.events.back().seq;
      stats.last_ts = chunk.events.back().ts;
      if (limits.progress) limits.progress(Progressed(limits, stats, chunk.read));
    }
    if (status.ok()) status = chunk.error;
    queue.Recycle(std::move(chunk));
    chunk = Chunk();
  }
  queue.Cancel();
  reading.join();
  if (!status.ok()) return status;
  return stats;
}

namespace {

// The log's lines of seqs 1..last, as they are (not decoded), to
// append(first seq, lines) a batch at a time: the part of a fork's log
// that a checkpoint stands in for.
Status CopyLogPrefix(const std::string& from, Env* env, uint64_t last, size_t batch,
                     const std::function<Status(uint64_t, std::string_view)>& append) {
  LogReader::Options ropts;
  ropts.env = env;
  ropts.tolerate_partial_tail = false;
  ropts.decode = false;
  auto reader = LogReader::Open(from, ropts);
  if (!reader.ok()) return reader.status();
  std::string lines;
  uint64_t first = 0;
  size_t n = 0;
  Event e;
  for (;;) {
    auto more = (*reader)->Next(&e);
    if (!more.ok()) return more.status();
    if (!*more || e.seq > last) break;
    if (n == 0) first = e.seq;
    lines.append((*reader)->raw_line());
    lines.push_back('\n');
    if (++n >= batch || e.seq == last) {
      LIMBIC_RETURN_IF_ERROR(append(first, lines));
      lines.clear();
      n = 0;
    }
    if (e.seq == last) return Status::OK();
  }
  return Status::Corruption(from + ": the log ends before seq " + std::to_string(last));
}

}  // namespace

Status FinishReplay(const std::string& into, Env* env) {
  if (!env) env = Env::Default();
  LIMBIC_RETURN_IF_ERROR(env->RemoveFile(ReplayingFilePath(into)));
  return env->SyncDir(into);
}

namespace {

// One replay, from the newest usable checkpoint below `below` (else seq
// 1); *from_checkpoint: the seq of the one it started from (0 = none).
Result<ReplayResult> ReplayOnce(const ReplayOptions& options, uint64_t below,
                                uint64_t* from_checkpoint) {
  auto started = std::chrono::steady_clock::now();
  Env* env = options.env ? options.env : Env::Default();
  LIMBIC_RETURN_IF_ERROR(CheckFreshDir(options.into));
  std::error_code ec;
  if (!fs::exists(options.from, ec)) return Status::NotFound("no events log at " + options.from);
  // The log of a replay or fork cut short is part of one: never passed
  // off as whole in a new dir.
  if (std::string source = EnclosingStateDir(options.from); !source.empty())
    LIMBIC_RETURN_IF_ERROR(RefuseUnfinished(source, env));
  bool created = !fs::exists(options.into, ec);
  auto fail = [&](Status s) -> Result<ReplayResult> {
    if (created) (void)RemoveTree(options.into);
    else {
      (void)RemoveTree(EventsDirPath(options.into));
      (void)RemoveTree(DbDirPath(options.into));
      (void)env->RemoveFile(ReplayingFilePath(options.into));
    }
    return s;
  };
  fs::create_directories(options.into, ec);
  if (ec) return fail(Status::IOError("creating " + options.into + ": " + ec.message()));
  // Marked before anything else is in it: see ReplayOptions::leave_unfinished.
  Status marked = env->WriteFileAtomic(ReplayingFilePath(options.into),
                                       "a replay is building this dir (limbic replay, fork)\n",
                                       FileDurability::kSynced);
  if (!marked.ok()) return fail(marked);
  fs::create_directories(EventsDirPath(options.into), ec);
  if (ec) return fail(Status::IOError("creating " + options.into + ": " + ec.message()));
  ReplayResult result;

  LogReader::Options ropts;
  ropts.env = env;
  // A final line without its newline is reported, not silently left out.
  ropts.tolerate_partial_tail = false;

  // The nearest checkpoint stands in for the events up to its seq, if
  // this log holds the event it was taken after. The reader that found
  // that event goes on from it.
  std::unique_ptr<LogReader> reader;
  uint64_t base_seq = 0;
  if (!options.checkpoints_of.empty() && (options.until_seq || options.until_time)) {
    CheckpointTarget target;
    target.seq = std::min(options.until_seq.value_or(UINT64_MAX), below - 1);
    target.time = options.until_time;
    target.check = options.checkpoint_check;
    target.matches_log = [&](const CheckpointManifest& m) -> Status {
      auto at = OpenLogAt(options.from, m.seq, ropts);
      if (!at.ok()) return at.status();
      LIMBIC_RETURN_IF_ERROR(MatchAnchor(m, at->anchor));
      reader = std::move(at->reader);
      return Status::OK();
    };
    auto restored = RestoreNearestCheckpoint(options.checkpoints_of, target,
                                             DbDirPath(options.into), &result.warnings);
    if (!restored.ok()) return fail(restored.status());
    if (*restored) {
      base_seq = (*restored)->seq;
      // The checkpoint's own event: its ts is the state's "now" when no
      // event follows it.
      result.last_seq = base_seq;
      result.last_ts = (*restored)->ts;
    }
  }
  result.from_checkpoint = base_seq;
  *from_checkpoint = base_seq;
  if (base_seq == 0) {
    auto opened = LogReader::Open(options.from, ropts);
    if (!opened.ok()) return fail(opened.status());
    reader = std::move(opened).value();
  }

  ProjectionOptions popts;
  popts.path = DbDirPath(options.into);
  popts.bulk_flush_records = options.flush_records;
  popts.bulk_resident_bytes = options.resident_bytes;
  // flushed below; a half-built dir is removed anyway. Over a checkpoint
  // too: its table files are written over the checkpoint's (RocksDB
  // ingests them as newer), and records are read back from it.
  popts.bulk_load = true;
  auto projection = Projection::Open(popts);
  if (!projection.ok()) return fail(projection.status());

  // The new state dir gets a copy of the events it was built from, rotated
  // into segments like a live log.
  std::unique_ptr<WritableFile> segment;
  auto append = [&](uint64_t first_seq, std::string_view lines) -> Status {
    if (!segment || segment->Size() >= options.segment_bytes) {
      if (segment) LIMBIC_RETURN_IF_ERROR(segment->Sync());
      auto file = env->NewAppendableFile(SegmentFileName(EventsDirPath(options.into), first_seq));
      if (!file.ok()) return file.status();
      segment = std::move(file).value();
    }
    return segment->Append(lines);
  };
  if (options.copy_events && base_seq > 0) {
    Status copied = CopyLogPrefix(options.from, env, base_seq, options.batch, append);
    if (!copied.ok()) return fail(copied);
  }
  ChunkSink copy;
  if (options.copy_events)
    copy = [&](const std::vector<Event>& events, std::string_view lines) {
      return append(events.front().seq, lines);
    };
  ApplyLimits limits;
  limits.first_seq = base_seq + 1;
  limits.until_seq = options.until_seq;
  limits.until_time = options.until_time;
  limits.batch = options.batch;
  limits.progress = options.progress;
  auto applied = ApplyLog(*reader, **projection, limits, copy);
  if (!applied.ok()) return fail(applied.status());
  result.events = base_seq + applied->events;
  // Nothing to replay and no bound asked for: the wrong path, most likely.
  if (result.events == 0 && !options.until_seq && !options.until_time) {
    std::string hint;
    if (fs::is_directory(options.from, ec) && fs::is_directory(EventsDirPath(options.from), ec))
      hint = " (a state dir: its log is " + EventsDirPath(options.from) + ")";
    return fail(Status::InvalidArgument(options.from + ": no events to replay" + hint));
  }
  // A state before the log's first event is no state of this log: asked
  // for by time (by seq, 0 is refused before this), it is an error.
  if (result.events == 0 && options.until_time)
    return fail(Status::InvalidArgument("at time " + FormatTime(*options.until_time) +
                                 ": the log has no event at or before it"));
  if (applied->events > 0) {
    result.last_seq = applied->last_seq;
    result.last_ts = applied->last_ts;
  }
  Status status;
  if (segment) status = segment->Sync();
  if (status.ok()) status = env->SyncDir(EventsDirPath(options.into));
  if (status.ok()) status = (*projection)->Flush();
  if (!status.ok()) return fail(status);
  if (options.digest) {
    auto digest = (*projection)->Digest();
    if (!digest.ok()) return fail(digest.status());
    result.digest = *digest;
  }
  if (!options.leave_unfinished) {
    Status finished = FinishReplay(options.into, env);
    if (!finished.ok()) return fail(finished);
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace

Result<ReplayResult> Replay(const ReplayOptions& options) {
  std::vector<std::string> skipped;
  uint64_t below = UINT64_MAX;
  for (;;) {
    uint64_t from = 0;
    auto r = ReplayOnce(options, below, &from);
    if (r.ok()) {
      r->warnings.insert(r->warnings.begin(), skipped.begin(), skipped.end());
      return r;
    }
    // A damaged block of the checkpoint it started from, found on the way
    // (RocksDB names the table file in the new db/, a copy of the
    // checkpoint's): an older checkpoint, or seq 1, instead.
    const Status& s = r.status();
    const std::string copy = DbDirPath(options.into) + "/";
    if (from == 0 || !s.IsCorruption() || s.message().find(copy) == std::string::npos) return r;
    char name[21];
    std::snprintf(name, sizeof name, "%020llu", static_cast<unsigned long long>(from));
    const std::string dir = CheckpointsDirPath(options.checkpoints_of) + "/" + name;
    std::string why = s.message();
    for (size_t at = why.find(copy); at != std::string::npos; at = why.find(copy, at))
      why.replace(at, copy.size(), dir + "/db/");
    skipped.push_back("checkpoint " + dir + " skipped: " + why);
    below = from;
  }
}

}  // namespace limbic::state
