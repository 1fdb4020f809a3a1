#include "base/json.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

namespace limbic {
namespace {

using nlohmann::json;
namespace dom = simdjson::dom;

// Recursive, but bounded: simdjson's parser refuses documents nested more
// than simdjson::DEFAULT_MAX_DEPTH (1024) deep, and those are parsed by
// nlohmann's parser, which keeps its own stack.
json Convert(dom::element e) {
  switch (e.type()) {
    case dom::element_type::OBJECT: {
      json out = json::object();
      auto& members = out.get_ref<json::object_t&>();
      // Keys usually come in order (limbic writes them sorted): hinted at
      // the end, each lands there with one comparison instead of a walk
      // down the tree. Out of order they land where they belong all the same.
      for (dom::key_value_pair kv : dom::object(e))
        members.insert_or_assign(members.end(), std::string(kv.key), Convert(kv.value));
      return out;
    }
    case dom::element_type::ARRAY: {
      json out = json::array();
      auto& items = out.get_ref<json::array_t&>();
      for (dom::element item : dom::array(e)) items.push_back(Convert(item));
      return out;
    }
    case dom::element_type::STRING:
      return json(std::string(std::string_view(e)));
    case dom::element_type::INT64: {
      int64_t i = int64_t(e);
      // nlohmann reads every non-negative integer as unsigned.
      return i >= 0 ? json(static_cast<uint64_t>(i)) : json(i);
    }
    case dom::element_type::UINT64:
      return json(uint64_t(e));
    case dom::element_type::DOUBLE:
      return json(double(e));
    case dom::element_type::BOOL:
      return json(bool(e));
    case dom::element_type::NULL_VALUE:
      return json(nullptr);
  }
  return json();
}

dom::parser& ThreadParser() {
  thread_local dom::parser parser;
  return parser;
}

}  // namespace

std::optional<json> ParseJson(std::string_view text) {
  dom::element root;
  simdjson::error_code err = ThreadParser().parse(text.data(), text.size(), true).get(root);
  if (!err) return Convert(root);
  if (err == simdjson::NUMBER_ERROR ||
      err == simdjson::CAPACITY || err == simdjson::DEPTH_ERROR) {
    // Integers beyond 64 bits (nlohmann makes them doubles), or documents
    // beyond simdjson's limits: the reference parser decides.
    json j = json::parse(text.begin(), text.end(), nullptr, false);
    if (!j.is_discarded()) return j;
  }
  return std::nullopt;
}

std::optional<json> ParseJsonTaking(std::string_view text, std::span<const std::string_view> names,
                                    std::span<std::optional<json>> taken) {
  auto slot = [&](std::string_view key) -> std::optional<json>* {
    for (size_t i = 0; i < names.size() && i < taken.size(); ++i)
      if (names[i] == key) return &taken[i];
    return nullptr;
  };
  dom::element root;
  simdjson::error_code err = ThreadParser().parse(text.data(), text.size(), true).get(root);
  if (!err && root.type() == dom::element_type::OBJECT) {
    json out = json::object();
    auto& members = out.get_ref<json::object_t&>();
    for (dom::key_value_pair kv : dom::object(root)) {
      if (std::optional<json>* s = slot(kv.key)) {
        // The last of a repeated key wins, as in ParseJson.
        *s = Convert(kv.value);
      } else {
        members.insert_or_assign(members.end(), std::string(kv.key), Convert(kv.value));
      }
    }
    return out;
  }
  // Not an object, or text simdjson leaves to nlohmann: parsed whole, then
  // the named members moved out.
  std::optional<json> whole = ParseJson(text);
  if (whole && whole->is_object()) {
    for (size_t i = 0; i < names.size() && i < taken.size(); ++i) {
      auto it = whole->find(names[i]);
      if (it == whole->end()) continue;
      taken[i] = std::move(*it);
      whole->erase(it);
    }
  }
  return whole;
}

bool ValidJson(std::string_view text) {
  dom::element root;
  simdjson::error_code err = ThreadParser().parse(text.data(), text.size(), true).get(root);
  if (!err) return true;
  if (err == simdjson::NUMBER_ERROR || err == simdjson::CAPACITY || err == simdjson::DEPTH_ERROR)
    return json::accept(text.begin(), text.end());
  return false;
}

// The bytes as they are when they are valid UTF-8 with nothing to escape,
// which is almost always; anything else is left to nlohmann.
void AppendJsonString(const std::string& s, std::string* out) {
  bool plain = true, ascii = true;
  for (unsigned char c : s) {
    if (c < 0x20 || c == '"' || c == '\\') {
      plain = false;
      break;
    }
    ascii &= c < 0x80;
  }
  // Short ASCII strings (ids, names, times) are most of them: no UTF-8 to check.
  if (plain && !ascii) plain = simdjson::validate_utf8(s.data(), s.size());
  if (!plain) {
    out->append(json(s).dump(-1, ' ', false, json::error_handler_t::replace));
    return;
  }
  out->push_back('"');
  out->append(s);
  out->push_back('"');
}

namespace {

// Appends a value that is not an object or an array.
void AppendScalar(const json& j, std::string* out) {
  char buf[64];
  switch (j.type()) {
    case json::value_t::null:
      out->append("null");
      return;
    case json::value_t::boolean:
      out->append(j.get<bool>() ? "true" : "false");
      return;
    case json::value_t::number_integer: {
      auto r = std::to_chars(buf, buf + sizeof buf, j.get<int64_t>());
      out->append(buf, r.ptr);
      return;
    }
    case json::value_t::number_unsigned: {
      auto r = std::to_chars(buf, buf + sizeof buf, j.get<uint64_t>());
      out->append(buf, r.ptr);
      return;
    }
    case json::value_t::number_float: {
      const double d = j.get<double>();
      if (!std::isfinite(d)) {
        out->append("null");
        return;
      }
      // The shortest text that reads back as d, formatted as nlohmann does:
      // its own routine, so the bytes are the same.
      char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, d);
      out->append(buf, end);
      return;
    }
    case json::value_t::string:
      AppendJsonString(j.get_ref<const std::string&>(), out);
      return;
    default:  // binary, discarded: never in limbic's records
      out->append(j.dump(-1, ' ', false, json::error_handler_t::replace));
      return;
  }
}

}  // namespace

