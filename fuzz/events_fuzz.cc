// Fuzz target `events`: the event line decoder, and an engine round trip.
//
// The input is lines of the events log (state/event.h). For each line:
//   - DecodeEvent never crashes; it refuses with Corruption (not JSON) or
//     InvalidArgument (the schema), nothing else;
//   - a decoded event encodes to a line that decodes to the same event, and
//     encoding is stable (encode . decode . encode == encode).
// The decoded events are then submitted to a state::Engine as commands
// (all of them as one batch; when that is refused, each alone, each
// validated against the state the ones before it leave), as the CLI and
// the API submit theirs, then committed in one group:
//   - a refusal is a clear error about the input (InvalidArgument,
//     NotFound, AlreadyExists, FailedPrecondition) and leaves the engine
//     healthy;
//   - every committed event is valid UTF-8 and decodes from its line to
//     itself;
//   - replaying the engine's log rebuilds the live digest, with consistent
//     indexes.
// The engine lives across inputs (opening one costs far more than an
// input) and is reset once it holds 2,000 events, so its state stays
// small. Replay rebuilds the whole log, so it is checked before each reset
// (its cost then grows with the events, not with the inputs), and also
// every $LIMBIC_FUZZ_REPLAY_EVERY inputs that committed something when
// that is set (the regression test sets 1: each input is checked alone).
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz/fuzz_util.h"
#include "state/engine.h"
#include "base/json.h"
#include "state/replay.h"

using namespace limbic;
using namespace limbic::state;
using limbic::fuzz::ScratchDir;

