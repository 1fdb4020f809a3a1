#include "runtime/event_hub.h"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "../state/test_util.h"
#include "state/commands.h"
#include "state/engine.h"

// This file's own namespace: test programs compile in unity batches.
namespace event_hub_test {

using namespace limbic;
using namespace limbic::state;
using limbic::runtime::EventHub;

namespace {

// A real state dir with `n` percepts, so the hub can fall back to the log.
std::unique_ptr<Engine> Fill(const std::string& dir, int n) {
  EngineOptions o;
  o.state_dir = dir;
  auto e = Engine::Open(o);
  REQUIRE(e.ok());
  for (int i = 0; i < n; ++i) {
    auto ev =
        BuildPerceptAdd({{"source", "s"}, {"type", i % 2 ? "odd" : "even"}}, (*e)->next_seq());
    REQUIRE((*e)->Commit(*ev).ok());
  }
  return std::move(e).value();
}

// 10 events on disk, a hub whose ring holds 4, then 3 more published live:
// seqs 1..13, of which the ring has 10..13.
struct RingAndDisk {
  limbic::testing::ScratchDir dir;
  boost::asio::io_context ioc;
  EventHub hub{ioc, EventsDirPath(dir.path()), /*capacity=*/4};
  std::unique_ptr<Engine> engine = Fill(dir.path(), 10);
  RingAndDisk() {
    engine->AddListener([this](std::span<const Event> ev) { hub.Publish(ev); });
    hub.set_last_seq(engine->applied_seq());
    for (int i = 0; i < 3; ++i) {
      auto ev = BuildPerceptAdd({{"source", "s"}, {"type", "late"}}, engine->next_seq());
      REQUIRE(engine->Commit(*ev).ok());
    }
  }
};

}  // namespace

TEST_CASE("reads come from the ring, and from the log beyond it", "[hub]") {
  RingAndDisk f;
  EventHub& hub = f.hub;
  CHECK(hub.last_seq() == 13);
  auto all = hub.Read(0, 100, {});
  REQUIRE(all.ok());
  REQUIRE(all->size() == 13);
  for (size_t i = 0; i < all->size(); ++i) CHECK((*all)[i].seq == i + 1);
  auto tail = hub.Read(11, 100, {});
  REQUIRE(tail->size() == 2);
  CHECK((*tail)[0].seq == 12);
  auto limited = hub.Read(2, 3, {});
  REQUIRE(limited->size() == 3);
  CHECK((*limited)[2].seq == 5);
  CHECK(hub.Read(13, 10, {})->empty());
}

TEST_CASE("the ring holds at most its bytes, and reads beyond it come from the log", "[hub]") {
  limbic::testing::ScratchDir dir;
  boost::asio::io_context ioc;
  auto engine = Fill(dir.path(), 0);
  EventHub hub{ioc, EventsDirPath(dir.path()), /*capacity=*/1000, /*max_bytes=*/2000};
  engine->AddListener([&](std::span<const Event> ev) { hub.Publish(ev); });
  for (int i = 0; i < 50; ++i) {
    auto ev = BuildPerceptAdd({{"source", "s"}, {"type", "t"}, {"text", std::string(100, 'x')}},
                              engine->next_seq());
    REQUIRE(engine->Commit(*ev).ok());
    CHECK(hub.ring_bytes() <= 2000);
  }
  CHECK(hub.ring_events() < 20);
  auto all = hub.Read(0, 100, {});
  REQUIRE(all.ok());
  REQUIRE(all->size() == 50);
  for (size_t i = 0; i < all->size(); ++i) CHECK((*all)[i].seq == i + 1);
  // One event larger than the bound is still kept: the newest always is.
  auto big = BuildPerceptAdd({{"source", "s"}, {"type", "t"}, {"text", std::string(5000, 'y')}},
                             engine->next_seq());
  REQUIRE(engine->Commit(*big).ok());
  CHECK(hub.ring_events() == 1);
  CHECK(hub.Read(50, 10, {})->size() == 1);
}

TEST_CASE("a filtered read looks at no more than it may, and says how far it looked", "[hub]") {
  RingAndDisk f;
  EventHub& hub = f.hub;
  // Odd seqs only, from the disk (1..9) and the ring (10..13).
  EventHub::Keep odd = [](const EventHub::Item& item) { return item.seq % 2 == 1; };
  uint64_t to = 0;
  auto all = hub.Read(0, 100, {}, odd, 1000, &to);
  REQUIRE(all.ok());
  REQUIRE(all->size() == 7);
  CHECK((*all)[6].seq == 13);
  CHECK(to == 13);
  // At most 4 looked at: seqs 1..4, two of them kept; go on from 4.
  auto some = hub.Read(0, 100, {}, odd, 4, &to);
  REQUIRE(some->size() == 2);
  CHECK(to == 4);
  // The limit on matches comes first: the first match, then stop.
  auto one = hub.Read(4, 1, {}, odd, 1000, &to);
  REQUIRE(one->size() == 1);
  CHECK((*one)[0].seq == 5);
  CHECK(to == 5);
  // Across the ring's start: 9 (disk), 10 and 11 (ring).
  auto across = hub.Read(8, 100, {}, odd, 3, &to);
  REQUIRE(across->size() == 2);
  CHECK(to == 11);
  // Nothing matches: the whole log looked at, to its end.
  auto none = hub.Read(
      0, 100, {}, [](const EventHub::Item&) { return false; }, 1000, &to);
  CHECK(none->empty());
  CHECK(to == 13);
  CHECK(hub.Read(13, 10, {}, odd, 10, &to)->empty());
  CHECK(to == 13);
}

TEST_CASE("subscribers get the backlog then live events, nothing missed or repeated", "[hub]") {
  limbic::testing::ScratchDir dir;
  boost::asio::io_context ioc;
  EventHub hub(ioc, EventsDirPath(dir.path()), 2);
  auto engine = Fill(dir.path(), 5);
  hub.set_last_seq(engine->applied_seq());
  engine->AddListener([&](std::span<const Event> ev) { hub.Publish(ev); });
  std::vector<uint64_t> got;
  REQUIRE(hub.Subscribe(2, {},
                        [&](const EventHub::Item& i) {
                          got.push_back(i.seq);
                          return got.size() < 6 ? EventHub::Take::kMore
                                                : EventHub::Take::kStop;  // after 6
                        })
              .ok());
  CHECK(got == std::vector<uint64_t>{3, 4, 5});
  for (int i = 0; i < 5; ++i) {
    auto ev = BuildPerceptAdd({{"source", "s"}, {"type", "t"}}, engine->next_seq());
    REQUIRE(engine->Commit(*ev).ok());
  }
  CHECK(got == std::vector<uint64_t>{3, 4, 5, 6, 7, 8});
  CHECK(hub.subscribers() == 0);

  // A type filter applies to backlog and live events alike.
  std::vector<uint64_t> typed;
  REQUIRE(hub.Subscribe(0, {EventType::kPerceptArrived},
                        [&](const EventHub::Item& i) {
                          typed.push_back(i.seq);
                          return EventHub::Take::kMore;
                        })
              .ok());
  CHECK(typed.size() == 10);
}

TEST_CASE("a paused subscriber gets the backlog page by page, then live, without gap or repeat",
          "[hub]") {
  limbic::testing::ScratchDir dir;
  boost::asio::io_context ioc;
  EventHub hub(ioc, EventsDirPath(dir.path()), /*capacity=*/8);
  auto engine = Fill(dir.path(), 30);  // 30 on disk, none in the ring
  hub.set_last_seq(engine->applied_seq());
  engine->AddListener([&](std::span<const Event> ev) { hub.Publish(ev); });
  auto add = [&] {
    auto ev = BuildPerceptAdd({{"source", "s"}, {"type", "t"}}, engine->next_seq());
    REQUIRE(engine->Commit(*ev).ok());
  };
  std::vector<uint64_t> got;
  size_t page = 0;  // events taken since the last Resume
  auto id = hub.Subscribe(1, {}, [&](const EventHub::Item& i) {
    got.push_back(i.seq);
    return ++page >= 7 ? EventHub::Take::kPause : EventHub::Take::kMore;
  });
  REQUIRE(id.ok());
  CHECK(got.size() == 7);
  CHECK(got.back() == 8);
  // Events published while it is paused wait in the ring (8 of them) or on
  // disk, and come in order when it resumes.
  for (int i = 0; i < 12; ++i) add();
  CHECK(got.size() == 7);
  while (got.size() < 41) {
    size_t before = got.size();
    page = 0;
    REQUIRE(hub.Resume(*id).ok());
    REQUIRE(got.size() > before);
  }
  // Caught up: live now, each new event at once.
  page = 0;
  REQUIRE(hub.Resume(*id).ok());
  add();
  std::vector<uint64_t> want;
  for (uint64_t s = 2; s <= 43; ++s) want.push_back(s);
  CHECK(got == want);
  hub.Unsubscribe(*id);
  CHECK(hub.subscribers() == 0);
  add();
  CHECK(got.size() == want.size());
}

TEST_CASE("long-poll waiters wake on a new event or at their deadline", "[hub]") {
  limbic::testing::ScratchDir dir;
  boost::asio::io_context ioc;
  EventHub hub(ioc, EventsDirPath(dir.path()));
  auto engine = Fill(dir.path(), 1);
  hub.set_last_seq(1);
  engine->AddListener([&](std::span<const Event> ev) { hub.Publish(ev); });
  int now_ready = 0, woken = 0, timed_out = 0;
  hub.Wait(0, 10000, [&] { ++now_ready; });  // already has seq 1
  CHECK(now_ready == 1);
  hub.Wait(1, 10000, [&] { ++woken; });
  hub.Wait(1, 20, [&] { ++timed_out; });
  ioc.run_for(std::chrono::milliseconds(200));
  CHECK(timed_out == 1);
  CHECK(woken == 0);
  auto ev = BuildPerceptAdd({{"source", "s"}, {"type", "t"}}, engine->next_seq());
  REQUIRE(engine->Commit(*ev).ok());
  CHECK(woken == 1);
}

}  // namespace event_hub_test
