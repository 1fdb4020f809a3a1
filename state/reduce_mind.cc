// ReduceMind(): what the mind's events do to the sessions pool (reducer.h;
// runtime/mind/mind.h; docs/events.md, "The mind"). mind_woken makes a
// session, awake; mind_step appends a step to an awake one; mind_slept
// puts it to sleep.
#include "state/reduce_step.h"
#include "state/reducer.h"

namespace limbic::state {

Status ReduceMind(const Event& e, Overlay* overlay) {
  reduce::Step s(e, overlay);
  const std::string id = s.Str("session");
  const json& f = s.F();
  if (e.type == EventType::kMindWoken) {
    LIMBIC_RETURN_IF_ERROR(s.MustNotExist(Pool::kSessions, id, "session"));
    json rec = {{"id", id},
                {"mind", f["mind"]},
                {"reason", f["reason"]},
                {"trigger", f["trigger"]},
                {"thread_id", f.value("thread_id", json())},
                {"percept_ids", f.value("percept_ids", json::array())},
                {"budget", f.value("budget", json::object())},
                {"woken_at", s.ts()},
                {"seq", s.seq()},
                {"status", "awake"},
                {"steps", json::array()},
                {"tokens_in", 0},
                {"tokens_out", 0},
                {"tokens", 0}};
    if (f.contains("actor")) rec["actor"] = f["actor"];
    s.Put(Pool::kSessions, id, std::move(rec));
    return Status::OK();
  }
  auto rec = s.Take(Pool::kSessions, id, "session");
  if (!rec.ok()) return rec.status();
  if (rec->value("status", "") != "awake") return s.Wrong("session", id, "is asleep");
  if (e.type == EventType::kMindStep) {
    json& steps = (*rec)["steps"];
    const uint64_t step = f["step"].get<uint64_t>();
    const uint64_t last = steps.empty() ? 0 : steps.back().value("step", uint64_t{0});
    if (step <= last)
      return s.Wrong("session", id, "has step " + std::to_string(last) + " already (got " +
                                        std::to_string(step) + ")");
    json st = {{"step", step}, {"ts", s.ts()}};
    for (const char* key : {"model", "tokens_in", "tokens_out", "latency_ms", "tool_calls", "text",
                            "finish_reason"})
      if (f.contains(key)) st[key] = f[key];
    const uint64_t in = f["tokens_in"].get<uint64_t>(), out = f["tokens_out"].get<uint64_t>();
    steps.push_back(std::move(st));
    (*rec)["tokens_in"] = rec->value("tokens_in", uint64_t{0}) + in;
    (*rec)["tokens_out"] = rec->value("tokens_out", uint64_t{0}) + out;
    (*rec)["tokens"] = rec->value("tokens", uint64_t{0}) + in + out;
  } else {
    (*rec)["status"] = "asleep";
    (*rec)["outcome"] = f["outcome"];
    (*rec)["slept_at"] = s.ts();
    (*rec)["duration_ms"] = f["duration_ms"];
    if (f.contains("error")) (*rec)["error"] = f["error"];
  }
  s.Put(Pool::kSessions, id, std::move(*rec));
  return Status::OK();
}

}  // namespace limbic::state