void AppendCompactJson(const json& j, std::string* out) {
  // An open object or array: where its walk is. Records are stored JSON of
  // any depth (an older limbic wrote them), so the walk keeps its own stack.
  struct Open {
    const json* value;
    json::object_t::const_iterator member;
    json::array_t::const_iterator item;
    bool first = true;
  };
  std::vector<Open> stack;
  // Writes `v`, or opens it when it is an object or array.
  auto start = [&](const json& v) {
    if (v.is_object()) {
      out->push_back('{');
      stack.push_back(Open{&v, v.get_ref<const json::object_t&>().begin(), {}});
    } else if (v.is_array()) {
      out->push_back('[');
      stack.push_back(Open{&v, {}, v.get_ref<const json::array_t&>().begin()});
    } else {
      AppendScalar(v, out);
    }
  };
  start(j);
  while (!stack.empty()) {
    Open& top = stack.back();
    const bool object = top.value->is_object();
    const bool done = object ? top.member == top.value->get_ref<const json::object_t&>().end()
                             : top.item == top.value->get_ref<const json::array_t&>().end();
    if (done) {
      out->push_back(object ? '}' : ']');
      stack.pop_back();
      continue;
    }
    if (!top.first) out->push_back(',');
    top.first = false;
    const json* next;
    if (object) {
      AppendJsonString(top.member->first, out);
      out->push_back(':');
      next = &(top.member++)->second;
    } else {
      next = &*top.item++;
    }
    start(*next);  // may grow the stack: `top` is not used after this
  }
}

