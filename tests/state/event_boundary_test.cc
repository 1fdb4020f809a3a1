// The event boundary: whatever bytes a command's text holds, what is
// committed is what the log reads back and what a replay rebuilds.
// Random commands with random bytes go through Engine::Submit; every
// committed event must decode to itself, and the replayed state must have
// the live digest and consistent indexes.
#include <catch2/catch.hpp>
#include <random>

#include "state/commands.h"
#include "state/engine.h"
#include "base/json.h"
#include "state/replay.h"
#include "test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace event_boundary_test {

using namespace limbic;
using namespace limbic::state;
using limbic::testing::ScratchDir;

namespace {

// Pieces of text: plain, valid multi-byte UTF-8, ill-formed bytes (a lone
// Latin-1 byte, a truncated sequence, an overlong form, a surrogate, beyond
// U+10FFFF), and what JSON must escape.
const std::vector<std::string> kPieces = {
    "a",    "Zz",   " ",    "caf",      "\xc3\xa9",    "\xe2\x82\xac", "\xf0\x9f\x98\x80",
    "\xe9", "\xff", "\xc3", "\xe2\x82", "\xc0\xaf",    "\xed\xa0\x80", "\xf4\x90\x80\x80",
    "\"",   "\\",   "\n",   "\x01",     "\xef\xbf\xbd"};

std::string RandomText(std::mt19937& rng, size_t max_pieces = 6) {
  std::string s;
  const size_t n = 1 + rng() % max_pieces;
  for (size_t i = 0; i < n; ++i) s += kPieces[rng() % kPieces.size()];
  return s;
}

// A small object with random keys and values, some nested.
json RandomObject(std::mt19937& rng) {
  json o = json::object();
  const size_t n = rng() % 4;
  for (size_t i = 0; i < n; ++i) {
    if (rng() % 3 == 0)
      o[RandomText(rng, 3)] = {{RandomText(rng, 2), RandomText(rng)}, {"n", rng() % 100}};
    else
      o[RandomText(rng, 3)] = json::array({RandomText(rng), RandomText(rng, 2)});
  }
  return o;
}

// One random command built against the engine's state.
Result<Events> RandomCommand(std::mt19937& rng, Engine& e, TimeMs now) {
  const uint64_t seq = e.next_seq();
  const std::string some_percept = "p-" + std::to_string(1 + rng() % seq);
  switch (rng() % 8) {
    case 0:
    case 1:
      return BuildPerceptAdd({{"source", RandomText(rng, 3)},
                              {"type", RandomText(rng, 3)},
                              {"text", RandomText(rng)},
                              {"intensity", 0.5},
                              {"data", RandomObject(rng)}},
                             seq);
    case 2:
      return BuildThreadCreate({{"goal", RandomText(rng)}, {"state", RandomObject(rng)}}, seq);
    case 3:
      return BuildThreadUpdate("t-" + std::to_string(1 + rng() % seq),
                               {{"state", RandomObject(rng)}});
    case 4:
      return BuildPerceptDrop(some_percept, {{"reason", RandomText(rng)}});
    case 5:
      return BuildArousalSet({{"level", 0.25}, {"reason", RandomText(rng)}});
    case 6:
      return BuildActionEnqueue(
          {{"effector", "log"}, {"type", RandomText(rng, 2)}, {"payload", RandomObject(rng)}}, seq);
    default:
      return BuildBlink({{"text", RandomText(rng, 12)}, {"metadata", RandomObject(rng)}}, now);
  }
}

}  // namespace

TEST_CASE("random commands with random bytes: every committed event decodes and replays",
          "[boundary]") {
  ScratchDir dir;
  ManualClock clock(1795356309000);
  std::vector<Event> committed;
  std::string live;
  size_t mended = 0;  // committed events whose command held invalid UTF-8
  {
    EngineOptions o;
    o.state_dir = dir / "live";
    o.clock = &clock;
    auto opened = Engine::Open(o);
    REQUIRE(opened.ok());
    Engine& e = **opened;
    std::mt19937 rng(21);
    for (int i = 0; i < 400; ++i) {
      clock.Set(clock.Now() + 1000);
      auto events = RandomCommand(rng, e, clock.Now());
      if (!events.ok() || events->empty()) continue;  // refused by the builder: fine
      bool invalid = false;
      for (const Event& ev : *events) {
        json mended_fields = ev.fields;
        invalid |= !MakeValidUtf8(&mended_fields).ok() || mended_fields != ev.fields;
      }
      std::vector<Event> done;
      Status s = e.Commit(*events, &done);
      if (!s.ok()) {
        // Refusals are clear errors about the input, never the engine failing.
        INFO(s.ToString());
        CHECK((s.IsInvalidArgument() || s.IsNotFound() || s.IsFailedPrecondition()));
        CHECK(e.error().ok());
        continue;
      }
      mended += invalid;
      committed.insert(committed.end(), done.begin(), done.end());
    }
    auto d = e.projection().Digest();
    REQUIRE(d.ok());
    live = *d;
    Status indexes = e.projection().CheckIndexes();
    INFO(indexes.ToString());
    CHECK(indexes.ok());
  }
  REQUIRE(committed.size() > 100);
  CHECK(mended > 20);  // the property was exercised on ill-formed text

  // Each committed event is valid UTF-8 and reads back from its line as it
  // was committed: sized, indexed and reduced as the log holds it.
  for (const Event& ev : committed) {
    const std::string line = EncodeEvent(ev);
    INFO(line);
    CHECK(IsValidUtf8(line));
    auto decoded = DecodeEvent(line);
    REQUIRE(decoded.ok());
    CHECK(decoded->fields == ev.fields);
  }

  ReplayOptions ro;
  ro.from = EventsDirPath(dir / "live");
  ro.into = dir / "replayed";
  auto replayed = Replay(ro);
  INFO(replayed.status().ToString());
  REQUIRE(replayed.ok());
  CHECK(replayed->events == committed.size());
  CHECK(replayed->digest == live);
}

TEST_CASE("keys that read the same once mended are refused, naming the key", "[boundary]") {
  ScratchDir dir;
  EngineOptions o;
  o.state_dir = dir.path();
  auto e = Engine::Open(o);
  REQUIRE(e.ok());
  auto clash =
      BuildPerceptAdd({{"source", "s"}, {"type", "t"}, {"data", {{"k\xff", 1}, {"k\xfe", 2}}}}, 1);
  REQUIRE(clash.ok());
  Status s = (*e)->Commit(*clash);
  CHECK(s.IsInvalidArgument());
  CHECK_THAT(s.message(), Catch::Contains("percept_arrived") && Catch::Contains("k\xef\xbf\xbd") &&
                              Catch::Contains("twice"));
  CHECK((*e)->applied_seq() == 0);
  // The neighbouring case: one ill-formed key beside a distinct valid one is mended.
  auto fine =
      BuildPerceptAdd({{"source", "s"}, {"type", "t"}, {"data", {{"k\xff", 1}, {"k", 2}}}}, 1);
  REQUIRE(fine.ok());
  std::vector<Event> done;
  REQUIRE((*e)->Commit(*fine, &done).ok());
  CHECK(done[0].fields["data"] == json{{"k\xef\xbf\xbd", 1}, {"k", 2}});
}

}  // namespace event_boundary_test
