// What the events log tests share: events, a log whose writer's answers
// are recorded, reading a whole log back, damaging files.
#pragma once

#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "state/event_log.h"

namespace limbic::testing {

using namespace limbic::state;

inline Event MakeEvent(uint64_t seq, std::string text = "hello") {
  Event e;
  e.seq = seq;
  e.ts = 1795356309000 + static_cast<TimeMs>(seq);
  e.type = EventType::kPerceptArrived;
  e.fields = {{"percept_id", "p-" + std::to_string(seq)},
              {"source", "test"},
              {"percept_type", "t"},
              {"intensity", 0.5},
              {"text", std::move(text)}};
  return e;
}

// A log plus what its writer hands back.
struct Harness {
  std::mutex mu;
  std::vector<uint64_t> acked;  // seqs, in callback order
  std::vector<size_t> group_sizes;
  Status last_status;

  LogOptions Options(const std::string& dir, Env* env = nullptr) {
    LogOptions o;
    o.dir = dir;
    o.env = env;
    o.on_group = [this](const Status& s, std::vector<LogBatch>&& group) {
      std::lock_guard<std::mutex> lock(mu);
      last_status = s;
      size_t n = 0;
      for (auto& b : group)
        for (auto& e : b.events) {
          if (s.ok()) acked.push_back(e.seq);
          ++n;
        }
      group_sizes.push_back(n);
    };
    return o;
  }
};

// The segment files of a log dir, in order (seals and other files left out).
inline std::vector<std::string> SegmentPaths(const std::string& dir) {
  std::vector<std::string> out;
  for (auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".jsonl") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

inline std::vector<Event> ReadAll(const std::string& dir, Env* env = nullptr) {
  LogReader::Options o;
  o.env = env;
  auto reader = LogReader::Open(dir, o);
  REQUIRE(reader.ok());
  std::vector<Event> out;
  Event e;
  for (;;) {
    auto more = (*reader)->Next(&e);
    INFO(more.status().ToString());
    REQUIRE(more.ok());
    if (!*more) break;
    out.push_back(e);
  }
  return out;
}

inline void Write(EventLog& log, uint64_t from, uint64_t to) {
  for (uint64_t s = from; s <= to; ++s) log.Submit(LogBatch{{MakeEvent(s)}, s});
  REQUIRE(log.Flush().ok());
}

inline void Corrupt(const std::string& file, uint64_t offset, std::string_view bytes) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline uint64_t FileSize(const std::string& f) { return std::filesystem::file_size(f); }

}  // namespace limbic::testing