std::string JsonQuote(std::string_view s) {
  return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string CompactJson(const json& j) {
  std::string out;
  AppendCompactJson(j, &out);
  return out;
}

void CopyJson(const json& from, json* to) {
  std::vector<std::pair<const json*, json*>> todo{{&from, to}};
  while (!todo.empty()) {
    auto [src, dst] = todo.back();
    todo.pop_back();
    if (src->is_object()) {
      *dst = json::object();
      auto& members = dst->get_ref<json::object_t&>();
      for (const auto& [key, value] : src->get_ref<const json::object_t&>())
        todo.emplace_back(&value, &members.emplace_hint(members.end(), key, nullptr)->second);
    } else if (src->is_array()) {
      const auto& items = src->get_ref<const json::array_t&>();
      *dst = json::array();
      auto& copies = dst->get_ref<json::array_t&>();
      copies.resize(items.size());  // once: the pointers below stay valid
      for (size_t i = 0; i < items.size(); ++i) todo.emplace_back(&items[i], &copies[i]);
    } else {
      *dst = *src;  // a scalar
    }
  }
}

namespace {

// The length of the well-formed UTF-8 sequence at s[i] (Unicode 15, table
// 3-7), or 0 with *bad set to the length of the maximal ill-formed subpart
// that starts there (at least 1).
size_t Utf8SequenceAt(std::string_view s, size_t i, size_t* bad) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // no overlong forms
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // no overlong forms
    if (c == 0xF4) hi = 0x8F;  // nothing beyond U+10FFFF
  } else {
    *bad = 1;
    return 0;
  }
  for (size_t k = 1; k < n; ++k) {
    const auto d = i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0;
    if (i + k >= s.size() || d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xBF)) {
      *bad = k;
      return 0;
    }
  }
  return n;
}

}  // namespace

bool IsValidUtf8(std::string_view s) { return simdjson::validate_utf8(s.data(), s.size()); }

std::string ShownText(std::string_view s) {
  std::string out = ToValidUtf8(s);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

std::string ToValidUtf8(std::string_view s) {
  if (IsValidUtf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    size_t bad = 0;
    const size_t n = Utf8SequenceAt(s, i, &bad);
    if (n == 0) {
      out.append("\xEF\xBF\xBD");  // U+FFFD
      i += bad;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

Status MakeValidUtf8(json* j) {
  std::vector<json*> todo{j};  // explicit stack: any depth
  while (!todo.empty()) {
    json* v = todo.back();
    todo.pop_back();
    if (v->is_string()) {
      auto& s = v->get_ref<std::string&>();
      if (!IsValidUtf8(s)) s = ToValidUtf8(s);
    } else if (v->is_array()) {
      for (json& item : v->get_ref<json::array_t&>()) todo.push_back(&item);
    } else if (v->is_object()) {
      auto& members = v->get_ref<json::object_t&>();
      for (auto it = members.begin(); it != members.end();) {
        if (IsValidUtf8(it->first)) {
          todo.push_back(&it->second);
          ++it;
          continue;
        }
        std::string key = ToValidUtf8(it->first);
        if (members.count(key))
          return Status::InvalidArgument("key \"" + key + "\" appears twice once invalid UTF-8 " +
                                         "is replaced by U+FFFD");
        auto node = members.extract(it++);
        node.key() = std::move(key);
        // Lands after `it` or before it; either way it is visited: keys
        // mended are valid, and their values are pushed below.
        todo.push_back(&members.insert(std::move(node)).position->second);
      }
    }
  }
  return Status::OK();
}

size_t JsonDepth(std::string_view text) {
  size_t depth = 0, deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::string JsonError(std::string_view text) {
  try {
    json discarded = json::parse(text.begin(), text.end());
    (void)discarded;
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: ..."
    auto at = what.find("] ");
    std::string detail = at == std::string::npos ? what : what.substr(at + 2);
    return "syntax error at byte " + std::to_string(e.byte) + ": " + detail;
  } catch (const json::exception& e) {
    // A number beyond a double's range (out_of_range.406): well-formed
    // text ParseJson refuses. Only parse_error was caught here, so this
    // escaped whatever was explaining the refusal (found by fuzz/archive
    // and by issue 22).
    std::string what = e.what();
    auto at = what.find("] ");
    return at == std::string::npos ? what : what.substr(at + 2);
  }
  return "invalid JSON";
}

}  // namespace limbic
