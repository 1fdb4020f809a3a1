#include <utility>

#include "archive/text.h"
#include "world/extract_internal.h"

namespace limbic::world::internal {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Valid UTF-8 without control characters: what a page title and a graph
// line can hold.
bool IsUsableName(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameBytes) return false;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) return false;
      ++i;
      continue;
    }
    const size_t n = archive::detail::Utf8SeqLen(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string OneLine(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes + 8));
  bool space = false;
  // Stops a little past max_bytes: the cut below needs to know there was more.
  for (size_t i = 0; i < text.size() && out.size() <= max_bytes;) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c <= 0x20 || c == 0x7f) {
      space = true;
      ++i;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    const size_t n = archive::detail::Utf8SeqLen(text, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  if (out.size() > max_bytes) {
    constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // …
    out = std::string(archive::Utf8Prefix(out, max_bytes - kEllipsis.size())) +
          std::string(kEllipsis);
  }
  return out;
}

std::string Collector::Add(std::string_view name, EntityType type, bool structured) {
  std::string clean = CleanName(name);
  if (!IsUsableName(clean)) return {};
  auto [it, added] = by_key_.emplace(NameKey(clean), slots_.size());
  if (added) {
    Slot slot;
    slot.entity.name = clean;
    slot.entity.type = type;
    slot.structured = structured;
    slots_.push_back(std::move(slot));
    return clean;
  }
  Slot& slot = slots_[it->second];
  if (structured != slot.structured ? structured : type < slot.entity.type) {
    slot.entity.type = type;
    slot.structured = slot.structured || structured;
  }
  return clean;
}

void Collector::AddFact(std::string_view name, std::string fact) {
  auto it = by_key_.find(NameKey(name));
  if (it == by_key_.end() || fact.empty()) return;
  Slot& slot = slots_[it->second];
  if (slot.facts.insert(fact).second) slot.entity.facts.push_back(std::move(fact));
}

void Collector::AddTriplet(std::string_view subject, std::string_view predicate,
                           std::string_view object, const std::string& date) {
  if (subject.empty() || predicate.empty() || object.empty() || date.empty()) return;
  std::string key = NameKey(subject);
  key.append("\x1f")
      .append(predicate)
      .append("\x1f")
      .append(NameKey(object))
      .append("\x1f")
      .append(date);
  if (!triplet_keys_.insert(std::move(key)).second) return;
  triplets_.push_back({std::string(subject), std::string(predicate), std::string(object), date});
}

void Collector::AddEvent(const std::string& date, std::string_view text,
                         const std::vector<std::string>& names) {
  WorldEvent event{date, OneLine(text), {}};
  if (event.text.empty()) return;
  std::unordered_set<std::string> seen;
  for (const std::string& name : names)
    if (!name.empty() && seen.insert(NameKey(name)).second) event.entities.push_back(name);
  events_.push_back(std::move(event));
}

const std::string& Collector::Resolve(const std::string& name) const {
  auto it = by_key_.find(NameKey(name));
  return it == by_key_.end() ? name : slots_[it->second].entity.name;
}

Extraction Collector::Finish(std::string extractor) {
  Extraction out;
  out.extractor = std::move(extractor);
  for (Triplet& t : triplets_) {
    t.subject = Resolve(t.subject);
    t.object = Resolve(t.object);
  }
  for (WorldEvent& e : events_)
    for (std::string& name : e.entities) name = Resolve(name);
  out.entities.reserve(slots_.size());
  for (Slot& slot : slots_) out.entities.push_back(std::move(slot.entity));
  out.triplets = std::move(triplets_);
  out.events = std::move(events_);
  slots_.clear();
  by_key_.clear();
  triplet_keys_.clear();
  return out;
}

}  // namespace limbic::world::internal
