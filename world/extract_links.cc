#include "world/extract_links.h"

#include <algorithm>
#include <optional>

#include "world/extract_tokens.h"

namespace limbic::world::internal {
namespace {

using std::string_view;

// Gaps longer than this many bytes link nothing.
constexpr size_t kMaxGap = 48;

// Verb phrases between a subject and an object, and their predicate.
struct Verb {
  string_view phrase, predicate;
};
// clang-format off
constexpr Verb kVerbs[] = {
    {"works at", "works_at"}, {"work at", "works_at"}, {"worked at", "works_at"},
    {"works for", "works_for"}, {"joined", "joined"}, {"founded", "founded"},
    {"co-founded", "founded"}, {"leads", "leads"}, {"led", "leads"}, {"maintains", "maintains"},
    {"uses", "uses"}, {"used", "uses"}, {"is using", "uses"}, {"created", "created"},
    {"owns", "owns"}, {"met", "met"}, {"met with", "met"}, {"reviewed", "reviewed"},
    {"fixed", "fixed"}, {"released", "released"}, {"deployed", "deployed"},
    {"migrated", "migrated"}, {"acquired", "acquired"}, {"hired", "hired"},
    {"mentioned", "mentioned"}, {"depends on", "depends_on"}, {"is part of", "is_part_of"},
};
// clang-format on
// Dropped before a verb ("now leads") and after it ("leads the").
constexpr string_view kAdverbs[] = {"also",    "now",     "still",    "just",
                                    "already", "finally", "recently", "officially"};
constexpr string_view kDeterminers[] = {"the", "a",   "an",  "our", "their",
                                        "its", "his", "her", "my",  "your"};

enum class LinkKind : uint8_t {
  kNone,
  kVerb,        // A <verb> B
  kFrom,        // A from B
  kTo,          // A to B (after "from A": parallel)
  kAnd,         // A and B, A, B, A or B
  kAppositive,  // A, the new PM at B
  kMovedFrom,   // A moved from B (to C)
};

struct Link {
  LinkKind kind = LinkKind::kNone;
  string_view predicate = {};  // kVerb
  bool after_comma = false;    // kVerb after ", ": its subject is an appositive's head
};

// The gap's text in lower case, white space collapsed, trimmed.
std::string NormalizeGap(string_view gap) {
  std::string out;
  for (char c : gap) {
    if (IsBlank(c)) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += (IsUpper(c) ? static_cast<char>(c - 'A' + 'a') : c);
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool DropWord(string_view* s, string_view word, bool front) {
  if (s->size() <= word.size()) return false;
  if (front ? !(s->starts_with(word) && (*s)[word.size()] == ' ')
            : !(s->ends_with(word) && (*s)[s->size() - word.size() - 1] == ' '))
    return false;
  front ? s->remove_prefix(word.size() + 1) : s->remove_suffix(word.size() + 1);
  return true;
}

size_t Words(string_view s) { return s.empty() ? 0 : std::count(s.begin(), s.end(), ' ') + 1; }

Link LinkOf(string_view line, const Mention& a, const Mention& b) {
  if (a.sentence != b.sentence || b.begin < a.end || b.begin - a.end > kMaxGap) return {};
  const std::string gap = NormalizeGap(line.substr(a.end, b.begin - a.end));
  if (gap == "and" || gap == "," || gap == ", and" || gap == "&" || gap == "or" || gap == ", or")
    return {LinkKind::kAnd};
  if (gap == "from") return {LinkKind::kFrom};
  if (gap == "to") return {LinkKind::kTo};
  if (gap == "moved from" || gap == "switched from") return {LinkKind::kMovedFrom};
  string_view v = gap;
  bool comma = false;
  if (v.starts_with(", who ")) {
    v.remove_prefix(6);
  } else if (v.starts_with("who ")) {
    v.remove_prefix(4);
  } else if (v.starts_with(", ")) {
    v.remove_prefix(2);
    comma = true;
  }
  while (std::any_of(std::begin(kAdverbs), std::end(kAdverbs),
                     [&](string_view w) { return DropWord(&v, w, true); })) {
  }
  for (string_view d : kDeterminers)
    if (DropWord(&v, d, false)) break;
  for (const Verb& verb : kVerbs)
    if (v == verb.phrase) return {LinkKind::kVerb, verb.predicate, comma};
  // ", the new PM at": an aside naming where the one before works.
  if (comma && gap.ends_with(" at") && gap.find(',', 1) == std::string::npos && Words(gap) <= 7)
    return {LinkKind::kAppositive};
  return {};
}

std::vector<Link> Links(string_view line, const std::vector<Mention>& ms) {
  std::vector<Link> links;
  for (size_t i = 0; i + 1 < ms.size(); ++i) links.push_back(LinkOf(line, ms[i], ms[i + 1]));
  return links;
}

void Retype(Mention* m, EntityType type, Strength strength) {
  if (m->strength >= strength) return;
  m->type = type;
  m->strength = strength;
}

// What a predicate says of its ends' types: firmly (what is acquired is a
// company, even one that is also a tool's name), or only for a mention
// typed by nothing better (what one uses is likely a tool).
void RetypeByVerb(string_view predicate, Mention* a, Mention* b) {
  using enum EntityType;
  if (predicate == "works_at" || predicate == "works_for" || predicate == "joined" ||
      predicate == "founded") {
    Retype(a, kPerson, Strength::kShape);
    Retype(b, kCompany, Strength::kContext);
  } else if (predicate == "acquired") {
    Retype(a, kCompany, Strength::kRelation);
    Retype(b, kCompany, Strength::kRelation);
  } else if (predicate == "hired") {
    Retype(a, kCompany, Strength::kContext);
    Retype(b, kPerson, Strength::kContext);
  } else if (predicate == "met") {
    Retype(a, kPerson, Strength::kShape);
    Retype(b, kPerson, Strength::kShape);
  } else if (predicate == "leads" || predicate == "maintains" || predicate == "owns") {
    Retype(a, kPerson, Strength::kShape);
    Retype(b, kProject, Strength::kShape);
  } else if (predicate == "uses") {
    Retype(b, kTool, Strength::kShape);
  }
}

}  // namespace

void RefineTypes(string_view line, std::vector<Mention>* mentions) {
  std::vector<Mention>& ms = *mentions;
  const std::vector<Link> links = Links(line, ms);
  for (size_t i = 0; i < links.size(); ++i) {
    Mention &a = ms[i], &b = ms[i + 1];
    switch (links[i].kind) {
      case LinkKind::kVerb:
        RetypeByVerb(links[i].predicate, &a, &b);
        break;
      case LinkKind::kFrom:  // "Sarah Kim from Globex": where she works
        if (a.type == EntityType::kPerson) Retype(&b, EntityType::kCompany, Strength::kRelation);
        break;
      case LinkKind::kAppositive:
        if (a.type == EntityType::kPerson) Retype(&b, EntityType::kCompany, Strength::kRelation);
        break;
      case LinkKind::kTo:  // "from Memcached to Redis", "from Globex to Acme Corp": one kind
        if (a.after_from && a.strength != b.strength) {
          Mention &strong = a.strength > b.strength ? a : b, &weak = &strong == &a ? b : a;
          if (strong.strength >= Strength::kKnownTool)
            Retype(&weak, strong.type, Strength::kRelation);
        }
        break;
      default:
        break;
    }
  }
  // "Tomás and Inês", "Aisha, Ben and @kofi": the untyped take the type the
  // others agree on, if they are written as names ("and [[a/b.c]]" is not
  // someone).
  for (size_t i = 0; i < ms.size();) {
    size_t j = i;
    while (j < links.size() && links[j].kind == LinkKind::kAnd) ++j;
    std::optional<EntityType> agreed;
    bool conflict = false;
    for (size_t k = i; k <= j; ++k) {
      if (ms[k].strength == Strength::kNone) continue;
      if (agreed && *agreed != ms[k].type) conflict = true;
      agreed = ms[k].type;
    }
    if (agreed && !conflict)
      for (size_t k = i; k <= j; ++k)
        if (!ms[k].name.empty() && (IsUpper(ms[k].name[0]) || IsHigh(ms[k].name[0])))
          Retype(&ms[k], *agreed, Strength::kShape);
    i = j + 1;
  }
}

std::vector<Stated> StatedTriplets(string_view line, const std::vector<Mention>& ms) {
  const std::vector<Link> links = Links(line, ms);
  auto is = [&](size_t i, EntityType t) { return ms[i].type == t; };
  std::vector<Stated> out;
  std::vector<std::optional<size_t>> head(ms.size());  // the person an aside is about
  for (size_t i = 0; i < links.size(); ++i) {
    const Link& l = links[i];
    switch (l.kind) {
      case LinkKind::kVerb: {
        const std::optional<size_t> subject = l.after_comma ? head[i] : i;
        if (!subject) break;
        out.push_back({*subject, i + 1, std::string(l.predicate)});
        break;
      }
      case LinkKind::kFrom:
        if (is(i, EntityType::kPerson) && is(i + 1, EntityType::kCompany))
          out.push_back({i, i + 1, "works_at"});
        break;
      case LinkKind::kAppositive:
        if (is(i, EntityType::kPerson) && is(i + 1, EntityType::kCompany)) {
          out.push_back({i, i + 1, "works_at"});
          head[i + 1] = i;
        }
        break;
      case LinkKind::kMovedFrom:
        if (i + 1 < links.size() && links[i + 1].kind == LinkKind::kTo &&
            is(i, EntityType::kPerson) && is(i + 2, EntityType::kCompany))
          out.push_back({i, i + 2, "works_at"});
        break;
      default:
        break;
    }
  }
  // Coordinated subjects and objects of the same type share the triplet:
  // "Lumen Labs uses Rust and ClickHouse", "Ravi and Lucía reviewed it".
  const size_t stated = out.size();
  for (size_t t = 0; t < stated; ++t) {
    const Stated s = out[t];
    for (size_t o = s.object;
         o < links.size() && links[o].kind == LinkKind::kAnd && ms[o + 1].type == ms[s.object].type;
         ++o)
      out.push_back({s.subject, o + 1, s.predicate});
    for (size_t b = s.subject;
         b > 0 && links[b - 1].kind == LinkKind::kAnd && ms[b - 1].type == ms[s.subject].type; --b)
      out.push_back({b - 1, s.object, s.predicate});
  }
  return out;
}

}  // namespace limbic::world::internal
