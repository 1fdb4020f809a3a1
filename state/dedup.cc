#include "state/dedup.h"

#include <charconv>

namespace limbic::state {

bool IsGeneratedPerceptId(std::string_view id, uint64_t seq) {
  if (!id.starts_with("p-") || id.size() < 3 || id[2] == '0') return false;
  uint64_t n = 0;
  const char* end = id.data() + id.size();
  auto [at, ec] = std::from_chars(id.data() + 2, end, n);
  return ec == std::errc() && at == end && n == seq;
}

Status CheckDedupWindow(const Event& e, const RecordReader& state, TimeMs window) {
  if (e.type != EventType::kPerceptArrived || window <= 0) return Status::OK();
  const std::string id = e.Str("percept_id");
  if (IsGeneratedPerceptId(id, e.seq)) return Status::OK();
  auto rec = state.Get(Pool::kDedup, id);
  if (!rec.ok()) return rec.status();
  if (!rec->has_value()) return Status::OK();
  const std::string left_text = (**rec).value("left_at", "");
  const TimeMs left = TimeOrZero(left_text);
  if (e.ts - left >= window) return Status::OK();
  return Status::AlreadyExists(
      "percept_arrived: percept " + id + " already exists: it left the pool at " + left_text +
      ", and its id stays taken until " + FormatTime(left + window) + " (percepts.dedup_window)");
}

Result<Events> BuildDedupPrune(const Projection& applied, const RecordReader& pending,
                               TimeMs window, TimeMs now, size_t limit) {
  json ids = json::array();
  Status failed;
  Status s = applied.ForEach(Pool::kDedup, [&](std::string_view id, const json& rec) {
    const std::string left = rec.value("left_at", "");
    if (now - TimeOrZero(left) < window) return true;
    // Not if a command queued since deleted it (the id arrived again) or
    // remembered it anew.
    auto still = pending.Get(Pool::kDedup, id);
    if (!still.ok()) {
      failed = still.status();
      return false;
    }
    if (still->has_value() && (**still).value("left_at", "") == left) ids.push_back(id);
    return ids.size() < limit;
  });
  LIMBIC_RETURN_IF_ERROR(s);
  LIMBIC_RETURN_IF_ERROR(failed);
  if (ids.empty()) return Events{};
  Event e;
  e.type = EventType::kDedupPruned;
  e.fields = {{"percept_ids", std::move(ids)}};
  return Events{std::move(e)};
}

}  // namespace limbic::state
