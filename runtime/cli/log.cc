// events / replay / fsck / why: reading the log and rebuilding from it.
// None of these needs the state dir's lock, so all of them work while
// `limbic run` owns the state dir.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "base/input_json.h"
#include "base/json.h"
#include "runtime/cli/cli.h"
#include "runtime/cli/progress.h"
#include "state/event_log.h"
#include "state/replay.h"
#include "state/why.h"

namespace limbic::runtime {
namespace {

using nlohmann::json;
using state::Engine;
using state::EngineOptions;
using state::LogReader;

volatile std::sig_atomic_t g_interrupted = 0;
void OnInterrupt(int) { g_interrupted = 1; }

// A line of `events tail`: the event as the log holds it, except that in
// text mode a memory's vector (base64, kilobytes of it) is left out;
// --json prints every line whole.
std::string TailLine(const state::Event& e, std::string_view raw, bool as_json) {
  if (as_json ||
      (e.type != state::EventType::kMemoryStored && e.type != state::EventType::kMemoryEmbedded))
    return std::string(raw);
  // Parsed keeping the log's key order, so the line reads as the log does.
  auto j = nlohmann::ordered_json::parse(raw, nullptr, false);
  if (!j.is_object()) return std::string(raw);
  auto elide = [](nlohmann::ordered_json& holder) {
    if (holder.is_object() && holder.contains("vector") && holder["vector"].is_string())
      holder["vector"] = "(" +
                         std::to_string(holder["vector"].get_ref<const std::string&>().size()) +
                         " bytes of base64; --json prints them)";
  };
  if (j.contains("memory") && j["memory"].is_object() && j["memory"].contains("embedding"))
    elide(j["memory"]["embedding"]);
  if (j.contains("vectors") && j["vectors"].is_array())
    for (auto& v : j["vectors"]) elide(v);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// Reads the state dir's log front to back, calling fn(event, its line as
// logged) until fn returns false; the reader's error, if any.
template <typename Fn>
Status ForEachEvent(const std::string& state_dir, Fn&& fn) {
  LIMBIC_RETURN_IF_ERROR(state::RefuseUnfinished(state_dir));
  auto reader = LogReader::Open(state::EventsDirPath(state_dir), {});
  if (!reader.ok()) return reader.status();
  state::Event e;
  for (;;) {
    auto more = (*reader)->Next(&e);
    if (!more.ok()) return more.status();
    if (!*more || !fn(e, (*reader)->raw_line())) return Status::OK();
  }
}

struct EventsArgs {
  // tail
  bool follow = false;
  std::vector<std::string> types;
  std::string since, until, id;
  size_t lines = 20;
  // show
  uint64_t seq = 0;
  // export
  std::string output;
};

// What `events tail` prints: the flags' filter over the log.
struct TailFilter {
  std::optional<TimeMs> since, until;
  const EventsArgs* args = nullptr;

  bool Wants(const state::Event& e) const {
    if (since && e.ts < *since) return false;
    if (until && e.ts > *until) return false;
    if (!args->id.empty()) {
      const auto ids = state::EventIds(e);
      if (std::find(ids.begin(), ids.end(), args->id) == ids.end()) return false;
    }
    if (args->types.empty()) return true;
    for (const std::string& type : args->types)
      if (state::EventTypeName(e.type) == type) return true;
    return false;
  }
};

// A flag's time (a time, or a duration before now); nullopt when not given.
Result<std::optional<TimeMs>> TimeBound(const CliContext& ctx, const char* flag,
                                        const std::string& text) {
  if (text.empty()) return std::optional<TimeMs>();
  auto now = ctx.Now();
  if (!now.ok()) return now.status();
  auto at = ParseTimeOrAgo(flag, text, *now);
  if (!at.ok()) return at.status();
  return std::optional<TimeMs>(*at);
}

// `events tail -f` after the last lines: prints what is appended until
// interrupted, or until the log passes --until.
int FollowTail(const CliContext& ctx, LogReader& reader, const TailFilter& filter) {
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
  state::Event e;
  while (!g_interrupted) {
    auto more = reader.Next(&e);
    if (!more.ok()) return Fail(more.status());
    if (!*more) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (filter.until && e.ts > *filter.until)
      return 0;  // the log is in time order: nothing more to print
    if (filter.Wants(e)) std::cout << TailLine(e, reader.raw_line(), ctx.json) << std::endl;
  }
  return 0;
}

int Tail(const CliContext& ctx, const EventsArgs& t) {
  for (const std::string& type : t.types)
    if (!state::ParseEventType(type))
      return UsageError("--type: unknown event type \"" + type + "\"");
  auto from = TimeBound(ctx, "--since", t.since), to = TimeBound(ctx, "--until", t.until);
  if (!from.ok() || !to.ok()) return UsageError((from.ok() ? to.status() : from.status()).message());
  const TailFilter filter{*from, *to, &t};
  if (Status s = state::RefuseUnfinished(ctx.state_dir); !s.ok()) return Fail(s);
  auto reader = LogReader::Open(state::EventsDirPath(ctx.state_dir), {});
  if (!reader.ok()) return Fail(reader.status());
  // Keep the last N matching lines, print them, then follow.
  std::deque<std::string> last;
  state::Event e;
  for (;;) {
    auto more = (*reader)->Next(&e);
    if (!more.ok()) return Fail(more.status());
    if (!*more) break;
    if (!filter.Wants(e)) continue;
    if (t.lines == 0) {
      std::cout << TailLine(e, (*reader)->raw_line(), ctx.json) << "\n";
      continue;
    }
    last.emplace_back(TailLine(e, (*reader)->raw_line(), ctx.json));
    if (last.size() > t.lines) last.pop_front();
  }
  for (const std::string& line : last) std::cout << line << "\n";
  std::cout.flush();
  // Nothing appended from now on can be at or before a past --until.
  if (!t.follow) return 0;
  if (auto now = ctx.Now(); filter.until && now.ok() && *filter.until <= *now) return 0;
  return FollowTail(ctx, **reader, filter);
}

int ShowEvent(const CliContext& ctx, const EventsArgs& t) {
  bool found = false;
  Status read = ForEachEvent(ctx.state_dir, [&](const state::Event& e, std::string_view line) {
    if (e.seq == t.seq) {
      std::cout << TailLine(e, line, ctx.json) << "\n";
      found = true;
    }
    return e.seq < t.seq;
  });
  if (!read.ok()) return Fail(read);
  if (!found)
    return Fail(Status::NotFound("no event with seq " + std::to_string(t.seq) + " in the log"));
  return 0;
}

int ExportEvents(const CliContext& ctx, const EventsArgs& t) {
  const std::string& out = t.output;
  std::string tmp = out + ".tmp";
  std::ofstream file;
  if (!out.empty()) {
    file.open(tmp, std::ios::binary | std::ios::trunc);
    if (!file) return Fail(Status::IOError("cannot write " + tmp));
  }
  std::ostream& os = out.empty() ? std::cout : file;
  uint64_t n = 0;
  Status read = ForEachEvent(ctx.state_dir, [&](const state::Event&, std::string_view line) {
    os << line << '\n';
    ++n;
    return true;
  });
  if (!read.ok()) {
    int code = Fail(read);
    if (!out.empty()) {  // leave nothing half-written behind
      file.close();
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
    }
    return code;
  }
  if (out.empty()) return 0;
  file.close();
  std::error_code ec;
  std::filesystem::rename(tmp, out, ec);
  if (!file || ec) return Fail(Status::IOError("writing " + out + ": " + ec.message()));
  std::fprintf(stderr, "exported %llu events to %s\n", static_cast<unsigned long long>(n),
               out.c_str());
  return 0;
}

void AddEvents(CLI::App& app, CliContext& ctx, int& rc) {
  auto* cmd = app.add_subcommand("events", "read the events log");
  cmd->require_subcommand(1);
  auto t = std::make_shared<EventsArgs>();

  auto* tail = cmd->add_subcommand("tail", "print the last events as JSON lines");
  tail->add_flag("-f,--follow", t->follow, "keep printing events as they are appended");
  tail->add_option("--type", t->types, "only events of this type (repeatable)");
  tail->add_option("--since", t->since, "only events at or after this time (or e.g. 10m ago)");
  tail->add_option("--until", t->until, "only events at or before this time (or e.g. 10m ago)");
  tail->add_option("--id", t->id, "only events that name this percept, thread or action id");
  tail->add_option("-n,--lines", t->lines, "how many to print first (0 = all)")
      ->capture_default_str();
  tail->callback(Action(ctx, rc, t, Tail));

  auto* show = cmd->add_subcommand("show", "print one event, by its seq");
  show->add_option("seq", t->seq, "its seq")->required()->check(CLI::PositiveNumber);
  show->callback(Action(ctx, rc, t, ShowEvent));

  auto* exp = cmd->add_subcommand("export", "write the whole log as one events.jsonl");
  exp->add_option("-o,--output", t->output, "file to write (default: standard output)");
  exp->callback(Action(ctx, rc, t, ExportEvents));
}

struct ReplayArgs {
  std::string from, into, verify, until_time;
  std::string stream = "LIMBIC", agent;
  std::optional<uint64_t> until_seq;
  bool full = false;  // --verify from seq 1, not the newest checkpoint
  bool quiet = false;  // no progress line
  size_t resident_mib = state::ReplayOptions().resident_bytes >> 20;
  size_t write_records = state::ReplayOptions().flush_records;
};

// A replay that runs more than 2 s shows how far it is (ProgressLine).
class ReplayProgress {
 public:
  explicit ReplayProgress(bool quiet)
      : line_({.doing = "replaying",
               .unit = "events",
               .quiet = quiet,
               .silent_for = std::chrono::seconds(2),
               .terminal = ::isatty(2) == 1}) {}
  state::ProgressFn fn() {
    return [this](const state::ApplyProgress& p) { line_.Update(p.events, 0, p.fraction); };
  }

 private:
  ProgressLine line_;
};

// `replay --verify DIR`: exit 1 when the digests differ.
int VerifyReplay(const CliContext& ctx, const std::string& dir, bool full, bool quiet) {
  ReplayProgress progress(quiet);
  auto v = state::Verify(dir, nullptr, full, progress.fn());
  if (!v.ok()) return Fail(v.status());
  Warn(v->warnings);
  if (ctx.json) {
    PrintJson({{"match", v->match},
               {"applied_seq", v->applied_seq},
               {"from_checkpoint", v->from_checkpoint},
               {"live_digest", v->live_digest},
               {"replay_digest", v->replay_digest},
               {"first_difference", v->first_difference}});
  } else if (v->match) {
    std::printf("ok: state at seq %llu matches its log (digest %s), replayed from %s\n",
                static_cast<unsigned long long>(v->applied_seq), v->live_digest.c_str(),
                v->from_checkpoint ? ("the checkpoint at seq " + std::to_string(v->from_checkpoint)).c_str()
                                   : "seq 1");
  } else if (v->live_digest == v->replay_digest) {
    // The pools agree; the log itself is what changed (a sealed segment).
    std::printf("MISMATCH at seq %llu: the pools match a replay (digest %s), but the log was "
                "changed\n  first difference: %s\n",
                static_cast<unsigned long long>(v->applied_seq), v->live_digest.c_str(),
                v->first_difference.c_str());
  } else {
    std::printf("MISMATCH at seq %llu\n  live     %s\n  replayed %s\n  first difference: %s\n",
                static_cast<unsigned long long>(v->applied_seq), v->live_digest.c_str(),
                v->replay_digest.c_str(), v->first_difference.c_str());
  }
  return v->match ? 0 : 1;
}

// `replay --from nats://...`: the stream's events, read into a .jsonl file
// beside the new dir (the caller removes it after), replayed like an
// exported log. Sets *downloaded to that file; an exit code on failure.
std::optional<int> DownloadForReplay(const ReplayArgs& a, std::string* downloaded) {
  if (a.agent.empty())
    return UsageError("--from nats://... needs --agent NAME (and --stream, default LIMBIC)");
  std::error_code ec;
  if (std::filesystem::exists(a.into, ec) && !std::filesystem::is_empty(a.into, ec))
    return Fail(Status::FailedPrecondition("--into " + a.into + " exists and is not empty"));
  std::filesystem::path into(a.into);
  *downloaded =
      (into.has_parent_path() ? into.parent_path() / "" : std::filesystem::path()).string() + "." +
      into.filename().string() + ".from-nats.jsonl";
  auto last = DownloadStream(a.from, a.stream, a.agent, *downloaded);
  if (!last.ok()) {
    std::filesystem::remove(*downloaded, ec);
    return Fail(last.status().WithContext("reading " + a.from));
  }
  return std::nullopt;
}

int Replay(const CliContext& ctx, const ReplayArgs& a) {
  if (!a.verify.empty()) return VerifyReplay(ctx, a.verify, a.full, a.quiet);
  if (a.from.empty()) return UsageError("give --from LOG --into DIR, or --verify DIR");
  state::ReplayOptions options;
  options.from = a.from;
  options.into = a.into;
  std::string downloaded;
  if (a.from.starts_with("nats://")) {
    if (auto failed = DownloadForReplay(a, &downloaded)) return *failed;
    options.from = downloaded;
  }
  struct RemoveAfter {
    std::string path;
    ~RemoveAfter() {
      std::error_code ec;
      if (!path.empty()) std::filesystem::remove(path, ec);
    }
  } remove_after{downloaded};
  options.until_seq = a.until_seq;
  options.resident_bytes = a.resident_mib << 20;
  options.flush_records = a.write_records;
  if (!a.until_time.empty()) {
    auto t = TimeBound(ctx, "--until-time", a.until_time);
    if (!t.ok()) return UsageError(t.status().message());
    options.until_time = **t;
  }
  ReplayProgress progress(a.quiet);
  options.progress = progress.fn();
  auto r = state::Replay(options);
  if (!r.ok()) return Fail(r.status());
  if (ctx.json) {
    PrintJson({{"events", r->events},
               {"last_seq", r->last_seq},
               {"digest", r->digest},
               {"seconds", r->seconds},
               {"into", a.into}});
  } else {
    std::printf("replayed %llu events (last seq %llu) into %s in %.3f s\ndigest %s\n",
                static_cast<unsigned long long>(r->events),
                static_cast<unsigned long long>(r->last_seq), a.into.c_str(), r->seconds,
                r->digest.c_str());
  }
  return 0;
}

void AddReplay(CLI::App& app, CliContext& ctx, int& rc) {
  auto a = std::make_shared<ReplayArgs>();
  auto* cmd = app.add_subcommand("replay", "rebuild state from an events log, or verify a state dir");
  auto* from = cmd->add_option(
      "--from", a->from, "events dir or .jsonl file, or nats://HOST:PORT (with --stream, --agent)");
  auto* stream = cmd->add_option("--stream", a->stream, "with --from nats://: the JetStream stream")
                     ->capture_default_str();
  auto* agent =
      cmd->add_option("--agent", a->agent, "with --from nats://: the agent whose events to read");
  auto* into = cmd->add_option("--into", a->into, "new state dir to build");
  auto* seq = cmd->add_option("--until-seq", a->until_seq, "stop after this seq")->check(SeqOption());
  auto* time = cmd->add_option("--until-time", a->until_time,
                                "stop after this time (RFC 3339, or a duration before now: 10m)")
                   ->check(CLI::Validator(
                       [](std::string& text) -> std::string {
                         return text.empty() ? "must be an RFC 3339 time, got \"\"" : "";
                       },
                       "TIME"));
  auto* verify = cmd->add_option("--verify", a->verify,
                                 "state dir: rebuild from its log and compare digests");
  auto* resident = cmd->add_option("--resident-mib", a->resident_mib,
                                   "memory for records already written, read back without RocksDB "
                                   "(MiB; 0 = none)")
                       ->check(CLI::Range(size_t{0}, size_t{1} << 20))
                       ->capture_default_str();
  auto* write_records = cmd->add_option("--write-records", a->write_records,
                                        "changed records held in memory before each write (more: "
                                        "faster, more memory)")
                            ->check(CLI::Range(size_t{1}, size_t{100'000'000}))
                            ->capture_default_str();
  auto* full = cmd->add_flag("--full", a->full,
                             "with --verify: replay from seq 1, not from the newest checkpoint");
  full->needs(verify);
  cmd->add_flag("--quiet", a->quiet, "no progress line on stderr (shown when a replay runs over 2 s)");
  from->needs(into);
  into->needs(from);
  seq->excludes(time);
  for (CLI::Option* o : {from, into, seq, time, resident, write_records, stream, agent})
    verify->excludes(o);
  cmd->callback(Action(ctx, rc, a, Replay));
}

// `fsck --accept-changed-segments`: the operator takes the log as it now
// is. Nothing changes unless the whole log, changed segments included,
// still decodes and replays; then the segments are resealed, the pools are
// rebuilt from the log and a segments_accepted event records the decision.
int AcceptChangedSegments(const CliContext& ctx, const std::string& reason) {
  const std::string events_dir = state::EventsDirPath(ctx.state_dir);
  state::LogOptions lopts;
  lopts.dir = events_dir;
  lopts.read_only = true;
  lopts.accept_changed_segments = true;
  state::LogRecovery rec;
  auto log = state::EventLog::Open(lopts, &rec);
  if (!log.ok()) return Fail(log.status().WithContext("nothing was accepted"));
  log->reset();
  if (rec.changed_segments.empty()) {
    std::printf("no segment has changed since it was sealed: nothing to accept\n");
    return 0;
  }
  // Prove that the log as it now is replays, before anything is changed.
  auto trial = state::ScratchStateDir::Make("accept-check");
  if (!trial.ok()) return Fail(trial.status().WithContext("nothing was accepted"));
  state::ReplayOptions ro;
  ro.from = events_dir;
  ro.into = trial->path();
  auto replayed = state::Replay(ro);
  if (!replayed.ok())
    return Fail(replayed.status().WithContext(
        "the log as it now is does not replay, so nothing was accepted"));

  state::EngineRecovery recovery;
  auto engine = ctx.OpenForWrite({.accept_changed_segments = true, .recovery = &recovery});
  if (!engine.ok()) return Fail(engine.status());
  json segments = json::array();
  for (const state::ChangedSegment& c : recovery.log.changed_segments)
    segments.push_back({{"file", std::filesystem::path(c.file).filename().string()},
                        {"first_seq", c.first_seq},
                        {"last_seq", c.last_seq},
                        {"sealed_bytes", c.sealed_bytes},
                        {"sealed_sha256", c.sealed_sha256},
                        {"bytes", c.bytes},
                        {"sha256", c.sha256},
                        {"why", c.why}});
  if (segments.empty()) {  // changed back in the meantime
    std::printf("no segment has changed since it was sealed: nothing to accept\n");
    return 0;
  }
  json fields = {{"segments", segments}, {"actor", "cli"}};
  if (!reason.empty()) fields["reason"] = reason;
  std::vector<state::Event> committed;
  Status s = (*engine)->Commit({state::Event{0, 0, state::EventType::kSegmentsAccepted, fields}},
                               &committed);
  if (!s.ok()) return Fail(s.WithContext("recording the decision"));
  if (ctx.json) {
    PrintJson(
        {{"accepted", segments}, {"seq", committed.front().seq}, {"rebuilt", recovery.rebuilt}});
  } else {
    for (const state::ChangedSegment& c : recovery.log.changed_segments)
      std::printf("accepted %s (seqs %llu-%llu, %llu bytes; sealed %llu bytes): %s\n",
                  c.file.c_str(), static_cast<unsigned long long>(c.first_seq),
                  static_cast<unsigned long long>(c.last_seq),
                  static_cast<unsigned long long>(c.bytes),
                  static_cast<unsigned long long>(c.sealed_bytes), c.why.c_str());
    std::printf("resealed; pools %s from the log; recorded as segments_accepted at seq %llu\n",
                recovery.rebuilt ? "rebuilt" : "built",
                static_cast<unsigned long long>(committed.front().seq));
  }
  return 0;
}

struct FsckArgs {
  bool accept = false;
  std::string reason;
  size_t max_json_depth = kDefaultMaxJsonDepth;
  bool deep = false;
};

int Fsck(const CliContext& ctx, const FsckArgs& a) {
  if (a.accept) return AcceptChangedSegments(ctx, a.reason);
  auto r = state::Fsck(ctx.state_dir, nullptr, a.max_json_depth, a.deep);
  if (!r.ok()) return Fail(r.status());
  if (ctx.json) {
    PrintJson({{"ok", r->ok},
               {"events", r->events},
               {"last_seq", r->last_seq},
               {"applied_seq", r->applied_seq},
               {"segments", r->segments},
               {"checkpoints", r->checkpoints},
               {"problems", r->problems},
               {"warnings", r->warnings}});
  } else {
    std::printf("%s: %llu events readable in %zu segments, last seq %llu, applied seq %llu, "
                "%zu checkpoints\n",
                r->ok ? "ok" : "PROBLEMS", static_cast<unsigned long long>(r->events), r->segments,
                static_cast<unsigned long long>(r->last_seq),
                static_cast<unsigned long long>(r->applied_seq), r->checkpoints);
    for (const auto& w : r->warnings) std::printf("warning: %s\n", w.c_str());
    for (const auto& p : r->problems) std::printf("problem: %s\n", p.c_str());
  }
  return r->ok ? 0 : 1;
}

void AddFsck(CLI::App& app, CliContext& ctx, int& rc) {
  auto* cmd = app.add_subcommand("fsck", "check the log and the pools without changing them");
  auto a = std::make_shared<FsckArgs>();
  cmd->add_option("--max-json-depth", a->max_json_depth,
                  "warn of events nesting deeper than this (the runtime's api.max_json_depth)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, kMaxMaxJsonDepth));
  cmd->add_flag("--accept-changed-segments", a->accept,
                "take segments that no longer match their seals as they now are: reseal them, "
                "rebuild the pools from the log, record a segments_accepted event");
  cmd->add_option("--reason", a->reason, "why (kept in the segments_accepted event)");
  cmd->add_flag("--deep", a->deep, "also check each checkpoint's digest (reads every record)");
  cmd->callback(Action(ctx, rc, a, Fsck));
}

// `limbic why ID`: the causal chain from the log (state/why.h). It reads
// only the log, so it works beside a running runtime.
int Why(const CliContext& ctx, const std::string& id) {
  if (Status s = state::RefuseUnfinished(ctx.state_dir); !s.ok()) return Fail(s);
  auto why = state::Why(state::EventsDirPath(ctx.state_dir), id);
  if (!why.ok()) return Fail(why.status());
  if (ctx.json)
    PrintJson(*why);
  else
    std::cout << state::WhyText(*why);
  return 0;
}

void AddWhy(CLI::App& app, CliContext& ctx, int& rc) {
  auto id = std::make_shared<std::string>();
  auto* cmd =
      app.add_subcommand("why", "why a percept, thread or action is what it is: its causal chain");
  cmd->add_option("id", *id, "a percept, thread or action id")->required();
  cmd->callback(Action(ctx, rc, id, Why));
}

}  // namespace

void AddLogCommands(CLI::App& app, CliContext& ctx, int& rc) {
  AddEvents(app, ctx, rc);
  AddWhy(app, ctx, rc);
  AddReplay(app, ctx, rc);
  AddFsck(app, ctx, rc);
}

}  // namespace limbic::runtime
