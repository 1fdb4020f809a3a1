// EventHub: applied events, fanned out to readers of the API.
//
// The engine publishes every applied group here. The hub keeps the most
// recent events in a ring (encoded once), answers `GET /v1/events?after=N`
// from the ring or, for older seqs, from the log on disk, wakes long-poll
// waiters, and pushes to Server-Sent-Event subscribers. A subscriber that
// resumes from seq N first gets N+1.. (ring or disk) and then live events,
// with nothing missed or repeated: all of it happens on the io thread, so
// no event can slip in between the backlog and the live feed.
//
// The backlog is paced by the subscriber: its sink says kPause when it has
// enough queued, and the hub reads on from where it stopped when told to
// Resume, so catching up on a long log holds one page in memory, not the
// log. A subscriber is live (gets each event as it is published) only once
// it has caught up.
//
// Thread-safety: io thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "state/event.h"
#include "state/event_log.h"
#include "base/status.h"

namespace limbic::runtime {

class EventHub {
 public:
  struct Item {
    uint64_t seq;
    state::EventType type;
    std::string line;  // the encoded event (JSON, no newline)
  };
  // Filter on event types; empty = all.
  using Types = std::vector<state::EventType>;
  // What a sink wants after taking one event. kPause only matters while
  // catching up (live events are pushed regardless).
  enum class Take { kMore, kPause, kStop };
  // Receives one encoded event.
  using Sink = std::function<Take(const Item& item)>;

  // `events_dir` is the log to read older events from; the last `capacity`
  // events are kept in memory, as long as their lines take at most
  // `max_bytes` (consolidation's entries are kilobytes each).
  EventHub(boost::asio::io_context& ioc, std::string events_dir, size_t capacity = 65536,
           size_t max_bytes = size_t{32} << 20);
  ~EventHub();

  void Publish(std::span<const state::Event> events);
  uint64_t last_seq() const { return last_seq_; }
  //! The events the ring holds now, and the bytes of their lines.
  size_t ring_events() const { return ring_.size(); }
  size_t ring_bytes() const { return ring_bytes_; }
  void set_last_seq(uint64_t seq) { last_seq_ = seq; }

  // Up to `limit` events with seq > after (of `types`), oldest first.
  Result<std::vector<Item>> Read(uint64_t after, size_t limit, const Types& types) const;
  // The same, of those `keep` accepts too, looking at no more than
  // `max_scan` events after `after` (a filter that matches little must not
  // hold the io thread for the whole log). *scanned_to is the last seq
  // looked at (last_seq when the end was reached): a client goes on from
  // there.
  using Keep = std::function<bool(const Item& item)>;
  Result<std::vector<Item>> Read(uint64_t after, size_t limit, const Types& types, const Keep& keep,
                                 uint64_t max_scan, uint64_t* scanned_to) const;

  // Calls `ready` once there is an event with seq > after, or after
  // `timeout_ms`, whichever is first (immediately if there already is one).
  void Wait(uint64_t after, int64_t timeout_ms, std::function<void()> ready);

  // Sends every event after `after` (of `types`), then each new one, until
  // `sink` returns kStop or Unsubscribe. The backlog is sent now until the
  // sink pauses; Resume sends on. Returns the subscription's id, or the
  // error that kept the backlog from being read (then nothing is kept).
  Result<uint64_t> Subscribe(uint64_t after, const Types& types, Sink sink);
  // Sends on the backlog of a paused subscription, until it pauses again or
  // has caught up. An unknown id or a live subscription: nothing to do. On
  // a read error the subscription is dropped and the error returned.
  Status Resume(uint64_t id);
  void Unsubscribe(uint64_t id);
  // True while the hub is alive: callbacks posted for later hold this to
  // check before they touch the hub.
  std::weak_ptr<void> alive() const { return alive_; }

  // Wakes every waiter and drops every subscriber (shutdown).
  void Close();

  size_t subscribers() const { return subscribers_.size(); }

 private:
  struct Waiter;
  struct Subscriber {
    Types types;
    Sink sink;
    uint64_t cursor = 0;  // the last seq sent or skipped
    bool live = false;    // caught up: Publish pushes to it
    std::unique_ptr<state::LogReader> reader;  // while catching up from disk
  };
  static bool Wanted(const Types& types, state::EventType type);
  // Sends `id`'s backlog until it pauses, stops or is live.
  Status Pump(uint64_t id);

  boost::asio::io_context& ioc_;
  std::string events_dir_;
  size_t capacity_;
  size_t max_bytes_;
  size_t ring_bytes_ = 0;  // the ring's lines
  std::deque<Item> ring_;
  uint64_t last_seq_ = 0;
  std::list<std::shared_ptr<Waiter>> waiters_;
  std::map<uint64_t, Subscriber> subscribers_;
  uint64_t next_subscriber_ = 1;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace limbic::runtime
