#include "state/flat_record.h"

#include <charconv>
#include <vector>

#include "base/json.h"

namespace limbic::state {

namespace {

constexpr size_t kNone = std::string_view::npos;

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Past the JSON string that starts at b[i] (a '"'), or kNone.
size_t SkipString(std::string_view b, size_t i) {
  for (++i; i < b.size(); ++i) {
    if (b[i] == '\\')
      ++i;
    else if (b[i] == '"')
      return i + 1;
  }
  return kNone;
}

// Past the JSON value that starts at b[i], or kNone when there is none or
// there is a space outside its strings (not compact). `b` is valid JSON, so
// brackets match.
size_t SkipValue(std::string_view b, size_t i) {
  if (i >= b.size()) return kNone;
  if (b[i] == '"') return SkipString(b, i);
  if (b[i] == '{' || b[i] == '[') {
    int depth = 0;
    while (i < b.size()) {
      const char c = b[i];
      if (c == '"') {
        i = SkipString(b, i);
        if (i == kNone) return kNone;
        continue;
      }
      if (c == '{' || c == '[')
        ++depth;
      else if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      } else if (IsSpace(c))
        return kNone;
      ++i;
    }
    return kNone;
  }
  const size_t start = i;
  while (i < b.size() && b[i] != ',' && b[i] != '}' && b[i] != ']') {
    if (IsSpace(b[i])) return kNone;
    ++i;
  }
  return i == start ? kNone : i;
}

// A JSON string token as Dump writes it: escapes only for '"', '\\' and
// control characters (\b \f \n \r \t, else \u00xx in lower case).
bool CanonicalString(std::string_view s) {
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    if (s[i] != '\\') continue;
    const char e = s[++i];
    if (e == '"' || e == '\\' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') continue;
    if (e != 'u' || i + 4 >= s.size() || s.substr(i + 1, 2) != "00") return false;
    const std::string_view hex = s.substr(i + 3, 2);
    auto lower_hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
    if (!lower_hex(hex[0]) || !lower_hex(hex[1]) || hex[0] > '1') return false;  // below 0x20
    const int c = std::stoi(std::string(hex), nullptr, 16);
    if (c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t')
      return false;  // has a short form
    i += 4;
  }
  return true;
}

// A number token as Dump prints it: its value printed again gives it back.
bool CanonicalNumber(std::string_view n) {
  // Most are short integers, which Dump prints digit for digit.
  const std::string_view digits = n.substr(n.front() == '-' ? 1 : 0);
  if (!digits.empty() && digits.size() <= 18 && (digits.front() != '0' || digits.size() == 1) &&
      digits.find_first_not_of("0123456789") == kNone)
    return n != "-0";
  auto j = ParseJson(n);
  if (!j || !j->is_number()) return false;
  std::string again;
  AppendCompactJson(*j, &again);
  return again == n;
}

// Whether the valid compact JSON value at b[i, end) is exactly what Dump
// writes for it: objects' keys in order, once each, unescaped; strings
// escaped only as Dump escapes; numbers as Dump prints them. Dump never
// writes anything else, so a record only fails this when something else
// wrote it.
bool Canonical(std::string_view b, size_t i, size_t end) {
  // One pass over the tokens, with a stack of the objects and arrays open
  // around them: a stored record may nest any depth (an older limbic wrote
  // it), so nothing here recurses. For each open object, its last key.
  struct Open {
    bool object;
    bool has_key = false;
    std::string_view last_key;
  };
  std::vector<Open> stack;
  while (i < end) {
    const char c = b[i];
    if (c == '{' || c == '[') {
      stack.push_back(Open{c == '{', false, {}});
      ++i;
    } else if (c == '}' || c == ']') {
      if (stack.empty()) return false;
      stack.pop_back();
      ++i;
    } else if (c == ',' || c == ':') {
      ++i;
    } else if (c == '"') {
      const size_t string_end = SkipString(b, i);
      if (string_end == kNone || string_end > end) return false;
      const bool is_key =
          !stack.empty() && stack.back().object && string_end < end && b[string_end] == ':';
      if (is_key) {
        Open& obj = stack.back();
        const std::string_view key = b.substr(i + 1, string_end - i - 2);
        if (key.find('\\') != kNone || (obj.has_key && !(obj.last_key < key))) return false;
        obj.has_key = true;
        obj.last_key = key;
      } else if (!CanonicalString(b.substr(i, string_end - i))) {
        return false;
      }
      i = string_end;
    } else {
      size_t token_end = i;
      while (token_end < end && b[token_end] != ',' && b[token_end] != '}' && b[token_end] != ']')
        ++token_end;
      if (c != 't' && c != 'f' && c != 'n' &&  // true, false, null
          !CanonicalNumber(b.substr(i, token_end - i)))
        return false;
      i = token_end;
    }
  }
  return stack.empty();
}

// `s` as a JSON string, as Dump writes it.
std::string Quoted(const std::string& s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

// The elements of the array `raw` (compact JSON, '[' first), as stored.
template <typename Fn>
void ForEachElement(std::string_view raw, Fn fn) {
  size_t i = 1;
  if (raw.size() < 2 || raw[i] == ']') return;
  while (i < raw.size()) {
    const size_t end = SkipValue(raw, i);
    if (end == kNone) return;
    fn(raw.substr(i, end - i));
    if (end >= raw.size() || raw[end] != ',') return;
    i = end + 1;
  }
}

// Whether the array `raw` holds an element stored as `token`.
bool HasElement(std::string_view raw, std::string_view token) {
  bool found = false;
  ForEachElement(raw, [&](std::string_view e) { found = found || e == token; });
  return found;
}

}  // namespace

FlatRecord FlatRecord::FromJson(const json& object) {
  FlatRecord rec;
  AppendCompactJson(object, &rec.bytes_);
  rec.Index(false);
  return rec;
}

Result<FlatRecord> FlatRecord::FromStored(std::string_view stored) {
  if (!stored.empty() && stored.front() == '{' && ValidJson(stored)) {
    FlatRecord rec;
    rec.bytes_.assign(stored);
    if (rec.Index(true)) return rec;
  }
  // Not Dump's form: parsed, and written as Dump would.
  auto j = ParseJson(stored);
  if (!j) return Status::InvalidArgument("not valid JSON");
  if (!j->is_object()) return Status::InvalidArgument("not a JSON object");
  return FromJson(*j);
}

bool FlatRecord::Index(bool canonical) {
  members_.clear();
  const std::string_view b = bytes_;
  if (b.size() < 2 || b.front() != '{') return false;
  if (b == "{}") return true;
  size_t i = 1;
  while (true) {
    if (i >= b.size() || b[i] != '"') return false;
    const size_t key_end = SkipString(b, i);
    if (key_end == kNone || key_end >= b.size() || b[key_end] != ':') return false;
    const size_t value_end = SkipValue(b, key_end + 1);
    if (value_end == kNone || value_end >= b.size()) return false;
    Member m{static_cast<uint32_t>(i), static_cast<uint32_t>(key_end),
             static_cast<uint32_t>(key_end + 1), static_cast<uint32_t>(value_end)};
    if (canonical) {
      const std::string_view key = KeyOf(m);
      if (key.find('\\') != kNone) return false;
      if (!members_.empty() && !(KeyOf(members_.back()) < key)) return false;
      if (!Canonical(b, m.value_at, m.value_end)) return false;
    }
    members_.push_back(m);
    if (b[value_end] == '}') return value_end + 1 == b.size();
    if (b[value_end] != ',') return false;
    i = value_end + 1;
  }
}

std::string_view FlatRecord::KeyOf(const Member& m) const {
  return std::string_view(bytes_).substr(m.key_at + 1, m.key_end - m.key_at - 2);
}

const FlatRecord::Member* FlatRecord::FindMember(std::string_view key) const {
  // Keys asked for are plain names: an escaped key is never one of them.
  for (const Member& m : members_)
    if (KeyOf(m) == key) return &m;
  return nullptr;
}

json FlatRecord::ToJson() const {
  auto j = ParseJson(bytes_);
  return j ? std::move(*j) : json::object();
}

std::optional<std::string_view> FlatRecord::Raw(std::string_view key) const {
  const Member* m = FindMember(key);
  if (!m) return std::nullopt;
  return std::string_view(bytes_).substr(m->value_at, m->value_end - m->value_at);
}

json FlatRecord::Get(std::string_view key) const {
  auto raw = Raw(key);
  if (!raw) return json();
  auto j = ParseJson(*raw);
  return j ? std::move(*j) : json();
}

std::optional<std::string> FlatRecord::StringOf(std::string_view raw) {
  if (raw.size() < 2 || raw.front() != '"') return std::nullopt;
  const std::string_view inner = raw.substr(1, raw.size() - 2);
  if (inner.find('\\') == kNone) return std::string(inner);
  auto j = ParseJson(raw);
  if (!j || !j->is_string()) return std::nullopt;
  return j->get<std::string>();
}

std::optional<std::string> FlatRecord::String(std::string_view key) const {
  auto raw = Raw(key);
  return raw ? StringOf(*raw) : std::nullopt;
}

bool FlatRecord::IsString(std::string_view key, std::string_view value) const {
  auto raw = Raw(key);
  if (!raw || raw->size() < 2 || raw->front() != '"') return false;
  const std::string_view inner = raw->substr(1, raw->size() - 2);
  if (inner.find('\\') == kNone) return inner == value;
  return StringOf(*raw) == std::optional<std::string>(std::string(value));
}

std::optional<double> FlatRecord::Number(std::string_view key) const {
  auto raw = Raw(key);
  if (!raw || raw->empty()) return std::nullopt;
  const char c = raw->front();
  if (c != '-' && (c < '0' || c > '9')) return std::nullopt;
  double d = 0;
  auto r = std::from_chars(raw->data(), raw->data() + raw->size(), d);
  if (r.ec == std::errc::result_out_of_range) return Get(key).get<double>();
  if (r.ec != std::errc()) return std::nullopt;
  return d;
}

void FlatRecord::Set(std::string_view key, const json& value) {
  std::string text;
  AppendCompactJson(value, &text);
  SetRaw(key, text);
}

void FlatRecord::SetString(std::string_view key, const std::string& value) {
  SetRaw(key, Quoted(value));
}

void FlatRecord::SetRaw(std::string_view key, std::string_view value) {
  if (const Member* found = FindMember(key)) {
    const size_t at = static_cast<size_t>(found - members_.data());
    Member& m = members_[at];
    const int64_t delta = static_cast<int64_t>(value.size()) - (m.value_end - m.value_at);
    bytes_.replace(m.value_at, m.value_end - m.value_at, value);
    m.value_end = static_cast<uint32_t>(m.value_end + delta);
    Shift(at + 1, delta);
    return;
  }
  // A new member, in key order. An escaped key is compared as it reads.
  auto before = [&](const Member& m) {
    std::string_view stored = KeyOf(m);
    if (stored.find('\\') == kNone) return key < stored;
    auto decoded = ParseJson(std::string_view(bytes_).substr(m.key_at, m.key_end - m.key_at));
    return decoded && decoded->is_string() && key < decoded->get_ref<const std::string&>();
  };
  size_t at = 0;
  while (at < members_.size() && !before(members_[at])) ++at;
  std::string text;
  text.reserve(key.size() + value.size() + 5);
  uint32_t pos;
  if (members_.empty()) {
    pos = 1;  // after '{'
  } else if (at < members_.size()) {
    pos = members_[at].key_at;  // before the member it precedes, with a comma after
  } else {
    pos = members_.back().value_end;  // after the last, with a comma before
    text.push_back(',');
  }
  const uint32_t key_at = pos + static_cast<uint32_t>(text.size());
  text.push_back('"');
  text.append(key);
  text.append("\":");
  const uint32_t value_at = pos + static_cast<uint32_t>(text.size());
  text.append(value);
  const uint32_t value_end = pos + static_cast<uint32_t>(text.size());
  if (!members_.empty() && at < members_.size()) text.push_back(',');
  bytes_.insert(pos, text);
  Shift(at, static_cast<int64_t>(text.size()));
  members_.insert(
      members_.begin() + static_cast<std::ptrdiff_t>(at),
      Member{key_at, key_at + static_cast<uint32_t>(key.size() + 2), value_at, value_end});
}

void FlatRecord::Erase(std::string_view key) {
  const Member* m = FindMember(key);
  if (!m) return;
  const size_t at = static_cast<size_t>(m - members_.data());
  uint32_t from, to;
  if (at + 1 < members_.size()) {  // the pair and the comma after it
    from = m->key_at;
    to = members_[at + 1].key_at;
  } else if (at > 0) {  // the last pair and the comma before it
    from = members_[at - 1].value_end;
    to = m->value_end;
  } else {
    from = m->key_at;
    to = m->value_end;
  }
  bytes_.erase(from, to - from);
  members_.erase(members_.begin() + static_cast<std::ptrdiff_t>(at));
  Shift(at, -static_cast<int64_t>(to - from));
}

void FlatRecord::Shift(size_t first, int64_t delta) {
  for (size_t i = first; i < members_.size(); ++i) {
    Member& m = members_[i];
    for (uint32_t* offset : {&m.key_at, &m.key_end, &m.value_at, &m.value_end})
      *offset = static_cast<uint32_t>(*offset + delta);
  }
}

bool FlatRecord::ArrayHas(std::string_view key, const std::string& s) const {
  auto raw = Raw(key);
  if (!raw || raw->empty() || raw->front() != '[') return false;
  return HasElement(*raw, Quoted(s));
}

void FlatRecord::ArrayAddUnique(std::string_view key, const std::string& s) {
  auto raw = Raw(key);
  const std::string token = Quoted(s);
  if (!raw || raw->empty() || raw->front() != '[') {
    SetRaw(key, "[" + token + "]");
    return;
  }
  if (HasElement(*raw, token)) return;
  std::string list(*raw);
  list.pop_back();  // ']'
  if (list.size() > 1) list.push_back(',');
  list.append(token).push_back(']');
  SetRaw(key, list);
}

void FlatRecord::ArrayRemove(std::string_view key, const std::string& s) {
  auto raw = Raw(key);
  if (!raw || raw->empty() || raw->front() != '[') return;
  const std::string token = Quoted(s);
  std::string list = "[";
  bool removed = false;
  ForEachElement(*raw, [&](std::string_view e) {
    if (e == token) {
      removed = true;
      return;
    }
    if (list.size() > 1) list.push_back(',');
    list.append(e);
  });
  if (!removed) return;
  list.push_back(']');
  SetRaw(key, list);
}

}  // namespace limbic::state
