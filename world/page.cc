#include "world/page.h"

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <unordered_set>

#include "archive/text.h"
#include "base/time.h"

namespace limbic::world {
namespace {

enum { kFacts = 0, kTimeline = 1, kRelations = 2 };
constexpr std::string_view kSectionNames[] = {"Facts", "Timeline", "Relations"};
constexpr std::string_view kTypePrefix = "**Type:**";

bool IsBlankChar(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && IsBlankChar(s.front())) s.remove_prefix(1);
  return s;
}

std::string_view Trim(std::string_view s) {
  s = TrimLeft(s);
  while (!s.empty() && IsBlankChar(s.back())) s.remove_suffix(1);
  return s;
}

bool IsBlank(std::string_view line) { return Trim(line).empty(); }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return out;
}

// 1..6 for an ATX heading ("## Facts"), 0 for anything else.
int HeadingLevel(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && line[n] == '#') ++n;
  if (n == 0 || n > 6) return 0;
  return n == line.size() || line[n] == ' ' || line[n] == '\t' ? static_cast<int>(n) : 0;
}

// '`' or '~' when the line opens or closes a fenced code block, else 0.
char FenceChar(std::string_view line) {
  line = TrimLeft(line);
  if (line.starts_with("```")) return '`';
  if (line.starts_with("~~~")) return '~';
  return 0;
}

std::optional<std::string_view> ItemText(std::string_view line) {
  line = TrimLeft(line);
  if (line.size() < 2 || line[1] != ' ' || (line[0] != '-' && line[0] != '*' && line[0] != '+'))
    return std::nullopt;
  return Trim(line.substr(2));
}

// The date of a "### [[YYYY-MM-DD]]" heading's text, "" when it is no date.
std::string DateOf(std::string_view text) {
  if (text.starts_with("[[") && text.ends_with("]]") && text.size() >= 4)
    text = Trim(text.substr(2, text.size() - 4));
  return IsValidDate(text) ? std::string(text) : std::string();
}

std::string TypeLine(EntityType t) {
  return std::string(kTypePrefix) + " " + std::string(TypeName(t));
}

}  // namespace

std::string OneLine(std::string_view s) {
  return CollapseGaps(s, [](unsigned char c) { return c <= 0x20 || c == 0x7f; });
}

std::string DisplayName(std::string_view name) {
  std::string out = CleanName(name);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '-';
  return out;
}

