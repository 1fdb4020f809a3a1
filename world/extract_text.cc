// The heuristic extractor's text rules over tokenised lines
// (extract_tokens.h): capitalised names and their types, triplets, facts
// and line events (rules in extract.h).
#include <optional>

#include "world/extract_internal.h"
#include "world/extract_tokens.h"
#include "base/time.h"

namespace limbic::world::internal {
namespace {

using std::string_view;
constexpr size_t npos = string_view::npos;

constexpr string_view kConnectors[] = {"of", "de", "van", "von"};
constexpr string_view kPersonAfter[] = {"said",  "says",    "asked",     "wrote", "thinks",
                                        "wants", "replied", "mentioned", "agreed"};
constexpr string_view kPersonBefore[] = {"with",   "met", "told", "asked",
                                         "thanks", "by",  "from", "cc"};
constexpr string_view kWorkVerbs[] = {"works", "work", "worked", "working"};
constexpr string_view kVerbs[] = {
    "works at", "works for", "joined", "founded",   "leads",      "maintains", "uses",
    "created",  "owns",      "met",    "reviewed",  "fixed",      "released",  "deployed",
    "migrated", "acquired",  "hired",  "mentioned", "depends on", "is part of"};

bool IsCapitalised(string_view w) {
  if (w.empty() || !IsUpper(w[0])) return false;
  for (char c : w)
    if (!IsAlnum(c) && !IsHigh(c) && c != '-' && c != '.' && c != '\'' && c != '&' && c != '+' &&
        c != '#')
      return false;
  return true;
}

// "Alice", "Chen": a capital and lower case letters, as people's names are written.
bool IsNameWord(string_view w) {
  return IsCapitalised(w) && std::any_of(w.begin() + 1, w.end(), IsLower) &&
         std::none_of(w.begin(), w.end(), IsDigit);
}

std::string Join(const std::vector<string_view>& words) {
  std::string out;
  for (string_view w : words) {
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

// Two or three name words (with "van", "von", "de" between), none of them
// a known tool or a company word.
bool LooksLikePerson(const std::vector<string_view>& words) {
  size_t names = 0;
  for (string_view w : words) {
    if (w == "van" || w == "von" || w == "de") continue;
    const std::string lower = AsciiLower(w);
    if (!IsNameWord(w) || !KnownTool(lower).empty() || IsCompanyWord(lower)) return false;
    ++names;
  }
  return names >= 2 && names <= 3;
}

// The type of the name `words` between the words `prev2 prev` and `next`
// (lower case; empty when there is none). The name's own form decides
// first, then its context.
EntityType TypeOf(const std::vector<string_view>& words, string_view prev, string_view prev2,
                  string_view next) {
  if (words.size() >= 2 && IsCompanyWord(AsciiLower(words.back()))) return EntityType::kCompany;
  if (!KnownTool(AsciiLower(Join(words))).empty()) return EntityType::kTool;
  if (words.size() >= 2 && words[0] == "Project") return EntityType::kProject;
  if (prev == "at" || prev == "joined" || (prev == "for" && IsOneOf(prev2, kWorkVerbs)))
    return EntityType::kCompany;
  if (prev == "uses" || prev == "using" || prev == "via") return EntityType::kTool;
  if (prev == "project" || prev == "repo" || prev == "on") return EntityType::kProject;
  if (IsOneOf(next, kPersonAfter) || IsOneOf(prev, kPersonBefore)) return EntityType::kPerson;
  if (LooksLikePerson(words)) return EntityType::kPerson;
  return EntityType::kConcept;
}

struct Mention {
  size_t begin = 0, end = 0;
  int sentence = 0;
  std::string name;  // as the Collector keeps it
};

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

// "is a <words>" from "<name> is a <words>." at `rest` (the line after the
// name), or empty.
std::string FactAfter(string_view rest) {
  string_view article;
  if (rest.starts_with(" is a ")) article = "is a ";
  if (rest.starts_with(" is an ")) article = "is an ";
  if (article.empty()) return {};
  rest.remove_prefix(article.size() + 1);
  size_t end = 0;
  for (; end < rest.size(); ++end) {
    const char c = rest[end];
    if (c == ',' || c == ';' || c == ':' || c == '(' || c == '!' || c == '?') break;
    if (c == '.' && (end + 1 == rest.size() || rest[end + 1] == ' ')) break;
  }
  std::string words;
  size_t count = 0;
  for (size_t i = 0; i < end && count < 12;) {
    while (i < end && rest[i] == ' ') ++i;
    const size_t j = std::min(rest.find(' ', i), end);
    if (j > i) {
      if (!words.empty()) words += ' ';
      words.append(rest.substr(i, j - i));
      ++count;
    }
    i = j;
  }
  while (!words.empty() && kTrailPunct.find(words.back()) != npos) words.pop_back();
  return words.empty() ? std::string() : std::string(article) + OneLine(words, 200);
}

bool IsDateWord(string_view w) {
  return w.size() == 10 && IsDigit(w[0]) && w[4] == '-' && w[7] == '-' && IsValidDate(w);
}

size_t CountWords(string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] != ' ' && (i == 0 || s[i - 1] == ' ')) ++n;
  return n;
}

}  // namespace

void TextScanner::Learn(string_view text) {
  ForEachLine(text, [&](const Line& line) {
    for (const Token& tok : line.tokens)
      if (tok.kind == Kind::kWord && !tok.sentence_start && IsCapitalised(line.Text(tok)))
        mid_sentence_.emplace(line.Text(tok));
  });
}

namespace {

// What Scan keeps across the lines of a text.
struct ScanState {
  std::vector<std::string> found;  // entity names, once each, in order of first mention
  std::unordered_set<std::string> found_keys;
  std::vector<Mention> mentions;  // of the current line
  std::vector<string_view> words;  // scratch
};

// The date a daily log's heading names, or nullopt.
std::optional<std::string> HeadingDate(const Line& line) {
  for (const Token& tok : line.tokens)
    if (tok.kind == Kind::kWord && IsDateWord(line.Text(tok))) return std::string(line.Text(tok));
  return std::nullopt;
}

// The entities `line` names, added to `out` and to st->mentions (in line
// order: tokens are visited left to right) and st->found.
void FindMentions(const Line& line, Collector* out,
                  const std::unordered_set<std::string>& mid_sentence, ScanState* st) {
  const std::vector<Token>& toks = line.tokens;
  st->mentions.clear();
  // The lower-case word right after token k.
  auto word_after = [&](size_t k) -> std::string {
    if (k + 1 >= toks.size() || toks[k].break_after || toks[k + 1].kind != Kind::kWord) return {};
    return AsciiLower(line.Text(toks[k + 1]));
  };
  // The lower-case word before token *k, skipping articles (across
  // commas and colons, not sentence ends); *k becomes its index.
  auto word_before = [&](size_t* k) -> std::string {
    while (*k > 0 && toks[*k - 1].kind == Kind::kWord && !toks[*k - 1].hard_end) {
      std::string w = AsciiLower(line.Text(toks[--*k]));
      if (w != "the" && w != "a" && w != "an") return w;
    }
    return {};
  };
  auto type_of = [&](const std::vector<string_view>& name, size_t first, size_t last) {
    size_t k = first;
    const std::string prev = word_before(&k);
    const std::string prev2 = prev.empty() ? std::string() : word_before(&k);
    return TypeOf(name, prev, prev2, word_after(last));
  };
  auto add = [&](size_t first, size_t last, const std::string& name, EntityType type) {
    std::string kept = out->Add(name, type, false);
    if (kept.empty()) return;
    st->mentions.push_back({toks[first].begin, toks[last].end, toks[first].sentence, kept});
    if (st->found_keys.insert(NameKey(kept)).second) st->found.push_back(kept);
  };
  for (size_t k = 0; k < toks.size();) {
    const Token& tok = toks[k];
    if (tok.kind == Kind::kWikilink) {
      st->words.clear();
      const std::string clean = CleanName(tok.name);
      for (size_t i = 0; i < clean.size();) {
        const size_t j = std::min(clean.find(' ', i), clean.size());
        st->words.push_back(string_view(clean).substr(i, j - i));
        i = j + 1;
      }
      if (!st->words.empty()) add(k, k, clean, type_of(st->words, k, k));
      ++k;
      continue;
    }
    if (tok.kind != Kind::kWord) {
      if (tok.kind != Kind::kOther) add(k, k, tok.name, tok.type);
      ++k;
      continue;
    }
    if (!IsCapitalised(line.Text(tok))) {
      ++k;
      continue;
    }
    // A run of capitalised words, "of" / "de" / "van" / "von" allowed inside.
    size_t s = k, e = k + 1;
    while (e < toks.size() && !toks[e - 1].break_after && toks[e].kind == Kind::kWord &&
           !toks[e].break_before) {
      if (IsCapitalised(line.Text(toks[e]))) {
        ++e;
      } else if (IsOneOf(line.Text(toks[e]), kConnectors) && e + 1 < toks.size() &&
                 !toks[e].break_after && toks[e + 1].kind == Kind::kWord &&
                 !toks[e + 1].break_before && IsCapitalised(line.Text(toks[e + 1]))) {
        e += 2;
      } else {
        break;
      }
    }
    k = e;
    if (e - s > 6) continue;  // a title, not a name
    auto droppable = [&](size_t i) {
      const string_view w = line.Text(toks[i]);
      return IsOneOf(w, kConnectors) || IsStopWord(AsciiLower(w));
    };
    while (s < e && droppable(s)) ++s;
    while (e > s && droppable(e - 1)) --e;
    if (s == e) continue;
    st->words.clear();
    bool shouting = true;
    for (size_t i = s; i < e; ++i) {
      st->words.push_back(line.Text(toks[i]));
      shouting = shouting && IsAllUpper(st->words.back());
    }
    const std::string name = Join(st->words);
    if (shouting && st->words.size() > 1 && KnownTool(AsciiLower(name)).empty()) continue;
    const EntityType type = type_of(st->words, s, e - 1);
    if (st->words.size() == 1) {
      if (name.size() < 2) continue;
      // A sentence's first word is capitalised anyway: it needs the same
      // word capitalised elsewhere, or a rule that types it.
      if (toks[s].sentence_start && type == EntityType::kConcept && !mid_sentence.count(name))
        continue;
    }
    add(s, e - 1, name, type);
  }
}

// What the mentions of one line say: a fact after each, a triplet between
// neighbours joined by a known verb, and, in a daily log, the line as an
// event of `date` when it has at least three words.
void Relate(const Line& line, const std::vector<Mention>& mentions, const std::string& date,
            bool daily_log, Collector* out) {
  const string_view t = line.text;
  for (size_t i = 0; i < mentions.size(); ++i) {
    const Mention& a = mentions[i];
    std::string fact = FactAfter(t.substr(a.end));
    if (!fact.empty()) out->AddFact(a.name, std::move(fact));
    if (i + 1 == mentions.size()) break;
    const Mention& b = mentions[i + 1];
    if (b.sentence != a.sentence || b.begin < a.end || b.begin - a.end > 16) continue;
    const std::string verb = NormalizeGap(t.substr(a.end, b.begin - a.end));
    if (!IsOneOf(verb, kVerbs)) continue;
    std::string predicate = verb;
    std::replace(predicate.begin(), predicate.end(), ' ', '_');
    out->AddTriplet(a.name, predicate, b.name, date);
  }
  if (!daily_log || CountWords(t) < 3) return;
  std::vector<std::string> names;
  names.reserve(mentions.size());
  for (const Mention& m : mentions) names.push_back(m.name);
  out->AddEvent(date, t, names);
}

}  // namespace

std::vector<std::string> TextScanner::Scan(string_view text, std::string date, bool daily_log) {
  ScanState st;
  ForEachLine(text, [&](const Line& line) {
    if (daily_log && line.heading) date = HeadingDate(line).value_or(date);
    FindMentions(line, out_, mid_sentence_, &st);
    if (!st.mentions.empty()) Relate(line, st.mentions, date, daily_log, out_);
  });
  return std::move(st.found);
}

}  // namespace limbic::world::internal
