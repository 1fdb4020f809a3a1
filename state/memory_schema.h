// The shapes of the nested objects memory events carry (docs/events.md,
// "Memory"). Used by event.cc to validate, relied on by reduce_memory.cc,
// and by memory/ to check requests before they become events.
//
//   memory     {id, kind: fact|episode|chunk, importance: [0,1], tags: [names],
//               namespace: name, strength: (0, 1],
//               fact:    subject: name, relation: name, object: string (no NUL)
//               episode: text (non-empty), episode_id?: id
//               chunk:   text (non-empty), source_uri, chunk_index, document: id,
//                        episode_id?: id
//               optional: created_at, last_accessed_at (RFC 3339), access_count,
//               superseded_by: id, valid_until (RFC 3339),
//               embedding {embedder: name, vector: base64 f32}}
//   touches    [{memory_id, strength: [0, 1]}]  (at least one)
//   vectors    [{memory_id, embedder: name, vector: base64}]  (at least one)
//   document   {sha256: 64 hex, source_uri, ext, bytes, chunks, raw, episode_id?}
//
// Unknown keys are errors: these objects are limbic's own, not user data.
// Each check returns "" when the value fits, else what is wrong with it,
// naming the key ("memory.subject: must be a name ...").
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/name.h"
#include "base/time.h"

namespace limbic::state {

// `times`: kCalendar for new input, kLogged for what the log already holds
// (base/time.h).
std::string CheckMemoryObject(const nlohmann::json& v, TimeRule times = TimeRule::kCalendar);
std::string CheckTouches(const nlohmann::json& v);
std::string CheckVectors(const nlohmann::json& v, TimeRule times = TimeRule::kCalendar);
std::string CheckDocument(const nlohmann::json& v);

// New input (kCalendar) takes new names; what the log holds (kLogged), the
// names limbic took when it was written (base/name.h).
inline NameRule NameRuleFor(TimeRule times) {
  return times == TimeRule::kLogged ? NameRule::kLogged : NameRule::kNew;
}
// "" when `v` is a name string (base/name.h); else "<field>: must be a
// name ...; U+202E (a bidi control) at byte 3".
std::string NameError(std::string_view field, const nlohmann::json& v,
                      NameRule rule = NameRule::kNew);
inline bool IsName(const nlohmann::json& v, NameRule rule = NameRule::kNew) {
  return NameError("", v, rule).empty();
}

}  // namespace limbic::state
