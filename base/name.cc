#include "base/name.h"

#include <cstdint>
#include <cstdio>

#include "base/json.h"

namespace limbic {

namespace {

constexpr size_t kMaxNameBytes = 256;

// The code point of the valid UTF-8 sequence at s[i], and its length.
char32_t DecodeAt(std::string_view s, size_t i, size_t* len) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) {
    *len = 1;
    return c;
  }
  if (c < 0xE0) {
    *len = 2;
    return (char32_t(c & 0x1F) << 6) | (b(1) & 0x3F);
  }
  if (c < 0xF0) {
    *len = 3;
    return (char32_t(c & 0x0F) << 12) | (char32_t(b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  }
  *len = 4;
  return (char32_t(c & 0x07) << 18) | (char32_t(b(1) & 0x3F) << 12) | (char32_t(b(2) & 0x3F) << 6) |
         (b(3) & 0x3F);
}

// What `cp` is when a name may not hold it; nullptr when it may.
const char* Forbidden(char32_t cp) {
  if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F)) return "a control character";
  if ((cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069)) return "a bidi control";
  return nullptr;
}

std::string CodePoint(char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
  return buf;
}

// The first character of `s` a name may not hold (but for tab and line
// breaks when `line_breaks`), or where `s` stops being UTF-8; "" if none.
std::string FirstFault(std::string_view s, bool line_breaks) {
  for (size_t i = 0, len = 0; i < s.size(); i += len) {
    const auto lead = static_cast<unsigned char>(s[i]);
    len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    if (i + len > s.size() || !IsValidUtf8(s.substr(i, len)))
      return "not UTF-8 at byte " + std::to_string(i);
    const char32_t cp = DecodeAt(s, i, &len);
    if (line_breaks && (cp == '\t' || cp == '\n' || cp == '\r')) continue;
    if (const char* what = Forbidden(cp))
      return CodePoint(cp) + " (" + what + ") at byte " + std::to_string(i);
  }
  return {};
}

}  // namespace

std::string NameFault(std::string_view s, NameRule rule) {
  if (s.empty()) return "empty";
  if (s.size() > kMaxNameBytes) return std::to_string(s.size()) + " bytes";
  if (rule == NameRule::kLogged) {
    for (size_t i = 0; i < s.size(); ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c < 0x20 || c == 0x7F)
        return CodePoint(c) + " (a control character) at byte " + std::to_string(i);
    }
    return {};
  }
  return FirstFault(s, false);
}

std::string TextFault(std::string_view s, size_t max_bytes, bool line_breaks) {
  if (s.size() > max_bytes) return std::to_string(s.size()) + " bytes";
  return FirstFault(s, line_breaks);
}

Status CheckName(std::string_view field, std::string_view s, NameRule rule) {
  std::string fault = NameFault(s, rule);
  if (fault.empty()) return Status::OK();
  return Status::InvalidArgument(std::string(field) + ": must be " + std::string(kNameRule) + "; " +
                                 fault);
}

std::string SanitizeName(std::string_view s, char with, size_t max_bytes) {
  const std::string valid = ToValidUtf8(s);
  std::string out;
  for (size_t i = 0, len = 0; i < valid.size(); i += len) {
    const char32_t cp = DecodeAt(valid, i, &len);
    const size_t add = Forbidden(cp) ? 1 : len;
    if (out.size() + add > max_bytes) break;
    if (Forbidden(cp))
      out.push_back(with);
    else
      out.append(valid, i, len);
  }
  return out;
}

}  // namespace limbic
