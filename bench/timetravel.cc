#include "bench/timetravel.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>
#include <thread>

#include "base/worker.h"
#include "bench/http_ingest.h"
#include "state/checkpoint.h"
#include "state/commands.h"
#include "state/engine.h"
#include "state/replay.h"

namespace limbic::bench {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string FormatSeconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", s);
  return text;
}

[[noreturn]] void Die(const std::string& what, const Status& s) {
  std::fprintf(stderr, "timetravel: %s: %s\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}

double Ms(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Bytes under `dir` in files whose inode is not in *seen (then added).
uint64_t UniqueBytes(const std::string& dir, std::set<std::pair<dev_t, ino_t>>* seen) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    struct stat st;
    if (!e.is_regular_file() || ::stat(e.path().c_str(), &st) != 0) continue;
    if (seen->insert({st.st_dev, st.st_ino}).second) bytes += static_cast<uint64_t>(st.st_size);
  }
  return bytes;
}

Row LatencyRow(const std::string& scenario, uint64_t size, const std::string& system,
               std::vector<double> ms, const std::string& note) {
  Row row;
  row.scenario = scenario;
  row.size = size;
  row.system = system;
  row.unit = "ms";
  row.reps = ms;
  std::sort(ms.begin(), ms.end());
  row.median = ms.empty() ? 0 : ms[ms.size() / 2];
  row.p50_us = 1000 * Quantile(ms, 0.5);
  row.p99_us = 1000 * Quantile(ms, 0.99);
  row.ops = ms.size();
  row.note = note;
  return row;
}

// The exported log as a state dir's segments, cut as a live log cuts them
// (at the first event after kDefaultSegmentBytes): a look from a checkpoint
// scans at most one segment to its seq.
void CopyAsSegments(const std::string& log, const std::string& events_dir) {
  state::LogReader::Options ro;
  ro.decode = false;
  auto reader = state::LogReader::Open(log, ro);
  if (!reader.ok()) Die("read", reader.status());
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(nullptr, std::fclose);
  uint64_t bytes = 0;
  state::Event e;
  for (;;) {
    auto more = (*reader)->Next(&e);
    if (!more.ok()) Die("read", more.status());
    if (!*more) break;
    if (!out || bytes >= state::kDefaultSegmentBytes) {
      out.reset(std::fopen(state::SegmentFileName(events_dir, e.seq).c_str(), "w"));
      if (!out) Die("write", Status::IOError("opening a segment in " + events_dir));
      bytes = 0;
    }
    const std::string_view line = (*reader)->raw_line();
    std::fwrite(line.data(), 1, line.size(), out.get());
    std::fputc('\n', out.get());
    bytes += line.size() + 1;
  }
}

// Commits of one percept each (fsync) on the long state, for `seconds`
// with no checkpoint, then for `seconds` while another thread takes
// checkpoints back to back: what a checkpoint adds to a commit.
std::vector<Row> CommitLatency(const std::string& state, double seconds) {
  state::EngineOptions eo;
  eo.state_dir = state;
  auto engine = state::Engine::Open(eo);
  if (!engine.ok()) Die("open engine", engine.status());
  state::Engine& e = **engine;
  auto commits = [&](const std::atomic<bool>* busy, std::vector<double>* during) {
    std::vector<double> ms;
    const auto end = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < end) {
      auto ev = state::BuildPerceptAdd({{"source", "bench"}, {"type", "msg"}, {"text", "commit"}},
                                       e.next_seq());
      if (!ev.ok()) Die("percept", ev.status());
      const bool overlapped = busy && busy->load();
      auto t0 = Clock::now();
      Status s = e.Commit(*ev);
      if (!s.ok()) Die("commit", s);
      ms.push_back(Ms(t0));
      if (overlapped || (busy && busy->load())) during->push_back(ms.back());
    }
    return ms;
  };
  auto max_of = [](const std::vector<double>& v) {
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
  };
  std::vector<double> unused;
  std::vector<double> quiet = commits(nullptr, &unused);
  char note[200];
  std::snprintf(note, sizeof note, "one percept per commit, fsync; max %.2f ms", max_of(quiet));
  std::vector<Row> rows;
  rows.push_back(LatencyRow("commit", e.applied_seq(), "no checkpoint", quiet, note));
  // In the background, as the runtime's checkpoint worker runs; then at
  // normal priority, for comparison.
  for (bool background : {true, false}) {
    std::vector<double> during;
    std::atomic<bool> stop{false}, busy{false};
    size_t taken = 0;
    std::thread taker([&] {
      if (background) MakeThisThreadBackground();
      while (!stop) {
        busy = true;
        auto c = state::TakeCheckpoint(e.projection(), state, 0);
        busy = false;
        if (!c.ok()) Die("checkpoint", c.status());
        ++taken;
        (void)state::ApplyRetention(state, {});
      }
    });
    commits(&busy, &during);
    stop = true;
    taker.join();
    std::snprintf(note, sizeof note,
                  "the commits while one of %zu checkpoints was taken%s; max %.2f ms", taken,
                  background ? "" : " (its thread at normal priority)", max_of(during));
    rows.push_back(LatencyRow("commit", e.applied_seq(),
                              background ? "during a checkpoint" : "during one, normal priority",
                              during, note));
  }
  return rows;
}

}  // namespace

