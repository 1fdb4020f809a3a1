// The heuristic extractor's text rules over tokenised lines
// (extract_tokens.h): capitalised names and their types, facts and line
// events; the links between names, and the triplets they state, are in
// extract_links.cc (rules in extract.h).
#include <optional>

#include "base/time.h"
#include "world/extract_internal.h"
#include "world/extract_links.h"
#include "world/extract_tokens.h"

namespace limbic::world::internal {
namespace {

using std::string_view;

constexpr string_view kConnectors[] = {"of", "de", "van", "von"};
constexpr string_view kPersonAfter[] = {"said",  "says",    "asked",     "wrote", "thinks",
                                        "wants", "replied", "mentioned", "agreed"};
constexpr string_view kPersonBefore[] = {"with",  "met",     "told", "asked",  "thanks",
                                         "by",    "from",    "cc",   "ping",   "pinged",
                                         "email", "emailed", "send", "remind", "invite"};
constexpr string_view kTitles[] = {"mr", "mrs", "ms", "dr", "prof", "sir"};
constexpr string_view kWorkVerbs[] = {"works", "work", "worked", "working"};
// Nouns after a name that make it a project: "the Orion launch".
constexpr string_view kProjectNouns[] = {
    "project",    "migration", "launch",  "rollout",  "roadmap", "release",  "workstream",
    "initiative", "milestone", "rewrite", "redesign", "design",  "work",     "epic",
    "program",    "programme", "pilot",   "beta",     "spec",    "codebase", "kickoff"};

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
// a known tool or a company word, and either a given name first or no
// everyday word among them ("Weekly Review" is not someone).
bool LooksLikePerson(const std::vector<string_view>& words) {
  size_t names = 0;
  bool everyday = false;
  for (string_view w : words) {
    if (w == "van" || w == "von" || w == "de") continue;
    const std::string lower = AsciiLower(w);
    if (!IsNameWord(w) || !KnownTool(lower).empty() || IsCompanyWord(lower)) return false;
    everyday = everyday || IsStopWord(lower) || IsRoleWord(lower);
    ++names;
  }
  return names >= 2 && names <= 3 && (!everyday || IsGivenName(AsciiLower(words[0])));
}

struct Typed {
  EntityType type = EntityType::kConcept;
  Strength strength = Strength::kNone;
};

// The type of the name `words` between the words `prev2 prev` and `next`
// (lower case; empty when there is none), and how sure it is. The name's
// own form decides first, then its context, then whether it looks like a
// person's name.
Typed TypeOf(const std::vector<string_view>& words, string_view prev, string_view prev2,
             string_view next, const std::unordered_set<std::string>& projects) {
  using enum EntityType;
  const std::string lower = AsciiLower(Join(words));
  if (words.size() >= 2 && IsCompanyWord(AsciiLower(words.back())))
    return {kCompany, Strength::kForm};
  if (!KnownTool(lower).empty()) return {kTool, Strength::kKnownTool};
  if (words.size() >= 2 && words[0] == "Project") return {kProject, Strength::kForm};
  if (IsOneOf(prev, kTitles)) return {kPerson, Strength::kContext};
  if (IsOneOf(next, kProjectNouns) || projects.count(lower)) return {kProject, Strength::kContext};
  if (prev == "at" || prev == "joined" || (prev == "for" && IsOneOf(prev2, kWorkVerbs)))
    return {kCompany, Strength::kContext};
  if (prev == "uses" || prev == "using" || prev == "via") return {kTool, Strength::kContext};
  if (prev == "project" || prev == "repo" || prev == "on") return {kProject, Strength::kContext};
  if (IsOneOf(next, kPersonAfter) || IsOneOf(prev, kPersonBefore) ||
      (prev == "to" && prev2 == "thanks"))
    return {kPerson, Strength::kContext};
  if ((words.size() == 1 && IsGivenName(lower)) || LooksLikePerson(words))
    return {kPerson, Strength::kShape};
  return {};
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

// The end of the run of capitalised words that starts at token `k` ("of",
// "de", "van", "von" allowed inside; no punctuation between them).
size_t RunEnd(const Line& line, size_t k) {
  const std::vector<Token>& toks = line.tokens;
  size_t e = k + 1;
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
  return e;
}

// Trims the run [*s, *e) of the words that name nothing: stop words at
// either end ("Met Alice Chen"), roles ("CTO Alice Chen"). False when
// nothing is left or the run is a title ("VP of Engineering"). A known
// tool is kept whole ("GitHub Actions", though "actions" is a stop word).
bool TrimRun(const Line& line, size_t* s, size_t* e) {
  const std::vector<Token>& toks = line.tokens;
  auto lower = [&](size_t i) { return AsciiLower(line.Text(toks[i])); };
  bool role = false;
  while (*s < *e) {
    const std::string w = lower(*s);
    if (IsRoleWord(w)) {
      role = true;
    } else if (IsOneOf(w, kConnectors)) {
      if (role) return false;  // "Head of Platform": a title
    } else if (!IsStopWord(w)) {
      break;
    }
    ++*s;
  }
  std::string whole;
  for (size_t i = *s; i < *e; ++i) whole += (whole.empty() ? "" : " ") + lower(i);
  if (!KnownTool(whole).empty()) return *s < *e;
  while (*e > *s) {
    const std::string w = lower(*e - 1);
    if (!IsOneOf(w, kConnectors) && !IsStopWord(w) && !IsRoleWord(w)) break;
    --*e;
  }
  return *s < *e;
}

}  // namespace

void TextScanner::Learn(string_view text) {
  ForEachLine(text, [&](const Line& line) {
    const std::vector<Token>& toks = line.tokens;
    for (size_t k = 0; k < toks.size(); ++k) {
      const Token& tok = toks[k];
      if (tok.kind != Kind::kWord || !IsCapitalised(line.Text(tok))) continue;
      if (!tok.sentence_start) mid_sentence_.emplace(line.Text(tok));
      // "Project Helios" names the project "Helios" too.
      if (line.Text(tok) == "Project" && RunEnd(line, k) > k + 1) {
        std::string name;
        for (size_t i = k + 1; i < RunEnd(line, k); ++i)
          name += (name.empty() ? "" : " ") + std::string(line.Text(toks[i]));
        projects_.insert(NameKey(name));
      }
    }
  });
}

namespace {

// What Scan keeps across the lines of a text.
struct ScanState {
  std::vector<std::string> found;  // entity names, once each, in order of first mention
  std::unordered_set<std::string> found_keys;
  std::vector<Mention> mentions;   // of the current line
  std::vector<string_view> words;  // scratch
};

// The date a daily log's heading names, or nullopt.
std::optional<std::string> HeadingDate(const Line& line) {
  for (const Token& tok : line.tokens)
    if (tok.kind == Kind::kWord && IsDateWord(line.Text(tok))) return std::string(line.Text(tok));
  return std::nullopt;
}

// Finds the entity mentions of `line` into st->mentions, in line order
// (tokens are visited left to right), typed by their own form and
// context; RefineTypes then types them by their links.
void FindMentions(const Line& line, const std::unordered_set<std::string>& mid_sentence,
                  const std::unordered_set<std::string>& projects, ScanState* st) {
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
  auto add = [&](size_t first, size_t last, std::string name, Typed typed) {
    Mention m{toks[first].begin, toks[last].end, toks[first].sentence,
              std::move(name),   typed.type,     typed.strength};
    m.after_from = first > 0 && toks[first - 1].kind == Kind::kWord &&
                   AsciiLower(line.Text(toks[first - 1])) == "from";
    st->mentions.push_back(std::move(m));
  };
  auto type_of = [&](const std::vector<string_view>& name, size_t first, size_t last) {
    size_t k = first;
    const std::string prev = word_before(&k);
    const std::string prev2 = prev.empty() ? std::string() : word_before(&k);
    return TypeOf(name, prev, prev2, word_after(last), projects);
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
      if (tok.kind != Kind::kOther) add(k, k, tok.name, {tok.type, Strength::kForm});
      ++k;
      continue;
    }
    if (!IsCapitalised(line.Text(tok))) {
      ++k;
      continue;
    }
    size_t s = k, e = RunEnd(line, k);
    k = e;
    if (e - s > 6) continue;  // a title, not a name
    if (!TrimRun(line, &s, &e)) continue;
    st->words.clear();
    bool shouting = true;
    for (size_t i = s; i < e; ++i) {
      st->words.push_back(line.Text(toks[i]));
      shouting = shouting && IsAllUpper(st->words.back());
    }
    std::string name = Join(st->words);
    if (shouting && st->words.size() > 1 && KnownTool(AsciiLower(name)).empty()) continue;
    if (st->words.size() == 1 && name.size() < 2) continue;
    const Typed typed = type_of(st->words, s, e - 1);
    add(s, e - 1, std::move(name), typed);
    // A sentence's first word is capitalised anyway, and an acronym alone
    // (SRE, TLS) is seldom something to remember: each needs a rule to type it.
    if (st->words.size() == 1)
      st->mentions.back().needs_type =
          shouting || (toks[s].sentence_start && !mid_sentence.count(st->mentions.back().name));
  }
}

// Types the line's mentions by their links, drops those that needed a type
// and got none, and adds the rest to `out` (and to st->found).
void Keep(Collector* out, std::string_view line, ScanState* st) {
  RefineTypes(line, &st->mentions);
  std::erase_if(st->mentions,
                [](const Mention& m) { return m.needs_type && m.type == EntityType::kConcept; });
  std::erase_if(st->mentions, [&](Mention& m) {
    m.name = out->Add(m.name, m.type, false);
    return m.name.empty();
  });
  for (const Mention& m : st->mentions)
    if (st->found_keys.insert(NameKey(m.name)).second) st->found.push_back(m.name);
}

// What the mentions of one line say: a fact after each, the triplets their
// links state, and, in a daily log, the line as an event of `date` when it
// has at least three words.
void Relate(const Line& line, const std::vector<Mention>& mentions, const std::string& date,
            bool daily_log, Collector* out) {
  const string_view t = line.text;
  for (const Mention& m : mentions) {
    std::string fact = FactAfter(t.substr(m.end));
    if (!fact.empty()) out->AddFact(m.name, std::move(fact));
  }
  for (const Stated& s : StatedTriplets(t, mentions))
    out->AddTriplet(mentions[s.subject].name, s.predicate, mentions[s.object].name, date);
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
    FindMentions(line, mid_sentence_, projects_, &st);
    Keep(out_, line.text, &st);
    if (!st.mentions.empty()) Relate(line, st.mentions, date, daily_log, out_);
  });
  return std::move(st.found);
}

}  // namespace limbic::world::internal
