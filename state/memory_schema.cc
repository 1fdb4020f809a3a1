#include "state/memory_schema.h"

#include <cmath>
#include <initializer_list>
#include <string_view>

#include "state/event.h"
#include "base/time.h"

namespace limbic::state {
namespace {

bool IsStr(const json& v) { return v.is_string(); }
bool IsNonEmpty(const json& v) { return v.is_string() && !v.get_ref<const std::string&>().empty(); }
bool IsIdValue(const json& v) {
  return v.is_string() && IsValidId(v.get_ref<const std::string&>());
}
bool IsCount(const json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
}
bool IsUnit(const json& v) { return v.is_number() && v.get<double>() >= 0 && v.get<double>() <= 1; }
bool NoNul(const json& v) {
  return v.is_string() && v.get_ref<const std::string&>().find('\0') == std::string::npos;
}

// Checks the keys of `obj` against `allowed`; "" or the first unknown key.
std::string UnknownKey(const json& obj, std::initializer_list<std::string_view> allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (auto a : allowed) known = known || it.key() == a;
    if (!known) return it.key();
  }
  return {};
}

// "" when obj[key] exists and passes `ok` (or is absent and optional).
template <typename Pred>
std::string Need(const json& obj, const std::string& where, const char* key, bool required, Pred ok,
                 const char* want) {
  auto it = obj.find(key);
  if (it == obj.end()) return required ? where + "." + key + ": missing" : "";
  if (ok(*it)) return "";
  std::string got = it->dump();
  if (got.size() > 60) got = got.substr(0, 57) + "...";
  return where + "." + key + ": must be " + want + ", got " + got;
}

}  // namespace

std::string NameError(std::string_view field, const json& v, NameRule rule) {
  if (!v.is_string()) return std::string(field) + ": must be " + std::string(kNameRule);
  Status s = CheckName(field, v.get_ref<const std::string&>(), rule);
  return s.ok() ? std::string() : s.message();
}

std::string CheckMemoryObject(const json& v, TimeRule times) {
  auto is_time = [times](const json& t) {
    return t.is_string() && ParseTime(t.get_ref<const std::string&>(), times).ok();
  };
  if (!v.is_object()) return "memory: must be an object";
  const std::string w = "memory";
  if (auto k = UnknownKey(v, {"id",           "kind",          "importance",  "tags",
                              "namespace",    "strength",      "subject",     "relation",
                              "object",       "text",          "episode_id",  "source_uri",
                              "chunk_index",  "document",      "created_at",  "last_accessed_at",
                              "access_count", "superseded_by", "valid_until", "embedding"});
      !k.empty())
    return "memory: unknown key \"" + k + "\"";
  std::string e;
  auto check = [&](const char* key, bool required, auto ok, const char* want) {
    if (e.empty()) e = Need(v, w, key, required, ok, want);
  };
  const NameRule names = NameRuleFor(times);
  auto check_name = [&](const char* key, bool required) {
    if (!e.empty()) return;
    if (!v.contains(key)) {
      if (required) e = w + "." + key + ": missing";
      return;
    }
    e = NameError(w + "." + key, v[key], names);
  };
  check("id", true, IsIdValue, "an id");
  check(
      "kind", true, [](const json& k) { return k == "fact" || k == "episode" || k == "chunk"; },
      "one of fact, episode, chunk");
  check("importance", true, IsUnit, "a number in [0, 1]");
  check("tags", true, [](const json& t) { return t.is_array(); }, "an array of names");
  if (e.empty())
    for (size_t i = 0; i < v["tags"].size() && e.empty(); ++i)
      e = NameError(w + ".tags[" + std::to_string(i) + "]", v["tags"][i], names);
  check_name("namespace", true);
  check(
      "strength", true,
      [](const json& s) { return s.is_number() && s.get<double>() > 0 && s.get<double>() <= 1; },
      "a number in (0, 1]");
  if (!e.empty()) return e;
  const std::string kind = v["kind"].get<std::string>();
  const bool fact = kind == "fact", chunk = kind == "chunk";
  check_name("subject", fact);
  check_name("relation", fact);
  check(
      "object", fact, [](const json& o) { return IsNonEmpty(o) && NoNul(o); },
      "a non-empty string without NUL");
  check("text", !fact, IsNonEmpty, "a non-empty string");
  check("source_uri", chunk, IsNonEmpty, "a non-empty string");
  check("chunk_index", chunk, IsCount, "a non-negative integer");
  check("document", chunk, IsIdValue, "an id");
  check("episode_id", false, IsIdValue, "an id");
  check("created_at", false, is_time, "an RFC 3339 time on a calendar day");
  check("last_accessed_at", false, is_time, "an RFC 3339 time on a calendar day");
  check("access_count", false, IsCount, "a non-negative integer");
  check("superseded_by", false, IsIdValue, "an id");
  check("valid_until", false, is_time, "an RFC 3339 time on a calendar day");
  check(
      "embedding", false,
      [names](const json& m) {
        return m.is_object() && m.size() == 2 && m.contains("embedder") &&
               IsName(m["embedder"], names) && m.contains("vector") && IsStr(m["vector"]);
      },
      "{embedder, vector}");
  if (!e.empty()) return e;
  if (fact && v.contains("text")) return "memory.text: a fact's text is made from its triple";
  if (!fact && (v.contains("subject") || v.contains("relation") || v.contains("object")))
    return "memory: subject, relation and object belong to facts";
  if (!chunk && (v.contains("source_uri") || v.contains("chunk_index") || v.contains("document")))
    return "memory: source_uri, chunk_index and document belong to chunks";
  if (fact && v.contains("episode_id")) return "memory.episode_id: not for facts";
  return {};
}

