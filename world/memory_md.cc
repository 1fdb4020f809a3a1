// MEMORY.md: the long-term summary, written by Consolidate.
//
//   # MEMORY
//   <preamble>
//   ## People | Companies | Projects | Tools | Concepts | Events
//   - YYYY-MM-DD: text (surprise 0.71)
//
// Items are appended at the end of their section and never removed; any
// other line (a person's notes) is kept where it is.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "world/files.h"
#include "world/world.h"
#include "base/time.h"

namespace limbic::world {
namespace {

constexpr const char* kPreamble =
    "# MEMORY\n\n"
    "What surprised this agent, kept by limbic (`limbic memory consolidate`): events whose\n"
    "surprise was above the threshold, by section. Items are only ever added; edit freely.\n";

const char* SectionOf(std::optional<EntityType> type) {
  if (!type) return "Events";
  switch (*type) {
    case EntityType::kPerson: return "People";
    case EntityType::kCompany: return "Companies";
    case EntityType::kProject: return "Projects";
    case EntityType::kTool: return "Tools";
    case EntityType::kConcept: return "Concepts";
  }
  return "Events";
}

constexpr const char* kSectionOrder[] = {"People", "Companies", "Projects", "Tools", "Concepts", "Events"};

std::string FormatScore(double s) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f", s);
  return buf;
}

}  // namespace

std::string MemoryItemText(std::string_view line) {
  if (!line.starts_with("- ")) return {};
  line.remove_prefix(2);
  if (line.size() > 12 && IsValidDate(line.substr(0, 10)) && line.substr(10, 2) == ": ") line.remove_prefix(12);
  if (size_t at = line.rfind(" (surprise "); at != std::string_view::npos && line.ends_with(")"))
    line = line.substr(0, at);
  return std::string(line);
}

Result<json> WorldModel::Consolidate(const std::string& today) {
  if (!IsValidDate(today)) return Status::InvalidArgument("today: \"" + today + "\" is not a date");
  auto scores = LoadScores();
  if (!scores.ok()) return scores.status();
  auto pages = entities_->List();
  if (!pages.ok()) return pages.status();
  std::map<std::string, EntityType> types;
  for (const PageInfo& p : *pages) types.emplace(NameKey(p.name), p.type);

  std::string path = PathOf(kMemoryFile);
  auto lock = env_->LockFile(path + ".lock", LockWait::kYes);
  if (!lock.ok()) return lock.status();
  auto read = ReadWholeFile(path);
  if (!read.ok()) return read.status();  // never replace a file we could not read
  std::string text = std::move(*read);
  if (text.empty()) text = kPreamble;
  // Lines without their ends; a file written with CRLF keeps CRLF.
  bool crlf = text.find("\r\n") != std::string::npos;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(std::move(l));
  }
  std::unordered_set<std::string> present;
  for (const std::string& l : lines)
    if (std::string item = MemoryItemText(l); !item.empty()) present.insert(NameKey(item));

  std::map<std::string, std::vector<std::string>> additions;
  size_t added = 0;
  for (const SurpriseScore& s : *scores) {
    if (s.score <= options_.threshold || !present.insert(NameKey(s.text)).second) continue;
    std::optional<EntityType> type;
    for (const std::string& name : s.entities)
      if (auto it = types.find(NameKey(name)); it != types.end()) {
        type = it->second;
        break;
      }
    if (!type && !s.entities.empty()) type = EntityType::kConcept;
    additions[SectionOf(type)].push_back("- " + s.date + ": " + s.text + " (surprise " + FormatScore(s.score) + ")");
    ++added;
  }

  json sections = json::object();
  for (const char* name : kSectionOrder) {
    auto it = additions.find(name);
    if (it == additions.end()) continue;
    sections[name] = it->second.size();
    std::string heading = std::string("## ") + name;
    size_t at = 0;
    while (at < lines.size() && lines[at] != heading) ++at;
    if (at == lines.size()) {
      if (!lines.empty() && !lines.back().empty()) lines.push_back("");
      lines.push_back(heading);
      lines.push_back("");
      lines.insert(lines.end(), it->second.begin(), it->second.end());
      continue;
    }
    // The end of the section: the next heading of its level or above, less
    // the blank lines before it.
    size_t end = at + 1;
    while (end < lines.size() && !lines[end].starts_with("## ") && !lines[end].starts_with("# ")) ++end;
    while (end > at + 1 && lines[end - 1].empty()) --end;
    if (end == at + 1) {
      lines.insert(lines.begin() + static_cast<long>(end), "");
      ++end;
    }
    lines.insert(lines.begin() + static_cast<long>(end), it->second.begin(), it->second.end());
  }
  if (added > 0) {
    std::string out;
    for (const std::string& l : lines) out.append(l).append(crlf ? "\r\n" : "\n");
    LIMBIC_RETURN_IF_ERROR(env_->WriteFileAtomic(path, out, FileDurability::kDerived));
  }

  auto decayed = entities_->Decay(today, options_.decay_days, options_.protected_types);
  if (!decayed.ok()) return decayed.status();
  return json{{"added", added}, {"sections", std::move(sections)}, {"decayed", *decayed}, {"memory_md", path}};
}

}  // namespace limbic::world
