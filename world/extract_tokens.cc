#include "world/extract_tokens.h"

#include "world/extract_internal.h"

namespace limbic::world::internal {
namespace {

using std::string_view;

constexpr string_view kLead = "([{<\"'_";
constexpr string_view kLeftQuotes[] = {"\xE2\x80\x9C", "\xE2\x80\x98"};                   // “ ‘
constexpr string_view kRightQuotes[] = {"\xE2\x80\x9D", "\xE2\x80\x99", "\xE2\x80\xA6"};  // ” ’ …
// Abbreviations whose '.' does not end a sentence.
constexpr string_view kAbbreviations[] = {"mr", "mrs", "ms",  "dr", "prof",  "st",
                                          "vs", "e.g", "i.e", "cf", "approx"};
// github.com/<these> are GitHub's own pages, not an owner.
constexpr string_view kForgePages[] = {
    "orgs",   "settings", "features", "notifications", "marketplace", "topics", "sponsors",
    "about",  "pricing",  "login",    "explore",       "enterprise",  "apps",   "users",
    "search", "issues",   "pulls",    "collections",   "trending",    "new",    "dashboard",
    "help",   "-"};
// word/word pairs of prose and paths, not owner/repo.
constexpr string_view kSlashWords[] = {
    "read",     "write",       "input",        "output",  "client",   "server", "pros",
    "cons",     "true",        "false",        "yes",     "no",       "start",  "stop",
    "enable",   "disable",     "frontend",     "backend", "dev",      "prod",   "src",
    "lib",      "include",     "test",         "tests",   "docs",     "doc",    "bin",
    "etc",      "usr",         "var",          "tmp",     "home",     "build",  "dist",
    "scripts",  "config",      "assets",       "static",  "vendor",   "pkg",    "cmd",
    "internal", "third_party", "node_modules", "tools",   "examples", "data",   "out"};
constexpr string_view kFileExtensions[] = {
    "c",   "cc",  "cpp",  "cxx",  "h",    "hh",  "hpp",  "py",  "rs",   "go",    "java",  "kt",
    "rb",  "md",  "txt",  "json", "yaml", "yml", "toml", "ini", "cfg",  "conf",  "sh",    "ts",
    "tsx", "jsx", "html", "css",  "csv",  "log", "xml",  "sql", "lock", "proto", "cmake", "mk",
    "pdf", "png", "jpg",  "jpeg", "gif",  "svg", "zip",  "gz",  "tar",  "jsonl"};

string_view Trim(string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

bool StartsWithAny(string_view s, const string_view (&list)[2]) {
  return s.starts_with(list[0]) || s.starts_with(list[1]);
}
bool EndsWithAny(string_view s, const string_view (&list)[3]) {
  return s.ends_with(list[0]) || s.ends_with(list[1]) || s.ends_with(list[2]);
}

bool IsRepoPart(string_view s) {
  if (s.size() < 2 || s.size() > kMaxNameBytes || s[0] == '.' || s[0] == '-') return false;
  bool letter = false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
    letter = letter || IsAlpha(c);
  }
  return letter;
}

// A bare "owner/repo".
bool IsOwnerRepo(string_view w) {
  const size_t slash = w.find('/');
  if (slash == npos || w.find('/', slash + 1) != npos) return false;
  const string_view owner = w.substr(0, slash), repo = w.substr(slash + 1);
  if (!IsRepoPart(owner) || !IsRepoPart(repo)) return false;
  const std::string o = AsciiLower(owner), r = AsciiLower(repo);
  if (IsStopWord(o) || IsStopWord(r) || IsOneOf(o, kSlashWords) || IsOneOf(r, kSlashWords))
    return false;
  if (IsAllUpper(owner) && IsAllUpper(repo)) return false;  // CI/CD, TCP/IP
  const size_t dot = r.rfind('.');
  return dot == npos || !IsOneOf(string_view(r).substr(dot + 1), kFileExtensions);
}

// The entity a URL names: OWNER/REPO on github.com or gitlab.com, else the
// host. False for hosts that name nothing (localhost, an IP address).
bool UrlEntity(string_view url, std::string* name, EntityType* type) {
  if (const size_t p = url.find("://"); p != npos) url.remove_prefix(p + 3);
  const size_t end = url.find_first_of("/?#");
  string_view host = url.substr(0, end);
  string_view path = end == npos ? string_view() : url.substr(end);
  if (const size_t at = host.rfind('@'); at != npos) host.remove_prefix(at + 1);
  host = host.substr(0, host.find(':'));
  std::string h = AsciiLower(host);
  if (h.starts_with("www.")) h.erase(0, 4);
  if ((h == "github.com" || h == "gitlab.com") && path.starts_with('/')) {
    path = path.substr(1, path.find_first_of("?#") - 1);
    const size_t slash = path.find('/');
    const string_view owner = path.substr(0, slash);
    string_view repo = slash == npos ? string_view() : path.substr(slash + 1);
    repo = repo.substr(0, repo.find('/'));
    if (repo.ends_with(".git")) repo.remove_suffix(4);
    if (IsRepoPart(owner) && IsRepoPart(repo) && !IsOneOf(owner, kForgePages)) {
      *name = std::string(owner) + "/" + std::string(repo);
      *type = EntityType::kProject;
      return true;
    }
  }
  const size_t dot = h.rfind('.');
  if (h.empty() || dot == npos || dot + 1 == h.size() || h.size() > kMaxNameBytes) return false;
  if (!std::any_of(h.begin() + static_cast<long>(dot) + 1, h.end(), IsAlpha))
    return false;  // an IP address
  for (char c : h)
    if (!IsAlnum(c) && c != '.' && c != '-') return false;
  *name = std::move(h);
  *type = EntityType::kTool;
  return true;
}

// Classifies the token text `w` (punctuation already stripped) as a
// mention or a word.
void Classify(string_view w, Token* tok) {
  tok->kind = Kind::kOther;
  if (w.empty()) return;
  if (w.starts_with("http://") || w.starts_with("https://") || w.starts_with("github.com/") ||
      w.starts_with("gitlab.com/") || w.starts_with("www.github.com/")) {
    if (UrlEntity(w, &tok->name, &tok->type)) tok->kind = Kind::kUrl;
    return;
  }
  if (w[0] == '@') {
    const string_view handle = w.substr(1);
    if (handle.empty() || handle.size() > 64 || !IsAlnum(handle[0])) return;
    for (char c : handle)
      if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return;
    tok->kind = Kind::kHandle;
    tok->name = std::string(handle);
    tok->type = EntityType::kPerson;
    return;
  }
  if (w[0] == '#') {
    size_t n = 1;
    while (n < w.size() && (IsAlnum(w[n]) || w[n] == '-' || w[n] == '_' || IsHigh(w[n]))) ++n;
    const string_view tag = w.substr(1, n - 1);
    if (tag.empty() || tag.size() > 64 || std::all_of(tag.begin(), tag.end(), IsDigit)) return;
    tok->kind = Kind::kTag;
    tok->name = std::string(tag);
    tok->type = EntityType::kConcept;
    return;
  }
  if (w.find('/') != npos) {
    if (!IsOwnerRepo(w)) return;
    tok->kind = Kind::kRepo;
    tok->name = std::string(w);
    tok->type = EntityType::kProject;
    return;
  }
  tok->kind = Kind::kWord;
}

}  // namespace

bool PrepareLine(string_view raw, bool* in_fence, Line* line) {
  string_view s = Trim(raw);
  if (s.starts_with("```") || s.starts_with("~~~")) {
    *in_fence = !*in_fence;
    return false;
  }
  if (*in_fence) return false;
  while (s.starts_with('>')) s = Trim(s.substr(1));
  size_t hashes = 0;
  while (hashes < s.size() && s[hashes] == '#') ++hashes;
  line->heading = hashes >= 1 && hashes <= 6 && (hashes == s.size() || IsBlank(s[hashes]));
  if (line->heading) s = Trim(s.substr(hashes));
  if (s.size() >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && IsBlank(s[1])) {
    s = Trim(s.substr(2));
  } else {
    size_t d = 0;
    while (d < s.size() && d < 9 && IsDigit(s[d])) ++d;
    if (d > 0 && d + 1 < s.size() && (s[d] == '.' || s[d] == ')') && IsBlank(s[d + 1]))
      s = Trim(s.substr(d + 2));
  }
  if (s.size() >= 4 && s[0] == '[' && (s[1] == ' ' || s[1] == 'x' || s[1] == 'X') && s[2] == ']' &&
      IsBlank(s[3]))
    s = Trim(s.substr(4));
  line->text.clear();
  line->text.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '*' || c == '`') continue;                                 // emphasis and code spans
    if ((c == '_' || c == '~') && i + 1 < s.size() && s[i + 1] == c) {  // __strong__, ~~struck~~
      ++i;
      continue;
    }
    const auto u = static_cast<unsigned char>(c);
    line->text += (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
  return true;
}

void Tokenize(Line* line) {
  const string_view s = line->text;
  std::vector<Token>& out = line->tokens;
  out.clear();
  int sentence = 0;
  bool at_start = true, prev_break = false;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == ' ') {
      ++i;
      continue;
    }
    size_t e = std::min(s.find(' ', i), s.size()), next = e;
    size_t b = i;
    bool lead = false;
    while (b < e && s.compare(b, 2, "[[") != 0) {
      if (kLead.find(s[b]) != npos) {
        ++b;
      } else if (StartsWithAny(s.substr(b, e - b), kLeftQuotes)) {
        b += 3;
      } else {
        break;
      }
      lead = true;
    }
    Token tok;
    size_t t = e;  // the token's text is [b, t); [t, next) is its trailing punctuation
    if (s.compare(b, 2, "[[") == 0) {
      const size_t close = s.find("]]", b + 2);
      const size_t inner = s.find("[[", b + 2);
      if (close != npos && close - b <= 3 * kMaxNameBytes && inner > close) {
        tok.kind = Kind::kWikilink;
        string_view target = s.substr(b + 2, close - b - 2);
        tok.name = std::string(target.substr(0, target.find('|')));
        t = close + 2;
        next = std::min(s.find(' ', t), s.size());
      } else {
        b += 2;  // unbalanced or nested: "[[" is punctuation
        lead = true;
      }
    }
    if (tok.kind != Kind::kWikilink) {
      if (const size_t link = s.substr(b, e - b).find("]("); link != npos)
        next = e = b + link + 1;  // [text](url)
      t = e;
      while (t > b) {
        if (kTrailPunct.find(s[t - 1]) != npos) {
          --t;
        } else if (t - b >= 3 && EndsWithAny(s.substr(b, t - b), kRightQuotes)) {
          t -= 3;
        } else {
          break;
        }
      }
      string_view w = s.substr(b, t - b);
      if (!w.starts_with("http") &&
          (w.ends_with("'s") || w.ends_with("\xE2\x80\x99s"))) {  // possessive
        t -= w.ends_with("'s") ? 2 : 4;
        w = s.substr(b, t - b);
      }
      Classify(w, &tok);
    }
    const string_view trail = s.substr(t, next - t);
    tok.begin = b;
    tok.end = t;
    tok.break_before = lead || prev_break;
    tok.break_after = !trail.empty();
    tok.hard_end = trail.find_first_of(".!?") != npos;
    bool ends = trail.find_first_of(".!?:;") != npos;
    if (ends && trail[0] == '.' && tok.kind == Kind::kWord &&
        IsOneOf(AsciiLower(line->Text(tok)), kAbbreviations))
      ends = tok.hard_end = false;
    tok.sentence = sentence;
    tok.sentence_start = at_start;
    at_start = ends;
    if (ends) ++sentence;
    prev_break = tok.break_after;
    out.push_back(std::move(tok));
    i = next;
  }
}

}  // namespace limbic::world::internal