std::string ToValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      out += s[i++];
      continue;
    }
    size_t n = archive::detail::Utf8SeqLen(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

Page Page::Parse(std::string_view text) {
  Page p;
  if (text.starts_with("\xEF\xBB\xBF")) {
    p.bom_ = "\xEF\xBB\xBF";
    text.remove_prefix(3);
  }
  size_t nl = text.find('\n');
  p.crlf_ = nl != std::string_view::npos && nl > 0 && text[nl - 1] == '\r';
  while (!text.empty()) {
    nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (line.ends_with('\r')) line.remove_suffix(1);
    p.lines_.emplace_back(line);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  }
  return p;
}

Page Page::New(std::string_view name, EntityType type) {
  Page p;
  p.lines_ = {"# " + std::string(name),
              TypeLine(type),
              "",
              "## Facts",
              "",
              "## Timeline",
              "",
              "## Relations"};
  return p;
}

std::string Page::Render() const {
  const char* eol = crlf_ ? "\r\n" : "\n";
  size_t size = bom_.size();
  for (const std::string& l : lines_) size += l.size() + 2;
  std::string out;
  out.reserve(size);
  out += bom_;
  for (const std::string& l : lines_) (out += l) += eol;
  return out;
}

Page::Layout Page::Scan() const {
  Layout L;
  int current = -1;  // the canonical section being read, if any
  int date = -1;     // the date block being read, if any
  bool in_section = false;
  const int n = static_cast<int>(lines_.size());
  // Fences that close. One left open would hide the rest of the page, and
  // every Apply would add its lines and sections again: it is text.
  std::vector<bool> fence(n, false);
  for (int i = 0, open = -1; i < n; ++i) {
    if (char f = FenceChar(lines_[i]); f && open < 0) {
      open = i;
    } else if (f && FenceChar(lines_[open]) == f) {
      fence[open] = fence[i] = true;
      open = -1;
    }
    if (i == n - 1 && open >= 0) {  // pair again after the opener that is text
      i = open;
      open = -1;
    }
  }
  bool in_fence = false;
  auto close = [&](int at, bool section) {
    if (date >= 0) L.dates[date].second.end = at;
    date = -1;
    if (section && current >= 0) L.sections[current].end = at;
    if (section) current = -1;
  };
  for (int i = 0; i < n; ++i) {
    std::string_view line = lines_[i];
    if (fence[i]) in_fence = !in_fence;
    if (fence[i] || in_fence) continue;
    int level = HeadingLevel(line);
    std::string_view text = level ? Trim(line.substr(level)) : std::string_view();
    if (level == 1 || level == 2) {
      close(i, true);
      if (level == 1 && !in_section && L.title < 0) L.title = i;
      if (level == 2) {
        in_section = true;
        std::string name = Lower(text);
        for (int k = 0; k < 3; ++k)
          if (name == Lower(kSectionNames[k]) && !L.sections[k].found()) {
            L.sections[k].head = i;
            current = k;
          }
      }
    } else if (level == 3) {
      close(i, false);
      if (current == kTimeline) {
        if (std::string d = DateOf(text); !d.empty()) {
          L.dates.push_back({std::move(d), Span{i, n}});
          date = static_cast<int>(L.dates.size()) - 1;
        }
      }
    } else if (!in_section && L.type < 0 && TrimLeft(line).starts_with(kTypePrefix)) {
      L.type = i;
    } else if (current >= 0 && ItemText(line)) {
      L.items[current].push_back(i);
    }
  }
  close(n, true);
  return L;
}

int Page::ContentEnd(Span span) const {
  for (int i = span.end - 1; i > span.head; --i)
    if (!IsBlank(lines_[i])) return i + 1;
  return span.head + 1;
}

int Page::InsertPoint(Span span, const std::vector<int>& items) const {
  auto last = std::find_if(items.rbegin(), items.rend(),
                           [&](int i) { return i > span.head && i < span.end; });
  if (last == items.rend()) return ContentEnd(span);
  int at = *last + 1;  // past the item's indented continuation lines
  while (at < span.end && !IsBlank(lines_[at]) && (lines_[at][0] == ' ' || lines_[at][0] == '\t'))
    ++at;
  return at;
}

void Page::Insert(int at, std::vector<std::string> lines) {
  lines_.insert(lines_.begin() + at, std::make_move_iterator(lines.begin()),
                std::make_move_iterator(lines.end()));
}

std::string Page::Title() const {
  Layout L = Scan();
  return L.title < 0 ? std::string()
                     : std::string(Trim(std::string_view(lines_[L.title]).substr(1)));
}

EntityType Page::Type() const {
  Layout L = Scan();
  if (L.type < 0) return EntityType::kConcept;
  std::string_view value = Trim(TrimLeft(lines_[L.type]).substr(kTypePrefix.size()));
  auto t = ParseType(Lower(value));
  return t.ok() ? *t : EntityType::kConcept;
}

PageStats Page::Stats() const {
  Layout L = Scan();
  PageStats s;
  s.facts = L.items[kFacts].size();
  s.timeline = L.items[kTimeline].size();
  s.relations = L.items[kRelations].size();
  for (const auto& [date, span] : L.dates) s.newest_date = std::max(s.newest_date, date);
  return s;
}

void Page::AddToSection(int which, std::vector<std::string> items) {
  Layout L = Scan();
  if (L.sections[which].found())
    return Insert(InsertPoint(L.sections[which], L.items[which]), std::move(items));
  // A missing section goes before the first canonical section after it, or last.
  items.insert(items.begin(), "## " + std::string(kSectionNames[which]));
  for (int later = which + 1; later < 3; ++later) {
    if (!L.sections[later].found()) continue;
    int at = L.sections[later].head;
    items.push_back("");
    if (at > 0 && !IsBlank(lines_[at - 1])) items.insert(items.begin(), "");
    return Insert(at, std::move(items));
  }
  int end = static_cast<int>(lines_.size());
  while (end > 0 && IsBlank(lines_[end - 1])) --end;
  if (end > 0) items.insert(items.begin(), "");
  Insert(end, std::move(items));
}

size_t Page::Add(const PageUpdate& u, bool* changed) {
  *changed = false;
  Layout L = Scan();
  if (L.title < 0) {
    std::vector<std::string> head = {"# " + u.name};
    if (L.type < 0) head.push_back(TypeLine(u.type));
    if (!lines_.empty() && !IsBlank(lines_[0])) head.push_back("");
    Insert(0, std::move(head));
    *changed = true;
    L = Scan();
  }
  if (L.type < 0) {
    Insert(L.title + 1, {TypeLine(u.type)});
    *changed = true;
  } else if (u.type != EntityType::kConcept &&
             Lower(Trim(TrimLeft(lines_[L.type]).substr(kTypePrefix.size()))) == "concept") {
    lines_[L.type] = TypeLine(u.type);  // the one line that may change
    *changed = true;
  }

  // The items of `wanted` not among the items at `have` (by NameKey).
  auto fresh = [&](const std::vector<int>& have, int from, int to,
                   const std::vector<std::string>& wanted) {
    std::unordered_set<std::string> keys;
    for (int i : have)
      if (i > from && i < to) keys.insert(NameKey(*ItemText(lines_[i])));
    std::vector<std::string> out;
    for (const std::string& w : wanted)
      if (!w.empty() && keys.insert(NameKey(w)).second) out.push_back("- " + w);
    return out;
  };
  size_t added = 0;
  auto add_to = [&](int which, const std::vector<std::string>& wanted) {
    if (wanted.empty()) return;
    std::vector<std::string> items = fresh(Scan().items[which], -1, INT_MAX, wanted);
    added += items.size();
    if (!items.empty()) AddToSection(which, std::move(items));
  };
  add_to(kFacts, u.facts);

  std::map<std::string, std::vector<std::string>> by_date;  // date order
  for (const auto& [date, line] : u.timeline) by_date[date].push_back(line);
  for (const auto& [day, wanted] : by_date) {
    // A named copy, not the binding: clang before 16 cannot capture a
    // structured binding in a lambda (C++20 allows it).
    const std::string& date = day;
    L = Scan();
    auto block = std::find_if(L.dates.begin(), L.dates.end(),
                              [&](const auto& d) { return d.first == date; });
    if (block != L.dates.end()) {
      std::vector<std::string> items =
          fresh(L.items[kTimeline], block->second.head, block->second.end, wanted);
      added += items.size();
      Insert(InsertPoint(block->second, L.items[kTimeline]), std::move(items));
      continue;
    }
    std::vector<std::string> items = fresh({}, 0, 0, wanted);
    if (items.empty()) continue;
    added += items.size();
    items.insert(items.begin(), "### [[" + date + "]]");
    if (!L.sections[kTimeline].found()) {
      AddToSection(kTimeline, std::move(items));
      continue;
    }
    auto later =
        std::find_if(L.dates.begin(), L.dates.end(), [&](const auto& d) { return d.first > date; });
    Insert(later != L.dates.end() ? later->second.head : ContentEnd(L.sections[kTimeline]),
           std::move(items));
  }

  add_to(kRelations, u.relations);
  if (added > 0) *changed = true;
  return added;
}

}  // namespace limbic::world
