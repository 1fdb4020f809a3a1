#include "world/model.h"

namespace limbic::world {
namespace {

constexpr std::string_view kTypeNames[] = {"person", "company", "project", "tool", "concept"};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Strips one layer of `open`..`close` around the whole of *s.
bool StripPair(std::string_view* s, std::string_view open, std::string_view close) {
  if (s->size() < open.size() + close.size() + 1 || !s->starts_with(open) || !s->ends_with(close))
    return false;
  s->remove_prefix(open.size());
  s->remove_suffix(close.size());
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string CollapseGaps(std::string_view s, bool (*gap)(unsigned char)) {
  std::string out;
  out.reserve(s.size());
  bool space = false;
  for (char c : s) {
    if (gap(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::string_view TypeName(EntityType t) { return kTypeNames[static_cast<int>(t)]; }

Result<EntityType> ParseType(std::string_view name) {
  for (size_t i = 0; i < std::size(kTypeNames); ++i)
    if (kTypeNames[i] == name) return static_cast<EntityType>(i);
  return Status::InvalidArgument("entity type must be one of person, company, project, tool, concept, got \"" +
                                 std::string(name) + "\"");
}

std::string CleanName(std::string_view name) {
  std::string_view s = Trim(name);
  // Markdown around the whole name, possibly nested: **[[Bob]]**.
  for (bool again = true; again;) {
    again = StripPair(&s, "[[", "]]") || StripPair(&s, "**", "**") || StripPair(&s, "__", "__") ||
            StripPair(&s, "`", "`") || StripPair(&s, "*", "*") || StripPair(&s, "_", "_");
    s = Trim(s);
  }
  return CollapseGaps(s, [](unsigned char c) { return IsSpace(static_cast<char>(c)); });
}

std::string NameKey(std::string_view name) {
  std::string key = CleanName(name);
  for (char& c : key)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return key;
}

}  // namespace limbic::world
