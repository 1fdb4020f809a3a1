// The world model's part of a prompt's context (context.h): MEMORY.md's
// sections, entity pages, and which entities a text names.
#include "world/context.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <unordered_map>

#include "archive/text.h"
#include "world/files.h"
#include "world/model.h"
#include "world/page.h"
#include "world/world.h"

namespace limbic::world {

using nlohmann::json;

namespace {

// Pages a context takes at most: beyond a handful, a prompt cannot use them.
constexpr size_t kMaxContextPages = 16;

bool IsWordByte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u >= 0x80;
}

bool IsGap(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Lines of `text` as valid UTF-8, without ends; blank ones dropped.
std::vector<std::string> NonBlankLines(std::string_view text) {
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    const size_t nl = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (std::any_of(line.begin(), line.end(), [](char c) { return !IsGap(c); }))
      lines.push_back(ToValidUtf8(line));
    start = nl + 1;
  }
  return lines;
}

std::set<std::string> TermsOf(std::string_view text) {
  std::set<std::string> terms;
  archive::ForEachTerm(text, [&](std::string_view t) { terms.emplace(t); });
  return terms;
}

// The query terms `line` holds, added to *held; whether it holds any.
bool Holds(std::string_view line, const std::set<std::string>& query, std::set<std::string>* held) {
  bool any = false;
  archive::ForEachTerm(line, [&](std::string_view t) {
    if (auto it = query.find(std::string(t)); it != query.end()) {
      held->insert(*it);
      any = true;
    }
  });
  return any;
}

// `text` ASCII-lower-cased with each run of white space made one space;
// *at gets, for each byte of `text`, where it went in the result.
std::string Fold(std::string_view text, std::vector<size_t>* at) {
  std::string out;
  out.reserve(text.size());
  at->reserve(text.size());
  for (char c : text) {
    if (IsGap(c)) {
      if (out.empty() || out.back() != ' ') out.push_back(' ');
    } else {
      out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
    }
    at->push_back(out.size() - 1);
  }
  return out;
}

// Whether `s` holds `word` starting at `at` and ending at a word boundary.
bool EndsWordAt(std::string_view s, size_t at, std::string_view word) {
  if (s.compare(at, word.size(), word) != 0) return false;
  const size_t end = at + word.size();
  return end == s.size() || !IsWordByte(word.back()) || !IsWordByte(s[end]);
}

// The first position of `word` in `s` at word boundaries, or npos.
size_t FindWord(std::string_view s, std::string_view word) {
  for (size_t at = s.find(word); at != std::string_view::npos; at = s.find(word, at + 1))
    if ((at == 0 || !IsWordByte(word.front()) || !IsWordByte(s[at - 1])) && EndsWordAt(s, at, word))
      return at;
  return std::string_view::npos;
}

}  // namespace

size_t ContextText::Bytes() const {
  size_t n = 0;
  for (const std::string& l : lines) n += l.size() + 1;
  return n;
}

std::string ContextText::Text(size_t max_bytes, bool* cut) const {
  auto keep_of = [&](size_t i) { return i < keep.size() ? keep[i] : 0; };
  std::vector<size_t> order(lines.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return keep_of(a) < keep_of(b); });
  std::vector<size_t> taken;
  size_t used = 0;
  for (size_t i : order) {
    if (used + lines[i].size() + 1 > max_bytes) break;
    used += lines[i].size() + 1;
    taken.push_back(i);
  }
  // A heading whose lines did not fit (a timeline's date) says nothing.
  if (!taken.empty() && taken.size() < order.size() && lines[taken.back()].starts_with("#") &&
      keep_of(taken.back()) == keep_of(order[taken.size()]))
    taken.pop_back();
  if (cut) *cut = taken.size() < lines.size();
  std::sort(taken.begin(), taken.end());
  std::string out;
  for (size_t i : taken) out.append(out.empty() ? "" : "\n").append(lines[i]);
  return out;
}

void to_json(json& j, const ContextText& t) {
  j = {{"source", t.source},
       {"title", t.title},
       {"lines", t.lines},
       {"keep", t.keep},
       {"score", t.score}};
}

void from_json(const json& j, ContextText& t) {
  t.source = j.value("source", "");
  t.title = j.value("title", "");
  t.lines = j.value("lines", std::vector<std::string>{});
  t.keep = j.value("keep", std::vector<uint32_t>{});
  t.score = j.value("score", 0.0);
}

std::vector<ContextText> MemorySections(std::string_view markdown, std::string_view query) {
  struct Section {
    std::string name;
    std::vector<std::string> lines;  // the heading first
  };
  std::vector<Section> sections;
  bool in_section = false;
  for (std::string& line : NonBlankLines(markdown)) {
    if (line.starts_with("## ")) {
      sections.push_back({OneLine(std::string_view(line).substr(3)), {}});
      in_section = true;
    } else if (line.starts_with("# ")) {
      in_section = false;  // a new top-level part: not a section's
      continue;
    }
    if (in_section) sections.back().lines.push_back(std::move(line));
  }
  const std::set<std::string> terms = TermsOf(query);
  std::vector<ContextText> out;
  for (Section& s : sections) {
    ContextText t;
    t.source = std::string(kMemoryFile) + "#" + s.name;
    t.title = s.name;
    // A heading that holds a query term takes its whole section.
    std::set<std::string> held;
    const bool whole = Holds(s.lines[0], terms, &held) || terms.empty();
    t.lines.push_back(std::move(s.lines[0]));
    for (size_t i = 1; i < s.lines.size(); ++i)
      if (Holds(s.lines[i], terms, &held) || whole) t.lines.push_back(std::move(s.lines[i]));
    if (!terms.empty() && held.empty()) continue;
    // The heading first; then the newest lines (items are appended in order).
    for (size_t i = 0; i < t.lines.size(); ++i)
      t.keep.push_back(i == 0 ? 0 : static_cast<uint32_t>(t.lines.size() - i));
    t.score = static_cast<double>(held.size());
    out.push_back(std::move(t));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const ContextText& a, const ContextText& b) { return a.score > b.score; });
  return out;
}

