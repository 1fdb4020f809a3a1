#include "runtime/event_hub.h"

#include <algorithm>
#include <limits>

#include "state/event_log.h"

namespace limbic::runtime {

struct EventHub::Waiter {
  uint64_t after;
  std::function<void()> ready;
  std::unique_ptr<boost::asio::steady_timer> timer;
  void Fire() {
    if (!ready) return;
    auto cb = std::move(ready);
    ready = nullptr;
    if (timer) timer->cancel();
    cb();
  }
};

EventHub::EventHub(boost::asio::io_context& ioc, std::string events_dir, size_t capacity,
                   size_t max_bytes)
    : ioc_(ioc),
      events_dir_(std::move(events_dir)),
      capacity_(std::max<size_t>(capacity, 1)),
      max_bytes_(max_bytes) {}

EventHub::~EventHub() { Close(); }

bool EventHub::Wanted(const Types& types, state::EventType type) {
  return types.empty() || std::find(types.begin(), types.end(), type) != types.end();
}

void EventHub::Publish(std::span<const state::Event> events) {
  for (const state::Event& e : events) {
    ring_.push_back(Item{e.seq, e.type, state::EncodeEvent(e)});
    ring_bytes_ += ring_.back().line.size();
    // The newest event stays, however large; older ones are read from disk.
    while (ring_.size() > 1 && (ring_.size() > capacity_ || ring_bytes_ > max_bytes_)) {
      ring_bytes_ -= ring_.front().line.size();
      ring_.pop_front();
    }
    last_seq_ = e.seq;
    const Item& item = ring_.back();
    // Only live subscribers: one catching up reads this event when it
    // gets there.
    for (auto it = subscribers_.begin(); it != subscribers_.end();) {
      Subscriber& s = it->second;
      if (!s.live) {
        ++it;
        continue;
      }
      s.cursor = item.seq;
      if (Wanted(s.types, item.type) && s.sink(item) == Take::kStop) it = subscribers_.erase(it);
      else ++it;
    }
  }
  // Wake long-pollers whose `after` is now behind.
  std::vector<std::shared_ptr<Waiter>> ready;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if ((*it)->after < last_seq_) {
      ready.push_back(*it);
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& w : ready) w->Fire();
}

Result<std::vector<EventHub::Item>> EventHub::Read(uint64_t after, size_t limit,
                                                   const Types& types) const {
  uint64_t scanned_to = 0;
  return Read(after, limit, types, nullptr, std::numeric_limits<uint64_t>::max(), &scanned_to);
}

Result<std::vector<EventHub::Item>> EventHub::Read(uint64_t after, size_t limit, const Types& types,
                                                   const Keep& keep, uint64_t max_scan,
                                                   uint64_t* scanned_to) const {
  std::vector<Item> out;
  *scanned_to = std::max(after, last_seq_);
  if (limit == 0 || after >= last_seq_) return out;
  uint64_t scanned = 0;
  // Whether to go on after looking at the event `seq`.
  auto more = [&](uint64_t seq) {
    *scanned_to = seq;
    return out.size() < limit && ++scanned < max_scan;
  };
  auto wanted = [&](const Item& item) { return Wanted(types, item.type) && (!keep || keep(item)); };
  uint64_t ring_first = ring_.empty() ? last_seq_ + 1 : ring_.front().seq;
  if (after + 1 < ring_first) {
    // Older than the ring: read the log on disk (segments before `after`
    // are skipped by name, so this costs one segment scan at most).
    state::LogReader::Options options;
    options.from_seq = after + 1;
    auto reader = state::LogReader::Open(events_dir_, options);
    if (!reader.ok()) return reader.status();
    state::Event e;
    for (;;) {
      auto next = (*reader)->Next(&e);
      if (!next.ok()) return next.status();
      if (!*next || e.seq >= ring_first) break;
      if (e.seq <= after) continue;
      Item item{e.seq, e.type, std::string((*reader)->raw_line())};
      if (wanted(item)) out.push_back(std::move(item));
      if (!more(e.seq)) return out;
    }
  }
  for (auto it = std::lower_bound(ring_.begin(), ring_.end(), after + 1,
                                  [](const Item&i, uint64_t s) { return i.seq < s; });
       it != ring_.end(); ++it) {
    if (wanted(*it)) out.push_back(*it);
    if (!more(it->seq)) return out;
  }
  *scanned_to = last_seq_;
  return out;
}

void EventHub::Wait(uint64_t after, int64_t timeout_ms, std::function<void()> ready) {
  if (after < last_seq_ || timeout_ms <= 0) return ready();
  auto w = std::make_shared<Waiter>();
  w->after = after;
  w->ready = std::move(ready);
  w->timer = std::make_unique<boost::asio::steady_timer>(ioc_);
  w->timer->expires_after(std::chrono::milliseconds(timeout_ms));
  waiters_.push_back(w);
  std::weak_ptr<Waiter> weak = w;
  w->timer->async_wait([this, weak](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: already fired
    auto w = weak.lock();
    if (!w) return;
    waiters_.remove(w);
    w->Fire();
  });
}

Result<uint64_t> EventHub::Subscribe(uint64_t after, const Types& types, Sink sink) {
  uint64_t id = next_subscriber_++;
  Subscriber& s = subscribers_[id];
  s.types = types;
  s.sink = std::move(sink);
  s.cursor = after;
  LIMBIC_RETURN_IF_ERROR(Pump(id));
  return id;
}

Status EventHub::Resume(uint64_t id) { return Pump(id); }

void EventHub::Unsubscribe(uint64_t id) { subscribers_.erase(id); }

Status EventHub::Pump(uint64_t id) {
  auto found = subscribers_.find(id);
  if (found == subscribers_.end()) return Status::OK();
  Subscriber& s = found->second;
  auto fail = [&](Status st) {
    subscribers_.erase(found);
    return st;
  };
  // All on the io thread: nothing is published while this runs, so once
  // the cursor reaches last_seq_ the next event is a live one.
  while (!s.live) {
    if (s.cursor >= last_seq_) {
      s.live = true;
      s.reader.reset();
      break;
    }
    uint64_t ring_first = ring_.empty() ? last_seq_ + 1 : ring_.front().seq;
    Item from_disk;
    const Item* next = nullptr;
    if (s.cursor + 1 < ring_first) {
      // Older than the ring: one reader per subscriber, read on page by
      // page, rather than a scan from the segment's start each time.
      if (!s.reader) {
        state::LogReader::Options options;
        options.from_seq = s.cursor + 1;
        auto reader = state::LogReader::Open(events_dir_, options);
        if (!reader.ok()) return fail(reader.status());
        s.reader = std::move(reader).value();
      }
      state::Event e;
      do {
        auto more = s.reader->Next(&e);
        if (!more.ok()) return fail(more.status());
        if (!*more)
          return fail(Status::Internal("the event log ends before seq " +
                                       std::to_string(s.cursor + 1) + " (last applied " +
                                       std::to_string(last_seq_) + ")"));
      } while (e.seq <= s.cursor);
      from_disk = Item{e.seq, e.type, std::string(s.reader->raw_line())};
      next = &from_disk;
    } else {
      s.reader.reset();
      next = &*std::lower_bound(ring_.begin(), ring_.end(), s.cursor + 1,
                                [](const Item& i, uint64_t seq) { return i.seq < seq; });
    }
    s.cursor = next->seq;
    if (!Wanted(s.types, next->type)) continue;
    Take take = s.sink(*next);
    if (take == Take::kStop) {
      subscribers_.erase(found);
      return Status::OK();
    }
    if (take == Take::kPause) break;
  }
  return Status::OK();
}

void EventHub::Close() {
  auto waiters = std::move(waiters_);
  waiters_.clear();
  for (auto& w : waiters) w->Fire();
  subscribers_.clear();
}

}  // namespace limbic::runtime
