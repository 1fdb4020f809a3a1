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
// Thread-safety: io thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "state/event.h"
#include "state/status.h"

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
  // Receives one encoded event; returns false once it no longer wants more.
  using Sink = std::function<bool(const Item& item)>;

  // `events_dir` is the log to read older events from; `capacity` events are
  // kept in memory.
  EventHub(boost::asio::io_context& ioc, std::string events_dir, size_t capacity = 65536);
  ~EventHub();

  void Publish(std::span<const state::Event> events);
  uint64_t last_seq() const { return last_seq_; }
  void set_last_seq(uint64_t seq) { last_seq_ = seq; }

  // Up to `limit` events with seq > after (of `types`), oldest first.
  Result<std::vector<Item>> Read(uint64_t after, size_t limit, const Types& types) const;

  // Calls `ready` once there is an event with seq > after, or after
  // `timeout_ms`, whichever is first (immediately if there already is one).
  void Wait(uint64_t after, int64_t timeout_ms, std::function<void()> ready);

  // Sends every event after `after`, then each new one, until `sink`
  // returns false. Returns an error if the backlog cannot be read.
  Status Subscribe(uint64_t after, const Types& types, Sink sink);

  // Wakes every waiter and drops every subscriber (shutdown).
  void Close();

  size_t subscribers() const { return subscribers_.size(); }

 private:
  struct Waiter;
  struct Subscriber {
    Types types;
    Sink sink;
  };
  static bool Wanted(const Types& types, state::EventType type);

  boost::asio::io_context& ioc_;
  std::string events_dir_;
  size_t capacity_;
  std::deque<Item> ring_;
  uint64_t last_seq_ = 0;
  std::list<std::shared_ptr<Waiter>> waiters_;
  std::list<Subscriber> subscribers_;
};

}  // namespace limbic::runtime