ContextText PageText(std::string source, std::string name, std::string_view markdown) {
  ContextText t;
  t.source = std::move(source);
  t.title = std::move(name);
  t.lines = NonBlankLines(markdown);
  // Per line: 0 the head, 1 a section (the Timeline's heading too), or the
  // index of its Timeline date; dates rank newest first (later on a tie).
  constexpr uint32_t kHead = 0, kSection = 1, kFirstDate = 2;
  std::vector<int> date_of(t.lines.size(), -1);
  std::vector<std::pair<std::string, int>> dates;  // {date, index}
  bool in_timeline = false, seen_section = false;
  for (size_t i = 0; i < t.lines.size(); ++i) {
    std::string_view l = t.lines[i];
    if (l.starts_with("## ")) {
      seen_section = true;
      in_timeline = NameKey(l.substr(3)) == "timeline";
    } else if (in_timeline && l.starts_with("### ")) {
      std::string_view d = l.substr(4);
      if (d.starts_with("[[")) d.remove_prefix(2);
      dates.emplace_back(std::string(d.substr(0, 10)), static_cast<int>(dates.size()));
    }
    if (in_timeline && !dates.empty() && !l.starts_with("## ")) date_of[i] = dates.back().second;
    t.keep.push_back(seen_section ? kSection : kHead);
  }
  std::vector<std::pair<std::string, int>> newest = dates;
  std::sort(newest.begin(), newest.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second > b.second;
  });
  std::vector<uint32_t> rank(dates.size());
  for (size_t r = 0; r < newest.size(); ++r)
    rank[static_cast<size_t>(newest[r].second)] = kFirstDate + static_cast<uint32_t>(r);
  for (size_t i = 0; i < t.lines.size(); ++i)
    if (date_of[i] >= 0) t.keep[i] = rank[static_cast<size_t>(date_of[i])];
  return t;
}

std::vector<size_t> NamedIn(std::string_view text, const std::vector<std::string>& names) {
  std::vector<size_t> folded_at;
  const std::string folded = Fold(text, &folded_at);
  // Where each word starts, by the word.
  std::unordered_map<std::string_view, std::vector<size_t>> starts;
  for (size_t i = 0; i < folded.size();) {
    if (!IsWordByte(folded[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < folded.size() && IsWordByte(folded[end])) ++end;
    starts[std::string_view(folded).substr(i, end - i)].push_back(i);
    i = end;
  }
  struct Mention {
    size_t at, length, index;
  };
  std::vector<Mention> found;
  for (size_t n = 0; n < names.size(); ++n) {
    const std::string key = NameKey(names[n]);
    if (key.size() < 2) continue;
    size_t first_word = 0;
    while (first_word < key.size() && IsWordByte(key[first_word])) ++first_word;
    size_t at = std::string::npos;
    if (first_word == 0) {
      at = FindWord(folded, key);
    } else if (auto it = starts.find(std::string_view(key).substr(0, first_word));
               it != starts.end()) {
      for (size_t s : it->second)
        if (EndsWordAt(folded, s, key)) {
          at = s;
          break;
        }
    }
    if (at == std::string::npos) continue;
    if (key.size() < 4 && key.find(' ') == std::string::npos) {
      const size_t exact = FindWord(text, CleanName(names[n]));
      if (exact == std::string_view::npos) continue;
      at = folded_at[exact];
    }
    found.push_back({at, key.size(), n});
  }
  std::sort(found.begin(), found.end(), [](const Mention& a, const Mention& b) {
    if (a.at != b.at) return a.at < b.at;
    return a.length != b.length ? a.length > b.length : a.index < b.index;
  });
  std::vector<size_t> out;
  for (const Mention& m : found) out.push_back(m.index);
  return out;
}

Result<json> WorldModel::Context(std::string_view query, std::string_view focus) const {
  json out = {{"entities", json::array()}, {"memory_md", json::array()}};
  auto pages = entities_->List();
  if (!pages.ok()) return pages.status();
  std::vector<std::string> names;
  for (const PageInfo& p : *pages) names.push_back(p.name);
  std::string text = std::string(query) + "\n" + std::string(focus);
  for (size_t i : NamedIn(text, names)) {
    if (out["entities"].size() == kMaxContextPages) break;
    const PageInfo& p = (*pages)[i];
    auto md = entities_->Read(p.name);
    if (!md.ok()) {
      // A page too big to read (or gone meanwhile) leaves the others.
      if (log_) log_->warn("world: context: {}", md.status().ToString());
      continue;
    }
    out["entities"].push_back(PageText("entity:" + p.file, p.name, *md));
  }
  auto md = ReadWholeFile(PathOf(kMemoryFile));
  if (!md.ok()) return md.status();
  for (ContextText& t : MemorySections(*md, query)) out["memory_md"].push_back(std::move(t));
  return out;
}

}  // namespace limbic::world