std::vector<Row> RunTimeTravel(const TimeTravelOptions& o) {
  const std::string state = o.dir + "/state";
  fs::remove_all(o.dir);
  fs::create_directories(state::EventsDirPath(state));
  CopyAsSegments(o.log, state::EventsDirPath(state));

  // The pools applied as the live engine applies them, with a checkpoint
  // (and retention) every `every` events, each timed.
  std::vector<double> take_ms;
  uint64_t last = 0;
  {
    state::ProjectionOptions popts;
    popts.path = state::DbDirPath(state);
    auto p = state::Projection::Open(popts);
    if (!p.ok()) Die("open", p.status());
    auto reader = state::LogReader::Open(state::EventsDirPath(state), {});
    if (!reader.ok()) Die("read", reader.status());
    uint64_t next = o.every;
    auto sink = [&](const std::vector<state::Event>& events, std::string_view) -> Status {
      if (events.back().seq < next) return Status::OK();
      auto t0 = Clock::now();
      auto c = state::TakeCheckpoint(**p, state, 0);
      if (!c.ok()) return c.status();
      take_ms.push_back(Ms(t0));
      LIMBIC_RETURN_IF_ERROR(state::ApplyRetention(state, o.retention));
      next = c->manifest.seq + o.every;
      return Status::OK();
    };
    auto applied = state::ApplyLog(**reader, **p, {}, sink);
    if (!applied.ok()) Die("apply", applied.status());
    last = applied->last_seq;
    Status f = (*p)->Flush();
    if (!f.ok()) Die("flush", f);
  }
  std::set<std::pair<dev_t, ino_t>> seen;
  const uint64_t db_bytes = UniqueBytes(state::DbDirPath(state), &seen);
  const uint64_t ckpt_bytes = UniqueBytes(state::CheckpointsDirPath(state), &seen);
  const size_t kept = state::ListCheckpoints(state).usable.size();

  std::mt19937_64 rng(o.seed);
  std::vector<uint64_t> seqs;
  for (size_t i = 0; i < o.requests; ++i) seqs.push_back(1 + rng() % last);
  auto look = [&](uint64_t seq) {
    auto t0 = Clock::now();
    auto tt = state::TimeTravel::Open(state, seq);
    if (!tt.ok()) Die("state at " + std::to_string(seq), tt.status());
    return Ms(t0);
  };
  std::vector<double> on, off;
  for (uint64_t seq : seqs) on.push_back(look(seq));
  // A fork at a random seq: a state dir of its own (its log copied).
  auto t0 = Clock::now();
  state::ReplayOptions fork;
  fork.from = state::EventsDirPath(state);
  fork.into = o.dir + "/fork";
  fork.until_seq = seqs.front();
  fork.checkpoints_of = state;
  fork.checkpoint_check = state::CheckpointTarget::Check::kChecksums;  // as runtime::Fork
  auto forked = state::Replay(fork);
  if (!forked.ok()) Die("fork", forked.status());
  const double fork_ms = Ms(t0);
  fs::rename(state::CheckpointsDirPath(state), o.dir + "/checkpoints-off");
  for (size_t i = 0; i < std::min(o.requests_off, seqs.size()); ++i) off.push_back(look(seqs[i]));
  fs::rename(o.dir + "/checkpoints-off", state::CheckpointsDirPath(state));

  char note[256];
  std::vector<Row> rows;
  std::snprintf(note, sizeof note, "%zu checkpoints kept (every %llu, keep %zu, dense %zu)", kept,
                static_cast<unsigned long long>(o.every), o.retention.keep, o.retention.dense);
  rows.push_back(LatencyRow("state/at", last, "checkpoints on", on, note));
  rows.push_back(LatencyRow("state/at", last, "checkpoints off", off,
                            "each a replay from seq 1; the first " +
                                std::to_string(off.size()) + " of the same seqs"));
  std::snprintf(note, sizeof note, "at seq %llu, from the checkpoint at %llu, log copied",
                static_cast<unsigned long long>(seqs.front()),
                static_cast<unsigned long long>(forked->from_checkpoint));
  rows.push_back(LatencyRow("fork", last, "checkpoints on", {fork_ms}, note));
  std::snprintf(note, sizeof note,
                "db/ %.0f MiB; checkpoints beyond it %.0f MiB (hard links counted once)",
                db_bytes / 1048576.0, ckpt_bytes / 1048576.0);
  rows.push_back(LatencyRow("take checkpoint", last, "limbic", take_ms, note));
  for (Row& row : CommitLatency(state, o.commit_seconds)) rows.push_back(std::move(row));
  fs::remove_all(o.dir);

  // Ingest with checkpoints off and on, in turns (the machine's noise
  // falls on both).
  if (!o.limbic.empty()) {
    std::vector<double> rate[2], p99[2];
    uint64_t taken = 0;
    for (int turn = 0; turn < 2 * o.ingest_turns; ++turn) {
      const int on = turn % 2;
      HttpIngestOptions h;
      h.limbic = o.limbic;
      h.dir = o.dir + "/ingest";
      fs::remove_all(h.dir);
      fs::create_directories(h.dir);
      h.seconds = o.ingest_seconds;
      h.extra_config = {{"checkpoints", {{"enabled", on == 1}, {"every", o.every}}}};
      auto r = RunHttpIngest(h);
      if (!r.ok()) Die("ingest", r.status());
      rate[on].push_back(static_cast<double>(r->percepts) / r->seconds);
      p99[on].push_back(Quantile(r->latency_us, 0.99));
      if (on) taken += state::ListCheckpoints(h.dir + "/state").usable.size();
    }
    for (int on = 0; on < 2; ++on) {
      Row row;
      row.scenario = "ingest";
      row.system = on ? "checkpoints on" : "checkpoints off";
      row.unit = "percepts/s";
      row.reps = rate[on];
      std::vector<double> sorted = rate[on];
      std::sort(sorted.begin(), sorted.end());
      row.median = sorted[sorted.size() / 2];
      row.p99_us = *std::max_element(p99[on].begin(), p99[on].end());
      row.note = on ? "every " + std::to_string(o.every) + " events; " +
                          std::to_string(taken) + " checkpoints kept at the ends"
                    : std::to_string(o.ingest_turns) + " turns of " +
                          FormatSeconds(o.ingest_seconds) + " each, alternating; median";
      rows.push_back(row);
    }
    fs::remove_all(o.dir);
  }
  return rows;
}

}  // namespace limbic::bench
