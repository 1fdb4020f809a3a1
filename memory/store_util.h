// Helpers shared by the MemoryStore files. Internal to memory/.
#pragma once

#include <cmath>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "state/event.h"
#include "memory/recall_index.h"
#include "state/memory_schema.h"

namespace limbic::memory {

// strength * 0.5^(hours since last access / half-life); never negative age.
inline double EffectiveStrength(double strength, TimeMs last_accessed, TimeMs now,
                                double half_life_hours) {
  const double hours = std::max<double>(0, static_cast<double>(now - last_accessed)) / 3600000.0;
  return half_life_hours > 0 ? strength * std::pow(0.5, hours / half_life_hours) : strength;
}

// InvalidArgument naming the first key of `req` not in `allowed` (or a
// request that is not an object).
inline Status CheckRequest(const json& req, std::initializer_list<std::string_view> allowed) {
  if (!req.is_object()) return Status::InvalidArgument("the request must be a JSON object");
  for (auto it = req.begin(); it != req.end(); ++it) {
    bool known = false;
    for (auto a : allowed) known = known || it.key() == a;
    if (!known) return Status::InvalidArgument("unknown field \"" + it.key() + "\"");
  }
  return Status::OK();
}

// A memory object's problem in the words of a request: "field \"subject\": ...".
inline std::string RequestError(const json& memory) {
  std::string why = state::CheckMemoryObject(memory);
  if (why.rfind("memory.", 0) == 0) {
    auto colon = why.find(':');
    return "field \"" + why.substr(7, colon - 7) + "\"" + why.substr(colon);
  }
  return why;
}

inline state::Event MakeEvent(state::EventType type, json fields) {
  state::Event e;
  e.type = type;
  e.fields = std::move(fields);
  return e;
}

// memory_forgotten for `ids`, with the documents whose chunks all go.
inline state::Event ForgetEvent(const RecallIndex& index, const std::vector<std::string>& ids,
                                const std::string& reason) {
  std::map<std::string, long> remaining;  // document -> its chunks left
  bool chunks = false;
  for (const std::string& id : ids)
    if (const MemoryMeta* m = index.Find(id); m && m->kind == "chunk") chunks = true;
  if (chunks) {
    index.ForEach([&](const MemoryMeta& m) {
      if (m.kind == "chunk") ++remaining[m.document];
    });
    for (const std::string& id : ids)
      if (const MemoryMeta* m = index.Find(id); m && m->kind == "chunk") --remaining[m->document];
  }
  json docs = json::array();
  for (const auto& [doc, left] : remaining)
    if (left == 0) docs.push_back(doc);
  json fields = {{"memory_ids", ids}, {"reason", reason}};
  if (!docs.empty()) fields["document_ids"] = docs;
  return MakeEvent(state::EventType::kMemoryForgotten, std::move(fields));
}

}  // namespace limbic::memory