std::string CheckTouches(const json& v) {
  if (!v.is_array() || v.empty()) return "touches: must be a non-empty array";
  for (const json& t : v) {
    if (!t.is_object()) return "touches: each must be {memory_id, strength}";
    if (auto k = UnknownKey(t, {"memory_id", "strength"}); !k.empty())
      return "touches: unknown key \"" + k + "\"";
    if (auto e = Need(t, "touches[]", "memory_id", true, IsIdValue, "an id"); !e.empty()) return e;
    if (auto e = Need(t, "touches[]", "strength", true, IsUnit, "a number in [0, 1]"); !e.empty())
      return e;
  }
  return {};
}

std::string CheckVectors(const json& v, TimeRule times) {
  if (!v.is_array() || v.empty()) return "vectors: must be a non-empty array";
  for (const json& t : v) {
    if (!t.is_object()) return "vectors: each must be {memory_id, embedder, vector}";
    if (auto k = UnknownKey(t, {"memory_id", "embedder", "vector"}); !k.empty())
      return "vectors: unknown key \"" + k + "\"";
    if (auto e = Need(t, "vectors[]", "memory_id", true, IsIdValue, "an id"); !e.empty()) return e;
    if (!t.contains("embedder")) return "vectors[].embedder: missing";
    if (auto e = NameError("vectors[].embedder", t["embedder"], NameRuleFor(times)); !e.empty())
      return e;
    if (auto e = Need(t, "vectors[]", "vector", true, IsStr, "a base64 string"); !e.empty())
      return e;
  }
  return {};
}

std::string CheckDocument(const json& v) {
  if (!v.is_object()) return "document: must be an object";
  if (auto k =
          UnknownKey(v, {"sha256", "source_uri", "ext", "bytes", "chunks", "raw", "episode_id"});
      !k.empty())
    return "document: unknown key \"" + k + "\"";
  std::string e;
  auto check = [&](const char* key, bool required, auto ok, const char* want) {
    if (e.empty()) e = Need(v, "document", key, required, ok, want);
  };
  check(
      "sha256", true,
      [](const json& s) {
        if (!s.is_string() || s.get_ref<const std::string&>().size() != 64) return false;
        for (char c : s.get_ref<const std::string&>())
          if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
        return true;
      },
      "64 lower-case hex digits");
  check("source_uri", true, IsNonEmpty, "a non-empty string");
  check("ext", true, IsStr, "a string");
  check("bytes", true, IsCount, "a non-negative integer");
  check("chunks", true, IsCount, "a non-negative integer");
  check("raw", true, IsStr, "a string");
  check("episode_id", false, IsIdValue, "an id");
  return e;
}

}  // namespace limbic::state
