#include "base/template.h"

namespace limbic {

using nlohmann::json;

namespace {

// Calls `visit(open, close)` with the offsets of each placeholder's "{{"
// and "}}", in order, while it returns true. False when a "{{" is not
// closed, after visiting the placeholders before it.
template <typename Visit>
bool ForEachPlaceholder(const std::string& s, Visit visit) {
  for (size_t pos = 0;;) {
    size_t open = s.find("{{", pos);
    if (open == std::string::npos) return true;
    size_t close = s.find("}}", open + 2);
    if (close == std::string::npos) return false;
    if (!visit(open, close)) return true;
    pos = close + 2;
  }
}

std::string_view Name(const std::string& s, size_t open, size_t close) {
  return std::string_view(s).substr(open + 2, close - open - 2);
}

Result<json> RenderString(const std::string& s, const PlaceholderValue& value) {
  // Exactly one placeholder: keep the value's JSON type.
  if (s.size() > 4 && s.rfind("{{", 0) == 0 && s.find("}}") == s.size() - 2 &&
      s.find("{{", 2) == std::string::npos)
    return value(Name(s, 0, s.size() - 2));
  std::string out;
  size_t pos = 0;
  Status failed;
  bool closed = ForEachPlaceholder(s, [&](size_t open, size_t close) {
    out.append(s, pos, open - pos);
    auto v = value(Name(s, open, close));
    if (!v.ok())
      failed = v.status();
    else
      out += v->is_string() ? v->get_ref<const std::string&>() : v->dump();
    pos = close + 2;
    return failed.ok();
  });
  if (!failed.ok()) return failed;
  if (!closed) return Status::InvalidArgument("template \"" + s + "\": unclosed {{");
  out.append(s, pos);
  return json(std::move(out));
}

}  // namespace

Result<json> RenderTemplate(const json& tmpl, const PlaceholderValue& value) {
  if (tmpl.is_string()) return RenderString(tmpl.get_ref<const std::string&>(), value);
  if (!tmpl.is_object() && !tmpl.is_array()) return tmpl;
  json out = tmpl;
  for (auto it = out.begin(); it != out.end(); ++it) {
    auto v = RenderTemplate(*it, value);
    if (!v.ok()) return v.status();
    *it = std::move(v).value();
  }
  return out;
}

Status CheckTemplate(const json& tmpl, const std::string& path, const PlaceholderCheck& check) {
  if (tmpl.is_object() || tmpl.is_array()) {
    for (auto it = tmpl.begin(); it != tmpl.end(); ++it)
      LIMBIC_RETURN_IF_ERROR(
          CheckTemplate(*it, path + (tmpl.is_object() ? "." + it.key() : "[]"), check));
    return Status::OK();
  }
  if (!tmpl.is_string()) return Status::OK();
  const std::string& s = tmpl.get_ref<const std::string&>();
  std::string why;
  bool closed = ForEachPlaceholder(s, [&](size_t open, size_t close) {
    if (why.empty()) why = check(Name(s, open, close));
    return true;  // on to the end: an unclosed {{ is named first
  });
  if (!closed) return Status::InvalidArgument(path + ": unclosed {{ in \"" + s + "\"");
  if (!why.empty()) return Status::InvalidArgument(path + ": " + why);
  return Status::OK();
}

}  // namespace limbic
