// Start's report of stored records nested deeper than api.max_json_depth.
//
// Such a record reached the log through an older limbic (the door now
// refuses it). Every walk over stored JSON is iterative, so it is read,
// replayed and acted on as stored; start only says so, a warning each, so a
// user learns what is there and where before the runtime delivers it.
//
// What is scanned, so that start stays fast (the whole log is fsck's):
//   - the log after `log_after`: the events recovery re-applied and the
//     reflex catch-up read, which start has just read once already;
//   - the open outbox actions (inflight, pending, failed), which the outbox
//     is about to deliver: their pool records, not the log.
// Percepts the catch-up fired reflexes on arrived in that stretch of log.
#include <algorithm>

#include "runtime/runtime.h"
#include "base/json.h"
#include "state/replay.h"

namespace limbic::runtime {

using nlohmann::json;

void Runtime::ReportDeepRecords(uint64_t log_after) {
  constexpr size_t kShown = 5;  // warnings one by one; the rest are counted
  const size_t limit = config_.max_json_depth;
  size_t deep = 0;
  auto note = [&](const std::string& what) {
    if (deep++ < kShown) log_->warn("start: {}", what);
  };

  if (log_after < engine_->applied_seq()) {
    state::LogReader::Options ro;
    ro.from_seq = log_after + 1;
    auto reader = state::LogReader::Open(engine_->events_dir(), ro);
    state::Event e;
    state::EventLocation where;
    while (reader.ok()) {
      auto more = (*reader)->Next(&e, &where);
      if (!more.ok() || !*more || e.seq > engine_->applied_seq()) break;
      if (auto d = state::DeepEventNote(e, where, (*reader)->raw_line(), limit)) note(*d);
    }
  }
  for (const char* status : {"inflight", "pending", "failed"}) {
    auto actions = engine_->projection().ListActions(std::string(status));
    if (!actions.ok()) continue;  // the outbox's own start reports it
    for (const json& a : *actions) {
      const size_t depth = JsonDepth(CompactJson(a));
      if (depth <= limit) continue;
      note("action " + a.value("id", "?") + " (" + status + ", effector " +
           a.value("effector", "?") + ") nests " + std::to_string(depth) +
           " deep, beyond api.max_json_depth " + std::to_string(limit) +
           "; it is delivered as stored");
    }
  }
  if (deep == 0) return;
  if (deep > kShown) log_->warn("start: ... and {} more", deep - kShown);
  log_->warn(
      "start: {} stored records nest deeper than api.max_json_depth ({}); they are read "
      "and acted on as stored; `limbic --state {} fsck` lists every such event in the log",
      deep, limit, config_.state_dir);
}

}  // namespace limbic::runtime