namespace {

constexpr size_t kMaxLines = 32;
constexpr uint64_t kResetAfterEvents = 2000;

struct Session {
  std::unique_ptr<ScratchDir> dir;
  ManualClock clock{1795356309000};
  std::unique_ptr<Engine> engine;
  uint64_t inputs_since_replay = 0;
  int generation = 0;
};

// 0: only before a reset.
uint64_t ReplayEvery() {
  static const uint64_t n = [] {
    const char* v = std::getenv("LIMBIC_FUZZ_REPLAY_EVERY");
    const long long parsed = v ? std::atoll(v) : 0;
    return parsed > 0 ? static_cast<uint64_t>(parsed) : 0;
  }();
  return n;
}

std::string LiveDir(const Session& s) { return *s.dir / ("live-" + std::to_string(s.generation)); }

void OpenEngine(Session& s) {
  if (!s.dir) s.dir = std::make_unique<ScratchDir>();
  EngineOptions o;
  o.state_dir = LiveDir(s);
  o.clock = &s.clock;
  o.durability = Durability::kNone;
  auto opened = Engine::Open(o);
  FUZZ_CHECK(opened.ok(), opened.status().ToString());
  s.engine = std::move(opened).value();
}

// A failed check of the session's state depends on every input since the
// last reset, not on the one that ran last: the live events log is the
// record of those inputs (each committed event is one), so it is copied to
// ./fuzz-session-<pid>/ before the check aborts. Its lines, given to this
// target as inputs (32 at a time, in order), rebuild the same state.
void KeepSession(const Session& s) {
  const std::string to = "fuzz-session-" + std::to_string(::getpid());
  std::error_code ec;
  std::filesystem::copy(s.engine->events_dir(), to, std::filesystem::copy_options::recursive, ec);
  std::fprintf(stderr, "the session's events log (%llu events) is in %s/%s\n",
               static_cast<unsigned long long>(s.engine->applied_seq()), to.c_str(),
               ec ? (" (copy failed: " + ec.message() + ")").c_str() : "");
}

// The log replayed into a fresh dir has the live digest.
void CheckReplay(Session& s) {
  s.inputs_since_replay = 0;
  if (s.engine->applied_seq() == 0) return;
  auto live = s.engine->projection().Digest();
  FUZZ_CHECK(live.ok(), live.status().ToString());
  Status indexes = s.engine->projection().CheckIndexes();
  if (!indexes.ok()) KeepSession(s);
  FUZZ_CHECK(indexes.ok(), indexes.ToString());
  ReplayOptions ro;
  ro.from = s.engine->events_dir();
  ro.into = *s.dir / "replayed";
  auto replayed = Replay(ro);
  FUZZ_CHECK(replayed.ok(), replayed.status().ToString());
  FUZZ_CHECK(replayed->events == s.engine->applied_seq(),
             std::to_string(replayed->events) + " events replayed of " +
                 std::to_string(s.engine->applied_seq()));
  if (replayed->digest != *live) KeepSession(s);
  FUZZ_CHECK(replayed->digest == *live, "replayed digest " + replayed->digest + " != live " + *live);
  std::error_code ec;
  std::filesystem::remove_all(ro.into, ec);
}

void Reset(Session& s) {
  CheckReplay(s);
  s.engine.reset();
  std::error_code ec;
  std::filesystem::remove_all(LiveDir(s), ec);
  ++s.generation;
  OpenEngine(s);
}

// Lives for the process (libFuzzer may exit() after any input); its
// scratch dir is removed at exit.
Session* g_session = nullptr;

Session& GetSession() {
  if (!g_session) {
    g_session = new Session();
    OpenEngine(*g_session);
    std::atexit([] {
      g_session->engine.reset();
      g_session->dir.reset();
    });
  }
  return *g_session;
}

void CheckRoundTrip(const Event& ev, const std::string& where) {
  const std::string line = EncodeEvent(ev);
  FUZZ_CHECK(IsValidUtf8(line), where + ": encoded line is not valid UTF-8: " + line);
  FUZZ_CHECK(line.find('\n') == std::string::npos, where + ": encoded line holds a newline");
  auto again = DecodeEvent(line);
  FUZZ_CHECK(again.ok(), where + ": " + again.status().ToString() + "\n  line: " + line);
  FUZZ_CHECK(again->seq == ev.seq && again->ts == ev.ts && again->type == ev.type,
             where + ": seq/ts/type changed: " + line);
  FUZZ_CHECK(again->fields == ev.fields, where + ": fields changed: " + line);
  FUZZ_CHECK(EncodeEvent(*again) == line, where + ": encoding is not stable: " + line);
}

bool IsClearRefusal(const Status& s) {
  return s.IsInvalidArgument() || s.IsNotFound() || s.IsAlreadyExists() || s.IsFailedPrecondition();
}

// Submits `events` as one batch, collecting what commits into *committed;
// true when they were queued. The events are committed at the next
// WaitIdle (one group commit for the whole input).
bool Submit(Session& s, std::vector<Event> events, std::vector<Event>* committed) {
  Status st = s.engine->Submit(std::move(events), [committed](const Status& done,
                                                             std::span<const Event> evs) {
    FUZZ_CHECK(done.ok(), "a queued batch failed: " + done.ToString());
    committed->insert(committed->end(), evs.begin(), evs.end());
  });
  FUZZ_CHECK(s.engine->error().ok(), "engine broken: " + s.engine->error().ToString());
  if (!st.ok()) FUZZ_CHECK(IsClearRefusal(st), "refused with an unexpected code: " + st.ToString());
  return st.ok();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<Event> decoded;
  for (std::string_view line : limbic::fuzz::SplitLines(input, kMaxLines)) {
    auto ev = DecodeEvent(line);
    if (!ev.ok()) {
      FUZZ_CHECK(ev.status().IsCorruption() || ev.status().IsInvalidArgument(),
                 "decode: unexpected code: " + ev.status().ToString());
      continue;
    }
    CheckRoundTrip(*ev, "decoded");
    decoded.push_back(std::move(ev).value());
  }
  if (decoded.empty()) return 0;

  Session& s = GetSession();
  s.clock.Advance(1000);
  std::vector<Event> commands;
  for (const Event& ev : decoded) commands.push_back(Event{0, 0, ev.type, ev.fields});
  std::vector<Event> committed;
  bool any = Submit(s, commands, &committed);
  if (!any && commands.size() > 1)
    for (Event& ev : commands) any |= Submit(s, {std::move(ev)}, &committed);
  Status idle = s.engine->WaitIdle();
  FUZZ_CHECK(idle.ok(), "WaitIdle: " + idle.ToString());
  for (const Event& ev : committed) CheckRoundTrip(ev, "committed seq " + std::to_string(ev.seq));
  if (any && ReplayEvery() > 0 && ++s.inputs_since_replay >= ReplayEvery()) CheckReplay(s);
  if (s.engine->applied_seq() >= kResetAfterEvents) Reset(s);
  return 0;
}
