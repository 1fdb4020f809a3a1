// ContextBundle: arousal, the focus, entity pages, MEMORY.md and recalled
// memories in one token budget (context.h).
#include "runtime/context.h"

#include <algorithm>

#include "state/commands.h"
#include "world/context.h"

namespace limbic::runtime {

using nlohmann::json;

namespace {

constexpr size_t kMaxFocusBytes = 16 << 10;
constexpr int kMaxFocusDepth = 4;

// Shares of what is left after the focus: pages, then MEMORY.md.
constexpr size_t kEntityPercent = 30, kMemoryMdPercent = 20;

size_t Tokens(const json& item) { return state::EstimateTokens(item.dump().size()); }

// One page or section of the world model in the bundle.
struct WorldSlot {
  world::ContextText text;
  const char* title_key = "name";  // | "section"
  json item;                       // null while left out
  size_t tokens = 0;
  bool cut = false;
};

// `t` as an item in at most `tokens`, its text cut to fit (world/context.h);
// null when less than two of its lines would be left.
json Render(const world::ContextText& t, const char* title_key, size_t tokens, bool* cut) {
  json item = {{title_key, t.title}, {"source", t.source}, {"text", ""}, {"cut", true}};
  const size_t room = tokens * 4, overhead = item.dump().size();
  if (room <= overhead) return nullptr;
  // Escapes make the JSON longer than the text: shrink until it fits.
  for (size_t max_bytes = room - overhead; max_bytes > 0;) {
    std::string text = t.Text(max_bytes, cut);
    if (text.empty() || (*cut && text.find('\n') == std::string::npos)) return nullptr;
    item["text"] = std::move(text);
    if (!*cut) item.erase("cut");
    const size_t bytes = item.dump().size();
    if (bytes <= room) return item;
    if (!*cut) item["cut"] = true;
    max_bytes = bytes - room < max_bytes ? max_bytes - (bytes - room) : 0;
  }
  return nullptr;
}

// Gives each slot that is left out or cut up to `cap` tokens in all (and
// what the budget has left), keeping what it has if that is not more.
void Fill(std::vector<WorldSlot>* slots, size_t cap, size_t budget, size_t* used) {
  size_t spent = 0;
  for (const WorldSlot& s : *slots) spent += s.tokens;
  for (WorldSlot& s : *slots) {
    if (!s.item.is_null() && !s.cut) continue;
    const size_t share = cap > spent ? cap - spent : 0;
    const size_t left = budget > *used ? budget - *used : 0;
    const size_t room = std::min(share, left) + s.tokens;
    bool cut = false;
    json item = Render(s.text, s.title_key, room, &cut);
    if (item.is_null()) continue;
    const size_t t = Tokens(item);
    if (t <= s.tokens) continue;
    *used += t - s.tokens;
    spent += t - s.tokens;
    s.item = std::move(item);
    s.tokens = t;
    s.cut = cut;
  }
}

std::vector<WorldSlot> Slots(const json& world, const char* key, const char* title_key) {
  std::vector<WorldSlot> slots;
  if (!world.is_object() || !world.contains(key)) return slots;
  for (const json& t : world[key]) {
    WorldSlot& s = slots.emplace_back();
    s.text = t.get<world::ContextText>();
    s.title_key = title_key;
  }
  return slots;
}

json Items(const std::vector<WorldSlot>& slots, bool* truncated) {
  json out = json::array();
  for (const WorldSlot& s : slots) {
    if (s.item.is_null() || s.cut) *truncated = true;
    if (!s.item.is_null()) out.push_back(s.item);
  }
  return out;
}

void AddStrings(const json& v, int depth, std::string* out) {
  if (out->size() >= kMaxFocusBytes || depth > kMaxFocusDepth) return;
  if (v.is_string()) {
    out->append(v.get_ref<const std::string&>()).push_back('\n');
  } else if (v.is_object() || v.is_array()) {
    for (const json& x : v) AddStrings(x, depth + 1, out);
  }
}

}  // namespace

std::string FocusText(const json& attention) {
  // Pointers, not copies: a thread's state may be nested arbitrarily deep.
  auto field = [](const json& j, const char* key) -> const json* {
    if (!j.is_object()) return nullptr;
    auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
  };
  std::string out;
  const json* thread = field(attention, "thread");
  if (!thread || !thread->is_object()) return out;
  if (const json* goal = field(*thread, "goal")) AddStrings(*goal, 0, &out);
  if (const json* state = field(*thread, "state"))
    for (const char* key : {"context", "next_step"})
      if (const json* v = field(*state, key)) AddStrings(*v, 0, &out);
  if (const json* percepts = field(attention, "thread_percepts"); percepts && percepts->is_array())
    for (const json& p : *percepts)
      if (const json* data = field(p, "data")) AddStrings(*data, 0, &out);
  // Cut on a UTF-8 boundary: a lead byte starts the dropped part.
  if (out.size() > kMaxFocusBytes) {
    size_t end = kMaxFocusBytes;
    while (end > 0 && (static_cast<unsigned char>(out[end]) & 0xC0) == 0x80) --end;
    out.resize(end);
  }
  return out;
}

json ContextBundle(const ContextInput& in) {
  const json& attention = in.attention;
  const size_t budget = in.budget;
  size_t used = 0;
  bool truncated = false;
  auto fits = [&](const json& item) {
    const size_t t = Tokens(item);
    if (used + t > budget) {
      truncated = true;
      return false;
    }
    used += t;
    return true;
  };
  // 1. What is happening now.
  json out = {{"now", attention["now"]}, {"budget_tokens", budget}, {"query", in.query}};
  out["arousal"] = attention["arousal"];
  fits(out["arousal"]);
  out["thread"] = fits(attention["thread"]) ? attention["thread"] : json(nullptr);
  out["thread_percepts"] = json::array();
  for (const json& p : attention["thread_percepts"])
    if (fits(p)) out["thread_percepts"].push_back(p);
  // 2. The world model's texts, each within its share of the rest.
  const size_t rest = budget - std::min(budget, used);
  std::vector<WorldSlot> pages = Slots(in.world, "entities", "name");
  std::vector<WorldSlot> sections = Slots(in.world, "memory_md", "section");
  const size_t page_cap = rest * kEntityPercent / 100, md_cap = rest * kMemoryMdPercent / 100;
  Fill(&pages, page_cap, budget, &used);
  Fill(&sections, md_cap, budget, &used);
  // Then the memories, in all that is left.
  out["memories"] = json::array();
  for (const json& m : in.memories) {
    const std::string id = m.value("id", "");
    json slim = {{"id", id},
                 {"kind", m.value("kind", "")},
                 {"text", m.value("text", "")},
                 {"score", m.value("score", 0.0)},
                 {"source", m.value("source", "memory:" + id)}};
    for (const char* key : {"subject", "via"})
      if (m.contains(key)) slim[key] = m[key];
    if (fits(slim)) out["memories"].push_back(std::move(slim));
  }
  // 3. What the memories left, to the texts cut or left out.
  Fill(&pages, budget, budget, &used);
  Fill(&sections, budget, budget, &used);
  out["entities"] = Items(pages, &truncated);
  out["memory_md"] = Items(sections, &truncated);
  out["used_tokens"] = used;
  out["truncated"] = truncated;
  return out;
}

}  // namespace limbic::runtime
