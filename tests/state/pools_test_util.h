// Helpers shared by the reducer, projection and bulk-load tests.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "state/projection.h"
#include "state/reducer.h"

namespace limbic::testing {

using state::Event;
using state::EventType;
using state::json;
using limbic::TimeMs;

inline constexpr TimeMs kT0 = 1795356309000;

// Builds events with contiguous seqs and a clock that moves 1 s per event.
struct Log {
  uint64_t seq = 0;
  std::vector<Event> events;
  Event& Add(EventType type, json fields) {
    Event e;
    e.seq = ++seq;
    e.ts = kT0 + static_cast<TimeMs>(seq) * 1000;
    e.type = type;
    e.fields = std::move(fields);
    REQUIRE(state::ValidateEventFields(type, e.fields).ok());
    events.push_back(e);
    return events.back();
  }
  Event& Percept(const std::string& id, const std::string& source = "github",
                 const std::string& type = "issue", double intensity = 0.5) {
    return Add(EventType::kPerceptArrived, {{"percept_id", id},
                                            {"source", source},
                                            {"percept_type", type},
                                            {"intensity", intensity}});
  }
  // percept_arrived for p-first ... p-last.
  void Percepts(size_t first, size_t last) {
    for (size_t i = first; i <= last; ++i) Percept("p-" + std::to_string(i));
  }
  Event& Thread(const std::string& id) {
    return Add(EventType::kThreadCreated, {{"thread_id", id}, {"goal", "g"}, {"salience", 0.5}});
  }
};

// Reduces all events onto a fresh overlay; returns the first error.
inline Status ReduceAll(const std::vector<Event>& events, state::Overlay* o) {
  for (const Event& e : events) LIMBIC_RETURN_IF_ERROR(state::Reduce(e, o));
  return Status::OK();
}

// The record, which must exist.
inline json Rec(const state::RecordReader& r, state::Pool pool, const std::string& id) {
  auto got = r.Get(pool, id);
  REQUIRE(got.ok());
  REQUIRE(got->has_value());
  return **got;
}

inline std::unique_ptr<state::Projection> MustOpen(const state::ProjectionOptions& o) {
  auto p = state::Projection::Open(o);
  INFO(p.status().ToString());
  REQUIRE(p.ok());
  return std::move(p).value();
}

inline std::unique_ptr<state::Projection> OpenDb(const std::string& path, bool read_only = false) {
  state::ProjectionOptions o;
  o.path = path;
  o.read_only = read_only;
  return MustOpen(o);
}

// A projection in replay's bulk-load mode, writing every `flush_records`
// changed records.
inline std::unique_ptr<state::Projection> OpenBulk(const std::string& path, size_t flush_records) {
  state::ProjectionOptions o;
  o.path = path;
  o.bulk_load = true;
  o.bulk_flush_records = flush_records;
  return MustOpen(o);
}

}  // namespace limbic::testing
