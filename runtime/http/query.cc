#include "runtime/http/query.h"

#include <algorithm>
#include <array>

#include "base/json.h"
#include "base/name.h"
#include "base/time.h"

namespace limbic::runtime {

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A value's characters: one rule for names (base/name.h) and, with tab and
// line breaks, for free text. The length was checked before (the kind's).
Status CheckText(std::string_view v) {
  std::string fault = TextFault(v, v.size(), true);
  if (!fault.empty()) return Status::InvalidArgument("must be " + std::string(kTextRule) + "; " + fault);
  return Status::OK();
}

Status CheckName(std::string_view v) {
  std::string fault = NameFault(v);
  if (!fault.empty()) return Status::InvalidArgument("must be " + std::string(kNameRule) + "; " + fault);
  return Status::OK();
}

Status CheckNames(std::string_view v) {
  for (size_t start = 0; start <= v.size();) {
    size_t comma = std::min(v.find(',', start), v.size());
    // Empty pieces ("a,,b") are no names, and are skipped.
    if (comma > start)
      if (Status s = CheckName(v.substr(start, comma - start)); !s.ok()) return s;
    start = comma + 1;
  }
  return Status::OK();
}

Status CheckCount(std::string_view v) {
  if (!std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return Status::InvalidArgument("must be a non-negative integer, got \"" + std::string(v) + "\"");
  return Status::OK();
}

Status CheckDuration(std::string_view v) { return ParseDuration(v).status(); }
Status CheckTime(std::string_view v) { return ParseTime(v).status(); }
Status CheckDate(std::string_view v) { return ParseDate(v).status(); }

Status CheckBool(std::string_view v) {
  if (v != "true" && v != "false")
    return Status::InvalidArgument("must be true or false, got \"" + std::string(v) + "\"");
  return Status::OK();
}

// One row per kind, in the enum's order. The bounds: a name or id is at most
// 256 bytes everywhere else (X-Limbic-Actor, ids are 128); search text gets
// room for a sentence or two; a count has at most 20 digits (2^64).
constexpr std::array<QueryKindRule, 8> kRules{{
    {QueryKind::kText, "text", 2048, CheckText},
    {QueryKind::kName, "a name", 256, CheckName},
    {QueryKind::kNames, "names separated by ','", 2048, CheckNames},
    {QueryKind::kCount, "a non-negative integer", 20, CheckCount},
    {QueryKind::kDuration, "a duration (90s, 5m, 1h, 2d)", 32, CheckDuration},
    {QueryKind::kTime, "an RFC 3339 time", 64, CheckTime},
    {QueryKind::kDate, "a date (YYYY-MM-DD)", 10, CheckDate},
    {QueryKind::kBool, "true or false", 5, CheckBool},
}};

// A name from the request, for an error message: at most 64 bytes of it.
std::string Shown(std::string_view name) {
  std::string out(name.substr(0, 64));
  if (name.size() > 64) out.append("...");
  return out;
}

}  // namespace

Status CheckParamValue(const std::string& where, QueryKind kind, std::string_view value) {
  const QueryKindRule& rule = RuleOf(kind);
  if (value.size() > rule.max_bytes)
    return Status::InvalidArgument(where + ": " + std::to_string(value.size()) +
                                   " bytes, more than the " + std::to_string(rule.max_bytes) +
                                   " " + rule.what + " may have");
  if (!IsValidUtf8(value)) return Status::InvalidArgument(where + ": not valid UTF-8");
  if (Status s = rule.check(value); !s.ok()) return s.WithContext(where);
  return Status::OK();
}

const QueryKindRule& RuleOf(QueryKind kind) { return kRules[static_cast<size_t>(kind)]; }

Status CheckQueryValue(std::string_view name, QueryKind kind, std::string_view value) {
  return CheckParamValue("query " + Shown(name), kind, value);
}

Status CheckPathParam(std::string_view name, std::string_view value) {
  return CheckParamValue("path " + std::string(name), QueryKind::kName, value);
}

Result<std::string> PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      const int hi = i + 2 < s.size() ? HexDigit(s[i + 1]) : -1;
      const int lo = i + 2 < s.size() ? HexDigit(s[i + 2]) : -1;
      if (hi < 0 || lo < 0)
        return Status::InvalidArgument("malformed percent-encoding at byte " + std::to_string(i) +
                                       " (a '%' must be followed by two hex digits)");
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(plus_is_space && s[i] == '+' ? ' ' : s[i]);
    }
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> SplitQuery(std::string_view qs) {
  std::vector<std::pair<std::string, std::string>> items;
  size_t start = 0;
  while (start <= qs.size()) {
    const size_t amp = std::min(qs.find('&', start), qs.size());
    std::string_view kv = qs.substr(start, amp - start);
    const size_t eq = kv.find('=');
    if (!kv.empty()) {
      auto name = PercentDecode(kv.substr(0, eq), true);
      if (!name.ok()) return name.status().WithContext("query");
      std::string value;
      if (eq != std::string_view::npos) {
        auto v = PercentDecode(kv.substr(eq + 1), true);
        if (!v.ok()) return v.status().WithContext("query " + Shown(*name));
        value = std::move(*v);
      }
      items.emplace_back(std::move(*name), std::move(value));
    }
    start = amp + 1;
  }
  return items;
}

Status CheckQuery(const std::vector<std::pair<std::string, std::string>>& items,
                  const std::vector<QueryParam>& params, std::string_view route,
                  std::map<std::string, std::string>* out) {
  out->clear();
  if (items.size() > kMaxQueryParams)
    return Status::InvalidArgument("query: " + std::to_string(items.size()) +
                                   " parameters, more than " + std::to_string(kMaxQueryParams));
  auto find = [&](std::string_view name) {
    return std::find_if(params.begin(), params.end(),
                        [&](const QueryParam& p) { return p.name == name; });
  };
  // The names first: an unknown or repeated one is the error, whatever the values.
  std::map<std::string_view, size_t> given;
  for (const auto& [name, value] : items) {
    if (name.empty()) return Status::InvalidArgument("query: a parameter without a name");
    auto param = find(name);
    if (param == params.end()) {
      std::string known;
      for (const QueryParam& p : params) known += (known.empty() ? "" : ", ") + std::string(p.name);
      return Status::InvalidArgument("query " + Shown(name) + ": unknown parameter; " +
                                     std::string(route) +
                                     (known.empty() ? " takes none" : " takes " + known));
    }
    if (++given[param->name] > 1 && param->kind != QueryKind::kNames)
      return Status::InvalidArgument("query " + name + ": given more than once");
  }
  for (const auto& [name, value] : items) {
    if (value.empty()) continue;
    LIMBIC_RETURN_IF_ERROR(CheckQueryValue(name, find(name)->kind, value));
    std::string& joined = (*out)[name];
    if (!joined.empty()) joined += ',';
    joined += value;
  }
  // A repeated list is bounded as a whole, like one value.
  for (const auto& [name, value] : *out) {
    const QueryKind kind = find(name)->kind;
    if (value.size() > RuleOf(kind).max_bytes) return CheckQueryValue(name, kind, value);
  }
  return Status::OK();
}

}  // namespace limbic::runtime
